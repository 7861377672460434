//! Each finding's saving as a replay: the run with the finding's change applied, against the
//! replay of today's run, and the run with every such change applied together.
//!
//! Findings whose change the replay cannot model (a plan rewrite) keep the rules' bounded
//! estimate; findings that cost money rather than time are left alone.

use std::collections::HashSet;

use sparkdiag_contract::{Change, Finding, Severity};
use sparkdiag_facts::Facts;
use sparkdiag_facts::slowness::{Cause, LongTask};
use sparkdiag_model::{Application, JobStatus, StageStatus, Task, TaskOutcome};

use crate::Scenario;
use crate::replay::{Graph, ReplayOptions, StageChange, StageChanges, TaskEdit, pieces};

/// `spark.speculation.multiplier` when the application does not set it: a copy is launched
/// once a task has run this many times the median of the stage's finished tasks.
const SPECULATION_MULTIPLIER: f64 = 1.5;

/// A set of changes and its tasks as they leave them ([`Applied::edited_tasks`]).
type Edited = (Applied, StageChanges);

/// A set of changes as one replay.
#[derive(Default)]
struct Applied {
    stages: Vec<(i64, StageChange)>,
    remove_driver_gaps: bool,
    cores: Option<i64>,
    tasks: TaskFixes,
}

/// The changes that edit single tasks: each task's time less what the fix removes, or the
/// task left out where the fix makes it unnecessary.
#[derive(Default, PartialEq)]
struct TaskFixes {
    /// Executors (by id) whose tasks keep only the healthy share of their run time in GC.
    gc_on: Vec<String>,
    healthy_gc_share: f64,
    /// Stages whose tasks no longer spill to disk, and the disk speed the spill is taken at.
    no_spill_in: HashSet<i64>,
    disk_bytes_per_ms: f64,
    /// Failed attempts left out: on these executors (by id), or on all when `None`.
    failed_on: Option<Option<HashSet<String>>>,
    /// Killed speculative copies, a re-run stage attempt's killed tasks, and the re-runs of
    /// stages resubmitted for lost shuffle output left out.
    wasted: bool,
    /// Stages whose tasks long for their data have it spread over the cores.
    spread_in: HashSet<i64>,
    /// Stages whose stragglers are re-run by speculation.
    speculate_in: HashSet<i64>,
    /// Executors (by id) whose tasks run at the others' pace.
    slow_executors: Vec<String>,
}

/// The long task of `facts`' stage attempt `stage` that `t` is, if it is one.
fn long_task<'f>(facts: &'f Facts, stage: usize, t: &Task) -> Option<&'f LongTask> {
    let long = &facts.stages.get(stage)?.facts.slowness.long_tasks;
    long.iter().find(|l| l.task_id == t.task_id)
}

impl TaskFixes {
    fn is_empty(&self) -> bool {
        self.gc_on.is_empty()
            && self.no_spill_in.is_empty()
            && self.failed_on.is_none()
            && !self.wasted
            && self.spread_in.is_empty()
            && self.speculate_in.is_empty()
            && self.slow_executors.is_empty()
    }

