//! The types of the model. Times are epoch milliseconds unless a name says otherwise.

use std::collections::BTreeMap;
use std::ops::Range;

pub use crate::tasks::{StageView, Tasks};

use sparkdiag_eventlog::events::{ExecutorMetrics, SparkPlanInfo, TaskMetrics};

/// The statuses and the platform are the report contract's vocabulary, used here as they are.
pub use sparkdiag_contract::{AppStatus, JobStatus, Platform, Removal, StageStatus};

/// The exit code an executor removal reason names (`exit code 137`, `exited with code 143`,
/// `Exit status: 137`, `exitCode: 137`), if any.
pub fn exit_code_of(reason: &str) -> Option<i64> {
    let lower = reason.to_ascii_lowercase();
    for marker in [
        "exit code",
        "exited with code",
        "exit status",
        "exitcode",
        "exit_code",
    ] {
        if let Some(at) = lower.find(marker) {
            let rest = &lower[at + marker.len()..];
            let digits: String = rest
                .trim_start_matches([':', ' ', '='])
                .chars()
                .take_while(|c| c.is_ascii_digit() || *c == '-')
                .collect();
            if let Ok(code) = digits.parse() {
                return Some(code);
            }
        }
    }
    None
}

/// What an exit code says under `cluster_manager` (`Application::cluster_manager`): a SIGKILL
/// or SIGTERM is a container's memory limit or a preemption only where containers have limits
/// (YARN, Kubernetes); under standalone and local-cluster it is the kernel or a person.
pub fn explain_exit_code_on(code: i64, cluster_manager: Option<&str>) -> Option<&'static str> {
    let containers = matches!(cluster_manager, Some("yarn" | "kubernetes") | None);
    match code {
        137 if !containers => Some(
            "SIGKILL: the kernel's OOM killer or someone's kill -9; this cluster manager puts no memory limit on executors",
        ),
        143 if !containers => {
            Some("SIGTERM: the executor was asked to stop (a kill, or its worker shutting down)")
        }
        _ => explain_exit_code(code),
    }
}

/// What an exit code says, for the codes Spark's executors commonly die with (as under YARN or
/// Kubernetes: [`explain_exit_code_on`] fits the cluster manager).
pub fn explain_exit_code(code: i64) -> Option<&'static str> {
    Some(match code {
        137 => "SIGKILL, usually the OOM killer: the container went over its memory limit",
        143 => {
            "SIGTERM: the cluster manager asked the executor to stop (preemption, a node drain or a kill)"
        }
        134 => "SIGABRT: the JVM aborted (a native crash)",
        139 => "SIGSEGV: a native crash (a UDF library, Arrow, a GPU driver)",
        52 => {
            "the executor's JVM threw OutOfMemoryError (Spark's OOM exit code: its heap, unless the tasks' errors name another pool)"
        }
        53 => "the executor could not create its local directories",
        50 => "an uncaught exception ended the executor",
        _ => return None,
    })
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
    /// Every task end, grouped by stage attempt (see [`StageAttempt::tasks`]), then by task id;
    /// a completed stage's tasks are folded into compressed columns ([`Tasks`]).
    pub tasks: Tasks,
    /// Why each non-successful task ended.
    pub task_failures: Vec<TaskFailure>,
    pub executors: Vec<Executor>,
    pub sql: Vec<SqlExecution>,
    /// Stretches of at least [`CLOCK_JUMP_MS`] with no event at all, as `[start, end)`: the
    /// clock of the machine writing the log jumped, or nothing happened for days.
    pub clock_jumps: Vec<(i64, i64)>,
    /// Events read (of any kind), and how many were Spark's own listener events.
    pub events: u64,
    pub spark_events: u64,
    /// From Databricks' `DBCEventLoggingListenerMetadata`: Spark's version under the runtime.
    pub databricks_spark_version: Option<String>,
    /// The first Databricks notebook a job named (`spark.databricks.notebook.path`).
    pub databricks_notebook: Option<String>,
    /// The Databricks job run (a scheduled or API-submitted run) that started jobs, as the
    /// first job that names one says it.
    pub databricks_job_run: Option<DatabricksJobRun>,
    /// Structured Streaming queries, DStreams batches and Spark Connect operations.
    pub streaming: crate::streaming::Streaming,
}

