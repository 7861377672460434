//! The types of the model. Times are epoch milliseconds unless a name says otherwise.

use std::collections::BTreeMap;
use std::ops::Range;

use sparkdiag_eventlog::events::{ExecutorMetrics, SparkPlanInfo, TaskMetrics};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Spark,
    Databricks,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AppStatus {
    Succeeded,
    Failed,
    /// No `SparkListenerApplicationEnd`: still running, killed, or the log is cut.
    Incomplete,
}

/// One application attempt.
#[derive(Debug, Default)]
pub struct Application {
    pub id: Option<String>,
    pub name: Option<String>,
    pub attempt_id: Option<String>,
    pub user: Option<String>,
    /// From `SparkListenerLogStart`.
    pub spark_version: Option<String>,
    /// The Databricks Runtime (`spark.databricks.clusterUsageTags.sparkVersion`, e.g. `15.4.x-scala2.12`).
    pub databricks_runtime: Option<String>,
    pub start_ms: Option<i64>,
    /// `SparkListenerApplicationEnd`'s time; `None` when the log has none.
    pub end_ms: Option<i64>,
    /// `ApplicationEnd.ExitCode` (Spark 4.0+).
    pub exit_code: Option<i64>,
    /// The latest timestamp any event carried: where an incomplete log stops.
    pub last_event_ms: Option<i64>,
    pub spark_properties: BTreeMap<String, String>,
    pub jobs: Vec<Job>,
    /// Every stage attempt, in the order Spark first mentioned it; skipped stages included.
    pub stages: Vec<StageAttempt>,
    /// Every task end, grouped by stage attempt (see [`StageAttempt::tasks`]), then by task id.
    pub tasks: Vec<Task>,
    /// Why each non-successful task ended.
    pub task_failures: Vec<TaskFailure>,
    pub executors: Vec<Executor>,
    pub sql: Vec<SqlExecution>,
}

impl Application {
    pub fn platform(&self) -> Platform {
        if self
            .spark_properties
            .keys()
            .any(|k| k.starts_with("spark.databricks."))
        {
            Platform::Databricks
        } else {
            Platform::Spark
        }
    }

    /// Failed when Spark says so (exit code) or, on logs before Spark 4 that carry no exit code,
    /// when the last job to finish failed.
    pub fn status(&self) -> AppStatus {
        if self.end_ms.is_none() {
            return AppStatus::Incomplete;
        }
        match self.exit_code {
            Some(0) => AppStatus::Succeeded,
            Some(_) => AppStatus::Failed,
            None => {
                let last = self
                    .jobs
                    .iter()
                    .filter(|j| j.completion_ms.is_some())
                    .max_by_key(|j| (j.completion_ms, j.job_id));
                match last {
                    Some(job) if job.status == JobStatus::Failed => AppStatus::Failed,
                    _ => AppStatus::Succeeded,
                }
            }
        }
    }

    /// Where the application's time ends: its end event, or the last event of an incomplete log.
    pub fn effective_end_ms(&self) -> Option<i64> {
        self.end_ms.or(self.last_event_ms)
    }

    pub fn duration_ms(&self) -> Option<i64> {
        Some(self.effective_end_ms()?.saturating_sub(self.start_ms?)).map(|d| d.max(0))
    }

    pub fn stage_tasks(&self, stage: &StageAttempt) -> &[Task] {
        &self.tasks[stage.tasks.clone()]
    }

    pub fn executor(&self, task: &Task) -> &Executor {
        &self.executors[task.executor as usize]
    }

