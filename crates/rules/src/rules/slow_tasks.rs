//! What SK001 data-skew and SK002 straggler-task share: the stages whose long tasks pass the
//! guards, and a finding that says what each long task's time went to.
//!
//! The facts attribute each long task's time beyond its stage's typical task to a cause
//! (`sparkdiag_facts::slowness`): more data, GC, shuffle fetches, a cold start, scheduling,
//! locality, a slow executor, or the task itself. SK001 takes the tasks long for their data,
//! SK002 the rest but a slow executor's (SK003's), so a task's seconds are one finding's.

use sparkdiag_facts::slowness::{Cause, Cold, LongTask, Typical};
use sparkdiag_model::StageAttempt;

use super::common::{bytes, duration, ratio, stage_end_saving_at_median, stage_label};
use crate::stage_shape::{ShuffleConsumer, StageShape};
use crate::{Context, Finding, Severity, Threshold, Thresholds, threshold};

pub const RATIO: Threshold = threshold(
    "ratio",
    5.0,
    "x median",
    "a task longer than this multiple of its stage's typical task (the median of the tasks that read data)",
    "AQE's spark.sql.adaptive.skewJoin.skewedPartitionFactor (5)",
);

pub const DATA_RATIO: Threshold = threshold(
    "data_ratio",
    5.0,
    "x median",
    "the slow task's bytes or records above this multiple of the typical task's mean data skew",
    "AQE's skewedPartitionFactor, applied to bytes and records",
);

pub const MIN_TASKS: Threshold = threshold(
    "min_tasks",
    5.0,
    "tasks",
    "tasks with data (or successful tasks, when none read any) a stage needs before its median means anything",
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

/// A stage whose slowest long task passes the guards: its long tasks over the ratio, slowest
/// first.
pub struct SlowStage<'a> {
    pub stage: &'a StageAttempt,
    pub typical: Typical,
    pub slow: Vec<&'a LongTask>,
    /// How much sooner the stage would end with no task longer than the median: the bound of
    /// any fix of its long tasks.
    pub end_saving_ms: i64,
}

pub fn slow_stages<'a>(ctx: &Context<'a>, t: &Thresholds) -> Vec<SlowStage<'a>> {
    let mut out = Vec::new();
    for (stage, stats) in ctx.stage_stats() {
        let slowness = &stats.facts.slowness;
        let typical = slowness.typical;
        if (typical.tasks as f64) < t.get(&MIN_TASKS) || typical.duration_ms == 0 {
            continue;
        }
        let limit = t.get(&RATIO) * f64::from(typical.duration_ms);
        let slow: Vec<&LongTask> = slowness
            .long_tasks
            .iter()
            .filter(|l| f64::from(l.duration_ms) > limit)
            .collect();
        let Some(worst) = slow.first() else { continue };
        let worst_ms = f64::from(worst.duration_ms);
        let long_enough = worst_ms >= t.get(&MIN_TASK_S) * 1000.0
            || worst_ms >= t.get(&MIN_APP_SHARE) * ctx.app_ms as f64;
        if !long_enough || worst_ms < t.get(&FLOOR_S) * 1000.0 {
            continue;
        }
        out.push(SlowStage {
            stage,
            typical,
            slow,
            end_saving_ms: stage_end_saving_at_median(stats),
        });
    }
    out
}

/// Whether a long task is long for its data: its data explains the most of its time, and is
/// over `data_ratio` times the typical task's (at least 1 MiB or 1,000 records more).
pub fn long_for_its_data(task: &LongTask, s: &SlowStage, data_ratio: f64) -> bool {
    let over = |value: u64, typical: u64, floor: u64| {
        value >= floor && value as f64 > data_ratio * (typical.max(1) as f64)
    };
    task.attribution.cause() == Cause::Data
        && (over(task.bytes, s.typical.bytes, 1 << 20)
            || over(task.records, s.typical.records, 1000))
}

/// What SK002 says of a long task's cause, for its title and for grouping its advice.
pub fn straggler_kind(cause: Cause, cold: Cold) -> &'static str {
    match (cause, cold) {
        (Cause::ColdStart, Cold::NewExecutor) => "cold start of a new executor",
        (Cause::ColdStart, _) => "cold first wave",
        (Cause::Gc, _) => "GC",
        (Cause::ShuffleFetch, _) => "shuffle fetch",
        (Cause::Scheduling, _) => "scheduling",
        (Cause::Locality, _) => "locality",
        (Cause::Data, _) => "data",
        (Cause::Executor, _) => "slow executor",
        (Cause::TaskItself, _) => "the task itself",
    }
}

