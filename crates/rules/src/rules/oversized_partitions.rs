//! PA002 oversized-partitions: partitions of gigabytes, or fewer tasks than cores.

use super::common::{bytes, duration};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MAX_PARTITION_GB: Threshold = threshold(
    "max_partition_gb",
    1.0,
    "GiB",
    "a task reading more than this has too big a partition",
    "DataFlint, SparkForensics",
);

pub const CRITICAL_PARTITION_GB: Threshold = threshold(
    "critical_partition_gb",
    5.0,
    "GiB",
    "a partition over this is critical",
    "DataFlint's and SparkForensics' 5 GiB alert",
);

pub const MIN_STAGE_GB: Threshold = threshold(
    "min_stage_gb",
    1.0,
    "GiB",
    "a stage with this much data in fewer tasks than cores is under-partitioned",
    "SparkForensics (>= 1 GiB in <= 7 tasks)",
);

pub const TARGET_MB: Threshold = threshold(
    "target_mb",
    sparkdiag_facts::partition_count::DEFAULT_TARGET_MB,
    "MB",
    "partition size the recommended partition count aims at",
    "Databricks and spark-rapids (128-256 MB)",
);

pub const SPILL_TASK_SHARE: Threshold = threshold(
    "spill_task_share",
    0.9,
    "share",
    "share of a stage's tasks that spilled for it to count as all-spilling",
    "sparkdiag's own guard",
);

pub const MIN_SPILL_MB: Threshold = threshold(
    "min_spill_mb",
    256.0,
    "MB",
    "disk spill in a stage worth a finding as oversized partitions",
    "SP001's floor",
);

declare_rule! {
    /// ## What it does
    /// Finds stages whose partitions are too big: a task that read more than a gigabyte, a
    /// stage with a lot of data in fewer tasks than the cluster has cores, or a stage where
    /// (nearly) every task spilled to disk with no skew — each partition was bigger than the
    /// memory a task had, so the fix is more partitions, not more memory for one task.
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
    /// The recommended count aims at `target_mb` = 128 MB per partition. A stage where at least
    /// `spill_task_share` = 90 % of the tasks spilled, `min_spill_mb` = 256 MB to disk in all
    /// (SP001's floor), and the biggest task read at most twice the median (else it is skew,
    /// SK001) has oversized partitions; the count recommended then also splits each partition
    /// until what a task held plus what it spilled fits in the execution memory it peaked at.
    pub static OVERSIZED = {
        code: "PA002",
        name: "oversized-partitions",
        category: Partitions,
        claims: Saving,
        needs: [TaskMetrics],
        summary: "Partitions of gigabytes, or a large stage in fewer tasks than cores",
        thresholds: &[
            MAX_PARTITION_GB,
            CRITICAL_PARTITION_GB,
            MIN_STAGE_GB,
            TARGET_MB,
            SPILL_TASK_SHARE,
            MIN_SPILL_MB,
        ] as &[Threshold],
        check: check,
    };
}

