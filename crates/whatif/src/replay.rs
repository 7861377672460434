//! The replay: the application's jobs, stages and tasks scheduled again on a given number of task
//! slots, keeping what the log measured fixed (each task's duration, the DAG, the driver's time
//! between a job's end and the next submission).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use sparkdiag_facts::{StageStats, Varints};
use sparkdiag_model::{Application, StageStatus, Task};

/// What to change in a replay.
#[derive(Debug, Clone, Copy)]
pub struct ReplayOptions {
    /// Task slots (executor cores); `None` for as many as any stage could use.
    pub slots: Option<usize>,
    /// Spread every task longer than [`SKEW_RATIO`] times its stage's median over the cores:
    /// it runs as pieces of the median's length, at most one a slot, its work kept.
    pub cut_skew: bool,
    /// Submit each job as soon as the job it waited for ended: the driver's own time between
    /// jobs (a loop's Python work, a `collect` to the driver) removed.
    pub remove_driver_gaps: bool,
}

/// What a fix changes in one stage's tasks, for [`Graph::replay_with`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum StageChange {
    /// The stage's tasks run as this many tasks: the task time the log measured, less the
    /// average per-task overhead (scheduling, deserialisation, result) of each task merged away
    /// (or plus it for each task a split adds), shared evenly among them.
    Merge(i64),
}

/// What a fix does to one task, for [`Graph::edit_tasks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaskEdit {
    /// The attempt is not needed.
    Drop,
    /// It takes this long.
    Take(i64),
    /// Its work runs as this many pieces of this length, side by side.
    Split { pieces: u32, each_ms: i64 },
}

/// Per-stage changes, indexed like the graph's stage attempts; built by
/// [`Graph::stage_changes`], with task-level edits added by [`Graph::edit_tasks`].
#[derive(Debug, Clone, Default)]
pub struct StageChanges {
    by_node: Vec<Option<StageChange>>,
    /// A stage attempt's tasks as a fix leaves them, in launch order (a task the fix makes
    /// unnecessary left out); `None`: as measured.
    /// Packed as variable-length integers: a fix that touches every stage (GC001's) holds
    /// every task's new duration, 8 bytes a task as `i64`s (80 MB for 10M tasks).
    tasks: Vec<Option<std::sync::Arc<Varints>>>,
}

impl StageChanges {
    pub fn is_empty(&self) -> bool {
        self.by_node.iter().all(Option::is_none) && self.tasks.iter().all(Option::is_none)
    }

    fn get(&self, node: usize) -> Option<StageChange> {
        self.by_node.get(node).copied().flatten()
    }

    fn tasks(&self, node: usize) -> Option<&Varints> {
        self.tasks.get(node).and_then(|t| t.as_deref())
    }

    /// The task edits of `edited` (made by [`Graph::edit_tasks`] on the same graph) in place
    /// of these: shared, not copied, so that two replays with the same task fixes read the
    /// tasks once.
    pub fn take_tasks_of(&mut self, edited: &StageChanges) {
        if edited.tasks.iter().any(Option::is_some) {
            self.tasks.clone_from(&edited.tasks);
        }
    }
}

/// A task this many times its stage's median is spread in the skew-free replay (the data-skew
/// rule's ratio, Spark AQE's `skewedPartitionFactor`).
pub const SKEW_RATIO: i64 = 5;

/// The most pieces one task is spread into: a replay places each, and a stage's tasks are
/// bounded (a million, `StageNode::merged`).
pub const MAX_PIECES: u32 = 1024;

/// How many pieces of about `piece_ms` a task of `duration_ms` spreads into on `slots` slots
/// (unbounded when `None`): at least one, at most one a slot.
pub fn pieces(duration_ms: i64, piece_ms: i64, slots: Option<usize>) -> u32 {
    let wanted = (duration_ms.max(0) as u64).div_ceil(piece_ms.max(1) as u64);
    let cap = slots.map_or(MAX_PIECES, |s| (s as u32).clamp(1, MAX_PIECES));
    wanted.clamp(1, u64::from(cap)) as u32
}

struct JobNode {
    submit_ms: i64,
    end_ms: i64,
    /// The job whose end the driver waited for before submitting this one: the one that ended
    /// last before this submission. `None`: submitted before any job ended.
    after: Option<usize>,
    /// Time from `after`'s end (or the application's start) to this submission.
    gap_ms: i64,
    stages: Vec<usize>,
    /// From the last stage's end to the job's end.
    tail_ms: i64,
}

