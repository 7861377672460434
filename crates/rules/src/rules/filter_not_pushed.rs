//! PL006 filter-not-pushed: a filter the data source could not apply while reading.

use super::plan_walk::{node_label, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::Operator;

declare_rule! {
    /// ## What it does
    /// Finds a `Filter` directly above a file scan (through `ColumnarToRow`) whose condition holds
    /// predicates, while the scan's `PushedFilters` hold nothing but `IsNotNull` checks: the reader
    /// returned every row and Spark filtered them afterwards. A `PhotonScan` prints no
    /// `PushedFilters`; its `RequiredDataFilters` and `DictionaryFilters` are what it applies.
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
        claims: Saving,
        needs: [SqlPlans],
        summary: "A filter above a scan was not pushed down to the data source",
        thresholds: &[] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

/// The `AND` conjuncts of a condition, with outer parentheses removed; a part that is itself an
/// `AND` chain in parentheses is split again, since Spark nests chains left-deep:
/// `((a AND b) AND c)`.
///
/// One pass pairs every bracket, after which each part is scanned once at its own depth (groups
/// are jumped over), so the work is linear in the text and no call nests: conditions thousands
/// of conjuncts deep (generated SQL) neither take quadratic time nor overflow the stack.
/// Unpaired brackets are ignored.
fn conjuncts(condition: &str) -> Vec<String> {
    let bytes = condition.as_bytes();
    let partner = pair_brackets(bytes);
    let mut out = Vec::new();
    // Parts still to split, as byte ranges, last first so the output keeps the text's order.
    let mut todo = vec![(0, bytes.len())];
    while let Some((start, end)) = todo.pop() {
        let (start, end) = strip_parens(bytes, &partner, start, end);
        let mut parts = Vec::new();
        let (mut i, mut from) = (start, start);
        while i < end {
            match bytes[i] {
                b'(' => {
                    // An unclosed bracket leaves the rest of the part inside it: no more splits.
                    match partner[i] {
                        Some(close) if close < end => i = close,
                        _ => i = end,
                    }
                }
                b' ' if bytes[i..end].starts_with(b" AND ") => {
                    parts.push((from, i));
                    from = i + 5;
                    i += 4;
                }
                _ => {}
            }
            i += 1;
        }
        parts.push((from, end));
        if parts.len() == 1 {
            let text = condition[start..end].trim();
            if !text.is_empty() {
                out.push(text.to_string());
            }
            continue;
        }
        todo.extend(parts.into_iter().rev());
    }
    out
}

/// For each `(`, the index of the `)` that closes it (and the reverse is not needed).
fn pair_brackets(bytes: &[u8]) -> Vec<Option<usize>> {
    let mut partner = vec![None; bytes.len()];
    let mut open = Vec::new();
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'(' => open.push(i),
            b')' => {
                if let Some(o) = open.pop() {
                    partner[o] = Some(i);
                }
            }
            _ => {}
        }
    }
    partner
}

