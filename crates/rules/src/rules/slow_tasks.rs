//! What SK001 data-skew and SK002 straggler-task share: finding tasks far longer than their
//! stage's median, and telling whether their data was out of line too.

use sparkdiag_model::{StageAttempt, Task};

use super::common::{bytes, duration, ratio, stage_end_saving_at_median, stage_label};
use crate::context::{data_bytes, data_records};
use crate::stage_shape::{ShuffleConsumer, StageShape};
use crate::{Context, Finding, Severity, Threshold, Thresholds, threshold};

pub const RATIO: Threshold = threshold(
    "ratio",
    5.0,
    "x median",
    "a task longer than this multiple of its stage's median task duration",
    "AQE's spark.sql.adaptive.skewJoin.skewedPartitionFactor (5)",
);

pub const DATA_RATIO: Threshold = threshold(
    "data_ratio",
    5.0,
    "x median",
    "the slow task's bytes or records above this multiple of the median task's mean data skew",
    "AQE's skewedPartitionFactor, applied to bytes and records",
);

pub const MIN_TASKS: Threshold = threshold(
    "min_tasks",
    5.0,
    "tasks",
    "successful tasks a stage needs before its median means anything",
    "sparkdiag's own guard",
);

pub const MIN_TASK_S: Threshold = threshold(
    "min_task_s",
    30.0,
    "s",
    "the slow task must last this long, or min_app_share of the application",
    "SparkForensics' impact floor",
);

pub const MIN_APP_SHARE: Threshold = threshold(
    "min_app_share",
    0.005,
    "share",
    "the slow task's share of the application that is worth a look",
    "SparkForensics' impact floor",
);

pub const FLOOR_S: Threshold = threshold(
    "floor_s",
    1.0,
    "s",
    "no task shorter than this is ever a finding",
    "sparkdiag's own guard",
);

pub const SKEW_THRESHOLDS: &[Threshold] = &[
    RATIO,
    DATA_RATIO,
    MIN_TASKS,
    MIN_TASK_S,
    MIN_APP_SHARE,
    FLOOR_S,
];

/// A stage whose slowest task passes the guards: the slow tasks, worst first.
pub struct SlowStage<'a> {
    pub stage: &'a StageAttempt,
    pub slow: std::sync::Arc<Vec<Task>>,
    pub median_ms: u32,
    pub median_bytes: u64,
    pub median_records: u64,
    /// How much sooner the stage would end with no task longer than the median.
    pub end_saving_ms: i64,
}

pub fn slow_stages<'a>(ctx: &Context<'a>, t: &Thresholds) -> Vec<SlowStage<'a>> {
    let mut out = Vec::new();
    for (index, (stage, stats)) in ctx.stage_stats().enumerate() {
        if (stats.successful as f64) < t.get(&MIN_TASKS) || stats.median_ms == 0 {
            continue;
        }
        let limit = t.get(&RATIO) * f64::from(stats.median_ms);
        // The slowest successful task decides whether the stage has slow tasks worth a finding:
        // only then are its tasks looked at again, to name them.
        let worst_ms = f64::from(stats.max_ms);
        if worst_ms <= limit {
            continue;
        }
        let long_enough = worst_ms >= t.get(&MIN_TASK_S) * 1000.0
            || worst_ms >= t.get(&MIN_APP_SHARE) * ctx.app_ms as f64;
        if !long_enough || worst_ms < t.get(&FLOOR_S) * 1000.0 {
            continue;
        }
        out.push(SlowStage {
            slow: ctx.successful_tasks_over(index, limit),
            end_saving_ms: stage_end_saving_at_median(stats),
            stage,
            median_ms: stats.median_ms,
            median_bytes: stats.median_bytes,
            median_records: stats.median_records,
        });
    }
    out
}

/// Whether a task's data is out of line with the stage's median task.
pub fn has_skewed_data(task: &Task, s: &SlowStage, data_ratio: f64) -> bool {
    let over = |value: u64, median: u64, floor: u64| {
        value >= floor && value as f64 > data_ratio * (median.max(1) as f64)
    };
    over(data_bytes(task), s.median_bytes, 1 << 20)
        || over(data_records(task), s.median_records, 1000)
}

