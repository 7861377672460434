//! Streaming and Spark Connect applications: what kind of workload an application is, each
//! Structured Streaming query with its micro-batches, each DStreams batch, each Spark Connect
//! session and operation, and which jobs each of them ran.
//!
//! Memory is bounded for a stream that never ends: a query keeps at most
//! [`MAX_BATCHES_PER_QUERY`] batches (the first ones, then every batch folds into the query's
//! running totals only), at most [`MAX_QUERIES`] queries are kept, and so on for DStreams
//! batches and Connect operations.

use sparkdiag_eventlog::streaming::{QueryEvent, QueryProgress};

use crate::model::{Application, JobStatus};

/// Batches kept per query: about 20 minutes of one-second triggers at 100 bytes each.
pub const MAX_BATCHES_PER_QUERY: usize = 20_000;
pub const MAX_QUERIES: usize = 1_000;
pub const MAX_DSTREAM_BATCHES: usize = 50_000;
pub const MAX_CONNECT_OPERATIONS: usize = 50_000;

/// What kind of workload an application is: the contract's vocabulary.
pub use sparkdiag_contract::Workload;

/// Everything streaming and Connect the log holds.
#[derive(Debug, Default)]
pub struct Streaming {
    pub queries: Vec<StreamingQuery>,
    /// Queries seen beyond [`MAX_QUERIES`] (their events are counted, not kept).
    pub queries_dropped: u64,
    /// Jobs a Structured Streaming micro-batch ran (job properties `sql.streaming.queryId` and
    /// `streaming.sql.batchId`), in job order.
    pub query_jobs: Vec<QueryJob>,
    /// DStreams batches by batch time, from job property `spark.streaming.internal.batchTime`.
    pub dstream_batches: Vec<DStreamBatch>,
    pub dstream_batches_dropped: u64,
    /// Jobs described `Streaming job from …` (DStreams' output operations).
    pub dstream_jobs: u64,
    /// Spark Connect operations, from the jobs' `spark.job.tags`.
    pub connect_operations: Vec<ConnectOperation>,
    pub connect_operations_dropped: u64,
    /// Jobs tagged by Spark Connect.
    pub connect_jobs: u64,
    /// The query the last event named: the next one most likely names it too.
    last_query: usize,
}

#[derive(Debug, Clone, Copy)]
pub struct QueryJob {
    pub job_id: i64,
    /// Index into [`Streaming::queries`].
    pub query: u32,
    pub batch_id: i64,
}

/// One run of a Structured Streaming query (`runId`; a restart from the same checkpoint keeps
/// the `id` and gets a new run).
#[derive(Debug, Default)]
pub struct StreamingQuery {
    pub id: String,
    pub run_id: String,
    pub name: Option<String>,
    pub started_ms: Option<i64>,
    /// The end: when it came, and why.
    pub terminated: Option<QueryEnd>,
    /// Source descriptions in order of first appearance; [`SourceBatch::source`] indexes them.
    pub sources: Vec<String>,
    pub sink: Option<String>,
    /// The first [`MAX_BATCHES_PER_QUERY`] progress events, in log order.
    pub batches: Vec<MicroBatch>,
    pub totals: QueryTotals,
    /// `QueryIdleEvent`s: triggers that found no new data (Spark 3.5+).
    pub idle_events: u64,
    pub last_idle_ms: Option<i64>,
}

#[derive(Debug, Clone, Default)]
pub struct QueryEnd {
    /// The last event before the termination: the event has no time of its own.
    pub at_ms: Option<i64>,
    /// `None`: stopped by the program (`query.stop()`, the session's end).
    pub exception: Option<String>,
    pub error_class: Option<String>,
}

/// Running totals over every progress event, kept or not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct QueryTotals {
    pub progress_events: u64,
    /// Progress events that ran a batch (some input, or a new batch id).
    pub input_rows: i64,
    pub batch_duration_ms: i64,
    pub max_state_rows: i64,
    pub rows_dropped_by_watermark: i64,
    pub batches_dropped: u64,
}