    /// Wall-clock time during which at least one job ran (the union of job intervals), and the
    /// rest of the application's time, when only the driver was working.
    pub fn job_and_driver_time_ms(&self) -> (i64, i64) {
        let (Some(start), Some(end)) = (self.start_ms, self.effective_end_ms()) else {
            return (0, 0);
        };
        // A log can end before it starts (clock steps, joined or hand-edited logs): that is no
        // time at all, never a reversed interval (`clamp` panics when min > max).
        let end = end.max(start);
        let mut spans: Vec<(i64, i64)> = self
            .jobs
            .iter()
            .filter(|j| j.submission_ms.is_some())
            .map(|j| {
                let s = j.submission_ms.unwrap().clamp(start, end);
                (s, j.completion_ms.unwrap_or(end).clamp(s, end))
            })
            .collect();
        spans.sort_unstable();
        let (mut covered, mut reach) = (0i64, start);
        for (s, e) in spans {
            let s = s.max(reach);
            if e > s {
                covered = covered.saturating_add(e.saturating_sub(s));
                reach = e;
            }
        }
        let total = end.saturating_sub(start);
        (covered, total.saturating_sub(covered))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Running,
    Succeeded,
    Failed,
}

#[derive(Debug, Clone)]
pub struct Job {
    pub job_id: i64,
    pub submission_ms: Option<i64>,
    pub completion_ms: Option<i64>,
    pub status: JobStatus,
    /// `JobFailed`'s exception message.
    pub failure: Option<String>,
    /// The name of the job's last stage, as the Spark UI shows it.
    pub name: String,
    pub description: Option<String>,
    pub job_group: Option<String>,
    pub call_site: Option<String>,
    pub sql_execution_id: Option<i64>,
    pub stage_ids: Vec<i64>,
    /// Tasks of the stages the job had to run (stages already computed are not counted).
    pub num_tasks: i64,
    pub completed_tasks: i64,
    pub failed_tasks: i64,
    pub killed_tasks: i64,
    pub skipped_tasks: i64,
    pub completed_stages: Vec<i64>,
    pub skipped_stages: Vec<i64>,
    pub failed_stages: i64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StageStatus {
    /// Named by a job, not submitted yet.
    Pending,
    Active,
    Complete,
    Failed,
    /// Its output already existed, so it never ran.
    Skipped,
}

/// Metric sums over a set of task ends, named as the History Server's REST API names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct MetricTotals {
    pub executor_run_time: i64,
    pub executor_cpu_time: i64,
    pub executor_deserialize_time: i64,
    pub executor_deserialize_cpu_time: i64,
    pub result_size: i64,
    pub jvm_gc_time: i64,
    pub result_serialization_time: i64,
    pub memory_bytes_spilled: i64,
    pub disk_bytes_spilled: i64,
    pub peak_execution_memory: i64,
    pub input_bytes: i64,
    pub input_records: i64,
    pub output_bytes: i64,
    pub output_records: i64,
    pub shuffle_remote_blocks_fetched: i64,
    pub shuffle_local_blocks_fetched: i64,
    pub shuffle_fetch_wait_time: i64,
    pub shuffle_remote_bytes_read: i64,
    pub shuffle_remote_bytes_read_to_disk: i64,
    pub shuffle_local_bytes_read: i64,
    pub shuffle_read_records: i64,
    pub shuffle_write_bytes: i64,
    /// Nanoseconds.
    pub shuffle_write_time: i64,
    pub shuffle_write_records: i64,
}

impl MetricTotals {
    pub fn add(&mut self, m: &TaskMetrics) {
        self.executor_run_time += m.executor_run_time;
        self.executor_cpu_time += m.executor_cpu_time;
        self.executor_deserialize_time += m.executor_deserialize_time;
        self.executor_deserialize_cpu_time += m.executor_deserialize_cpu_time;
        self.result_size += m.result_size;
        self.jvm_gc_time += m.jvm_gc_time;
        self.result_serialization_time += m.result_serialization_time;
        self.memory_bytes_spilled += m.memory_bytes_spilled;
        self.disk_bytes_spilled += m.disk_bytes_spilled;
        self.peak_execution_memory += m.peak_execution_memory;
        self.input_bytes += m.input.bytes_read;
        self.input_records += m.input.records_read;
        self.output_bytes += m.output.bytes_written;
        self.output_records += m.output.records_written;
        let read = &m.shuffle_read;
        self.shuffle_remote_blocks_fetched += read.remote_blocks_fetched;
        self.shuffle_local_blocks_fetched += read.local_blocks_fetched;
        self.shuffle_fetch_wait_time += read.fetch_wait_time;
        self.shuffle_remote_bytes_read += read.remote_bytes_read;
        self.shuffle_remote_bytes_read_to_disk += read.remote_bytes_read_to_disk;
        self.shuffle_local_bytes_read += read.local_bytes_read;
        self.shuffle_read_records += read.total_records_read;
        self.shuffle_write_bytes += m.shuffle_write.bytes_written;
        self.shuffle_write_time += m.shuffle_write.write_time;
        self.shuffle_write_records += m.shuffle_write.records_written;
    }

