//! Which memory ran out, from the words Spark, the JVM, Python, YARN, Kubernetes and RAPIDS
//! write when it does, and whether the data rather than the size was to blame.
//!
//! Each memory has its own limit and its own fix: raising `spark.executor.memory` does nothing
//! for a container killed over its overhead, a Python worker over `spark.executor.pyspark.memory`,
//! a driver that cannot hold a `collect()`, a GPU batch too big for the device or Databricks
//! Photon's native memory, and nothing lasting for a partition many times its siblings' size. The patterns are matched in the order
//! of [`PATTERNS`]: the most specific first, so that a `GpuRetryOOM` wrapped in a
//! `java.lang.OutOfMemoryError` is the GPU's, and the bare `OutOfMemoryError` comes last.

use sparkdiag_model::{Application, StageAttempt, TaskFailure, TaskOutcome};

use crate::memory_limits::{MemoryLimits, java_options_with_doubled, setting};
use crate::rules::common::{bytes, clip};

/// The memory that ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Region {
    /// The executor's JVM heap (`spark.executor.memory`).
    ExecutorHeap,
    /// The container or pod beyond the heap: overhead, direct buffers, native memory.
    ContainerOverhead,
    /// The Python workers beside the executor (`spark.executor.pyspark.memory`).
    PythonWorker,
    /// The driver: results collected to it, broadcasts it builds, its heap.
    Driver,
    /// A GPU's device memory (RAPIDS Accelerator).
    Gpu,
    /// Databricks Photon's native memory, off the JVM heap and sized by Databricks from the
    /// node type.
    Photon,
}

impl Region {
    pub fn name(self) -> &'static str {
        match self {
            Region::ExecutorHeap => "executor JVM heap",
            Region::ContainerOverhead => "executor container memory beyond the heap (overhead)",
            Region::PythonWorker => "Python worker memory",
            Region::Driver => "driver memory",
            Region::Gpu => "GPU memory",
            Region::Photon => "Photon engine's native memory (off the JVM heap)",
        }
    }
}

/// What a pattern means for the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Heap,
    /// Spark's memory manager could not grant execution memory (`SparkOutOfMemoryError`).
    ExecutionPool,
    /// One array or record over the JVM's limit: the data, whatever the heap.
    RecordTooLarge,
    ContainerKilled,
    DirectBuffers,
    NativeThreads,
    Metaspace,
    /// SIGTERM (143): memory only when the heap was not the limit; also preemption.
    Sigterm,
    /// A bare SIGKILL (137) with no word of memory: the OOM killer under YARN and Kubernetes,
    /// but anyone's `kill -9` elsewhere.
    Sigkill,
    PythonWorker,
    Arrow,
    DriverResults,
    DriverBroadcast,
    DriverHeap,
    Gpu,
    /// Photon (Databricks) could not reserve memory for an operator.
    Photon,
}

