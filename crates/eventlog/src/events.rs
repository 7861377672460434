//! Typed Spark listener events, borrowed from one JSON line.
//!
//! Field names are Spark's own (`JsonProtocol` for core events, Jackson camelCase for SQL events).
//! Every field a Spark version may omit has a default, so 1.2 logs and 4.x logs read the same way.

use std::borrow::Cow;

use std::sync::LazyLock;

use compact_str::CompactString;
use memchr::memmem;
use serde::Deserialize;

use crate::extract;

/// A string that borrows from the line when it holds no escapes.
pub type Text<'a> = Cow<'a, str>;

/// One event the model uses; everything else is [`Event::Other`].
///
/// Events larger than a task start are boxed: every event is moved through the reading's
/// results on its way to the model, and each move copies the largest variant's size (376 bytes
/// with a job start held in place, 160 now).
#[derive(Debug)]
pub enum Event<'a> {
    LogStart(LogStart<'a>),
    ApplicationStart(ApplicationStart<'a>),
    ApplicationEnd(ApplicationEnd),
    EnvironmentUpdate(EnvironmentUpdate<'a>),
    JobStart(Box<JobStart<'a>>),
    JobEnd(JobEnd<'a>),
    StageSubmitted(Box<StageEvent<'a>>),
    StageCompleted(Box<StageEvent<'a>>),
    TaskStart(TaskStart<'a>),
    TaskEnd(Box<TaskEnd<'a>>),
    ExecutorAdded(ExecutorAdded<'a>),
    ExecutorRemoved(ExecutorRemoved<'a>),
    BlockManagerAdded(BlockManagerAdded<'a>),
    StageExecutorMetrics(Box<StageExecutorMetrics<'a>>),
    SqlExecutionStart(Box<SqlExecutionStart<'a>>),
    SqlExecutionEnd(SqlExecutionEnd<'a>),
    SqlAdaptiveExecutionUpdate(Box<SqlAdaptiveExecutionUpdate<'a>>),
    SqlDriverAccumUpdates(SqlDriverAccumUpdates),
    /// Databricks' `DBCEventLoggingListenerMetadata`, written where open-source Spark writes
    /// `SparkListenerLogStart`.
    DatabricksMetadata(DatabricksMetadata<'a>),
    /// A Structured Streaming query's start, progress, idle trigger or end.
    StreamingQuery(crate::streaming::QueryEvent<'a>),
    /// A Spark event the model has no use for (yet), by name.
    Other(&'a str),
}

/// Whether an event name is one Spark (or a known platform) writes, used to tell "ignored"
/// from "unknown" in the source report.
pub fn is_known_event_name(name: &str) -> bool {
    name.starts_with("SparkListener")
        || name.starts_with("org.apache.spark.")
        || name.starts_with("com.databricks.")
}

#[derive(Debug, Deserialize)]
pub struct LogStart<'a> {
    #[serde(rename = "Spark Version", borrow)]
    pub spark_version: Text<'a>,
}

/// `{"Event":"DBCEventLoggingListenerMetadata","Spark Version":"3.4.1","Timestamp":…,
/// "Rollover Number":0,"SparkContext Id":…}` (Databricks Runtime 13.3).
#[derive(Debug, Deserialize)]
pub struct DatabricksMetadata<'a> {
    #[serde(rename = "Spark Version", borrow, default)]
    pub spark_version: Option<Text<'a>>,
    #[serde(rename = "Timestamp", default)]
    pub timestamp: Option<i64>,
    #[serde(rename = "Rollover Number", default)]
    pub rollover_number: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct ApplicationStart<'a> {
    #[serde(rename = "App Name", borrow)]
    pub app_name: Text<'a>,
    #[serde(rename = "App ID", borrow, default)]
    pub app_id: Option<Text<'a>>,
    #[serde(rename = "Timestamp")]
    pub timestamp: i64,
    #[serde(rename = "User", borrow, default)]
    pub user: Option<Text<'a>>,
    #[serde(rename = "App Attempt ID", borrow, default)]
    pub attempt_id: Option<Text<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct ApplicationEnd {
    #[serde(rename = "Timestamp")]
    pub timestamp: i64,
    #[serde(rename = "ExitCode", default)]
    pub exit_code: Option<i64>,
}

#[derive(Debug, Deserialize)]
pub struct EnvironmentUpdate<'a> {
    #[serde(rename = "Spark Properties", borrow, default)]
    pub spark_properties: Properties<'a>,
    #[serde(rename = "JVM Information", borrow, default)]
    pub jvm_information: Properties<'a>,
}

/// A string-to-string map as Spark writes it: an object, or in very old logs a list of pairs.
#[derive(Debug, Default)]
pub struct Properties<'a>(pub Vec<(Text<'a>, Text<'a>)>);

impl<'de: 'a, 'a> Deserialize<'de> for Properties<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Shape<'a> {
            Map(#[serde(borrow)] std::collections::BTreeMap<Text<'a>, Text<'a>>),
            Pairs(#[serde(borrow)] Vec<(Text<'a>, Text<'a>)>),
        }
        Ok(match Shape::deserialize(d)? {
            Shape::Map(map) => Properties(map.into_iter().collect()),
            Shape::Pairs(pairs) => Properties(pairs),
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct JobProperties<'a> {
    #[serde(rename = "spark.job.description", borrow)]
    pub description: Option<Text<'a>>,
    #[serde(rename = "spark.jobGroup.id", borrow)]
    pub job_group: Option<Text<'a>>,
    #[serde(rename = "spark.sql.execution.id", borrow)]
    pub sql_execution_id: Option<Text<'a>>,
    #[serde(rename = "callSite.short", borrow)]
    pub call_site: Option<Text<'a>>,
    #[serde(rename = "spark.scheduler.pool", borrow)]
    pub scheduler_pool: Option<Text<'a>>,
    /// The Databricks notebook that ran the job.
    #[serde(rename = "spark.databricks.notebook.path", borrow)]
    pub databricks_notebook: Option<Text<'a>>,
    /// Set when a Databricks job (a scheduled or API-submitted run) started the job, not a
    /// person: the job, its run and the kind of task (`notebook`, `python`, `jar`, …).
    #[serde(rename = "spark.databricks.job.runId", borrow)]
    pub databricks_job_run: Option<Text<'a>>,
    #[serde(rename = "spark.databricks.job.id", borrow)]
    pub databricks_job_id: Option<Text<'a>>,
    #[serde(rename = "spark.databricks.job.type", borrow)]
    pub databricks_job_type: Option<Text<'a>>,
    /// A Structured Streaming micro-batch's query and batch.
    #[serde(rename = "sql.streaming.queryId", borrow)]
    pub streaming_query_id: Option<Text<'a>>,
    #[serde(rename = "streaming.sql.batchId", borrow)]
    pub streaming_batch_id: Option<Text<'a>>,
    /// A DStreams output operation's batch time, epoch ms.
    #[serde(rename = "spark.streaming.internal.batchTime", borrow)]
    pub dstream_batch_time: Option<Text<'a>>,
    /// Comma-separated job tags (Spark 3.5+), Spark Connect's operation tag among them.
    #[serde(rename = "spark.job.tags", borrow)]
    pub job_tags: Option<Text<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct JobStart<'a> {
    #[serde(rename = "Job ID")]
    pub job_id: i64,
    #[serde(rename = "Submission Time", default = "minus_one")]
    pub submission_time: i64,
    #[serde(rename = "Stage Infos", borrow, default)]
    pub stage_infos: Vec<StageInfo<'a>>,
    #[serde(rename = "Stage IDs", default)]
    pub stage_ids: Vec<i64>,
    #[serde(rename = "Properties", borrow, default)]
    pub properties: Option<JobProperties<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct JobEnd<'a> {
    #[serde(rename = "Job ID")]
    pub job_id: i64,
    #[serde(rename = "Completion Time", default = "minus_one")]
    pub completion_time: i64,
    #[serde(rename = "Job Result", borrow)]
    pub result: JobResult<'a>,
}

#[derive(Debug, Deserialize)]
pub struct JobResult<'a> {
    #[serde(rename = "Result", borrow)]
    pub result: Text<'a>,
    #[serde(rename = "Exception", borrow, default)]
    pub exception: Option<JobException<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct JobException<'a> {
    #[serde(rename = "Message", borrow, default)]
    pub message: Option<Text<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct StageEvent<'a> {
    #[serde(rename = "Stage Info", borrow)]
    pub stage_info: StageInfo<'a>,
}

#[derive(Debug, Deserialize)]
pub struct StageInfo<'a> {
    #[serde(rename = "Stage ID")]
    pub stage_id: i64,
    #[serde(rename = "Stage Attempt ID", default)]
    pub attempt_id: i64,
    #[serde(rename = "Stage Name", borrow, default)]
    pub name: Text<'a>,
    #[serde(rename = "Number of Tasks", default)]
    pub num_tasks: i64,
    #[serde(rename = "Parent IDs", default)]
    pub parent_ids: Vec<i64>,
    #[serde(rename = "Submission Time", default)]
    pub submission_time: Option<i64>,
    #[serde(rename = "Completion Time", default)]
    pub completion_time: Option<i64>,
    #[serde(rename = "Failure Reason", borrow, default)]
    pub failure_reason: Option<Text<'a>>,
    /// The stage's long call site: one stack frame a line, innermost first.
    #[serde(rename = "Details", borrow, default)]
    pub details: Option<Text<'a>>,
    /// Final accumulator values; SQL metrics carry `"Metadata":"sql"`.
    #[serde(rename = "Accumulables", borrow, default)]
    pub accumulables: Vec<Accumulable<'a>>,
}

/// One accumulator of a stage (`AccumulableInfo`).
#[derive(Debug, Deserialize)]
pub struct Accumulable<'a> {
    #[serde(rename = "ID")]
    pub id: i64,
    #[serde(rename = "Name", borrow, default)]
    pub name: Option<Text<'a>>,
    #[serde(rename = "Value", borrow, default)]
    pub value: Option<NumberOrText<'a>>,
    #[serde(rename = "Metadata", borrow, default)]
    pub metadata: Option<Text<'a>>,
}

/// Accumulator values are numbers for internal metrics and strings for SQL metrics; old logs
/// also hold lists (updated block statuses), which are read past.
///
/// Read as serde's `untagged` derive read it (the first of `Integer`, `Float`, `Text` and
/// `Other` that takes the value), by one visitor: the derive buffered every value and, for a
/// string, built an error message for each number variant it did not fit first.
#[derive(Debug)]
pub enum NumberOrText<'a> {
    Integer(i64),
    Float(f64),
    Text(Text<'a>),
    Other(serde::de::IgnoredAny),
}

impl<'de: 'a, 'a> Deserialize<'de> for NumberOrText<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NumberOrTextVisitor)
    }
}

struct NumberOrTextVisitor;

impl<'de> serde::de::Visitor<'de> for NumberOrTextVisitor {
    type Value = NumberOrText<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a number, a string or any JSON value")
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(NumberOrText::Integer(v))
    }

    /// Past `i64::MAX` an integer is no `i64`, and the derive took it as a float.
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(i64::try_from(v).map_or(NumberOrText::Float(v as f64), NumberOrText::Integer))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(NumberOrText::Float(v))
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(NumberOrText::Text(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(NumberOrText::Text(Cow::Owned(v.to_owned())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(NumberOrText::Text(Cow::Owned(v)))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(NumberOrText::Other(serde::de::IgnoredAny))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(NumberOrText::Other(serde::de::IgnoredAny))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, seq: A) -> Result<Self::Value, A::Error> {
        serde::de::IgnoredAny
            .visit_seq(seq)
            .map(NumberOrText::Other)
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        serde::de::IgnoredAny
            .visit_map(map)
            .map(NumberOrText::Other)
    }
}

impl NumberOrText<'_> {
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            NumberOrText::Integer(n) => Some(*n),
            NumberOrText::Float(f) => Some(*f as i64),
            NumberOrText::Text(t) => t.trim().parse().ok(),
            NumberOrText::Other(_) => None,
        }
    }
}

#[derive(Debug, Deserialize)]
pub struct TaskStart<'a> {
    #[serde(rename = "Stage ID")]
    pub stage_id: i64,
    #[serde(rename = "Stage Attempt ID", default)]
    pub stage_attempt_id: i64,
    #[serde(rename = "Task Info", borrow)]
    pub task_info: TaskInfo<'a>,
}

#[derive(Debug, Default, Deserialize)]
pub struct TaskEnd<'a> {
    #[serde(rename = "Stage ID")]
    pub stage_id: i64,
    #[serde(rename = "Stage Attempt ID", default)]
    pub stage_attempt_id: i64,
    #[serde(rename = "Task End Reason", borrow)]
    pub reason: TaskEndReason<'a>,
    #[serde(rename = "Task Info", borrow)]
    pub task_info: TaskInfo<'a>,
    #[serde(rename = "Task Executor Metrics", default)]
    pub executor_metrics: Option<ExecutorMetrics>,
    #[serde(rename = "Task Metrics", default)]
    pub metrics: Option<TaskMetrics>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TaskInfo<'a> {
    #[serde(rename = "Task ID")]
    pub task_id: i64,
    #[serde(rename = "Index")]
    pub index: i64,
    #[serde(rename = "Attempt")]
    pub attempt: i64,
    #[serde(rename = "Partition ID")]
    pub partition_id: Option<i64>,
    #[serde(rename = "Launch Time")]
    pub launch_time: i64,
    #[serde(rename = "Executor ID", borrow)]
    pub executor_id: Text<'a>,
    #[serde(rename = "Host", borrow)]
    pub host: Text<'a>,
    #[serde(rename = "Locality", borrow)]
    pub locality: Text<'a>,
    #[serde(rename = "Speculative")]
    pub speculative: bool,
    /// A timestamp (when the driver began fetching the result), not a duration; 0 if never.
    #[serde(rename = "Getting Result Time")]
    pub getting_result_time: i64,
    #[serde(rename = "Finish Time")]
    pub finish_time: i64,
    #[serde(rename = "Failed")]
    pub failed: bool,
    #[serde(rename = "Killed")]
    pub killed: bool,
}

fn owned(text: Text<'_>) -> Text<'static> {
    Cow::Owned(text.into_owned())
}

impl TaskEnd<'_> {
    /// The same event, its text copied out of the line it was read from.
    pub fn into_owned(self) -> TaskEnd<'static> {
        TaskEnd {
            stage_id: self.stage_id,
            stage_attempt_id: self.stage_attempt_id,
            reason: self.reason.into_owned(),
            task_info: self.task_info.into_owned(),
            executor_metrics: self.executor_metrics,
            metrics: self.metrics,
        }
    }
}

impl TaskInfo<'_> {
    pub fn into_owned(self) -> TaskInfo<'static> {
        TaskInfo {
            task_id: self.task_id,
            index: self.index,
            attempt: self.attempt,
            partition_id: self.partition_id,
            launch_time: self.launch_time,
            executor_id: owned(self.executor_id),
            host: owned(self.host),
            locality: owned(self.locality),
            speculative: self.speculative,
            getting_result_time: self.getting_result_time,
            finish_time: self.finish_time,
            failed: self.failed,
            killed: self.killed,
        }
    }
}

impl TaskEndReason<'_> {
    pub fn into_owned(self) -> TaskEndReason<'static> {
        TaskEndReason {
            reason: owned(self.reason),
            class_name: self.class_name.map(owned),
            description: self.description.map(owned),
            full_stack_trace: self.full_stack_trace.map(owned),
            kill_reason: self.kill_reason.map(owned),
            message: self.message.map(owned),
            executor_id: self.executor_id.map(owned),
            exit_caused_by_app: self.exit_caused_by_app,
            loss_reason: self.loss_reason.map(owned),
            shuffle_id: self.shuffle_id,
        }
    }
}

/// `Task End Reason`: `Reason` is the simple class name of Spark's `TaskEndReason`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct TaskEndReason<'a> {
    #[serde(rename = "Reason", borrow)]
    pub reason: Text<'a>,
    #[serde(rename = "Class Name", borrow)]
    pub class_name: Option<Text<'a>>,
    #[serde(rename = "Description", borrow)]
    pub description: Option<Text<'a>>,
    /// The exception's whole stack trace with its `Caused by:` chain (ExceptionFailure).
    #[serde(rename = "Full Stack Trace", borrow)]
    pub full_stack_trace: Option<Text<'a>>,
    #[serde(rename = "Kill Reason", borrow)]
    pub kill_reason: Option<Text<'a>>,
    #[serde(rename = "Message", borrow)]
    pub message: Option<Text<'a>>,
    #[serde(rename = "Executor ID", borrow)]
    pub executor_id: Option<Text<'a>>,
    #[serde(rename = "Exit Caused By App")]
    pub exit_caused_by_app: Option<bool>,
    #[serde(rename = "Loss Reason", borrow)]
    pub loss_reason: Option<Text<'a>>,
    #[serde(rename = "Shuffle ID")]
    pub shuffle_id: Option<i64>,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct TaskMetrics {
    #[serde(rename = "Executor Deserialize Time")]
    pub executor_deserialize_time: i64,
    #[serde(rename = "Executor Deserialize CPU Time")]
    pub executor_deserialize_cpu_time: i64,
    #[serde(rename = "Executor Run Time")]
    pub executor_run_time: i64,
    #[serde(rename = "Executor CPU Time")]
    pub executor_cpu_time: i64,
    #[serde(rename = "Peak Execution Memory")]
    pub peak_execution_memory: i64,
    #[serde(rename = "Result Size")]
    pub result_size: i64,
    #[serde(rename = "JVM GC Time")]
    pub jvm_gc_time: i64,
    #[serde(rename = "Result Serialization Time")]
    pub result_serialization_time: i64,
    #[serde(rename = "Memory Bytes Spilled")]
    pub memory_bytes_spilled: i64,
    #[serde(rename = "Disk Bytes Spilled")]
    pub disk_bytes_spilled: i64,
    #[serde(rename = "Shuffle Read Metrics")]
    pub shuffle_read: ShuffleReadMetrics,
    #[serde(rename = "Shuffle Write Metrics")]
    pub shuffle_write: ShuffleWriteMetrics,
    #[serde(rename = "Input Metrics")]
    pub input: InputMetrics,
    #[serde(rename = "Output Metrics")]
    pub output: OutputMetrics,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct ShuffleReadMetrics {
    #[serde(rename = "Remote Blocks Fetched")]
    pub remote_blocks_fetched: i64,
    #[serde(rename = "Local Blocks Fetched")]
    pub local_blocks_fetched: i64,
    #[serde(rename = "Fetch Wait Time")]
    pub fetch_wait_time: i64,
    #[serde(rename = "Remote Bytes Read")]
    pub remote_bytes_read: i64,
    #[serde(rename = "Remote Bytes Read To Disk")]
    pub remote_bytes_read_to_disk: i64,
    #[serde(rename = "Local Bytes Read")]
    pub local_bytes_read: i64,
    #[serde(rename = "Total Records Read")]
    pub total_records_read: i64,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct ShuffleWriteMetrics {
    #[serde(rename = "Shuffle Bytes Written")]
    pub bytes_written: i64,
    /// Nanoseconds.
    #[serde(rename = "Shuffle Write Time")]
    pub write_time: i64,
    #[serde(rename = "Shuffle Records Written")]
    pub records_written: i64,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct InputMetrics {
    #[serde(rename = "Bytes Read")]
    pub bytes_read: i64,
    #[serde(rename = "Records Read")]
    pub records_read: i64,
}

#[derive(Debug, Default, Clone, Copy, Deserialize)]
#[serde(default)]
pub struct OutputMetrics {
    #[serde(rename = "Bytes Written")]
    pub bytes_written: i64,
    #[serde(rename = "Records Written")]
    pub records_written: i64,
}

macro_rules! executor_metrics {
    ($($field:ident = $name:literal),* $(,)?) => {
        /// Peak executor metrics (`ExecutorMetricType`), in Spark's order; a missing key reads as 0.
        #[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Deserialize)]
        #[serde(default)]
        pub struct ExecutorMetrics {
            $(#[serde(rename = $name)] pub $field: i64,)*
        }

        impl ExecutorMetrics {
            pub const NAMES: &'static [&'static str] = &[$($name),*];

            /// Every metric 0: what a task end without peaks counts as.
            pub const ZERO: ExecutorMetrics = ExecutorMetrics { $($field: 0),* };

            /// Raises every metric to at least `other`'s value, as Spark keeps peaks.
            pub fn raise_to(&mut self, other: &ExecutorMetrics) {
                $(self.$field = self.$field.max(other.$field);)*
            }

            pub fn values(&self) -> Vec<i64> {
                vec![$(self.$field),*]
            }

            /// Hands `reader` each metric's key as Spark writes it after another member
            /// (`,"JVMHeapMemory":`), a constant, and the metric, in the order of
            /// [`Self::NAMES`]: the extractor's template compares each key in place.
            #[inline(always)]
            pub(crate) fn each_member(
                &mut self,
                reader: &mut impl crate::extract::MemberReader,
            ) -> Option<()> {
                $(reader.member(concat!(",\"", $name, "\":").as_bytes(), &mut self.$field)?;)*
                Some(())
            }

            /// The metric at `place` in [`Self::NAMES`].
            pub(crate) fn metric_mut(&mut self, place: usize) -> Option<&mut i64> {
                let mut i = 0;
                $(
                    if place == i {
                        return Some(&mut self.$field);
                    }
                    i += 1;
                )*
                let _ = i;
                None
            }
        }
    };
}

executor_metrics! {
    jvm_heap_memory = "JVMHeapMemory",
    jvm_off_heap_memory = "JVMOffHeapMemory",
    on_heap_execution_memory = "OnHeapExecutionMemory",
    off_heap_execution_memory = "OffHeapExecutionMemory",
    on_heap_storage_memory = "OnHeapStorageMemory",
    off_heap_storage_memory = "OffHeapStorageMemory",
    on_heap_unified_memory = "OnHeapUnifiedMemory",
    off_heap_unified_memory = "OffHeapUnifiedMemory",
    direct_pool_memory = "DirectPoolMemory",
    mapped_pool_memory = "MappedPoolMemory",
    process_tree_jvm_vmemory = "ProcessTreeJVMVMemory",
    process_tree_jvm_rss_memory = "ProcessTreeJVMRSSMemory",
    process_tree_python_vmemory = "ProcessTreePythonVMemory",
    process_tree_python_rss_memory = "ProcessTreePythonRSSMemory",
    process_tree_other_vmemory = "ProcessTreeOtherVMemory",
    process_tree_other_rss_memory = "ProcessTreeOtherRSSMemory",
    minor_gc_count = "MinorGCCount",
    minor_gc_time = "MinorGCTime",
    major_gc_count = "MajorGCCount",
    major_gc_time = "MajorGCTime",
    total_gc_time = "TotalGCTime",
    concurrent_gc_count = "ConcurrentGCCount",
    concurrent_gc_time = "ConcurrentGCTime",
}

#[derive(Debug, Deserialize)]
pub struct ExecutorAdded<'a> {
    #[serde(rename = "Timestamp")]
    pub timestamp: i64,
    #[serde(rename = "Executor ID", borrow)]
    pub executor_id: Text<'a>,
    #[serde(rename = "Executor Info", borrow)]
    pub info: ExecutorInfo<'a>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct ExecutorInfo<'a> {
    #[serde(rename = "Host", borrow)]
    pub host: Text<'a>,
    #[serde(rename = "Total Cores")]
    pub total_cores: i64,
    #[serde(rename = "Resource Profile Id")]
    pub resource_profile_id: i64,
}

#[derive(Debug, Deserialize)]
pub struct ExecutorRemoved<'a> {
    #[serde(rename = "Timestamp")]
    pub timestamp: i64,
    #[serde(rename = "Executor ID", borrow)]
    pub executor_id: Text<'a>,
    #[serde(rename = "Removed Reason", borrow, default)]
    pub reason: Text<'a>,
}

#[derive(Debug, Deserialize)]
pub struct BlockManagerAdded<'a> {
    #[serde(rename = "Block Manager ID", borrow)]
    pub block_manager: BlockManagerId<'a>,
    #[serde(rename = "Maximum Memory", default)]
    pub max_memory: i64,
    #[serde(rename = "Timestamp", default)]
    pub timestamp: i64,
}

#[derive(Debug, Deserialize)]
pub struct BlockManagerId<'a> {
    #[serde(rename = "Executor ID", borrow)]
    pub executor_id: Text<'a>,
    #[serde(rename = "Host", borrow, default)]
    pub host: Text<'a>,
}

#[derive(Debug, Deserialize)]
pub struct StageExecutorMetrics<'a> {
    #[serde(rename = "Executor ID", borrow)]
    pub executor_id: Text<'a>,
    #[serde(rename = "Stage ID")]
    pub stage_id: i64,
    #[serde(rename = "Stage Attempt ID", default)]
    pub stage_attempt_id: i64,
    #[serde(rename = "Executor Metrics", default)]
    pub metrics: ExecutorMetrics,
}

#[derive(Debug, Deserialize)]
pub struct SqlExecutionStart<'a> {
    #[serde(rename = "executionId")]
    pub execution_id: i64,
    #[serde(rename = "rootExecutionId", default)]
    pub root_execution_id: Option<i64>,
    #[serde(borrow, default)]
    pub description: Text<'a>,
    #[serde(borrow, default)]
    pub details: Text<'a>,
    #[serde(rename = "physicalPlanDescription", borrow, default)]
    pub physical_plan_description: Text<'a>,
    #[serde(rename = "sparkPlanInfo", default)]
    pub spark_plan_info: Option<SparkPlanInfo>,
    #[serde(default)]
    pub time: i64,
}

#[derive(Debug, Deserialize)]
pub struct SqlExecutionEnd<'a> {
    #[serde(rename = "executionId")]
    pub execution_id: i64,
    #[serde(default)]
    pub time: i64,
    #[serde(rename = "errorMessage", borrow, default)]
    pub error_message: Option<Text<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct SqlAdaptiveExecutionUpdate<'a> {
    #[serde(rename = "executionId")]
    pub execution_id: i64,
    #[serde(rename = "physicalPlanDescription", borrow, default)]
    pub physical_plan_description: Text<'a>,
    #[serde(rename = "sparkPlanInfo", default)]
    pub spark_plan_info: Option<SparkPlanInfo>,
}

/// SQL metric values set on the driver (broadcast sizes, AQE partition counts, ...).
#[derive(Debug, Deserialize)]
pub struct SqlDriverAccumUpdates {
    #[serde(rename = "executionId")]
    pub execution_id: i64,
    #[serde(rename = "accumUpdates", default)]
    pub updates: Vec<(i64, i64)>,
}

/// The structured physical plan of a SQL execution (`SparkPlanInfo`).
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(default)]
pub struct SparkPlanInfo {
    #[serde(rename = "nodeName")]
    pub node_name: CompactString,
    #[serde(rename = "simpleString")]
    pub simple_string: String,
    #[serde(deserialize_with = "vec_to_size")]
    pub children: Vec<SparkPlanInfo>,
    pub metadata: std::collections::BTreeMap<String, String>,
    #[serde(deserialize_with = "vec_to_size")]
    pub metrics: Vec<SqlMetricInfo>,
}