/// A Databricks job run, from the properties of the jobs it started.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DatabricksJobRun {
    /// `spark.databricks.job.id`.
    pub job_id: Option<String>,
    /// `spark.databricks.job.runId`.
    pub run_id: String,
    /// `spark.databricks.job.type`: `notebook`, `python`, `jar`, `wheel`, …
    pub task_type: Option<String>,
}

/// No event for this long is a clock jump (or days of nothing), not time the application used.
pub const CLOCK_JUMP_MS: i64 = 7 * 86_400_000;

impl Application {
    pub fn platform(&self) -> Platform {
        let any = |prefix: &str| self.spark_properties.keys().any(|k| k.starts_with(prefix));
        if any("spark.databricks.") {
            Platform::Databricks
        } else if any("spark.emr.")
            || self
                .spark_properties
                .values()
                .any(|v| v.contains("/usr/lib/hadoop-lzo") || v.contains("/usr/share/aws/emr/"))
        {
            Platform::Emr
        } else if any("spark.dataproc.") {
            Platform::Dataproc
        } else {
            Platform::Spark
        }
    }

    /// Spark's own version: `SparkListenerLogStart`'s, or Databricks' metadata event's.
    pub fn spark_version(&self) -> Option<&str> {
        self.spark_version
            .as_deref()
            .or(self.databricks_spark_version.as_deref())
    }

    /// (major, minor) of Spark's own version, when the log says it.
    pub fn spark_version_number(&self) -> Option<(u32, u32)> {
        let mut parts = self.spark_version()?.split(['.', '-']);
        let major = parts.next()?.trim().parse().ok()?;
        let minor = parts.next().and_then(|p| p.parse().ok()).unwrap_or(0);
        Some((major, minor))
    }

    /// The application ran Spark SQL / DataFrame queries (not RDD operations only): it logged
    /// a query, or a job ran for one. Spark before 2.0 logs no query events at all, but its
    /// DataFrame jobs still carry `spark.sql.execution.id`.
    pub fn uses_sql(&self) -> bool {
        !self.sql.is_empty() || self.jobs.iter().any(|j| j.sql_execution_id.is_some())
    }

    /// Photon, Databricks' native engine, ran this application's queries.
    pub fn photon(&self) -> bool {
        let prop = |k: &str| self.spark_properties.get(k).map(|v| v.to_ascii_lowercase());
        self.databricks_runtime
            .as_deref()
            .is_some_and(|r| r.to_ascii_lowercase().contains("photon"))
            || prop("spark.databricks.clusterUsageTags.runtimeEngine").as_deref() == Some("photon")
            || prop("spark.databricks.photon.enabled").as_deref() == Some("true")
    }

