//! Matched work: ids mean nothing across runs, so SQL executions and jobs are grouped by what
//! they do (plan shape, description with its numbers masked, call site) and the groups are
//! paired across the runs, by the closest evidence first.

use std::collections::{BTreeMap, BTreeSet};

use sparkdiag_facts::PlanInput;
use sparkdiag_model::{Application, SparkPlanInfo, SqlExecution};
use sparkdiag_plan::{Operator, Plan};

use crate::outputs::Write;
use sparkdiag_contract::diff::{PlanFacts, StageGroupOut, StageMatch, WorkMatch, WorkSide};
use sparkdiag_facts::writes::micro_batches_of;

/// One SQL execution, or one job outside any SQL execution.
struct Unit {
    id: i64,
    start_ms: Option<i64>,
    end_ms: Option<i64>,
    job_ids: Vec<i64>,
    description: String,
    plan: Option<PlanFacts>,
    destinations: BTreeSet<String>,
}

/// Units of one run with the same kind, masked description and plan fingerprint.
pub struct Group {
    pub kind: &'static str,
    key_description: String,
    fingerprint: Option<String>,
    call_site: Option<String>,
    units: Vec<Unit>,
    pub destinations: BTreeSet<String>,
    /// Indexes into `app.stages` of the started stage attempts of the units' jobs.
    stages: Vec<usize>,
}

impl Group {
    pub fn completed(&self) -> usize {
        self.units.iter().filter(|u| u.end_ms.is_some()).count()
    }

    /// Summed durations of the finished units, for ranking.
    /// The units' time, each from its start to its end without the clock jumps in it.
    pub fn time_ms(&self, app: &Application) -> i64 {
        self.units
            .iter()
            .filter_map(|u| Some(app.span_without_jumps_ms(u.start_ms?, u.end_ms?)))
            .sum()
    }

    /// SQL execution ids, or job ids.
    pub fn ids(&self) -> Vec<i64> {
        self.units.iter().map(|u| u.id).collect()
    }

    pub fn job_ids(&self) -> BTreeSet<i64> {
        self.units
            .iter()
            .flat_map(|u| u.job_ids.iter().copied())
            .collect()
    }

    /// Start of the first unit and end of the last finished one.
    pub fn span_of_completed(&self) -> Option<(i64, i64)> {
        let start = self.units.iter().filter_map(|u| u.start_ms).min()?;
        let end = self.units.iter().filter_map(|u| u.end_ms).max()?;
        Some((start, end))
    }
}

/// Digits runs become `#`, so `month 07` and `month 19` are the same description.
pub fn mask_numbers(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut in_digits = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('#');
            }
            in_digits = true;
        } else {
            out.push(c);
            in_digits = false;
        }
    }
    out
}