struct StageNode {
    job: usize,
    deps: Vec<usize>,
    dependents: Vec<usize>,
    /// From the moment the stage could start (its job submitted, its parents done) to its first
    /// task's launch.
    lead_ms: i64,
    /// From its last task's end to the stage's completion.
    tail_ms: i64,
    /// Every task attempt's duration (failed and killed attempts held a slot too), in launch
    /// order, as variable-length integers: one or two bytes a task for most, where millions of
    /// tasks must fit beside the model.
    tasks: Varints,
    /// The median of `tasks` (the upper one for an even count), the length of the pieces
    /// [`ReplayOptions::cut_skew`] spreads a skewed task into.
    median_ms: i64,
    stage_id: i64,
    /// The attempt's index in `Application::stages`.
    attempt: usize,
    /// What the tasks spent outside their own work, summed over the stage.
    overhead_ms: i64,
}

impl StageNode {
    /// The stage's task time in `n` tasks of equal length: every task's time (`edited`, where a
    /// fix changed the tasks, else as measured), less the average overhead of each task that
    /// merging removes (plus it for each task splitting adds).
    fn merged(&self, n: i64, edited: Option<&Varints>) -> Vec<i64> {
        let count = edited.map_or(self.tasks.len(), Varints::len) as i64;
        // Never more tasks than a replay can hold for one stage: a million.
        let n = n.clamp(1, 1 << 20);
        let total: i64 = match edited {
            Some(tasks) => tasks.iter().sum(),
            None => self.tasks.iter().sum(),
        };
        let per_task_overhead = if !self.tasks.is_empty() {
            self.overhead_ms / self.tasks.len() as i64
        } else {
            0
        };
        let kept = (total - per_task_overhead * (count - n)).max(n);
        let each = kept / n;
        let mut out = vec![each; n as usize];
        out[0] += kept - each * n;
        out
    }
}

/// The application as a graph of jobs and stage attempts, built once and replayed many times.
pub struct Graph {
    start_ms: i64,
    /// The application's end, or its last event.
    end_ms: i64,
    jobs: Vec<JobNode>,
    stages: Vec<StageNode>,
    /// The job that ended last: the application ends `final_gap_ms` after it.
    last_job: Option<usize>,
    final_gap_ms: i64,
    /// When each executor core became available, earliest first: cores that joined late
    /// (dynamic allocation, slow start-up) are not there before they came.
    core_arrivals: Vec<i64>,
}

impl Graph {
    pub fn new(app: &Application) -> Option<Graph> {
        Graph::with_stage_stats(app, &sparkdiag_facts::stage_stats(app))
    }