#[derive(Debug, Clone, Copy)]
enum Match {
    /// The text contains it.
    Contains(&'static str),
    /// A line starts with it (after spaces): Python's last traceback line, not a Java class
    /// whose name ends the same way.
    LineStart(&'static str),
}

pub struct Pattern {
    what: Match,
    pub region: Region,
    pub kind: Kind,
    /// Why these words mean this memory.
    pub why: &'static str,
}

const fn p(what: Match, region: Region, kind: Kind, why: &'static str) -> Pattern {
    Pattern {
        what,
        region,
        kind,
        why,
    }
}

use Kind as K;
use Match::{Contains as C, LineStart as L};
use Region as R;

/// Most specific first.
pub const PATTERNS: &[Pattern] = &[
    p(
        C("GpuSplitAndRetryOOM"),
        R::Gpu,
        K::Gpu,
        "RAPIDS split the batch and retried and the GPU still had no room: one batch or partition is too big for the device",
    ),
    p(
        C("GpuRetryOOM"),
        R::Gpu,
        K::Gpu,
        "RAPIDS' retry framework ran out of GPU memory for a batch",
    ),
    p(
        C("GpuOOM"),
        R::Gpu,
        K::Gpu,
        "RAPIDS could not allocate GPU memory",
    ),
    p(
        C("RMM failure"),
        R::Gpu,
        K::Gpu,
        "the RAPIDS Memory Manager could not allocate device memory",
    ),
    p(
        C("rmm::out_of_memory"),
        R::Gpu,
        K::Gpu,
        "the RAPIDS Memory Manager could not allocate device memory",
    ),
    p(
        C("CUDA error: out of memory"),
        R::Gpu,
        K::Gpu,
        "CUDA could not allocate device memory",
    ),
    p(
        C("cudaErrorMemoryAllocation"),
        R::Gpu,
        K::Gpu,
        "CUDA could not allocate device memory",
    ),
    // Databricks wraps Photon's failure in Spark's `SparkOutOfMemoryError`, whose own pattern
    // below means the JVM's execution pool: Photon's words come first. Photon's memory is
    // native, off the heap; the failure names what it tried to reserve and the task's memory
    // ("Photon failed to reserve 43.3 MiB for percentile-merge-expr memory pool, in task. Memory
    // usage: Total task memory (including non-Photon): 6.6 GiB", Databricks' knowledge base,
    // kb.databricks.com/en_US/dbsql/using-percentile-to-work-with-large-datasets-causing-memory-issues-or-oom-errors).
    p(
        C("Photon ran out of memory"),
        R::Photon,
        K::Photon,
        "Photon, Databricks' native engine, ran out of the off-heap memory Databricks gives it from the node type",
    ),
    p(
        C("Photon failed to reserve"),
        R::Photon,
        K::Photon,
        "Photon could not reserve native (off-heap) memory for an operator: a hash table, a sort or an aggregation buffer",
    ),
    p(
        C("spark.driver.maxResultSize"),
        R::Driver,
        K::DriverResults,
        "the tasks' serialized results for the driver passed spark.driver.maxResultSize: an action brings too much back to the driver",
    ),
    p(
        C("Not enough memory to build and broadcast the table"),
        R::Driver,
        K::DriverBroadcast,
        "the driver collects a broadcast side into its heap before sending it; this one did not fit",
    ),
    p(
        C("Cannot broadcast the table that is larger than"),
        R::Driver,
        K::DriverBroadcast,
        "a broadcast side passed Spark's 8 GB limit for a broadcast",
    ),
    p(
        C("ArrowMemoryError"),
        R::PythonWorker,
        K::Arrow,
        "Arrow could not allocate a batch for a pandas UDF",
    ),
    p(
        C("OutOfMemoryException: Failure allocating buffer"),
        R::PythonWorker,
        K::Arrow,
        "Arrow's Java allocator could not allocate a batch for a pandas UDF",
    ),
    p(
        L("MemoryError"),
        R::PythonWorker,
        K::PythonWorker,
        "Python raised MemoryError: the worker hit spark.executor.pyspark.memory or the memory left to it",
    ),
    p(
        C("Python worker exited unexpectedly"),
        R::PythonWorker,
        K::PythonWorker,
        "the Python worker died under its task; the usual cause is the kernel's OOM killer or the worker's memory limit",
    ),
    p(
        C("Direct buffer memory"),
        R::ContainerOverhead,
        K::DirectBuffers,
        "the JVM's direct (NIO) buffers, outside the heap, reached -XX:MaxDirectMemorySize: network and shuffle buffers",
    ),
    p(
        C("unable to create native thread"),
        R::ContainerOverhead,
        K::NativeThreads,
        "the process could not get memory or a process slot for a new thread, outside the heap",
    ),
    p(
        C("OutOfMemoryError: Metaspace"),
        R::ContainerOverhead,
        K::Metaspace,
        "class metadata outside the heap filled its limit",
    ),
    p(
        C("exceeding memory limits"),
        R::ContainerOverhead,
        K::ContainerKilled,
        "YARN killed the container: heap plus everything beside it passed the container size",
    ),
    p(
        C("OOMKilled"),
        R::ContainerOverhead,
        K::ContainerKilled,
        "Kubernetes' OOM killer stopped the pod at its memory limit",
    ),
    p(
        C("possible container OOM"),
        R::ContainerOverhead,
        K::ContainerKilled,
        "Spark on Kubernetes reports exit 137 as a possible container OOM: the pod passed its memory limit",
    ),
    p(
        C("Exit code is 137"),
        R::ContainerOverhead,
        K::ContainerKilled,
        "YARN's NodeManager killed the container with SIGKILL (137), which it does at the memory limit",
    ),
    p(
        C("exit code 137"),
        R::ContainerOverhead,
        K::Sigkill,
        "SIGKILL (137) is what the kernel's OOM killer and the cluster manager send at the memory limit",
    ),
    p(
        C("exited with code 137"),
        R::ContainerOverhead,
        K::Sigkill,
        "SIGKILL (137) is what the kernel's OOM killer and the cluster manager send at the memory limit",
    ),
    p(
        C("Exit status: 137"),
        R::ContainerOverhead,
        K::Sigkill,
        "SIGKILL (137) is what the kernel's OOM killer and the cluster manager send at the memory limit",
    ),
    p(
        C("Requested array size exceeds VM limit"),
        R::ExecutorHeap,
        K::RecordTooLarge,
        "one array (a record, a row buffer, a collected group) passed the JVM's 2 GB limit, whatever the heap",
    ),
    p(
        C("Java heap space"),
        R::ExecutorHeap,
        K::Heap,
        "the JVM could not allocate an object on a full heap",
    ),
    p(
        C("GC overhead limit exceeded"),
        R::ExecutorHeap,
        K::Heap,
        "the JVM spent over 98 % of its time collecting garbage and freed under 2 % of the heap",
    ),
    p(
        C("SparkOutOfMemoryError"),
        R::ExecutorHeap,
        K::ExecutionPool,
        "Spark's memory manager had no execution memory left to grant a task (sort, aggregation or join buffers)",
    ),
    p(
        C("Unable to acquire"),
        R::ExecutorHeap,
        K::ExecutionPool,
        "Spark's memory manager had no execution memory left to grant a task (sort, aggregation or join buffers)",
    ),
    p(
        C("exited with code 52"),
        R::ExecutorHeap,
        K::Heap,
        "52 is Spark's own exit code for an executor whose JVM threw OutOfMemoryError",
    ),
    p(
        C("exit code 52"),
        R::ExecutorHeap,
        K::Heap,
        "52 is Spark's own exit code for an executor whose JVM threw OutOfMemoryError",
    ),
    p(
        C("OutOfMemoryError"),
        R::ExecutorHeap,
        K::Heap,
        "the JVM threw OutOfMemoryError",
    ),
    p(
        C("Exit code is 143"),
        R::ContainerOverhead,
        K::Sigterm,
        "YARN stopped the container with SIGTERM (143): at its memory limit, or preempted",
    ),
    p(
        C("exit code 143"),
        R::ContainerOverhead,
        K::Sigterm,
        "SIGTERM (143): the cluster manager stopped the executor, at its memory limit or to preempt it",
    ),
    p(
        C("exited with code 143"),
        R::ContainerOverhead,
        K::Sigterm,
        "SIGTERM (143): the cluster manager stopped the executor, at its memory limit or to preempt it",
    ),
];

/// The first pattern (in [`PATTERNS`] order) any of `texts` matches, with the line it matched.
pub fn classify<'t>(
    texts: impl IntoIterator<Item = &'t str> + Clone,
) -> Option<(&'static Pattern, String)> {
    PATTERNS.iter().find_map(|pattern| {
        texts.clone().into_iter().find_map(|text| {
            let line = match pattern.what {
                Match::Contains(needle) => text.lines().find(|l| l.contains(needle)),
                Match::LineStart(start) => text.lines().find(|l| l.trim_start().starts_with(start)),
            }?;
            Some((pattern, clip(line.trim(), 300)))
        })
    })
}

/// Whether a pattern's words mean memory under this application's cluster manager: a bare exit
/// code 137 or 143 does under YARN and Kubernetes, whose memory limits send those signals, but
/// not under standalone or local mode, where it is most often someone's kill.
fn means_memory_here(app: &Application, kind: Kind) -> bool {
    !matches!(kind, Kind::Sigkill | Kind::Sigterm)
        || matches!(app.cluster_manager(), Some("yarn") | Some("kubernetes"))
}

/// A memory failure found in the log: where it ran out, the words that say so, and where they
/// were written.
#[derive(Debug, Clone)]
pub struct MemoryFailure {
    pub region: Region,
    pub kind: Kind,
    pub why: &'static str,
    /// The line of the log that names it.
    pub evidence: String,
    /// "task 19's failure", "executor 1's removal", "the stage's failure".
    pub source: String,
    /// The task whose failure it is, when it is a task's.
    pub task_id: Option<i64>,
    pub stage: Option<(i64, i64)>,
    /// The executor it happened on ("driver" in local mode).
    pub executor: Option<String>,
}

impl MemoryFailure {
    /// The JVM flag that caps the pool a kind names (metaspace, direct buffers).
    fn cap_flag(&self) -> &'static str {
        match self.kind {
            Kind::Metaspace => "-XX:MaxMetaspaceSize=",
            _ => "-XX:MaxDirectMemorySize=",
        }
    }

    /// What ran out, in words: the region, or the JVM pool a kind names within it.
    pub fn name(&self) -> &'static str {
        match self.kind {
            Kind::Metaspace => "executor JVM's metaspace (class metadata, outside the heap)",
            Kind::DirectBuffers => "executor JVM's direct buffers (outside the heap)",
            Kind::NativeThreads => "executor's native memory for threads (outside the heap)",
            _ => self.region.name(),
        }
    }
}

