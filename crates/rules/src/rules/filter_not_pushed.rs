//! PL006 filter-not-pushed: a filter the data source could not apply while reading.

use super::plan_walk::{node_label, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::Operator;

declare_rule! {
    /// ## What it does
    /// Finds a `Filter` directly above a file scan (through `ColumnarToRow`) whose condition holds
    /// predicates, while the scan's `PushedFilters` hold nothing but `IsNotNull` checks: the reader
    /// returned every row and Spark filtered them afterwards.
    ///
    /// ## Why is this bad?
    /// Pushed filters let Parquet and ORC skip row groups using their statistics, and partition
    /// filters skip whole directories. A filter that is not pushed reads, decodes and transfers
    /// every row first. Casts on the column, UDFs and functions the source does not understand
    /// block pushdown.
    ///
    /// ## How to fix it
    /// Compare the column with a value of its own type (`customer_id = 7`, not
    /// `CAST(customer_id AS STRING) = '7'`), move UDFs out of the filter, and filter on partition
    /// columns directly so partition pruning applies.
    ///
    /// ## Threshold and its source
    /// Presence: low. Only predicates on a single column count: Spark pushes
    /// `isnotnull` itself, and comparisons with subquery results, runtime bloom filters or another
    /// column can never be pushed.
    pub static FILTER_NOT_PUSHED = {
        code: "PL006",
        name: "filter-not-pushed",
        category: Plan,
        summary: "A filter above a scan was not pushed down to the data source",
        thresholds: &[] as &[Threshold],
        check: check,
    };
}

/// The top-level `AND` conjuncts of a condition, with outer parentheses removed.
fn conjuncts(condition: &str) -> Vec<String> {
    let mut text = condition.trim();
    while text.starts_with('(') && text.ends_with(')') && balanced(&text[1..text.len() - 1]) {
        text = text[1..text.len() - 1].trim();
    }
    let (mut out, mut depth, mut start) = (Vec::new(), 0i32, 0usize);
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' => depth += 1,
            b')' => depth -= 1,
            b' ' if depth == 0 && text[i..].starts_with(" AND ") => {
                out.push(text[start..i].trim().to_string());
                start = i + 5;
                i += 4;
            }
            _ => {}
        }
        i += 1;
    }
    out.push(text[start..].trim().to_string());
    if out.len() == 1 {
        return out.into_iter().filter(|c| !c.is_empty()).collect();
    }
    // Spark nests AND chains left-deep: ((a AND b) AND c). Split each part again.
    out.iter()
        .filter(|c| !c.is_empty())
        .flat_map(|c| conjuncts(c))
        .collect()
}

/// A predicate on one column that the source could have applied: not Spark's own `isnotnull`,
/// not a comparison with a subquery's result or a runtime bloom filter (never pushable), and not
/// a comparison of two columns (Parquet cannot evaluate those).
fn fixable(conjunct: &str) -> bool {
    let runtime = [
        "Subquery",
        "subquery",
        "might_contain",
        "dynamicpruning",
        "bloom_filter",
    ];
    if conjunct.starts_with("isnotnull(") || runtime.iter().any(|r| conjunct.contains(r)) {
        return false;
    }
    column_refs(conjunct) == 1
}

/// How many distinct `name#id` attribute references an expression holds.
fn column_refs(expr: &str) -> usize {
    let bytes = expr.as_bytes();
    let mut refs = std::collections::BTreeSet::new();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'#' || i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_') {
            continue;
        }
        let start = expr[..i]
            .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .map_or(0, |p| p + 1);
        let end = expr[i + 1..]
            .find(|c: char| !c.is_ascii_alphanumeric())
            .map_or(expr.len(), |p| i + 1 + p);
        refs.insert(&expr[start..end]);
    }
    refs.len()
}

fn balanced(text: &str) -> bool {
    let mut depth = 0i32;
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            _ => {}
        }
        if depth < 0 {
            return false;
        }
    }
    depth == 0
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.plans.iter().enumerate() {
        let plan = &input.plan;
        for filter in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::Filter)
        {
            let Some(scan) = super::plan_walk::below(plan, filter, &[Operator::ColumnarToRow])
            else {
                continue;
            };
            let Some(details) = plan.nodes[scan]
                .details
                .scan
                .as_ref()
                .filter(|_| plan.nodes[scan].operator == Operator::Scan)
            else {
                continue;
            };
            let Some(condition) = plan.nodes[filter].details.condition.as_deref() else {
                continue;
            };
            let unpushed: Vec<String> = conjuncts(condition)
                .into_iter()
                .filter(|c| fixable(c))
                .collect();
            let pushed_real = details
                .pushed_filters
                .iter()
                .flatten()
                .any(|p| !p.starts_with("IsNotNull("));
            if unpushed.is_empty() || pushed_real {
                continue;
            }
            let title = format!(
                "{}: {} is applied after {} read every row: `{}` was not pushed to the source",
                input.label(i),
                node_label(plan, filter),
                node_label(plan, scan),
                unpushed.join(" AND ")
            );
            let finding = Finding::new(&FILTER_NOT_PUSHED, Severity::Low, title, 0)
                .evidence("condition", condition.to_string())
                .evidence("pushed_filters", details.pushed_filters.clone())
                .recommend("Compare columns with values of their own type (no casts or UDFs on the column in the filter) and filter partition columns directly, so the source can skip data.");
            findings.push(scoped(finding, i, input, [filter, scan]));
        }
    }
    findings
}

#[cfg(test)]
mod tests {
    #[test]
    fn splits_top_level_conjuncts_only() {
        assert_eq!(
            super::conjuncts("(isnotnull(a#1) AND ((b#2 = 1) OR (c AND d)))"),
            vec![
                "isnotnull(a#1)".to_string(),
                "(b#2 = 1) OR (c AND d)".to_string()
            ]
        );
        assert_eq!(super::conjuncts("(a = 1)"), vec!["a = 1".to_string()]);
        assert_eq!(
            super::conjuncts("(((a) AND isnotnull(b)) AND (c = 1))"),
            vec![
                "a".to_string(),
                "isnotnull(b)".to_string(),
                "c = 1".to_string()
            ]
        );
    }
}
