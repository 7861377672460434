//! SP001 spill: tasks that ran out of execution memory and spilled to disk.

use super::common::{bytes, duration};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_DISK_MB: Threshold = threshold(
    "min_disk_mb",
    256.0,
    "MB",
    "disk spill in a stage worth a finding",
    "sparkdiag's default; SparkForensics calls 256 MiB medium",
);

pub const HIGH_DISK_GB: Threshold = threshold(
    "high_disk_gb",
    1.0,
    "GiB",
    "disk spill in a stage that is high severity",
    "SparkForensics (1 GiB high)",
);

pub const DISK_MB_PER_S: Threshold = threshold(
    "disk_mb_per_s",
    200.0,
    "MB/s",
    "assumed speed of writing and reading spill, per task",
    "sparkdiag's estimate of one task's local-disk throughput",
);

declare_rule! {
    /// ## What it does
    /// Finds stages whose tasks spilled sorted or aggregated data to disk because their share
    /// of execution memory was too small.
    ///
    /// ## Why is this bad?
    /// Spilled data is serialised, written to local disk and read back, often more than once:
    /// a spilling sort or aggregation can run several times slower than one that fits in
    /// memory, and heavy spill often comes just before an out-of-memory failure.
    ///
    /// ## How to fix it
    /// - Make partitions smaller: more shuffle partitions (`spark.sql.shuffle.partitions`, or
    ///   AQE with `spark.sql.adaptive.advisoryPartitionSizeInBytes=64m`).
    /// - Give each task more memory: more `spark.executor.memory`, or fewer
    ///   `spark.executor.cores` per executor (memory per task = executor memory / cores).
    /// - If one partition spills and others do not, it is data skew: see SK001.
    ///
    /// ## Threshold and its source
    /// `min_disk_mb` = 256 MB of disk spill in a stage (sparkdiag's default; SparkForensics calls
    /// 256 MiB medium and 1 GiB high), `high_disk_gb` = 1 GiB is high. The saving is the
    /// what-if's replay of the run with each spilling task shorter by writing and reading its
    /// disk spill once at `disk_mb_per_s` = 200 MB/s, never more than the task's time off the
    /// CPU (`avoid_spill`).
    pub static SPILL = {
        code: "SP001",
        name: "spill",
        category: Spill,
        claims: Saving,
        needs: [TaskMetrics],
        summary: "Tasks ran out of execution memory and spilled to disk",
        thresholds: &[
            MIN_DISK_MB,
            HIGH_DISK_GB,
            DISK_MB_PER_S,
        ] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (stage, stats) in ctx.stage_stats() {
        let disk = stage.totals.disk_bytes_spilled;
        if (disk as f64) < t.get(&MIN_DISK_MB) * 1e6 {
            continue;
        }
        let spilling = stats.facts.spilling;
        let worst = stats.facts.worst_spill;
        let io_ms = (2.0 * disk as f64 / (t.get(&DISK_MB_PER_S) * 1e6) * 1000.0) as i64;
        let impact = (io_ms / ctx.cores).min(stats.duration_ms);
        let mut severity = Severity::from_share(impact, ctx.app_ms);
        let floor = if disk as f64 >= t.get(&HIGH_DISK_GB) * (1u64 << 30) as f64 {
            Severity::High
        } else {
            Severity::Medium
        };
        severity = severity.at_least(floor);
        let title = format!(
            "Stage {}: {} of {} tasks spilled {} to disk ({} from memory); the stage ran {}",
            stage.stage_id,
            spilling,
            stats.facts.tasks,
            bytes(disk),
            bytes(stage.totals.memory_bytes_spilled),
            duration(stats.duration_ms)
        );
        let mut finding = Finding::new(&SPILL, severity, title, impact)
            .proposes(
                crate::Change::AvoidSpill {
                    stages: vec![stage.stage_id],
                    disk_mb_per_s: t.get(&DISK_MB_PER_S).round() as i64,
                },
                "the spilled bytes written and read back at the assumed disk speed, spread over the cores, at most the stage's duration",
            )
            .stages([stage.stage_id])
            .jobs(stage.job_ids.iter().copied())
            .evidence("disk_spill_bytes", disk)
            .evidence("memory_spill_bytes", stage.totals.memory_bytes_spilled)
            .evidence("spilling_tasks", spilling)
            .evidence("tasks", stats.facts.tasks)
            .recommend({
                // PA002's count for a stage where every task spilled, so the two agree.
                let more = sparkdiag_facts::partition_count::to_fit_memory(
                    stage.num_tasks,
                    stats.facts.successful_data_bytes,
                    stats.facts.middle_peak_execution_memory,
                    stats.facts.middle_memory_spill,
                    sparkdiag_facts::partition_count::DEFAULT_TARGET_MB,
                    ctx.cores,
                );
                match super::common::stage_partitions_advice(ctx, stage, more, super::common::Resize::More) {
                    Some(advice) => format!("Use smaller partitions, or give each task more memory (more spark.executor.memory, fewer spark.executor.cores). {advice}"),
                    None => format!("Use smaller partitions ({}) or give each task more memory (more spark.executor.memory, fewer spark.executor.cores); if only a few tasks spill, treat it as data skew (SK001).", super::common::partitions_advice(ctx, more)),
                }
            });
        if let Some(worst) = worst {
            finding = finding
                .evidence("max_task_disk_spill_bytes", worst.value)
                .evidence("max_spill_task_index", worst.index);
        }
        findings.push(finding);
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::SPILL;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn an_explicit_repartition_gets_advice_about_that_call() {
        let found = on_log(&SPILL, "shapes/repartition-write", &[]);
        assert_fires(&found, SPILL.code);
        for f in found.iter().filter(|f| f.title.contains("2 of 2 tasks")) {
            let advice = f.recommendation.as_str();
            assert!(advice.contains("explicit repartition(2)"), "{advice}");
            assert!(
                !advice.contains("spark.sql.shuffle.partitions="),
                "{advice}"
            );
        }
        assert!(found.iter().any(|f| f.title.contains("2 of 2 tasks")));
    }

    #[test]
    fn fires_on_the_spilling_run_with_a_lower_floor() {
        assert_fires(
            &on_log(&SPILL, "patterns/spill", &["SP001.min_disk_mb=32"]),
            SPILL.code,
        );
    }

    #[test]
    fn is_quiet_on_the_same_log_at_its_defaults() {
        assert_quiet(&on_log(&SPILL, "patterns/spill", &[]));
    }
}
