//! PL007 photon-fallback: parts of a Databricks query that Photon did not run, and why.

use super::common::clip;
use super::plan_walk::{node_label, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::{Operator, Plan, Unsupported, UnsupportedKind};

declare_rule! {
    /// ## What it does
    /// On Databricks, reads the `== Photon Explanation ==` that Databricks prints after a
    /// Photon plan (in `EXPLAIN` output and in the event log's `physicalPlanDescription`) and
    /// the plan itself, and names what Photon did not run: the expressions and operators the
    /// explanation gives ("Photon does not fully support the query because: Unsupported
    /// expression(s): UDF()"), with Databricks' reason, and the operators of the plan that ran
    /// in Spark's JVM engine instead (not `Photon…`, between a `ColumnarToRow` and a
    /// `PhotonRowToColumnar`). A plan text cut before the explanation is read from its operators
    /// alone.
    ///
    /// ## Why is this bad?
    /// Photon is Databricks' vectorised engine, billed at its own DBU rate; what it cannot run goes back
    /// to Spark's row-at-a-time engine, and every row crosses between the two, columnar to row
    /// and back. Databricks' own list of what Photon covers ("Photon coverage", and its
    /// limitations: no UDFs, no RDD APIs, <https://docs.databricks.com/en/compute/photon.html>)
    /// is what decides it. A user-defined function is the usual cause: one UDF in a projection
    /// sends every row of the query through the JVM.
    ///
    /// ## How to fix it
    /// - A UDF (Scala, Java, Python): replace it with built-in functions
    ///   (`pyspark.sql.functions`, Spark SQL: `when`, `regexp_extract`, `transform`, …) so Photon
    ///   runs the whole query; if it must stay, apply it after the filters, joins and
    ///   aggregations, so fewer rows leave Photon.
    /// - Another expression or operator: rewrite that step with what Photon covers, or move it
    ///   after the heavy work.
    ///
    /// A `LocalTableScan` outside Photon (rows from the driver, `spark.createDataFrame` of a
    /// local list) is not reported: it reads nothing from storage and Photon takes the rows over
    /// right after it.
    ///
    /// ## Threshold and its source
    /// Presence: medium, as Databricks names it (the first thing a Databricks engineer looks for
    /// in a slow Photon query). The time it costs is not in the log: the JVM part runs inside the
    /// same tasks as the Photon part.
    pub static PHOTON_FALLBACK = {
        code: "PL007",
        name: "photon-fallback",
        category: Plan,
        claims: Saving,
        needs: [SqlPlans],
        summary: "Part of a Databricks query ran outside Photon, in Spark's row-at-a-time engine",
        thresholds: &[] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

/// What one plan says Photon did not run, trivial local rows left out.
struct Fallback {
    /// The explanation's entries; empty when the text has no explanation.
    unsupported: Vec<Unsupported>,
    reference_nodes: Vec<String>,
    /// The operators that ran in the JVM.
    outside: Vec<usize>,
    /// Whether Databricks printed an explanation.
    explained: bool,
    runs_photon: bool,
    /// A Python UDF operator (`BatchEvalPython`, `ArrowEvalPython`) is among `outside`.
    python_udf: bool,
}

fn fallback(plan: &Plan) -> Option<Fallback> {
    let explanation = plan.photon_explanation();
    // Databricks' own word that Photon ran everything is final: the plumbing around Photon
    // stages (the closing `ColumnarToRow`, query stages) is not a fallback.
    if explanation.as_ref().is_some_and(|e| e.fully_supported) {
        return None;
    }
    let outside: Vec<usize> = plan
        .outside_photon()
        .into_iter()
        .filter(|&i| plan.nodes[i].operator != Operator::LocalTableScan)
        .collect();
    let (unsupported, reference_nodes) = match &explanation {
        Some(e) => (
            e.unsupported
                .iter()
                .filter(|u| !u.is_local_rows())
                .cloned()
                .collect::<Vec<_>>(),
            e.reference_nodes
                .iter()
                .filter(|r| !r.starts_with("LocalTableScan"))
                .cloned()
                .collect(),
        ),
        None => (Vec::new(), Vec::new()),
    };
    if unsupported.is_empty() && outside.is_empty() {
        return None;
    }
    let python_udf = outside
        .iter()
        .any(|&i| plan.nodes[i].operator == Operator::PythonUdf);
    Some(Fallback {
        python_udf,
        unsupported,
        reference_nodes,
        outside,
        explained: explanation.is_some(),
        runs_photon: plan.runs_photon(),
    })
}

/// `UDF() (a user-defined function)`, `Sample …: not supported`, for a title.
fn said(u: &Unsupported) -> String {
    let what = clip(&u.what, 80);
    if u.is_udf() {
        return format!("{what}, a user-defined function");
    }
    match (u.kind, &u.why) {
        (UnsupportedKind::Node, _) => format!("the operator {what}"),
        (_, Some(why)) => format!("{what} ({})", clip(why, 80)),
        _ => what,
    }
}

fn listed(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        _ if items.len() <= 4 => format!(
            "{} and {}",
            items[..items.len() - 1].join(", "),
            items[items.len() - 1]
        ),
        _ => format!("{} and {} more", items[..3].join(", "), items.len() - 3),
    }
}

fn advice(f: &Fallback, ops: &str) -> String {
    let mut parts = Vec::new();
    if f.unsupported.iter().any(Unsupported::is_udf) || f.python_udf {
        parts.push("Replace the user-defined function with built-in functions (pyspark.sql.functions or Spark SQL: when, regexp_extract, transform, …) so Photon runs the whole query; every row now leaves Photon (ColumnarToRow) to be computed outside it. If the UDF must stay, apply it after the filters, joins and aggregations, so fewer rows leave Photon.".to_string());
    }
    let others: Vec<String> = f
        .unsupported
        .iter()
        .filter(|u| !u.is_udf())
        .map(|u| clip(&u.what, 80))
        .collect();
    if !others.is_empty() {
        parts.push(format!(
            "Rewrite {} with what Photon covers (Databricks lists its operators and expressions under \"Photon coverage\" in its Photon documentation), or move that step after the heavy work so fewer rows leave Photon.",
            listed(&others)
        ));
    }
    if parts.is_empty() {
        parts.push(format!(
            "Find what Photon does not support in {ops} (EXPLAIN on Databricks prints it under \"== Photon Explanation ==\") and replace it with built-in functions or operators Photon runs; until then every row crosses between Photon and the JVM there."
        ));
    }
    parts.join(" ")
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        let Some(f) = fallback(plan) else {
            continue;
        };
        let labels: Vec<String> = f.outside.iter().map(|&n| node_label(plan, n)).collect();
        let reasons: Vec<String> = f.unsupported.iter().map(said).collect();
        let ops = listed(&labels);
        let title = match (f.runs_photon, labels.is_empty(), reasons.is_empty()) {
            (false, _, _) => format!(
                "{}: Photon ran none of the query; it does not support {}",
                input.label(i),
                listed(&reasons)
            ),
            (true, false, false) => format!(
                "{}: {ops} ran outside Photon, on rows in Spark's JVM engine: Photon does not support {}",
                input.label(i),
                listed(&reasons)
            ),
            (true, false, true) => format!(
                "{}: {ops} ran outside Photon, on rows in Spark's JVM engine",
                input.label(i)
            ),
            (true, true, _) => format!(
                "{}: Photon does not fully support the query: it does not support {}",
                input.label(i),
                listed(&reasons)
            ),
        };
        let unsupported: Vec<serde_json::Value> = f
            .unsupported
            .iter()
            .map(|u| {
                serde_json::json!({
                    "kind": match u.kind {
                        UnsupportedKind::Expression => "expression",
                        UnsupportedKind::Node => "operator",
                        UnsupportedKind::Other => "other",
                    },
                    "what": u.what,
                    "why": u.why,
                    "udf": u.is_udf(),
                })
            })
            .collect();
        let finding = Finding::new(&PHOTON_FALLBACK, Severity::Medium, title, 0)
            .evidence("unsupported", unsupported)
            .evidence("reference_nodes", f.reference_nodes.clone())
            .evidence("outside_photon", labels.clone())
            .evidence("photon_explanation", f.explained)
            .recommend(advice(&f, &ops));
        // Photon's own operators around the fallback are not part of it: scope the JVM ones.
        findings.push(scoped(finding, i, input, f.outside.iter().copied()));
    }
    findings
}

/// The rule alone on real Databricks output: a plan where Photon fell back, and plans (and an
/// event log) it ran in full.
#[cfg(test)]
mod real_logs {
    use super::PHOTON_FALLBACK;
    use crate::rules::testing::{
        assert_fires, assert_quiet, on_log, on_plan, on_sample, on_sample_log, sample_apps,
    };

    /// A Scala UDF in a Databricks notebook: Photon ran the range, the JVM the `Project` with
    /// the UDF; the explanation says "Unsupported expression(s): UDF()".
    #[test]
    fn fires_on_a_udf_photon_could_not_run() {
        let Some(found) = on_sample(
            &PHOTON_FALLBACK,
            "databricks-photon__github-notebook-dbx-demo__explain-formatted__scala-udf-fallback.txt",
        ) else {
            return;
        };
        assert_fires(&found, PHOTON_FALLBACK.code);
        assert_eq!(found.len(), 1);
        let f = &found[0];
        assert!(
            f.title.contains("(4) Project ran outside Photon"),
            "{}",
            f.title
        );
        assert!(
            f.title.contains("UDF(), a user-defined function"),
            "{}",
            f.title
        );
        assert_eq!(f.evidence["unsupported"][0]["what"], "UDF()");
        assert_eq!(f.evidence["unsupported"][0]["udf"], true);
        assert_eq!(
            f.evidence["reference_nodes"][0],
            "Project [UDF() AS UDF()#46]"
        );
        assert!(
            f.recommendation
                .starts_with("Replace the user-defined function with built-in functions"),
            "{}",
            f.recommendation
        );
        assert_eq!(f.scope.plan_node_ids, [4]);
    }

    /// Databricks says "The query is fully supported by Photon." for each: DBR 13.3 (before and
    /// after AQE), serverless, and an `explain(True)` tree.
    #[test]
    fn is_quiet_on_plans_photon_ran_in_full() {
        for file in [
            "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__SQLExecutionStart__physicalPlanDescription.txt",
            "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__last-SQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
            "databricks-serverless-photon__github-readme-pyspark_demo__explain-formatted__top_avg_opt.txt",
            "databricks-photon__github-notebook-biker_r_project__explain-extended.txt",
        ] {
            if let Some(found) = on_sample(&PHOTON_FALLBACK, file) {
                assert_quiet(&found);
            }
        }
    }

    /// In an event log the plan comes from `SparkListenerSQLExecutionStart`'s
    /// `physicalPlanDescription`, where Databricks writes the explanation too: the DBR 13.3 log
    /// of TPC-DS q88 says Photon ran all of it, and the analysis reads it so.
    #[test]
    fn reads_the_explanation_databricks_writes_into_the_event_log() {
        let file =
            "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__selected-events.jsonl";
        let Some(apps) = sample_apps(file) else {
            return;
        };
        let facts = sparkdiag_facts::Facts::of(&apps[0]);
        let explanations: Vec<bool> = sparkdiag_facts::sql_plans(&apps[0], &facts.stages)
            .iter()
            .filter_map(|p| p.plan.photon_explanation())
            .map(|e| e.fully_supported)
            .collect();
        assert_eq!(explanations, [true]);
        assert_quiet(&on_sample_log(&PHOTON_FALLBACK, file).unwrap());
    }

    /// The same plan cut before its explanation, as Spark cuts a plan text longer than
    /// `spark.sql.maxPlanStringLength`: the operators still say what ran outside Photon, and
    /// the advice is to find what it did not support.
    #[test]
    fn without_the_explanation_the_operators_say_it() {
        let Some(plans) = crate::rules::testing::sample_plans(
            "databricks-photon__github-notebook-dbx-demo__explain-formatted__scala-udf-fallback.txt",
        ) else {
            return;
        };
        let mut plan = plans.into_iter().next().unwrap();
        plan.trailers.clear();
        let app = sparkdiag_model::Application::default();
        let facts = sparkdiag_facts::Facts::of_plans(vec![plan]);
        let config = crate::Config::default();
        let found = (PHOTON_FALLBACK.check)(
            &crate::Context::new(&app, &facts),
            &crate::Thresholds {
                rule: &PHOTON_FALLBACK,
                config: &config,
            },
        );
        assert_fires(&found, PHOTON_FALLBACK.code);
        let f = &found[0];
        assert!(
            f.title
                .ends_with("(4) Project ran outside Photon, on rows in Spark's JVM engine"),
            "{}",
            f.title
        );
        assert_eq!(f.evidence["photon_explanation"], false);
        assert!(
            f.recommendation.contains("== Photon Explanation =="),
            "{}",
            f.recommendation
        );
    }

    /// Spark outside Databricks has no Photon: nothing is a fallback.
    #[test]
    fn is_quiet_outside_databricks() {
        assert_quiet(&on_plan(&PHOTON_FALLBACK, "healthy.txt"));
        assert_quiet(&on_log(&PHOTON_FALLBACK, "patterns/straggler", &[]));
    }
}
