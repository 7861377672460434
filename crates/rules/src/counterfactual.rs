//! The change a finding proposes, which the what-if replays to give its saving.
//!
//! A rule names what its fix would change in the run ([`Change`]); the report's what-if replays
//! the run with that change applied, against the replay of today's run, and the difference is
//! the finding's `impact_ms`. A change the replay cannot model (a plan rewrite) keeps the rule's
//! own bounded estimate, with the assumption it rests on. Findings that cost money rather than
//! wall-clock time carry core-hours instead ([`crate::Finding::costs_core_hours`]).

use serde::Serialize;

/// What a fix changes in the run.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// Each of `stages` runs as `partitions` tasks: the same task time less the per-task overhead
    /// of the tasks that no longer exist.
    MergePartitions { stages: Vec<i64>, partitions: i64 },
    /// Each of `stages` runs as `partitions` tasks, more than today: the same task time (plus the
    /// average per-task overhead of each new task) spread evenly over them.
    SplitPartitions { stages: Vec<i64>, partitions: i64 },
    /// Every task of `stages` longer than five times its stage's median takes the median.
    CutSkewToMedian { stages: Vec<i64> },
    /// The driver submits each job as soon as the one it waited for ended.
    RemoveDriverGaps,
    /// One fewer shuffle for each of `exchanges` beyond what the query needs.
    DropExchange { stages: Vec<i64>, exchanges: i64 },
    /// The small side of a join broadcast instead of shuffled.
    BroadcastSide { stages: Vec<i64> },
    /// A table read once and reused instead of scanned again.
    ScanOnce { stages: Vec<i64> },
    /// Each task given the memory it needed: no excess GC, no spill to disk.
    MoreMemoryPerTask,
    /// Tasks kept off the slow executors (speculation, or the host fixed).
    AvoidSlowExecutors { executors: Vec<String> },
    /// The failed, killed or re-run task attempts not needed.
    RemoveWastedAttempts,
    /// `cores` executor cores in all, instead of today's.
    AddCores { cores: i64 },
    /// Executors let go while they sit idle: money, not wall-clock time.
    ReleaseIdleExecutors,
}

impl Change {
    /// The name the JSON gives the change (`merge_partitions`).
    pub fn kind(&self) -> &'static str {
        match self {
            Change::MergePartitions { .. } => "merge_partitions",
            Change::SplitPartitions { .. } => "split_partitions",
            Change::CutSkewToMedian { .. } => "cut_skew_to_median",
            Change::RemoveDriverGaps => "remove_driver_gaps",
            Change::DropExchange { .. } => "drop_exchange",
            Change::BroadcastSide { .. } => "broadcast_side",
            Change::ScanOnce { .. } => "scan_once",
            Change::MoreMemoryPerTask => "more_memory_per_task",
            Change::AvoidSlowExecutors { .. } => "avoid_slow_executors",
            Change::RemoveWastedAttempts => "remove_wasted_attempts",
            Change::AddCores { .. } => "add_cores",
            Change::ReleaseIdleExecutors => "release_idle_executors",
        }
    }

    /// The same change made in more places: a grouped finding's stages together.
    pub fn absorb(&mut self, other: &Change) {
        let (mine, theirs) = match (self, other) {
            (
                Change::MergePartitions { stages: a, .. },
                Change::MergePartitions { stages: b, .. },
            )
            | (
                Change::SplitPartitions { stages: a, .. },
                Change::SplitPartitions { stages: b, .. },
            )
            | (Change::CutSkewToMedian { stages: a }, Change::CutSkewToMedian { stages: b })
            | (Change::DropExchange { stages: a, .. }, Change::DropExchange { stages: b, .. })
            | (Change::BroadcastSide { stages: a }, Change::BroadcastSide { stages: b })
            | (Change::ScanOnce { stages: a }, Change::ScanOnce { stages: b }) => (a, b),
            _ => return,
        };
        mine.extend(theirs.iter().copied());
        mine.sort_unstable();
        mine.dedup();
    }

    /// The replay can run the job with this change: it alters only task times, the driver's
    /// gaps or the number of cores.
    pub fn replayable(&self) -> bool {
        matches!(
            self,
            Change::MergePartitions { .. }
                | Change::SplitPartitions { .. }
                | Change::CutSkewToMedian { .. }
                | Change::RemoveDriverGaps
                | Change::AddCores { .. }
        )
    }

    /// For people: "stage 3 in 2 partitions".
    pub fn describe(&self) -> String {
        let stages = |ids: &[i64]| match ids {
            [one] => format!("stage {one}"),
            [first, ..] => format!("{} stages like stage {first}", ids.len()),
            [] => "its stages".to_string(),
        };
        match self {
            Change::MergePartitions {
                stages: ids,
                partitions,
            }
            | Change::SplitPartitions {
                stages: ids,
                partitions,
            } => {
                format!("{} in {partitions} partitions", stages(ids))
            }
            Change::CutSkewToMedian { stages: ids } => {
                format!("skewed tasks of {} cut to the median", stages(ids))
            }
            Change::RemoveDriverGaps => "driver's gaps between jobs removed".to_string(),
            Change::DropExchange { exchanges, .. } => {
                format!("{exchanges} shuffle Exchange(s) dropped")
            }
            Change::BroadcastSide { stages: ids } => {
                format!("small join side of {} broadcast", stages(ids))
            }
            Change::ScanOnce { stages: ids } => format!("table of {} scanned once", stages(ids)),
            Change::MoreMemoryPerTask => "tasks given the memory they needed".to_string(),
            Change::AvoidSlowExecutors { executors } => {
                format!("{} slow executor(s) avoided", executors.len())
            }
            Change::RemoveWastedAttempts => "wasted task attempts removed".to_string(),
            Change::AddCores { cores } => format!("{cores} cores"),
            Change::ReleaseIdleExecutors => "idle executors released".to_string(),
        }
    }
}

/// What the finding's saving rests on, as the JSON shows it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Counterfactual {
    pub change: Change,
    /// What the figure assumes: the replay's model of the change, or the bound a rule took.
    pub assumption: String,
    /// The saving is the replay of the run with the change against the replay of today's run;
    /// `false`: the rule's own bounded estimate.
    pub replayed: bool,
}