const GIB: f64 = (1u64 << 30) as f64;

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (stage, stats) in ctx.stage_stats() {
        let tasks = stats.facts.tasks;
        let Some(biggest) = stats.facts.biggest_partition else {
            continue;
        };
        let max_bytes = biggest.value as f64;
        let total = stats.facts.successful_data_bytes;
        let too_big = max_bytes > t.get(&MAX_PARTITION_GB) * GIB;
        let too_few = total as f64 >= t.get(&MIN_STAGE_GB) * GIB && (tasks as i64) < ctx.cores;
        if !too_big && !too_few {
            if let Some(f) = all_spilling(ctx, t, stage, stats) {
                findings.push(f);
            }
            continue;
        }
        let recommended =
            sparkdiag_facts::partition_count::for_stage(total as i64, t.get(&TARGET_MB), ctx.cores);
        // With the data spread evenly over `recommended` partitions and all cores, the stage
        // would take about its task time divided by the cores it could use.
        let ideal = stats.task_time_ms / ctx.cores.min(recommended).max(1);
        let impact = (stats.duration_ms - ideal).max(0);
        let mut severity = Severity::from_share(impact, ctx.app_ms).at_least(Severity::High);
        if max_bytes > t.get(&CRITICAL_PARTITION_GB) * GIB {
            severity = Severity::Critical;
        }
        let title = format!(
            "Stage {}: {} tasks for {} — the biggest partition holds {} (task {} ran {}); about {} partitions would do",
            stage.stage_id,
            tasks,
            bytes(total as i64),
            bytes(max_bytes as i64),
            biggest.index,
            duration(biggest.duration_ms.into()),
            recommended
        );
        let (advice, setting) = more_partitions(ctx, stage, recommended, |how| {
            format!("Raise the partition count to about {recommended}: {how}.")
        });
        // The saving is replayed as the stage's time spread evenly over the new partitions; the
        // log holds no per-key sizes, but today's partitions show how evenly the keys spread.
        let mean_bytes = total as f64 / stats.successful.max(1) as f64;
        let largest_to_mean = (max_bytes / mean_bytes.max(1.0) * 100.0).round() / 100.0;
        let spread = if tasks < 2 {
            String::new()
        } else if largest_to_mean <= EVEN_PARTITIONS {
            format!(
                " Today's {tasks} partitions are even (the largest {largest_to_mean:.2}x the mean), so the data spreads over its keys and more partitions should share it evenly, as the saving assumes."
            )
        } else {
            format!(
                " Today's partitions are uneven (the largest {largest_to_mean:.2}x the mean): more partitions split the large ones only if they hold many keys, which the saving assumes and the log cannot show."
            )
        };
        findings.push(
            Finding::new(&OVERSIZED, severity, title, impact)
                .stages([stage.stage_id])
                .proposes(
                    crate::Change::SplitPartitions {
                        stages: vec![stage.stage_id],
                        partitions: recommended,
                    },
                    "the stage's task time spread evenly over the recommended partitions on every core",
                )
                .jobs(stage.job_ids.iter().copied())
                .evidence("tasks", tasks)
                .evidence("max_partition_bytes", max_bytes as u64)
                .evidence("stage_bytes", total)
                .evidence("cores", ctx.cores)
                .evidence("disk_spill_bytes", stage.totals.disk_bytes_spilled)
                .evidence("recommended_partitions", recommended)
                .evidence("largest_to_mean_partition", largest_to_mean)
                .evidence("stage_shape", ctx.shape(stage).partition_origin())
                .settings(setting)
                .recommend(advice + &spread),
        );
    }
    findings
}

/// The largest partition at most this many times the mean: the keys spread evenly.
const EVEN_PARTITIONS: f64 = 1.25;

/// The advice for giving `stage` about `n` partitions, and the one setting it names: none when
/// the count comes from the code or the input. `worded` puts the setting's advice in a sentence.
fn more_partitions(
    ctx: &Context,
    stage: &sparkdiag_model::StageAttempt,
    n: i64,
    worded: impl FnOnce(String) -> String,
) -> (String, Option<String>) {
    match super::common::stage_partitions_advice(ctx, stage, n, super::common::Resize::More) {
        Some(advice) => (advice, None),
        None => (
            worded(super::common::partitions_advice(ctx, n)),
            super::common::partitions_setting(ctx, stage, n),
        ),
    }
}