/// One `QueryProgressEvent`: exactly its figures, nothing derived.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MicroBatch {
    pub batch_id: i64,
    /// The trigger's time (`timestamp`).
    pub timestamp_ms: Option<i64>,
    /// `batchDuration`, or `durationMs.triggerExecution` before Spark 3.1.
    pub duration_ms: Option<i64>,
    pub parts: BatchParts,
    pub input_rows: i64,
    /// `inputRowsPerSecond` and `processedRowsPerSecond` summed over sources, as
    /// `StreamingQueryProgress` does (`None` when no source had a finite rate).
    pub input_rows_per_second: Option<f64>,
    pub processed_rows_per_second: Option<f64>,
    pub sources: Vec<SourceBatch>,
    /// The sink's `numOutputRows` (`-1` when the sink does not count).
    pub sink_output_rows: Option<i64>,
    /// `eventTime.watermark`, epoch ms (`1970-01-01T00:00:00.000Z` before it first advances).
    pub watermark_ms: Option<i64>,
    pub state: Vec<StateOperatorBatch>,
}

/// `durationMs`, by phase. `None` where this Spark did not time the phase.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct BatchParts {
    pub trigger_execution: Option<i64>,
    pub latest_offset: Option<i64>,
    pub get_offset: Option<i64>,
    pub get_batch: Option<i64>,
    pub query_planning: Option<i64>,
    pub add_batch: Option<i64>,
    pub wal_commit: Option<i64>,
    pub commit_offsets: Option<i64>,
    pub commit_batch: Option<i64>,
    pub set_offset_range: Option<i64>,
}