/// The texts of a task failure worth matching: its class, message and root cause, and, for an
/// `ExecutorLostFailure`, the executor's removal reason.
pub fn of_task_failure(app: &Application, f: &TaskFailure) -> Option<MemoryFailure> {
    let executor = &app.executors[f.executor as usize];
    let removal = (f.reason == "ExecutorLostFailure")
        .then_some(executor.removed_reason.as_deref())
        .flatten();
    // The class with its message, as Java prints an exception: the evidence line then reads
    // `java.lang.OutOfMemoryError: Java heap space`, not the bare message.
    let headline = match (&f.exception_class, &f.message) {
        (Some(class), Some(message)) if !message.starts_with(class.as_str()) => {
            Some(format!("{class}: {message}"))
        }
        (Some(class), None) => Some(class.clone()),
        _ => None,
    };
    let texts = [
        f.root_cause.as_deref(),
        headline.as_deref(),
        f.message.as_deref(),
        removal,
    ];
    let (pattern, evidence) = classify(texts.iter().flatten().copied())?;
    if !means_memory_here(app, pattern.kind) {
        return None;
    }
    // On the driver (local mode) every heap is the driver's.
    let region = if executor.id == "driver" && pattern.region == Region::ExecutorHeap {
        Region::Driver
    } else {
        pattern.region
    };
    Some(MemoryFailure {
        region,
        kind: if region == Region::Driver && pattern.kind == Kind::Heap {
            Kind::DriverHeap
        } else {
            pattern.kind
        },
        why: pattern.why,
        evidence,
        source: format!("task {}'s failure", f.task_id),
        task_id: Some(f.task_id),
        stage: Some((f.stage_id, f.stage_attempt_id)),
        executor: Some(executor.id.clone()),
    })
}

/// A memory failure named only by a message with no task behind it: a stage's or job's failure
/// reason (`spark.driver.maxResultSize`), or an executor's removal reason.
pub fn of_message(
    app: &Application,
    message: &str,
    source: String,
    executor: Option<String>,
) -> Option<MemoryFailure> {
    let (pattern, evidence) = classify([message])?;
    if !means_memory_here(app, pattern.kind) {
        return None;
    }
    Some(MemoryFailure {
        region: pattern.region,
        kind: pattern.kind,
        why: pattern.why,
        evidence,
        source,
        task_id: None,
        stage: None,
        executor,
    })
}

/// The data, not the memory size, made the failing task too big.
#[derive(Debug, Clone, PartialEq)]
pub enum DataCause {
    /// The failing task's partition was many times its stage's median.
    Skew {
        task_bytes: u64,
        median_bytes: u64,
        partitions: usize,
        /// What put the hot key's rows together, when the plan says.
        behind: Option<HotKeyOperator>,
    },
    /// Few partitions, each too big for the memory a task gets.
    FewPartitions {
        task_bytes: u64,
        partitions: i64,
        per_task_memory: u64,
        suggested: i64,
        /// The stage reads a shuffle whose partition count is `spark.sql.shuffle.partitions`.
        shuffle_setting: bool,
    },
}

/// A partition this many times its stage's median is skewed, as SK001 judges a task.
pub const SKEW_FACTOR: u64 = 5;
/// Under this a partition is too small for its size to explain running out of memory.
pub const MIN_CAUSE_BYTES: u64 = 32 << 20;

/// Whether the data of the failing task's partition explains the failure: its bytes (input plus
/// shuffle read, from any attempt of the same partition) against the stage's median partition
/// and against the memory a task gets.
pub fn data_cause(
    app: &Application,
    stage_id: i64,
    stage_attempt: i64,
    task_id: i64,
    limits: &MemoryLimits,
) -> Option<DataCause> {
    let attempts: Vec<&StageAttempt> = app
        .stages
        .iter()
        .filter(|s| s.stage_id == stage_id)
        .collect();
    let num_tasks = attempts.iter().map(|s| s.num_tasks).max().unwrap_or(0);
    // A task's index is its place in its own attempt's task set (a retry runs only the missing
    // partitions, numbered from 0 again), so partitions are compared within one attempt: the
    // failing task's, and the attempt that measured the most partitions for the median.
    let sizes_of = |tasks: &[sparkdiag_model::Task]| -> std::collections::BTreeMap<u32, u64> {
        let mut sizes: std::collections::BTreeMap<u32, u64> = Default::default();
        for t in tasks {
            if t.has_metrics && t.outcome != TaskOutcome::Killed {
                let entry = sizes.entry(t.index).or_default();
                *entry = (*entry).max(sparkdiag_facts::data_bytes(t));
            }
        }
        sizes
    };
    // Two looks at most (a folded stage is unfolded for each): the failing task's attempt, and
    // the attempt that ended the most tasks, for the median.
    let failing = attempts.iter().find(|s| s.attempt_id == stage_attempt)?;
    let widest = attempts
        .iter()
        .max_by_key(|s| (s.completed_tasks + s.failed_tasks, -s.attempt_id))?;
    let (task_bytes, own) = {
        let tasks = app.stage_tasks(failing);
        let own = sizes_of(&tasks);
        let bytes = tasks.iter().find(|t| t.task_id == task_id).and_then(|t| {
            if t.has_metrics {
                Some(sparkdiag_facts::data_bytes(t))
            } else {
                own.get(&t.index).copied()
            }
        });
        (bytes, own)
    };
    // The failing attempt's own partitions are enough when it measured a few; a retry that ran
    // only the lost partitions borrows the widest attempt's.
    let by_partition = if own.len() >= 4 || std::ptr::eq(*widest, *failing) {
        own
    } else {
        let wide = sizes_of(&app.stage_tasks(widest));
        if wide.len() >= own.len() { wide } else { own }
    };
    let task_bytes = task_bytes?;
    if task_bytes < MIN_CAUSE_BYTES {
        return None;
    }
    let mut sizes: Vec<u64> = by_partition.values().copied().collect();
    sizes.sort_unstable();
    let median = sizes[sizes.len() / 2];
    if sizes.len() >= 4 && task_bytes >= SKEW_FACTOR * median.max(1) {
        return Some(DataCause::Skew {
            task_bytes,
            median_bytes: median,
            partitions: sizes.len(),
            behind: None,
        });
    }
    let per_task = limits.pool_per_task_bytes().max(1);
    if task_bytes * 2 < per_task {
        return None;
    }
    // Partitions of half a task's pool, whole executors' worth.
    let target = (per_task / 2).clamp(1 << 20, 128 << 20);
    let total = median.max(1) * num_tasks.max(1) as u64;
    let cores = limits.executor_cores.max(1) as u64;
    let suggested = total.div_ceil(target).div_ceil(cores) * cores;
    let reads_shuffle = attempts.iter().any(|s| s.totals.shuffle_read_bytes() > 0);
    let shuffle_setting = reads_shuffle
        && app.uses_sql()
        && app
            .spark_properties
            .get("spark.sql.shuffle.partitions")
            .and_then(|v| v.trim().parse::<i64>().ok())
            .unwrap_or(200)
            == num_tasks;
    Some(DataCause::FewPartitions {
        task_bytes,
        partitions: num_tasks,
        per_task_memory: per_task,
        suggested: (suggested as i64).max(num_tasks * 2),
        shuffle_setting,
    })
}

