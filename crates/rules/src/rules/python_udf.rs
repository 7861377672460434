//! PL001 python-udf: rows leave the JVM for Python workers.

use super::plan_walk::{node_label, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::Operator;

declare_rule! {
    /// ## What it does
    /// Finds Python UDF operators in the plan: `BatchEvalPython` (row-at-a-time `@udf`),
    /// `ArrowEvalPython` (`@pandas_udf`), `MapInPandas`, `FlatMapGroupsInPandas` and the like.
    ///
    /// ## Why is this bad?
    /// Every row is serialised, sent to a Python worker process, computed there and sent back.
    /// Row-at-a-time UDFs pickle each row and are often ten times slower than the built-in
    /// function doing the same; Spark's optimizer cannot see inside them (no pushdown, no codegen).
    ///
    /// ## How to fix it
    /// Use built-in functions (`pyspark.sql.functions`: `F.when`, `F.regexp_extract`,
    /// `F.transform`, ...) where one exists; otherwise a vectorised `@pandas_udf` instead of
    /// `@udf`, with `spark.sql.execution.arrow.pyspark.enabled=true`.
    ///
    /// ## Threshold and its source
    /// Presence: row-at-a-time `BatchEvalPython` is low, Arrow-based operators info.
    pub static PYTHON_UDF = {
        code: "PL001",
        name: "python-udf",
        category: Plan,
        claims: Saving,
        needs: [SqlPlans],
        summary: "Rows are shipped to Python workers for a UDF",
        thresholds: &[] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        let udfs: Vec<usize> = running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::PythonUdf)
            .collect();
        if udfs.is_empty() {
            continue;
        }
        let row_at_a_time = udfs
            .iter()
            .any(|&n| plan.nodes[n].name.contains("BatchEvalPython"));
        let names: Vec<String> = udfs.iter().map(|&n| node_label(plan, n)).collect();
        let title = format!(
            "{}: {} Python UDF operator(s){}: {}",
            input.label(i),
            udfs.len(),
            if row_at_a_time { ", row at a time" } else { "" },
            names.join(", ")
        );
        let severity = if row_at_a_time {
            Severity::Low
        } else {
            Severity::Info
        };
        let finding = Finding::new(&PYTHON_UDF, severity, title, 0)
            .evidence("operators", names)
            .recommend("Use built-in pyspark.sql.functions where one exists; otherwise a vectorised @pandas_udf instead of @udf.");
        findings.push(scoped(finding, i, input, udfs));
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::PYTHON_UDF;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_a_run_with_a_python_udf() {
        assert_fires(
            &on_log(&PYTHON_UDF, "patterns/straggler", &[]),
            PYTHON_UDF.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&PYTHON_UDF, "patterns/healthy", &[]));
    }
}
