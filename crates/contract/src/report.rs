//! The JSON report, field for field as `BRIEF.md`'s contract; extra fields are marked.

use serde::Serialize;

use crate::{AppStatus, Finding, JobStatus, Platform, StageStatus};

pub const SCHEMA: &str = "sparkdiag/report/v1";

#[derive(Debug, Clone, Serialize)]
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
    pub what_if: Option<crate::WhatIf>,
    /// Added in v1: each Structured Streaming query and its micro-batches, the DStreams batches,
    /// the Spark Connect sessions and operations; absent for other workloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub streaming: Option<crate::streaming::StreamingOut>,
    /// Each executor's and the driver's memory peaks against the memory configured (additive,
    /// see docs/memory.md); absent when the log has no executor memory metrics.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<crate::MemoryFigures>,
    /// Added in v1: what the report could check: each kind of evidence present or absent, each
    /// rule that did not run and why, each rule that found nothing with its thresholds.
    pub ledger: crate::Ledger,
    /// Added in v1: the CI gates asked for (`--max-runtime`, ...), each measured against its
    /// limit, and the exit code they give; absent when none was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gates: Option<crate::Gates>,
    /// Added in v1: this output shows only some findings (`--only`, `--min-severity`,
    /// `--stage`, `--top`); the summary and the ledger stay the whole run's. Absent when every
    /// finding is shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub narrowed: Option<Narrowed>,
    /// The prices the report was made with. Not serialised: each figure they price carries
    /// its own money (`impact_cost`, `impact_memory_cost`); the night's tables price the
    /// run's core-hours with them.
    #[serde(skip)]
    pub prices: Prices,
}

/// The findings an output was narrowed to.
#[derive(Debug, Clone, Serialize)]
pub struct Narrowed {
    /// What was asked for, as the flags say it: `--only skew --min-severity high`.
    pub flags: String,
    pub findings_shown: usize,
    /// The run's findings, all of them.
    pub findings_total: usize,
}

/// A finding as the report shows it: the rule's finding, plus its cost when a price is known.
#[derive(Debug, Clone, Serialize)]
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
    /// Added in v1: where in the user's program the finding's jobs, stages and SQL executions
    /// were called (at most five), as the log names them; empty for a finding about none.
    pub code_sites: Vec<CodeSite>,
}

/// Where in the user's program some work was called, as the log names it (Spark's call site,
/// `method at File:line`), with the file and line apart when the call site names them.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CodeSite {
    /// The work it started: `job 2`, `stage 3`, `SQL execution 1`.
    pub work: String,
    /// The call, as the log writes it: `collect at /work/job.py:107`.
    pub call: String,
    /// The file of the call (`/work/job.py`), when the call site names one.
    pub file: Option<String>,
    /// Its line, 1-based.
    pub line: Option<u32>,
}

impl CodeSite {
    /// `what` called at `call` (a short call site, `method at File:line`): the file and line
    /// split out when it ends with them.
    pub fn new(work: String, call: &str) -> CodeSite {
        let call = call.lines().next().unwrap_or_default().trim().to_string();
        let (file, line) = call
            .rsplit_once(" at ")
            .and_then(|(_, site)| site.rsplit_once(':'))
            .and_then(|(file, line)| Some((file.to_string(), line.trim().parse::<u32>().ok()?)))
            .filter(|(file, line)| !file.is_empty() && *line > 0)
            .map_or((None, None), |(file, line)| (Some(file), Some(line)));
        CodeSite {
            work,
            call,
            file,
            line,
        }
    }
}

impl std::fmt::Display for CodeSite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.work, self.call)
    }
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

#[derive(Debug, Clone, Serialize)]
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
    /// Added in v1: the config files read and every threshold that differs from its default.
    pub config: crate::ConfigSource,
}

#[derive(Debug, Clone, Serialize)]
pub struct SourceFile {
    pub path: String,
    pub codec: Option<&'static str>,
    pub bytes: u64,
    pub decoded_bytes: u64,
    pub events: u64,
}

#[derive(Debug, Clone, Serialize)]
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
    pub workload: crate::Workload,
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
    /// Added in v1: `outcome` as one word a query can count by: `succeeded`, `failed`,
    /// `succeeded_with_failed_jobs`, `killed_or_incomplete` or `stopped_by_program` (the only
    /// jobs that did not finish were cancelled by the program's own stop).
    pub outcome_kind: crate::Outcome,
}

#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    pub jobs: usize,
    pub failed_jobs: usize,
    /// Added in v1: of `failed_jobs`, those the program's own stop cancelled (a streaming
    /// query's in-flight batch on `query.stop()`, a `StreamingContext` stopped under a batch):
    /// Spark counts them failed, the report does not call them failures.
    pub stopped_jobs: usize,
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
    /// Added in v1: the most executor cores the application held at once (the driver's in
    /// local mode); `duration_ms` times this is the run's core-hours.
    pub peak_cores: i64,
    /// Added in v1: executor core time held but running no task, in core-hours (each
    /// executor's cores times its lifetime, less its task time; as UT001 counts it).
    pub idle_core_hours: f64,
}