impl BatchParts {
    /// The overhead around the work itself: planning, offsets and commits.
    pub fn overhead_ms(&self) -> i64 {
        [
            self.latest_offset,
            self.get_offset,
            self.get_batch,
            self.query_planning,
            self.wal_commit,
            self.commit_offsets,
            self.set_offset_range,
        ]
        .iter()
        .flatten()
        .sum()
    }
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct SourceBatch {
    /// Index into [`StreamingQuery::sources`].
    pub source: u32,
    pub input_rows: i64,
    pub input_rows_per_second: Option<f64>,
    pub processed_rows_per_second: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct StateOperatorBatch {
    pub operator_name: Option<String>,
    pub rows_total: i64,
    pub rows_updated: i64,
    pub rows_removed: Option<i64>,
    pub memory_used_bytes: i64,
    pub rows_dropped_by_watermark: Option<i64>,
    pub shuffle_partitions: Option<i64>,
    pub state_store_instances: Option<i64>,
}

/// One DStreams batch: the jobs its output operations ran.
#[derive(Debug, Clone, Default)]
pub struct DStreamBatch {
    pub batch_time_ms: i64,
    pub jobs: Vec<i64>,
    pub output_ops: u32,
}

/// One Spark Connect operation (an `ExecutePlan` request) and the jobs it ran.
#[derive(Debug, Clone, Default)]
pub struct ConnectOperation {
    pub user: Option<String>,
    pub session_id: String,
    pub operation_id: String,
    pub jobs: Vec<i64>,
}

impl Streaming {
    pub(crate) fn on_query_event(&mut self, event: QueryEvent<'_>, last_event_ms: Option<i64>) {
        match event {
            QueryEvent::Started(e) => {
                let q = self.query(&e.id, &e.run_id);
                let Some(q) = q else { return };
                q.name = e.name.map(|n| n.into_owned());
                q.started_ms = e.timestamp.as_deref().and_then(parse_iso_ms);
            }
            QueryEvent::Progress(p) => {
                if let Some(q) = self.query(&p.id, &p.run_id) {
                    if q.name.is_none() {
                        q.name = p.name.as_ref().map(|n| n.to_string());
                    }
                    q.on_progress(&p);
                }
            }
            QueryEvent::Idle(e) => {
                if let Some(q) = self.query(&e.id, &e.run_id) {
                    q.idle_events += 1;
                    q.last_idle_ms = e.timestamp.as_deref().and_then(parse_iso_ms);
                }
            }
            QueryEvent::Terminated(e) => {
                if let Some(q) = self.query(&e.id, &e.run_id) {
                    q.terminated = Some(QueryEnd {
                        at_ms: last_event_ms,
                        exception: e
                            .exception
                            .map(|x| x.into_owned())
                            .filter(|x| !x.is_empty()),
                        error_class: e.error_class.map(|x| x.into_owned()),
                    });
                }
            }
        }
    }

    /// The query run, added on first sight; `None` past [`MAX_QUERIES`].
    fn query(&mut self, id: &str, run_id: &str) -> Option<&mut StreamingQuery> {
        if self
            .queries
            .get(self.last_query)
            .is_some_and(|q| q.run_id == run_id)
        {
            return Some(&mut self.queries[self.last_query]);
        }
        if let Some(i) = self.queries.iter().rposition(|q| q.run_id == run_id) {
            self.last_query = i;
            return Some(&mut self.queries[i]);
        }
        if self.queries.len() >= MAX_QUERIES {
            self.queries_dropped += 1;
            return None;
        }
        self.queries.push(StreamingQuery {
            id: id.to_string(),
            run_id: run_id.to_string(),
            ..StreamingQuery::default()
        });
        self.last_query = self.queries.len() - 1;
        self.queries.last_mut()
    }

    /// Reads a job's streaming and Connect properties.
    pub(crate) fn on_job_start(&mut self, job_id: i64, props: &JobStreamingProps<'_>) {
        if let (Some(query_id), Some(batch)) = (props.query_id, props.batch_id) {
            let batch_id = batch.trim().parse().unwrap_or(-1);
            // The run's id is the job group (`spark.jobGroup.id`); the query id names it otherwise.
            let query = self
                .queries
                .iter()
                .rposition(|q| props.job_group == Some(q.run_id.as_str()))
                .or_else(|| self.queries.iter().rposition(|q| q.id == query_id));
            let query = match query {
                Some(i) => i,
                None if self.queries.len() < MAX_QUERIES => {
                    self.queries.push(StreamingQuery {
                        id: query_id.to_string(),
                        run_id: props.job_group.unwrap_or_default().to_string(),
                        ..StreamingQuery::default()
                    });
                    self.queries.len() - 1
                }
                None => return,
            };
            self.query_jobs.push(QueryJob {
                job_id,
                query: query as u32,
                batch_id,
            });
        }
        if props
            .description
            .is_some_and(|d| d.starts_with("Streaming job from"))
        {
            self.dstream_jobs += 1;
        }
        if let Some(time) = props
            .dstream_batch_time
            .and_then(|t| t.trim().parse::<i64>().ok())
        {
            match self
                .dstream_batches
                .iter()
                .rposition(|b| b.batch_time_ms == time)
            {
                Some(i) => {
                    let batch = &mut self.dstream_batches[i];
                    batch.jobs.push(job_id);
                    batch.output_ops += 1;
                }
                None if self.dstream_batches.len() < MAX_DSTREAM_BATCHES => {
                    self.dstream_batches.push(DStreamBatch {
                        batch_time_ms: time,
                        jobs: vec![job_id],
                        output_ops: 1,
                    });
                }
                None => self.dstream_batches_dropped += 1,
            }
        }
        if let Some(tags) = props.job_tags
            && let Some(op) = connect_operation(tags)
        {
            self.connect_jobs += 1;
            match self
                .connect_operations
                .iter()
                .rposition(|o| o.operation_id == op.operation_id)
            {
                Some(i) => self.connect_operations[i].jobs.push(job_id),
                None if self.connect_operations.len() < MAX_CONNECT_OPERATIONS => {
                    self.connect_operations.push(ConnectOperation {
                        jobs: vec![job_id],
                        ..op
                    })
                }
                None => self.connect_operations_dropped += 1,
            }
        }
    }

    /// The batch (query index, batch id) a job ran for.
    pub fn batch_of_job(&self, job_id: i64) -> Option<(usize, i64)> {
        self.query_jobs
            .binary_search_by_key(&job_id, |j| j.job_id)
            .ok()
            .map(|i| {
                (
                    self.query_jobs[i].query as usize,
                    self.query_jobs[i].batch_id,
                )
            })
    }
}

/// The streaming and Connect properties of one job start.
#[derive(Debug, Default)]
pub(crate) struct JobStreamingProps<'a> {
    pub query_id: Option<&'a str>,
    pub batch_id: Option<&'a str>,
    pub job_group: Option<&'a str>,
    pub description: Option<&'a str>,
    pub dstream_batch_time: Option<&'a str>,
    pub job_tags: Option<&'a str>,
}

/// `SparkConnect_OperationTag_User_<user>_Session_<session>_Operation_<operation>`, one of the
/// comma-separated `spark.job.tags` (Spark 3.5+; `ExecuteHolder.jobTag`).
fn connect_operation(tags: &str) -> Option<ConnectOperation> {
    let tag = tags
        .split(',')
        .find_map(|t| t.trim().strip_prefix("SparkConnect_OperationTag_"))?;
    let rest = tag.strip_prefix("User_")?;
    let (user, rest) = rest.split_once("_Session_")?;
    let (session, operation) = rest.rsplit_once("_Operation_")?;
    Some(ConnectOperation {
        user: Some(user.to_string()).filter(|u| !u.is_empty()),
        session_id: session.to_string(),
        operation_id: operation.to_string(),
        jobs: Vec::new(),
    })
}

impl StreamingQuery {
    fn on_progress(&mut self, p: &QueryProgress<'_>) {
        let totals = &mut self.totals;
        totals.progress_events += 1;
        let input_rows: i64 = p.sources.iter().map(|s| s.num_input_rows).sum();
        totals.input_rows += input_rows;
        let get = |k: &str| p.duration_ms.get(k).copied();
        let duration = p.batch_duration.or(get("triggerExecution"));
        totals.batch_duration_ms += duration.unwrap_or(0);
        let state_rows: i64 = p.state_operators.iter().map(|s| s.num_rows_total).sum();
        totals.max_state_rows = totals.max_state_rows.max(state_rows);
        totals.rows_dropped_by_watermark += p
            .state_operators
            .iter()
            .filter_map(|s| s.num_rows_dropped_by_watermark)
            .sum::<i64>();
        if let Some(sink) = &p.sink
            && self.sink.is_none()
        {
            self.sink = Some(sink.description.to_string());
        }
        if self.batches.len() >= MAX_BATCHES_PER_QUERY {
            totals.batches_dropped += 1;
            return;
        }
        let sources = p
            .sources
            .iter()
            .map(|s| {
                let index = match self.sources.iter().position(|d| *d == s.description) {
                    Some(i) => i,
                    None => {
                        self.sources.push(s.description.to_string());
                        self.sources.len() - 1
                    }
                };
                SourceBatch {
                    source: index as u32,
                    input_rows: s.num_input_rows,
                    input_rows_per_second: s.input_rows_per_second,
                    processed_rows_per_second: s.processed_rows_per_second,
                }
            })
            .collect::<Vec<_>>();
        let sum = |f: fn(&SourceBatch) -> Option<f64>| {
            let rates: Vec<f64> = sources.iter().filter_map(f).collect();
            (!rates.is_empty()).then(|| rates.iter().sum())
        };
        self.batches.push(MicroBatch {
            batch_id: p.batch_id,
            timestamp_ms: p.timestamp.as_deref().and_then(parse_iso_ms),
            duration_ms: duration,
            parts: BatchParts {
                trigger_execution: get("triggerExecution"),
                latest_offset: get("latestOffset"),
                get_offset: get("getOffset"),
                get_batch: get("getBatch"),
                query_planning: get("queryPlanning"),
                add_batch: get("addBatch"),
                wal_commit: get("walCommit"),
                commit_offsets: get("commitOffsets"),
                commit_batch: get("commitBatch"),
                set_offset_range: get("setOffsetRange"),
            },
            input_rows,
            input_rows_per_second: sum(|s| s.input_rows_per_second),
            processed_rows_per_second: sum(|s| s.processed_rows_per_second),
            sources,
            sink_output_rows: p.sink.as_ref().and_then(|s| s.num_output_rows),
            watermark_ms: p.event_time.get("watermark").and_then(|w| parse_iso_ms(w)),
            state: p
                .state_operators
                .iter()
                .map(|s| StateOperatorBatch {
                    operator_name: s.operator_name.as_ref().map(|n| n.to_string()),
                    rows_total: s.num_rows_total,
                    rows_updated: s.num_rows_updated,
                    rows_removed: s.num_rows_removed,
                    memory_used_bytes: s.memory_used_bytes,
                    rows_dropped_by_watermark: s.num_rows_dropped_by_watermark,
                    shuffle_partitions: s.num_shuffle_partitions,
                    state_store_instances: s.num_state_store_instances,
                })
                .collect(),
        });
    }