pub fn finding_for(
    ctx: &Context,
    rule: &'static crate::Rule,
    s: &SlowStage,
    tasks: &[&Task],
    data: bool,
) -> Finding {
    let worst = tasks[0];
    let executor = ctx.app.executor(worst);
    let impact = s.end_saving_ms;
    let times = ratio(f64::from(worst.duration_ms), f64::from(s.median_ms));
    let title = if data {
        format!(
            "{}: task {} ran {} ({:.0}x the median {}) on {} of data ({:.0}x the median task's)",
            stage_label(s.stage),
            worst.index,
            duration(worst.duration_ms.into()),
            times,
            duration(s.median_ms.into()),
            bytes(data_bytes(worst) as i64),
            ratio(data_bytes(worst) as f64, s.median_bytes as f64)
                .max(ratio(data_records(worst) as f64, s.median_records as f64)),
        )
    } else {
        format!(
            "{}: task {} ran {} ({:.0}x the median {}) with no more data than the others, on executor {} ({})",
            stage_label(s.stage),
            worst.index,
            duration(worst.duration_ms.into()),
            times,
            duration(s.median_ms.into()),
            executor.id,
            executor.host,
        )
    };
    let shape = ctx.shape(s.stage);
    let (kind, recommendation) = if data {
        skew_advice(ctx, shape)
    } else {
        ("straggler", straggler_advice(ctx))
    };
    Finding::new(
        rule,
        Severity::from_share(impact, ctx.app_ms),
        title,
        impact,
    )
    .stages([s.stage.stage_id])
    .proposes(
        crate::Change::CutSkewToMedian {
            stages: vec![s.stage.stage_id],
        },
        "the stage ends when its median task would: the slow tasks' excess over the median removed",
    )
    .jobs(s.stage.job_ids.iter().copied())
    .executors(
        tasks
            .iter()
            .map(|t| ctx.app.executor(t).id.clone())
            .collect::<std::collections::BTreeSet<_>>(),
    )
    .evidence("stage_attempt", s.stage.attempt_id)
    .evidence("task_id", worst.task_id)
    .evidence("task_index", worst.index)
    .evidence("task_duration_ms", worst.duration_ms)
    .evidence("median_task_ms", s.median_ms)
    .evidence("ratio", (times * 10.0).round() / 10.0)
    .evidence("task_bytes", data_bytes(worst))
    .evidence("median_task_bytes", s.median_bytes)
    .evidence("task_records", data_records(worst))
    .evidence("median_task_records", s.median_records)
    .evidence("slow_tasks", tasks.len())
    .evidence("executor", executor.id.clone())
    .evidence("host", executor.host.clone())
    .evidence("stage_shape", kind)
    .recommend(recommendation)
}

