//! The JSON report, field for field as `BRIEF.md`'s contract; extra fields are marked.

use serde::Serialize;
use sparkdiag_eventlog::SourceReport;
use sparkdiag_facts::StageStats;
use sparkdiag_model::{
    AppStatus, Application, JobStatus, Platform, SparkPlanInfo, StageAttempt, StageStatus,
};
use sparkdiag_rules::Finding;
use sparkdiag_whatif::Replayed;

pub const SCHEMA: &str = "sparkdiag/report/v1";

#[derive(Debug, Serialize)]
pub struct Report {
    pub schema: &'static str,
    pub source: Source,
    pub application: ApplicationOut,
    pub summary: Summary,
    pub jobs: Vec<JobOut>,
    pub stages: Vec<StageOut>,
    pub executors: Vec<ExecutorOut>,
    pub sql: Vec<SqlOut>,
    /// Ranked by severity, most severe first, then by `impact_ms`, most recoverable time first:
    /// a failure or a stream falling behind (which claim no time saved) leads the savings below it.
    pub findings: Vec<FindingOut>,
    /// What bounds the run and what more or fewer cores would change (a replay of the log's own
    /// tasks); absent when the log has no application start or no tasks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what_if: Option<sparkdiag_whatif::WhatIf>,
    /// Added in v1: each Structured Streaming query and its micro-batches, the DStreams batches,
    /// the Spark Connect sessions and operations; absent for other workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<crate::streaming::StreamingOut>,
    /// Each executor's and the driver's memory peaks against the memory configured (additive,
    /// see docs/memory.md); absent when the log has no executor memory metrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<sparkdiag_facts::memory_figures::MemoryFigures>,
    /// The prices the report was made with. Not serialised: each figure they price carries
    /// its own money (`impact_cost`, `impact_memory_cost`); the night's tables price the
    /// run's core-hours with them.
    #[serde(skip)]
    pub prices: Prices,
}

/// A finding as the report shows it: the rule's finding, plus its cost when a price is known.
#[derive(Debug, Serialize)]
pub struct FindingOut {
    #[serde(flatten)]
    pub finding: Finding,
    /// `impact_ms` on every core the application had, in core-hours.
    pub impact_core_hours: f64,
    /// `impact_core_hours` at `--price-per-core-hour`, when given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impact_cost: Option<f64>,
    /// Added in v1: the GB-hours a memory right-sizing saves (`evidence.gb_hours_saved`:
    /// container memory given back x executor lifetime) at `--price-per-gb-hour`, when given.
    /// Money, not time: it never enters the "saves" column nor `impact_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impact_memory_cost: Option<f64>,
    /// Added in v1: what the impact is. `saving`: wall-clock time the fix recovers;
    /// `lost`: time the run lost (a failed job), an outcome, not a saving; `cost`: paid-for
    /// core-hours, not wall-clock time (`impact_ms` 0, `impact_core_hours` the cost); `none`.
    pub impact_kind: &'static str,
}

impl FindingOut {
    /// What the views show in their "saves" column: "~1m 3s", "lost ~5m", "~2.1 core-h",
    /// "in DR002" (the same fix as that finding, whose saving it is), "-".
    pub fn impact_label(&self, duration: impl Fn(i64) -> String) -> String {
        match self.impact_kind {
            "saving" => format!("~{}", duration(self.finding.impact_ms)),
            "lost" => format!("lost ~{}", duration(self.finding.impact_ms)),
            "cost" if self.impact_core_hours < 0.1 => {
                format!("~{:.2} core-h", self.impact_core_hours)
            }
            "cost" => format!("~{:.1} core-h", self.impact_core_hours),
            // The same fix as an earlier finding, whose saving it is.
            _ => match self.finding.evidence.get("same_change_as") {
                Some(serde_json::Value::String(rule)) => format!("in {rule}"),
                _ => "-".into(),
            },
        }
    }
}