/// A vector without the room it grew into: a log's plans are held whole, thousands of nodes
/// each with its metrics.
fn vec_to_size<'de, D, T>(deserializer: D) -> Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    let mut items = Vec::<T>::deserialize(deserializer)?;
    items.shrink_to_fit();
    Ok(items)
}

/// One SQL metric of a plan node. Its `metricType` (sum, size, timing...) is not kept: nothing
/// reads it, and a log's plans hold a few hundred thousand metrics (24 bytes each).
#[derive(Debug, Clone, Default, Deserialize, serde::Serialize)]
#[serde(default)]
pub struct SqlMetricInfo {
    #[serde(deserialize_with = "metric_name")]
    pub name: CompactString,
    #[serde(rename = "accumulatorId")]
    pub accumulator_id: i64,
}

/// Spark's and Photon's SQL metric names too long to be held inline by a `CompactString` (24
/// bytes): each plan node repeats them (59,000 in the plans of a 3.5 GB log of 2,210 queries),
/// and each would otherwise be a heap allocation of its own. Gathered from the logs of
/// `testdata/` and `../shared/` (Spark 3.0 to 4.x, Databricks and Photon); a name not listed is
/// read as before.
const LONG_METRIC_NAMES: &[&str] = &[
    "time in aggregation build",
    "number of sort fallback tasks",
    "remote bytes read to disk",
    "remote merged reqs duration",
    "remote merged chunks fetched",
    "remote merged blocks fetched",
    "local merged chunks fetched",
    "local merged blocks fetched",
    "merged fetch fallback count",
    "corrupt merged block chunks",
    "number of empty partitions",
    "number of coalesced partitions",
    "number of partitions read",
    "number of skewed partitions",
    "number of skewed partition splits",
    "dynamic partition pruning time",
    "avg hash probe bucket list iters",
    "time to start Python workers",
    "time to run Python workers",
    "time to initialize Python workers",
    "time to execute Python code",
    "data sent to Python workers",
    "data returned from Python workers",
    "peak pickled batch size in bytes",
    "number of batches cut at the byte limit",
    "estimated pickled input size in bytes",
    "number of updated state rows",
    "number of total state rows",
    "number of removed state rows",
    "number of state store instances",
    "number of stores that had forced snapshot",
    "number of rows which are dropped by watermark",
    "estimated size of state only on current version",
    "count of cache miss on states cache in provider",
    "count of cache hit on states cache in provider",
    "number of segment-tree frames prepared",
    "number of segment-tree fallback frames prepared",
    "filesystem read time (sampled)",
    "filesystem read data size",
    "filesystem read data size (sampled)",
    "file sorting by size time",
    "estimated repeated reads low size",
    "estimated repeated reads high size",
];

