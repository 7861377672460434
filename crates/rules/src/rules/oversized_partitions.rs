//! PA002 oversized-partitions: partitions of gigabytes, or fewer tasks than cores.

use super::common::{bytes, duration, successful};
use crate::context::data_bytes;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

declare_rule! {
    /// ## What it does
    /// Finds stages whose partitions are too big: a task that read more than a gigabyte, or a
    /// stage with a lot of data in fewer tasks than the cluster has cores.
    ///
    /// ## Why is this bad?
    /// A task processes its partition alone, on one core, in the memory one core is given
    /// (executor memory divided by its cores). Gigabyte partitions spill to disk, hit
    /// out-of-memory errors and run for a long time while other cores have nothing to do.
    ///
    /// ## How to fix it
    /// - Raise the partition count: `spark.sql.shuffle.partitions` to the count in the finding
    ///   (about 128 MB each), or `df.repartition(n, "key")` before the heavy step.
    /// - With AQE, lower `spark.sql.adaptive.advisoryPartitionSizeInBytes` and make sure
    ///   `spark.sql.adaptive.coalescePartitions.initialPartitionNum` is high enough.
    /// - For input stages, lower `spark.sql.files.maxPartitionBytes` (default 128m) or avoid
    ///   unsplittable files (gzip CSV/JSON).
    ///
    /// ## Threshold and its source
    /// A partition over `max_partition_gb` = 1 GiB is high and over `critical_partition_gb` = 5 GiB
    /// critical (DataFlint's and SparkForensics' 5 GiB alert); a stage of at least
    /// `min_stage_gb` = 1 GiB in fewer tasks than cores (SparkForensics: ≥ 1 GiB in ≤ 7 tasks).
    /// The recommended count aims at `target_mb` = 128 MB per partition.
    pub static OVERSIZED = {
        code: "PA002",
        name: "oversized-partitions",
        category: Partitions,
        summary: "Partitions of gigabytes, or a large stage in fewer tasks than cores",
        thresholds: &[
            threshold("max_partition_gb", 1.0, "GiB", "a task reading more than this has too big a partition"),
            threshold("critical_partition_gb", 5.0, "GiB", "a partition over this is critical"),
            threshold("min_stage_gb", 1.0, "GiB", "a stage with this much data in fewer tasks than cores is under-partitioned"),
            threshold("target_mb", 128.0, "MB", "partition size the recommended partition count aims at"),
        ] as &[Threshold],
        check: check,
    };
}

const GIB: f64 = (1u64 << 30) as f64;

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (stage, stats) in ctx.stage_stats() {
        let tasks = ctx.app.stage_tasks(stage);
        let Some(biggest) = successful(tasks).max_by_key(|task| data_bytes(task)) else {
            continue;
        };
        let max_bytes = data_bytes(biggest) as f64;
        let total: u64 = successful(tasks).map(data_bytes).sum();
        let too_big = max_bytes > t.get("max_partition_gb") * GIB;
        let too_few =
            total as f64 >= t.get("min_stage_gb") * GIB && (tasks.len() as i64) < ctx.cores;
        if !too_big && !too_few {
            continue;
        }
        let recommended =
            ((total as f64 / (t.get("target_mb") * 1e6)).ceil() as i64).max(ctx.cores);
        // With the data spread evenly over `recommended` partitions and all cores, the stage
        // would take about its task time divided by the cores it could use.
        let ideal = stats.task_time_ms / ctx.cores.min(recommended).max(1);
        let impact = (stats.duration_ms - ideal).max(0);
        let mut severity = Severity::from_share(impact, ctx.app_ms).at_least(Severity::High);
        if max_bytes > t.get("critical_partition_gb") * GIB {
            severity = Severity::Critical;
        }
        let title = format!(
            "Stage {}: {} tasks for {} — the biggest partition holds {} (task {} ran {}); about {} partitions would do",
            stage.stage_id,
            tasks.len(),
            bytes(total as i64),
            bytes(max_bytes as i64),
            biggest.index,
            duration(biggest.duration_ms.into()),
            recommended
        );
        findings.push(
            Finding::new(&OVERSIZED, severity, title, impact)
                .stages([stage.stage_id])
                .jobs(stage.job_ids.iter().copied())
                .evidence("tasks", tasks.len())
                .evidence("max_partition_bytes", max_bytes as u64)
                .evidence("stage_bytes", total)
                .evidence("cores", ctx.cores)
                .evidence("disk_spill_bytes", stage.totals.disk_bytes_spilled)
                .evidence("recommended_partitions", recommended)
                .recommend(format!(
                    "Raise the partition count to about {recommended} (spark.sql.shuffle.partitions={recommended}, or df.repartition({recommended}, key) before this step); for input stages lower spark.sql.files.maxPartitionBytes."
                )),
        );
    }
    findings
}
