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
    /// The application's clock jumps (`[start, end)` epoch ms, as the model found them): the
    /// charts' time axes leave them out ([`ViewData::chart_ms`]), so a run of seconds whose
    /// clock jumped years is drawn over its seconds, with a break where each jump was.
    pub clock_jumps: Vec<(i64, i64)>,
    /// One per stage attempt, in the order of the report's `stages`.
    pub stages: Vec<StageTasks>,
    /// Tasks running at once, averaged over [`BUSY_SLICES`] equal slices of the charts' time
    /// (`origin_ms..horizon_ms` without the clock jumps), for the cores-busy chart; empty when
    /// the log has no task. A fixed size, so ten million tasks cost no more here than ten.
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

/// Where a clock jump sits on the charts' time axes, and how much time it left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct ClockBreak {
    /// Milliseconds since `origin_ms` (the application's start) on the charts' axes
    /// ([`ViewData::chart_ms`]): the time the run had lived when its clock jumped.
    pub at_ms: i64,
    /// The log's clock moved this much there with no event.
    pub jumped_ms: i64,
}

/// The milliseconds from `from` to `to` outside every one of `jumps` (`[start, end)`),
/// negative when `to` is before `from`: the time the application lived between two of its
/// timestamps.
pub fn ms_without_jumps(from: i64, to: i64, jumps: &[(i64, i64)]) -> i64 {
    let (lo, hi) = (from.min(to), from.max(to));
    let jumped: i64 = jumps
        .iter()
        .map(|&(start, end)| end.min(hi).saturating_sub(start.max(lo)).max(0))
        .sum();
    let lived = hi.saturating_sub(lo).saturating_sub(jumped).max(0);
    if to >= from { lived } else { -lived }
}

impl ViewData {
    /// Where epoch time `ms` sits on the charts' time axes: milliseconds since `origin_ms`
    /// with the clock jumps between them left out, as the header's duration leaves them out.
    /// `None` when there is no origin.
    pub fn chart_ms(&self, ms: i64) -> Option<i64> {
        Some(ms_without_jumps(self.origin_ms?, ms, &self.clock_jumps))
    }

    /// The length of the charts' time axes: `origin_ms..horizon_ms` without the clock jumps.
    pub fn chart_span_ms(&self) -> Option<i64> {
        self.chart_ms(self.horizon_ms?)
    }

    /// The clock jumps inside `origin_ms..horizon_ms`, where the charts draw a break, in time
    /// order.
    pub fn chart_breaks(&self) -> Vec<ClockBreak> {
        let (Some(origin), Some(horizon)) = (self.origin_ms, self.horizon_ms) else {
            return Vec::new();
        };
        let mut breaks: Vec<ClockBreak> = self
            .clock_jumps
            .iter()
            .filter(|&&(start, end)| start < horizon && end > origin && end > start)
            .map(|&(start, end)| ClockBreak {
                at_ms: ms_without_jumps(origin, start.max(origin), &self.clock_jumps),
                jumped_ms: end.min(horizon) - start.max(origin),
            })
            .collect();
        breaks.sort_by_key(|b| b.at_ms);
        breaks
    }

    /// The plan tree of SQL execution `execution_id`.
    pub fn plan(&self, execution_id: i64) -> Option<&PlanTree> {
        self.plans.iter().find(|p| p.execution_id == execution_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DAY: i64 = 86_400_000;

    #[test]
    fn a_jump_is_left_out_of_the_charts_time_and_marked_where_it_was() {
        // A run of 10 s whose clock jumped 900 days after its 4th second, and a jump before
        // it started (another run's event in the log).
        let view = ViewData {
            origin_ms: Some(1_000 * DAY),
            horizon_ms: Some(1_900 * DAY + 6_000),
            clock_jumps: vec![(10 * DAY, 1_000 * DAY), (1_000 * DAY + 4_000, 1_900 * DAY)],
            ..ViewData::default()
        };
        assert_eq!(view.chart_span_ms(), Some(10_000));
        assert_eq!(view.chart_ms(1_000 * DAY + 3_000), Some(3_000));
        assert_eq!(view.chart_ms(1_900 * DAY + 1_000), Some(5_000));
        // Inside the jump: at the break.
        assert_eq!(view.chart_ms(1_500 * DAY), Some(4_000));
        // Before the origin: negative, the earlier jump left out too.
        assert_eq!(view.chart_ms(10 * DAY - 500), Some(-500));
        assert_eq!(
            view.chart_breaks(),
            [ClockBreak {
                at_ms: 4_000,
                jumped_ms: 900 * DAY - 4_000
            }]
        );
        let steady = ViewData {
            clock_jumps: Vec::new(),
            ..view
        };
        assert_eq!(steady.chart_span_ms(), Some(900 * DAY + 6_000));
        assert!(steady.chart_breaks().is_empty());
    }
}