    /// The name to show: the query's name, else its id.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) if !n.is_empty() => format!("`{n}`"),
            _ => format!("query {}", self.id),
        }
    }

    /// The batches that did work (read rows), as opposed to triggers with nothing new.
    pub fn working_batches(&self) -> impl Iterator<Item = &MicroBatch> {
        self.batches.iter().filter(|b| b.input_rows > 0)
    }

    /// The query failed: it ended with an exception.
    pub fn failed(&self) -> bool {
        self.terminated
            .as_ref()
            .is_some_and(|t| t.exception.is_some())
    }
}

impl Application {
    /// The kind of workload, read from what the application did: Spark Connect operations
    /// (their job tags), Structured Streaming queries, DStreams batches (`Streaming job from …`
    /// jobs), then the interactive sessions; a program that runs its jobs and ends otherwise.
    ///
    /// Properties are only supporting evidence: platforms set them whatever runs. Every
    /// Databricks 13.x cluster loads the Spark Connect plugin and Databricks 9.1 sets
    /// `spark.streaming.*` defaults, so neither makes a job run a Connect server or a DStreams
    /// application. The one exception is a Spark 3.4 Connect server outside Databricks: Spark
    /// tags Connect's jobs only from 3.5 on, so there the plugin is all the log can show.
    pub fn workload(&self) -> Workload {
        let s = &self.streaming;
        if s.connect_jobs > 0 {
            Workload::SparkConnect
        } else if !s.queries.is_empty() {
            Workload::StructuredStreaming
        } else if !s.dstream_batches.is_empty() || s.dstream_jobs > 0 {
            Workload::Dstreams
        } else if self.connect_server_without_tags() {
            Workload::SparkConnect
        } else if self.interactive().is_some() {
            Workload::Interactive
        } else {
            Workload::Batch
        }
    }