    /// The tasks of `app`'s stage attempts as these fixes leave them, into `changes`; `facts`
    /// are `app`'s, `cores` the replay's slots.
    fn apply(
        &self,
        graph: &Graph,
        app: &Application,
        facts: &Facts,
        cores: i64,
        changes: &mut StageChanges,
    ) {
        if self.is_empty() {
            return;
        }
        // Each slow executor's slowdown, by index in `app.executors`.
        let slowdown: std::collections::HashMap<usize, f64> = app
            .executors
            .iter()
            .enumerate()
            .filter(|(_, e)| self.slow_executors.contains(&e.id))
            .filter_map(|(i, _)| {
                let pace = facts.slowness.pace(i as u32)?;
                (pace.ratio > 1.0).then_some((i, pace.ratio))
            })
            .collect();
        let speculation_multiplier = app
            .spark_properties
            .get("spark.speculation.multiplier")
            .and_then(|v| v.trim().parse::<f64>().ok())
            .filter(|m| m.is_finite() && *m >= 1.0)
            .unwrap_or(SPECULATION_MULTIPLIER);
        let has_long = |i: usize, wanted: &dyn Fn(Cause) -> bool| {
            facts.stages.get(i).is_some_and(|s| {
                s.facts
                    .slowness
                    .long_tasks
                    .iter()
                    .any(|l| wanted(l.attribution.cause()))
            })
        };
        let gc_on: HashSet<usize> = app
            .executors
            .iter()
            .enumerate()
            .filter(|(_, e)| self.gc_on.contains(&e.id))
            .map(|(i, _)| i)
            .collect();
        let failed_on: Option<Option<HashSet<usize>>> = self.failed_on.as_ref().map(|only| {
            only.as_ref().map(|ids| {
                app.executors
                    .iter()
                    .enumerate()
                    .filter(|(_, e)| ids.contains(&e.id))
                    .map(|(i, _)| i)
                    .collect()
            })
        });
        // Which attempts a later attempt of the same stage replaced, and which re-ran a stage
        // whose earlier attempt had completed (its shuffle output lost): all of that is re-run.
        let (mut superseded, mut rerun) =
            (vec![false; app.stages.len()], vec![false; app.stages.len()]);
        if self.wasted {
            // As FA004 counts them: re-runs inside a job that failed anyway are what that job
            // lost, not what avoiding the re-runs saves.
            let failed_jobs: HashSet<i64> = app
                .jobs
                .iter()
                .filter(|j| j.status == JobStatus::Failed)
                .map(|j| j.job_id)
                .collect();
            let mut by_stage: std::collections::HashMap<i64, Vec<usize>> = Default::default();
            for (i, s) in app.stages.iter().enumerate() {
                by_stage.entry(s.stage_id).or_default().push(i);
            }
            for attempts in by_stage.values() {
                for &i in attempts {
                    let me = &app.stages[i];
                    superseded[i] = attempts
                        .iter()
                        .any(|&j| app.stages[j].attempt_id > me.attempt_id);
                    // A later attempt of a stage none of whose earlier attempts failed was
                    // resubmitted for its lost shuffle output: finished work run again.
                    let in_failed_job = !me.job_ids.is_empty()
                        && me.job_ids.iter().all(|j| failed_jobs.contains(j));
                    superseded[i] &= !in_failed_job;
                    rerun[i] = me.attempt_id > 0
                        && !in_failed_job
                        && !attempts.iter().any(|&j| {
                            app.stages[j].attempt_id < me.attempt_id
                                && app.stages[j].status == StageStatus::Failed
                        });
                }
            }
        }
        let touches = |i: usize| {
            let s = &app.stages[i];
            (!gc_on.is_empty() && s.totals.jvm_gc_time > 0)
                || (self.no_spill_in.contains(&s.stage_id) && s.totals.disk_bytes_spilled > 0)
                || (failed_on.is_some() && s.failed_tasks > 0)
                || (self.wasted && (s.killed_tasks > 0 || rerun[i]))
                || (self.spread_in.contains(&s.stage_id) && has_long(i, &|c| c == Cause::Data))
                || (self.speculate_in.contains(&s.stage_id) && has_long(i, &straggling))
                || facts.stages.get(i).is_some_and(|f| {
                    f.facts
                        .executors
                        .iter()
                        .any(|e| slowdown.contains_key(&(*e as usize)))
                })
        };
        let edit = |i: usize, t: &Task| -> TaskEdit {
            let duration = i64::from(t.duration_ms);
            if t.outcome == TaskOutcome::Failed
                && failed_on.as_ref().is_some_and(|on| {
                    on.as_ref()
                        .is_none_or(|on| on.contains(&(t.executor as usize)))
                })
            {
                return TaskEdit::Drop;
            }
            if self.wasted
                && (rerun[i]
                    || (t.outcome == TaskOutcome::Killed && (t.speculative || superseded[i])))
            {
                return TaskEdit::Drop;
            }
            let run = i64::from(t.metrics.run_ms);
            let mut cut = 0i64;
            if gc_on.contains(&(t.executor as usize)) {
                cut += (f64::from(t.metrics.gc_ms) - self.healthy_gc_share * run as f64).max(0.0)
                    as i64;
            }
            if t.metrics.disk_spill > 0 && self.no_spill_in.contains(&app.stages[i].stage_id) {
                let io =
                    (2.0 * t.metrics.disk_spill as f64 / self.disk_bytes_per_ms.max(1.0)) as i64;
                // Spill is disk time, off the CPU: never more than the task spent off it.
                let off_cpu = match t.metrics.cpu_ms {
                    Some(cpu_ms) => run - i64::from(cpu_ms),
                    None => run / 2,
                };
                cut += io.min(off_cpu.max(0));
            }
            let mut left = duration - cut.clamp(0, run.min(duration));
            // Each long task goes to the one fix its cause names, so that two fixes never take
            // the same seconds: its data spread, its straggling cut by a copy, or its slow
            // executor's pace; a cold start is paid as measured.
            let long = long_task(facts, i, t).filter(|_| t.outcome == TaskOutcome::Success);
            let cause = long.map(|l| l.attribution.cause());
            let typical = facts
                .stages
                .get(i)
                .map_or(0, |s| i64::from(s.facts.slowness.typical.duration_ms));
            if let Some(&ratio) = slowdown.get(&(t.executor as usize))
                && t.outcome == TaskOutcome::Success
                && !matches!(cause, Some(Cause::Data | Cause::ColdStart))
            {
                left = (left as f64 / ratio).round() as i64;
            }
            if self.speculate_in.contains(&app.stages[i].stage_id)
                && cause.is_some_and(straggling)
                && let Some(stage) = facts.stages.get(i)
            {
                let typical = &stage.facts.slowness.typical;
                left = typical.speculated_ms(t.launch_ms, left, speculation_multiplier);
            }
            if self.spread_in.contains(&app.stages[i].stage_id) && cause == Some(Cause::Data) {
                let n = pieces(left, typical.max(1), Some(cores.max(1) as usize));
                if n > 1 {
                    return TaskEdit::Split {
                        pieces: n,
                        each_ms: (left + i64::from(n) - 1) / i64::from(n),
                    };
                }
            }
            TaskEdit::Take(left)
        };
        graph.edit_tasks(app, changes, touches, edit);
    }
}