/// The operator that put a hot key's rows in one task: the aggregation, join or repartition
/// behind the stage that ran out of memory.
#[derive(Debug, Clone, PartialEq)]
pub struct HotKeyOperator {
    pub consumer: crate::stage_shape::ShuffleConsumer,
    /// "collect_list(v) grouped by k", "the join on customer_id", "repartition(64, k)".
    pub text: String,
    /// An aggregate that keeps every value of a group (collect_list, collect_set, percentile,
    /// median, mode): a hot group's values all sit in one task's memory.
    pub keeps_values: bool,
}

/// Aggregate functions that keep every value of a group until it ends.
const KEEPS_VALUES: &[&str] = &[
    "collect_list",
    "collect_set",
    "percentile(",
    "percentile_cont",
    "percentile_disc",
    "median(",
    "mode(",
    "array_agg",
    "listagg",
    "string_agg",
];

/// An expression as the program wrote it: Spark's `#12L` ids dropped, a function's extra
/// arguments too (`collect_list(v#2, 0, 0, true)` is `collect_list(v)`).
fn as_written(expression: &str) -> String {
    let mut out = String::new();
    let mut chars = expression.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '#' {
            while chars
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || *c == 'L')
            {
                chars.next();
            }
            continue;
        }
        out.push(c);
    }
    match (out.find('('), out.find(',')) {
        (Some(open), Some(comma)) if comma > open && out.ends_with(')') => {
            format!("{})", &out[..comma])
        }
        _ => out,
    }
}