    /// The Spark Connect plugin or `spark.connect.*` settings are there.
    fn connect_configured(&self) -> bool {
        self.spark_properties
            .keys()
            .any(|k| k.starts_with("spark.connect."))
            || self
                .spark_properties
                .get("spark.plugins")
                .is_some_and(|p| p.contains("SparkConnectPlugin"))
    }

    /// A Spark 3.4 Connect server outside Databricks, whose jobs carry no Connect tag.
    fn connect_server_without_tags(&self) -> bool {
        self.connect_configured()
            && self.platform() != crate::Platform::Databricks
            && self.spark_version_number() == Some((3, 4))
    }

    /// Why [`Application::workload`] said what it said, in a few words: the events that decided
    /// it, and the platform's defaults that did not.
    pub fn workload_evidence(&self) -> Option<String> {
        let s = &self.streaming;
        let said = match self.workload() {
            Workload::SparkConnect if s.connect_operations.is_empty() => {
                "a Spark Connect server: its plugin is loaded, and Spark 3.4 tags no Connect operation on its jobs".to_string()
            }
            Workload::SparkConnect => {
                let sessions: std::collections::BTreeSet<&str> = s
                    .connect_operations
                    .iter()
                    .map(|o| o.session_id.as_str())
                    .collect();
                format!(
                    "a Spark Connect server: {} operation{} from {} session{}",
                    s.connect_operations.len(),
                    plural(s.connect_operations.len()),
                    sessions.len(),
                    plural(sessions.len())
                )
            }
            Workload::StructuredStreaming => {
                let batches: u64 = s.queries.iter().map(|q| q.totals.progress_events).sum();
                format!(
                    "{} Structured Streaming quer{} with {} progress event{}",
                    s.queries.len(),
                    if s.queries.len() == 1 { "y" } else { "ies" },
                    batches,
                    plural(batches as usize)
                )
            }
            Workload::Dstreams if s.dstream_batches.is_empty() => format!(
                "a DStreams application: {} job{} from `Streaming job from …` output operations",
                s.dstream_jobs,
                plural(s.dstream_jobs as usize)
            ),
            Workload::Dstreams => format!(
                "a DStreams application: {} batch{} (`Streaming job from …`)",
                s.dstream_batches.len(),
                if s.dstream_batches.len() == 1 {
                    ""
                } else {
                    "es"
                }
            ),
            Workload::Interactive => self.interactive()?,
            Workload::Batch => {
                let mut said = self.databricks_job_run_evidence().unwrap_or_default();
                let mut defaults: Vec<&str> = Vec::new();
                if self.connect_configured() {
                    defaults.push("the Spark Connect plugin is loaded, but no Connect operation ran");
                }
                if self
                    .spark_properties
                    .keys()
                    .any(|k| k.starts_with("spark.streaming."))
                {
                    defaults.push("`spark.streaming.*` is set, but no streaming batch ran");
                }
                if !defaults.is_empty() {
                    if said.is_empty() {
                        said = "a program that runs its jobs and ends".to_string();
                    }
                    said.push_str(&format!(". Not streaming or Connect: {}", defaults.join("; ")));
                }
                if said.is_empty() {
                    return None;
                }
                said
            }
        };
        Some(said)
    }