    /// Why this application is an interactive session (a shell, a notebook, a SQL server, a
    /// Livy session) rather than a batch job, if it is one: its idle time is people thinking.
    pub fn interactive(&self) -> Option<String> {
        let name = self.name.as_deref().unwrap_or_default();
        let lower = name.to_ascii_lowercase();
        const NAMES: &[(&str, &str)] = &[
            ("spark shell", "a spark-shell session"),
            ("pysparkshell", "a pyspark shell session"),
            ("sparkr", "a SparkR session"),
            (
                "databricks shell",
                "a Databricks notebook cluster (Databricks Shell)",
            ),
            (
                "thrift jdbc/odbc server",
                "the Spark Thrift (JDBC/ODBC) server",
            ),
            ("sparksql::", "a spark-sql shell"),
            ("spark-sql", "a spark-sql shell"),
            ("livy-session", "a Livy session"),
            ("zeppelin", "a Zeppelin notebook"),
            ("jupyter", "a Jupyter notebook"),
            ("notebook", "a notebook session"),
        ];
        // A Databricks job cluster also calls itself "Databricks Shell": a scheduled run is batch.
        if self.databricks_job_run_evidence().is_some() {
            return None;
        }
        if let Some((_, what)) = NAMES.iter().find(|(n, _)| lower.contains(n)) {
            return Some(format!("the application `{name}` is {what}"));
        }
        // Code typed at a REPL has a call site without a file: `count at <console>:22` (Scala),
        // `<stdin>` (Python), `<ipython-input-3-…>` (Jupyter).
        if let Some(job) = self.jobs.iter().find(|j| {
            ["at <console>:", "<stdin>", "<ipython-input-"]
                .iter()
                .any(|m| {
                    j.name.contains(m) || j.call_site.as_deref().is_some_and(|c| c.contains(m))
                })
        }) {
            return Some(format!(
                "the application's jobs were typed at a shell (job {}: `{}`)",
                job.job_id,
                job.name.lines().next().unwrap_or_default()
            ));
        }
        if let Some(path) = &self.databricks_notebook {
            return Some(format!(
                "the application ran the Databricks notebook `{path}`"
            ));
        }
        let has = |k: &str| self.spark_properties.contains_key(k);
        if has("spark.livy.spark_major_version") || has("livy.spark.master") {
            return Some("the application is a Livy session".into());
        }
        if has("spark.sql.hive.thriftServer.singleSession")
            || has("spark.hadoop.hive.server2.thrift.port")
        {
            return Some("the application is the Spark Thrift server".into());
        }
        if self
            .spark_properties
            .keys()
            .any(|k| k.starts_with("spark.databricks.notebook."))
        {
            return Some("the application ran Databricks notebooks".into());
        }
        if self
            .spark_properties
            .get("spark.submit.deployMode")
            .map(String::as_str)
            == Some("client")
            && self
                .spark_properties
                .get("spark.app.name")
                .is_some_and(|n| n.contains("shell"))
        {
            return Some(format!("the application `{name}` is a shell session"));
        }
        None
    }

    /// What says this is a Databricks job run (a scheduled or API-submitted job on its own job
    /// cluster) rather than people at a notebook, in a few words; `None` when nothing does.
    /// The jobs' own properties decide first (`spark.databricks.job.runId`, `.id`, `.type`);
    /// the cluster's (`spark.databricks.clusterSource=JOB`, a cluster named `job-N-run-M`,
    /// `spark.databricks.workload.name=JobRun`) back them or stand in when no job started.
    /// Databricks' documentation of cluster tags and job parameters names these.
    pub fn databricks_job_run_evidence(&self) -> Option<String> {
        let property = |k: &str| self.spark_properties.get(k).map(|v| v.trim());
        let cluster_source = property("spark.databricks.clusterSource")
            .or(property("spark.databricks.clusterUsageTags.clusterSource"))
            .filter(|v| v.eq_ignore_ascii_case("job"));
        let cluster_name = property("spark.databricks.clusterUsageTags.clusterName")
            .filter(|n| n.starts_with("job-") && n.contains("-run-"));
        let workload_name =
            property("spark.databricks.workload.name").filter(|v| v.eq_ignore_ascii_case("jobrun"));
        let mut signs: Vec<String> = Vec::new();
        if let Some(run) = &self.databricks_job_run {
            let mut said = match &run.job_id {
                Some(job) => format!("job {job}, run {}", run.run_id),
                None => format!("run {}", run.run_id),
            };
            if let Some(kind) = &run.task_type {
                said.push_str(&format!(", a {kind} task"));
            }
            signs.push(said);
        }
        if cluster_source.is_some() {
            signs.push("spark.databricks.clusterSource=JOB".to_string());
        }
        if let Some(name) = cluster_name {
            signs.push(format!("cluster `{name}`"));
        }
        if workload_name.is_some() {
            signs.push("spark.databricks.workload.name=JobRun".to_string());
        }
        (!signs.is_empty()).then(|| format!("a Databricks job run: {}", signs.join("; ")))
    }