/// "4.2 s data, 1.1 s GC": the parts of a task's excess, largest first.
fn parts_text(task: &LongTask) -> String {
    task.attribution
        .ranked()
        .iter()
        .take(3)
        .map(|(cause, ms)| format!("{} {}", duration(*ms), cause.name().replace('_', " ")))
        .collect::<Vec<_>>()
        .join(", ")
}

/// "330 ms, the median of the 787 tasks that read data (1,213 read none)".
fn typical_text(typical: &Typical) -> String {
    if typical.empty > 0 {
        format!(
            "{}, the median of the {} tasks that read data ({} read none)",
            duration(typical.duration_ms.into()),
            typical.tasks,
            typical.empty
        )
    } else {
        duration(typical.duration_ms.into())
    }
}

/// A finding about `tasks`, long tasks of `s` (slowest first) of one cause: `data` for SK001's,
/// else SK002's. `estimate_ms` is the rule's bound of what its fix saves, before the replay.
pub fn finding_for(
    ctx: &Context,
    rule: &'static crate::Rule,
    s: &SlowStage,
    tasks: &[&LongTask],
    estimate_ms: i64,
) -> Finding {
    let worst = tasks[0];
    let executor = &ctx.app.executors[worst.executor as usize];
    let typical = &s.typical;
    let times = ratio(f64::from(worst.duration_ms), f64::from(typical.duration_ms));
    let attribution = &worst.attribution;
    let cause = attribution.cause();
    let kind = straggler_kind(cause, attribution.cold);
    let data = cause == Cause::Data;
    let head = format!(
        "{}: task {} ran {} ({:.0}x the stage's typical task, {})",
        stage_label(s.stage),
        worst.index,
        duration(worst.duration_ms.into()),
        times,
        typical_text(typical),
    );
    let title = if data {
        format!(
            "{head} on {} of data ({:.0}x the typical task's): more data than the others",
            bytes(worst.bytes as i64),
            attribution.data_ratio,
        )
    } else {
        format!(
            "{head} with the data of the others, on executor {} ({}): {}",
            executor.id,
            executor.host,
            cause_phrase(ctx, s, worst)
        )
    };
    let shape = ctx.shape(s.stage);
    let (label, recommendation) = if data {
        skew_advice(ctx, s.stage, shape)
    } else {
        (kind, straggler_advice(ctx, s, worst))
    };
    let cold = cause == Cause::ColdStart;
    // A cold start is paid once whatever is done (paid again only by a new executor): named, so
    // nobody takes it for a straggler, with nothing to save.
    let (severity, impact) = if cold {
        (Severity::Info, 0)
    } else {
        // On one core nothing runs beside the task, so its time is all the run's; elsewhere
        // the stage's end with every task at the median bounds it.
        let impact = if ctx.shapes.app.single_core() {
            estimate_ms.max(0)
        } else {
            estimate_ms.min(s.end_saving_ms).max(0)
        };
        (Severity::from_share(impact, ctx.app_ms), impact)
    };
    let causes: serde_json::Map<String, serde_json::Value> = attribution
        .ranked()
        .iter()
        .map(|(c, ms)| (c.name().to_string(), (*ms).into()))
        .collect();
    let mut finding = Finding::new(rule, severity, title, impact)
        .stages([s.stage.stage_id])
        .jobs(s.stage.job_ids.iter().copied())
        .executors(
            tasks
                .iter()
                .map(|t| ctx.app.executors[t.executor as usize].id.clone())
                .collect::<std::collections::BTreeSet<_>>(),
        )
        .evidence("stage_attempt", s.stage.attempt_id)
        .evidence("task_id", worst.task_id)
        .evidence("task_index", worst.index)
        .evidence("task_duration_ms", worst.duration_ms)
        .evidence("typical_task_ms", typical.duration_ms)
        .evidence("typical_of_tasks", typical.tasks)
        .evidence("tasks_without_data", typical.empty)
        .evidence("ratio", (times * 10.0).round() / 10.0)
        .evidence("task_bytes", worst.bytes)
        .evidence("typical_task_bytes", typical.bytes)
        .evidence("task_records", worst.records)
        .evidence("typical_task_records", typical.records)
        .evidence("data_ratio", (attribution.data_ratio * 10.0).round() / 10.0)
        .evidence("cause", cause.name())
        .evidence("excess_ms", attribution.excess_ms)
        .evidence("excess_by_cause_ms", serde_json::Value::Object(causes))
        .evidence("task_gc_ms", worst.gc_ms)
        .evidence("typical_task_gc_ms", typical.gc_ms)
        .evidence("task_fetch_wait_ms", worst.fetch_wait_ms)
        .evidence("task_deserialize_ms", worst.deserialize_ms)
        .evidence("locality", worst.locality.name())
        .evidence("typical_locality", typical.locality.name())
        .evidence("first_wave", worst.first_wave)
        .evidence("slow_tasks", tasks.len())
        .evidence("executor", executor.id.clone())
        .evidence("host", executor.host.clone())
        .evidence("stage_shape", label)
        .recommend(recommendation);
    if data {
        finding = finding.proposes(
            crate::Change::SpreadSkewedData {
                stages: vec![s.stage.stage_id],
            },
            "the skewed tasks' data spread over the cores, the work kept",
        );
    } else if !cold && !ctx.shapes.app.single_core() {
        finding = finding.proposes(
            crate::Change::SpeculateStragglers {
                stages: vec![s.stage.stage_id],
            },
            "each straggler ended by a speculative copy that runs a typical task",
        );
    }
    finding
}

