//! The `sparkdiag/diff/v1` JSON contract that `sparkdiag-diff` builds and `sparkdiag-report`
//! renders. Fields may be added; none is renamed or removed.

use std::collections::BTreeMap;

use crate::{AppStatus, Severity};
use serde::Serialize;

pub const SCHEMA: &str = "sparkdiag/diff/v1";

#[derive(Debug, Serialize)]
pub struct Diff {
    pub schema: &'static str,
    pub before: RunOut,
    pub after: RunOut,
    /// Added in v1: the answer in words, first: faster or slower or the same, whether the
    /// output is the same, and the top cause.
    pub verdict: Verdict,
    /// Added in v1: why the runtime changed, the cause that explains the largest share of the
    /// change first. One `nothing_material` cause when nothing changed beyond the run's noise.
    pub causes: Vec<Cause>,
    /// The story in a few sentences, most important first: an output change always leads.
    pub headline: Vec<String>,
    pub correctness: Correctness,
    /// Whole-run numbers side by side; runtime, core-hours and cost first, then the rest by
    /// how much they changed.
    pub metrics: Vec<MetricChange>,
    pub findings: FindingsDiff,
    /// Matched work: SQL executions and jobs grouped by shape, then paired across the runs.
    pub work: Vec<WorkMatch>,
    /// Added in v1: each Structured Streaming query paired with its other run (by name, else
    /// id), its micro-batches side by side; absent when neither run streamed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub queries: Vec<QueryDiff>,
    /// Added in v1: the CI gates asked for (`--fail-on-regression`, `--fail-on-new`,
    /// `--fail-on-output-change`) and the exit code they give; absent when none was asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gates: Option<crate::Gates>,
    /// Added in v1: whether the two runs look like the same job (their names, the shapes of
    /// their jobs and queries, what they read and wrote). When they do not, the verdict stops
    /// short of one.
    pub same_job: SameJob,
    /// Added in v1: each of BEFORE's findings whose fix AFTER applied, with the saving
    /// sparkdiag predicted for it and the time the stages it was about actually saved.
    pub fixes: Vec<FixCheck>,
}

/// Whether BEFORE and AFTER look like two runs of one job.
#[derive(Debug, Clone, Serialize)]
pub struct SameJob {
    pub same: bool,
    /// What was compared, in words: "names differ: `a` → `b`", "23 % of BEFORE's work and 0 %
    /// of AFTER's matched by plan, description or destination", "no input in common".
    pub evidence: Vec<String>,
}

/// One of BEFORE's findings whose fix AFTER applied: what sparkdiag predicted it would save,
/// and what the work it was about saved.
#[derive(Debug, Clone, Serialize)]
pub struct FixCheck {
    pub rule: &'static str,
    pub title: String,
    /// How AFTER shows the fix: "spark.sql.adaptive.enabled=true is set", "24 jobs of the
    /// loop became 2", "the sort-merge join is a broadcast hash join".
    pub applied: Vec<String>,
    /// The finding's `impact_ms` in BEFORE: the saving predicted for its fix.
    pub predicted_ms: i64,
    /// The time the finding was about took in BEFORE and its counterpart in AFTER: the wall
    /// clock of its stages (or, for the driver's gaps, of the work they sat between).
    pub before_ms: i64,
    pub after_ms: i64,
    /// `before_ms - after_ms`: what the fix saved.
    pub measured_ms: i64,
    /// `predicted_ms - measured_ms`; positive: sparkdiag promised more than the fix gave.
    pub error_ms: i64,
    /// What was measured, in words.
    pub measured_on: String,
    /// The rule does not fire in AFTER.
    pub resolved: bool,
}

/// One streaming query in both runs (`before` or `after` is `null` where it did not run).
#[derive(Debug, Clone, Serialize)]
pub struct QueryDiff {
    /// Its name, or its id when it has none.
    pub query: String,
    pub before: Option<QuerySide>,
    pub after: Option<QuerySide>,
}

