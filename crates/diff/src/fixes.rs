//! A diff that checks the fix it was asked about: for each of BEFORE's findings whose fix
//! AFTER applied (a setting the advice names now set, the join it would broadcast broadcast,
//! the loop it would fold folded, the skewed join split), the saving sparkdiag predicted
//! against the time the work the finding was about actually saved.

use std::collections::BTreeSet;

use sparkdiag_contract::diff::{FixCheck, WorkMatch};
use sparkdiag_contract::units::duration;
use sparkdiag_contract::{Change, FindingOut};
use sparkdiag_model::Application;

use crate::Run;
use crate::work::Group;

/// The work of one run and how it pairs with the other's.
pub(crate) struct Paired<'a> {
    pub groups_b: &'a [Group],
    pub groups_a: &'a [Group],
    pub pairs: &'a [(Option<usize>, Option<usize>, &'static str)],
    /// `work[i]` is `pairs[i]` as the diff shows it.
    pub work: &'a [WorkMatch],
}

/// Each of BEFORE's time-saving findings whose fix AFTER shows, checked.
pub(crate) fn check(before: Run, after: Run, paired: &Paired) -> Vec<FixCheck> {
    let rules_after: BTreeSet<&str> = after
        .report
        .findings
        .iter()
        .map(|f| f.finding.rule)
        .collect();
    let mut out: Vec<FixCheck> = Vec::new();
    for f in before.report.findings.iter() {
        let Some(predicted_ms) = predicted_ms(f) else {
            continue;
        };
        let works = works_of(before.app, f, paired);
        let mut applied = settings_applied(before.app, after.app, f);
        applied.extend(structure_applied(f, &works, paired));
        if applied.is_empty() {
            continue;
        }
        let Some((before_ms, after_ms, measured_on)) = measured(before, after, &works, paired)
        else {
            continue;
        };
        let measured_ms = before_ms - after_ms;
        out.push(FixCheck {
            rule: f.finding.rule,
            title: f.finding.title.clone(),
            applied,
            predicted_ms,
            before_ms,
            after_ms,
            measured_ms,
            error_ms: predicted_ms - measured_ms,
            measured_on,
            resolved: !rules_after.contains(f.finding.rule),
        });
    }
    out
}

/// The saving sparkdiag predicted for the finding's own fix: its `impact_ms`, or, when another
/// finding's fix removes its stages and holds its saving ("in EX003"), the replay of its own
/// change all the same. `None` for findings that save no time (a failure, idle cores).
fn predicted_ms(f: &FindingOut) -> Option<i64> {
    if f.impact_kind == "saving" {
        return Some(f.finding.impact_ms);
    }
    f.finding.evidence.get("removed_by_fix_of")?;
    f.finding.evidence.get("replayed_ms")?.as_i64()
}

/// The indexes into `pairs` of the work the finding is about: the work holding its jobs, its
/// stages' jobs or its SQL executions.
fn works_of(app: &Application, f: &FindingOut, paired: &Paired) -> Vec<usize> {
    let scope = &f.finding.scope;
    let mut jobs: BTreeSet<i64> = scope.job_ids.iter().copied().collect();
    for s in app
        .stages
        .iter()
        .filter(|s| scope.stage_ids.contains(&s.stage_id))
    {
        jobs.extend(s.job_ids.iter().copied());
    }
    for j in app.jobs.iter().filter(|j| {
        j.sql_execution_id
            .is_some_and(|id| scope.sql_execution_ids.contains(&id))
    }) {
        jobs.insert(j.job_id);
    }
    paired
        .pairs
        .iter()
        .enumerate()
        .filter(|(_, (b, _, _))| {
            b.is_some_and(|b| {
                paired.groups_b[b]
                    .job_ids()
                    .iter()
                    .any(|j| jobs.contains(j))
            })
        })
        .map(|(i, _)| i)
        .collect()
}

/// `spark.some.key=value` pairs in `text`, each with whether the text asks to remove it
/// ("Remove spark.x=-1").
fn settings_in(text: &str) -> Vec<(String, String, bool)> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("spark.") {
        let before = &rest[..at];
        let tail = &rest[at..];
        let end = tail
            .find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | ')' | '('))
            .unwrap_or(tail.len());
        let token = tail[..end].trim_end_matches(['.', ':']);
        if let Some((key, value)) = token.split_once('=') {
            let remove = before.trim_end().to_ascii_lowercase().ends_with("remove");
            out.push((key.to_string(), value.to_string(), remove));
        } else {
            out.push((token.to_string(), String::new(), false));
        }
        rest = &tail[end.max(1)..];
    }
    out
}

