//! What the rules read from one stage attempt's tasks, taken in a single look at them.
//!
//! A completed stage's tasks are kept folded into compressed columns, and every look at them
//! unfolds the whole stage again. Rules look at the stages one rule after another, so if each
//! read the tasks itself a stage would be unfolded once per rule. Instead [`StageStats::new`]
//! walks each stage's tasks once and keeps the figures below; the rules read those. The figures
//! are plain data about the tasks: which of them make a finding, and with which thresholds,
//! stays in each rule's own file.

use sparkdiag_model::quantile::{shs_quantile_selected, shs_quantiles};
use sparkdiag_model::{Application, Task, TaskOutcome};

use crate::Varints;
use crate::application::{data_bytes, data_records};
use crate::slowness::StageSlowness;

/// Statistics of one stage attempt's successful tasks (the History Server's population), and
/// the other figures of its tasks the rules read.
#[derive(Debug, Clone, Default)]
pub struct StageStats {
    pub successful: usize,
    pub median_ms: u32,
    pub p95_ms: u32,
    pub max_ms: u32,
    /// Shuffle-read plus input bytes, the data a task processed.
    pub median_bytes: u64,
    pub median_records: u64,
    /// Submission to completion (or to the end of the log).
    pub duration_ms: i64,
    /// Sum of task durations, every attempt.
    pub task_time_ms: i64,
    pub facts: StageTaskFacts,
}

/// Figures of a stage attempt's tasks beyond their quantiles. "Successful" means what it means
/// for the History Server's quantiles: succeeded, with metrics.
#[derive(Debug, Clone, Default)]
pub struct StageTaskFacts {
    /// Task ends of every attempt and outcome.
    pub tasks: usize,
    /// Data (shuffle-read plus input bytes) of the successful tasks together.
    pub successful_data_bytes: u64,
    /// Time every task spent outside its own work: scheduler delay, deserialising the task and
    /// serialising its result.
    pub overhead_ms: i64,
    /// The longest any task spent deserialising (classes, its closure, broadcasts): on a fresh
    /// executor the first tasks pay for loading them.
    pub max_deserialize_ms: u32,
    /// The successful task with the most data (the last of equals, in task id order).
    pub biggest_partition: Option<TaskFigure>,
    /// Successful tasks that spilled to disk.
    pub successful_spilling: usize,
    /// Median (the middle of the sorted values) of the successful tasks' peak execution memory
    /// and of the memory they spilled; 0 without successful tasks.
    pub middle_peak_execution_memory: u64,
    pub middle_memory_spill: u64,
    /// Tasks of any outcome that spilled to disk.
    pub spilling: usize,
    /// The task that spilled the most to disk, any outcome (the last of equals), with its disk
    /// spill as `value`.
    pub worst_spill: Option<TaskFigure>,
    /// Tasks that were killed (speculative copies, a failed stage's siblings, a cancelled job).
    pub killed: usize,
    /// Time of the speculative copies that were killed.
    pub killed_speculative_ms: i64,
    /// Time of the tasks that succeeded, with metrics or without.
    pub succeeded_ms: i64,
    /// The latest task end (launch plus duration), 0 without tasks.
    pub last_end_ms: i64,
    /// The latest task end had no task run longer than the successful tasks' median.
    pub last_end_at_median_ms: i64,
    /// The successful tasks' durations and data, by executor (sorted by executor index); empty
    /// when the application has fewer than two executors (local mode), as there is then no
    /// executor to compare with another.
    pub by_executor: Vec<ExecutorTasks>,
    /// The failed tasks: how many and how long, by executor (sorted by executor index).
    pub failed_by_executor: Vec<FailedOn>,
    /// The History Server's quantiles (0, 0.25, 0.5, 0.75, 0.95, 1) of the successful tasks'
    /// durations; `None` without successful tasks.
    pub duration_quantiles: Option<[u32; 6]>,
    /// The executors (indices in `Application::executors`) that ran any of the tasks, sorted.
    pub executors: Vec<u32>,
    /// The earliest task launch; `None` without tasks.
    pub first_launch_ms: Option<i64>,
    /// Every task's duration, any outcome, in launch order (equal launches shortest first).
    pub durations_by_launch: Varints,
    /// The upper median of every task's duration, any outcome; 0 without tasks.
    pub middle_task_ms: i64,
    /// The typical task, the long tasks and each executor's pace: why a task was long
    /// ([`crate::slowness`]).
    pub slowness: StageSlowness,
}