/// A long task SK002 names: long with the others' data on a warm, healthy executor.
fn straggling(cause: Cause) -> bool {
    !matches!(cause, Cause::Data | Cause::Executor | Cause::ColdStart)
}

impl Applied {
    fn of<'a>(changes: impl IntoIterator<Item = &'a Change>) -> Applied {
        let mut applied = Applied::default();
        for change in changes {
            match change {
                Change::MergePartitions { stages, partitions }
                | Change::SplitPartitions { stages, partitions } => applied
                    .stages
                    .extend(stages.iter().map(|&s| (s, StageChange::Merge(*partitions)))),
                Change::SpreadSkewedData { stages } => {
                    applied.tasks.spread_in.extend(stages.iter().copied())
                }
                Change::SpeculateStragglers { stages } => {
                    applied.tasks.speculate_in.extend(stages.iter().copied())
                }
                Change::AvoidSlowExecutors { executors } => applied
                    .tasks
                    .slow_executors
                    .extend(executors.iter().cloned()),
                Change::RemoveDriverGaps => applied.remove_driver_gaps = true,
                Change::AddCores { cores } => {
                    applied.cores = Some(applied.cores.unwrap_or(0).max(*cores))
                }
                Change::ReduceGc {
                    executors,
                    healthy_permille,
                } => {
                    let fix = &mut applied.tasks;
                    fix.gc_on.extend(executors.iter().cloned());
                    fix.healthy_gc_share = *healthy_permille as f64 / 1000.0;
                }
                Change::AvoidSpill {
                    stages,
                    disk_mb_per_s,
                } => {
                    let fix = &mut applied.tasks;
                    fix.no_spill_in.extend(stages.iter().copied());
                    fix.disk_bytes_per_ms = *disk_mb_per_s as f64 * 1000.0;
                }
                Change::RemoveFailedAttempts { executors } => {
                    let fix = &mut applied.tasks;
                    fix.failed_on = match (fix.failed_on.take(), executors.is_empty()) {
                        (Some(None), _) | (_, true) => Some(None),
                        (Some(Some(mut on)), false) => {
                            on.extend(executors.iter().cloned());
                            Some(Some(on))
                        }
                        (None, false) => Some(Some(executors.iter().cloned().collect())),
                    };
                }
                Change::RemoveWastedAttempts => applied.tasks.wasted = true,
                // Not replayed (`Change::replayable`): a plan rewrite, which the log cannot
                // replay, or money rather than wall-clock time. Listed, not caught by `_`, so
                // that a new kind of change is a compile error here until it is decided.
                Change::DropExchange { .. }
                | Change::BroadcastSide { .. }
                | Change::ScanOnce { .. }
                | Change::FasterCommit { .. }
                | Change::ReleaseIdleExecutors
                | Change::ShrinkHeap { .. } => {}
            }
        }
        applied
    }

    /// The cores this set of changes replays on.
    fn cores(&self, cores_today: i64) -> i64 {
        self.cores.unwrap_or(cores_today).max(1)
    }

    /// Its tasks as its task fixes leave them: each touched stage's tasks read again, the
    /// dearest part of a replay (a fix on every executor reads every task).
    fn edited_tasks(
        &self,
        graph: &Graph,
        app: &Application,
        facts: &Facts,
        cores_today: i64,
    ) -> StageChanges {
        let mut edited = StageChanges::default();
        self.tasks
            .apply(graph, app, facts, self.cores(cores_today), &mut edited);
        edited
    }

    /// Its replay: the wall clock and the cores it ran on, with its tasks as `edited` holds
    /// them ([`Applied::edited_tasks`], of this set or of one with the same task fixes).
    fn replay_edited(&self, graph: &Graph, cores_today: i64, edited: &StageChanges) -> (i64, i64) {
        let cores = self.cores(cores_today);
        let mut changes: StageChanges = graph.stage_changes(&self.stages);
        changes.take_tasks_of(edited);
        let ms = graph.replay_with(
            ReplayOptions {
                slots: Some(cores as usize),
                cut_skew: false,
                remove_driver_gaps: self.remove_driver_gaps,
            },
            &changes,
        );
        (ms, cores)
    }

    fn replay(
        &self,
        graph: &Graph,
        app: &Application,
        facts: &Facts,
        cores_today: i64,
    ) -> (i64, i64) {
        let edited = self.edited_tasks(graph, app, facts, cores_today);
        self.replay_edited(graph, cores_today, &edited)
    }

    /// Whether `other`'s tasks are edited exactly as this set's are.
    fn edits_tasks_as(&self, other: &Applied, cores_today: i64) -> bool {
        self.tasks == other.tasks && self.cores(cores_today) == other.cores(cores_today)
    }
}