    /// The cluster manager from `spark.master`: `local`, `local-cluster`, `yarn`, `kubernetes`,
    /// `standalone` or `mesos`; `None` when the log does not say.
    pub fn cluster_manager(&self) -> Option<&'static str> {
        let master = self.spark_properties.get("spark.master")?.trim();
        Some(if master.starts_with("local-cluster") {
            "local-cluster"
        } else if master.starts_with("local") {
            "local"
        } else if master.starts_with("yarn") {
            "yarn"
        } else if master.starts_with("k8s://") {
            "kubernetes"
        } else if master.starts_with("spark://") {
            "standalone"
        } else if master.starts_with("mesos://") {
            "mesos"
        } else {
            return None;
        })
    }

    /// Dynamic allocation was on: executors come and go with the load.
    pub fn dynamic_allocation(&self) -> bool {
        self.spark_properties
            .get("spark.dynamicAllocation.enabled")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    }

    /// How `executor` left the application.
    pub fn removal(&self, executor: &Executor) -> Removal {
        let Some(removed) = executor.removed_ms else {
            return Removal::NotRemoved;
        };
        let reason = executor
            .removed_reason
            .as_deref()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if self.end_ms.is_some_and(|end| removed >= end - 1000) {
            return Removal::AtApplicationEnd;
        }
        if reason.contains("decommission") {
            return Removal::Decommissioned;
        }
        if reason.contains("preempt")
            || reason.contains("killed by yarn")
            || reason.contains("killed by the cluster manager")
            || reason.contains("killed by external signal")
            || reason.contains("evicted")
            || reason.contains("spot")
            || reason.contains("node lost")
        {
            return Removal::KilledByClusterManager;
        }
        let explicit = reason.contains("explicit termination request")
            || (reason.contains("killed on request") && self.dynamic_allocation())
            || reason.contains("killed by driver")
            || reason.contains("executor killed by driver")
            || reason.contains("idle");
        if explicit && executor.failed_tasks == 0 {
            return Removal::Released;
        }
        if reason.is_empty() && executor.failed_tasks == 0 {
            return Removal::Released;
        }
        Removal::Lost
    }

    /// What the log lacks or gets wrong, in plain words, for the report's `source.warnings`.
    pub fn log_warnings(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.events == 0 {
            out.push("the log holds no event: there is no application to diagnose".into());
            return out;
        }
        if self.spark_events == 0 {
            out.push(format!(
                "none of the {} JSON records is a Spark listener event: this is not a Spark event log",
                self.events
            ));
            return out;
        }
        if self.start_ms.is_none() {
            out.push("no SparkListenerApplicationStart: the log has no application id, name or start time (a fragment or a damaged log), so no finding is made about the application".into());
        }
        if self.spark_version().is_none() {
            out.push("no SparkListenerLogStart: the Spark version is unknown, so version-specific advice is left out".into());
        }
        for &(from, to) in &self.clock_jumps {
            out.push(format!(
                "no event for {:.1} days ({} to {} epoch ms): the clock jumped or nothing ran; that stretch is left out of every finding's impact, and the run is not replayed (no what-if)",
                (to - from) as f64 / 86_400_000.0,
                from,
                to
            ));
        }
        out
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
                    // A job the program's own stop cancelled (`StreamingContext.stop()` under
                    // a batch) ends the run, it does not fail it.
                    Some(job)
                        if job.status == JobStatus::Failed
                            && self.stopped_by_program(job.job_id) =>
                    {
                        AppStatus::Succeeded
                    }
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

    /// From the start to [`Application::effective_end_ms`], without the clock jumps in it: a
    /// driver whose clock was reset, or an executor whose events carry another day's time,
    /// does not make a run of seconds last years.
    pub fn duration_ms(&self) -> Option<i64> {
        Some(self.span_without_jumps_ms(self.start_ms?, self.effective_end_ms()?))
    }

    /// The milliseconds of `[from, to)` outside every clock jump (0 when `to` is not after
    /// `from`): how long that stretch of the run took as it lived it.
    pub fn span_without_jumps_ms(&self, from: i64, to: i64) -> i64 {
        let jumped: i64 = self
            .clock_jumps
            .iter()
            .map(|&(start, end)| end.min(to).saturating_sub(start.max(from)).max(0))
            .sum();
        to.saturating_sub(from).saturating_sub(jumped).max(0)
    }

    /// The core time the executors held and the part their tasks used: cores times each
    /// executor's life, from its registration (or the start) to its removal (or the end),
    /// without clock jumps; the driver counts only in local mode, where it runs the tasks.
    /// `None` for a log without an end or a last event.
    pub fn executor_core_ms(&self) -> Option<CoreTime> {
        let end = self.effective_end_ms()?;
        let local = self.executors.iter().all(|e| e.id == "driver");
        let mut time = CoreTime::default();
        for e in self.executors.iter().filter(|e| local || e.id != "driver") {
            let (Some(cores), Some(added)) = (e.cores, e.added_ms.or(self.start_ms)) else {
                continue;
            };
            time.held += cores * self.span_without_jumps_ms(added, e.removed_ms.unwrap_or(end));
            time.busy += e.task_time_ms;
        }
        Some(time)
    }

    pub fn stage_tasks(&self, stage: &StageAttempt) -> StageView<'_> {
        self.tasks.at_positions(&stage.tasks)
    }

    /// Each of `stage`'s task ends, in no set order, without unfolding the whole stage
    /// ([`Tasks::for_each_at_positions`]).
    pub fn for_each_stage_task(&self, stage: &StageAttempt, each: impl FnMut(&Task)) {
        self.tasks.for_each_at_positions(&stage.tasks, each)
    }

    pub fn executor(&self, task: &Task) -> &Executor {
        &self.executors[task.executor as usize]
    }

    /// Wall-clock time during which at least one job ran (the union of job intervals), and the
    /// rest of the application's time, when only the driver was working; clock jumps are in
    /// neither.
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
                covered = covered.saturating_add(self.span_without_jumps_ms(s, e));
                reach = e;
            }
        }
        // A clock jump is neither the jobs' time nor the driver's.
        let total = self.span_without_jumps_ms(start, end);
        (covered, total.saturating_sub(covered))
    }
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
    /// The library that started the job rather than the program itself (`MLlib's
    /// RandomForest`), from its last stage's stack: a library's own jobs are no loop of the
    /// user's.
    pub library: Option<String>,
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
    /// This attempt's positions in [`Application::tasks`], in the order [`Tasks::iter`] gives.
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