impl StageTaskFacts {
    /// Bytes these facts hold on the heap: they are kept for every stage while the rules and
    /// the report run.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        let by_executor: usize = self
            .by_executor
            .iter()
            .map(|e| e.durations_ms.stored_bytes() + e.data_bytes.stored_bytes())
            .sum();
        by_executor
            + self.by_executor.capacity() * size_of::<ExecutorTasks>()
            + self.failed_by_executor.capacity() * size_of::<FailedOn>()
            + self.executors.capacity() * 4
            + self.durations_by_launch.stored_bytes()
            + self.slowness.heap_bytes()
    }
}

/// The failed tasks of a stage attempt on one executor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FailedOn {
    /// Index in `Application::executors`.
    pub executor: u32,
    pub tasks: usize,
    pub time_ms: i64,
}

/// One task named by a figure: its partition index, duration and the figure's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskFigure {
    pub index: u32,
    pub duration_ms: u32,
    pub value: u64,
}

impl TaskFigure {
    fn of(task: &Task, value: u64) -> TaskFigure {
        TaskFigure {
            index: task.index,
            duration_ms: task.duration_ms,
            value,
        }
    }
}

/// The successful tasks one executor ran in a stage attempt: each one's duration and data, in
/// the same order.
#[derive(Debug, Clone, Default)]
pub struct ExecutorTasks {
    /// Index in `Application::executors`.
    pub executor: u32,
    pub durations_ms: Varints,
    pub data_bytes: Varints,
}

/// The median (the History Server's 0.5 quantile: the upper middle) of what `values` yields,
/// collected into `scratch`, which is reused from figure to figure; 0 when there are none.
pub(crate) fn median_into(scratch: &mut Vec<u64>, values: impl Iterator<Item = u64>) -> u64 {
    scratch.clear();
    scratch.extend(values);
    shs_quantile_selected(scratch, 0.5).unwrap_or(0)
}

/// `candidate` when `value` is at least the best so far: the last of equals wins, as with
/// `Iterator::max_by_key`.
fn keep_largest(best: &mut Option<TaskFigure>, task: &Task, value: u64) {
    if best.is_none_or(|b| value >= b.value) {
        *best = Some(TaskFigure::of(task, value));
    }
}

/// Tasks of a stage walked beside other stages; a larger one is walked alone. Each walk unfolds
/// its stage (168 bytes a task): two stages of 143,000 tasks unfolded at once raised the peak
/// for 1M tasks from 55 to 74 MB, while stages this small cost 3 MB each at most.
pub const WALKED_BESIDE_OTHERS_MAX_TASKS: usize = 16_384;

/// Each stage attempt's statistics and facts, indexed like `app.stages`: one look at each
/// stage's tasks.
pub fn of_application(app: &Application) -> Vec<StageStats> {
    let end = app.effective_end_ms();
    // Tasks name executors by their index in `app.executors`: with fewer than two there, no
    // two executors' tasks can be compared.
    // Each executor's cores, where its first wave of a stage ends.
    let cores: Vec<u32> = app
        .executors
        .iter()
        .map(|e| e.cores.unwrap_or(1).clamp(1, 4096) as u32)
        .collect();
    let walk = |stage: &sparkdiag_model::StageAttempt| {
        StageStats::new(&app.stage_tasks(stage), stage.duration_ms(end), &cores)
    };
    // Small stages' walks are shared out over every core; large ones go one at a time.
    use rayon::prelude::*;
    let small = |stage: &&sparkdiag_model::StageAttempt| {
        stage.tasks.len() <= WALKED_BESIDE_OTHERS_MAX_TASKS
    };
    let mut stats: Vec<Option<StageStats>> = app
        .stages
        .par_iter()
        .map(|stage| small(&stage).then(|| walk(stage)))
        .collect();
    for (stage, stats) in app.stages.iter().zip(&mut stats) {
        if stats.is_none() {
            *stats = Some(walk(stage));
        }
    }
    stats.into_iter().flatten().collect()
}

