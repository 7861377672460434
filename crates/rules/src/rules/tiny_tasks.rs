//! PA001 tiny-tasks: thousands of tasks too short to be worth scheduling.

use super::common::{bytes, duration};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_TASKS: Threshold = threshold(
    "min_tasks",
    100.0,
    "tasks",
    "a stage with fewer tasks is never too finely split",
    "SparkForensics' tiny tasks",
);

pub const MAX_MEDIAN_MS: Threshold = threshold(
    "max_median_ms",
    500.0,
    "ms",
    "median task duration under which tasks are tiny",
    "SparkForensics' tiny tasks; DataFlint (500 ms)",
);

pub const MAX_AVG_MB: Threshold = threshold(
    "max_avg_mb",
    16.0,
    "MB",
    "average partition size under which partitions are tiny",
    "the tiny-partition size SparkForensics and DataFlint flag",
);

pub const MIN_APP_SHARE: Threshold = threshold(
    "min_app_share",
    0.005,
    "share",
    "the stage's share of the application that is worth a look",
    "SparkForensics' impact floor",
);

pub const TARGET_MB: Threshold = threshold(
    "target_mb",
    sparkdiag_facts::partition_count::DEFAULT_TARGET_MB,
    "MB",
    "partition size the recommended partition count aims at",
    "Databricks and spark-rapids (128-256 MB); AQE's advisory size is 64 MB",
);

declare_rule! {
    /// ## What it does
    /// Finds stages with many tasks whose median runs for well under a second, or whose
    /// partitions hold only a few megabytes: the data is cut into far more pieces than the
    /// cluster has cores.
    ///
    /// ## Why is this bad?
    /// Every task pays a fixed cost — scheduling on the driver, serialising the task, starting it
    /// on an executor, sending back its result and metrics — of a few milliseconds to tens of
    /// milliseconds. With 2000 partitions of a few KB (the default of 200 shuffle partitions is
    /// often ten times too many for small data), that overhead is most of the stage, and the
    /// driver becomes the bottleneck. Tiny partitions also write tiny files.
    ///
    /// ## How to fix it
    /// - Let AQE coalesce shuffle partitions (Spark 3.2+ default): `spark.sql.adaptive.enabled=true`,
    ///   `spark.sql.adaptive.coalescePartitions.enabled=true`,
    ///   `spark.sql.adaptive.advisoryPartitionSizeInBytes=128m`.
    /// - Or set `spark.sql.shuffle.partitions` to the count in the finding (about 128 MB per
    ///   partition, at least the number of cores).
    /// - For input stages, read fewer, larger files (`spark.sql.files.maxPartitionBytes=256m`)
    ///   or compact the small files; `df.coalesce(n)` before a write.
    ///
    /// ## Threshold and its source
    /// `min_tasks` = 100 tasks and a median under `max_median_ms` = 500 ms (SparkForensics' tiny
    /// tasks; DataFlint flags more than 5000 tasks under 500 ms), or an average partition under
    /// `max_avg_mb` = 16 MB with at least `min_tasks` tasks. The stage must take at least
    /// `min_app_share` = 0.5 % of the application. The recommended count aims at
    /// `target_mb` = 128 MB per partition (AQE's advisory size is 64 MB; Databricks and
    /// spark-rapids target 128–256 MB).
    pub static TINY_TASKS = {
        code: "PA001",
        name: "tiny-tasks",
        category: Partitions,
        claims: Saving,
        needs: [TaskMetrics],
        summary: "Many tasks of a few milliseconds or a few megabytes: the data is cut into too many partitions",
        thresholds: &[
            MIN_TASKS,
            MAX_MEDIAN_MS,
            MAX_AVG_MB,
            MIN_APP_SHARE,
            TARGET_MB,
        ] as &[Threshold],
        check: check,
        advises_shuffle_partitions: true,
    };
}