    /// The jobs a program's own stop cancelled: the ones still running when a streaming query
    /// stopped without an exception, when a `StreamingContext` stopped, or when a Connect server
    /// shut down. Their failure is the stop, not a fault.
    pub fn stopped_by_program(&self, job_id: i64) -> bool {
        let Some(job) = self.jobs.iter().find(|j| j.job_id == job_id) else {
            return false;
        };
        if job.status != JobStatus::Failed {
            return false;
        }
        if !cancellation(job) {
            return false;
        }
        match self.workload() {
            Workload::StructuredStreaming => match self.streaming.batch_of_job(job_id) {
                Some((q, _)) => !self.streaming.queries[q].failed(),
                None => false,
            },
            // Unless a job failed for a reason of its own first: then the stop is that
            // failure's doing.
            Workload::Dstreams | Workload::SparkConnect => !self
                .jobs
                .iter()
                .any(|j| j.status == JobStatus::Failed && !cancellation(j)),
            _ => false,
        }
    }
}

impl Application {
    /// The ids of the jobs [`Application::stopped_by_program`] would name, at once: sorted.
    pub fn jobs_stopped_by_program(&self) -> Vec<i64> {
        let workload = self.workload();
        let failed = || self.jobs.iter().filter(|j| j.status == JobStatus::Failed);
        let mut out: Vec<i64> = match workload {
            Workload::StructuredStreaming => failed()
                .filter(|j| cancellation(j))
                .filter(|j| {
                    self.streaming
                        .batch_of_job(j.job_id)
                        .is_some_and(|(q, _)| !self.streaming.queries[q].failed())
                })
                .map(|j| j.job_id)
                .collect(),
            Workload::Dstreams | Workload::SparkConnect => {
                if failed().any(|j| !cancellation(j)) {
                    Vec::new()
                } else {
                    failed().map(|j| j.job_id).collect()
                }
            }
            _ => Vec::new(),
        };
        out.sort_unstable();
        out
    }
}

