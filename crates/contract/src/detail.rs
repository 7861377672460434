//! What is asked of one application beyond its report, computed on demand from the analysed
//! model (`sparkdiag_analysis::detail`): one stage's executors and slowest tasks, and the task
//! failures grouped by cause. `sparkdiag mcp` answers `get_stage` and `failure_postmortem` from
//! these. They are not fields of `sparkdiag/report/v1`: every stage's tasks in every report would
//! make it as large as its log.

use serde::Serialize;

/// How a task attempt ended, as the History Server counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskOutcome {
    Success,
    /// Any failure except a kill, `Resubmitted` included.
    Failed,
    /// `TaskKilled` or `TaskCommitDenied`.
    Killed,
}

/// One stage attempt's tasks, by executor and by duration, and its failures.
#[derive(Debug, Clone, Serialize)]
pub struct StageDetail {
    /// Task attempts that ended.
    pub tasks: usize,
    /// Every executor that ran one of its tasks, the most task time first.
    pub executors: Vec<ExecutorTasks>,
    /// Its longest tasks, longest first (as many as were asked for).
    pub slowest_tasks: Vec<TaskOut>,
    pub task_failures: TaskFailures,
}

/// One executor's share of a stage's tasks.
#[derive(Debug, Clone, Serialize)]
pub struct ExecutorTasks {
    pub executor_id: String,
    pub host: String,
    pub tasks: i64,
    pub failed_tasks: i64,
    pub killed_tasks: i64,
    pub task_time_ms: i64,
    pub max_task_ms: i64,
    pub gc_ms: i64,
    pub shuffle_read_bytes: i64,
    /// Memory and disk spill together.
    pub spill_bytes: i64,
}

/// One task attempt.
#[derive(Debug, Clone, Serialize)]
pub struct TaskOut {
    pub task_id: i64,
    /// The partition it computed.
    pub index: u32,
    pub attempt: u16,
    pub executor_id: String,
    pub host: String,
    pub launch_ms: i64,
    pub duration_ms: u32,
    pub run_ms: u32,
    pub gc_ms: u32,
    pub fetch_wait_ms: u32,
    pub scheduler_delay_ms: u32,
    pub input_bytes: u64,
    pub shuffle_read_bytes: u64,
    pub shuffle_write_bytes: u64,
    pub memory_spill_bytes: u64,
    pub disk_spill_bytes: u64,
    pub outcome: TaskOutcome,
    pub speculative: bool,
}

/// Task failures grouped by cause: Spark's reason, the exception class and the message's first
/// line; the most frequent first.
#[derive(Debug, Clone, Default, Serialize)]
pub struct TaskFailures {
    /// Failed task attempts (killed ones included).
    pub total: usize,
    /// Distinct causes, of which `groups` holds the most frequent.
    pub causes: usize,
    pub groups: Vec<FailureGroup>,
}

/// The task failures of one cause.
#[derive(Debug, Clone, Serialize)]
pub struct FailureGroup {
    /// Spark's `TaskEndReason`: `ExceptionFailure`, `FetchFailed`, `ExecutorLostFailure`, ...
    pub reason: String,
    pub exception_class: Option<String>,
    pub count: usize,
    /// The first failure's whole message.
    pub message: Option<String>,
    /// The stages it happened in (at most ten).
    pub stage_ids: Vec<i64>,
    /// The executors it happened on (at most ten).
    pub executor_ids: Vec<String>,
}