    /// [`Graph::new`] from the stages' statistics the rules already took (indexed like
    /// `app.stages`), without looking at the tasks again.
    pub fn with_stage_stats(app: &Application, stats: &[StageStats]) -> Option<Graph> {
        let start_ms = app.start_ms?;
        let end_ms = app.effective_end_ms()?.max(start_ms);
        let mut order: Vec<&sparkdiag_model::Job> = app
            .jobs
            .iter()
            .filter(|j| j.submission_ms.is_some())
            .collect();
        order.sort_by_key(|j| (j.submission_ms, j.job_id));
        let job_index = |id: i64| order.iter().position(|j| j.job_id == id);
        let mut jobs: Vec<JobNode> = order
            .iter()
            .map(|j| {
                let submit_ms = j.submission_ms.unwrap_or(start_ms).clamp(start_ms, end_ms);
                JobNode {
                    submit_ms,
                    end_ms: j.completion_ms.unwrap_or(end_ms).clamp(submit_ms, end_ms),
                    after: None,
                    gap_ms: 0,
                    stages: Vec::new(),
                    tail_ms: 0,
                }
            })
            .collect();
        // Jobs by end, so that each job finds the last one to end before it was submitted by a
        // search rather than a scan of every job (jobs grow with the log). A job ends no earlier
        // than it was submitted, so one that ended by `submit` was also submitted by then.
        let mut by_end: Vec<usize> = (0..jobs.len()).collect();
        by_end.sort_unstable_by_key(|&k| (jobs[k].end_ms, k));
        for i in 0..jobs.len() {
            let submit = jobs[i].submit_ms;
            let ended = by_end.partition_point(|&k| jobs[k].end_ms <= submit);
            let after = by_end[..ended].iter().rev().copied().find(|&k| k != i);
            jobs[i].after = after;
            jobs[i].gap_ms = submit - after.map_or(start_ms, |k| jobs[k].end_ms);
        }

        let mut stages: Vec<StageNode> = Vec::new();
        // (stage id, first launch or submission, end, node) of every replayed attempt.
        // `attempts[node]` is the attempt replayed as `stages[node]`.
        let mut attempts: Vec<(i64, i64, i64, usize)> = Vec::new();
        // Each stage id's replayed attempts, so that a stage finds its parents' without a scan
        // of every attempt.
        let mut attempts_of: std::collections::HashMap<i64, Vec<usize>> = Default::default();
        // The executors that ran a task.
        let runs_tasks: std::collections::HashSet<u32> = stats
            .iter()
            .flat_map(|s| s.facts.executors.iter().copied())
            .collect();
        let mut ran: Vec<(usize, &sparkdiag_model::StageAttempt)> = app
            .stages
            .iter()
            .enumerate()
            .filter(|(_, s)| {
                s.submission_ms.is_some()
                    && !matches!(s.status, StageStatus::Skipped | StageStatus::Pending)
            })
            .collect();
        ran.sort_by_key(|(_, s)| (s.submission_ms, s.stage_id, s.attempt_id));
        for (index, stage) in ran {
            let submitted = stage
                .submission_ms
                .unwrap_or(start_ms)
                .clamp(start_ms, end_ms);
            // The job that ran it: the latest of its jobs submitted by then.
            let Some(job) = stage
                .job_ids
                .iter()
                .filter_map(|&id| job_index(id))
                .filter(|&j| jobs[j].submit_ms <= submitted)
                .max_by_key(|&j| jobs[j].submit_ms)
                .or_else(|| stage.job_ids.iter().find_map(|&id| job_index(id)))
            else {
                continue;
            };
            let facts = &stats[index].facts;
            let first_launch = facts
                .first_launch_ms
                .unwrap_or(submitted)
                .clamp(submitted, end_ms);
            let last_end = if facts.tasks > 0 {
                facts.last_end_ms
            } else {
                first_launch
            };
            let completed = stage
                .completion_ms
                .unwrap_or(end_ms)
                .clamp(first_launch, end_ms)
                .max(last_end.min(end_ms));
            // What the stage waited for: earlier attempts of its parents and of itself.
            let mut deps: Vec<usize> = Vec::new();
            for parent in stage
                .parent_ids
                .iter()
                .chain(std::iter::once(&stage.stage_id))
            {
                let found = attempts_of
                    .get(parent)
                    .into_iter()
                    .flatten()
                    .map(|&node| &attempts[node])
                    .filter(|a| a.1 <= submitted)
                    .max_by_key(|a| (a.1, a.3));
                if let Some(a) = found {
                    deps.push(a.3);
                }
            }
            deps.sort_unstable();
            deps.dedup();
            let ready_real = deps
                .iter()
                .map(|&d| attempts[d].2)
                .chain(std::iter::once(jobs[job].submit_ms))
                .max()
                .unwrap_or(submitted);
            let node = stages.len();
            for &d in &deps {
                stages[d].dependents.push(node);
            }
            stages.push(StageNode {
                job,
                deps,
                dependents: Vec::new(),
                lead_ms: (first_launch - ready_real).max(0),
                tail_ms: (completed - last_end).max(0),
                median_ms: facts.middle_task_ms,
                tasks: facts.durations_by_launch.clone(),
                stage_id: stage.stage_id,
                attempt: index,
                overhead_ms: facts.overhead_ms.max(0),
            });
            jobs[job].stages.push(node);
            attempts.push((stage.stage_id, submitted, completed, node));
            attempts_of.entry(stage.stage_id).or_default().push(node);
        }
        for job in &mut jobs {
            let last_stage = job
                .stages
                .iter()
                .map(|&s| attempts[s].2)
                .max()
                .unwrap_or(job.submit_ms);
            job.tail_ms = (job.end_ms - last_stage.max(job.submit_ms)).max(0);
        }
        let mut core_arrivals: Vec<i64> = app
            .executors
            .iter()
            .enumerate()
            .filter(|(i, e)| e.id != "driver" || runs_tasks.contains(&(*i as u32)))
            .flat_map(|(_, e)| {
                let at = e.added_ms.unwrap_or(start_ms).clamp(start_ms, end_ms);
                std::iter::repeat_n(at, e.cores.unwrap_or(1).clamp(1, 4096) as usize)
            })
            .collect();
        core_arrivals.sort_unstable();
        let last_job = (0..jobs.len()).max_by_key(|&k| (jobs[k].end_ms, k));
        let final_gap_ms = end_ms - last_job.map_or(start_ms, |k| jobs[k].end_ms);
        Some(Graph {
            start_ms,
            end_ms,
            jobs,
            stages,
            last_job,
            final_gap_ms,
            core_arrivals,
        })
    }