/// How one run of a query's micro-batches went.
#[derive(Debug, Clone, Serialize)]
pub struct QuerySide {
    pub run_id: String,
    /// As the report's `streaming.queries[].status`.
    pub status: &'static str,
    pub batches: usize,
    pub trigger_interval_ms: Option<i64>,
    pub median_batch_ms: Option<i64>,
    pub p95_batch_ms: Option<i64>,
    /// Batches that took longer than the trigger interval: the query fell behind in each.
    pub batches_over_trigger: usize,
    /// Tasks the batch's jobs ran (skipped ones left out), the median over batches with jobs.
    pub median_tasks_per_batch: Option<i64>,
    pub input_rows: i64,
    pub median_input_rows_per_second: Option<f64>,
    pub median_processed_rows_per_second: Option<f64>,
    pub max_state_rows: i64,
}

impl Diff {
    /// Runtime and core-hours (cost) that went up by more than `pct` percent: each metric's
    /// label with how many percent it went up.
    pub fn regressions(&self, pct: f64) -> Vec<(&'static str, f64)> {
        self.metrics
            .iter()
            .filter(|m| matches!(m.metric, "runtime_ms" | "core_hours"))
            .filter_map(|m| Some((m.label, (m.ratio? - 1.0) * 100.0)))
            .filter(|&(_, up)| up > pct)
            .collect()
    }

    /// The outputs differ: rows written to a destination, or an output appeared or vanished.
    pub fn outputs_changed(&self) -> bool {
        self.correctness.status == "changed"
    }
}

/// The diff's answer, for a manager.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// `faster`, `slower` or `same` (the change is within the noise band).
    pub runtime: &'static str,
    /// `same`, `changed` or `unknown`: [`Correctness::status`] in one word (`no-output` is
    /// `unknown`).
    pub output: &'static str,
    /// One sentence: "Slower (+62.4 %) and the same output, because the input grew 4.0×."
    pub sentence: String,
    /// The band within which a runtime change is noise, in ms (see `docs/diff-causes.md`).
    pub noise_ms: i64,
    /// Added in v1: `false` when the runs do not look like the same job ([`SameJob`]): the
    /// sentence then says so and names no cause.
    pub comparable: bool,
    /// Added in v1: AFTER failed (or never finished) where BEFORE did not: what failed. The
    /// sentence leads with it, whatever the runtime did.
    pub new_failure: Option<String>,
}

/// One reason the runtime changed, with what shows it.
#[derive(Debug, Clone, Serialize)]
pub struct Cause {
    /// `data_growth`, `plan_change`, `configuration_change`, `cluster_change`,
    /// `version_change`, `skew_spill_failures`, `driver_time` or `nothing_material`; added
    /// in v1: `not_comparable`, the one cause of two runs that do not look like the same job.
    pub kind: &'static str,
    /// In words, e.g. "the input grew 4.0× (1.2 GiB → 4.8 GiB)".
    pub title: String,
    /// How much of AFTER's runtime minus BEFORE's this cause accounts for; positive is slower.
    pub explained_ms: i64,
    /// `explained_ms` as a share of the runtime change (0 to 1; the shares of all causes add up
    /// to 1 at most); `null` when the runtime did not change beyond the noise.
    pub share: Option<f64>,
    /// How `explained_ms` was measured: `replay` (the what-if replay of one run with the
    /// other's cores or without its skew), `scaled` (BEFORE's executor-bound time scaled by
    /// the growth), `matched work` (the time change of the work whose plan changed),
    /// `measured` (a measured difference, e.g. driver-only time) or `not measured`.
    pub measured_by: &'static str,
    /// The numbers that show it, before and after (the views write them in their units, with
    /// the change in percent).
    pub facts: Vec<Fact>,
    /// What shows it in words: a plan difference, a property, a new finding.
    pub evidence: Vec<String>,
    /// The `spark.*` properties behind the cause (configuration and cluster changes), those
    /// known to matter first.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub properties: Vec<PropertyChange>,
}

/// One number of a cause, on each side.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Fact {
    /// E.g. `input read`, `rows read`, `executors`.
    pub what: String,
    /// `ms`, `bytes` or `count`.
    pub unit: &'static str,
    pub before: f64,
    pub after: f64,
}

/// A Spark property that differs between the runs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PropertyChange {
    pub key: String,
    /// `null`: not set (Spark's default).
    pub before: Option<String>,
    pub after: Option<String>,
    /// On sparkdiag's list of properties that change plans, parallelism or memory.
    pub known_to_matter: bool,
}