/// How close to its data the scheduler placed a task (`Task Info.Locality`), best first: a task
/// placed further than its stage's others read its input or shuffle blocks over the network, and
/// the scheduler held it back for `spark.locality.wait` at each level before.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Locality {
    ProcessLocal,
    NodeLocal,
    NoPref,
    RackLocal,
    Any,
    /// Not in the log (a task end without it, or a level this reader does not know).
    #[default]
    Unknown,
}

impl Locality {
    /// The level as Spark writes it (`PROCESS_LOCAL`).
    pub fn parse(text: &str) -> Locality {
        match text {
            "PROCESS_LOCAL" => Locality::ProcessLocal,
            "NODE_LOCAL" => Locality::NodeLocal,
            "NO_PREF" => Locality::NoPref,
            "RACK_LOCAL" => Locality::RackLocal,
            "ANY" => Locality::Any,
            _ => Locality::Unknown,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Locality::ProcessLocal => "PROCESS_LOCAL",
            Locality::NodeLocal => "NODE_LOCAL",
            Locality::NoPref => "NO_PREF",
            Locality::RackLocal => "RACK_LOCAL",
            Locality::Any => "ANY",
            Locality::Unknown => "unknown",
        }
    }

    /// The 3 bits it is folded into.
    pub fn code(self) -> u8 {
        self as u8
    }

    pub fn from_code(code: u8) -> Locality {
        match code {
            0 => Locality::ProcessLocal,
            1 => Locality::NodeLocal,
            2 => Locality::NoPref,
            3 => Locality::RackLocal,
            4 => Locality::Any,
            _ => Locality::Unknown,
        }
    }
}

