//! What a report could check and what it could not: each kind of evidence the rules read, present
//! or absent with its count; each rule that did not run, and why; and each rule that ran and
//! found nothing, with the thresholds it used. "No findings" then never reads as "healthy" when
//! the log lacked what the rules needed.

use serde::Serialize;

/// A kind of evidence a rule reads from the log. Each rule declares the kinds it needs
/// (`sparkdiag_rules::Rule::needs`); a log without one of them leaves the rule unable to run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Evidence {
    /// Every task attempt that ended (`SparkListenerTaskEnd`).
    Tasks,
    /// Task ends carrying task metrics: run time, GC, shuffle, input, spill.
    TaskMetrics,
    /// Jobs started and ended.
    Jobs,
    /// The executors, with their hosts and cores (or the driver that ran the tasks in local mode).
    Executors,
    /// The JVMs' memory peaks (executor metrics, Spark 3.0+ with `spark.eventLog.logStageExecutorMetrics`
    /// or task-end peaks).
    ExecutorMetrics,
    /// The physical plans of the SQL executions.
    SqlPlans,
    /// Spark's properties (`SparkListenerEnvironmentUpdate`).
    Environment,
    /// Structured Streaming's query events: started, progress, terminated.
    StreamingQueries,
}

impl Evidence {
    /// Every kind, in the order the ledger lists them.
    pub const ALL: [Evidence; 8] = [
        Evidence::Tasks,
        Evidence::TaskMetrics,
        Evidence::Jobs,
        Evidence::Executors,
        Evidence::ExecutorMetrics,
        Evidence::SqlPlans,
        Evidence::Environment,
        Evidence::StreamingQueries,
    ];

    /// What the JSON calls it.
    pub fn name(self) -> &'static str {
        match self {
            Evidence::Tasks => "tasks",
            Evidence::TaskMetrics => "task-metrics",
            Evidence::Jobs => "jobs",
            Evidence::Executors => "executors",
            Evidence::ExecutorMetrics => "executor-metrics",
            Evidence::SqlPlans => "sql-plans",
            Evidence::Environment => "environment",
            Evidence::StreamingQueries => "streaming-queries",
        }
    }

    /// What its count counts: `task ends`, `SQL executions with a plan`.
    pub fn about(self) -> &'static str {
        match self {
            Evidence::Tasks => "task ends",
            Evidence::TaskMetrics => "task ends with metrics",
            Evidence::Jobs => "jobs",
            Evidence::Executors => "executors",
            Evidence::ExecutorMetrics => "JVMs with memory metrics",
            Evidence::SqlPlans => "SQL executions with a plan",
            Evidence::Environment => "Spark properties",
            Evidence::StreamingQueries => "Structured Streaming query events",
        }
    }

    /// What a log without it lacks, in words: `no executor memory metrics`.
    pub fn absent(self) -> &'static str {
        match self {
            Evidence::Tasks => "no task ends",
            Evidence::TaskMetrics => "no task metrics",
            Evidence::Jobs => "no jobs",
            Evidence::Executors => "no executors",
            Evidence::ExecutorMetrics => "no executor memory metrics",
            Evidence::SqlPlans => "no SQL plans",
            Evidence::Environment => "no Spark properties (environment)",
            Evidence::StreamingQueries => "no Structured Streaming queries",
        }
    }
}

/// The evidence ledger of one report.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Ledger {
    /// Each kind of evidence, present or absent, with its count.
    pub evidence: Vec<EvidenceCount>,
    /// Each rule that did not run on this log, and why.
    pub not_run: Vec<RuleNotRun>,
    /// Each rule that ran and found nothing, with the thresholds it used.
    pub found_nothing: Vec<RuleQuiet>,
}

/// One kind of evidence in the log.
#[derive(Debug, Clone, Serialize)]
pub struct EvidenceCount {
    pub kind: Evidence,
    pub present: bool,
    /// How many the log holds ([`Evidence::about`] says of what).
    pub count: u64,
    pub about: &'static str,
}

/// A rule that did not run.
#[derive(Debug, Clone, Serialize)]
pub struct RuleNotRun {
    pub rule: &'static str,
    pub name: &'static str,
    /// `disabled` (a config file or `--disable`), `workload` (it describes a batch program and
    /// stands down on this kind of application), `missing-evidence` (the log lacks what it
    /// reads) or `no-application` (the log has no application start: nothing ran).
    pub reason: &'static str,
    /// The reason in words: "no executor metrics in the log", "disabled by sparkdiag.toml".
    pub detail: String,
    /// For `missing-evidence`: the kinds it needs that the log lacks.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing: Vec<Evidence>,
}

/// A rule that ran and found nothing.
#[derive(Debug, Clone, Serialize)]
pub struct RuleQuiet {
    pub rule: &'static str,
    pub name: &'static str,
    /// The thresholds it ran with (an override where one was given, else the default).
    pub thresholds: Vec<ThresholdUsed>,
}

/// A threshold as a rule ran with it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdUsed {
    pub key: &'static str,
    pub value: f64,
    pub default: f64,
    pub unit: &'static str,
}

impl Ledger {
    /// The evidence the log lacks.
    pub fn absent(&self) -> impl Iterator<Item = &EvidenceCount> {
        self.evidence.iter().filter(|e| !e.present)
    }
}