#[derive(Debug, Serialize)]
pub struct RunOut {
    /// What the user named.
    pub inputs: Vec<String>,
    pub app_id: Option<String>,
    pub name: Option<String>,
    pub spark_version: Option<String>,
    pub status: AppStatus,
    /// Added in v1: the status with the jobs that failed, as the report's
    /// `application.outcome_kind`.
    pub outcome: crate::Outcome,
    /// Every event Spark wrote was read and the application ended.
    pub complete: bool,
    /// Observed: to the end event, or to the last event of an incomplete log.
    pub duration_ms: Option<i64>,
    /// Peak executor cores, which turn runtime into core-hours.
    pub cores: i64,
    /// For an incomplete run whose work is a series: what its whole run would have taken.
    pub projection: Option<Projection>,
    /// Each started stage attempt, relative to the application's start with the clock jumps
    /// left out (for the timelines).
    pub timeline: Vec<StageSpan>,
    /// Added in v1, absent unless the run's clock jumped: where, on the timeline's axis, and
    /// by how much; the chart cuts the run's lanes there.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub clock_breaks: Vec<crate::ClockBreak>,
}

#[derive(Debug, Serialize)]
pub struct Projection {
    pub duration_ms: i64,
    /// Iterations of the series that finished.
    pub iterations_done: usize,
    /// Iterations the whole series has, and where that number comes from.
    pub iterations_total: usize,
    pub total_from: String,
    /// The series: the work group label.
    pub work: String,
    /// How the projection was made, in one sentence.
    pub method: String,
}

#[derive(Debug, Serialize)]
pub struct StageSpan {
    pub stage_id: i64,
    pub attempt_id: i64,
    pub start_ms: i64,
    pub end_ms: i64,
    pub tasks: usize,
    /// Index into `work` of the matched work the stage belongs to, when any.
    pub work: Option<usize>,
}

#[derive(Debug, Serialize)]
pub struct MetricChange {
    pub metric: &'static str,
    pub label: &'static str,
    /// `ms`, `bytes`, `count`, `core-hours` or `money`.
    pub unit: &'static str,
    pub before: f64,
    pub after: f64,
    /// `after - before`.
    pub change: f64,
    /// `after / before`; `null` when before is 0.
    pub ratio: Option<f64>,
    /// `before` is the projection of an incomplete run, not what it measured.
    pub projected: bool,
}

#[derive(Debug, Serialize)]
pub struct FindingsDiff {
    /// In BEFORE only.
    pub resolved: Vec<FindingChange>,
    /// In AFTER only.
    pub new: Vec<FindingChange>,
    /// In both.
    pub remaining: Vec<FindingChange>,
}

impl FindingsDiff {
    /// Every rule's change with what happened to it (`resolved`, `new`, `remaining`), in the
    /// order every view lists them.
    pub fn each(&self) -> impl Iterator<Item = (&'static str, &FindingChange)> {
        [
            ("resolved", &self.resolved),
            ("new", &self.new),
            ("remaining", &self.remaining),
        ]
        .into_iter()
        .flat_map(|(what, list)| list.iter().map(move |c| (what, c)))
    }

    /// No rule fired in either run.
    pub fn is_empty(&self) -> bool {
        self.resolved.is_empty() && self.new.is_empty() && self.remaining.is_empty()
    }
}

/// One rule's findings on each side (a rule can fire several times in a run).
#[derive(Debug, Serialize)]
pub struct FindingChange {
    pub rule: &'static str,
    /// The highest-impact finding's title (AFTER's when the rule fired in both).
    pub title: String,
    pub severity_before: Option<Severity>,
    pub severity_after: Option<Severity>,
    pub count_before: usize,
    pub count_after: usize,
    pub impact_ms_before: i64,
    pub impact_ms_after: i64,
}

#[derive(Debug, Serialize)]
pub struct WorkMatch {
    pub label: String,
    /// `plan shape and description`, `plan shape`, `output destination`, `description`,
    /// `call site`, `only SQL work left on each side`, or `none` (no counterpart).
    pub matched_by: &'static str,
    pub before: Option<WorkSide>,
    pub after: Option<WorkSide>,
    /// E.g. `24 SQL executions (48 jobs) → 1 SQL execution (2 jobs)`.
    pub summary: String,
    /// Plan differences in words (join strategy, Exchanges, AQE, shuffle partitions).
    pub plan_changes: Vec<String>,
    /// The stages of the matched work, grouped on each side by call site (numbers masked) and
    /// role, then paired by them.
    pub stages: Vec<StageMatch>,
}

