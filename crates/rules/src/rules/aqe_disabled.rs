//! CF001 aqe-disabled: shuffles ran with Adaptive Query Execution off.

use super::common::{aqe_enabled, bytes, duration, property, ratio, shuffle_stages};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MEDIUM_SHUFFLE_SHARE: Threshold = threshold(
    "medium_shuffle_share",
    0.10,
    "share",
    "share of the application in shuffle stages that makes it medium",
    "sparkdiag's severity band",
);

declare_rule! {
    /// ## What it does
    /// Flags applications whose SQL queries ran shuffles with Adaptive Query Execution off:
    /// explicitly (`spark.sql.adaptive.enabled=false`) or by default on Spark before 3.2 outside
    /// Databricks. A plan rooted at `AdaptiveSparkPlan` shows AQE on whatever the settings say;
    /// the shuffles of RDD work (MLlib's training, RDD programs) are not counted, since AQE
    /// never re-plans them.
    ///
    /// ## Why is this bad?
    /// AQE re-plans each query stage with the real sizes it measured: it coalesces tiny shuffle
    /// partitions, splits skewed join partitions and turns sort-merge joins into broadcast joins
    /// when one side turns out small. Without it, a static `spark.sql.shuffle.partitions` and the
    /// optimizer's estimates decide everything.
    ///
    /// ## How to fix it
    /// `spark.sql.adaptive.enabled=true` (with `spark.sql.adaptive.coalescePartitions.enabled` and
    /// `spark.sql.adaptive.skewJoin.enabled`, both on by default once AQE is on).
    ///
    /// ## Threshold and its source
    /// Any shuffle with AQE off (Spark's default since 3.2, SPARK-33679). Medium when shuffle
    /// stages took at least `medium_shuffle_share` = 10 % of the application, low otherwise.
    pub static AQE_DISABLED = {
        code: "CF001",
        name: "aqe-disabled",
        category: Config,
        claims: Saving,
        needs: [Environment, Tasks],
        summary: "Shuffles ran with Adaptive Query Execution switched off",
        thresholds: &[
            MEDIUM_SHUFFLE_SHARE,
        ] as &[Threshold],
        check: check_aqe,
    };
}

fn check_aqe(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    // RDD shuffles and Spark before 3.0 have no AQE to turn on.
    if aqe_enabled(ctx) || !super::common::aqe_applies(ctx) {
        return Vec::new();
    }
    // AQE re-plans SQL queries only: the shuffles of RDD work (MLlib's tree training, an
    // RDD program beside its queries) run as they are whatever the setting.
    let sql_jobs: std::collections::HashSet<i64> = ctx
        .app
        .jobs
        .iter()
        .filter(|j| j.sql_execution_id.is_some())
        .map(|j| j.job_id)
        .collect();
    let stages: Vec<_> = shuffle_stages(ctx)
        .filter(|(s, _)| s.job_ids.iter().any(|j| sql_jobs.contains(j)))
        .collect();
    if stages.is_empty() {
        return Vec::new();
    }
    let shuffle_ms: i64 = stages.iter().map(|(_, st)| st.duration_ms).sum();
    let shuffle_bytes: i64 = stages
        .iter()
        .map(|(s, _)| s.totals.shuffle_read_bytes())
        .sum();
    let severity = if ratio(shuffle_ms as f64, ctx.app_ms as f64) >= t.get(&MEDIUM_SHUFFLE_SHARE) {
        Severity::Medium
    } else {
        Severity::Low
    };
    let title = format!(
        "Adaptive Query Execution was off for {} shuffle stage(s) ({} read, {} of stage time)",
        stages.len(),
        bytes(shuffle_bytes),
        duration(shuffle_ms)
    );
    vec![
        Finding::new(&AQE_DISABLED, severity, title, 0)
            .stages(stages.iter().map(|(s, _)| s.stage_id))
            .evidence("spark.sql.adaptive.enabled", property(ctx, "spark.sql.adaptive.enabled").unwrap_or("(default)"))
            .evidence("shuffle_stages", stages.len())
            .evidence("shuffle_stage_ms", shuffle_ms)
            .evidence("shuffle_read_bytes", shuffle_bytes)
            .recommend("Set spark.sql.adaptive.enabled=true: AQE coalesces tiny partitions, splits skewed joins and switches to broadcast joins with the sizes it measures."),
    ]
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::AQE_DISABLED;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_a_run_without_aqe() {
        assert_fires(
            &on_log(&AQE_DISABLED, "patterns/broadcast-disabled", &[]),
            AQE_DISABLED.code,
        );
    }

    #[test]
    fn is_quiet_on_a_run_with_aqe() {
        assert_quiet(&on_log(&AQE_DISABLED, "patterns/skew-join-aqe", &[]));
    }
}