/// A stage where (nearly) every task spilled and none stands out: every partition was too big
/// for the memory a task had.
fn all_spilling(
    ctx: &Context,
    t: &Thresholds,
    stage: &sparkdiag_model::StageAttempt,
    stats: &crate::StageStats,
) -> Option<Finding> {
    let facts = &stats.facts;
    let disk = stage.totals.disk_bytes_spilled;
    let peak = facts.middle_peak_execution_memory;
    let spill = facts.middle_memory_spill;
    if stats.successful < 2 || (disk as f64) < t.get(&MIN_SPILL_MB) * 1e6 {
        return None;
    }
    let spilling = facts.successful_spilling;
    if (spilling as f64) < t.get(&SPILL_TASK_SHARE) * stats.successful as f64 {
        return None;
    }
    let max_bytes = facts.biggest_partition.map_or(0, |b| b.value);
    if stats.median_bytes == 0 || max_bytes > 2 * stats.median_bytes {
        return None;
    }
    let recommended = sparkdiag_facts::partition_count::to_fit_memory(
        stats.successful as i64,
        facts.successful_data_bytes,
        facts.middle_peak_execution_memory,
        facts.middle_memory_spill,
        t.get(&TARGET_MB),
        ctx.cores,
    );
    // The spill's disk round trip, spread over the cores, is what right-sized partitions save.
    let io_ms = (2.0 * disk as f64 / 200e6 * 1000.0) as i64;
    let impact = (io_ms / ctx.cores.max(1)).min(stats.duration_ms);
    let title = format!(
        "Stage {}: {spilling} of {} tasks spilled ({} to disk) with no skew — every partition was too big for a task's memory; about {recommended} partitions would fit",
        stage.stage_id,
        stats.successful,
        bytes(disk),
    );
    let (advice, setting) = more_partitions(ctx, stage, recommended, |how| {
        format!("Use about {recommended} partitions: {how}.")
    });
    Some(
        Finding::new(
            &OVERSIZED,
            Severity::from_share(impact, ctx.app_ms),
            title,
            impact,
        )
        .stages([stage.stage_id])
        // Replayed as the other branch is: what more partitions give is the stage's work over
        // every core, and that work still holds the spill the split would avoid (a bound).
        .proposes(
            crate::Change::SplitPartitions {
                stages: vec![stage.stage_id],
                partitions: recommended,
            },
            "the stage's task time, its spill included, spread evenly over the recommended partitions on every core",
        )
        .jobs(stage.job_ids.iter().copied())
        .evidence("tasks", stats.successful)
        .evidence("spilling_tasks", spilling)
        .evidence("disk_spill_bytes", disk)
        .evidence("memory_spill_bytes", stage.totals.memory_bytes_spilled)
        .evidence("median_peak_execution_memory_bytes", peak)
        .evidence("median_memory_spill_bytes", spill)
        .evidence("max_partition_bytes", max_bytes)
        .evidence("median_partition_bytes", stats.median_bytes)
        .evidence("recommended_partitions", recommended)
        .evidence("stage_shape", ctx.shape(stage).partition_origin())
        .settings(setting)
        .recommend(advice),
    )
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::OVERSIZED;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    /// Both write tasks after a `repartition(2)` spilled: the fix is that call, which neither
    /// `spark.sql.shuffle.partitions` nor AQE changes.
    #[test]
    fn an_explicit_repartition_gets_advice_about_that_call() {
        let found = on_log(&OVERSIZED, "shapes/repartition-write", &[]);
        assert_fires(&found, OVERSIZED.code);
        for f in &found {
            let advice = f.recommendation.as_str();
            assert!(advice.contains("explicit repartition(2)"), "{advice}");
            assert!(advice.contains("parquet at"), "{advice}");
            // More partitions there are more output files: said, since a repartition before a
            // write is often there for the file count.
            assert!(advice.contains("files instead of 2"), "{advice}");
            assert!(
                !advice.contains("spark.sql.shuffle.partitions="),
                "{advice}"
            );
            assert!(!advice.contains("advisoryPartitionSizeInBytes"), "{advice}");
        }
    }

    #[test]
    fn fires_on_the_skewed_join_with_a_lower_limit() {
        assert_fires(
            &on_log(
                &OVERSIZED,
                "patterns/skew-join",
                &["PA002.max_partition_gb=0.02"],
            ),
            OVERSIZED.code,
        );
    }

    /// The saving spreads a stage's time evenly over more partitions; the advice says whether
    /// today's partitions back that: on the skewed join, the stage holding the hot key is told
    /// its partitions are uneven, with the ratio in the evidence.
    #[test]
    fn says_whether_todays_partitions_back_an_even_split() {
        let found = on_log(
            &OVERSIZED,
            "patterns/skew-join",
            &["PA002.max_partition_gb=0.02"],
        );
        let mut uneven = 0;
        for f in found
            .iter()
            .filter(|f| !f.evidence.contains_key("spilling_tasks"))
        {
            let ratio = f.evidence["largest_to_mean_partition"].as_f64().unwrap();
            let advice = &f.recommendation;
            if ratio > super::EVEN_PARTITIONS {
                uneven += 1;
                assert!(advice.contains("partitions are uneven"), "{advice}");
            } else {
                assert!(advice.contains("partitions are even"), "{advice}");
            }
        }
        assert!(uneven > 0, "the hot key's stage is uneven: {found:#?}");
    }

    #[test]
    fn is_quiet_on_the_same_log_at_its_defaults() {
        assert_quiet(&on_log(&OVERSIZED, "patterns/skew-join", &[]));
    }
}