    /// The application's wall clock as the log measured it.
    pub fn wall_ms(&self) -> i64 {
        self.end_ms - self.start_ms
    }

    /// The most slots any stage could use at once.
    pub fn max_parallelism(&self) -> usize {
        self.stages
            .iter()
            .map(|s| s.tasks.len())
            .max()
            .unwrap_or(1)
            .max(1)
    }

    /// Every attempt of the named stages given `change`; a later entry for a stage wins.
    pub fn stage_changes(&self, changes: &[(i64, StageChange)]) -> StageChanges {
        let mut by_node = vec![None; self.stages.len()];
        let tasks = vec![None; self.stages.len()];
        if changes.is_empty() {
            return StageChanges { by_node, tasks };
        }
        let wanted: std::collections::HashMap<i64, StageChange> = changes.iter().copied().collect();
        for (node, stage) in self.stages.iter().enumerate() {
            by_node[node] = wanted.get(&stage.stage_id).copied();
        }
        StageChanges { by_node, tasks }
    }

    /// Each task of the stage attempts `touches` accepts (by index in `app.stages`) as `edit`
    /// leaves it ([`TaskEdit`]). The tasks of `app`, the application this graph was built from,
    /// are read again only for those attempts, and an attempt whose tasks all stay as they were
    /// is left as measured.
    pub fn edit_tasks(
        &self,
        app: &Application,
        changes: &mut StageChanges,
        touches: impl Fn(usize) -> bool + Sync,
        edit: impl Fn(usize, &Task) -> TaskEdit + Sync,
    ) {
        use rayon::prelude::*;
        changes.by_node.resize(self.stages.len(), None);
        // The stages on every core: a fix touching every stage reads every task, and the
        // findings' replays wait for the dearest of them.
        changes.tasks = self
            .stages
            .par_iter()
            .map(|stage| {
                let attempt = app
                    .stages
                    .get(stage.attempt)
                    .filter(|_| touches(stage.attempt))?;
                // Each task once, built from the stage's columns without unfolding the whole
                // stage: a fix touching every stage held one unfolded beside the rest (19 MB for
                // 100,000 tasks). Kept: its launch, duration, new duration (-1: none) and pieces.
                let mut by_launch: Vec<(i64, u32, i64, u32)> =
                    Vec::with_capacity(attempt.tasks.len());
                let mut changed = false;
                app.for_each_stage_task(attempt, |t| {
                    let edited = edit(stage.attempt, t);
                    changed |= edited != TaskEdit::Take(i64::from(t.duration_ms));
                    let (new, pieces) = match edited {
                        TaskEdit::Drop => (-1, 0),
                        TaskEdit::Take(ms) => (ms.max(0), 1),
                        TaskEdit::Split { pieces, each_ms } => (each_ms.max(0), pieces.max(1)),
                    };
                    by_launch.push((t.launch_ms, t.duration_ms, new, pieces));
                });
                if !changed {
                    return None;
                }
                // The order the replay places them in: by launch, equal launches shortest first
                // (the whole tuple, so that equals need no other order); a split task's pieces
                // where it was.
                by_launch.sort_unstable();
                Some(std::sync::Arc::new(Varints::new(
                    by_launch
                        .into_iter()
                        .filter(|&(_, _, new, _)| new >= 0)
                        .flat_map(|(_, _, new, pieces)| std::iter::repeat_n(new, pieces as usize)),
                )))
            })
            .collect();
    }