/// What the replay assumes for `change`.
pub fn assumption(change: &Change) -> &'static str {
    match change {
        Change::SplitPartitions { .. } => {
            "replayed: the stage's measured task time spread evenly over the new partitions, as if its data spread evenly over its keys (the log holds no per-key sizes, and a hot key stays in one partition however many there are, so this is the most the split saves), plus each new task's average scheduling, deserialisation and result overhead (no spill or GC saved); the rest of the run as measured"
        }
        Change::MergePartitions { .. } => {
            "replayed: the stage's measured task time spread evenly over the new partitions, less each merged task's average scheduling, deserialisation and result overhead; the rest of the run as measured"
        }
        Change::SpreadSkewedData { .. } => {
            "replayed: each task of the stage long for its data (more bytes or records than the stage's typical task) runs as pieces of a typical task's length, at most one a core, side by side (the work kept, only spread: what AQE's skew join, a salt or a rebalance does); the rest of the run as measured"
        }
        Change::SpeculateStragglers { .. } => {
            "replayed: each straggler of the stage (long with the others' data, on a warm executor that is not slow) ends once a speculative copy, launched when it has run spark.speculation.multiplier (1.5 unless set) times the stage's typical task, has run a typical task; the rest of the run as measured"
        }
        Change::AvoidSlowExecutors { .. } => {
            "replayed: each task on the named executors takes its measured time over the executor's slowdown (the median of its tasks against the other executors' on the same data, first waves left out), except its tasks long for their data or a cold start; the rest of the run as measured"
        }
        Change::RemoveDriverGaps => {
            "replayed: each job submitted as soon as the job it waited for ended (the driver's work between jobs moved into Spark); the tasks as measured"
        }
        Change::AddCores { .. } => {
            "replayed: every task takes the time it measured, on the given number of cores"
        }
        Change::ReduceGc { .. } => {
            "replayed: each task on the named executors takes its measured time less its GC beyond the healthy share of its run time (more heap per task removes the excess collection, not all of it); the rest of the run as measured"
        }
        Change::AvoidSpill { .. } => {
            "replayed: each spilling task of the named stages takes its measured time less writing and reading its disk spill once at the stated disk speed, never more than the time it spent off the CPU; the rest of the run as measured"
        }
        Change::RemoveFailedAttempts { .. } => {
            "replayed: the failed task attempts left out (their retries, which the log has, did the work); the rest of the run as measured"
        }
        Change::RemoveWastedAttempts => {
            "replayed: killed speculative copies, the killed tasks of stage attempts that were re-run, and re-runs of stages that had completed left out; the rest of the run as measured"
        }
        Change::DropExchange { .. }
        | Change::BroadcastSide { .. }
        | Change::ScanOnce { .. }
        | Change::FasterCommit { .. }
        | Change::ReleaseIdleExecutors
        | Change::ShrinkHeap { .. } => "not replayed",
    }
}

/// The outcome of replaying the findings' changes.
pub struct Replayed {
    /// One per distinct replayed change, in the findings' order, then "every fix applied" (the
    /// changes whose own replay saved time, together).
    pub scenarios: Vec<Scenario>,
    /// Today's replay less the replay with every replayable fix applied, within the wall clock.
    pub recoverable_ms: i64,
    /// The merge changes together, for the cores advice: partitioning comes before cores.
    pub merges: Vec<(i64, StageChange)>,
}