/// What a straggler's excess went to, in words with its numbers.
fn cause_phrase(ctx: &Context, s: &SlowStage, task: &LongTask) -> String {
    let a = &task.attribution;
    let typical = &s.typical;
    match a.cause() {
        Cause::ColdStart if a.cold == Cold::NewExecutor => {
            let executor = &ctx.app.executors[task.executor as usize];
            let since = executor
                .added_ms
                .map(|added| format!(", {} after it registered", duration(task.launch_ms - added)))
                .unwrap_or_default();
            format!(
                "a cold start, one of the executor's first tasks{since} ({})",
                parts_text(task)
            )
        }
        Cause::ColdStart => format!(
            "a cold start, the stage's first wave on its executor (first wave {} against {} for the later tasks; {})",
            duration(typical.first_wave_ms.into()),
            duration(typical.later_ms.into()),
            parts_text(task)
        ),
        Cause::Gc => format!(
            "{} in GC against the typical task's {} ({})",
            duration(task.gc_ms.into()),
            duration(typical.gc_ms.into()),
            parts_text(task)
        ),
        Cause::ShuffleFetch => format!(
            "{} waiting for shuffle blocks against the typical task's {} ({})",
            duration(task.fetch_wait_ms.into()),
            duration(typical.fetch_wait_ms.into()),
            parts_text(task)
        ),
        Cause::Scheduling => format!(
            "{} of scheduler delay and {} deserialising against the typical task's {} and {} ({})",
            duration(task.scheduler_delay_ms.into()),
            duration(task.deserialize_ms.into()),
            duration(typical.scheduler_delay_ms.into()),
            duration(typical.deserialize_ms.into()),
            parts_text(task)
        ),
        Cause::Locality => format!(
            "it ran {} where the typical task ran {}, so it read its data from another host ({})",
            task.locality.name(),
            typical.locality.name(),
            parts_text(task)
        ),
        Cause::Data | Cause::Executor | Cause::TaskItself => format!(
            "not its data ({:.1}x), GC, shuffle fetches, a cold start or its executor ({}){}",
            a.data_ratio,
            parts_text(task),
            shared_stall(ctx, s, task)
        ),
    }
}

/// ", with 2 more launched within 2.0 s on 2 executors: …" when other long tasks of the stage,
/// long for no reason of their own either, ran at the same moment on other executors: a stall
/// they shared (the storage or the network) rather than each task's own work.
fn shared_stall(ctx: &Context, s: &SlowStage, task: &LongTask) -> String {
    let end = task.launch_ms + i64::from(task.duration_ms);
    let alike: Vec<&&LongTask> = s
        .slow
        .iter()
        .filter(|o| o.task_id != task.task_id && o.attribution.cause() == Cause::TaskItself)
        .filter(|o| o.launch_ms < end && o.launch_ms + i64::from(o.duration_ms) > task.launch_ms)
        .collect();
    let executors: std::collections::BTreeSet<u32> = alike
        .iter()
        .map(|o| o.executor)
        .chain([task.executor])
        .collect();
    if alike.is_empty() || executors.len() < 2 || ctx.shapes.app.executors < 2 {
        return String::new();
    }
    let spread = alike
        .iter()
        .map(|o| (o.launch_ms - task.launch_ms).abs())
        .max()
        .unwrap_or(0);
    format!(
        "; {} more like it ran at the same time (launched within {}) on {} executors: a stall they shared, most likely of what they read",
        alike.len(),
        duration(spread),
        executors.len()
    )
}