/// A SQL metric's name, a known long one without an allocation ([`LONG_METRIC_NAMES`]).
fn metric_name<'de, D>(deserializer: D) -> Result<CompactString, D::Error>
where
    D: serde::Deserializer<'de>,
{
    struct MetricName;
    impl serde::de::Visitor<'_> for MetricName {
        type Value = CompactString;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a metric name")
        }
        fn visit_str<E>(self, name: &str) -> Result<CompactString, E> {
            Ok(known_metric_name(name).unwrap_or_else(|| CompactString::from(name)))
        }
    }
    deserializer.deserialize_str(MetricName)
}

pub(crate) fn known_metric_name(name: &str) -> Option<CompactString> {
    if name.len() <= std::mem::size_of::<CompactString>() {
        return None;
    }
    LONG_METRIC_NAMES
        .iter()
        .find(|known| **known == name)
        .map(|known| CompactString::const_new(known))
}

fn minus_one() -> i64 {
    -1
}

const SQL_PREFIX: &str = "org.apache.spark.sql.execution.ui.";

/// Parses one line into an event.
///
/// Returns the event name with the parse error so the caller can say what was expected.
pub fn parse_event(line: &[u8]) -> Result<Event<'_>, ParseFailure<'_>> {
    let name = event_name(line).ok_or(ParseFailure {
        event: None,
        error: None,
    })?;
    // A SQL execution's start or re-plan (its physical plan), a stage's submission or
    // completion or a job's start (a few KB each): read by the extractor where it can, which
    // checks what it reads for UTF-8 itself.
    let extracted = match name.strip_prefix(SQL_PREFIX) {
        Some(sql) => extract::sql::event(sql, line),
        None => extract::scheduler::event(name, line),
    };
    if let Some(event) = extracted {
        return Ok(event);
    }
    // One UTF-8 check of the whole line costs less than serde_json's check of every string.
    let line = std::str::from_utf8(line).map_err(|e| ParseFailure {
        event: Some(name),
        error: Some(invalid_utf8(&e)),
    })?;
    let fail = |error| ParseFailure {
        event: Some(name),
        error: Some(error),
    };
    Ok(match name {
        // Nine tenths of a log's bytes: read by the extractor, which leaves to serde_json
        // exactly the lines it cannot read as serde_json would.
        "SparkListenerTaskEnd" => {
            Event::TaskEnd(Box::new(match extract::task_end(line.as_bytes(), None) {
                Some(event) => event,
                None => serde_json::from_str(line).map_err(fail)?,
            }))
        }
        "SparkListenerTaskStart" => Event::TaskStart(match extract::task_start(line) {
            Some(event) => event,
            None => serde_json::from_str(line).map_err(fail)?,
        }),
        "SparkListenerStageSubmitted" => {
            Event::StageSubmitted(serde_json::from_str(line).map_err(fail)?)
        }
        "SparkListenerStageCompleted" => {
            Event::StageCompleted(serde_json::from_str(line).map_err(fail)?)
        }
        "SparkListenerJobStart" => Event::JobStart(serde_json::from_str(line).map_err(fail)?),
        "SparkListenerJobEnd" => Event::JobEnd(serde_json::from_str(line).map_err(fail)?),
        "SparkListenerExecutorAdded" => {
            Event::ExecutorAdded(serde_json::from_str(line).map_err(fail)?)
        }
        "SparkListenerExecutorRemoved" => {
            Event::ExecutorRemoved(serde_json::from_str(line).map_err(fail)?)
        }
        "SparkListenerBlockManagerAdded" => {
            Event::BlockManagerAdded(serde_json::from_str(line).map_err(fail)?)
        }
        "SparkListenerStageExecutorMetrics" => {
            Event::StageExecutorMetrics(serde_json::from_str(line).map_err(fail)?)
        }
        "SparkListenerLogStart" => Event::LogStart(serde_json::from_str(line).map_err(fail)?),
        "DBCEventLoggingListenerMetadata" => {
            Event::DatabricksMetadata(serde_json::from_str(line).map_err(fail)?)
        }
        "SparkListenerApplicationStart" => {
            Event::ApplicationStart(serde_json::from_str(line).map_err(fail)?)
        }
        "SparkListenerApplicationEnd" => {
            Event::ApplicationEnd(serde_json::from_str(line).map_err(fail)?)
        }
        "SparkListenerEnvironmentUpdate" => {
            Event::EnvironmentUpdate(serde_json::from_str(line).map_err(fail)?)
        }
        _ if name.starts_with(crate::streaming::PREFIX) => {
            match crate::streaming::parse(&name[crate::streaming::PREFIX.len()..], line) {
                Some(event) => Event::StreamingQuery(event.map_err(fail)?),
                None => {
                    serde_json::from_str::<serde::de::IgnoredAny>(line).map_err(fail)?;
                    Event::Other(name)
                }
            }
        }
        _ => match name.strip_prefix(SQL_PREFIX) {
            Some("SparkListenerSQLExecutionStart") => {
                Event::SqlExecutionStart(Box::new(serde_json::from_str(line).map_err(fail)?))
            }
            Some("SparkListenerSQLExecutionEnd") => {
                Event::SqlExecutionEnd(serde_json::from_str(line).map_err(fail)?)
            }
            Some("SparkListenerDriverAccumUpdates") => {
                Event::SqlDriverAccumUpdates(serde_json::from_str(line).map_err(fail)?)
            }
            Some("SparkListenerSQLAdaptiveExecutionUpdate") => Event::SqlAdaptiveExecutionUpdate(
                Box::new(serde_json::from_str(line).map_err(fail)?),
            ),
            _ => {
                // Not modelled: still make sure the line is a whole JSON object, so a damaged
                // line is reported rather than silently counted as an event.
                serde_json::from_str::<serde::de::IgnoredAny>(line).map_err(fail)?;
                Event::Other(name)
            }
        },
    })
}