/// The job failed because something cancelled it (a stop, a shutdown), not in its own tasks.
fn cancellation(job: &crate::model::Job) -> bool {
    let message = job.failure.as_deref().unwrap_or_default();
    message.contains("cancelled")
        || message.contains("canceled")
        || message.contains("SparkContext was shut down")
        || message.contains("SparkContext is stopping")
        || message.contains("interrupted")
}

/// A processing-time trigger's interval, as the batches show it: the median step from one
/// trigger to the next where the earlier batch ended well before the next began (a batch that
/// overruns its trigger is followed at once, and the default trigger runs batches back to back,
/// so neither step says anything about an interval). `None` without two such steps.
pub fn trigger_interval_ms(q: &StreamingQuery) -> Option<i64> {
    let mut gaps: Vec<i64> = q
        .batches
        .windows(2)
        .filter_map(|w| {
            let gap = w[1].timestamp_ms? - w[0].timestamp_ms?;
            let took = w[0].duration_ms?;
            (gap > 0 && took * 10 < gap * 8).then_some(gap)
        })
        .collect();
    if gaps.len() < 2 {
        return None;
    }
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    Some((median + 5) / 10 * 10)
}

pub use sparkdiag_contract::streaming::exception_cause;

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// `2020-07-29T10:56:56.015Z` (what Jackson writes for a progress's `timestamp` and event
/// times, always UTC) as epoch milliseconds.
pub fn parse_iso_ms(text: &str) -> Option<i64> {
    let t = text.trim().strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.splitn(3, '-');
    let year: i64 = d.next()?.parse().ok()?;
    let month: i64 = d.next()?.parse().ok()?;
    let day: i64 = d.next()?.parse().ok()?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut h = hms.splitn(3, ':');
    let hour: i64 = h.next()?.parse().ok()?;
    let minute: i64 = h.next()?.parse().ok()?;
    let second: i64 = h.next()?.parse().ok()?;
    let millis: i64 = format!("{frac:0<3}").get(..3)?.parse().ok()?;
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 {
        return None;
    }
    // Days from civil (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_times_read_as_epoch_milliseconds() {
        assert_eq!(parse_iso_ms("1970-01-01T00:00:00.000Z"), Some(0));
        assert_eq!(
            parse_iso_ms("2020-07-29T10:56:56.015Z"),
            Some(1_596_020_216_015)
        );
        assert_eq!(
            parse_iso_ms("2024-02-29T23:59:59.5Z"),
            Some(1_709_251_199_500)
        );
        assert_eq!(parse_iso_ms("not a time"), None);
    }

    #[test]
    fn a_connect_tag_names_its_user_session_and_operation() {
        let op = connect_operation(
            "other,SparkConnect_OperationTag_User_root_Session_0b4c-77_Operation_9f1e-2a",
        )
        .unwrap();
        assert_eq!(op.user.as_deref(), Some("root"));
        assert_eq!(op.session_id, "0b4c-77");
        assert_eq!(op.operation_id, "9f1e-2a");
        assert!(connect_operation("SparkConnect_SessionTag_x").is_none());
    }
}
