//! PL004 repeated-scans: the same table read several times in one query.

use std::collections::BTreeMap;

use super::plan_walk::{running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};
use sparkdiag_plan::Operator;

pub const MIN_REPEATS: Threshold = threshold(
    "min_repeats",
    2.0,
    "scans",
    "identical scans in one query worth a finding",
    "SparkForensics' duplicate sub-plans",
);

declare_rule! {
    /// ## What it does
    /// Finds queries that scan the same table with the same columns and filters several times,
    /// where Spark did not reuse one scan (no `ReusedExchange` or cached relation in its place).
    ///
    /// ## Why is this bad?
    /// Each scan reads and decodes the files again. It usually comes from a DataFrame used in
    /// several branches (a self-join, a union of filtered copies) or a CTE referenced twice.
    ///
    /// ## How to fix it
    /// Compute the shared part once: `df.cache()` (or `persist`) when it is reused across actions,
    /// rewrite a union of filters as one scan with a `CASE`/`when`, or aggregate once with
    /// conditional aggregates instead of joining the table to itself.
    ///
    /// ## Threshold and its source
    /// The same scan (table, read schema, filters) at least `min_repeats` = 2 times (SparkForensics'
    /// duplicate sub-plans). Low severity: from the text alone the cost is unknown.
    pub static REPEATED_SCANS = {
        code: "PL004",
        name: "repeated-scans",
        category: Plan,
        claims: Saving,
        needs: [SqlPlans],
        summary: "The same table is scanned several times in one query",
        thresholds: &[MIN_REPEATS] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.plans.iter().enumerate() {
        let plan = &input.plan;
        let mut scans: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for n in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::Scan)
        {
            let node = &plan.nodes[n];
            let key = match &node.details.scan {
                Some(s) => format!(
                    "{}|{:?}|{:?}|{:?}|{:?}",
                    node.name.trim(),
                    s.read_schema,
                    s.partition_filters,
                    s.pushed_filters,
                    s.data_filters
                ),
                None => node.tree_text.clone(),
            };
            scans.entry(key).or_default().push(n);
        }
        for (_, nodes) in scans
            .into_iter()
            .filter(|(_, v)| v.len() as f64 >= t.get(&MIN_REPEATS))
        {
            let name = plan.nodes[nodes[0]].name.trim().to_string();
            let title = format!(
                "{}: `{name}` is scanned {} times with the same columns and filters",
                input.label(i),
                nodes.len()
            );
            let finding = Finding::new(&REPEATED_SCANS, Severity::Low, title, 0)
                .proposes(
                    crate::Change::ScanOnce { stages: input.stage_ids.clone() },
                    "not estimated: the log does not say what the repeated scans cost apart from the rest of their stages",
                )
                .evidence("scan", name)
                .evidence("times", nodes.len())
                .recommend("Compute the shared part once (cache or persist it when reused), or merge the branches into one scan with conditional expressions or aggregates.");
            findings.push(scoped(finding, i, input, nodes));
        }
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::REPEATED_SCANS;
    use crate::rules::testing::{assert_fires, assert_quiet, on_plan, on_sample};

    #[test]
    fn fires_on_tpcds_q4_which_scans_its_tables_repeatedly() {
        // A real plan kept beside the repository, not in it; without it this case is skipped.
        if let Some(found) = on_sample(&REPEATED_SCANS, "spark-4.1.1__tpcds-v1_4__q4__explain.txt")
        {
            assert_fires(&found, REPEATED_SCANS.code);
        }
    }

    #[test]
    fn is_quiet_on_the_healthy_plan() {
        assert_quiet(&on_plan(&REPEATED_SCANS, "healthy.txt"));
    }
}