/// The successful tasks' durations and data by executor: kept for every stage while the rules
/// run, so packed as [`Varints`].
fn successful_by_executor<'a>(ok: impl Iterator<Item = &'a Task>) -> Vec<ExecutorTasks> {
    let mut lists: std::collections::BTreeMap<u32, (Vec<i64>, Vec<i64>)> = Default::default();
    for t in ok {
        let (durations, data) = lists.entry(t.executor).or_default();
        durations.push(i64::from(t.duration_ms));
        data.push(i64::try_from(data_bytes(t)).unwrap_or(i64::MAX));
    }
    lists
        .into_iter()
        .map(|(executor, (durations, data))| ExecutorTasks {
            executor,
            durations_ms: Varints::new(durations.into_iter()),
            data_bytes: Varints::new(data.into_iter()),
        })
        .collect()
}

/// Every task's duration in launch order, equal launches shortest first (the order the what-if
/// replays them in), and each task's position in that order (indexed like `tasks`).
fn durations_by_launch(tasks: &[Task]) -> (Varints, Vec<u32>) {
    let mut by_launch: Vec<(i64, u32, u32)> = tasks
        .iter()
        .enumerate()
        .map(|(at, t)| (t.launch_ms, t.duration_ms, at as u32))
        .collect();
    by_launch.sort_unstable();
    let mut rank = vec![0u32; tasks.len()];
    for (position, &(_, _, at)) in by_launch.iter().enumerate() {
        rank[at as usize] = position as u32;
    }
    (
        Varints::new(by_launch.into_iter().map(|(_, d, _)| i64::from(d))),
        rank,
    )
}

