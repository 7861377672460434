//! The impact model: each finding's saving is wall-clock time of the application, and each
//! millisecond of the application is attributed to at most one finding.
//!
//! Rules estimate their saving on their own (a skewed stage would end sooner, a driver gap would
//! vanish), and two rules often see the same time from two sides: driver-only gaps are also idle
//! cores, overlapping stages are counted once per stage. So every finding names the wall-clock
//! windows its saving lies in (explicitly, or through its scope), repeats of a rule become one
//! finding, and the findings then claim time in order of their estimate, largest first: a finding
//! keeps only the part of its estimate that fits in time no earlier finding claimed. The sum of
//! the impacts, the recoverable total, can therefore never exceed the application's runtime.

use std::collections::BTreeMap;

use sparkdiag_facts::intervals::{Spans, intersect, length, normalise, subtract};

use crate::{Claim, Context, Finding, Lead, Severity};

/// How many repeats a grouped finding lists in its evidence.
const MAX_OCCURRENCES: usize = 50;

pub(crate) fn settle(ctx: &Context, findings: Vec<Finding>) -> Vec<Finding> {
    let usable = &ctx.usable;
    let mut groups: BTreeMap<&'static str, Vec<Finding>> = BTreeMap::new();
    for mut f in findings {
        f.windows = intersect(&normalise(windows_of(ctx, &f)), usable);
        groups.entry(f.rule).or_default().push(f);
    }
    let mut merged: Vec<(Finding, i64)> = groups
        .into_values()
        .map(|group| {
            let estimate: i64 = group.iter().map(|f| f.impact_ms).sum();
            (merge(group), estimate)
        })
        .collect();
    // Symptoms claim time after every finding that names a cause.
    let symptom = |f: &Finding| f.claim == Claim::Symptom;
    merged.sort_by(|(a, ea), (b, eb)| {
        symptom(a)
            .cmp(&symptom(b))
            .then(eb.cmp(ea))
            .then(a.severity.cmp(&b.severity))
            .then(a.rule.cmp(b.rule))
    });
    let mut claimed: Spans = Vec::new();
    let mut claims: Vec<(&'static str, Spans)> = Vec::new();
    let mut out = Vec::with_capacity(merged.len());
    // What the application's cores held: the scale of a cost in core-hours.
    let app_core_hours = ctx.app_ms as f64 * ctx.cores.max(1) as f64 / 3_600_000.0;
    for (mut f, estimate) in merged {
        if let Some(core_hours) = f.cost_core_hours {
            // Money, not wall-clock: it claims no time and is rated by its cost.
            f.impact_ms = 0;
            // The rule's own bands (UT001's core-hour thresholds) can only lower it.
            f.severity = f
                .severity
                .at_most(Severity::from_cost(core_hours, app_core_hours));
            out.push(f);
            continue;
        }
        let free = subtract(&f.windows, &claimed);
        let taken = take_from_end(&free, estimate.min(length(&f.windows)));
        let impact = length(&taken);
        if impact < estimate {
            f.evidence.insert("estimated_ms".into(), estimate.into());
            let shared: Vec<&str> = claims
                .iter()
                .filter(|(_, spans)| length(&intersect(spans, &f.windows)) > 0)
                .map(|(rule, _)| *rule)
                .collect();
            if !shared.is_empty() {
                f.evidence
                    .insert("time_attributed_to".into(), shared.clone().into());
            }
        }
        f.impact_ms = impact;
        f.severity = if f.is_outcome() {
            f.severity
        } else if estimate == 0 {
            // Nothing measured to save: a configuration or plan smell, never above medium.
            f.severity.at_most(Severity::Medium)
        } else {
            f.rated(Severity::from_saving(impact, ctx.app_ms))
        };
        claimed = normalise([claimed, taken.clone()].concat());
        claims.push((f.rule, taken));
        out.push(f);
    }
    out
}

/// Where a finding's saving can lie: its own windows, else its scope's stages, jobs or SQL
/// executions, else the whole application.
fn windows_of(ctx: &Context, f: &Finding) -> Spans {
    if !f.windows.is_empty() {
        return f.windows.clone();
    }
    let app = ctx.app;
    let end = app.effective_end_ms().unwrap_or(i64::MAX);
    let span = |s: Option<i64>, e: Option<i64>| s.map(|s| (s, e.unwrap_or(end)));
    // Sets: a grouped finding can name thousands of stages of an application with thousands.
    let ids = |v: &[i64]| {
        v.iter()
            .copied()
            .collect::<std::collections::HashSet<i64>>()
    };
    let (stage_ids, job_ids, sql_ids) = (
        ids(&f.scope.stage_ids),
        ids(&f.scope.job_ids),
        ids(&f.scope.sql_execution_ids),
    );
    let stages: Spans = app
        .stages
        .iter()
        .filter(|s| stage_ids.contains(&s.stage_id))
        .filter_map(|s| span(s.submission_ms, s.completion_ms))
        .collect();
    if !stages.is_empty() {
        return stages;
    }
    let jobs: Spans = app
        .jobs
        .iter()
        .filter(|j| job_ids.contains(&j.job_id))
        .filter_map(|j| span(j.submission_ms, j.completion_ms))
        .collect();
    if !jobs.is_empty() {
        return jobs;
    }
    let sql: Spans = app
        .sql
        .iter()
        .filter(|s| sql_ids.contains(&s.execution_id))
        .filter_map(|s| span(s.start_ms, s.end_ms))
        .collect();
    if !sql.is_empty() {
        return sql;
    }
    ctx.usable.to_vec()
}

/// Repeats of one rule as one finding: the largest (or, for rules that order their findings,
/// the first) leads; the scope lists every place, the evidence every occurrence.
fn merge(mut group: Vec<Finding>) -> Finding {
    if group.len() == 1 {
        return group.pop().unwrap();
    }
    let leader = crate::rule_of(group[0].rule).map_or(Lead::Largest, |r| r.lead);
    if leader == Lead::FirstCause {
        // Causes before consequences, then in time: the failure that started it leads.
        group.sort_by_key(|f| {
            (
                f.evidence.get("consequence_of_another_failure") == Some(&true.into()),
                f.evidence
                    .get("failed_at_ms")
                    .and_then(|v| v.as_i64())
                    .unwrap_or(i64::MAX),
            )
        });
    } else {
        group.sort_by(|a, b| {
            b.impact_ms
                .cmp(&a.impact_ms)
                .then(a.severity.cmp(&b.severity))
        });
    }
    let severity = group.iter().map(|f| f.severity).min().unwrap();
    let occurrences: Vec<serde_json::Value> = group
        .iter()
        .take(MAX_OCCURRENCES)
        .map(|f| serde_json::json!({"title": f.title, "impact_ms": f.impact_ms, "scope": f.scope}))
        .collect();
    let count = group.len();
    let mut rest = group.split_off(1);
    let mut lead = group.pop().unwrap();
    let consequences = rest
        .iter()
        .filter(|f| f.evidence.get("consequence_of_another_failure") == Some(&true.into()))
        .count();
    let mut more = Vec::new();
    if count - 1 > consequences {
        more.push(format!("and {} more like it", count - 1 - consequences));
    }
    if consequences > 0 {
        more.push(format!("{consequences} more cancelled as its consequence"));
    }
    lead.title = format!("{} ({})", lead.title, more.join("; "));
    lead.severity = severity;
    keep_advice_by_shape(&mut lead, &rest);
    for f in rest.iter_mut() {
        if let (Some(mine), Some(theirs)) = (lead.counterfactual.as_mut(), &f.counterfactual) {
            mine.change.absorb(&theirs.change);
        }
        lead.windows.append(&mut f.windows);
        let s = &mut lead.scope;
        s.job_ids.append(&mut f.scope.job_ids);
        s.stage_ids.append(&mut f.scope.stage_ids);
        s.executor_ids.append(&mut f.scope.executor_ids);
        s.sql_execution_ids.append(&mut f.scope.sql_execution_ids);
        s.plan_node_ids.append(&mut f.scope.plan_node_ids);
    }
    lead.windows = normalise(std::mem::take(&mut lead.windows));
    let s = &mut lead.scope;
    s.job_ids.sort_unstable();
    s.job_ids.dedup();
    s.stage_ids.sort_unstable();
    s.stage_ids.dedup();
    s.executor_ids.sort();
    s.executor_ids.dedup();
    s.sql_execution_ids.sort_unstable();
    s.sql_execution_ids.dedup();
    s.plan_node_ids.sort_unstable();
    s.plan_node_ids.dedup();
    lead.evidence
        .insert("occurrences".into(), serde_json::Value::Array(occurrences));
    lead.evidence
        .insert("occurrence_count".into(), count.into());
    lead
}

/// One fix per stage shape: where a grouped finding's stages are of different shapes (a join's
/// skew beside a groupBy's, an input stage beside thirteen writes behind `repartition(1)`), the
/// advice for each other shape follows the lead's, with how many of the stages it fits, so that
/// no stage's fix is hidden behind another's.
fn keep_advice_by_shape(lead: &mut Finding, rest: &[Finding]) {
    let shape_of = |f: &Finding| {
        f.evidence
            .get("stage_shape")
            .and_then(|v| v.as_str())
            .map(str::to_string)
    };
    let Some(lead_shape) = shape_of(lead) else {
        return;
    };
    // Each shape's first finding (the group is in its lead's order) and how many share it.
    let mut shapes: Vec<(String, &Finding, usize)> = Vec::new();
    for f in rest {
        let Some(shape) = shape_of(f) else { continue };
        if shape == lead_shape {
            continue;
        }
        match shapes.iter_mut().find(|(s, _, _)| *s == shape) {
            Some((_, _, count)) => *count += 1,
            None => shapes.push((shape, f, 1)),
        }
    }
    let mut by_shape = vec![serde_json::json!({"stage_shape": lead_shape,
        "stage_id": lead.scope.stage_ids.first(), "recommendation": lead.recommendation})];
    let mut more = Vec::new();
    for (shape, f, count) in shapes {
        if f.recommendation == lead.recommendation {
            continue;
        }
        let stage = f.scope.stage_ids.first().copied();
        by_shape.push(serde_json::json!({"stage_shape": shape, "stage_id": stage,
            "stages": count, "recommendation": f.recommendation}));
        let others = match count {
            1 => String::new(),
            n => format!(" and {} more like it", n - 1),
        };
        more.push(match stage {
            Some(id) => format!("For stage {id}{others} ({shape}): {}", f.recommendation),
            None => format!("Where the stage is {shape}: {}", f.recommendation),
        });
    }
    if more.is_empty() {
        return;
    }
    lead.recommendation = format!("{} {}", lead.recommendation, more.join(" "));
    lead.evidence
        .insert("advice_by_shape".into(), serde_json::Value::Array(by_shape));
}

/// The last `amount` milliseconds of `spans`: a saving shortens the end of the work it is in.
fn take_from_end(spans: &[(i64, i64)], amount: i64) -> Spans {
    let mut left = amount.max(0);
    let mut out = Vec::new();
    for &(s, e) in spans.iter().rev() {
        if left == 0 {
            break;
        }
        let take = (e - s).min(left);
        out.push((e - take, e));
        left -= take;
    }
    out.reverse();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interval_arithmetic() {
        let a = normalise(vec![(5, 10), (0, 3), (2, 4), (10, 12)]);
        assert_eq!(a, vec![(0, 4), (5, 12)]);
        assert_eq!(
            intersect(&a, &[(3, 6), (11, 20)]),
            vec![(3, 4), (5, 6), (11, 12)]
        );
        assert_eq!(
            subtract(&a, &[(1, 2), (6, 8)]),
            vec![(0, 1), (2, 4), (5, 6), (8, 12)]
        );
        assert_eq!(take_from_end(&a, 9), vec![(2, 4), (5, 12)]);
        assert_eq!(length(&take_from_end(&a, 100)), 11);
    }
}
