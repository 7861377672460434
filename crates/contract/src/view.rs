//! What the views draw that the JSON contract does not carry: every task's duration and span for
//! the charts, and each SQL execution's plan tree with Spark's wrappers for the HTML page.
//!
//! It is a separate struct, not more `Report` fields, because it is per task (a log of a million
//! tasks would add megabytes to every JSON report) and because `sparkdiag/report/v1` stays byte
//! for byte what it was. It is built once, in the analysis step, from the model; the views then
//! need only the [`crate::Report`] and this.

use crate::Varints;

/// Per-task and plan-shape data for the charts and the HTML view of one application.
#[derive(Debug, Default, Clone)]
pub struct ViewData {
    /// Where the charts' time axes start: the application start, else the earliest time seen.
    pub origin_ms: Option<i64>,
    /// Where they end: the application end (or last event), or the latest time seen if later.
    pub horizon_ms: Option<i64>,
    /// One per stage attempt, in the order of the report's `stages`.
    pub stages: Vec<StageTasks>,
    /// Tasks running at once, averaged over [`BUSY_SLICES`] equal slices of
    /// `origin_ms..horizon_ms`, for the cores-busy chart; empty when the log has no task. A
    /// fixed size, so ten million tasks cost no more here than ten.
    pub busy_slots: Vec<f64>,
    /// The plan that ran of each SQL execution that has one, in the order of the report's `sql`.
    pub plans: Vec<PlanTree>,
}

/// The task durations of one stage attempt.
#[derive(Debug, Default, Clone)]
pub struct StageTasks {
    pub stage_id: i64,
    pub attempt_id: i64,
    /// Successful tasks with metrics (the History Server's population).
    pub succeeded_ms: SortedMs,
    /// Failed tasks.
    pub failed_ms: SortedMs,
}

/// Durations in ms, sorted. Every stage's are kept while the views are drawn, so they are packed:
/// the difference from each to the next (mostly zero or small) as variable-length integers,
/// compressed once there are thousands, a fraction of a byte a task where a `u32` took four.
#[derive(Debug, Default, Clone)]
pub struct SortedMs(Varints);

impl SortedMs {
    pub fn new(mut ms: Vec<u32>) -> SortedMs {
        ms.sort_unstable();
        let mut previous = 0;
        SortedMs(Varints::new(ms.into_iter().map(|d| {
            let step = i64::from(d - previous);
            previous = d;
            step
        })))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Bytes held.
    pub fn stored_bytes(&self) -> usize {
        self.0.stored_bytes()
    }

    /// The durations, shortest first.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut at = 0u32;
        self.0.iter().map(move |step| {
            at = at.saturating_add(u32::try_from(step).unwrap_or(u32::MAX));
            at
        })
    }
}

/// How many slices of the application's time the cores-busy chart averages over: fine enough to
/// show a gap of 1/300 of the run.
pub const BUSY_SLICES: usize = 300;

/// Spark's structured plan (`sparkPlanInfo`) of one SQL execution, flattened in pre-order (the
/// order of the report's `plan_nodes`), wrappers such as `WholeStageCodegen` and
/// `InputAdapter` included.
#[derive(Debug, Default, Clone)]
pub struct PlanTree {
    pub execution_id: i64,
    /// Node 0 is the root.
    pub nodes: Vec<PlanTreeNode>,
}

#[derive(Debug, Default, Clone)]
pub struct PlanTreeNode {
    pub name: String,
    /// Spark's node id (`plan_nodes[].index`); `None` for the wrappers Spark's graph skips.
    pub spark_id: Option<usize>,
    /// Indexes into [`PlanTree::nodes`].
    pub children: Vec<usize>,
}

impl ViewData {
    /// The plan tree of SQL execution `execution_id`.
    pub fn plan(&self, execution_id: i64) -> Option<&PlanTree> {
        self.plans.iter().find(|p| p.execution_id == execution_id)
    }
}
