//! The what-if asked for one scenario (`sparkdiag mcp`'s `what_if`): the log's own tasks
//! replayed with another number of cores, skewed tasks cut to their stage's median, or the
//! driver's gaps removed, against the replay of today's run.

use sparkdiag_whatif::replay::{Graph, ReplayOptions};

use crate::Analysis;

/// One scenario to replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scenario {
    /// Executor cores (task slots).
    pub cores: usize,
    /// Cut each task longer than 5x its stage's median to the median.
    pub cut_skew: bool,
    /// Submit each job as soon as the one it waited for ended.
    pub remove_driver_gaps: bool,
}

/// What the replay predicts for a [`Scenario`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Replayed {
    /// The wall clock the replay predicts for the scenario.
    pub predicted_ms: i64,
    /// The cores the application had at its peak.
    pub cores_today: i64,
    /// The replay of today's run (today's cores, nothing changed): what `predicted_ms` is
    /// compared with, so that the replay's own error cancels out.
    pub replay_today_ms: i64,
}

/// `scenario` replayed on `analysis`'s tasks; `None` when the report has no what-if (no
/// application start, no tasks, or a clock that jumped).
pub fn what_if_at(analysis: &Analysis, scenario: Scenario) -> Option<Replayed> {
    let brief = analysis.report.what_if.as_ref()?;
    let graph = Graph::with_stage_stats(&analysis.app, &analysis.facts.stages)?;
    let replay = |slots: usize, cut_skew: bool, remove_driver_gaps: bool| {
        graph.replay(ReplayOptions {
            slots: Some(slots.max(1)),
            cut_skew,
            remove_driver_gaps,
        })
    };
    Some(Replayed {
        predicted_ms: replay(
            scenario.cores,
            scenario.cut_skew,
            scenario.remove_driver_gaps,
        ),
        cores_today: brief.cores_today,
        replay_today_ms: brief.replay_today_ms,
    })
}