/// The run's work, grouped.
pub fn groups(app: &Application, plans: &[PlanInput], writes: &[Write]) -> Vec<Group> {
    let mut units: Vec<(&'static str, Option<String>, Unit)> = Vec::new();
    let sql_ids: BTreeSet<i64> = app.sql.iter().map(|s| s.execution_id).collect();
    for sql in &app.sql {
        let dest: BTreeSet<String> = writes
            .iter()
            .filter(|w| w.sql_execution_id == sql.execution_id)
            .map(|w| w.destination.clone())
            .collect();
        // Catalog commands and the like run no job and write nothing: not work to compare.
        if sql.job_ids.is_empty() && dest.is_empty() {
            continue;
        }
        let description = if sql.description.is_empty() {
            first_line(&sql.details.text())
        } else {
            micro_batches_of(&sql.description).unwrap_or_else(|| sql.description.clone())
        };
        units.push((
            "sql",
            None,
            Unit {
                id: sql.execution_id,
                start_ms: sql.start_ms,
                end_ms: sql.end_ms,
                job_ids: sql.job_ids.clone(),
                description,
                plan: plan_facts(
                    sql,
                    plans
                        .iter()
                        .find(|p| p.sql_execution_id == Some(sql.execution_id))
                        .map(|p| &p.plan),
                ),
                destinations: dest,
            },
        ));
    }
    for job in &app.jobs {
        if job.sql_execution_id.is_some_and(|id| sql_ids.contains(&id)) {
            continue;
        }
        let call_site = job.call_site.clone().unwrap_or_else(|| job.name.clone());
        units.push((
            "job",
            Some(mask_numbers(&call_site)),
            Unit {
                id: job.job_id,
                start_ms: job.submission_ms,
                end_ms: job.completion_ms,
                job_ids: vec![job.job_id],
                // Jobs without a description are known by their call site alone.
                description: job
                    .description
                    .as_deref()
                    .map(|d| micro_batches_of(d).unwrap_or_else(|| d.to_string()))
                    .unwrap_or_default(),
                plan: None,
                destinations: BTreeSet::new(),
            },
        ));
    }
    let mut out: Vec<Group> = Vec::new();
    type Key = (&'static str, String, Option<String>, Option<String>);
    let mut index: std::collections::HashMap<Key, usize> = Default::default();
    for (kind, call_site, unit) in units {
        let key = mask_numbers(&unit.description);
        let fingerprint = unit.plan.as_ref().map(|p| p.fingerprint.clone());
        let lookup = (kind, key.clone(), fingerprint.clone(), call_site.clone());
        match index.get(&lookup) {
            Some(&g) => {
                let g = &mut out[g];
                g.destinations.extend(unit.destinations.iter().cloned());
                g.units.push(unit);
            }
            None => {
                index.insert(lookup, out.len());
                out.push(Group {
                    kind,
                    key_description: key,
                    fingerprint,
                    call_site,
                    destinations: unit.destinations.clone(),
                    units: vec![unit],
                    stages: Vec::new(),
                });
            }
        }
    }
    // One pass over the stages, not one per group: a long log has thousands of each.
    let mut by_job: std::collections::HashMap<i64, Vec<usize>> = Default::default();
    for (i, stage) in app.stages.iter().enumerate() {
        if stage.submission_ms.is_some() {
            for &job in &stage.job_ids {
                by_job.entry(job).or_default().push(i);
            }
        }
    }
    for g in &mut out {
        let mut stages: Vec<usize> = g
            .job_ids()
            .iter()
            .filter_map(|j| by_job.get(j))
            .flatten()
            .copied()
            .collect();
        stages.sort_unstable();
        stages.dedup();
        g.stages = stages;
    }
    out
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or("").trim().to_string()
}

/// Pairs of group indexes (before, after) and how each was matched; groups left over have no
/// counterpart.
pub fn pair(
    before: &[Group],
    after: &[Group],
) -> Vec<(Option<usize>, Option<usize>, &'static str)> {
    const TIERS: [&str; 5] = [
        "plan shape and description",
        "plan shape",
        "output destination",
        "description",
        "call site",
    ];
    // Each tier is an exact key, so a log with thousands of distinct queries pairs by hashing,
    // not by comparing every group with every other.
    fn keys(tier: usize, g: &Group) -> Vec<String> {
        let kind = g.kind;
        match tier {
            0 => g
                .fingerprint
                .iter()
                .map(|f| format!("{kind}\0{f}\0{}", g.key_description))
                .collect(),
            1 => g
                .fingerprint
                .iter()
                .map(|f| format!("{kind}\0{f}"))
                .collect(),
            // Only SQL writes have destinations; work rewritten from one API to another still
            // shares them.
            2 => g.destinations.iter().cloned().collect(),
            3 if !g.key_description.is_empty() => {
                vec![format!("{kind}\0{}", g.key_description)]
            }
            3 => Vec::new(),
            _ => g.call_site.iter().map(|c| format!("{kind}\0{c}")).collect(),
        }
    }
    let mut used_b = vec![false; before.len()];
    let mut used_a = vec![false; after.len()];
    let mut pairs = Vec::new();
    for (tier, name) in TIERS.into_iter().enumerate() {
        let mut index: std::collections::HashMap<String, Vec<usize>> = Default::default();
        for (j, a) in after.iter().enumerate().filter(|(j, _)| !used_a[*j]) {
            for k in keys(tier, a) {
                index.entry(k).or_default().push(j);
            }
        }
        for (i, b) in before.iter().enumerate() {
            if used_b[i] {
                continue;
            }
            let found = keys(tier, b).iter().find_map(|k| {
                index
                    .get(k)
                    .and_then(|bucket| bucket.iter().copied().find(|&j| !used_a[j]))
            });
            if let Some(j) = found {
                used_b[i] = true;
                used_a[j] = true;
                pairs.push((Some(i), Some(j), name));
            }
        }
    }
    // A query rewritten in both plan and description (a join hint, a new filter) still is the
    // same step when it is each run's only SQL work left over: paired, and said to be.
    let left = |groups: &[Group], used: &[bool]| -> Vec<usize> {
        (0..groups.len())
            .filter(|&i| !used[i] && groups[i].kind == "sql")
            .collect()
    };
    if let ([i], [j]) = (
        left(before, &used_b).as_slice(),
        left(after, &used_a).as_slice(),
    ) {
        used_b[*i] = true;
        used_a[*j] = true;
        pairs.push((Some(*i), Some(*j), "only SQL work left on each side"));
    }
    pairs.extend(
        (0..before.len())
            .filter(|&i| !used_b[i])
            .map(|i| (Some(i), None, "none")),
    );
    pairs.extend(
        (0..after.len())
            .filter(|&j| !used_a[j])
            .map(|j| (None, Some(j), "none")),
    );
    pairs
}

/// What one side of a match did.
pub fn side(app: &Application, group: &Group) -> WorkSide {
    let end = app.effective_end_ms();
    let jobs = group.job_ids();
    let stages: Vec<&sparkdiag_model::StageAttempt> =
        group.stages.iter().map(|&i| &app.stages[i]).collect();
    // On the run's own clock, its clock jumps left out, so no time holds a jump.
    let lived = |t: i64| lived_ms(app, t);
    let intervals: Vec<(i64, i64)> = group
        .units
        .iter()
        .filter_map(|u| Some((lived(u.start_ms?), lived(u.end_ms.or(end)?))))
        .collect();
    WorkSide {
        kind: group.kind,
        count: group.units.len(),
        ids: group.units.iter().map(|u| u.id).collect(),
        completed: group.completed(),
        description: group.units[0].description.clone(),
        jobs: jobs.len(),
        stages: stages.len(),
        tasks: stages.iter().map(|s| s.tasks.len()).sum(),
        time_ms: intervals.iter().map(|(s, e)| (e - s).max(0)).sum(),
        wall_ms: union_ms(intervals),
        executor_run_time_ms: stages.iter().map(|s| s.totals.executor_run_time).sum(),
        shuffle_read_bytes: stages.iter().map(|s| s.totals.shuffle_read_bytes()).sum(),
        plan: group.units[0].plan.clone(),
    }
}

/// The stages a group's jobs ran, by masked name and role.
fn stage_groups(
    app: &Application,
    group: &Group,
) -> BTreeMap<(String, &'static str), StageGroupOut> {
    let end = app.effective_end_ms();
    let mut out: BTreeMap<(String, &'static str), StageGroupOut> = BTreeMap::new();
    for s in group.stages.iter().map(|&i| &app.stages[i]) {
        let role = if s.totals.shuffle_write_bytes > 0 || s.totals.shuffle_write_records > 0 {
            "shuffle map"
        } else {
            "result"
        };
        let g = out.entry((mask_numbers(&s.name), role)).or_default();
        g.count += 1;
        g.tasks += s.tasks.len();
        g.time_ms += s
            .submission_ms
            .zip(s.completion_ms.or(end))
            .map_or(0, |(from, to)| app.span_without_jumps_ms(from, to));
        g.executor_run_time_ms += s.totals.executor_run_time;
    }
    out
}

fn stage_matches(
    before: Option<(&Application, &Group)>,
    after: Option<(&Application, &Group)>,
) -> Vec<StageMatch> {
    let mut b = before
        .map(|(app, g)| stage_groups(app, g))
        .unwrap_or_default();
    let a = after
        .map(|(app, g)| stage_groups(app, g))
        .unwrap_or_default();
    let mut out: Vec<StageMatch> = a
        .into_iter()
        .map(|((name, role), after)| StageMatch {
            before: b.remove(&(name.clone(), role)),
            name,
            role,
            after: Some(after),
        })
        .collect();
    out.extend(b.into_iter().map(|((name, role), before)| StageMatch {
        name,
        role,
        before: Some(before),
        after: None,
    }));
    out
}

/// Epoch time `t` on a clock that skipped the application's clock jumps: the difference of two
/// such times is the time the run lived between them.
pub(crate) fn lived_ms(app: &Application, t: i64) -> i64 {
    sparkdiag_contract::ms_without_jumps(0, t, &app.clock_jumps)
}

fn union_ms(mut spans: Vec<(i64, i64)>) -> i64 {
    spans.sort_unstable();
    let (mut covered, mut reach) = (0i64, i64::MIN);
    for (s, e) in spans {
        let s = s.max(reach);
        if e > s {
            covered += e - s;
            reach = e;
        }
    }
    covered
}

/// The match as the contract shows it.
pub fn matched(
    before: Option<(&Application, &Group)>,
    after: Option<(&Application, &Group)>,
    matched_by: &'static str,
) -> WorkMatch {
    let b = before.map(|(app, g)| side(app, g));
    let a = after.map(|(app, g)| side(app, g));
    let label = before
        .or(after)
        .map(|(_, g)| side_label(g))
        .unwrap_or_default();
    let summary = match (&b, &a) {
        (Some(b), Some(a)) => format!("{} → {}", count_words(b), count_words(a)),
        (Some(b), None) => format!("{} → no counterpart", count_words(b)),
        (None, Some(a)) => format!("no counterpart → {}", count_words(a)),
        (None, None) => String::new(),
    };
    let plan_changes = match (
        b.as_ref().and_then(|s| s.plan.as_ref()),
        a.as_ref().and_then(|s| s.plan.as_ref()),
    ) {
        (Some(pb), Some(pa)) => plan_changes(pb, pa, b.as_ref(), a.as_ref()),
        _ => Vec::new(),
    };
    WorkMatch {
        label,
        matched_by,
        before: b,
        after: a,
        summary,
        plan_changes,
        stages: stage_matches(before, after),
    }
}

/// A group's description: masked when its units' descriptions differ (`month #: …`).
pub fn side_label(g: &Group) -> String {
    let first = &g.units[0].description;
    let shown = if g.units.iter().any(|u| u.description != *first) {
        g.key_description.clone()
    } else {
        first.clone()
    };
    match &g.call_site {
        // Jobs are known by their call site; the description says which part of the run.
        Some(site) if shown.is_empty() => site.clone(),
        Some(site) => format!("{site} ({shown})"),
        None => shown,
    }
}

fn count_words(s: &WorkSide) -> String {
    let what = match (s.kind, s.count) {
        ("sql", 1) => "SQL execution",
        ("sql", _) => "SQL executions",
        (_, 1) => "job",
        _ => "jobs",
    };
    let mut out = format!("{} {what}", s.count);
    if s.kind == "sql" {
        out.push_str(&format!(
            " ({} job{})",
            s.jobs,
            if s.jobs == 1 { "" } else { "s" }
        ));
    }
    if s.completed < s.count {
        out.push_str(&format!(", {} finished", s.completed));
    }
    out
}

fn plan_changes(
    b: &PlanFacts,
    a: &PlanFacts,
    sb: Option<&WorkSide>,
    sa: Option<&WorkSide>,
) -> Vec<String> {
    let mut out = Vec::new();
    if b.joins != a.joins {
        let words = |j: &BTreeMap<String, usize>| {
            if j.is_empty() {
                "no join".to_string()
            } else {
                j.iter()
                    .map(|(k, n)| {
                        if *n == 1 {
                            k.clone()
                        } else {
                            format!("{n}× {k}")
                        }
                    })
                    .collect::<Vec<_>>()
                    .join(" + ")
            }
        };
        out.push(format!(
            "join strategy: {} → {}",
            words(&b.joins),
            words(&a.joins)
        ));
    }
    if b.exchanges != a.exchanges {
        out.push(format!(
            "shuffle Exchanges: {} → {}",
            b.exchanges, a.exchanges
        ));
    }
    if b.broadcast_exchanges != a.broadcast_exchanges {
        out.push(format!(
            "broadcast Exchanges: {} → {}",
            b.broadcast_exchanges, a.broadcast_exchanges
        ));
    }
    if b.aqe != a.aqe {
        let w = |on: bool| if on { "on" } else { "off" };
        out.push(format!("AQE: {} → {}", w(b.aqe), w(a.aqe)));
    }
    if b.skew_join_split != a.skew_join_split {
        out.push(format!(
            "skewed join partitions split by AQE: {} → {}",
            if b.skew_join_split { "yes" } else { "no" },
            if a.skew_join_split { "yes" } else { "no" }
        ));
    }
    if b.shuffle_partitions != a.shuffle_partitions {
        let w = |p: &[u32]| {
            if p.is_empty() {
                "none".to_string()
            } else {
                p.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
            }
        };
        out.push(format!(
            "planned shuffle partitions: {} → {}",
            w(&b.shuffle_partitions),
            w(&a.shuffle_partitions)
        ));
    }
    if let (Some(sb), Some(sa)) = (sb, sa)
        && sb.tasks != sa.tasks
    {
        out.push(format!("tasks run: {} → {}", sb.tasks, sa.tasks));
    }
    if b.fingerprint != a.fingerprint {
        out.push(format!(
            "operator tree changed: {} → {} operators",
            b.operators, a.operators
        ));
    }
    out
}

/// The plan facts of one SQL execution: the fingerprint from the submitted structured plan, the
/// rest from the plan that ran, as the rules parsed its text (`None` when it did not parse).
fn plan_facts(sql: &SqlExecution, parsed: Option<&Plan>) -> Option<PlanFacts> {
    let info = sql.plan.as_ref().or(sql.final_plan.as_ref())?;
    let mut shape = String::new();
    let mut operators = 0;
    fingerprint(info, &mut shape, &mut operators);
    let mut facts = PlanFacts {
        fingerprint: format!("{:016x}", fnv1a(shape.as_bytes())),
        operators,
        exchanges: 0,
        broadcast_exchanges: 0,
        joins: BTreeMap::new(),
        aqe: sql.final_plan.is_some() || info.node_name == "AdaptiveSparkPlan",
        shuffle_partitions: Vec::new(),
        skew_join_split: false,
    };
    if let Some(plan) = parsed {
        facts.exchanges = plan.exchanges();
        facts.broadcast_exchanges = plan.broadcast_exchanges();
        facts.aqe |= plan.is_final_plan.is_some();
        let mut partitions = BTreeSet::new();
        for idx in plan.running_nodes() {
            let node = &plan.nodes[idx];
            match node.operator {
                Operator::SortMergeJoin
                | Operator::ShuffledHashJoin
                | Operator::BroadcastHashJoin
                | Operator::BroadcastNestedLoopJoin
                | Operator::CartesianProduct => {
                    *facts
                        .joins
                        .entry(format!("{:?}", node.operator))
                        .or_default() += 1;
                    facts.skew_join_split |=
                        node.tree_text.contains("skew=true") || node.name.contains("skew=true");
                }
                Operator::Exchange => {
                    if let Some(n) = node
                        .details
                        .partitioning
                        .as_ref()
                        .and_then(|p| p.num_partitions)
                    {
                        partitions.insert(n);
                    }
                }
                _ => {}
            }
        }
        facts.shuffle_partitions = partitions.into_iter().collect();
    }
    Some(facts)
}

/// AQE wraps and re-wraps the same operators; a plan run with AQE off must fingerprint the same.
const WRAPPERS: &[&str] = &[
    "AdaptiveSparkPlan",
    "ShuffleQueryStage",
    "BroadcastQueryStage",
    "TableCacheQueryStage",
    "ResultQueryStage",
    "AQEShuffleRead",
    "CustomShuffleReader",
    "InputAdapter",
];

fn fingerprint(node: &SparkPlanInfo, out: &mut String, operators: &mut usize) {
    let name = node.node_name.as_str();
    let wrapper = WRAPPERS.contains(&name) || name.starts_with("WholeStageCodegen");
    if wrapper {
        for child in &node.children {
            fingerprint(child, out, operators);
        }
        return;
    }
    *operators += 1;
    out.push_str(&operator_name(name));
    if !node.children.is_empty() {
        out.push('(');
        for (i, child) in node.children.iter().enumerate() {
            if i > 0 {
                out.push(',');
            }
            fingerprint(child, out, operators);
        }
        out.push(')');
    }
}

/// The operator's name without what varies between runs of the same query: `#12` ids and
/// `(skew=true)`-style arguments.
fn operator_name(name: &str) -> String {
    let base = name.split('(').next().unwrap_or(name).trim();
    let mut out = String::new();
    let mut skip = false;
    for c in base.chars() {
        if c == '#' {
            skip = true;
            continue;
        }
        if skip && c.is_ascii_alphanumeric() {
            continue;
        }
        skip = false;
        out.push(c);
    }
    out
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_streaming_queries_batches_are_one_work_by_its_name() {
        let batch = |n: i64| {
            format!(
                "count_mod5\nid = 3f2e6db1-0a4e-4b3a-9c1e-cdd2c1e0e7a0\nrunId = 9ee1e2df-fe0a-4d1b-8fd2-ec4ea0a1b2c3\nbatch = {n}"
            )
        };
        assert_eq!(
            micro_batches_of(&batch(3)).as_deref(),
            Some("micro-batches of count_mod5")
        );
        assert_eq!(micro_batches_of(&batch(3)), micro_batches_of(&batch(41)));
        assert_eq!(micro_batches_of("month 07: filter + write"), None);
        assert_eq!(micro_batches_of("a\nb\nc\nd"), None);
    }

    #[test]
    fn numbers_are_masked_so_loop_iterations_share_a_description() {
        assert_eq!(
            mask_numbers("month 07: filter + groupBy + write"),
            mask_numbers("month 19: filter + groupBy + write")
        );
        assert_eq!(mask_numbers("a1b22c"), "a#b#c");
    }

    #[test]
    fn operator_names_drop_ids_and_arguments() {
        assert_eq!(operator_name("SortMergeJoin(skew=true)"), "SortMergeJoin");
        assert_eq!(operator_name("Scan parquet "), "Scan parquet");
        assert_eq!(operator_name("Subquery subquery#5"), "Subquery subquery");
    }

    #[test]
    fn overlapping_intervals_count_once() {
        assert_eq!(union_ms(vec![(0, 10), (5, 20), (30, 40)]), 30);
    }
}