/// For each finding, the finding whose time holds its own, so that it is not replayed on its
/// own: failed attempts all inside jobs that failed are part of those failures, which an
/// outcome (FA001) counts as lost (leaving them out saves nothing: the jobs still fail); and a
/// change another finding's wider change holds (FA003's lost executors' failed attempts inside
/// FA002's) has its time there. Chains end at their root: FA003 inside FA002 inside FA001 is
/// "in FA001".
fn covered_by(app: &Application, findings: &[Finding]) -> Vec<Option<&'static str>> {
    let stages_of_jobs = |jobs: &[i64]| -> HashSet<i64> {
        app.jobs
            .iter()
            .filter(|j| j.status == JobStatus::Failed && jobs.contains(&j.job_id))
            .flat_map(|j| j.stage_ids.iter().copied())
            .collect()
    };
    let failures: Vec<(&'static str, HashSet<i64>)> = findings
        .iter()
        .filter(|g| g.is_outcome() && !g.scope.job_ids.is_empty())
        .map(|g| (g.rule, stages_of_jobs(&g.scope.job_ids)))
        .filter(|(_, stages)| !stages.is_empty())
        .collect();
    let direct: Vec<Option<usize>> = findings
        .iter()
        .map(|f| {
            let change = &f.counterfactual.as_ref()?.change;
            let inside_a_failure = matches!(change, Change::RemoveFailedAttempts { .. })
                && !f.scope.stage_ids.is_empty();
            if inside_a_failure
                && let Some((rule, _)) = failures
                    .iter()
                    .find(|(_, stages)| f.scope.stage_ids.iter().all(|s| stages.contains(s)))
            {
                return findings.iter().position(|g| g.rule == *rule);
            }
            findings.iter().position(|g| {
                g.cost_core_hours.is_none()
                    && g.counterfactual
                        .as_ref()
                        .is_some_and(|c| c.change.replayable() && c.change.strictly_covers(change))
            })
        })
        .collect();
    (0..findings.len())
        .map(|i| {
            let mut at = direct[i]?;
            // Each step moves to a wider change or to an outcome, which holds none: a chain
            // ends within as many steps as there are findings.
            for _ in 0..findings.len() {
                match direct[at] {
                    Some(next) if next != i => at = next,
                    _ => break,
                }
            }
            Some(findings[at].rule)
        })
        .collect()
}