/// Trims `bytes[start..end]` and removes parentheses that enclose all of it, repeatedly.
fn strip_parens(
    bytes: &[u8],
    partner: &[Option<usize>],
    start: usize,
    end: usize,
) -> (usize, usize) {
    let (mut start, mut end) = (start, end);
    loop {
        while start < end && bytes[start].is_ascii_whitespace() {
            start += 1;
        }
        while end > start && bytes[end - 1].is_ascii_whitespace() {
            end -= 1;
        }
        if end - start >= 2 && bytes[start] == b'(' && partner[start] == Some(end - 1) {
            start += 1;
            end -= 1;
        } else {
            return (start, end);
        }
    }
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
    // Names may hold any letter (`prénom#12`): every byte of a non-ASCII character counts as
    // part of the name, so the name's ends always fall on ASCII bytes, i.e. char boundaries.
    let name_byte = |b: u8| b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80;
    let bytes = expr.as_bytes();
    let mut refs = std::collections::BTreeSet::new();
    for (i, &b) in bytes.iter().enumerate() {
        if b != b'#' || i == 0 || !name_byte(bytes[i - 1]) {
            continue;
        }
        // Each scan stops at the `#` or other non-name byte before it: linear over the text.
        let mut start = i;
        while start > 0 && name_byte(bytes[start - 1]) {
            start -= 1;
        }
        let mut end = i + 1;
        while end < bytes.len() && bytes[end].is_ascii_alphanumeric() {
            end += 1;
        }
        refs.insert(&expr[start..end]);
    }
    refs.len()
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
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
            // A text source returns every line whatever the filter: nothing to push to.
            if details
                .format
                .as_deref()
                .is_some_and(|f| !crate::stage_shape::source_pushes_filters(f))
            {
                continue;
            }
            let Some(condition) = plan.nodes[filter].details.condition.as_deref() else {
                continue;
            };
            let unpushed: Vec<String> = conjuncts(condition)
                .into_iter()
                .filter(|c| fixable(c))
                .collect();
            // Photon prints no `PushedFilters`: what its scan applies while reading is in
            // `RequiredDataFilters` and `DictionaryFilters` (Spark's expression syntax).
            let pushed_real = details
                .pushed_filters
                .iter()
                .flatten()
                .any(|p| !p.starts_with("IsNotNull("))
                || [&details.required_data_filters, &details.dictionary_filters]
                    .into_iter()
                    .flatten()
                    .flatten()
                    .any(|p| !p.starts_with("isnotnull("));
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
    fn counts_columns_with_non_ascii_names() {
        // Found by fuzzing: a name ending in ASCII after a non-ASCII letter cut a char in two.
        assert_eq!(super::column_refs("(cast(prénom#12 as string) = 7)"), 1);
        assert_eq!(super::column_refs("日本#1 = 名#2"), 2);
        assert_eq!(super::column_refs("a#1 = a#1 AND b_2#3L > 0"), 2);
    }

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

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::FILTER_NOT_PUSHED;
    use crate::rules::testing::{assert_fires, assert_quiet, on_plan};

    #[test]
    fn fires_on_a_filter_that_was_not_pushed() {
        assert_fires(
            &on_plan(&FILTER_NOT_PUSHED, "antipattern-filter-not-pushed.txt"),
            FILTER_NOT_PUSHED.code,
        );
    }

    /// `spark.read.text(...).filter(lower(value).contains(...))`: a Filter above a scan with
    /// only `IsNotNull` pushed, which on Parquet would be a finding; a text source can push
    /// nothing.
    #[test]
    fn is_quiet_on_a_filtered_text_source() {
        use crate::rules::testing::{apps, on_log};
        for app in apps("logs/shapes/text-filter") {
            let facts = sparkdiag_facts::Facts::of(&app);
            let plans = sparkdiag_facts::sql_plans(&app, &facts.stages);
            let text_scan_with_filter = plans.iter().any(|input| {
                let plan = &input.plan;
                (0..plan.nodes.len())
                    .filter(|&n| plan.nodes[n].operator == sparkdiag_plan::Operator::Filter)
                    .filter_map(|n| {
                        super::super::plan_walk::below(
                            plan,
                            n,
                            &[sparkdiag_plan::Operator::ColumnarToRow],
                        )
                    })
                    .filter_map(|scan| plan.nodes[scan].details.scan.as_ref())
                    .any(|d| d.format.as_deref() == Some("text"))
            });
            assert!(
                text_scan_with_filter,
                "no Filter above a text scan in the log"
            );
        }
        assert_quiet(&on_log(&FILTER_NOT_PUSHED, "shapes/text-filter", &[]));
    }

    #[test]
    fn is_quiet_on_the_healthy_plan() {
        assert_quiet(&on_plan(&FILTER_NOT_PUSHED, "healthy.txt"));
    }
}
