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
    /// The tasks of `stages` long because they held more data than the stage's typical task
    /// have that data spread over the cores: each runs as pieces of a typical task's length,
    /// at most one per core, side by side (AQE's skew join, a salt or a rebalance does this).
    SpreadSkewedData { stages: Vec<i64> },
    /// The stragglers of `stages` (long tasks with the data of the others, on a healthy warm
    /// executor) re-run by speculation: each ends once a copy, launched when it has run
    /// `spark.speculation.multiplier` times the stage's typical task, has run a typical task.
    SpeculateStragglers { stages: Vec<i64> },
    /// The driver submits each job as soon as the one it waited for ended.
    RemoveDriverGaps,
    /// One fewer shuffle for each of `exchanges` beyond what the query needs.
    DropExchange { stages: Vec<i64>, exchanges: i64 },
    /// The small side of a join broadcast instead of shuffled.
    BroadcastSide { stages: Vec<i64> },
    /// A table read once and reused instead of scanned again.
    ScanOnce { stages: Vec<i64> },
    /// The driver's work after the last job of `sql_executions` (a write's commit: moving files,
    /// loading partitions into the metastore) made short by a committer that does not move
    /// files one by one.
    FasterCommit { sql_executions: Vec<i64> },
    /// Each task on `executors` given the heap it needed: its garbage collection beyond
    /// `healthy_permille` thousandths of its run time gone (the GC any JVM does stays).
    ReduceGc {
        executors: Vec<String>,
        healthy_permille: i64,
    },
    /// Each task of `stages` given the execution memory it needed: its disk spill, written and
    /// read back once at `disk_mb_per_s`, gone (never more than the task spent off the CPU).
    AvoidSpill {
        stages: Vec<i64>,
        disk_mb_per_s: i64,
    },
    /// The slow executors' tasks run at the pace of the others (the host fixed or replaced):
    /// each of their tasks takes its time over the executor's measured slowdown.
    AvoidSlowExecutors { executors: Vec<String> },
    /// The failed task attempts (on `executors`; every executor when empty) not needed: their
    /// retries, which the log has, are the work.
    RemoveFailedAttempts { executors: Vec<String> },
    /// The attempts thrown away without failing not needed: killed speculative copies, the
    /// tasks killed with a stage attempt that was then re-run, and the re-run of a stage that
    /// had not failed (resubmitted for its lost shuffle output).
    RemoveWastedAttempts,
    /// `cores` executor cores in all, instead of today's.
    AddCores { cores: i64 },
    /// Executors let go while they sit idle: money, not wall-clock time.
    ReleaseIdleExecutors,
    /// The heap of `executors` cut from `from_bytes` to `to_bytes`, their measured peak being
    /// `peak_bytes`: memory (money), not wall-clock time.
    ShrinkHeap {
        executors: Vec<String>,
        from_bytes: u64,
        peak_bytes: u64,
        to_bytes: u64,
    },
}