/// Sets each time-saving finding's `impact_ms` to its replayed saving (findings that share a
/// change share one saving: the first keeps it), re-rates its severity from it, and returns the
/// scenarios for the what-if section.
pub fn replay_findings(
    graph: &Graph,
    app: &Application,
    facts: &Facts,
    cores_today: i64,
    today_ms: i64,
    findings: &mut [Finding],
) -> Replayed {
    let wall_ms = graph.wall_ms();
    let change_vs_today = |predicted: i64| crate::change_vs(today_ms, predicted);
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut replayed: Vec<Change> = Vec::new();
    let covered_by = covered_by(app, findings);
    // Each distinct change is replayed on its own, all of them at once on every core; the walk
    // below then reads each one's result in the findings' order.
    let mut changes: Vec<&Change> = Vec::new();
    for (i, f) in findings.iter().enumerate() {
        if let Some(cf) = &f.counterfactual
            && f.cost_core_hours.is_none()
            && cf.change.replayable()
            && covered_by[i].is_none()
            && !changes.contains(&&cf.change)
        {
            changes.push(&cf.change);
        }
    }
    // Every fix together edits the tasks as one of them alone does when it is the only one
    // that edits tasks (GC001's beside DR002's gaps): that one's edited tasks are kept for it,
    // and no other, so that at most one set of edits is held beside the replays.
    let together = Applied::of(changes.iter().copied());
    let mut replays: Vec<(Change, (i64, i64), Option<Edited>)> = {
        use rayon::prelude::*;
        changes
            .par_iter()
            .map(|&change| {
                let applied = Applied::of([change]);
                let edited = applied.edited_tasks(graph, app, facts, cores_today);
                let replay = applied.replay_edited(graph, cores_today, &edited);
                let kept = (!applied.tasks.is_empty()
                    && applied.edits_tasks_as(&together, cores_today))
                .then_some((applied, edited));
                (change.clone(), replay, kept)
            })
            .collect()
    };
    let kept_edits: Option<Edited> = replays.iter_mut().find_map(|(_, _, kept)| kept.take());
    let alone: Vec<(Change, (i64, i64))> = replays
        .into_iter()
        .map(|(change, replay, _)| (change, replay))
        .collect();
    for (i, f) in findings.iter_mut().enumerate() {
        if f.cost_core_hours.is_some() {
            continue;
        }
        // What a run lost (executors' failed work) is replayed too, as what it cost the run; it
        // keeps its own severity and is no fix to apply with the others.
        let outcome = f.is_outcome();
        let Some(cf) = f.counterfactual.as_mut() else {
            continue;
        };
        if !cf.change.replayable() {
            continue;
        }
        // Not replayed on its own: its time is the wider change's. What the run lost (executors
        // that died) keeps its severity: the event still matters, its time is counted once.
        if let Some(wider) = covered_by[i] {
            f.evidence
                .insert("rule_estimate_ms".into(), f.impact_ms.into());
            f.evidence.insert("same_change_as".into(), wider.into());
            f.impact_ms = 0;
            if !outcome {
                f.severity = f.severity.at_most(Severity::Low);
            }
            continue;
        }
        cf.replayed = true;
        cf.assumption = assumption(&cf.change).to_string();
        f.evidence
            .insert("rule_estimate_ms".into(), f.impact_ms.into());
        if let Some(first) = scenarios
            .iter_mut()
            .find(|s| s.change.as_ref() == Some(&cf.change))
        {
            // Two findings, one fix: its saving is counted once, under the first.
            f.evidence
                .insert("same_change_as".into(), first.findings[0].into());
            first.findings.push(f.rule);
            f.impact_ms = 0;
            f.severity = f.severity.at_most(Severity::Low);
            continue;
        }
        let (predicted_ms, cores) = alone
            .iter()
            .find(|(change, _)| *change == cf.change)
            .map(|(_, replay)| *replay)
            .expect("every change to replay was replayed");
        let saving = (today_ms - predicted_ms).clamp(0, wall_ms);
        f.evidence.insert("replayed_ms".into(), saving.into());
        // Where a larger finding already explained part of this one's time (the settlement
        // gave it less than its estimate, `time_attributed_to`), the replay's saving keeps only
        // that share: the GC behind a slow task is not counted again as the slow task.
        let share = match (
            f.evidence.get("estimated_ms").and_then(|v| v.as_i64()),
            f.evidence.contains_key("time_attributed_to"),
        ) {
            (Some(estimate), true) if estimate > 0 => {
                (f.evidence.get("rule_estimate_ms").and_then(|v| v.as_i64())).unwrap_or(0) as f64
                    / estimate as f64
            }
            _ => 1.0,
        };
        let replay_saving = saving;
        let saving = (saving as f64 * share.clamp(0.0, 1.0)).round() as i64;
        f.impact_ms = saving;
        if !outcome {
            f.severity = Severity::from_saving(saving, wall_ms).within(f.severity_ceiling);
        }
        // A change the replay finds no faster (nine equal partitions on nine cores that arrive
        // at different times) is not a fix to apply with the others. One whose time the
        // settlement credited to another finding still is: replayed together, nothing is
        // counted twice, and every fix together must not be worse than this one alone.
        if replay_saving > 0 && !outcome {
            replayed.push(cf.change.clone());
        }
        scenarios.push(Scenario {
            label: format!("{}: {}", f.rule, cf.change.describe()),
            cores,
            cut_skew: false,
            remove_driver_gaps: false,
            predicted_ms,
            change_vs_today: change_vs_today(predicted_ms),
            change: Some(cf.change.clone()),
            findings: vec![f.rule],
            every_fix: false,
        });
    }
    credit_the_fix_that_removes(findings, wall_ms);
    let mut recoverable_ms = 0;
    if !replayed.is_empty() {
        // Two fixes of one stage can exclude each other: merging a stage leaves no skew to
        // cut, and on few cores the cut may be worth more. So the fixes together are the best
        // of every change applied, of the cuts kept where they compete with a merge, and of
        // each fix alone, never worse than the best single fix.
        let cut_stages: Vec<i64> = replayed
            .iter()
            .flat_map(|c| match c {
                Change::SpreadSkewedData { stages } => stages.clone(),
                _ => Vec::new(),
            })
            .collect();
        let cuts_first: Vec<Change> = replayed
            .iter()
            .filter(|c| match c {
                Change::MergePartitions { stages, .. } | Change::SplitPartitions { stages, .. } => {
                    !stages.iter().any(|s| cut_stages.contains(s))
                }
                _ => true,
            })
            .cloned()
            .collect();
        let mut candidates: Vec<Vec<Change>> = vec![replayed.clone()];
        if cuts_first.len() < replayed.len() {
            candidates.push(cuts_first);
        }
        candidates.extend(replayed.iter().map(|c| vec![c.clone()]));
        // Replayed at once, then the best taken in the candidates' order (the first of equals).
        // A single fix was replayed alone above; a set whose tasks are edited as a kept
        // single fix's are reads them from it.
        let replays: Vec<(i64, i64)> = {
            use rayon::prelude::*;
            candidates
                .par_iter()
                .map(|set| {
                    if let [single] = set.as_slice()
                        && let Some((_, replay)) = alone.iter().find(|(c, _)| c == single)
                    {
                        return *replay;
                    }
                    let applied = Applied::of(set);
                    match &kept_edits {
                        Some((kept, edited)) if applied.edits_tasks_as(kept, cores_today) => {
                            applied.replay_edited(graph, cores_today, edited)
                        }
                        _ => applied.replay(graph, app, facts, cores_today),
                    }
                })
                .collect()
        };
        let (set, (predicted_ms, cores)) = candidates
            .into_iter()
            .zip(replays)
            .min_by_key(|(set, (ms, _))| (*ms, std::cmp::Reverse(set.len())))
            .expect("at least one fix");
        recoverable_ms = (today_ms - predicted_ms).clamp(0, wall_ms);
        let findings = scenarios
            .iter()
            .filter(|s| s.change.as_ref().is_some_and(|c| set.contains(c)))
            .flat_map(|s| s.findings.clone())
            .collect();
        scenarios.push(Scenario {
            label: "every fix applied".into(),
            cores,
            cut_skew: false,
            remove_driver_gaps: false,
            predicted_ms,
            change_vs_today: change_vs_today(predicted_ms),
            change: None,
            findings,
            every_fix: true,
        });
    }
    let merges = Applied::of(replayed.iter().filter(|c| {
        matches!(
            c,
            Change::MergePartitions { .. } | Change::SplitPartitions { .. }
        )
    }))
    .stages;
    Replayed {
        scenarios,
        recoverable_ms,
        merges,
    }
}