#[derive(Debug, Serialize)]
pub struct Source {
    /// What the user named.
    pub inputs: Vec<String>,
    pub layout: &'static str,
    pub files: Vec<SourceFile>,
    /// Every event Spark wrote was read: the application ended, nothing cut, skipped or missing.
    pub complete: bool,
    pub in_progress: bool,
    pub truncated: bool,
    pub malformed_lines: u64,
    pub unknown_events: std::collections::BTreeMap<String, u64>,
    pub warnings: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct SourceFile {
    pub path: String,
    pub codec: Option<&'static str>,
    pub bytes: u64,
    pub decoded_bytes: u64,
    pub events: u64,
}

#[derive(Debug, Serialize)]
pub struct ApplicationOut {
    pub id: Option<String>,
    pub name: Option<String>,
    pub attempt_id: Option<String>,
    pub user: Option<String>,
    /// Spark's own version, or on Databricks logs without one the Databricks Runtime.
    pub spark_version: Option<String>,
    pub databricks_runtime: Option<String>,
    pub platform: Platform,
    pub start_ms: Option<i64>,
    /// `null` when the log has no application end.
    pub end_ms: Option<i64>,
    /// To the end event, or to the last event of an incomplete log.
    pub duration_ms: Option<i64>,
    pub status: AppStatus,
    pub exit_code: Option<i64>,
    /// Why this is an interactive session (a shell, a notebook, the Thrift server, Livy), when it
    /// is one: its idle time is people between commands, not a defect.
    pub interactive: Option<String>,
    /// Added in v1: `batch`, `interactive`, `structured_streaming`, `dstreams` or
    /// `spark_connect`; the batch-only rules (driver loop, idle cores) stay quiet on all but
    /// `batch`.
    pub workload: sparkdiag_model::Workload,
    /// Why `workload` is what it is (`null` for `batch`).
    pub workload_evidence: Option<String>,
    /// `sql` when the application ran Spark SQL / DataFrame queries, else `rdd`.
    pub api: &'static str,
    /// Databricks' Photon engine ran it.
    pub photon: bool,
    pub dynamic_allocation: bool,
    /// From `spark.master`: `local`, `local-cluster`, `yarn`, `kubernetes`, `standalone`, `mesos`.
    pub cluster_manager: Option<&'static str>,
    /// Added in v1: `status` with the jobs that failed, for people: "succeeded, 1 of 5 jobs
    /// failed". A driver that catches a job's failure still exits 0 and the application counts
    /// as succeeded; this keeps that from reading as a clean run.
    pub outcome: String,
}

#[derive(Debug, Serialize)]
pub struct Summary {
    pub jobs: usize,
    pub failed_jobs: usize,
    pub stages: usize,
    pub failed_stages: usize,
    pub skipped_stages: usize,
    pub tasks: usize,
    pub failed_tasks: usize,
    pub killed_tasks: usize,
    pub executors: usize,
    pub executor_run_time_ms: i64,
    pub executor_cpu_time_ms: i64,
    pub jvm_gc_time_ms: i64,
    pub shuffle_read_bytes: i64,
    pub shuffle_write_bytes: i64,
    pub memory_spill_bytes: i64,
    pub disk_spill_bytes: i64,
    pub input_bytes: i64,
    pub output_bytes: i64,
    pub driver_time_ms: i64,
    pub job_time_ms: i64,
    /// What every finding's fix applied together saves: the what-if's replay of the run with
    /// every replayable change (`what_if.scenarios[]` with `every_fix`) against its replay of
    /// today's run; never more than `application.duration_ms`.
    pub recoverable_ms: i64,
    /// Added in v1: the time-saving findings whose change the replay cannot model (a plan
    /// rewrite), their bounded estimates added up (each millisecond counted once).
    pub estimated_beyond_replay_ms: i64,
}

#[derive(Debug, Serialize)]
pub struct JobOut {
    pub job_id: i64,
    pub name: String,
    pub description: Option<String>,
    pub job_group: Option<String>,
    pub sql_execution_id: Option<i64>,
    pub status: JobStatus,
    pub submission_ms: Option<i64>,
    pub completion_ms: Option<i64>,
    pub duration_ms: Option<i64>,
    pub stage_ids: Vec<i64>,
    pub num_tasks: i64,
    pub completed_tasks: i64,
    pub failed_tasks: i64,
    pub killed_tasks: i64,
    pub skipped_tasks: i64,
    pub completed_stages: usize,
    pub skipped_stages: usize,
    pub failed_stages: i64,
    pub failure: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct StageOut {
    pub stage_id: i64,
    pub attempt_id: i64,
    pub name: String,
    pub status: StageStatus,
    pub num_tasks: i64,
    pub completed_tasks: i64,
    pub failed_tasks: i64,
    pub killed_tasks: i64,
    pub submission_ms: Option<i64>,
    pub completion_ms: Option<i64>,
    pub duration_ms: Option<i64>,
    /// Over successful tasks, History Server quantiles.
    pub task_duration_ms: Option<Quantiles>,
    pub executor_run_time_ms: i64,
    pub executor_cpu_time_ms: i64,
    pub jvm_gc_time_ms: i64,
    pub shuffle_read_bytes: i64,
    pub shuffle_read_records: i64,
    pub shuffle_write_bytes: i64,
    pub shuffle_write_records: i64,
    pub input_bytes: i64,
    pub input_records: i64,
    pub output_bytes: i64,
    pub output_records: i64,
    pub memory_spill_bytes: i64,
    pub disk_spill_bytes: i64,
    pub peak_execution_memory_bytes: i64,
    pub job_ids: Vec<i64>,
    pub failure_reason: Option<String>,
}

#[derive(Debug, Serialize, PartialEq)]
pub struct Quantiles {
    pub min: u32,
    pub p25: u32,
    pub p50: u32,
    pub p75: u32,
    pub p95: u32,
    pub max: u32,
}

#[derive(Debug, Serialize)]
pub struct ExecutorOut {
    pub executor_id: String,
    pub host: String,
    pub cores: Option<i64>,
    pub added_ms: Option<i64>,
    pub removed_ms: Option<i64>,
    pub removed_reason: Option<String>,
    /// How it left: released, decommissioned, killed by the cluster manager, lost, ...
    pub removal: sparkdiag_model::Removal,
    /// The exit code its removal reason names, if any.
    pub exit_code: Option<i64>,
    pub task_time_ms: i64,
    pub run_time_ms: i64,
    pub jvm_gc_time_ms: i64,
    pub total_tasks: i64,
    pub completed_tasks: i64,
    pub failed_tasks: i64,
    pub killed_tasks: i64,
    pub input_bytes: i64,
    pub shuffle_read_bytes: i64,
    pub shuffle_write_bytes: i64,
    pub memory_spill_bytes: i64,
    pub disk_spill_bytes: i64,
    pub max_memory_bytes: Option<i64>,
    pub peak_jvm_heap_bytes: Option<i64>,
}

#[derive(Debug, Serialize)]
pub struct SqlOut {
    pub execution_id: i64,
    pub description: String,
    pub start_ms: Option<i64>,
    pub end_ms: Option<i64>,
    pub error: Option<String>,
    /// Shuffle `Exchange` operators in the plan that ran (the final AQE plan when there is one).
    pub exchanges: usize,
    /// The plan that ran, node by node (pre-order), with the SQL metrics the log measured.
    pub plan_nodes: Vec<PlanNodeOut>,
    /// Each shuffle `Exchange` with the stages that wrote and read it.
    pub exchange_stages: Vec<ExchangeStagesOut>,
    pub job_ids: Vec<i64>,
}

#[derive(Debug, Serialize)]
pub struct PlanNodeOut {
    /// Spark's own node id, as its UI's plan graph and the History Server's `/sql` REST API
    /// number them (`SparkPlanGraph`): wrappers such as `InputAdapter` and AQE query stages are
    /// left out of `plan_nodes`, as Spark leaves them out of its graph.
    pub index: usize,
    pub name: String,
    /// SQL metric name -> value (sizes in bytes, timings in ms as Spark records them).
    pub metrics: std::collections::BTreeMap<String, i64>,
    /// Stages whose tasks updated this node's metrics: where it ran.
    pub stage_ids: Vec<i64>,
}

#[derive(Debug, Serialize)]
pub struct ExchangeStagesOut {
    /// The Exchange's Spark node id (`plan_nodes[].index`).
    pub node: usize,
    pub writer_stage_ids: Vec<i64>,
    pub reader_stage_ids: Vec<i64>,
    pub shuffle_bytes_written: Option<i64>,
    pub shuffle_records_written: Option<i64>,
}

impl Report {
    /// `replayed` holds the rules' findings as the what-if replay left them, with that replay
    /// (`sparkdiag_whatif::replayed`; the caller runs it, so building the report computes
    /// nothing a rule or the replay decides). `cores` is the application's peak executor cores,
    /// which turns recoverable wall-clock time into core-hours (and, with `prices`, money). `stats` are the stages' statistics the rules took (indexed like `app.stages`;
    /// [`sparkdiag_facts::stage_stats`] without the rules): the report reads those rather than
    /// every stage's tasks again.
    pub fn new(
        inputs: &[String],
        source: &SourceReport,
        app: &Application,
        replayed: Replayed,
        cores: i64,
        prices: &Prices,
        stats: &[StageStats],
    ) -> Report {
        debug_assert_eq!(
            stats.len(),
            app.stages.len(),
            "statistics of another application"
        );
        let Replayed {
            mut findings,
            what_if,
            recoverable_ms: replayed_ms,
        } = replayed;
        // Ranked again by the replayed savings.
        findings.sort_by(|a, b| {
            a.severity
                .cmp(&b.severity)
                .then(b.impact_ms.cmp(&a.impact_ms))
                .then(a.rule.cmp(b.rule))
        });
        let estimated_beyond_replay_ms: i64 = findings
            .iter()
            .filter(|f| f.cost_core_hours.is_none() && !sparkdiag_rules::is_outcome(f.rule))
            .filter(|f| !f.counterfactual.as_ref().is_some_and(|c| c.replayed))
            .map(|f| f.impact_ms)
            .sum();
        let runtime = app.duration_ms().unwrap_or(0).max(0);
        Report {
            schema: SCHEMA,
            source: {
                let mut out = source_out(inputs, source);
                out.warnings.extend(app.log_warnings());
                out
            },
            application: application_out(app),
            summary: Summary {
                recoverable_ms: replayed_ms.min(runtime),
                estimated_beyond_replay_ms: estimated_beyond_replay_ms
                    .min(runtime - replayed_ms.min(runtime)),
                ..summary(app, stats)
            },
            jobs: app.jobs.iter().map(job_out).collect(),
            stages: app
                .stages
                .iter()
                .zip(stats)
                .map(|(s, stats)| stage_out(app, s, stats))
                .collect(),
            executors: app.executors.iter().map(|e| executor_out(app, e)).collect(),
            sql: {
                let metrics = sparkdiag_model::SqlMetricValues::new(app);
                app.sql.iter().map(|s| sql_out(s, &metrics)).collect()
            },
            findings: findings
                .into_iter()
                .map(|finding| {
                    let core_hours = finding
                        .cost_core_hours
                        .unwrap_or(finding.impact_ms as f64 * cores as f64 / 3_600_000.0);
                    let impact_kind = if finding.cost_core_hours.is_some() {
                        "cost"
                    } else if finding.impact_ms <= 0 {
                        "none"
                    } else if sparkdiag_rules::is_outcome(finding.rule) {
                        "lost"
                    } else {
                        "saving"
                    };
                    let gb_hours = finding
                        .evidence
                        .get("gb_hours_saved")
                        .and_then(|v| v.as_f64());
                    FindingOut {
                        impact_kind,
                        impact_core_hours: (core_hours * 1000.0).round() / 1000.0,
                        impact_cost: prices.per_core_hour.map(|p| cents(core_hours * p)),
                        impact_memory_cost: prices
                            .per_gb_hour
                            .zip(gb_hours)
                            .map(|(p, gb_hours)| cents(gb_hours * p)),
                        finding,
                    }
                })
                .collect(),
            what_if,
            streaming: crate::streaming::streaming_out(app),
            memory: sparkdiag_facts::memory_figures::MemoryFigures::of(app),
            prices: *prices,
        }
    }
}

impl Report {
    /// Rows the stages read from their input: the basis on which `diff` and the night's likely
    /// causes say the data grew (a Parquet scan's bytes count only part of what it read).
    pub fn input_rows(&self) -> i64 {
        self.stages.iter().map(|s| s.input_records).sum()
    }
}

/// Input within this factor of the earlier run's (either way) did not grow or shrink, for
/// `diff`'s causes and the night's likely causes alike.
pub const GROWTH_FACTOR: f64 = 1.10;

/// What a core-hour and a GB-hour cost, to give money beside time. Neither is ever added to the
/// time saved.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Prices {
    /// Prices each finding's recoverable core-hours into `impact_cost`.
    pub per_core_hour: Option<f64>,
    /// Prices memory right-sizing's GB-hours saved (`evidence.gb_hours_saved`: GiB of executor
    /// container memory times executor lifetime, as cloud price lists count memory) into
    /// `impact_memory_cost`.
    pub per_gb_hour: Option<f64>,
}

impl Prices {
    /// `price` if it can be one: a finite amount of 0 or more. A negative or NaN price would
    /// turn every saving into a cost (or into nothing) without a word, so it is refused.
    pub fn check(price: f64) -> Result<f64, String> {
        if price.is_finite() && price >= 0.0 {
            Ok(price)
        } else {
            Err(format!("a price is an amount of 0 or more, got {price}"))
        }
    }
}

/// Money rounded to cents.
fn cents(amount: f64) -> f64 {
    (amount * 100.0).round() / 100.0
}

fn source_out(inputs: &[String], s: &SourceReport) -> Source {
    Source {
        inputs: inputs.to_vec(),
        layout: s.layout.name(),
        files: s
            .files
            .iter()
            .map(|f| SourceFile {
                path: f.path.clone(),
                codec: f.codec.map(|c| c.name()),
                bytes: f.bytes,
                decoded_bytes: f.decoded_bytes,
                events: f.events,
            })
            .collect(),
        complete: s.complete(),
        in_progress: s.in_progress,
        truncated: s.truncated,
        malformed_lines: s.malformed_lines,
        unknown_events: s.unknown_events.clone(),
        warnings: s.warnings.clone(),
    }
}

fn application_out(app: &Application) -> ApplicationOut {
    ApplicationOut {
        id: app.id.clone(),
        name: app.name.clone(),
        attempt_id: app.attempt_id.clone(),
        user: app.user.clone(),
        spark_version: app
            .spark_version()
            .map(str::to_string)
            .or_else(|| app.databricks_runtime.clone()),
        databricks_runtime: app.databricks_runtime.clone(),
        platform: app.platform(),
        start_ms: app.start_ms,
        end_ms: app.end_ms,
        duration_ms: app.duration_ms(),
        status: app.status(),
        exit_code: app.exit_code,
        interactive: app.interactive(),
        workload: app.workload(),
        workload_evidence: app.workload_evidence(),
        api: if app.uses_sql() { "sql" } else { "rdd" },
        photon: app.photon(),
        dynamic_allocation: app.dynamic_allocation(),
        cluster_manager: app.cluster_manager(),
        outcome: {
            // Jobs the program's own stop cancelled are not failures (streaming workloads).
            let stopped = app.jobs_stopped_by_program();
            let failed = app
                .jobs
                .iter()
                .filter(|j| j.status == JobStatus::Failed)
                .count();
            let text = outcome(app.status(), app.jobs.len(), failed - stopped.len());
            match stopped.len() {
                0 => text,
                n => format!(
                    "{text}; {n} job{} cancelled by the program's stop",
                    if n == 1 { "" } else { "s" }
                ),
            }
        },
    }
}

impl Report {
    /// The stage attempts that ran, longest first.
    pub fn longest_stages(&self) -> Vec<&StageOut> {
        let mut stages: Vec<&StageOut> = self
            .stages
            .iter()
            .filter(|s| s.duration_ms.is_some())
            .collect();
        stages.sort_by_key(|s| std::cmp::Reverse(s.duration_ms));
        stages
    }
}

/// An enum value as the JSON spells it (`"succeeded"`, `"high"`): serde's name is the only
/// one, so views and tables print what the JSON says.
pub fn enum_name(value: impl Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

/// "succeeded", "succeeded, 1 of 5 jobs failed", "failed, 2 of 2 jobs failed".
pub fn outcome(status: AppStatus, jobs: usize, failed_jobs: usize) -> String {
    let status = match status {
        AppStatus::Succeeded => "succeeded",
        AppStatus::Failed => "failed",
        AppStatus::Incomplete => "incomplete",
    };
    match failed_jobs {
        0 => status.to_string(),
        n => format!(
            "{status}, {n} of {jobs} job{} failed",
            if jobs == 1 { "" } else { "s" }
        ),
    }
}

/// A stage attempt that started running (not one only named by a job).
fn started(stage: &StageAttempt) -> bool {
    !matches!(stage.status, StageStatus::Pending | StageStatus::Skipped)
        || stage.submission_ms.is_some()
}

fn summary(app: &Application, stats: &[StageStats]) -> Summary {
    let (job_time_ms, driver_time_ms) = app.job_and_driver_time_ms();
    let totals = |f: fn(&sparkdiag_model::MetricTotals) -> i64| {
        app.stages.iter().map(|s| f(&s.totals)).sum::<i64>()
    };
    // In local mode the driver runs the tasks; elsewhere it only schedules them.
    let executors = app
        .executors
        .iter()
        .filter(|e| e.id != "driver" || e.total_tasks > 0 || e.completed_tasks > 0)
        .count();
    Summary {
        jobs: app.jobs.len(),
        failed_jobs: app
            .jobs
            .iter()
            .filter(|j| j.status == JobStatus::Failed)
            .count(),
        stages: app.stages.iter().filter(|s| started(s)).count(),
        failed_stages: app
            .stages
            .iter()
            .filter(|s| s.status == StageStatus::Failed)
            .count(),
        skipped_stages: app
            .stages
            .iter()
            .filter(|s| s.status == StageStatus::Skipped)
            .count(),
        tasks: app.tasks.len(),
        failed_tasks: stats
            .iter()
            .flat_map(|s| &s.facts.failed_by_executor)
            .map(|failed| failed.tasks)
            .sum(),
        killed_tasks: stats.iter().map(|s| s.facts.killed).sum(),
        executors,
        executor_run_time_ms: totals(|t| t.executor_run_time),
        executor_cpu_time_ms: totals(|t| t.executor_cpu_time) / 1_000_000,
        jvm_gc_time_ms: totals(|t| t.jvm_gc_time),
        shuffle_read_bytes: totals(|t| t.shuffle_read_bytes()),
        shuffle_write_bytes: totals(|t| t.shuffle_write_bytes),
        memory_spill_bytes: totals(|t| t.memory_bytes_spilled),
        disk_spill_bytes: totals(|t| t.disk_bytes_spilled),
        input_bytes: totals(|t| t.input_bytes),
        output_bytes: totals(|t| t.output_bytes),
        driver_time_ms,
        job_time_ms,
        recoverable_ms: 0,
        estimated_beyond_replay_ms: 0,
    }
}

fn job_out(j: &sparkdiag_model::Job) -> JobOut {
    JobOut {
        job_id: j.job_id,
        name: j.name.clone(),
        description: j.description.clone(),
        job_group: j.job_group.clone(),
        sql_execution_id: j.sql_execution_id,
        status: j.status,
        submission_ms: j.submission_ms,
        completion_ms: j.completion_ms,
        duration_ms: j
            .submission_ms
            .zip(j.completion_ms)
            .map(|(s, e)| (e - s).max(0)),
        stage_ids: j.stage_ids.clone(),
        num_tasks: j.num_tasks,
        completed_tasks: j.completed_tasks,
        failed_tasks: j.failed_tasks,
        killed_tasks: j.killed_tasks,
        skipped_tasks: j.skipped_tasks,
        completed_stages: j.completed_stages.len(),
        skipped_stages: j.skipped_stages.len(),
        failed_stages: j.failed_stages,
        failure: j.failure.clone(),
    }
}

/// History Server quantiles of the successful tasks' durations, as the rules took them.
fn task_duration_quantiles(stats: &StageStats) -> Option<Quantiles> {
    let q = stats.facts.duration_quantiles?;
    Some(Quantiles {
        min: q[0],
        p25: q[1],
        p50: q[2],
        p75: q[3],
        p95: q[4],
        max: q[5],
    })
}

fn stage_out(app: &Application, s: &StageAttempt, stats: &StageStats) -> StageOut {
    let t = &s.totals;
    StageOut {
        stage_id: s.stage_id,
        attempt_id: s.attempt_id,
        name: s.name.clone(),
        status: s.status,
        num_tasks: s.num_tasks,
        completed_tasks: s.completed_tasks,
        failed_tasks: s.failed_tasks,
        killed_tasks: s.killed_tasks,
        submission_ms: s.submission_ms,
        completion_ms: s.completion_ms,
        duration_ms: s.duration_ms(app.effective_end_ms()),
        task_duration_ms: task_duration_quantiles(stats),
        executor_run_time_ms: t.executor_run_time,
        executor_cpu_time_ms: t.executor_cpu_time / 1_000_000,
        jvm_gc_time_ms: t.jvm_gc_time,
        shuffle_read_bytes: t.shuffle_read_bytes(),
        shuffle_read_records: t.shuffle_read_records,
        shuffle_write_bytes: t.shuffle_write_bytes,
        shuffle_write_records: t.shuffle_write_records,
        input_bytes: t.input_bytes,
        input_records: t.input_records,
        output_bytes: t.output_bytes,
        output_records: t.output_records,
        memory_spill_bytes: t.memory_bytes_spilled,
        disk_spill_bytes: t.disk_bytes_spilled,
        peak_execution_memory_bytes: t.peak_execution_memory,
        job_ids: s.job_ids.clone(),
        failure_reason: s.failure_reason.clone(),
    }
}

fn executor_out(app: &Application, e: &sparkdiag_model::Executor) -> ExecutorOut {
    ExecutorOut {
        executor_id: e.id.clone(),
        host: e.host.clone(),
        cores: e.cores,
        added_ms: e.added_ms,
        removed_ms: e.removed_ms,
        removed_reason: e.removed_reason.clone(),
        removal: app.removal(e),
        exit_code: e
            .removed_reason
            .as_deref()
            .and_then(sparkdiag_model::exit_code_of),
        task_time_ms: e.task_time_ms,
        run_time_ms: e.run_time_ms,
        jvm_gc_time_ms: e.jvm_gc_time_ms,
        total_tasks: e.total_tasks,
        completed_tasks: e.completed_tasks,
        failed_tasks: e.failed_tasks,
        killed_tasks: e.killed_tasks,
        input_bytes: e.input_bytes,
        shuffle_read_bytes: e.shuffle_read_bytes,
        shuffle_write_bytes: e.shuffle_write_bytes,
        memory_spill_bytes: e.memory_spill_bytes,
        disk_spill_bytes: e.disk_spill_bytes,
        max_memory_bytes: e.max_memory,
        peak_jvm_heap_bytes: e.peak_metrics.map(|p| p.jvm_heap_memory),
    }
}

/// Exchange metrics updated by the tasks that write the shuffle, and by those that read it.
const SHUFFLE_WRITE_METRICS: &[&str] = &[
    "shuffle bytes written",
    "shuffle records written",
    "shuffle write time",
];
const SHUFFLE_READ_METRICS: &[&str] = &[
    "records read",
    "local bytes read",
    "remote bytes read",
    "fetch wait time",
    "local blocks read",
    "remote blocks read",
];

fn sql_out(s: &sparkdiag_model::SqlExecution, values: &sparkdiag_model::SqlMetricValues) -> SqlOut {
    let plan = s.plan_that_ran();
    // Spark's own node ids (its UI, the History Server's /sql API): wrappers have none.
    let nodes: Vec<(usize, &SparkPlanInfo)> = plan
        .map(|root| sparkdiag_model::PlanGraph::new(root).nodes())
        .unwrap_or_default();
    let plan_nodes: Vec<PlanNodeOut> = nodes
        .iter()
        .map(|&(index, node)| {
            let mut stage_ids: Vec<i64> = node
                .metrics
                .iter()
                .filter_map(|m| values.values.get(&m.accumulator_id))
                .flat_map(|(_, stages)| stages.iter().copied())
                .collect();
            stage_ids.sort_unstable();
            stage_ids.dedup();
            PlanNodeOut {
                index,
                name: node.node_name.clone(),
                metrics: values.of_node(node, s),
                stage_ids,
            }
        })
        .collect();
    let stages_of = |node: &SparkPlanInfo, names: &[&str]| -> Vec<i64> {
        let mut ids: Vec<i64> = node
            .metrics
            .iter()
            .filter(|m| names.contains(&m.name.as_str()))
            .filter_map(|m| values.values.get(&m.accumulator_id))
            .flat_map(|(_, stages)| stages.iter().copied())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    let exchange_stages = nodes
        .iter()
        .zip(&plan_nodes)
        .filter(|((_, n), _)| n.node_name == "Exchange")
        .map(|(&(index, n), out)| ExchangeStagesOut {
            node: index,
            writer_stage_ids: stages_of(n, SHUFFLE_WRITE_METRICS),
            reader_stage_ids: stages_of(n, SHUFFLE_READ_METRICS),
            shuffle_bytes_written: out.metrics.get("shuffle bytes written").copied(),
            shuffle_records_written: out.metrics.get("shuffle records written").copied(),
        })
        .collect();
    SqlOut {
        execution_id: s.execution_id,
        description: s.description.clone(),
        start_ms: s.start_ms,
        end_ms: s.end_ms,
        error: s.error.clone(),
        exchanges: plan.map_or(0, |p| count_nodes(p, &|n| n == "Exchange")),
        plan_nodes,
        exchange_stages,
        job_ids: s.job_ids.clone(),
    }
}

fn count_nodes(node: &SparkPlanInfo, keep: &dyn Fn(&str) -> bool) -> usize {
    usize::from(keep(&node.node_name))
        + node
            .children
            .iter()
            .map(|c| count_nodes(c, keep))
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_outcome_names_failed_jobs_whatever_the_exit_code() {
        assert_eq!(outcome(AppStatus::Succeeded, 5, 0), "succeeded");
        assert_eq!(
            outcome(AppStatus::Succeeded, 5, 1),
            "succeeded, 1 of 5 jobs failed"
        );
        assert_eq!(
            outcome(AppStatus::Failed, 1, 1),
            "failed, 1 of 1 job failed"
        );
        assert_eq!(
            outcome(AppStatus::Incomplete, 3, 2),
            "incomplete, 2 of 3 jobs failed"
        );
    }
}