impl Change {
    /// The name the JSON gives the change (`merge_partitions`).
    pub fn kind(&self) -> &'static str {
        match self {
            Change::MergePartitions { .. } => "merge_partitions",
            Change::SplitPartitions { .. } => "split_partitions",
            Change::SpreadSkewedData { .. } => "spread_skewed_data",
            Change::SpeculateStragglers { .. } => "speculate_stragglers",
            Change::RemoveDriverGaps => "remove_driver_gaps",
            Change::DropExchange { .. } => "drop_exchange",
            Change::BroadcastSide { .. } => "broadcast_side",
            Change::ScanOnce { .. } => "scan_once",
            Change::FasterCommit { .. } => "faster_commit",
            Change::ReduceGc { .. } => "reduce_gc",
            Change::AvoidSpill { .. } => "avoid_spill",
            Change::AvoidSlowExecutors { .. } => "avoid_slow_executors",
            Change::RemoveFailedAttempts { .. } => "remove_failed_attempts",
            Change::RemoveWastedAttempts => "remove_wasted_attempts",
            Change::AddCores { .. } => "add_cores",
            Change::ReleaseIdleExecutors => "release_idle_executors",
            Change::ShrinkHeap { .. } => "shrink_heap",
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
            | (Change::SpreadSkewedData { stages: a }, Change::SpreadSkewedData { stages: b })
            | (
                Change::SpeculateStragglers { stages: a },
                Change::SpeculateStragglers { stages: b },
            )
            | (Change::DropExchange { stages: a, .. }, Change::DropExchange { stages: b, .. })
            | (Change::BroadcastSide { stages: a }, Change::BroadcastSide { stages: b })
            | (Change::ScanOnce { stages: a }, Change::ScanOnce { stages: b })
            | (
                Change::FasterCommit { sql_executions: a },
                Change::FasterCommit { sql_executions: b },
            )
            | (Change::AvoidSpill { stages: a, .. }, Change::AvoidSpill { stages: b, .. }) => {
                (a, b)
            }
            _ => return,
        };
        mine.extend(theirs.iter().copied());
        mine.sort_unstable();
        mine.dedup();
    }

    /// The replay can run the job with this change: it alters only task times (or leaves
    /// tasks out), the driver's gaps or the number of cores.
    pub fn replayable(&self) -> bool {
        // Every kind listed, so that a new one is a compile error until it is decided.
        match self {
            Change::MergePartitions { .. }
            | Change::SplitPartitions { .. }
            | Change::SpreadSkewedData { .. }
            | Change::SpeculateStragglers { .. }
            | Change::RemoveDriverGaps
            | Change::AddCores { .. }
            | Change::ReduceGc { .. }
            | Change::AvoidSpill { .. }
            | Change::AvoidSlowExecutors { .. }
            | Change::RemoveFailedAttempts { .. }
            | Change::RemoveWastedAttempts => true,
            Change::DropExchange { .. }
            | Change::BroadcastSide { .. }
            | Change::ScanOnce { .. }
            | Change::FasterCommit { .. }
            | Change::ReleaseIdleExecutors
            | Change::ShrinkHeap { .. } => false,
        }
    }

    /// `self` does all that `other` does and more, so `other`'s saving is part of `self`'s:
    /// failed attempts left out on every executor (or on more of them) include those left out
    /// on a few. FA002's failed attempts hold FA003's lost executors' ones; replaying both
    /// would count the same attempts twice. No other change nests.
    pub fn strictly_covers(&self, other: &Change) -> bool {
        match (self, other) {
            (
                Change::RemoveFailedAttempts { executors: wide },
                Change::RemoveFailedAttempts { executors: narrow },
            ) => {
                wide != narrow
                    && (wide.is_empty()
                        || (!narrow.is_empty() && narrow.iter().all(|e| wide.contains(e))))
            }
            _ => false,
        }
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
            Change::SpreadSkewedData { stages: ids } => {
                format!("skewed data of {} spread over the cores", stages(ids))
            }
            Change::SpeculateStragglers { stages: ids } => {
                format!("stragglers of {} re-run by speculation", stages(ids))
            }
            Change::RemoveDriverGaps => "driver's gaps between jobs removed".to_string(),
            Change::DropExchange { exchanges, .. } => {
                format!("{exchanges} shuffle Exchange(s) dropped")
            }
            Change::BroadcastSide { stages: ids } => {
                format!("small join side of {} broadcast", stages(ids))
            }
            Change::ScanOnce { stages: ids } => format!("table of {} scanned once", stages(ids)),
            Change::FasterCommit { sql_executions } => match sql_executions.as_slice() {
                [one] => format!("commit of SQL execution {one} made short"),
                many => format!("commits of {} SQL executions made short", many.len()),
            },
            Change::ReduceGc {
                executors,
                healthy_permille,
            } => format!(
                "GC on {} executor(s) down to {}% of task time",
                executors.len(),
                *healthy_permille as f64 / 10.0
            ),
            Change::AvoidSpill { stages: ids, .. } => format!("no disk spill in {}", stages(ids)),
            Change::AvoidSlowExecutors { executors } => {
                format!("{} slow executor(s) at the others' pace", executors.len())
            }
            Change::RemoveFailedAttempts { executors } if executors.is_empty() => {
                "failed task attempts not needed".to_string()
            }
            Change::RemoveFailedAttempts { executors } => format!(
                "failed task attempts on {} lost executor(s) not needed",
                executors.len()
            ),
            Change::RemoveWastedAttempts => {
                "killed and re-run task attempts not needed".to_string()
            }
            Change::AddCores { cores } => format!("{cores} cores"),
            Change::ReleaseIdleExecutors => "idle executors released".to_string(),
            Change::ShrinkHeap {
                executors,
                to_bytes,
                ..
            } => format!(
                "heap of {} executor(s) cut to {}",
                executors.len(),
                crate::units::human_bytes(*to_bytes as i64)
            ),
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