/// One stage that qualifies, before stages of the same kind are merged.
struct Tiny<'a> {
    stage: &'a sparkdiag_model::StageAttempt,
    stage_id: i64,
    job_ids: Vec<i64>,
    median_ms: u32,
    bytes: u64,
    overhead_ms: i64,
    impact_ms: i64,
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    // Stages of one kind (same name, same task count) — a loop running the same query — make
    // one finding, not one each.
    let mut kinds: std::collections::BTreeMap<(String, usize), Vec<Tiny<'_>>> =
        std::collections::BTreeMap::new();
    for (stage, stats) in ctx.stage_stats() {
        let tasks = stats.facts.tasks;
        if (tasks as f64) < t.get(&MIN_TASKS) || stats.successful == 0 {
            continue;
        }
        let total_bytes = stats.facts.successful_data_bytes;
        let avg_bytes = total_bytes / stats.successful as u64;
        let short = f64::from(stats.median_ms) < t.get(&MAX_MEDIAN_MS);
        let small = total_bytes > 0 && (avg_bytes as f64) < t.get(&MAX_AVG_MB) * 1e6;
        if !(short || small)
            || (stats.duration_ms as f64) < t.get(&MIN_APP_SHARE) * ctx.app_ms as f64
        {
            continue;
        }
        // What the tasks spent outside their own work: scheduling, launching, deserialising,
        // returning results. Coalescing removes most of it; it ran spread over the cores.
        let overhead = stats.facts.overhead_ms;
        kinds
            .entry((stage.name.clone(), tasks))
            .or_default()
            .push(Tiny {
                stage,
                stage_id: stage.stage_id,
                job_ids: stage.job_ids.clone(),
                median_ms: stats.median_ms,
                bytes: total_bytes,
                overhead_ms: overhead,
                impact_ms: (overhead / ctx.cores).min(stats.duration_ms),
            });
    }
    let mut findings = Vec::new();
    for ((_, tasks), stages) in kinds {
        let impact: i64 = stages.iter().map(|s| s.impact_ms).sum();
        let bytes_each = stages.iter().map(|s| s.bytes).max().unwrap_or(0);
        let by_size =
            sparkdiag_facts::partition_count::by_size(bytes_each as i64, t.get(&TARGET_MB));
        let recommended = by_size.max(ctx.cores).min(tasks as i64).max(1);
        let mut medians: Vec<u32> = stages.iter().map(|s| s.median_ms).collect();
        medians.sort_unstable();
        let median = medians[medians.len() / 2];
        let data = if bytes_each > 0 {
            format!(
                " and {} per partition on average",
                bytes((bytes_each / tasks as u64) as i64)
            )
        } else {
            String::new()
        };
        let which = match stages.as_slice() {
            [one] => format!("Stage {}", one.stage_id),
            many => format!("{} stages like stage {}", many.len(), many[0].stage_id),
        };
        let title = format!(
            "{which}: {tasks} tasks {}with a median of {}{data} — about {recommended} partitions would do",
            if stages.len() > 1 { "each " } else { "" },
            duration(median.into()),
        );
        let stage_advice = super::common::stage_partitions_advice(
            ctx,
            stages[0].stage,
            recommended,
            super::common::Resize::Fewer,
        );
        findings.push(
            Finding::new(&TINY_TASKS, Severity::from_share(impact, ctx.app_ms), title, impact)
                .stages(stages.iter().map(|s| s.stage_id))
                .proposes(
                    crate::Change::MergePartitions {
                        stages: stages.iter().map(|s| s.stage_id).collect(),
                        partitions: recommended,
                    },
                    "the tasks' scheduling, deserialisation and result overhead, spread over the cores",
                )
                .jobs(stages.iter().flat_map(|s| s.job_ids.iter().copied()))
                .evidence("stages", stages.len())
                .evidence("tasks_per_stage", tasks)
                .evidence("median_task_ms", median)
                .evidence("partition_bytes_per_stage", bytes_each)
                .evidence("overhead_task_ms", stages.iter().map(|s| s.overhead_ms).sum::<i64>())
                .evidence("cores", ctx.cores)
                .evidence("recommended_partitions", recommended)
                .settings(if stage_advice.is_some() {
                    Vec::new()
                } else {
                    // AQE's own switches where they are off, else the count itself.
                    super::common::aqe_applies(ctx)
                        .then(|| super::common::aqe_coalescing_settings(ctx))
                        .flatten()
                        .unwrap_or_else(|| {
                            super::common::partitions_setting(ctx, stages[0].stage, recommended)
                                .into_iter()
                                .collect()
                        })
                })
                .recommend(if let Some(advice) = stage_advice {
                    advice
                } else if !ctx.app.uses_sql() {
                    format!("Use fewer, larger partitions: {}; coalesce({recommended}) shrinks an RDD without a shuffle. For small input files, read them with fewer splits (minPartitions) or compact them.", super::common::partitions_advice(ctx, recommended))
                } else if super::common::aqe_applies(ctx)
                    && super::common::aqe_coalescing_settings(ctx).is_none()
                    && ctx.app.spark_version_number().is_none_or(|v| v >= (3, 2))
                {
                    // AQE was on and coalescing, and still left these: since 3.2 it keeps the
                    // cluster's parallelism first and ignores the advisory size.
                    format!(
                        "AQE was on and left these partitions small: it coalesces for parallelism first (spark.sql.adaptive.coalescePartitions.parallelismFirst, on by default since Spark 3.2), keeping partitions of only spark.sql.adaptive.coalescePartitions.minPartitionSize (1 MB). Set spark.sql.shuffle.partitions={recommended} (about {} MB each), or parallelismFirst=false so AQE sizes them by spark.sql.adaptive.advisoryPartitionSizeInBytes. For small input files, raise spark.sql.files.maxPartitionBytes or compact them.",
                        t.get(&TARGET_MB)
                    )
                } else if super::common::aqe_applies(ctx) {
                    format!(
                        "Let AQE coalesce partitions: spark.sql.adaptive.enabled=true, spark.sql.adaptive.coalescePartitions.enabled=true, spark.sql.adaptive.advisoryPartitionSizeInBytes=128m; or set spark.sql.shuffle.partitions={recommended} (about {} MB each). For small input files, raise spark.sql.files.maxPartitionBytes or compact them.",
                        t.get(&TARGET_MB)
                    )
                } else {
                    format!(
                        "Set spark.sql.shuffle.partitions={recommended} (about {} MB each); this Spark version has no adaptive execution to coalesce them. For small input files, raise spark.sql.files.maxPartitionBytes or compact them.",
                        t.get(&TARGET_MB)
                    )
                }),
        );
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::TINY_TASKS;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_tiny_partitions() {
        assert_fires(
            &on_log(&TINY_TASKS, "patterns/tiny-partitions", &[]),
            TINY_TASKS.code,
        );
    }

    /// Spark's parallel listing of 150 partition directories is one task per directory: its
    /// count comes from the discovery settings, not from the shuffle partitions.
    #[test]
    fn the_listing_job_gets_listing_advice() {
        let found = on_log(&TINY_TASKS, "shapes/partition-discovery", &[]);
        assert_fires(&found, TINY_TASKS.code);
        for f in &found {
            let advice = f.recommendation.as_str();
            assert!(
                advice.contains("parallelPartitionDiscovery.threshold"),
                "{advice}"
            );
            assert!(
                !advice.contains("spark.sql.shuffle.partitions="),
                "{advice}"
            );
            assert!(!advice.contains("coalescePartitions"), "{advice}");
        }
    }

    /// `parallelize(data, 120)` in an application that also runs DataFrame queries: the count
    /// is the RDD call's, which no SQL setting changes.
    #[test]
    fn rdd_work_in_a_sql_application_gets_the_rdd_calls_advice() {
        let found = on_log(&TINY_TASKS, "shapes/one-core", &[]);
        assert_fires(&found, TINY_TASKS.code);
        for f in &found {
            let advice = f.recommendation.as_str();
            assert!(advice.contains("parallelize("), "{advice}");
            assert!(
                !advice.contains("spark.sql.shuffle.partitions="),
                "{advice}"
            );
        }
    }

    #[test]
    fn is_quiet_on_the_same_job_with_fewer_partitions() {
        assert_quiet(&on_log(&TINY_TASKS, "patterns/tiny-partitions-fixed", &[]));
    }
}