#[derive(Debug, Clone, Serialize)]
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
    /// Added in v1: the call in the user's program that started the job: its name
    /// (`collect at job.py:107`) unless Spark named it after a JDK pool thread or a Scala
    /// closure, then the first user-facing call of its SQL execution's stack.
    pub call_site: String,
}

#[derive(Debug, Clone, Serialize)]
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

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Quantiles {
    pub min: u32,
    pub p25: u32,
    pub p50: u32,
    pub p75: u32,
    pub p95: u32,
    pub max: u32,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExecutorOut {
    pub executor_id: String,
    pub host: String,
    pub cores: Option<i64>,
    pub added_ms: Option<i64>,
    pub removed_ms: Option<i64>,
    pub removed_reason: Option<String>,
    /// How it left: released, decommissioned, killed by the cluster manager, lost, ...
    pub removal: crate::Removal,
    /// The exit code its removal reason names, if any.
    pub exit_code: Option<i64>,
    /// Added in v1: what that exit code means under this application's cluster manager
    /// (`SIGKILL, usually the OOM killer: ...`), for the codes executors commonly die with.
    pub exit_code_means: Option<String>,
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

#[derive(Debug, Clone, Serialize)]
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

/// A plan node's SQL metrics by name, in name order: a node has a few, and a log has a node for
/// every operator of every query, so they are held in a sorted vector (32 bytes a metric), not
/// a `BTreeMap` (a node of eleven entries, about 370 bytes, for the first).
/// Written as a JSON object, empty ones too (`LiteMap` writes an empty one as a list).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SqlMetrics(litemap::LiteMap<compact_str::CompactString, i64>);

impl SqlMetrics {
    /// Room for exactly `n` metrics: a vector grown from nothing holds four.
    pub fn with_capacity(n: usize) -> SqlMetrics {
        SqlMetrics(litemap::LiteMap::with_capacity(n))
    }
}

impl std::ops::Deref for SqlMetrics {
    type Target = litemap::LiteMap<compact_str::CompactString, i64>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for SqlMetrics {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

impl FromIterator<(compact_str::CompactString, i64)> for SqlMetrics {
    fn from_iter<I: IntoIterator<Item = (compact_str::CompactString, i64)>>(iter: I) -> Self {
        SqlMetrics(iter.into_iter().collect())
    }
}

impl IntoIterator for SqlMetrics {
    type Item = (compact_str::CompactString, i64);
    type IntoIter = std::vec::IntoIter<(compact_str::CompactString, i64)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_tuple_vec().into_iter()
    }
}

impl Serialize for SqlMetrics {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter())
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PlanNodeOut {
    /// Spark's own node id, as its UI's plan graph and the History Server's `/sql` REST API
    /// number them (`SparkPlanGraph`): wrappers such as `InputAdapter` and AQE query stages are
    /// left out of `plan_nodes`, as Spark leaves them out of its graph.
    pub index: usize,
    /// Operator names and metric names are short and repeat in every plan: held inline.
    pub name: compact_str::CompactString,
    /// SQL metric name -> value (sizes in bytes, timings in ms as Spark records them).
    pub metrics: SqlMetrics,
    /// Stages whose tasks updated this node's metrics: where it ran.
    pub stage_ids: Vec<i64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExchangeStagesOut {
    /// The Exchange's Spark node id (`plan_nodes[].index`).
    pub node: usize,
    pub writer_stage_ids: Vec<i64>,
    pub reader_stage_ids: Vec<i64>,
    pub shuffle_bytes_written: Option<i64>,
    pub shuffle_records_written: Option<i64>,
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

    /// A price as `--price-per-core-hour` and `--price-per-gb-hour` take it: an amount of 0 or
    /// more, in whatever currency the user thinks in (the reports print no currency sign). The
    /// message leaves the value and the flag out: the command line's parser names both.
    pub fn parse(text: &str) -> Result<f64, String> {
        let price: f64 = text
            .trim()
            .parse()
            .map_err(|_| "expected an amount such as 0.45".to_string())?;
        Prices::check(price).map_err(|_| "a price is an amount of 0 or more".to_string())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_code_site_splits_its_file_and_line_when_it_names_them() {
        let site = CodeSite::new("job 2".into(), "collect at /work/job.py:107\nmore");
        assert_eq!(site.call, "collect at /work/job.py:107");
        assert_eq!(site.file.as_deref(), Some("/work/job.py"));
        assert_eq!(site.line, Some(107));
        assert_eq!(site.to_string(), "job 2: collect at /work/job.py:107");
        let bare = CodeSite::new("stage 0".into(), "mapPartitions at <console>");
        assert_eq!((bare.file, bare.line), (None, None));
        let windows = CodeSite::new("job 0".into(), "count at C:\\etl\\Job.scala:31");
        assert_eq!(windows.file.as_deref(), Some("C:\\etl\\Job.scala"));
        assert_eq!(windows.line, Some(31));
    }

    #[test]
    fn a_price_is_an_amount_of_zero_or_more() {
        assert_eq!(Prices::parse(" 0.45 "), Ok(0.45));
        assert_eq!(Prices::parse("0"), Ok(0.0));
        assert!(Prices::parse("-1").unwrap_err().contains("0 or more"));
        assert!(Prices::parse("NaN").unwrap_err().contains("0 or more"));
        assert!(Prices::parse("$3").unwrap_err().contains("such as 0.45"));
    }

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