impl StageStats {
    /// Everything the rules need from `tasks`, one stage attempt's task ends, lasting
    /// `duration_ms` (`None`: never submitted), on executors with `cores` (indexed like
    /// `Application::executors`). With fewer than two executors the successful tasks' figures
    /// are not kept by executor: there is no executor to compare with another.
    pub fn new(tasks: &[Task], duration_ms: Option<i64>, cores: &[u32]) -> StageStats {
        let by_executor = cores.len() >= 2;
        // Walked again where needed rather than collected: the largest stage's temporary copies
        // sit beside every stage's figures at the rules' peak.
        let ok = tasks
            .iter()
            .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics);
        // Sorted once: the median, p95 and max are three of the History Server's quantiles.
        let mut successful_ms: Vec<u32> = Vec::with_capacity(tasks.len());
        successful_ms.extend(ok.clone().map(|t| t.duration_ms));
        let successful = successful_ms.len();
        let duration_quantiles =
            shs_quantiles(&mut successful_ms, &[0.0, 0.25, 0.5, 0.75, 0.95, 1.0])
                .map(|q| [q[0], q[1], q[2], q[3], q[4], q[5]]);
        drop(successful_ms);
        let [_, _, median_ms, _, p95_ms, max_ms] = duration_quantiles.unwrap_or_default();
        let mut facts = StageTaskFacts {
            tasks: tasks.len(),
            duration_quantiles,
            ..Default::default()
        };
        let (mut last_end, mut last_end_at_median) = (None::<i64>, None::<i64>);
        let mut task_time_ms = 0i64;
        for t in tasks {
            let duration = i64::from(t.duration_ms);
            task_time_ms += duration;
            facts.overhead_ms += i64::from(t.scheduler_delay_ms())
                + i64::from(t.metrics.deserialize_ms)
                + i64::from(t.metrics.result_serialization_ms);
            facts.max_deserialize_ms = facts.max_deserialize_ms.max(t.metrics.deserialize_ms);
            if t.metrics.disk_spill > 0 {
                facts.spilling += 1;
            }
            keep_largest(&mut facts.worst_spill, t, t.metrics.disk_spill);
            if t.outcome == TaskOutcome::Killed {
                facts.killed += 1;
            }
            match t.outcome {
                TaskOutcome::Killed if t.speculative => facts.killed_speculative_ms += duration,
                TaskOutcome::Success => facts.succeeded_ms += duration,
                TaskOutcome::Failed => {
                    let on = &mut facts.failed_by_executor;
                    let at = match on.binary_search_by_key(&t.executor, |f| f.executor) {
                        Ok(at) => at,
                        Err(at) => {
                            on.insert(
                                at,
                                FailedOn {
                                    executor: t.executor,
                                    tasks: 0,
                                    time_ms: 0,
                                },
                            );
                            at
                        }
                    };
                    on[at].tasks += 1;
                    on[at].time_ms += duration;
                }
                _ => {}
            }
            let end = t.launch_ms + duration;
            let end_at_median = t.launch_ms + i64::from(t.duration_ms.min(median_ms));
            last_end = Some(last_end.map_or(end, |e| e.max(end)));
            last_end_at_median =
                Some(last_end_at_median.map_or(end_at_median, |e| e.max(end_at_median)));
        }
        facts.last_end_ms = last_end.unwrap_or(0);
        facts.first_launch_ms = tasks.iter().map(|t| t.launch_ms).min();
        let (by_launch, rank) = durations_by_launch(tasks);
        facts.durations_by_launch = by_launch;
        facts.slowness = StageSlowness::of(tasks, &rank, cores);
        drop(rank);
        let mut all_durations: Vec<u32> = tasks.iter().map(|t| t.duration_ms).collect();
        facts.middle_task_ms = shs_quantile_selected(&mut all_durations, 0.5).map_or(0, i64::from);
        drop(all_durations);
        let mut executors: Vec<u32> = tasks.iter().map(|t| t.executor).collect();
        executors.sort_unstable();
        executors.dedup();
        // Collected one a task, kept for every stage: without this each stage kept 4 bytes a
        // task of spare room (40 MB for 10M tasks).
        executors.shrink_to_fit();
        facts.executors = executors;
        facts.last_end_at_median_ms = last_end_at_median.unwrap_or(0);
        for t in ok.clone() {
            let bytes = data_bytes(t);
            facts.successful_data_bytes += bytes;
            keep_largest(&mut facts.biggest_partition, t, bytes);
            if t.metrics.disk_spill > 0 {
                facts.successful_spilling += 1;
            }
        }
        if by_executor {
            facts.by_executor = successful_by_executor(ok.clone());
        }
        let mut scratch: Vec<u64> = Vec::with_capacity(successful);
        facts.middle_peak_execution_memory = median_into(
            &mut scratch,
            ok.clone().map(|t| t.metrics.peak_execution_memory),
        );
        facts.middle_memory_spill =
            median_into(&mut scratch, ok.clone().map(|t| t.metrics.memory_spill));
        let median_bytes = median_into(&mut scratch, ok.clone().map(data_bytes));
        let median_records = median_into(&mut scratch, ok.map(data_records));
        StageStats {
            successful,
            median_ms,
            p95_ms,
            max_ms,
            median_bytes,
            median_records,
            duration_ms: duration_ms.unwrap_or(0),
            task_time_ms,
            facts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::of_application;
    use crate::application::data_bytes;
    use crate::testing::apps;
    use sparkdiag_model::TaskOutcome;

    /// The facts come from the stored tasks (folded, then unfolded once); the model counted
    /// each stage's failed and killed tasks as their ends were read. Logs with failed tasks,
    /// killed ones, a lost executor and spills.
    #[test]
    fn the_facts_count_what_the_model_counted_as_the_tasks_ended() {
        let (mut failed, mut by_executor) = (0, 0);
        for rel in [
            "logs/failed/local-1796049483373",
            "logs/killed/single",
            "logs/patterns/executor-lost",
            "logs/patterns/spill",
        ] {
            for app in apps(rel) {
                let stats = of_application(&app);
                assert_eq!(stats.len(), app.stages.len(), "{rel}");
                for (stage, s) in app.stages.iter().zip(&stats) {
                    let at = format!("{rel}: stage {}.{}", stage.stage_id, stage.attempt_id);
                    let facts = &s.facts;
                    let failed_here: usize = facts.failed_by_executor.iter().map(|f| f.tasks).sum();
                    assert_eq!(failed_here as i64, stage.failed_tasks, "{at}: failed");
                    assert_eq!(facts.killed as i64, stage.killed_tasks, "{at}: killed");
                    assert_eq!(facts.tasks, stage.tasks.len(), "{at}: tasks");
                    let mut by_launch: Vec<(i64, u32)> = app
                        .stage_tasks(stage)
                        .iter()
                        .map(|t| (t.launch_ms, t.duration_ms))
                        .collect();
                    by_launch.sort_unstable();
                    assert!(
                        facts
                            .durations_by_launch
                            .iter()
                            .eq(by_launch.iter().map(|&(_, d)| i64::from(d))),
                        "{at}: durations by launch"
                    );
                    // Counted here from the tasks, not from the quantiles the figures share.
                    let ok: Vec<u32> = app
                        .stage_tasks(stage)
                        .iter()
                        .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics)
                        .map(|t| t.duration_ms)
                        .collect();
                    assert_eq!(s.successful, ok.len(), "{at}: successful");
                    for on in &facts.by_executor {
                        let (durations, data): (Vec<i64>, Vec<i64>) = app
                            .stage_tasks(stage)
                            .iter()
                            .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics)
                            .filter(|t| t.executor == on.executor)
                            .map(|t| (i64::from(t.duration_ms), data_bytes(t) as i64))
                            .unzip();
                        assert!(on.durations_ms.iter().eq(durations), "{at}: durations");
                        assert!(on.data_bytes.iter().eq(data), "{at}: data");
                        by_executor += 1;
                    }
                    assert_eq!(ok.iter().max().copied().unwrap_or(0), s.max_ms, "{at}: max");
                    let at_most_median = ok.iter().filter(|&&d| d <= s.median_ms).count();
                    assert!(
                        ok.is_empty() || 2 * at_most_median > ok.len(),
                        "{at}: median"
                    );
                    failed += failed_here;
                }
            }
        }
        assert!(failed > 0, "no failed task in the logs read");
        assert!(
            by_executor > 0,
            "no application with two executors in the logs read"
        );
    }

    /// The facts are kept for every stage at once while the rules run, so they must cost a
    /// byte or two a task, not the room their temporary copies took. Real logs in local mode
    /// (no per-executor figures) with stages of thousands of tasks.
    #[test]
    fn the_facts_kept_for_a_large_stage_take_a_few_bytes_a_task() {
        let mut largest = 0;
        for rel in ["logs/patterns/tiny-partitions", "logs/patterns/skew-join"] {
            for app in apps(rel) {
                for s in of_application(&app) {
                    let facts = &s.facts;
                    if facts.tasks < 1000 {
                        continue;
                    }
                    largest = largest.max(facts.tasks);
                    let per_task = facts.heap_bytes() as f64 / facts.tasks as f64;
                    assert!(per_task <= 2.0, "{rel}: {per_task:.2} bytes a task");
                }
            }
        }
        assert!(largest >= 1000, "no stage of 1,000 tasks in the logs read");
    }
}
