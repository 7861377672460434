//! What several tools' answers share: a finding as a row, the findings that name some work, a
//! list of ids in runs, and text cut to a size.

use serde::Serialize;
use serde_json::{Value, json};
use sparkdiag_contract::detail::TaskFailures;
use sparkdiag_contract::{FindingOut, Report, Scope};

/// Ids past this many are cut from a finding row's scope (unless the row is in full).
const SCOPE_IDS: usize = 20;

/// A finding as the tools give it: the report's fields, the user's code sites, and (in full)
/// its evidence.
pub fn finding_row(f: &FindingOut, rank: usize, full: bool) -> Value {
    let finding = &f.finding;
    let mut row = json!({
        "rank": rank,
        "rule": finding.rule,
        "category": finding.category,
        "severity": finding.severity,
        "title": finding.title,
        "impact_ms": finding.impact_ms,
        "impact_core_hours": f.impact_core_hours,
        "code_sites": f.code_sites.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "recommendation": finding.recommendation,
        "scope": scope(&finding.scope, full),
    });
    // Money only when the server was given a price; a number apiece, so every row carries it.
    if let Some(cost) = f.impact_cost {
        row["impact_cost"] = json!(cost);
    }
    if let Some(cost) = f.impact_memory_cost {
        row["impact_memory_cost"] = json!(cost);
    }
    if full {
        row["evidence"] = json!(finding.evidence);
    }
    row
}

/// The scope as the report writes it, each list cut to [`SCOPE_IDS`] unless `full`.
fn scope(s: &Scope, full: bool) -> Value {
    fn ids<T: Serialize>(ids: &[T], full: bool) -> Value {
        if full || ids.len() <= SCOPE_IDS {
            return json!(ids);
        }
        let mut kept: Vec<Value> = ids[..SCOPE_IDS].iter().map(|id| json!(id)).collect();
        kept.push(json!(format!("… {} more", ids.len() - SCOPE_IDS)));
        Value::Array(kept)
    }
    json!({
        "job_ids": ids(&s.job_ids, full),
        "stage_ids": ids(&s.stage_ids, full),
        "executor_ids": ids(&s.executor_ids, full),
        "sql_execution_ids": ids(&s.sql_execution_ids, full),
        "plan_node_ids": ids(&s.plan_node_ids, full),
    })
}

/// The findings whose scope `names` (at most 20): rank, rule, title, recoverable time.
pub fn findings_naming(report: &Report, names: impl Fn(&Scope) -> bool) -> Vec<Value> {
    report
        .findings
        .iter()
        .enumerate()
        .filter(|(_, f)| names(&f.finding.scope))
        .take(20)
        .map(|(i, f)| {
            json!({
                "rank": i + 1,
                "rule": f.finding.rule,
                "severity": f.finding.severity,
                "title": f.finding.title,
                "impact_ms": f.finding.impact_ms,
            })
        })
        .collect()
}

/// Task failures with each cause's message cut to its first 1,500 bytes.
pub fn messages_cut(mut failures: TaskFailures) -> TaskFailures {
    for group in &mut failures.groups {
        group.message = group.message.as_deref().map(|m| cut(m, 1500));
    }
    failures
}

/// `text` cut to `max` bytes on a character boundary, saying how much was cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{} … [{} more bytes]", &text[..at], text.len() - at)
}

/// `3,4,5,9` as `3-5, 9`, at most 40 runs.
pub fn id_ranges(ids: &[i64]) -> String {
    if ids.is_empty() {
        return "none".into();
    }
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        while i + 1 < ids.len() && ids[i + 1] == ids[i] + 1 {
            i += 1;
        }
        runs.push(if ids[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", ids[i])
        });
        i += 1;
    }
    if runs.len() > 40 {
        let n = runs.len() - 40;
        runs.truncate(40);
        runs.push(format!("… {n} more"));
    }
    runs.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_written_as_runs() {
        assert_eq!(id_ranges(&[9, 3, 4, 5, 5]), "3-5, 9");
        assert_eq!(id_ranges(&[]), "none");
    }

    #[test]
    fn cut_text_says_how_much_is_left_out() {
        assert_eq!(cut("short", 10), "short");
        assert_eq!(cut("ééé", 3), "é … [4 more bytes]");
    }
}
