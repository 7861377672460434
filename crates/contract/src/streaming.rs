//! The report's `streaming` section: each Structured Streaming query with its micro-batches,
//! the DStreams batches and the Spark Connect operations, with the jobs each ran. Absent for a
//! batch application.

use serde::Serialize;

#[derive(Debug, Clone, Serialize)]
pub struct StreamingOut {
    pub queries: Vec<QueryOut>,
    /// Queries past the model's cap, counted only.
    pub queries_dropped: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dstreams: Option<DStreamsOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connect: Option<ConnectOut>,
}

#[derive(Debug, Clone, Serialize)]
pub struct QueryOut {
    pub id: String,
    pub run_id: String,
    pub name: Option<String>,
    pub started_ms: Option<i64>,
    /// `stopped` (by its program), `failed` (with `exception`), `running` (no termination event
    /// in a log that has not ended) or `ended_with_application` (no termination event, but the
    /// application ended).
    pub status: &'static str,
    /// The last event before the termination event, which carries no time of its own.
    pub terminated_ms: Option<i64>,
    pub exception: Option<String>,
    pub error_class: Option<String>,
    pub sources: Vec<String>,
    pub sink: Option<String>,
    pub progress_events: u64,
    pub idle_events: u64,
    pub input_rows: i64,
    pub max_state_rows: i64,
    pub rows_dropped_by_watermark: i64,
    /// Progress events past the model's per-query cap: in the totals, not in `batches`.
    pub batches_dropped: u64,
    /// The processing-time trigger interval as the batches' start times show it (`null` when
    /// every batch ran back to back, as the default trigger does).
    pub trigger_interval_ms: Option<i64>,
    pub batches: Vec<BatchOut>,
}

impl QueryOut {
    /// The exception's root cause (its innermost `Caused by:`, or the exception itself), as the
    /// views name a failed query.
    pub fn exception_cause(&self) -> Option<&str> {
        self.exception.as_deref().map(exception_cause)
    }
}

/// One progress event, its figures exactly as Spark wrote them.
#[derive(Debug, Clone, Serialize)]
pub struct BatchOut {
    pub batch_id: i64,
    pub timestamp_ms: Option<i64>,
    pub duration_ms: Option<i64>,
    /// `durationMs` by phase (`addBatch`, `getBatch`, `latestOffset`, `queryPlanning`,
    /// `walCommit`, `commitOffsets`, `triggerExecution`, …), only those Spark timed.
    pub duration_parts_ms: std::collections::BTreeMap<&'static str, i64>,
    pub input_rows: i64,
    pub input_rows_per_second: Option<f64>,
    pub processed_rows_per_second: Option<f64>,
    pub sources: Vec<SourceOut>,
    pub sink_output_rows: Option<i64>,
    pub watermark_ms: Option<i64>,
    pub state_operators: Vec<StateOut>,
    /// The jobs the batch ran (job property `streaming.sql.batchId`).
    pub job_ids: Vec<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceOut {
    pub description: String,
    pub input_rows: i64,
    pub input_rows_per_second: Option<f64>,
    pub processed_rows_per_second: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct StateOut {
    pub operator_name: Option<String>,
    pub rows_total: i64,
    pub rows_updated: i64,
    pub rows_removed: Option<i64>,
    pub memory_used_bytes: i64,
    pub rows_dropped_by_watermark: Option<i64>,
    pub shuffle_partitions: Option<i64>,
    pub state_store_instances: Option<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DStreamsOut {
    /// The smallest step between batch times: the batch interval.
    pub batch_interval_ms: Option<i64>,
    pub batches: Vec<DStreamBatchOut>,
    pub batches_dropped: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct DStreamBatchOut {
    pub batch_time_ms: i64,
    pub job_ids: Vec<i64>,
    /// First job's submission minus the batch time: how long the batch waited to start.
    pub scheduling_delay_ms: Option<i64>,
    /// First job's submission to the last job's completion.
    pub processing_ms: Option<i64>,
    /// Batch time to the last job's completion.
    pub total_delay_ms: Option<i64>,
    pub failed_jobs: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConnectOut {
    pub sessions: Vec<ConnectSessionOut>,
    pub operations_dropped: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConnectSessionOut {
    pub session_id: String,
    pub user: Option<String>,
    pub operations: Vec<ConnectOperationOut>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ConnectOperationOut {
    pub operation_id: String,
    pub job_ids: Vec<i64>,
    /// First job's submission to the last job's completion.
    pub duration_ms: Option<i64>,
    pub failed_jobs: usize,
    /// Task time and shuffle of the stage attempts the operation's jobs ran (a stage attempt
    /// counts for the first job that named it), so the operations add up to `summary`'s.
    pub executor_run_time_ms: i64,
    pub shuffle_read_bytes: i64,
    pub shuffle_write_bytes: i64,
}

/// The line of a query's exception that says what went wrong: the innermost `…Error:` or
/// `…Exception:` line (Python's traceback ends with it), else the first line.
pub fn exception_cause(text: &str) -> &str {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let cause = lines.iter().rev().find(|l| {
        !l.starts_with("at ")
            && !l.starts_with("File ")
            && l.split(':').next().is_some_and(|head| {
                !head.contains(' ') && (head.ends_with("Error") || head.ends_with("Exception"))
            })
    });
    cause.or(lines.first()).copied().unwrap_or_default()
}