    /// The predicted wall clock under `options`.
    pub fn replay(&self, options: ReplayOptions) -> i64 {
        self.replay_with(options, &StageChanges::default())
    }

    /// [`Graph::replay`] with some stages' tasks changed as `changes` says.
    pub fn replay_with(&self, options: ReplayOptions, changes: &StageChanges) -> i64 {
        #[derive(PartialEq, Eq, PartialOrd, Ord)]
        enum Item {
            Job(usize),
            Stage(usize),
        }
        let mut queue: BinaryHeap<Reverse<(i64, Item)>> = BinaryHeap::new();
        let mut job_submit = vec![i64::MIN; self.jobs.len()];
        let mut job_left: Vec<usize> = self.jobs.iter().map(|j| j.stages.len()).collect();
        let mut job_stage_end = vec![i64::MIN; self.jobs.len()];
        let mut job_end = vec![i64::MIN; self.jobs.len()];
        // Each stage waits for its deps and for its job's submission.
        let mut stage_left: Vec<usize> = self.stages.iter().map(|s| s.deps.len() + 1).collect();
        let mut stage_ready = vec![i64::MIN; self.stages.len()];
        let mut stage_end = vec![i64::MIN; self.stages.len()];
        let mut waiting_on: Vec<Vec<usize>> = vec![Vec::new(); self.jobs.len()];
        for (k, job) in self.jobs.iter().enumerate() {
            match job.after {
                None => queue.push(Reverse((self.start_ms + job.gap_ms, Item::Job(k)))),
                Some(before) => waiting_on[before].push(k),
            }
        }
        let mut slots: BinaryHeap<Reverse<i64>> = BinaryHeap::new();
        if let Some(n) = options.slots {
            // The earliest `n` cores to arrive; more cores than the log had arrive as its did.
            slots.extend((0..n.max(1)).map(|i| {
                Reverse(match self.core_arrivals.len() {
                    0 => self.start_ms,
                    len => self.core_arrivals[i % len],
                })
            }));
        }
        let gap = |job: &JobNode| {
            if options.remove_driver_gaps && job.after.is_some() {
                0
            } else {
                job.gap_ms
            }
        };
        let mut finished_jobs: Vec<usize> = Vec::new();
        while let Some(Reverse((at, item))) = queue.pop() {
            match item {
                Item::Job(k) => {
                    job_submit[k] = at;
                    if self.jobs[k].stages.is_empty() {
                        finished_jobs.push(k);
                    }
                    for &s in &self.jobs[k].stages {
                        stage_ready[s] = stage_ready[s].max(at);
                        stage_left[s] -= 1;
                        if stage_left[s] == 0 {
                            queue.push(Reverse((
                                stage_ready[s] + self.stages[s].lead_ms,
                                Item::Stage(s),
                            )));
                        }
                    }
                }
                Item::Stage(s) => {
                    let mut last = at;
                    let median = self.stages[s].median_ms;
                    let change = changes.get(s);
                    let edited = changes.tasks(s);
                    let merged = match change {
                        Some(StageChange::Merge(n)) => Some(self.stages[s].merged(n, edited)),
                        _ => None,
                    };
                    let mut place_one = |d: i64| {
                        // The earliest free slot takes the task: replaced in place, one
                        // sift where a pop and a push took two (a replay's hottest line).
                        let start = match slots.peek_mut() {
                            Some(mut free) => {
                                let start = free.0.max(at);
                                *free = Reverse(start + d);
                                start
                            }
                            None => at,
                        };
                        last = last.max(start + d);
                    };
                    let mut place = |d: i64| {
                        if options.cut_skew && d > SKEW_RATIO * median.max(1) {
                            // Its data spread over the slots: pieces of a median task each.
                            let n = pieces(d, median.max(1), options.slots);
                            let each = (d + i64::from(n) - 1) / i64::from(n);
                            (0..n).for_each(|_| place_one(each));
                        } else {
                            place_one(d);
                        }
                    };
                    match (&merged, edited) {
                        (Some(tasks), _) => tasks.iter().copied().for_each(&mut place),
                        (None, Some(tasks)) => tasks.iter().for_each(&mut place),
                        (None, None) => self.stages[s].tasks.iter().for_each(&mut place),
                    }
                    let end = last + self.stages[s].tail_ms;
                    stage_end[s] = end;
                    for &next in &self.stages[s].dependents {
                        stage_ready[next] = stage_ready[next].max(end);
                        stage_left[next] -= 1;
                        if stage_left[next] == 0 {
                            queue.push(Reverse((
                                stage_ready[next] + self.stages[next].lead_ms,
                                Item::Stage(next),
                            )));
                        }
                    }
                    let k = self.stages[s].job;
                    job_stage_end[k] = job_stage_end[k].max(end);
                    job_left[k] -= 1;
                    if job_left[k] == 0 {
                        finished_jobs.push(k);
                    }
                }
            }
            for k in finished_jobs.drain(..) {
                let end = job_submit[k].max(job_stage_end[k]) + self.jobs[k].tail_ms;
                job_end[k] = end;
                for &next in &waiting_on[k] {
                    queue.push(Reverse((end + gap(&self.jobs[next]), Item::Job(next))));
                }
            }
        }
        let last_end = job_end.iter().copied().max().unwrap_or(self.start_ms);
        let end = match self.last_job {
            Some(k) if job_end[k] != i64::MIN => (job_end[k] + self.final_gap_ms).max(last_end),
            _ => self.end_ms,
        };
        (end - self.start_ms).max(0)
    }
}