/// A fix that removes the stages another finding is about is credited with that finding's
/// saving: broadcasting a join's small side removes the join's shuffle, and with it the skew of
/// the join stage, so the broadcast finding (EX003) gains the skew finding's replayed saving
/// and ranks by it, and both say they share the fix (`also_removes`, `removed_by_fix_of`). The
/// same holds for gzip input read again (PL008 on unsplittable files): its fix reads the files
/// once and repartitions the cached data, which is what spreads those stages' few, large
/// partitions (PA002) over the cores. The finding whose stages are removed keeps its own saving
/// for its own fix (AQE's skew join, more partitions); `includes_replayed_ms` keeps the shared
/// part apart, so the report's and the night's totals count it once.
fn credit_the_fix_that_removes(findings: &mut [Finding], wall_ms: i64) {
    for a in 0..findings.len() {
        let Some(fix) = RemovingFix::of(&findings[a]) else {
            continue;
        };
        let inside: Vec<usize> = (0..findings.len())
            .filter(|&b| b != a && fix.removes(&findings[b]))
            .collect();
        if inside.is_empty() {
            continue;
        }
        let rule = findings[a].rule;
        let gained: i64 = inside.iter().map(|&b| findings[b].impact_ms).sum();
        let rules: Vec<&'static str> = inside.iter().map(|&b| findings[b].rule).collect();
        for &b in &inside {
            let f = &mut findings[b];
            f.evidence.insert("removed_by_fix_of".into(), rule.into());
            f.recommendation = format!(
                "{rule}'s fix, {}, {}: one fix, whose saving {rule}'s holds. Otherwise: {}",
                fix.doing(),
                fix.removing(),
                f.recommendation
            );
        }
        let f = &mut findings[a];
        f.evidence
            .insert("includes_replayed_ms".into(), gained.into());
        f.evidence
            .insert("also_removes".into(), rules.clone().into());
        f.impact_ms = (f.impact_ms + gained).min(wall_ms);
        f.severity = f.severity.min(Severity::from_saving(f.impact_ms, wall_ms));
        f.recommendation = format!(
            "{} This also {} that {} is about.",
            f.recommendation,
            fix.also(),
            rules.join(", ")
        );
    }
}

/// A finding's fix that takes away the stages of other findings, with what it removes.
enum RemovingFix {
    /// EX003: the join's shuffle stages, and the skew of a join stage among them.
    Broadcast { stages: Vec<i64> },
    /// PL008 on gzip input: the re-reads of few large partitions, read once and repartitioned.
    ReadGzipOnce { stages: Vec<i64> },
}

impl RemovingFix {
    fn of(f: &Finding) -> Option<Self> {
        match f.counterfactual.as_ref().map(|c| &c.change) {
            Some(Change::BroadcastSide { stages }) => Some(RemovingFix::Broadcast {
                stages: stages.clone(),
            }),
            Some(Change::ScanOnce { .. })
                if f.evidence.get("unsplittable").and_then(|v| v.as_bool()) == Some(true) =>
            {
                Some(RemovingFix::ReadGzipOnce {
                    stages: f.scope.stage_ids.clone(),
                })
            }
            _ => None,
        }
    }

    fn removes(&self, f: &Finding) -> bool {
        let within = |inner: &[i64], outer: &[i64]| {
            !inner.is_empty() && inner.iter().all(|s| outer.contains(s))
        };
        let unshared = f.impact_ms > 0
            && !f.evidence.contains_key("same_change_as")
            && !f.evidence.contains_key("removed_by_fix_of");
        let change = f.counterfactual.as_ref().map(|c| &c.change);
        unshared
            && match (self, change) {
                (
                    RemovingFix::Broadcast { stages: removed },
                    Some(Change::SpreadSkewedData { stages }),
                ) => {
                    within(stages, removed)
                        && f.evidence.get("stage_shape").and_then(|v| v.as_str()) == Some("join")
                }
                (
                    RemovingFix::ReadGzipOnce { stages: read },
                    Some(Change::SplitPartitions { stages, .. }),
                ) => within(stages, read),
                _ => false,
            }
    }