/// One task end, as the stages still running keep it (a completed stage folds its tasks).
#[derive(Debug, Clone, Copy, PartialEq)]
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
    pub locality: Locality,
    /// Time the driver spent fetching a large result (History Server's `gettingResultTime`).
    pub getting_result_ms: u32,
    pub metrics: TaskMetricsCompact,
}

/// The per-task metrics the diagnosis and the task quantiles use.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct TaskMetricsCompact {
    pub run_ms: u32,
    pub deserialize_ms: u32,
    pub gc_ms: u32,
    pub result_serialization_ms: u32,
    pub fetch_wait_ms: u32,
    /// Executor CPU time in whole milliseconds (rounded down); `None` where the log reports
    /// none (Spark before 2.1 writes no CPU time) or zero. Kept no finer: nothing reads a
    /// task's CPU time finer than a millisecond, and its nanoseconds, random in their low
    /// digits, were three of the eight bytes a folded task took.
    pub cpu_ms: Option<u32>,
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
    pub shuffle_read_records: u64,
    pub shuffle_write_bytes: u64,
    // Not kept task by task, because nothing reads them so (the stage's totals, summed from
    // every task end as it is read, keep each one: `MetricTotals`): the shuffle write time,
    // whose nanoseconds cost almost three bytes of a folded task, the remote share of the
    // shuffle read and the records written to the shuffle. Each is 8 bytes of every task of
    // the stages in flight and of the stage a look unfolds.
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
            cpu_ms: (m.executor_cpu_time > 0)
                .then(|| (m.executor_cpu_time / 1_000_000).min(i64::from(u32::MAX)) as u32),
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
            shuffle_read_records: n(m.shuffle_read.total_records_read),
            shuffle_write_bytes: n(m.shuffle_write.bytes_written),
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
    /// The innermost `Caused by:` of the exception's full stack trace, without that prefix
    /// (`java.io.IOException: Could not read footer for file ...` under a wrapper such as
    /// `SparkException: Exception thrown in awaitResult`); `None` when nothing wraps it.
    pub root_cause: Option<String>,
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
    /// Where the query was called from (the driver's stack), compressed once the execution
    /// ended.
    pub details: crate::PackedText,
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    /// `SQLExecutionEnd.errorMessage` when it is not empty.
    pub error: Option<String>,
    /// The plan text at submission (`EXPLAIN FORMATTED` style), compressed once the execution
    /// ended.
    pub plan_description: crate::PackedText,
    pub plan: Option<SparkPlanInfo>,
    /// The last adaptive (AQE) re-plan's text, if any, compressed once the execution ended.
    pub final_plan_description: Option<crate::PackedText>,
    pub final_plan: Option<SparkPlanInfo>,
    pub job_ids: Vec<i64>,
    /// SQL metric values set on the driver (`SparkListenerDriverAccumUpdates`).
    pub driver_metrics: Vec<(i64, i64)>,
}

/// A plan node's measured SQL metrics, by metric name.
pub type NodeMetrics = sparkdiag_contract::SqlMetrics;

/// The stages that updated one SQL metric accumulator: nearly always one, held in place (a log
/// of thousands of queries has tens of thousands of accumulators, and a heap block each was
/// two megabytes while the rules ran).
pub type UpdatingStages = smallvec::SmallVec<[i64; 1]>;

/// Every SQL metric accumulator's final value and the stages that updated it.
#[derive(Debug, Default)]
pub struct SqlMetricValues {
    /// Accumulator id -> (value, stage ids).
    pub values: std::collections::HashMap<i64, (i64, UpdatingStages)>,
}

impl SqlMetricValues {
    /// Accumulator ids are unique within an application; the value a stage reports is the
    /// driver's merged total so far, so the largest is the final one.
    pub fn new(app: &Application) -> SqlMetricValues {
        let mut values: std::collections::HashMap<i64, (i64, UpdatingStages)> =
            std::collections::HashMap::new();
        for stage in &app.stages {
            for &(id, value) in &stage.sql_metrics {
                let entry = values.entry(id).or_insert((value, UpdatingStages::new()));
                entry.0 = entry.0.max(value);
                if !entry.1.contains(&stage.stage_id) {
                    entry.1.push(stage.stage_id);
                }
            }
        }
        SqlMetricValues { values }
    }