#[cfg(test)]
mod tests {
    use super::{Graph, ReplayOptions};
    use sparkdiag_facts::testing::apps;

    fn replay(graph: &Graph, slots: Option<usize>, cut_skew: bool, gaps: bool) -> i64 {
        graph.replay(ReplayOptions {
            slots,
            cut_skew,
            remove_driver_gaps: gaps,
        })
    }

    /// Real logs of three shapes: a planted skew, a driver loop, the plain workload.
    const LOGS: &[&str] = &[
        "logs/patterns/skew-join",
        "logs/patterns/driver-loop-serial",
        "logs/single/plain",
    ];

    #[test]
    fn todays_cores_replay_about_the_measured_wall_clock() {
        for log in LOGS {
            let app = &apps(log)[0];
            let graph = Graph::new(app).expect("a log with a start and tasks");
            let cores = sparkdiag_facts::peak_cores(app) as usize;
            let today = replay(&graph, Some(cores), false, false);
            let error = (today - graph.wall_ms()).abs() as f64 / graph.wall_ms() as f64;
            // Measured: 0.6 %, 0.1 % and 0.1 %; tasks start in the order Spark launched them.
            assert!(
                error < 0.03,
                "{log}: replayed {today} ms on {cores} cores, measured {} ms",
                graph.wall_ms()
            );
        }
    }

    #[test]
    fn more_cores_cut_skew_or_no_driver_gaps_never_make_a_run_slower() {
        for log in LOGS {
            let app = &apps(log)[0];
            let graph = Graph::new(app).unwrap();
            let mut last = i64::MAX;
            for slots in [Some(1), Some(2), Some(4), Some(8), None] {
                let ms = replay(&graph, slots, false, false);
                assert!(
                    ms <= last,
                    "{log}: {slots:?} cores took {ms} ms, fewer took {last}"
                );
                last = ms;
                assert!(replay(&graph, slots, true, false) <= ms, "{log}: skew cut");
                assert!(
                    replay(&graph, slots, false, true) <= ms,
                    "{log}: gaps removed"
                );
            }
        }
    }

    #[test]
    fn the_skewed_log_gains_from_cutting_its_skew_and_the_loop_from_its_gaps() {
        let skew = &apps("logs/patterns/skew-join")[0];
        let graph = Graph::new(skew).unwrap();
        let cores = Some(sparkdiag_facts::peak_cores(skew) as usize);
        assert!(replay(&graph, cores, true, false) < replay(&graph, cores, false, false));
        let driver_loop = &apps("logs/patterns/driver-loop-serial")[0];
        let graph = Graph::new(driver_loop).unwrap();
        let cores = Some(sparkdiag_facts::peak_cores(driver_loop) as usize);
        let today = replay(&graph, cores, false, false);
        // The loop's run is mostly the driver: without its gaps it takes a fraction.
        assert!(replay(&graph, cores, false, true) * 2 < today);
    }
}