    fn doing(&self) -> &'static str {
        match self {
            RemovingFix::Broadcast { .. } => "broadcasting the join's small side",
            RemovingFix::ReadGzipOnce { .. } => {
                "reading the gzip files once and repartitioning the cached data (or converting them to Parquet)"
            }
        }
    }

    fn removing(&self) -> &'static str {
        match self {
            RemovingFix::Broadcast { .. } => "removes this join's shuffle and its skew with it",
            RemovingFix::ReadGzipOnce { .. } => {
                "spreads these stages' few large partitions over the cores"
            }
        }
    }

    fn also(&self) -> &'static str {
        match self {
            RemovingFix::Broadcast { .. } => "removes the skewed join stage",
            RemovingFix::ReadGzipOnce { .. } => "spreads the few large partitions of the stages",
        }
    }
}

/// Caps the impacts, largest first, so that together they never exceed `wall_ms`: replayed
/// savings are each within the run, but two of them can see the same time. More cores come
/// last: they run faster whatever work is left, so the fixes that remove work keep the time
/// both see (UT002's advice says the same: fix the others first).
pub fn cap_to_runtime(findings: &mut [Finding], wall_ms: i64) {
    let mut order: Vec<usize> = (0..findings.len()).collect();
    let adds_cores = |f: &Finding| {
        matches!(
            f.counterfactual.as_ref().map(|c| &c.change),
            Some(Change::AddCores { .. })
        )
    };
    order.sort_by_key(|&i| {
        (
            adds_cores(&findings[i]),
            std::cmp::Reverse(findings[i].impact_ms),
        )
    });
    let mut left = wall_ms.max(0);
    for i in order {
        let f = &mut findings[i];
        if f.impact_ms > left {
            f.evidence
                .insert("capped_from_ms".into(), f.impact_ms.into());
            f.impact_ms = left;
        }
        left -= f.impact_ms;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparkdiag_facts::testing::apps;

    /// What `replay_findings` reuses: a set of fixes whose tasks are edited as one fix's alone
    /// are replays the same from that fix's edited tasks as from its own, and a set with a
    /// second task fix is not taken for it.
    #[test]
    fn a_set_replays_the_same_from_the_edits_of_a_fix_with_the_same_task_fixes() {
        let mut edited_somewhere = false;
        for log in [
            "logs/patterns/gc-pressure",
            "logs/patterns/spill",
            "logs/patterns/executor-lost",
            "logs/patterns/driver-loop-serial",
        ] {
            let app = &apps(log)[0];
            let facts = Facts::of(app);
            let graph = Graph::with_stage_stats(app, &facts.stages).expect("a replayable log");
            let cores = facts.peak_cores.max(1);
            let executors: Vec<String> = app.executors.iter().map(|e| e.id.clone()).collect();
            let stages: Vec<i64> = app.stages.iter().map(|s| s.stage_id).collect();
            let task_fixes = [
                Change::ReduceGc {
                    executors,
                    healthy_permille: 50,
                },
                Change::AvoidSpill {
                    stages,
                    disk_mb_per_s: 100,
                },
                Change::RemoveFailedAttempts {
                    executors: Vec::new(),
                },
            ];
            for (i, fix) in task_fixes.iter().enumerate() {
                let alone = Applied::of([fix]);
                let edited = alone.edited_tasks(&graph, app, &facts, cores);
                edited_somewhere |= !edited.is_empty();
                let with_gaps = Applied::of([fix, &Change::RemoveDriverGaps]);
                assert!(with_gaps.edits_tasks_as(&alone, cores), "{log}: {fix:?}");
                // The set's own edits, made into its stage changes directly.
                let mut own = graph.stage_changes(&with_gaps.stages);
                with_gaps.tasks.apply(&graph, app, &facts, cores, &mut own);
                let options = ReplayOptions {
                    slots: Some(cores as usize),
                    cut_skew: false,
                    remove_driver_gaps: true,
                };
                assert_eq!(
                    with_gaps.replay_edited(&graph, cores, &edited),
                    (graph.replay_with(options, &own), cores),
                    "{log}: {fix:?} with the driver's gaps removed"
                );
                let other = &task_fixes[(i + 1) % task_fixes.len()];
                assert!(!Applied::of([fix, other]).edits_tasks_as(&alone, cores));
            }
        }
        assert!(edited_somewhere, "no log had a task the fixes change");
    }
}