#[derive(Debug, Serialize)]
pub struct StageMatch {
    /// The stage name with its numbers masked, e.g. `parquet at NativeMethodAccessorImpl.java:#`.
    pub name: String,
    /// `shuffle map` (it wrote shuffle output) or `result`.
    pub role: &'static str,
    pub before: Option<StageGroupOut>,
    pub after: Option<StageGroupOut>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct StageGroupOut {
    /// Stage attempts that ran.
    pub count: usize,
    pub tasks: usize,
    /// Summed durations.
    pub time_ms: i64,
    pub executor_run_time_ms: i64,
}

#[derive(Debug, Serialize)]
pub struct WorkSide {
    /// `sql` (SQL executions) or `job` (jobs outside any SQL execution).
    pub kind: &'static str,
    pub count: usize,
    /// SQL execution ids, or job ids.
    pub ids: Vec<i64>,
    /// How many of them finished.
    pub completed: usize,
    pub description: String,
    pub jobs: usize,
    pub stages: usize,
    pub tasks: usize,
    /// Summed durations of the executions (or jobs).
    pub time_ms: i64,
    /// Wall-clock time during which at least one of them ran.
    pub wall_ms: i64,
    pub executor_run_time_ms: i64,
    pub shuffle_read_bytes: i64,
    pub plan: Option<PlanFacts>,
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct PlanFacts {
    /// A hash of the submitted plan's operator tree: operator names and tree shape, without
    /// ids, literal values or AQE's wrappers.
    pub fingerprint: String,
    pub operators: usize,
    /// Shuffle Exchanges of the plan that ran.
    pub exchanges: usize,
    pub broadcast_exchanges: usize,
    /// Join operator -> count.
    pub joins: BTreeMap<String, usize>,
    pub aqe: bool,
    /// Partition counts of the shuffle Exchanges, as planned (distinct, ascending).
    pub shuffle_partitions: Vec<u32>,
    /// AQE split a skewed partition of a join.
    pub skew_join_split: bool,
}

#[derive(Debug, Serialize)]
pub struct Correctness {
    /// `equal`, `changed`, `unknown` (the logs cannot show it) or `no-output`.
    pub status: &'static str,
    pub outputs: Vec<OutputChange>,
    pub inputs: Vec<InputChange>,
    /// What the logs cannot show, said rather than left out.
    pub notes: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct OutputChange {
    /// A path (partition directories folded into their table directory) or table name.
    pub destination: String,
    /// The AFTER destination when it differs and the two were paired as each run's only output.
    pub after_destination: Option<String>,
    pub before: Option<OutputSide>,
    pub after: Option<OutputSide>,
    /// `equal`, `changed`, `unknown`, `only-before` or `only-after`.
    pub status: &'static str,
    pub note: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct OutputSide {
    /// Write commands that wrote here.
    pub writes: usize,
    /// Rows of every write here; `null` when one of them recorded no count (a write a killed
    /// run did not finish).
    pub rows: Option<i64>,
    /// Added in v1: the rows the writes that recorded a count wrote, and how many such writes
    /// there were: what a killed run did write.
    pub rows_recorded: i64,
    pub writes_recorded: usize,
    /// Added in v1: for a killed BEFORE projected to its whole run, `rows_recorded` at the
    /// rows each finished iteration wrote, over every iteration (see `Projection`).
    pub rows_projected: Option<i64>,
    pub files: Option<i64>,
    pub bytes: Option<i64>,
    /// Partitions written: static partition directories plus dynamic partitions.
    pub partitions: i64,
    /// SQL execution ids.
    pub sql_execution_ids: Vec<i64>,
}

#[derive(Debug, Serialize)]
pub struct InputChange {
    pub source: String,
    /// Rows the scans read, summed over every read; `null` when the side never read it.
    pub rows_before: Option<i64>,
    pub rows_after: Option<i64>,
    pub reads_before: usize,
    pub reads_after: usize,
}