/// What to do about a partition with far more data, by what the stage is: a few big input
/// files, a hot join key (AQE can split it), a hot grouping key (AQE cannot) or the program's
/// own repartition by a hot key, with a label of the branch for the evidence.
fn skew_advice(ctx: &Context, shape: &StageShape) -> (&'static str, String) {
    if shape.input {
        let format = shape
            .source_formats
            .first()
            .map_or(String::new(), |f| format!(" {f}"));
        return (
            "input-split",
            format!(
                "The stage read no shuffle: its slow tasks read bigger input splits, so the{format} input files are uneven. Rewrite or compact them into files of even size (df.repartition(n).write, or OPTIMIZE / a compaction job for table formats), or lower spark.sql.files.maxPartitionBytes so big splittable files are read as several splits; skew-join settings and salting do not apply to a read."
            ),
        );
    }
    match shape.behind_shuffle {
        ShuffleConsumer::Aggregation => (
            "aggregation",
            "A hot grouping key: AQE's skew join splits only join partitions, not an aggregation's. Aggregate in two phases with a salt: add (F.rand()*16).cast(\"int\") as a grouping column, aggregate by key and salt, then aggregate the partial results by key; or filter out the hot key (often a null or placeholder) and aggregate it on its own. Aggregates that keep every value (collect_list, collect_set, percentile) cannot be combined map-side, so the hot key's values all reach one task.".to_string(),
        ),
        ShuffleConsumer::Repartition => {
            let call = shape
                .explicit_call()
                .map_or("repartition(key)".to_string(), |(_, n, _)| {
                    format!("repartition({n}, key)")
                });
            // The REBALANCE hint exists from Spark 3.2, where AQE splits its skewed partitions
            // (spark.sql.adaptive.optimizeSkewsInRebalancePartitions.enabled, on by default).
            let rebalance = if super::common::aqe_enabled(ctx)
                && ctx.app.spark_version_number().is_none_or(|v| v >= (3, 2))
            {
                " Or ask for a rebalance instead, which AQE splits where a key is hot: df.hint(\"rebalance\", \"key\") (spark.sql.adaptive.optimizeSkewsInRebalancePartitions.enabled, on by default)."
            } else {
                ""
            };
            (
                "repartition",
                format!(
                    "A hot key, put in one partition by the program's own {call}: no join or aggregation follows, so AQE's skew join and two-phase aggregation do not apply. If the next step does not need each key's rows together (a write, a per-row function), repartition by row count instead (df.repartition(n)), or add a salt to the key (df.repartition(n, \"key\", (F.rand()*16).cast(\"int\"))).{rebalance}"
                ),
            )
        }
        ShuffleConsumer::Join if !super::common::aqe_applies(ctx) => (
            "join",
            "A hot join key: broadcast the small side of the join if there is one (F.broadcast(small_df)), or salt the key (add a random 0-15 suffix on the large side and replicate the small side 16 times); this application has no adaptive execution to split the skewed partition.".to_string(),
        ),
        ShuffleConsumer::Join => (
            "join",
            "A hot join key: let AQE split the skewed partition (spark.sql.adaptive.enabled=true, spark.sql.adaptive.skewJoin.enabled=true; lower spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes if it is under 256 MB), or broadcast the small side of the join (F.broadcast(small_df)).".to_string(),
        ),
        ShuffleConsumer::Unknown if !super::common::aqe_applies(ctx) => (
            "shuffle",
            "Broadcast the small side of the join if there is one, or salt the hot key (add a random 0-15 suffix to the key and aggregate twice), or spread it with a custom partitioner; this application has no adaptive execution to split the skewed partition.".to_string(),
        ),
        ShuffleConsumer::Unknown => (
            "shuffle",
            "Let AQE split the skewed partition (spark.sql.adaptive.enabled=true, spark.sql.adaptive.skewJoin.enabled=true; lower spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes if it is under 256 MB), broadcast the small side of the join (F.broadcast(small_df)), or salt the hot key (add (F.rand()*16).cast(\"int\") to the grouping keys and aggregate twice).".to_string(),
        ),
    }
}

/// What to do about a task slow on even data. Speculation runs a copy on another core, best on
/// another executor: with one core there is none, with one executor the copy shares the host.
fn straggler_advice(ctx: &Context) -> String {
    let app = &ctx.shapes.app;
    if app.single_core() {
        return "The data is even and the application had one core, so speculation has nowhere to run a copy and every other task waited behind this one: look at what the task itself did (a slow record, an external call, a sleep in a UDF), and give the application more cores (local[*], or more executor cores) so one slow task no longer stops the rest.".to_string();
    }
    if app.executors <= 1 {
        return format!(
            "The data is even and the application ran on one executor ({} cores), so a speculative copy would run on the same host: look at what the task itself did (a slow record, an external call, GC) and at the host; with more than one executor, spark.speculation=true lets a copy run elsewhere.",
            app.cores_per_executor
        );
    }
    "The data is even, the executor is slow: enable speculation (spark.speculation=true, spark.speculation.multiplier=3) and check the named executor's host (GC, disk, network); spark.excludeOnFailure.enabled=true keeps failing nodes out.".to_string()
}
