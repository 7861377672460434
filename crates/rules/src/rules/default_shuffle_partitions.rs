//! CF002 default-shuffle-partitions: 200 shuffle partitions where they do not fit.

use super::common::{aqe_enabled, bytes, property, ratio, shuffle_stages};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_AVG_MB: Threshold = threshold(
    "min_avg_mb",
    16.0,
    "MB",
    "average shuffle partition under which 200 is too many",
    "PA001's tiny-partition size",
);

pub const MAX_AVG_MB: Threshold = threshold(
    "max_avg_mb",
    256.0,
    "MB",
    "average shuffle partition over which 200 is too few",
    "AQE's skew size (skewedPartitionThresholdInBytes, 256 MB)",
);

pub const TARGET_MB: Threshold = threshold(
    "target_mb",
    sparkdiag_facts::partition_count::DEFAULT_TARGET_MB,
    "MB",
    "partition size the recommended count aims at",
    "Databricks and spark-rapids (128-256 MB)",
);

declare_rule! {
    /// ## What it does
    /// Flags shuffle stages that ran with exactly `spark.sql.shuffle.partitions` tasks, left at
    /// its default of 200, while AQE could not adjust it, and whose partitions came out far from
    /// a useful size.
    ///
    /// ## Why is this bad?
    /// 200 is a guess made for a mid-sized cluster in 2014. Small data gets 200 tiny tasks of
    /// overhead; large data gets 200 huge partitions that spill or fail.
    ///
    /// ## How to fix it
    /// Turn AQE on (CF001) so Spark sizes partitions itself, or set `spark.sql.shuffle.partitions`
    /// to the count in the finding (about 128 MB per partition).
    ///
    /// ## Threshold and its source
    /// Average partition under `min_avg_mb` = 16 MB or over `max_avg_mb` = 256 MB (the tiny-partition size of
    /// PA001 and AQE's skew size), in a stage of exactly the configured count (default 200). The
    /// recommended count aims at `target_mb` = 128 MB per partition.
    pub static DEFAULT_SHUFFLE_PARTITIONS = {
        code: "CF002",
        name: "default-shuffle-partitions",
        category: Config,
        claims: Saving,
        needs: [Environment, TaskMetrics],
        summary: "spark.sql.shuffle.partitions left at 200 on shuffles it does not fit",
        thresholds: &[
            MIN_AVG_MB,
            MAX_AVG_MB,
            TARGET_MB,
        ] as &[Threshold],
        check: check_default_partitions,
        advises_shuffle_partitions: true,
    };
}

fn check_default_partitions(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let configured: i64 = property(ctx, "spark.sql.shuffle.partitions")
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let coalescing = aqe_enabled(ctx)
        && property(ctx, "spark.sql.adaptive.coalescePartitions.enabled")
            .is_none_or(|v| v.eq_ignore_ascii_case("true"));
    // The setting only sizes SQL shuffles.
    if configured != 200 || coalescing || !ctx.app.uses_sql() {
        return Vec::new();
    }
    let mut findings = Vec::new();
    for (stage, stats) in shuffle_stages(ctx).filter(|(s, _)| s.num_tasks == configured) {
        let total = stage.totals.shuffle_read_bytes();
        let avg = total as f64 / configured as f64;
        let too_small = avg < t.get(&MIN_AVG_MB) * 1e6;
        let too_big = avg > t.get(&MAX_AVG_MB) * 1e6;
        if !(too_small || too_big) {
            continue;
        }
        let recommended =
            sparkdiag_facts::partition_count::for_stage(total, t.get(&TARGET_MB), ctx.cores);
        let severity = if ratio(stats.duration_ms as f64, ctx.app_ms as f64) >= 0.1 {
            Severity::Medium
        } else {
            Severity::Low
        };
        let title = format!(
            "Stage {} used the default 200 shuffle partitions for {} ({} each); about {} would fit",
            stage.stage_id,
            bytes(total),
            bytes(avg as i64),
            recommended
        );
        let stage_advice = super::common::stage_partitions_advice(
            ctx,
            stage,
            recommended,
            if too_small {
                super::common::Resize::Fewer
            } else {
                super::common::Resize::More
            },
        );
        findings.push(
            Finding::new(&DEFAULT_SHUFFLE_PARTITIONS, severity, title, 0)
                .stages([stage.stage_id])
                .evidence("shuffle_read_bytes", total)
                .evidence("avg_partition_bytes", avg as i64)
                .evidence("recommended_partitions", recommended)
                .settings(match &stage_advice {
                    Some(_) => Vec::new(),
                    None if super::common::aqe_applies(ctx) && !super::common::aqe_enabled(ctx) => {
                        vec!["spark.sql.adaptive.enabled=true".to_string()]
                    }
                    None => super::common::partitions_setting(ctx, stage, recommended)
                        .into_iter()
                        .collect(),
                })
                .recommend(if let Some(advice) = stage_advice {
                    advice
                } else if super::common::aqe_applies(ctx) {
                    format!("Turn on AQE (spark.sql.adaptive.enabled=true) or set spark.sql.shuffle.partitions={recommended}.")
                } else {
                    format!("Set spark.sql.shuffle.partitions={recommended}.")
                }),
        );
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::DEFAULT_SHUFFLE_PARTITIONS;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_default_200_partitions() {
        assert_fires(
            &on_log(
                &DEFAULT_SHUFFLE_PARTITIONS,
                "config/default-shuffle-partitions",
                &[],
            ),
            DEFAULT_SHUFFLE_PARTITIONS.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(
            &DEFAULT_SHUFFLE_PARTITIONS,
            "patterns/healthy",
            &[],
        ));
    }
}