    /// A plan node's measured metrics, by name (driver-side updates of `sql` included).
    pub fn of_node(&self, node: &SparkPlanInfo, sql: &SqlExecution) -> NodeMetrics {
        let measured: Vec<(sparkdiag_eventlog::CompactString, i64)> = node
            .metrics
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
            .collect();
        // Exactly as long as the node's metrics: a vector grown from nothing holds four.
        let mut metrics = NodeMetrics::with_capacity(measured.len());
        for (name, value) in measured {
            metrics.insert(name, value);
        }
        metrics
    }
}

impl SqlExecution {
    /// The plan that ran: the last adaptive re-plan, or the plan at submission.
    pub fn plan_that_ran(&self) -> Option<&SparkPlanInfo> {
        self.final_plan.as_ref().or(self.plan.as_ref())
    }

    /// Lets go of the plan at submission where an adaptive re-plan replaced it, once what reads
    /// it is done (the stage shapes, the rules, and `diff`, which tells queries apart by it):
    /// the report's SQL section and the charts read only the plan that ran.
    pub fn let_go_of_replaced_plan(&mut self) {
        if self.final_plan.is_some() {
            self.plan = None;
        }
    }

    /// Compresses the texts read only by the analysis, once no event will replace them.
    pub fn pack_texts(&mut self) {
        self.details.pack();
        self.plan_description.pack();
        if let Some(text) = &mut self.final_plan_description {
            text.pack();
        }
    }

    /// The text of the plan that ran: the last adaptive re-plan's, or the one at submission.
    pub fn plan_text_that_ran(&self) -> std::borrow::Cow<'_, str> {
        self.final_plan_description
            .as_ref()
            .unwrap_or(&self.plan_description)
            .text()
    }
}

/// Executor core time over an application, in core-milliseconds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CoreTime {
    /// Cores times the executors' lives.
    pub held: i64,
    /// Their tasks' run time.
    pub busy: i64,
}

impl CoreTime {
    /// Held and not used by a task.
    pub fn idle(self) -> i64 {
        (self.held - self.busy).max(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_kill_means_a_memory_limit_only_where_containers_have_one() {
        for manager in [Some("yarn"), Some("kubernetes"), None] {
            assert!(
                explain_exit_code_on(137, manager)
                    .unwrap()
                    .contains("container")
            );
        }
        for manager in [Some("standalone"), Some("local-cluster")] {
            let said = explain_exit_code_on(137, manager).unwrap();
            assert!(
                said.contains("kill -9") && !said.contains("container went"),
                "{said}"
            );
            assert!(
                !explain_exit_code_on(143, manager)
                    .unwrap()
                    .contains("preemption")
            );
        }
        assert_eq!(
            explain_exit_code_on(52, Some("standalone")),
            explain_exit_code(52)
        );
    }

    #[test]
    fn a_duration_leaves_out_the_clock_jumps_inside_it_only() {
        let day = 86_400_000;
        let app = Application {
            start_ms: Some(10 * day),
            end_ms: Some(800 * day + 8_000),
            // One jump before the start (another run's events), one inside the run.
            clock_jumps: vec![(day, 10 * day), (10 * day + 5_000, 800 * day)],
            ..Application::default()
        };
        assert_eq!(app.duration_ms(), Some(13_000));
        assert_eq!(app.span_without_jumps_ms(0, 10 * day + 6_000), day + 5_000);
        assert_eq!(app.span_without_jumps_ms(800 * day, 10 * day), 0);
        assert_eq!(
            app.span_without_jumps_ms(i64::MIN, i64::MAX),
            i64::MAX - 799 * day + 5_000
        );
    }

    fn job(id: i64, start: i64, end: Option<i64>) -> Job {
        Job {
            library: None,
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
        assert!(std::mem::size_of::<Task>() <= 168);
    }
}