    /// Local plus remote bytes, as the History Server's `shuffleReadBytes`.
    pub fn shuffle_read_bytes(&self) -> i64 {
        self.shuffle_local_bytes_read + self.shuffle_remote_bytes_read
    }
}

#[derive(Debug, Clone)]
pub struct StageAttempt {
    pub stage_id: i64,
    pub attempt_id: i64,
    pub name: String,
    pub num_tasks: i64,
    pub parent_ids: Vec<i64>,
    pub status: StageStatus,
    pub submission_ms: Option<i64>,
    pub completion_ms: Option<i64>,
    pub first_task_launched_ms: Option<i64>,
    pub failure_reason: Option<String>,
    pub job_ids: Vec<i64>,
    /// Sums over every task end of this attempt that carried metrics, failed and killed included.
    pub totals: MetricTotals,
    pub completed_tasks: i64,
    pub failed_tasks: i64,
    pub killed_tasks: i64,
    /// Per-metric peaks from `StageExecutorMetrics` and the tasks' executor metrics.
    pub peak_executor_metrics: Option<ExecutorMetrics>,
    /// This attempt's slice of [`Application::tasks`].
    pub tasks: Range<usize>,
    /// SQL metric accumulators this attempt's tasks updated, with their value at its completion
    /// (the driver's merged value: cumulative over every stage that updates the accumulator).
    pub sql_metrics: Vec<(i64, i64)>,
}

impl StageAttempt {
    /// Submission to completion, or to `end` for a stage still running when the log ends.
    pub fn duration_ms(&self, end: Option<i64>) -> Option<i64> {
        let start = self.submission_ms?;
        Some((self.completion_ms.or(end)? - start).max(0))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskOutcome {
    Success,
    /// Any failure except a kill, `Resubmitted` included, as the History Server counts them.
    Failed,
    /// `TaskKilled` or `TaskCommitDenied`.
    Killed,
}

/// One task end, kept small: millions of these must fit in memory.
#[derive(Debug, Clone, Copy)]
pub struct Task {
    pub task_id: i64,
    pub launch_ms: i64,
    /// Finish minus launch.
    pub duration_ms: u32,
    /// Index into [`Application::stages`].
    pub stage: u32,
    /// Index into [`Application::executors`].
    pub executor: u32,
    /// The partition slot within the task set.
    pub index: u32,
    pub attempt: u16,
    pub outcome: TaskOutcome,
    pub speculative: bool,
    pub has_metrics: bool,
    /// Time the driver spent fetching a large result (History Server's `gettingResultTime`).
    pub getting_result_ms: u32,
    pub metrics: TaskMetricsCompact,
}

/// The per-task metrics the diagnosis and the task quantiles use.
#[derive(Debug, Clone, Copy, Default)]
pub struct TaskMetricsCompact {
    pub run_ms: u32,
    pub deserialize_ms: u32,
    pub gc_ms: u32,
    pub result_serialization_ms: u32,
    pub fetch_wait_ms: u32,
    pub cpu_ns: u64,
    pub result_size: u64,
    pub peak_execution_memory: u64,
    pub memory_spill: u64,
    pub disk_spill: u64,
    pub input_bytes: u64,
    pub input_records: u64,
    pub output_bytes: u64,
    pub output_records: u64,
    /// Local plus remote.
    pub shuffle_read_bytes: u64,
    pub shuffle_remote_bytes: u64,
    pub shuffle_read_records: u64,
    pub shuffle_write_bytes: u64,
    pub shuffle_write_records: u64,
    pub shuffle_write_time_ns: u64,
}

impl TaskMetricsCompact {
    pub fn from_event(m: &TaskMetrics) -> Self {
        let ms = |v: i64| v.clamp(0, u32::MAX as i64) as u32;
        let n = |v: i64| v.max(0) as u64;
        TaskMetricsCompact {
            run_ms: ms(m.executor_run_time),
            deserialize_ms: ms(m.executor_deserialize_time),
            gc_ms: ms(m.jvm_gc_time),
            result_serialization_ms: ms(m.result_serialization_time),
            fetch_wait_ms: ms(m.shuffle_read.fetch_wait_time),
            cpu_ns: n(m.executor_cpu_time),
            result_size: n(m.result_size),
            peak_execution_memory: n(m.peak_execution_memory),
            memory_spill: n(m.memory_bytes_spilled),
            disk_spill: n(m.disk_bytes_spilled),
            input_bytes: n(m.input.bytes_read),
            input_records: n(m.input.records_read),
            output_bytes: n(m.output.bytes_written),
            output_records: n(m.output.records_written),
            shuffle_read_bytes: n(
                m.shuffle_read.local_bytes_read + m.shuffle_read.remote_bytes_read
            ),
            shuffle_remote_bytes: n(m.shuffle_read.remote_bytes_read),
            shuffle_read_records: n(m.shuffle_read.total_records_read),
            shuffle_write_bytes: n(m.shuffle_write.bytes_written),
            shuffle_write_records: n(m.shuffle_write.records_written),
            shuffle_write_time_ns: n(m.shuffle_write.write_time),
        }
    }
}

impl Task {
    /// The History Server's scheduler delay: what the task's duration spent outside its run.
    pub fn scheduler_delay_ms(&self) -> u32 {
        if !self.has_metrics {
            return 0;
        }
        let m = &self.metrics;
        let busy = u64::from(m.run_ms)
            + u64::from(m.deserialize_ms)
            + u64::from(m.result_serialization_ms)
            + u64::from(self.getting_result_ms);
        u64::from(self.duration_ms).saturating_sub(busy) as u32
    }
}

/// Why a task did not succeed.
#[derive(Debug, Clone)]
pub struct TaskFailure {
    pub task_id: i64,
    pub stage_id: i64,
    pub stage_attempt_id: i64,
    /// Index into [`Application::executors`].
    pub executor: u32,
    pub finish_ms: i64,
    /// Spark's `TaskEndReason` class: `ExceptionFailure`, `FetchFailed`, `ExecutorLostFailure`, `TaskKilled`, ...
    pub reason: String,
    /// The exception class for `ExceptionFailure`.
    pub exception_class: Option<String>,
    /// The exception message, kill reason, fetch-failure message or executor-loss reason.
    pub message: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct Executor {
    pub id: String,
    pub host: String,
    pub cores: Option<i64>,
    pub added_ms: Option<i64>,
    pub removed_ms: Option<i64>,
    pub removed_reason: Option<String>,
    /// Storage memory from `BlockManagerAdded`.
    pub max_memory: Option<i64>,
    pub total_tasks: i64,
    pub completed_tasks: i64,
    pub failed_tasks: i64,
    pub killed_tasks: i64,
    /// Sum of task durations (finish minus launch) run here.
    pub task_time_ms: i64,
    pub run_time_ms: i64,
    pub jvm_gc_time_ms: i64,
    pub input_bytes: i64,
    pub shuffle_read_bytes: i64,
    pub shuffle_write_bytes: i64,
    pub memory_spill_bytes: i64,
    pub disk_spill_bytes: i64,
    pub peak_metrics: Option<ExecutorMetrics>,
}

#[derive(Debug, Clone)]
pub struct SqlExecution {
    pub execution_id: i64,
    pub root_execution_id: Option<i64>,
    pub description: String,
    pub details: String,
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    /// `SQLExecutionEnd.errorMessage` when it is not empty.
    pub error: Option<String>,
    /// The plan text at submission (`EXPLAIN FORMATTED` style).
    pub plan_description: String,
    pub plan: Option<SparkPlanInfo>,
    /// The last adaptive (AQE) re-plan, if any.
    pub final_plan_description: Option<String>,
    pub final_plan: Option<SparkPlanInfo>,
    pub job_ids: Vec<i64>,
    /// SQL metric values set on the driver (`SparkListenerDriverAccumUpdates`).
    pub driver_metrics: Vec<(i64, i64)>,
}

/// Every SQL metric accumulator's final value and the stages that updated it.
#[derive(Debug, Default)]
pub struct SqlMetricValues {
    /// Accumulator id -> (value, stage ids).
    pub values: std::collections::HashMap<i64, (i64, Vec<i64>)>,
}

impl SqlMetricValues {
    /// Accumulator ids are unique within an application; the value a stage reports is the
    /// driver's merged total so far, so the largest is the final one.
    pub fn new(app: &Application) -> SqlMetricValues {
        let mut values: std::collections::HashMap<i64, (i64, Vec<i64>)> =
            std::collections::HashMap::new();
        for stage in &app.stages {
            for &(id, value) in &stage.sql_metrics {
                let entry = values.entry(id).or_insert((value, Vec::new()));
                entry.0 = entry.0.max(value);
                if !entry.1.contains(&stage.stage_id) {
                    entry.1.push(stage.stage_id);
                }
            }
        }
        SqlMetricValues { values }
    }

    /// A plan node's measured metrics, by name (driver-side updates of `sql` included).
    pub fn of_node(&self, node: &SparkPlanInfo, sql: &SqlExecution) -> BTreeMap<String, i64> {
        node.metrics
            .iter()
            .filter_map(|m| {
                let value = self
                    .values
                    .get(&m.accumulator_id)
                    .map(|v| v.0)
                    .or_else(|| {
                        sql.driver_metrics
                            .iter()
                            .rev()
                            .find(|(id, _)| *id == m.accumulator_id)
                            .map(|(_, v)| *v)
                    })?;
                Some((m.name.clone(), value))
            })
            .collect()
    }
}

impl SqlExecution {
    /// The plan that ran: the last adaptive re-plan, or the plan at submission.
    pub fn plan_that_ran(&self) -> Option<&SparkPlanInfo> {
        self.final_plan.as_ref().or(self.plan.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: i64, start: i64, end: Option<i64>) -> Job {
        Job {
            job_id: id,
            submission_ms: Some(start),
            completion_ms: end,
            status: if end.is_some() {
                JobStatus::Succeeded
            } else {
                JobStatus::Running
            },
            failure: None,
            name: String::new(),
            description: None,
            job_group: None,
            call_site: None,
            sql_execution_id: None,
            stage_ids: Vec::new(),
            num_tasks: 0,
            completed_tasks: 0,
            failed_tasks: 0,
            killed_tasks: 0,
            skipped_tasks: 0,
            completed_stages: Vec::new(),
            skipped_stages: Vec::new(),
            failed_stages: 0,
        }
    }

    #[test]
    fn job_time_is_the_union_of_job_intervals_and_the_rest_is_driver_time() {
        // 0..1000 ms application; jobs at 100..300 and 200..400 overlap (a thread pool), one
        // at 600..700, and one still running from 900 when the log ends.
        let app = Application {
            start_ms: Some(0),
            end_ms: Some(1000),
            jobs: vec![
                job(0, 100, Some(300)),
                job(1, 200, Some(400)),
                job(2, 600, Some(700)),
                job(3, 900, None),
            ],
            ..Application::default()
        };
        assert_eq!(app.job_and_driver_time_ms(), (300 + 100 + 100, 500));
    }

    #[test]
    fn a_task_stays_small() {
        // Millions of tasks must fit comfortably: this is what one costs.
        println!("Task: {} bytes", std::mem::size_of::<Task>());
        assert!(std::mem::size_of::<Task>() <= 192);
    }
}