/// Parses one line of a log as [`parse_event`] parses it after [`strip_task_accumulables`], but
/// reads a task end around its `Accumulables` instead of moving the rest of the line over them.
pub fn parse_line(line: &[u8]) -> Result<Event<'_>, ParseFailure<'_>> {
    match parse_task_by_template(line) {
        Some(event) => Ok(event),
        None => parse_line_generally(line),
    }
}

/// A task start or task end read by the template for the layout Spark 3.x and 4.x write (keys
/// in `JsonProtocol`'s order, no whitespace), or `None` where [`parse_line`] leaves the line to
/// the general reading ([`parse_line_generally`]). Nine tenths of a log's bytes are task ends,
/// and the template reads them with about half the work of the general extractor.
pub fn parse_task_by_template(line: &[u8]) -> Option<Event<'_>> {
    Some(match extract::task_event_by_template(line)? {
        extract::TaskEvent::End(event) => Event::TaskEnd(event),
        extract::TaskEvent::Start(event) => Event::TaskStart(event),
    })
}

/// [`parse_line`] without the template for Spark's own layout of task events: what the
/// template's result must equal, line for line (the tests compare the two on every real log).
pub fn parse_line_generally(line: &[u8]) -> Result<Event<'_>, ParseFailure<'_>> {
    let Some(hole) = task_accumulables(line) else {
        return parse_event(line);
    };
    // The extractor checks the strings it reads for UTF-8, and accepts nothing else that is
    // not ASCII, so the line needs no check of its own here.
    if let Some(event) = extract::task_end(line, Some(hole.clone())) {
        return Ok(Event::TaskEnd(Box::new(event)));
    }
    let (head, tail) = (&line[..hole.start], &line[hole.end..]);
    // The extractor gave up (escapes in a failure's stack trace, damage): serde_json reads the
    // line without the array, and its values are copied out of that temporary line.
    let mut stripped = Vec::with_capacity(head.len() + tail.len());
    stripped.extend_from_slice(head);
    stripped.extend_from_slice(tail);
    let name = "SparkListenerTaskEnd";
    let text = std::str::from_utf8(&stripped).map_err(|e| ParseFailure {
        event: Some(name),
        error: Some(invalid_utf8(&e)),
    })?;
    match serde_json::from_str::<TaskEnd<'_>>(text) {
        Ok(event) => Ok(Event::TaskEnd(Box::new(event.into_owned()))),
        Err(error) => Err(ParseFailure {
            event: Some(name),
            error: Some(error),
        }),
    }
}