/// What to do about a partition with far more data, by what the stage is: a few big input
/// files, a hot join key (AQE can split it), a hot grouping key (AQE does not) or the program's
/// own repartition by a hot key, with a label of the branch for the evidence.
fn skew_advice(ctx: &Context, stage: &StageAttempt, shape: &StageShape) -> (&'static str, String) {
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
        ShuffleConsumer::Repartition => ("repartition", repartition_advice(ctx, stage, shape)),
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

/// A hot key put in one partition by the program's own `repartition(n, key)`, with no join or
/// aggregation after it: the repartition is the cause, so the fix is to it. A write after it
/// does not need a key's rows together; skew-join settings and salting do not apply.
fn repartition_advice(ctx: &Context, stage: &StageAttempt, shape: &StageShape) -> String {
    let call = shape
        .explicit_call()
        .map_or("repartition(key)".to_string(), |(_, n, _)| {
            format!("repartition({n}, key)")
        });
    let writes = stage.totals.output_bytes > 0 || stage.totals.output_records > 0;
    let next = if writes {
        "The stage writes its partitions out, and a write does not need each key's rows together"
    } else {
        "No join or aggregation follows it, so AQE's skew join and a two-phase aggregation do not apply"
    };
    // The REBALANCE hint exists from Spark 3.2, where AQE splits its skewed partitions
    // (spark.sql.adaptive.optimizeSkewsInRebalancePartitions.enabled, on by default).
    let rebalance = if super::common::aqe_enabled(ctx)
        && ctx.app.spark_version_number().is_none_or(|v| v >= (3, 2))
    {
        ", or ask for a rebalance, which AQE splits where a key is hot: df.hint(\"rebalance\", \"key\") (or /*+ REBALANCE(key) */ in SQL; spark.sql.adaptive.optimizeSkewsInRebalancePartitions.enabled, on by default)"
    } else {
        ""
    };
    format!(
        "A hot key, put in one partition by the program's own {call}. {next}: drop the repartition, or repartition by row count (df.repartition(n)) or by a key with many values (the key with a second column){rebalance}. Skew-join settings and salting do not apply: the skew is the repartition's own."
    )
}

/// What to do about a task slow on even data, by what its time went to.
fn straggler_advice(ctx: &Context, s: &SlowStage, task: &LongTask) -> String {
    let app = &ctx.shapes.app;
    let executor = &ctx.app.executors[task.executor as usize];
    let a = &task.attribution;
    let speculation = if app.single_core() {
        "The application had one core, so no speculative copy can run beside it and every other task waited behind this one: give it more cores (local[*], or more executor cores)."
    } else if app.executors <= 1 {
        "The application ran on one executor, so a speculative copy would run on the same host: with more than one executor, spark.speculation=true lets a copy run elsewhere."
    } else {
        "spark.speculation=true runs a copy elsewhere once a task takes 1.5x the stage's median (spark.speculation.multiplier)."
    };
    match a.cause() {
        Cause::ColdStart if a.cold == Cold::NewExecutor => format!(
            "Not a straggler: executor {} had just started, and an executor's first tasks load classes, warm up the JIT, start Python workers and read broadcasts. That is paid once per executor, so there is nothing to fix in this stage. Only if executors come and go all run long (dynamic allocation releasing and requesting them) is it paid again and again: a longer spark.dynamicAllocation.executorIdleTimeout keeps warm ones, and spark.scheduler.minRegisteredResourcesRatio=1 starts the first job once they are all up.",
            executor.id
        ),
        Cause::ColdStart => "Not a straggler: the stage's first task on each executor ran far longer than its later ones with the same data, which is the stage's own start: its generated code compiled, its broadcasts read, its Python workers started. Paid once per stage and executor; nothing to fix in the task.".to_string(),
        Cause::Gc => format!(
            "The task spent its extra time in GC: its executor's heap is short for what it holds (see GC001): give each task more heap (spark.executor.memory, or fewer spark.executor.cores per executor) or hold less per task (more partitions, no collect_list of whole groups). {speculation}"
        ),
        Cause::ShuffleFetch => format!(
            "The task waited for its shuffle blocks far longer than the others: the executors or hosts serving them (a busy disk, a lost executor, the network or the external shuffle service) were slow; check the map side's hosts around {}, and spark.shuffle.io.maxRetries / spark.shuffle.io.retryWait if fetches failed. {speculation}",
            stage_label(s.stage)
        ),
        Cause::Scheduling => "The task's time went to scheduler delay and deserialisation, not to its work: the driver was busy (many tasks at once, a long GC on the driver) or the task is big (a large closure or an object captured in it instead of a broadcast); give the driver more memory and cores, or broadcast what the task captures.".to_string(),
        Cause::Locality => format!(
            "The task ran {} while the stage's typical task ran {}: it read its data (an input split or a cached block) from another host, or rebuilt a cached block that was not on its executor. Cache with replication (MEMORY_AND_DISK_2) or on more executors, or raise spark.locality.wait so such tasks wait for a local core. {speculation}",
            task.locality.name(),
            s.typical.locality.name()
        ),
        Cause::Data | Cause::Executor | Cause::TaskItself => format!(
            "Not its data, GC, shuffle fetches, a cold start or its executor (its other tasks ran at the others' pace): the task's own work was slow, a slow record, an external call or a sleep in a UDF, or a stall of the storage it read at that moment. {speculation}"
        ),
    }
}