/// The settings the finding's advice names, as AFTER changed them.
fn settings_applied(before: &Application, after: &Application, f: &FindingOut) -> Vec<String> {
    let mut texts = vec![f.finding.recommendation.clone()];
    if let Some(serde_json::Value::Array(conf)) = f.finding.evidence.get("conf") {
        texts.extend(conf.iter().filter_map(|c| c.as_str()).map(str::to_string));
    }
    let same = |a: Option<&String>, b: &str| a.is_some_and(|a| a.trim().eq_ignore_ascii_case(b));
    let mut out: Vec<String> = Vec::new();
    for (key, value, remove) in texts.iter().flat_map(|t| settings_in(t)) {
        let (b, a) = (
            before.spark_properties.get(&key),
            after.spark_properties.get(&key),
        );
        let said = if value.is_empty() {
            // A setting named without a value ("raise spark.executor.memory"): changed at all.
            (b != a).then(|| {
                let v = |v: Option<&String>| v.cloned().unwrap_or_else(|| "(not set)".into());
                format!("{key}: {} → {}", v(b), v(a))
            })
        } else if remove {
            (same(b, &value) && !same(a, &value)).then(|| {
                format!(
                    "{key}={value} is gone ({})",
                    a.map_or("not set".to_string(), |a| format!("now {a}"))
                )
            })
        } else {
            (same(a, &value) && !same(b, &value)).then(|| format!("{key}={value} is set"))
        };
        if let Some(said) = said
            && !out.contains(&said)
        {
            out.push(said);
        }
    }
    out
}

/// What AFTER's plan or jobs show of the change the finding proposed.
fn structure_applied(f: &FindingOut, works: &[usize], paired: &Paired) -> Vec<String> {
    let Some(cf) = &f.finding.counterfactual else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for &w in works {
        let m = &paired.work[w];
        let (Some(b), Some(a)) = (&m.before, &m.after) else {
            continue;
        };
        let plan = |side: &sparkdiag_contract::diff::WorkSide| side.plan.clone();
        match &cf.change {
            Change::BroadcastSide { .. } => {
                if let Some(c) = m
                    .plan_changes
                    .iter()
                    .find(|c| c.contains("BroadcastHashJoin") || c.contains("broadcast"))
                {
                    out.push(format!("`{}`: {c}", m.label));
                }
            }
            Change::RemoveDriverGaps if a.count < b.count || a.jobs < b.jobs => {
                out.push(format!("`{}`: {}", m.label, m.summary));
            }
            Change::CutSkewToMedian { .. }
                if plan(a).is_some_and(|p| p.skew_join_split)
                    && !plan(b).is_some_and(|p| p.skew_join_split) =>
            {
                out.push(format!("`{}`: AQE now splits the skewed join", m.label));
            }
            Change::MergePartitions { .. } | Change::SplitPartitions { .. }
                if a.tasks != b.tasks && !m.plan_changes.is_empty() =>
            {
                out.push(format!(
                    "`{}`: {} → {} tasks ({})",
                    m.label,
                    b.tasks,
                    a.tasks,
                    m.plan_changes.join("; ")
                ));
            }
            _ => {}
        }
    }
    out
}

/// From the first start to the last end of `jobs` in `app`.
fn span(app: &Application, jobs: &BTreeSet<i64>) -> Option<i64> {
    let chosen = app.jobs.iter().filter(|j| jobs.contains(&j.job_id));
    let start = chosen.clone().filter_map(|j| j.submission_ms).min()?;
    let end = chosen
        .filter_map(|j| j.completion_ms.or(app.effective_end_ms()))
        .max()?;
    Some((end - start).max(0))
}

/// The wall clock of the finding's work in each run, from its first job's start to its last
/// job's end (the driver's gaps inside a loop included), with what was measured in words; the
/// whole runtime when the finding names no work.
fn measured(
    before: Run,
    after: Run,
    works: &[usize],
    paired: &Paired,
) -> Option<(i64, i64, String)> {
    if works.is_empty() {
        let (b, a) = (before.app.duration_ms()?, after.app.duration_ms()?);
        return Some((
            b,
            a,
            format!("the whole runtime: {} → {}", duration(b), duration(a)),
        ));
    }
    let mut jobs_b = BTreeSet::new();
    let mut jobs_a = BTreeSet::new();
    let mut labels = Vec::new();
    for &w in works {
        let (b, a, _) = paired.pairs[w];
        let a = a?;
        jobs_b.extend(paired.groups_b[b?].job_ids());
        jobs_a.extend(paired.groups_a[a].job_ids());
        labels.push(format!("`{}`", paired.work[w].label));
    }
    let (b, a) = (span(before.app, &jobs_b)?, span(after.app, &jobs_a)?);
    Some((
        b,
        a,
        format!(
            "{}, first job's start to last job's end: {} → {}",
            labels.join(", "),
            duration(b),
            duration(a)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_read_from_advice_with_removals() {
        let found = settings_in(
            "Remove spark.sql.autoBroadcastJoinThreshold=-1 (default 10 MB) or raise it; \
             set spark.sql.adaptive.enabled=true, spark.sql.adaptive.skewJoin.enabled=true; \
             raise spark.executor.memory.",
        );
        assert_eq!(
            found,
            vec![
                (
                    "spark.sql.autoBroadcastJoinThreshold".to_string(),
                    "-1".to_string(),
                    true
                ),
                (
                    "spark.sql.adaptive.enabled".to_string(),
                    "true".to_string(),
                    false
                ),
                (
                    "spark.sql.adaptive.skewJoin.enabled".to_string(),
                    "true".to_string(),
                    false
                ),
                ("spark.executor.memory".to_string(), String::new(), false),
            ]
        );
    }
}
