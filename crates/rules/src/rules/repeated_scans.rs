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
        checks_each_plan: true,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        let mut scans: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for n in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::Scan)
        {
            let node = &plan.nodes[n];
            // Photon prints no `PushedFilters`: the filters its scan applies are
            // `RequiredDataFilters` and `DictionaryFilters`, read without expression ids. A path read (`PhotonScan parquet `, no table in the name) is told apart by its
            // location.
            let key = match &node.details.scan {
                Some(s) => format!(
                    "{}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}|{:?}",
                    node.name.trim(),
                    s.location,
                    s.read_schema,
                    s.partition_filters,
                    s.pushed_filters,
                    s.data_filters,
                    s.required_data_filters.as_deref().map(without_ids),
                    s.dictionary_filters.as_deref().map(without_ids),
                ),
                None => node.tree_text.clone(),
            };
            scans.entry(key).or_default().push(n);
        }
        for (_, nodes) in scans
            .into_iter()
            .filter(|(_, v)| v.len() as f64 >= t.get(&MIN_REPEATS))
        {
            let name = scan_name(&plan.nodes[nodes[0]]);
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

/// Photon's scan filters with the columns' expression ids left out (`(t_hour#145 = 8)` as
/// `(t_hour = 8)`): every read of a table names its columns with new ids. Spark's own
/// `PushedFilters` name columns without ids, and its partition filters are kept as printed: a
/// dynamic-pruning filter's id is the sub-query that prunes, which tells two reads apart.
fn without_ids(filters: &[String]) -> Vec<String> {
    filters
        .iter()
        .map(|text| {
            let mut out = String::with_capacity(text.len());
            let mut chars = text.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '#' && chars.peek().is_some_and(char::is_ascii_digit) {
                    while chars.peek().is_some_and(char::is_ascii_digit) {
                        chars.next();
                    }
                    if chars.peek() == Some(&'L') {
                        chars.next();
                    }
                    continue;
                }
                out.push(c);
            }
            out
        })
        .collect()
}

/// The scan as a reader knows it: its name with the table (`Scan parquet db.t`), or for a path
/// read, whose name holds no table (`PhotonScan parquet `), the name and the path it read.
fn scan_name(node: &sparkdiag_plan::PlanNode) -> String {
    let name = node.name.trim();
    let scan = node.details.scan.as_ref();
    if scan.is_some_and(|s| s.table.is_some()) {
        return name.to_string();
    }
    // `InMemoryFileIndex [s3://bucket/t]`, `InMemoryFileIndex(1 paths)[file:/x]`.
    let path = scan
        .and_then(|s| s.location.as_deref())
        .and_then(|l| Some(l[l.find('[')? + 1..].split([']', ',']).next()?.trim()))
        .filter(|p| !p.is_empty());
    match path {
        Some(path) => format!("{name} {path}"),
        None => name.to_string(),
    }
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

    /// TPC-DS q88 on Databricks Photon: eight sub-queries, each reading `store_sales`,
    /// `household_demographics`, `time_dim` and `store` by path (`PhotonScan parquet `, no
    /// table in the name). Each filters `time_dim` on another half hour, in
    /// `RequiredDataFilters` (Photon prints no `PushedFilters`): only the three tables read with
    /// the same filters eight times are repeated scans, each named by its path.
    #[test]
    fn tells_photon_path_scans_apart_by_location_and_filters() {
        let Some(found) = on_sample(
            &REPEATED_SCANS,
            "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__SQLExecutionStart__physicalPlanDescription.txt",
        ) else {
            return;
        };
        assert_fires(&found, REPEATED_SCANS.code);
        let mut tables: Vec<&str> = found
            .iter()
            .map(|f| f.evidence["scan"].as_str().unwrap())
            .collect();
        tables.sort_unstable();
        assert_eq!(
            tables,
            [
                "PhotonScan parquet s3://ndsv2-data/parquet_sf3000/household_demographics",
                "PhotonScan parquet s3://ndsv2-data/parquet_sf3000/store",
                "PhotonScan parquet s3://ndsv2-data/parquet_sf3000/store_sales",
            ]
        );
        assert!(found.iter().all(|f| f.evidence["times"] == 8));
    }
}