/// What put the rows of stage `stage_id`'s hot partition together, from the plan of the SQL
/// execution that ran the stage and the stage's shape.
pub fn hot_key_operator(ctx: &crate::Context, stage: &StageAttempt) -> Option<HotKeyOperator> {
    use crate::stage_shape::ShuffleConsumer;
    use sparkdiag_plan::Operator as O;
    let consumer = ctx.shape(stage).behind_shuffle;
    let input = ctx.plan_of_stage(stage.stage_id)?;
    let plan = &input.plan;
    let nodes: Vec<&sparkdiag_plan::PlanNode> = plan
        .running_nodes()
        .into_iter()
        .filter_map(|i| plan.nodes.get(i))
        .collect();
    let list = |v: &Option<Vec<String>>| -> String {
        v.iter()
            .flatten()
            .map(|e| as_written(e))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let aggregate = || {
        nodes.iter().find(|n| {
            matches!(
                n.operator,
                O::HashAggregate | O::ObjectHashAggregate | O::SortAggregate
            ) && n
                .details
                .grouping_keys
                .as_ref()
                .is_some_and(|k| !k.is_empty())
                && n.details
                    .functions
                    .as_ref()
                    .is_some_and(|f| !f.is_empty() && f.iter().all(|f| !f.starts_with("partial_")))
        })
    };
    let join = || {
        nodes
            .iter()
            .find(|n| matches!(n.operator, O::SortMergeJoin | O::ShuffledHashJoin))
    };
    let repartition = || {
        nodes.iter().find(|n| {
            n.operator == O::Exchange
                && matches!(
                    n.details.shuffle_origin,
                    Some(
                        sparkdiag_plan::ShuffleOrigin::RepartitionByCol
                            | sparkdiag_plan::ShuffleOrigin::RepartitionByNum
                            | sparkdiag_plan::ShuffleOrigin::Repartition
                            | sparkdiag_plan::ShuffleOrigin::RepartitionWithNum
                    )
                )
                && n.details
                    .partitioning
                    .as_ref()
                    .is_some_and(|p| !p.expressions.is_empty())
        })
    };
    let repartition_text = |n: &sparkdiag_plan::PlanNode| {
        let p = n.details.partitioning.as_ref()?;
        let keys: Vec<String> = p.expressions.iter().map(|e| as_written(e)).collect();
        Some(match p.num_partitions {
            Some(count) => format!("repartition({count}, {})", keys.join(", ")),
            None => format!("repartition({})", keys.join(", ")),
        })
    };
    let after_repartition = || {
        repartition()
            .and_then(|n| repartition_text(n))
            .map(|r| format!(" after {r}"))
            .unwrap_or_default()
    };
    let of_aggregate = |n: &sparkdiag_plan::PlanNode| {
        let functions = list(&n.details.functions);
        HotKeyOperator {
            consumer: ShuffleConsumer::Aggregation,
            keeps_values: KEEPS_VALUES.iter().any(|k| functions.contains(k)),
            text: format!(
                "{functions} grouped by {}{}",
                list(&n.details.grouping_keys),
                after_repartition()
            ),
        }
    };
    let of_join = |n: &sparkdiag_plan::PlanNode| HotKeyOperator {
        consumer: ShuffleConsumer::Join,
        keeps_values: false,
        text: format!("the join on {}", list(&n.details.left_keys)),
    };
    match consumer {
        ShuffleConsumer::Aggregation => aggregate().map(|n| of_aggregate(n)),
        ShuffleConsumer::Join => join().map(|n| of_join(n)),
        ShuffleConsumer::Repartition => repartition().and_then(|n| {
            Some(HotKeyOperator {
                consumer: ShuffleConsumer::Repartition,
                keeps_values: false,
                text: repartition_text(n)?,
            })
        }),
        ShuffleConsumer::Unknown => aggregate()
            .map(|n| of_aggregate(n))
            .or_else(|| join().map(|n| of_join(n))),
    }
}

/// An aggregate of stage `stage`'s plan that keeps every value of a group (an exact
/// `percentile`/`median`, `collect_list`, `collect_set`, ...), as the program wrote it:
/// "percentile(v, 0.5)" or "collect_list(s) grouped by k". Its buffer grows with the group,
/// so no partition count bounds it: a group (or, without grouping, the whole input) must fit in
/// one task's memory.
pub fn value_keeping_aggregate(ctx: &crate::Context, stage: &StageAttempt) -> Option<String> {
    use sparkdiag_plan::Operator as O;
    let input = ctx.plan_of_stage(stage.stage_id)?;
    let plan = &input.plan;
    plan.running_nodes()
        .into_iter()
        .filter_map(|i| plan.nodes.get(i))
        .filter(|n| {
            matches!(
                n.operator,
                O::HashAggregate | O::ObjectHashAggregate | O::SortAggregate
            )
        })
        .find_map(|n| {
            let function = n
                .details
                .functions
                .iter()
                .flatten()
                .map(|f| as_written(f.strip_prefix("partial_").unwrap_or(f)))
                .find(|f| KEEPS_VALUES.iter().any(|k| f.contains(k)))?;
            let keys: Vec<String> = n
                .details
                .grouping_keys
                .iter()
                .flatten()
                .map(|k| as_written(k))
                .collect();
            Some(if keys.is_empty() {
                function
            } else {
                format!("{function} grouped by {}", keys.join(", "))
            })
        })
}

/// The fix for an aggregate that keeps every value of a group, named by
/// [`value_keeping_aggregate`].
pub fn value_keeping_advice(aggregate: &str) -> String {
    let exact = ["percentile", "median", "mode("]
        .iter()
        .any(|f| aggregate.contains(f));
    let fix = if exact {
        "use the approximate function, which keeps a sketch of fixed size whatever the data: percentile_approx(col, 0.5) (approx_percentile; its accuracy argument, 10000 by default, trades memory for precision) instead of an exact percentile or median"
    } else {
        "keep less per group: a count, sum, max_by or size instead of the whole list, a slice or sample of it (slice(collect_list(...), 1, n)), or write the rows out grouped (partitionBy) instead of collecting them into one value"
    };
    format!(
        "Caused by the aggregate, not the memory size: {aggregate} keeps every value {} in one task's memory, so neither more partitions nor a few more gigabytes bound it as the data grows. Fix the aggregate first: {fix}.",
        if aggregate.contains(" grouped by ") {
            "of a group"
        } else {
            "it aggregates (no grouping: the whole input)"
        }
    )
}

impl DataCause {
    /// The same cause, with the operator behind the hot partition when the plan names it.
    pub fn with_operator(mut self, ctx: &crate::Context, stage: &StageAttempt) -> DataCause {
        if let DataCause::Skew { behind, .. } = &mut self {
            *behind = hot_key_operator(ctx, stage);
        }
        self
    }

    /// One clause for a title: "its partition held 384 MiB, 75x the median".
    pub fn headline(&self) -> String {
        match self {
            DataCause::Skew {
                task_bytes,
                median_bytes,
                behind,
                ..
            } => format!(
                "caused by a hot key: its partition held {}, {:.0}x the stage's median {}{}",
                bytes(*task_bytes as i64),
                *task_bytes as f64 / (*median_bytes).max(1) as f64,
                bytes(*median_bytes as i64),
                behind
                    .as_ref()
                    .map(|b| format!(", in {}", b.text))
                    .unwrap_or_default()
            ),
            DataCause::FewPartitions {
                task_bytes,
                partitions,
                ..
            } => format!(
                "caused by too few partitions: {partitions} of about {} each",
                bytes(*task_bytes as i64)
            ),
        }
    }

    pub fn json(&self) -> serde_json::Value {
        match self {
            DataCause::Skew {
                task_bytes,
                median_bytes,
                partitions,
                behind,
            } => serde_json::json!({"kind": "skew", "task_bytes": task_bytes,
                "median_bytes": median_bytes, "partitions": partitions,
                "operator": behind.as_ref().map(|b| b.text.clone()),
                "keeps_every_value": behind.as_ref().map(|b| b.keeps_values)}),
            DataCause::FewPartitions {
                task_bytes,
                partitions,
                per_task_memory,
                suggested,
                shuffle_setting,
            } => serde_json::json!({"kind": "few_partitions", "task_bytes": task_bytes,
                "partitions": partitions, "pool_per_task_bytes": per_task_memory,
                "suggested_partitions": suggested, "set_by_shuffle_partitions": shuffle_setting}),
        }
    }

    /// The data's part of the finding: what was wrong with the partition and its fix, first.
    pub fn advice(&self, ctx: &crate::Context) -> String {
        match self {
            DataCause::Skew {
                task_bytes,
                median_bytes,
                partitions,
                behind,
            } => {
                use crate::stage_shape::ShuffleConsumer;
                let fix = match behind {
                    Some(b) if b.keeps_values => format!(
                        "{} keeps every value of a group, so the hot key's values all sit in one task's memory: keep less per group (a count, sum or size instead of the list, a slice or a sample of it, approx_percentile instead of an exact one), or salt the key and collect in two steps",
                        b.text
                    ),
                    Some(b) if b.consumer == ShuffleConsumer::Join => format!(
                        "{} puts the hot key's rows in one task: let AQE split it (spark.sql.adaptive.skewJoin.enabled=true), broadcast the small side, or salt the key",
                        b.text
                    ),
                    Some(b) if b.consumer == ShuffleConsumer::Repartition => format!(
                        "the program's own {} puts the hot key's rows in one partition: drop it, repartition by a key with many values, or use a rebalance (df.hint(\"rebalance\", \"key\"))",
                        b.text
                    ),
                    Some(b) => format!(
                        "{} holds the hot key's rows in one task: salt the key (add a random suffix, aggregate in two steps)",
                        b.text
                    ),
                    None => "salt the hot key (add a random suffix, aggregate in two steps), or for a join let AQE split it (spark.sql.adaptive.skewJoin.enabled=true)".to_string(),
                };
                format!(
                    "Caused by a hot key, not the memory size: the failing task's partition held {} against a median of {} over {partitions} partitions ({:.0}x), so one key (or a few) carries most of the rows. Fix the data first: {fix}; filter the hot key out or handle it apart (nulls and default values are the usual hot keys). More memory only moves the limit until the key grows.",
                    bytes(*task_bytes as i64),
                    bytes(*median_bytes as i64),
                    *task_bytes as f64 / (*median_bytes).max(1) as f64
                )
            }
            DataCause::FewPartitions {
                task_bytes,
                partitions,
                per_task_memory,
                suggested,
                shuffle_setting,
            } => {
                let how = if *shuffle_setting {
                    crate::rules::common::partitions_advice(ctx, *suggested)
                } else {
                    format!(
                        "a larger count in the code's coalesce/repartition that made them ({}), or a smaller spark.sql.files.maxPartitionBytes for a file scan",
                        suggested
                    )
                };
                format!(
                    "Caused by the partitioning, not the memory size: only {partitions} partitions of about {} each, where a task gets about {} of the heap's unified pool. Use more, smaller partitions first: {how}.",
                    bytes(*task_bytes as i64),
                    bytes(*per_task_memory as i64),
                )
            }
        }
    }

    /// The `--conf` settings the data fix needs, when a setting can do it.
    pub fn settings(&self) -> Vec<(String, String)> {
        match self {
            DataCause::FewPartitions {
                suggested,
                shuffle_setting: true,
                ..
            } => vec![("spark.sql.shuffle.partitions".into(), suggested.to_string())],
            _ => Vec::new(),
        }
    }
}

impl MemoryFailure {
    /// The settings the memory fix changes, as `--conf` pairs (none where the fix is code).
    pub fn settings(&self, limits: &MemoryLimits) -> Vec<(String, String)> {
        let pair = |k: &str, v: u64| vec![(k.to_string(), setting(v))];
        match self.kind {
            Kind::Heap | Kind::ExecutionPool => {
                pair("spark.executor.memory", limits.executor_memory_bytes * 2)
            }
            // A JVM cap that was hit: the options with it doubled, the rest as they were.
            Kind::Metaspace | Kind::DirectBuffers
                if java_options_with_doubled(limits, self.cap_flag()).is_some() =>
            {
                vec![(
                    "spark.executor.extraJavaOptions".to_string(),
                    java_options_with_doubled(limits, self.cap_flag()).unwrap_or_default(),
                )]
            }
            Kind::ContainerKilled
            | Kind::Sigkill
            | Kind::Sigterm
            | Kind::DirectBuffers
            | Kind::NativeThreads
            | Kind::Metaspace => pair(
                "spark.executor.memoryOverhead",
                limits.executor_overhead_bytes * 2,
            ),
            Kind::PythonWorker | Kind::Arrow => match limits.pyspark_memory_bytes {
                Some(b) => pair("spark.executor.pyspark.memory", b * 2),
                None => pair(
                    "spark.executor.memoryOverhead",
                    limits.executor_overhead_bytes * 2,
                ),
            },
            Kind::DriverHeap => pair("spark.driver.memory", limits.driver_memory_bytes * 2),
            Kind::Gpu => vec![("spark.rapids.sql.concurrentGpuTasks".into(), "1".into())],
            // Two cores a task: half as many tasks share the node's Photon memory.
            Kind::Photon => vec![("spark.task.cpus".into(), "2".into())],
            Kind::RecordTooLarge | Kind::DriverResults | Kind::DriverBroadcast => Vec::new(),
        }
    }

    /// The fix that fits the memory that ran out, with this application's settings in it.
    pub fn advice(&self, ctx: &crate::Context, limits: &MemoryLimits) -> String {
        let prop = |k: &str| {
            ctx.app
                .spark_properties
                .get(k)
                .map(|v| v.trim().to_string())
        };
        let heap = setting(limits.executor_memory_bytes);
        let doubled_heap = setting(limits.executor_memory_bytes * 2);
        let overhead = setting(limits.executor_overhead_bytes);
        let doubled_overhead = setting(limits.executor_overhead_bytes * 2);
        let platform = container_words(ctx);
        match self.kind {
            Kind::Heap => format!(
                "The executor heap ran out: give each task more heap, spark.executor.memory={doubled_heap} (now {heap}), or fewer concurrent tasks per heap (spark.executor.cores, now {}); and make each task hold less: more partitions, no collect_list/collect_set of whole groups, no huge rows.",
                limits.executor_cores
            ),
            Kind::ExecutionPool => format!(
                "Spark's execution memory ran out for a task (sort, aggregation or join buffers): more partitions so each task needs less, or more heap per task (spark.executor.memory={doubled_heap}, now {heap}, or fewer spark.executor.cores, now {}).",
                limits.executor_cores
            ),
            Kind::RecordTooLarge => "One array passed the JVM's 2 GB limit, which no heap size lifts: find the record, group or collected list that grows without bound (collect_list of a hot key, a huge string or binary column) and split it.".into(),
            Kind::ContainerKilled => format!(
                "The heap is not what filled: the {platform} was killed at its limit (heap {heap} + overhead {overhead}{}). Raise spark.executor.memoryOverhead to {doubled_overhead} (now {overhead}{}) rather than the heap; the usual users of it are Python workers, Arrow buffers, native libraries and netty's direct buffers.",
                limits
                    .pyspark_memory_bytes
                    .map(|b| format!(" + pyspark {}", setting(b)))
                    .unwrap_or_default(),
                if limits.executor_overhead_set {
                    ""
                } else {
                    ", Spark's default of max(384m, 10 % of the heap)"
                }
            ),
            Kind::Sigkill => format!(
                "The executor was SIGKILLed (137), which under YARN and Kubernetes is the container's memory limit: the heap is not what filled. Raise spark.executor.memoryOverhead to {doubled_overhead} (now {overhead}); the usual users of it are Python workers, Arrow buffers, native libraries and netty's direct buffers."
            ),
            Kind::Sigterm => format!(
                "The executor got SIGTERM (143) from the cluster manager: on YARN and Kubernetes that is the container's memory limit or a preemption. If the node was not preempted, raise spark.executor.memoryOverhead to {doubled_overhead} (now {overhead}); the heap was not what filled."
            ),
            Kind::DirectBuffers => match limits.jvm_flag("-XX:MaxDirectMemorySize=") {
                // The cap set is what filled, whatever the container has.
                Some(cap) => format!(
                    "The JVM's direct buffers (off-heap, used by shuffle and network I/O) hit the cap spark.executor.extraJavaOptions sets (-XX:MaxDirectMemorySize={cap}; without it the cap is the heap's size): raise or remove it, within spark.executor.memoryOverhead (now {overhead}); fewer concurrent fetches (spark.reducer.maxSizeInFlight=24m, spark.reducer.maxReqsInFlight) need fewer."
                ),
                None => format!(
                    "The JVM's direct buffers (off-heap, used by shuffle and network I/O) ran out: raise spark.executor.memoryOverhead to {doubled_overhead} (now {overhead}) and set -XX:MaxDirectMemorySize in spark.executor.extraJavaOptions within it; fewer concurrent fetches (spark.reducer.maxSizeInFlight=24m, spark.reducer.maxReqsInFlight) need fewer."
                ),
            },
            // The JVM has no metaspace limit unless one is set: a Metaspace error is that flag.
            Kind::Metaspace => match limits.jvm_flag("-XX:MaxMetaspaceSize=") {
                Some(cap) => format!(
                    "The JVM's class-metadata space hit the cap spark.executor.extraJavaOptions sets (-XX:MaxMetaspaceSize={cap}); the heap was not the limit and neither heap nor overhead lifts it. Raise the cap or remove it (metaspace has no limit by default) and give spark.executor.memoryOverhead (now {overhead}) room for what it takes; many generated classes (wide queries, many distinct UDFs) fill it, and so does a class loader kept alive per task."
                ),
                None => format!(
                    "The JVM's class-metadata space (metaspace) ran out outside the heap: raise -XX:MaxMetaspaceSize if a launcher sets it, and spark.executor.memoryOverhead to {doubled_overhead} (now {overhead}); the heap was not the limit."
                ),
            },
            Kind::NativeThreads => format!(
                "Memory outside the heap ran out: raise spark.executor.memoryOverhead to {doubled_overhead} (now {overhead}); the heap was not the limit."
            ),
            Kind::PythonWorker => {
                let pyspark = limits
                    .pyspark_memory_bytes
                    .map(|b| {
                        format!(
                            "raise spark.executor.pyspark.memory to {} (now {})",
                            setting(b * 2),
                            setting(b)
                        )
                    })
                    .unwrap_or_else(|| {
                        format!("set spark.executor.pyspark.memory (unset: the workers share the overhead, {overhead}) or raise spark.executor.memoryOverhead to {doubled_overhead}")
                    });
                format!(
                    "A Python worker ran out of memory, outside the JVM heap (raising spark.executor.memory does not help): keep less per partition in Python (iterate instead of building lists in mapPartitions, no toPandas of whole partitions), or {pyspark}; for pandas UDFs lower spark.sql.execution.arrow.maxRecordsPerBatch (now {}).",
                    prop("spark.sql.execution.arrow.maxRecordsPerBatch")
                        .unwrap_or_else(|| "10000".into())
                )
            }
            Kind::Arrow => format!(
                "An Arrow batch for a pandas UDF did not fit: lower spark.sql.execution.arrow.maxRecordsPerBatch (now {}) so batches are smaller, and give the Python side room (spark.executor.pyspark.memory or spark.executor.memoryOverhead, now {overhead}).",
                prop("spark.sql.execution.arrow.maxRecordsPerBatch").unwrap_or_else(|| "10000".into())
            ),
            Kind::DriverResults => format!(
                "The action brought more to the driver than spark.driver.maxResultSize (now {}) allows: write the result out (df.write...) or bring back less (an aggregate, limit/take, toLocalIterator); raise spark.driver.maxResultSize only together with spark.driver.memory (now {}), since the driver holds all of it.",
                setting(limits.driver_max_result_bytes),
                setting(limits.driver_memory_bytes)
            ),
            Kind::DriverBroadcast => format!(
                "The broadcast side of a join did not fit in the driver: lower spark.sql.autoBroadcastJoinThreshold (now {}) or drop the broadcast hint so Spark uses a sort-merge join, or raise spark.driver.memory (now {}).",
                prop("spark.sql.autoBroadcastJoinThreshold").unwrap_or_else(|| "10MB".into()),
                setting(limits.driver_memory_bytes)
            ),
            Kind::DriverHeap => format!(
                "The driver's heap ran out{}: raise spark.driver.memory (now {}), and keep results off the driver (no collect/toPandas of large data).",
                if ctx.app.executors.iter().all(|e| e.id == "driver") {
                    " (local mode: the driver's heap also runs the tasks)"
                } else {
                    ""
                },
                setting(limits.driver_memory_bytes)
            ),
            Kind::Photon => format!(
                "Photon's own memory ran out, not the JVM heap: Photon works off-heap in memory Databricks sizes from the node type{}, so spark.executor.memory is the wrong first change. Give each task more of it: a node type with more memory per core (a memory-optimized family), or fewer tasks at once on each executor (spark.task.cpus=2 runs half as many of its {} cores' tasks side by side); and make each task hold less (more, smaller partitions; no exact percentile or collect_list over a whole group, whose buffers grow with it). If only this query fails, run it on compute without Photon (clear \"Use Photon Acceleration\").",
                limits
                    .off_heap_bytes
                    .map(|b| format!(" (spark.memory.offHeap.size, now {})", setting(b)))
                    .unwrap_or_default(),
                limits.executor_cores
            ),
            Kind::Gpu => {
                let concurrent = prop("spark.rapids.sql.concurrentGpuTasks").unwrap_or_else(|| "2".into());
                let batch = prop("spark.rapids.sql.batchSizeBytes").unwrap_or_else(|| "1g".into());
                format!(
                    "The GPU ran out of device memory, not the JVM: fewer tasks sharing a GPU (spark.rapids.sql.concurrentGpuTasks=1, now {concurrent}), smaller batches (spark.rapids.sql.batchSizeBytes, now {batch}; spark.rapids.sql.reader.batchSizeBytes for scans), and more, smaller partitions; check spark.rapids.memory.gpu.allocFraction leaves the device's memory to RAPIDS."
                )
            }
        }
    }
}

/// What the cluster manager holds an executor to, in its own words.
fn container_words(ctx: &crate::Context) -> &'static str {
    match (ctx.app.platform(), ctx.app.cluster_manager()) {
        (sparkdiag_model::Platform::Databricks, _) => "executor (its share of the node's memory)",
        (_, Some("kubernetes")) => "executor pod",
        (_, Some("yarn")) => "YARN container",
        _ => "executor process",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(text: &str) -> Option<(Region, Kind)> {
        classify([text]).map(|(p, _)| (p.region, p.kind))
    }

    /// The words as Spark, YARN, Kubernetes, Python and RAPIDS write them.
    #[test]
    fn names_the_region_from_real_messages() {
        use Kind as K;
        use Region as R;
        let cases: &[(&str, Option<(Region, Kind)>)] = &[
            (
                "java.lang.OutOfMemoryError: Java heap space",
                Some((R::ExecutorHeap, K::Heap)),
            ),
            (
                "java.lang.OutOfMemoryError: GC overhead limit exceeded",
                Some((R::ExecutorHeap, K::Heap)),
            ),
            (
                "Command exited with code 52",
                Some((R::ExecutorHeap, K::Heap)),
            ),
            (
                "org.apache.spark.memory.SparkOutOfMemoryError: [UNABLE_TO_ACQUIRE_MEMORY] Unable to acquire 65536 bytes of memory, got 0.",
                Some((R::ExecutorHeap, K::ExecutionPool)),
            ),
            (
                "java.lang.OutOfMemoryError: Requested array size exceeds VM limit",
                Some((R::ExecutorHeap, K::RecordTooLarge)),
            ),
            (
                "Container killed by YARN for exceeding memory limits. 5.5 GB of 5.5 GB physical memory used. Consider boosting spark.yarn.executor.memoryOverhead.",
                Some((R::ContainerOverhead, K::ContainerKilled)),
            ),
            (
                "Container marked as failed: container_1 on host: node1. Exit status: 137. Diagnostics: [2024-01-01]Container killed on request. Exit code is 137",
                Some((R::ContainerOverhead, K::ContainerKilled)),
            ),
            (
                "The executor with id 3 exited with exit code 137(SIGKILL, possible container OOM).",
                Some((R::ContainerOverhead, K::ContainerKilled)),
            ),
            (
                "Pod terminated: reason OOMKilled",
                Some((R::ContainerOverhead, K::ContainerKilled)),
            ),
            (
                "Container killed on request. Exit code is 143",
                Some((R::ContainerOverhead, K::Sigterm)),
            ),
            (
                "java.lang.OutOfMemoryError: Direct buffer memory",
                Some((R::ContainerOverhead, K::DirectBuffers)),
            ),
            (
                "java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory",
                Some((R::ContainerOverhead, K::NativeThreads)),
            ),
            (
                "org.apache.spark.api.python.PythonException: Traceback (most recent call last):\n  File \"x.py\", line 3, in f\nMemoryError",
                Some((R::PythonWorker, K::PythonWorker)),
            ),
            (
                "org.apache.spark.SparkException: Python worker exited unexpectedly (crashed)",
                Some((R::PythonWorker, K::PythonWorker)),
            ),
            (
                "pyarrow.lib.ArrowMemoryError: malloc of size 1048576 failed",
                Some((R::PythonWorker, K::Arrow)),
            ),
            (
                "Job aborted due to stage failure: Total size of serialized results of 3 tasks (5.2 MiB) is bigger than spark.driver.maxResultSize (4.0 MiB)",
                Some((R::Driver, K::DriverResults)),
            ),
            (
                "org.apache.spark.sql.errors.QueryExecutionErrors: Not enough memory to build and broadcast the table to all worker nodes.",
                Some((R::Driver, K::DriverBroadcast)),
            ),
            (
                "com.nvidia.spark.rapids.jni.GpuSplitAndRetryOOM: GPU OutOfMemory: could not split inputs and retry",
                Some((R::Gpu, K::Gpu)),
            ),
            (
                "com.nvidia.spark.rapids.jni.GpuRetryOOM: GPU OutOfMemory",
                Some((R::Gpu, K::Gpu)),
            ),
            (
                "java.lang.OutOfMemoryError: Could not allocate native memory: std::bad_alloc: out_of_memory: RMM failure at:arena.hpp:382",
                Some((R::Gpu, K::Gpu)),
            ),
            // Databricks Photon, wrapped in Spark's SparkOutOfMemoryError: the words Databricks
            // writes (its knowledge base's percentile article quotes the second one, with the
            // memory usage lines after it).
            (
                "org.apache.spark.memory.SparkOutOfMemoryError: Photon ran out of memory while executing this query.\nPhoton failed to reserve 349.4 MiB for hash table var-len key data.",
                Some((R::Photon, K::Photon)),
            ),
            (
                "Photon failed to reserve 43.3 MiB for percentile-merge-expr memory pool, in task.\nMemory usage:\nTotal task memory (including non-Photon): 6.6 GiB\ntask: allocated 6.6 GiB, tracked 6.6 GiB, untracked allocated 3.2 GiB, peak 6.6 GiB",
                Some((R::Photon, K::Photon)),
            ),
            ("ValueError: bad row 1234", None),
            ("java.io.IOException: Could not read footer for file", None),
        ];
        for (text, want) in cases {
            assert_eq!(region(text), *want, "{text}");
        }
    }

    /// Photon's memory is off the heap and sized by the node type: its advice is a node type,
    /// fewer tasks at once, or no Photon for the query, and never a bigger heap.
    #[test]
    fn photons_memory_is_not_the_heap() {
        let app = Application {
            spark_properties: [
                (
                    "spark.memory.offHeap.enabled".to_string(),
                    "true".to_string(),
                ),
                ("spark.memory.offHeap.size".to_string(), "10g".to_string()),
                ("spark.executor.cores".to_string(), "8".to_string()),
            ]
            .into(),
            ..Default::default()
        };
        let m = of_message(
            &app,
            "org.apache.spark.memory.SparkOutOfMemoryError: Photon ran out of memory while executing this query.",
            "task 7's failure".into(),
            None,
        )
        .unwrap();
        assert_eq!((m.region, m.kind), (Region::Photon, Kind::Photon));
        let facts = sparkdiag_facts::Facts::of(&app);
        let limits = crate::memory_limits::of(&app);
        let advice = crate::Context::with_every_plan(&app, &facts, |ctx| m.advice(ctx, &limits));
        for said in [
            "spark.executor.memory is the wrong first change",
            "spark.memory.offHeap.size, now 10g",
            "a node type with more memory per core",
            "spark.task.cpus=2",
            "its 8 cores",
            "without Photon",
        ] {
            assert!(advice.contains(said), "{said}: {advice}");
        }
        assert_eq!(
            m.settings(&limits),
            [("spark.task.cpus".to_string(), "2".to_string())]
        );
    }

    #[test]
    fn a_bare_sigkill_is_memory_only_under_yarn_and_kubernetes() {
        let app = |master: &str| Application {
            spark_properties: [("spark.master".to_string(), master.to_string())].into(),
            ..Default::default()
        };
        let lost = "Command exited with code 137";
        assert_eq!(
            region(lost),
            Some((Region::ContainerOverhead, Kind::Sigkill))
        );
        assert!(of_message(&app("spark://host:7077"), lost, String::new(), None).is_none());
        assert!(of_message(&app("local-cluster[2,1,1024]"), lost, String::new(), None).is_none());
        let yarn = of_message(&app("yarn"), lost, String::new(), None).unwrap();
        assert_eq!(yarn.region, Region::ContainerOverhead);
        // Words of memory are memory anywhere.
        let killed = "Container killed by YARN for exceeding memory limits. 5.5 GB of 5.5 GB physical memory used.";
        assert!(of_message(&app("spark://host:7077"), killed, String::new(), None).is_some());
    }

    #[test]
    fn a_java_class_ending_in_memory_error_is_not_pythons() {
        assert_eq!(
            region("at java.lang.OutOfMemoryError.<init>"),
            Some((Region::ExecutorHeap, Kind::Heap))
        );
        assert_eq!(
            classify(["  MemoryError"]).map(|(_, l)| l),
            Some("MemoryError".into())
        );
    }
}

#[cfg(test)]
mod healthy_twin {
    use crate::rules::testing::apps;
    use crate::{Category, Config, Severity};

    /// The same script as the wide heap OOM at a size that fits: every rule together says
    /// nothing at medium or above about memory (failures, GC, spill, partitions too big).
    #[test]
    fn the_healthy_twin_gets_nothing_about_memory_at_medium_or_above() {
        let app = &apps("logs/memory/heap-oom-wide-healthy")[0];
        let findings = crate::analyze(app, &sparkdiag_facts::Facts::of(app), &Config::default());
        let memory: Vec<_> = findings
            .iter()
            // Severities order from Critical down: medium or above is `<= Medium`.
            .filter(|f| f.severity <= Severity::Medium)
            .filter(|f| {
                matches!(
                    f.category,
                    Category::Failure | Category::Gc | Category::Spill
                ) || f.rule == "PA002"
                    || f.title.to_lowercase().contains("memory")
                    || f.recommendation.contains("spark.executor.memory")
            })
            .collect();
        assert!(memory.is_empty(), "{memory:#?}");
    }
}