/// Cuts the `"Accumulables"` array out of a `SparkListenerTaskEnd` line, in place, and returns
/// the line's new length. [`parse_line`] reads task ends as if this had been done.
pub fn strip_task_accumulables(line: &mut [u8]) -> usize {
    match task_accumulables(line) {
        Some(hole) => {
            line.copy_within(hole.end.., hole.start);
            line.len() - hole.len()
        }
        None => line.len(),
    }
}

/// Where the inside of a `SparkListenerTaskEnd` line's `"Accumulables"` array lies, if the line
/// has Spark's shape.
///
/// The array is over half of every task end (one entry per internal and SQL metric) and repeats
/// what `Task Metrics` holds, yet a parser would have to walk all of it. Spark writes it as the
/// last key of `Task Info`, which is followed by `"Task Executor Metrics"` or `"Task Metrics"` or
/// ends the line (`JsonProtocol.taskEndToJson`), so `]},"Task ` marks its end: that text cannot
/// occur inside a JSON string (the quote would be escaped) nor inside an accumulable entry. A
/// line of any other shape is left whole, for serde to judge. (The plans issue will want the SQL
/// metric entries from this array; this is where to pick them out.)
pub fn task_accumulables(line: &[u8]) -> Option<std::ops::Range<usize>> {
    static KEY: LazyLock<memmem::Finder<'static>> =
        LazyLock::new(|| memmem::Finder::new(br#""Accumulables":["#));
    if !line.starts_with(br#"{"Event":"SparkListenerTaskEnd""#) {
        return None;
    }
    let start = KEY.find(line)? + KEY.needle().len();
    Some(start..task_accumulables_end(line, start)?)
}

/// Where the `Accumulables` array whose inside starts at `start` ends, as
/// [`task_accumulables`] finds it.
pub(crate) fn task_accumulables_end(line: &[u8], start: usize) -> Option<usize> {
    const END: &[u8] = br#"]},"Task "#;
    let rest = &line[start..];
    // A `]` is rare inside the array (a metric's name, old logs' block lists), so finding each
    // and comparing what follows costs less than a substring search (1.8% of the instructions).
    match memchr::memchr_iter(b']', rest).find(|&i| rest[i..].starts_with(END)) {
        Some(i) => Some(start + i),
        None if rest.ends_with(b"]}}") => Some(line.len() - 3),
        None => None,
    }
}

fn invalid_utf8(e: &std::str::Utf8Error) -> serde_json::Error {
    serde::de::Error::custom(format!("invalid UTF-8 at column {}", e.valid_up_to() + 1))
}

/// Why a line did not parse.
#[derive(Debug)]
pub struct ParseFailure<'a> {
    /// The event name, when the line got that far.
    pub event: Option<&'a str>,
    pub error: Option<serde_json::Error>,
}

/// Finds the `"Event"` name cheaply: Spark writes it as the first key of every line.
fn event_name(line: &[u8]) -> Option<&str> {
    const PREFIX: &[u8] = br#"{"Event":""#;
    if let Some(rest) = line.strip_prefix(PREFIX) {
        let end = memchr::memchr(b'"', rest)?;
        return std::str::from_utf8(&rest[..end]).ok();
    }
    // Key order or spacing differs (hand-edited or re-serialised logs): find it properly.
    #[derive(Deserialize)]
    struct NameOnly<'a> {
        #[serde(rename = "Event", borrow)]
        event: &'a str,
    }
    serde_json::from_slice::<NameOnly>(line)
        .ok()
        .map(|n| n.event)
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_metric_names_are_read_without_an_allocation_and_others_as_written() {
        for known in super::LONG_METRIC_NAMES {
            assert!(
                known.len() > std::mem::size_of::<super::CompactString>(),
                "{known}"
            );
        }
        let json = r#"[{"name":"time in aggregation build","accumulatorId":7},
            {"name":"time in aggregation probe, not Spark's","accumulatorId":8},
            {"name":"avg hash probe bucket list\u0020iters","accumulatorId":9},
            {"name":"number of output rows","accumulatorId":10}]"#;
        let metrics: Vec<super::SqlMetricInfo> = serde_json::from_str(json).unwrap();
        let names: Vec<(&str, bool)> = metrics
            .iter()
            .map(|m| (m.name.as_str(), m.name.is_heap_allocated()))
            .collect();
        assert_eq!(
            names,
            [
                ("time in aggregation build", false),
                ("time in aggregation probe, not Spark's", true),
                ("avg hash probe bucket list iters", false),
                ("number of output rows", false),
            ]
        );
        assert_eq!(metrics[2].accumulator_id, 9);
    }

    use super::*;

    /// What [`NumberOrText`] was: serde's `untagged` derive, which its visitor must match.
    /// Its values are compared through `Debug`, which the dead-code lint does not count.
    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    #[serde(untagged)]
    enum UntaggedNumberOrText<'a> {
        Integer(i64),
        Float(f64),
        Text(#[serde(borrow)] Text<'a>),
        Other(serde::de::IgnoredAny),
    }

    #[test]
    fn accumulator_values_read_as_the_untagged_derive_read_them() {
        let values = [
            "0",
            "-7",
            "9223372036854775807",
            "9223372036854775808",
            "18446744073709551615",
            "-9223372036854775808",
            "-0",
            "1.5",
            "-2.5e3",
            "1e400",
            r#""12 ms""#,
            r#""a\"quoted\" \u00e9 value""#,
            r#""""#,
            "true",
            "null",
            "[1,[2,{}]]",
            r#"{"a":[null]}"#,
            "[1,",
            r#""cut"#,
            "01",
            "tru",
        ];
        for value in values {
            // The same value in the same place of the same line, read both ways.
            let line = format!(r#"{{"ID":1,"Value":{value}}}"#);
            let new = serde_json::from_str::<Accumulable>(&line).map(|a| format!("{:?}", a.value));
            let old = serde_json::from_str::<UntaggedAccumulable>(&line)
                .map(|a| format!("{:?}", a.value).replace("UntaggedNumberOrText", "NumberOrText"));
            match (new, old) {
                (Ok(new), Ok(old)) => assert_eq!(new, old, "{value}"),
                (Err(new), Err(old)) => assert_eq!(
                    (new.classify(), new.column()),
                    (old.classify(), old.column()),
                    "{value}"
                ),
                (new, old) => panic!("{value}: {new:?} against {old:?}"),
            }
            // Borrowed from the line when the string has no escapes, as the derive borrowed it.
            if let Ok(Accumulable {
                value: Some(NumberOrText::Text(text)),
                ..
            }) = serde_json::from_str::<Accumulable>(&line)
            {
                assert_eq!(
                    matches!(text, Cow::Borrowed(_)),
                    !value.contains('\\'),
                    "{value}"
                );
            }
        }
    }

    #[allow(dead_code)]
    #[derive(Debug, Deserialize)]
    struct UntaggedAccumulable<'a> {
        #[serde(rename = "ID")]
        id: i64,
        #[serde(rename = "Value", borrow, default)]
        value: Option<UntaggedNumberOrText<'a>>,
    }

    #[test]
    fn strips_task_accumulables_including_strings_with_brackets_and_escapes() {
        let original = br#"{"Event":"SparkListenerTaskEnd","Task Info":{"Task ID":7,"Accumulables":[{"ID":1,"Name":"a ]},\"Task [","Value":"[x]"},{"ID":2,"Value":[1,[2]]}]},"Task Metrics":{"JVM GC Time":5}}"#;
        let mut line = original.to_vec();
        let len = strip_task_accumulables(&mut line);
        assert_eq!(
            std::str::from_utf8(&line[..len]).unwrap(),
            r#"{"Event":"SparkListenerTaskEnd","Task Info":{"Task ID":7,"Accumulables":[]},"Task Metrics":{"JVM GC Time":5}}"#
        );
        let mut unbalanced =
            br#"{"Event":"SparkListenerTaskEnd","Task Info":{"Accumulables":[{"ID":1"#.to_vec();
        assert_eq!(strip_task_accumulables(&mut unbalanced), unbalanced.len());
        let mut last = br#"{"Event":"SparkListenerTaskEnd","Task Info":{"Task ID":7,"Accumulables":[{"ID":1}]}}"#.to_vec();
        let len = strip_task_accumulables(&mut last);
        assert_eq!(
            &last[..len],
            br#"{"Event":"SparkListenerTaskEnd","Task Info":{"Task ID":7,"Accumulables":[]}}"#
        );
        let mut other = br#"{"Event":"SparkListenerStageCompleted","Accumulables":[1]}"#.to_vec();
        assert_eq!(strip_task_accumulables(&mut other), other.len());
    }

    #[test]
    fn finds_the_name_in_any_key_order_and_rejects_broken_lines() {
        assert_eq!(
            event_name(br#"{"Event":"SparkListenerJobEnd","Job ID":1}"#),
            Some("SparkListenerJobEnd")
        );
        assert_eq!(
            event_name(br#"{ "Job ID": 1, "Event": "SparkListenerJobEnd" }"#),
            Some("SparkListenerJobEnd")
        );
        assert!(event_name(br#"{"Job ID":1}"#).is_none());
        let cut = br#"{"Event":"SparkListenerJobEnd","Job ID":1,"Completion Ti"#;
        let failure = parse_event(cut).unwrap_err();
        assert_eq!(failure.event, Some("SparkListenerJobEnd"));
        assert!(failure.error.is_some());
        let cut_other = br#"{"Event":"SparkListenerBlockUpdated","Block"#;
        assert!(
            parse_event(cut_other).is_err(),
            "a cut line of an unmodelled event is still damage"
        );
    }
}
