//! Why a long task was long: each long task's time beyond its stage's typical task, split into
//! what explains it, from the task's own metrics and its place in the run.
//!
//! A task several times its stage's typical task is usually called skew, but most are not: the
//! task read more data than the others (skew), spent the extra time in GC or waiting for
//! shuffle blocks, was one of the first tasks of an executor that had just started (class
//! loading, the JIT, Python workers, broadcasts: a cost paid once), waited on the scheduler, ran
//! on an executor that is slow at everything, or none of these (its own code: a slow record, an
//! external call, a stall of what it read). The figures here are taken in the stage's one walk
//! ([`StageSlowness::of`], called by `StageStats::new`) and joined across stages afterwards
//! ([`attribute`]) without looking at the tasks again; which of them make a finding stays in the
//! rules.
//!
//! The statistics keep big stages with short tasks and executors that ran few tasks: the
//! typical task is the median of the tasks that read data (a stage of 2,000 partitions over
//! 1,000 keys has a median of zero bytes otherwise), and an executor is compared with the
//! others task by task, in every stage both ran, rather than stage by stage behind a floor.

use std::mem::size_of;

use sparkdiag_model::quantile::{shs_index, shs_quantile_selected};
use sparkdiag_model::{Application, Locality, Task, TaskOutcome};

use crate::application::{data_bytes, data_records};
use crate::stage_facts::median_into;

/// Tasks over this multiple of their stage's typical task are kept as long tasks (the lowest
/// ratio any rule asks for: a slow host at twice the others' pace).
pub const LONG_TASK_RATIO: f64 = 2.0;

/// The longest tasks kept for each stage, slowest first: enough to name the hot partitions of a
/// skewed stage and to replay them, while a stage of a million tasks keeps a few kilobytes.
pub const LONG_TASKS_KEPT: usize = 16;

/// How much earlier than the end Spark stamps on a task the freed core's next task can be
/// launched (the end is stamped once the driver has read the result).
const NEXT_LAUNCH_SLACK_MS: i64 = 50;

/// A first wave this many times slower than the stage's later tasks is a cold start.
pub const COLD_WAVE_RATIO: f64 = 2.0;

/// An executor whose compared tasks take a median of this many times the other executors' on
/// the same data is slow...
pub const SLOW_EXECUTOR_RATIO: f64 = 2.0;
/// ...when at least this many of them are beyond the others' 90th percentile (three tasks no
/// other executor's were as slow as are not chance)...
pub const SLOW_EXECUTOR_MIN_CLEARLY_SLOWER: u32 = 3;
/// ...and they are at least this share of its compared tasks.
pub const SLOW_EXECUTOR_MIN_SHARE: f64 = 0.5;

/// What a long task's time beyond its stage's typical task went to, in the order the
/// attribution takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Cause {
    /// More data (bytes or records read) than the stage's typical task.
    Data,
    /// Garbage collection beyond what its data explains.
    Gc,
    /// Waiting for shuffle blocks beyond the typical task's wait.
    ShuffleFetch,
    /// One of the first tasks of a new executor, or of the stage's first wave on its executor
    /// when the later waves ran far faster: classes, the JIT, Python workers, broadcasts.
    ColdStart,
    /// Scheduler delay and deserialisation beyond the typical task's, on a warm executor.
    Scheduling,
    /// Placed further from its data than the stage's typical task (`ANY` where the others were
    /// `PROCESS_LOCAL`): it read its input, or a cached block, from another host, or rebuilt it.
    Locality,
    /// Its executor is slow at the same data in every stage and wave it ran.
    Executor,
    /// None of the above: its own code (a slow record, an external call, a sleep) or a stall of
    /// what it read.
    TaskItself,
}

impl Cause {
    pub const ALL: [Cause; 8] = [
        Cause::Data,
        Cause::Gc,
        Cause::ShuffleFetch,
        Cause::ColdStart,
        Cause::Scheduling,
        Cause::Locality,
        Cause::Executor,
        Cause::TaskItself,
    ];

    /// The name the JSON gives it (`cold_start`).
    pub fn name(self) -> &'static str {
        match self {
            Cause::Data => "data",
            Cause::Gc => "gc",
            Cause::ShuffleFetch => "shuffle_fetch",
            Cause::ColdStart => "cold_start",
            Cause::Scheduling => "scheduling",
            Cause::Locality => "locality",
            Cause::Executor => "executor",
            Cause::TaskItself => "task_itself",
        }
    }

    /// For people: "more data than the others".
    pub fn describe(self) -> &'static str {
        match self {
            Cause::Data => "more data than the others",
            Cause::Gc => "garbage collection",
            Cause::ShuffleFetch => "waiting for shuffle blocks",
            Cause::ColdStart => "a cold start",
            Cause::Scheduling => "scheduling and deserialisation",
            Cause::Locality => "reading its data from another host",
            Cause::Executor => "a slow executor",
            Cause::TaskItself => "the task itself",
        }
    }
}

/// How a task was cold.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Cold {
    #[default]
    No,
    /// Launched before any task had ended on its executor: the executor's first wave.
    NewExecutor,
    /// The stage's first wave on its executor, in a stage whose later tasks ran far faster.
    FirstWave,
}

/// A long task's excess over its stage's typical task, split by cause.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Attribution {
    /// Its duration less the typical task's.
    pub excess_ms: i64,
    /// Each cause's share of the excess, indexed like [`Cause::ALL`]; they sum to `excess_ms`.
    pub parts_ms: [i64; 8],
    /// How it was cold, if it was.
    pub cold: Cold,
    /// The time ratio of its data to the typical task's (1 when no more).
    pub data_ratio: f64,
}

impl Attribution {
    pub fn part(&self, cause: Cause) -> i64 {
        self.parts_ms[cause as usize]
    }

    /// The cause with the largest part (the first of equals); `TaskItself` with no excess.
    pub fn cause(&self) -> Cause {
        let mut best = Cause::TaskItself;
        let mut most = 0;
        for cause in Cause::ALL {
            if self.part(cause) > most {
                best = cause;
                most = self.part(cause);
            }
        }
        best
    }

    /// The causes with a part, largest first, with their parts.
    pub fn ranked(&self) -> Vec<(Cause, i64)> {
        let mut parts: Vec<(Cause, i64)> = Cause::ALL
            .iter()
            .map(|&c| (c, self.part(c)))
            .filter(|&(_, ms)| ms > 0)
            .collect();
        parts.sort_by_key(|&(c, ms)| (std::cmp::Reverse(ms), c));
        parts
    }
}

/// A stage's typical task: medians over its successful tasks that read data (over all its
/// successful tasks when none read any), so that partitions left empty by a hash do not make a
/// typical task of nothing.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Typical {
    /// The tasks it is the median of.
    pub tasks: usize,
    /// Successful tasks that read nothing while others read data, left out.
    pub empty: usize,
    pub duration_ms: u32,
    pub bytes: u64,
    pub records: u64,
    pub gc_ms: u32,
    pub deserialize_ms: u32,
    pub fetch_wait_ms: u32,
    pub scheduler_delay_ms: u32,
    /// The median task's locality level.
    pub locality: Locality,
    /// Of those tasks, the ones launched before any task of the stage ended on their executor
    /// (the stage's first wave on each executor), and the median of each group (0 when empty).
    pub first_wave: usize,
    pub first_wave_ms: u32,
    pub later_ms: u32,
    /// When three quarters of the stage's successful tasks had ended (`spark.speculation.
    /// quantile`), after which Spark copies a task running past the multiplier; 0 without tasks.
    pub three_quarters_done_ms: i64,
}

impl Typical {
    /// When a straggler launched at `launch_ms` would end if speculation ran a copy of it:
    /// launched once three quarters of the stage are done and it has run `multiplier` times
    /// the typical task, the copy running a typical task (Spark's `checkSpeculatableTasks`).
    pub fn speculated_ms(&self, launch_ms: i64, duration_ms: i64, multiplier: f64) -> i64 {
        let typical = i64::from(self.duration_ms);
        let copy_from = (self.three_quarters_done_ms - launch_ms)
            .max((multiplier * typical as f64).round() as i64);
        duration_ms.min(copy_from + typical)
    }
}

impl Typical {
    /// The stage's first wave ran far slower than its later tasks: a cold start.
    pub fn cold_first_wave(&self) -> bool {
        self.first_wave > 0
            && self.tasks > self.first_wave
            && f64::from(self.first_wave_ms) >= COLD_WAVE_RATIO * f64::from(self.later_ms.max(1))
    }

    /// How many times the typical task's data `bytes` and `records` are: the larger of the two
    /// ratios the typical task has data for, at least 1.
    pub fn data_ratio(&self, bytes: u64, records: u64) -> f64 {
        let mut ratio: f64 = 1.0;
        if self.bytes > 0 {
            ratio = ratio.max(bytes as f64 / self.bytes as f64);
        }
        if self.records > 0 {
            ratio = ratio.max(records as f64 / self.records as f64);
        }
        ratio
    }

    /// Whether the stage's tasks read any data.
    pub fn has_data(&self) -> bool {
        self.bytes > 0 || self.records > 0
    }
}

/// A successful task over [`LONG_TASK_RATIO`] times its stage's typical task, with what it
/// spent its time on and its place in the run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct LongTask {
    pub task_id: i64,
    pub index: u32,
    /// Index in `Application::executors`.
    pub executor: u32,
    pub launch_ms: i64,
    pub duration_ms: u32,
    pub gc_ms: u32,
    pub deserialize_ms: u32,
    pub fetch_wait_ms: u32,
    pub scheduler_delay_ms: u32,
    pub bytes: u64,
    pub records: u64,
    pub locality: Locality,
    /// Launched before any task of the stage ended on its executor.
    pub first_wave: bool,
    /// Its position among the stage's tasks by launch (`StageTaskFacts::durations_by_launch`),
    /// where a replay finds it.
    pub launch_rank: u32,
    /// Filled in by [`attribute`] once every stage is walked.
    pub attribution: Attribution,
}

/// When one executor ran its first task of a stage and when its first one ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExecutorSpan {
    pub executor: u32,
    pub first_launch_ms: i64,
    pub first_end_ms: i64,
}

/// One executor's tasks in one stage against the other executors' tasks of the stage: its
/// warm tasks (not its first wave there) that read data like the others, each task's time less
/// its shuffle wait, per unit of the typical task's data.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StagePace {
    pub executor: u32,
    /// Its tasks compared.
    pub compared: u32,
    /// Of them, slower than the other executors' median.
    pub slower: u32,
    /// Of them, beyond the other executors' 90th percentile and 1.5 times their median.
    pub clearly_slower: u32,
    /// The median of its tasks' times over the other executors' median.
    pub ratio: f32,
    pub own_median_ms: u32,
    pub others_median_ms: u32,
    /// Its compared tasks' time beyond the other executors' median (scaled by data).
    pub excess_ms: i64,
}

/// What one stage attempt's tasks say about slowness, taken in its one walk.
#[derive(Debug, Clone, Default)]
pub struct StageSlowness {
    pub typical: Typical,
    /// The successful tasks over [`LONG_TASK_RATIO`] times the typical task: at most
    /// [`LONG_TASKS_KEPT`], slowest first.
    pub long_tasks: Vec<LongTask>,
    /// How many there were in all.
    pub long_count: usize,
    /// Each executor's first launch and first end in the stage, by executor index.
    pub executors: Vec<ExecutorSpan>,
    /// Each executor's pace against the others, when the application has two or more.
    pub paces: Vec<StagePace>,
}

impl StageSlowness {
    /// Bytes held on the heap.
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.long_tasks.capacity() * size_of::<LongTask>()
            + self.executors.capacity() * size_of::<ExecutorSpan>()
            + self.paces.capacity() * size_of::<StagePace>()
    }

    /// The figures of `tasks`, one stage attempt's task ends; `rank` gives each task's position
    /// by launch (indexed like `tasks`); `cores` each executor's cores (indexed like
    /// `Application::executors`), executors compared when there are two or more.
    pub fn of(tasks: &[Task], rank: &[u32], cores: &[u32]) -> StageSlowness {
        let executors = executor_spans(tasks);
        let first_wave = first_waves(tasks, rank, cores, &executors);
        let first_wave = |t: &Task| {
            // `t` is one of `tasks`: its position is its distance from the start.
            let at = (t as *const Task as usize - tasks.as_ptr() as usize) / size_of::<Task>();
            first_wave[at]
        };
        let ok = || {
            tasks
                .iter()
                .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics)
        };
        let with_data = ok()
            .filter(|t| data_bytes(t) > 0 || data_records(t) > 0)
            .count();
        let successful = ok().count();
        // With some tasks reading data, those that read none are left out of the typical task.
        let counted = |t: &&Task| with_data == 0 || data_bytes(t) > 0 || data_records(t) > 0;
        let median_of = |values: &mut [u64]| shs_quantile_selected(values, 0.5).unwrap_or(0);
        // One list for every figure's values in turn, let go before the executors' paces
        // below (the facts' peak on a cluster): 8 bytes a task, filled without growing.
        let mut values: Vec<u64> = Vec::with_capacity(successful);
        let mut column =
            |f: &dyn Fn(&Task) -> u64| median_into(&mut values, ok().filter(counted).map(f));
        let as_u32 = |v: u64| v.min(u64::from(u32::MAX)) as u32;
        let (first_wave_count, first_wave_ms, later_ms) = {
            let mut durations: Vec<u64> = Vec::with_capacity(successful);
            let counted_tasks = || ok().filter(counted);
            durations.extend(
                counted_tasks()
                    .filter(|t| first_wave(t))
                    .map(|t| u64::from(t.duration_ms)),
            );
            let first = durations.len();
            durations.extend(
                counted_tasks()
                    .filter(|t| !first_wave(t))
                    .map(|t| u64::from(t.duration_ms)),
            );
            let (first_ms, later) = durations.split_at_mut(first);
            (first, as_u32(median_of(first_ms)), as_u32(median_of(later)))
        };
        let three_quarters_done_ms = {
            let mut ends: Vec<i64> = Vec::with_capacity(successful);
            ends.extend(ok().map(|t| t.launch_ms.saturating_add(i64::from(t.duration_ms))));
            match ends.len() {
                0 => 0,
                n => *ends.select_nth_unstable((n * 3 / 4).max(1) - 1).1,
            }
        };
        let typical = Typical {
            tasks: if with_data == 0 {
                successful
            } else {
                with_data
            },
            empty: if with_data == 0 {
                0
            } else {
                successful - with_data
            },
            duration_ms: as_u32(column(&|t| t.duration_ms.into())),
            bytes: column(&data_bytes),
            records: column(&data_records),
            gc_ms: as_u32(column(&|t| t.metrics.gc_ms.into())),
            deserialize_ms: as_u32(column(&|t| t.metrics.deserialize_ms.into())),
            fetch_wait_ms: as_u32(column(&|t| t.metrics.fetch_wait_ms.into())),
            scheduler_delay_ms: as_u32(column(&|t| t.scheduler_delay_ms().into())),
            locality: Locality::from_code(column(&|t| t.locality.code().into()) as u8),
            first_wave: first_wave_count,
            first_wave_ms,
            later_ms,
            three_quarters_done_ms,
        };
        drop(values);
        let limit = LONG_TASK_RATIO * f64::from(typical.duration_ms);
        let mut long: Vec<(usize, &Task)> = tasks
            .iter()
            .enumerate()
            .filter(|(_, t)| t.outcome == TaskOutcome::Success && t.has_metrics)
            .filter(|(_, t)| f64::from(t.duration_ms) > limit && t.duration_ms > 0)
            .collect();
        let long_count = long.len();
        // Slowest first, equals in task id order.
        long.sort_unstable_by_key(|(_, t)| (std::cmp::Reverse(t.duration_ms), t.task_id));
        long.truncate(LONG_TASKS_KEPT);
        let long_tasks = long
            .into_iter()
            .map(|(at, t)| LongTask {
                task_id: t.task_id,
                index: t.index,
                executor: t.executor,
                launch_ms: t.launch_ms,
                duration_ms: t.duration_ms,
                gc_ms: t.metrics.gc_ms,
                deserialize_ms: t.metrics.deserialize_ms,
                fetch_wait_ms: t.metrics.fetch_wait_ms,
                scheduler_delay_ms: t.scheduler_delay_ms(),
                bytes: data_bytes(t),
                records: data_records(t),
                locality: t.locality,
                first_wave: first_wave(t),
                launch_rank: rank.get(at).copied().unwrap_or(0),
                attribution: Attribution::default(),
            })
            .collect();
        let paces = if cores.len() >= 2 {
            paces(tasks, &typical, &first_wave, &counted)
        } else {
            Vec::new()
        };
        StageSlowness {
            typical,
            long_tasks,
            long_count,
            executors,
            paces,
        }
    }
}

/// Which of `tasks` are their executor's first wave of the stage: the first as many as it has
/// cores to launch there, launched before any of the stage's tasks ended there. (Spark stamps a
/// task's end when the driver has read its result, after the freed core took the next task: a
/// second wave can be launched a few milliseconds before the first wave's end.)
fn first_waves(tasks: &[Task], rank: &[u32], cores: &[u32], spans: &[ExecutorSpan]) -> Vec<bool> {
    let mut by_launch: Vec<(u32, u32, u32)> = tasks
        .iter()
        .enumerate()
        .map(|(at, t)| (t.executor, rank.get(at).copied().unwrap_or(0), at as u32))
        .collect();
    by_launch.sort_unstable();
    let mut first = vec![false; tasks.len()];
    let mut previous = None;
    let mut seen = 0u32;
    for (executor, _, at) in by_launch {
        if previous != Some(executor) {
            (previous, seen) = (Some(executor), 0);
        }
        let end = spans
            .binary_search_by_key(&executor, |e| e.executor)
            .map_or(i64::MAX, |i| spans[i].first_end_ms);
        let t = &tasks[at as usize];
        first[at as usize] =
            seen < cores.get(executor as usize).copied().unwrap_or(1).max(1) && t.launch_ms <= end;
        seen += 1;
    }
    first
}

/// Each executor's first launch and first end among `tasks`, sorted by executor.
fn executor_spans(tasks: &[Task]) -> Vec<ExecutorSpan> {
    let mut spans: Vec<ExecutorSpan> = Vec::new();
    for t in tasks {
        let end = t.launch_ms.saturating_add(i64::from(t.duration_ms));
        match spans.binary_search_by_key(&t.executor, |e| e.executor) {
            Ok(at) => {
                let span = &mut spans[at];
                span.first_launch_ms = span.first_launch_ms.min(t.launch_ms);
                span.first_end_ms = span.first_end_ms.min(end);
            }
            Err(at) => spans.insert(
                at,
                ExecutorSpan {
                    executor: t.executor,
                    first_launch_ms: t.launch_ms,
                    first_end_ms: end,
                },
            ),
        }
    }
    spans.shrink_to_fit();
    spans
}

/// Each executor's warm tasks against the other executors' in one stage.
fn paces(
    tasks: &[Task],
    typical: &Typical,
    first_wave: &dyn Fn(&Task) -> bool,
    counted: &dyn Fn(&&Task) -> bool,
) -> Vec<StagePace> {
    // Each compared task's time less its shuffle wait (the network's and the other side's),
    // per unit of the typical task's data.
    struct Compared {
        executor: u32,
        /// Its position among the compared tasks, so that equal paces keep the tasks' order
        /// without a stable sort's copy of the list.
        at: u32,
        pace: f64,
        data_ratio: f64,
    }
    let mut compared: Vec<Compared> = tasks
        .iter()
        .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics)
        .filter(counted)
        .filter(|t| !first_wave(t))
        .enumerate()
        .map(|(at, t)| {
            let ratio = typical.data_ratio(data_bytes(t), data_records(t));
            let own = f64::from(t.duration_ms.saturating_sub(t.metrics.fetch_wait_ms).max(1));
            Compared {
                executor: t.executor,
                at: at as u32,
                pace: own / ratio,
                data_ratio: ratio,
            }
        })
        .collect();
    // Sorted by pace alone, the compared tasks are the stage's paces in order, and each
    // executor's own are the ones it ran, in the same order: no second copy of either.
    compared.sort_unstable_by(|a, b| a.pace.total_cmp(&b.pace).then(a.at.cmp(&b.at)));
    let executors: std::collections::BTreeSet<u32> = compared.iter().map(|c| c.executor).collect();
    let count_le = |sorted: &[f64], v: f64| sorted.partition_point(|&x| x <= v);
    let count_le_all = |v: f64| compared.partition_point(|c| c.pace <= v);
    let mut out = Vec::new();
    for executor in executors {
        let own_tasks = || compared.iter().filter(|c| c.executor == executor);
        let own: Vec<f64> = own_tasks().map(|c| c.pace).collect();
        let others = compared.len() - own.len();
        if others > 0 {
            // The others' quantile `q`: the smallest value of the stage with enough of the
            // others' values at or below it, found without copying them out.
            let quantile = |q: f64| {
                let wanted = shs_index(others, q) + 1;
                let at = compared
                    .partition_point(|c| count_le_all(c.pace) - count_le(&own, c.pace) < wanted);
                compared[at.min(compared.len() - 1)].pace
            };
            let (median, p90) = (quantile(0.5), quantile(0.9));
            let mut ratios: Vec<f64> = own.iter().map(|&x| x / median.max(1.0)).collect();
            // Equal ratios are the same number: no order among them to keep.
            ratios.sort_unstable_by(f64::total_cmp);
            let excess_ms: f64 = own_tasks()
                .map(|c| (c.pace - median).max(0.0) * c.data_ratio)
                .sum();
            out.push(StagePace {
                executor,
                compared: own.len() as u32,
                slower: own.iter().filter(|&&x| x > median).count() as u32,
                clearly_slower: own
                    .iter()
                    .filter(|&&x| x > p90 && x >= 1.5 * median)
                    .count() as u32,
                ratio: ratios[shs_index(ratios.len(), 0.5)] as f32,
                own_median_ms: own[shs_index(own.len(), 0.5)].round() as u32,
                others_median_ms: median.round() as u32,
                excess_ms: excess_ms.round() as i64,
            });
        }
    }
    out
}

/// One executor's pace over every stage it ran warm tasks in beside another executor.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ExecutorPace {
    /// Index in `Application::executors`.
    pub executor: u32,
    pub compared: u32,
    pub slower: u32,
    pub clearly_slower: u32,
    /// The median of the stages' ratios, each stage weighted by its compared tasks.
    pub ratio: f64,
    /// Its compared tasks' time beyond the other executors' pace.
    pub excess_ms: i64,
    /// The stages (indices in `app.stages`) it was compared in, and those where its median
    /// task was at least [`SLOW_EXECUTOR_RATIO`] times the others'.
    pub stages: Vec<usize>,
    pub slow_stages: Vec<usize>,
    /// Slow at the same data, in more than its first wave: [`SLOW_EXECUTOR_RATIO`],
    /// [`SLOW_EXECUTOR_MIN_CLEARLY_SLOWER`] and [`SLOW_EXECUTOR_MIN_SHARE`] all hold.
    pub slow: bool,
}

/// What the stages together say: each executor's first task end and pace.
#[derive(Debug, Clone, Default)]
pub struct Slowness {
    /// Indexed like `app.executors`: when its first task ended (`None`: it ran none).
    pub first_end_ms: Vec<Option<i64>>,
    /// Indexed like `app.executors` (empty when there are fewer than two).
    pub paces: Vec<ExecutorPace>,
}

impl Slowness {
    pub fn pace(&self, executor: u32) -> Option<&ExecutorPace> {
        self.paces.get(executor as usize)
    }

    pub fn slow(&self, executor: u32) -> bool {
        self.pace(executor).is_some_and(|p| p.slow)
    }
}

/// Joins the stages' figures (indexed like `app.stages`): every executor's pace and first task
/// end, then each long task's attribution, written into the stages' long tasks.
pub fn attribute(app: &Application, stages: &mut [crate::StageStats]) -> Slowness {
    let n = app.executors.len();
    let mut first_end_ms: Vec<Option<i64>> = vec![None; n];
    for s in stages.iter() {
        for span in &s.facts.slowness.executors {
            if let Some(slot) = first_end_ms.get_mut(span.executor as usize) {
                *slot = Some(slot.map_or(span.first_end_ms, |e| e.min(span.first_end_ms)));
            }
        }
    }
    let paces = executor_paces(n, stages);
    for s in stages.iter_mut() {
        let slowness = &mut s.facts.slowness;
        let typical = slowness.typical;
        for task in &mut slowness.long_tasks {
            let new_executor = task.first_wave
                && first_end_ms
                    .get(task.executor as usize)
                    .copied()
                    .flatten()
                    .is_some_and(|end| task.launch_ms + NEXT_LAUNCH_SLACK_MS < end);
            let cold = if new_executor {
                Cold::NewExecutor
            } else if task.first_wave && typical.cold_first_wave() {
                Cold::FirstWave
            } else {
                Cold::No
            };
            let slow_executor = paces
                .get(task.executor as usize)
                .is_some_and(|p: &ExecutorPace| p.slow);
            task.attribution = attribution(task, &typical, cold, slow_executor);
        }
    }
    Slowness {
        first_end_ms,
        paces,
    }
}

/// Every executor's pace over the stages, indexed like `app.executors`.
fn executor_paces(n: usize, stages: &[crate::StageStats]) -> Vec<ExecutorPace> {
    let mut paces: Vec<ExecutorPace> = (0..n)
        .map(|e| ExecutorPace {
            executor: e as u32,
            ..Default::default()
        })
        .collect();
    let mut ratios: Vec<Vec<(f32, u32)>> = vec![Vec::new(); n];
    for (index, s) in stages.iter().enumerate() {
        for p in &s.facts.slowness.paces {
            let Some(pace) = paces.get_mut(p.executor as usize) else {
                continue;
            };
            pace.compared += p.compared;
            pace.slower += p.slower;
            pace.clearly_slower += p.clearly_slower;
            pace.excess_ms += p.excess_ms;
            pace.stages.push(index);
            if f64::from(p.ratio) >= SLOW_EXECUTOR_RATIO {
                pace.slow_stages.push(index);
            }
            ratios[p.executor as usize].push((p.ratio, p.compared));
        }
    }
    for (pace, mut ratios) in paces.iter_mut().zip(ratios) {
        if pace.compared == 0 {
            continue;
        }
        ratios.sort_by(|a, b| a.0.total_cmp(&b.0));
        let half = u64::from(pace.compared).div_ceil(2);
        let mut seen = 0u64;
        pace.ratio = ratios
            .iter()
            .find(|(_, w)| {
                seen += u64::from(*w);
                seen >= half
            })
            .map_or(0.0, |(r, _)| f64::from(*r));
        pace.slow = pace.ratio >= SLOW_EXECUTOR_RATIO
            && pace.clearly_slower >= SLOW_EXECUTOR_MIN_CLEARLY_SLOWER
            && f64::from(pace.clearly_slower) >= SLOW_EXECUTOR_MIN_SHARE * f64::from(pace.compared);
    }
    paces
}

/// `task` is a level further from its data than `typical`: both known, neither without a
/// preference.
fn further(task: Locality, typical: Locality) -> bool {
    let known = |l: Locality| !matches!(l, Locality::NoPref | Locality::Unknown);
    known(task) && known(typical) && task > typical
}

/// A long task's excess split by cause. Its data goes first (a task with three times the data
/// is expected to take three times as long, its GC and fetches included); then what its
/// metrics measured beyond what its data explains (GC, shuffle wait, deserialisation and
/// scheduler delay); what is left is its cold start, its slow executor, or the task itself.
fn attribution(task: &LongTask, typical: &Typical, cold: Cold, slow_executor: bool) -> Attribution {
    let excess = i64::from(task.duration_ms) - i64::from(typical.duration_ms);
    let mut parts = [0i64; 8];
    if excess <= 0 {
        return Attribution {
            cold,
            data_ratio: 1.0,
            ..Default::default()
        };
    }
    let data_ratio = typical.data_ratio(task.bytes, task.records);
    let expected = f64::from(typical.duration_ms) * data_ratio;
    let data = ((expected - f64::from(typical.duration_ms)).round() as i64).clamp(0, excess);
    parts[Cause::Data as usize] = data;
    let rest = excess - data;
    let beyond = |measured: u32, typical: u32, scaled: bool| {
        let expected = if scaled {
            f64::from(typical) * data_ratio
        } else {
            f64::from(typical)
        };
        (f64::from(measured) - expected).max(0.0)
    };
    let gc = beyond(task.gc_ms, typical.gc_ms, true);
    let fetch = beyond(task.fetch_wait_ms, typical.fetch_wait_ms, true);
    let deserialize = beyond(task.deserialize_ms, typical.deserialize_ms, false);
    let scheduling = beyond(task.scheduler_delay_ms, typical.scheduler_delay_ms, false);
    let measured = gc + fetch + deserialize + scheduling;
    // What the metrics measured can hold no more than the excess left.
    let scale = if measured > rest as f64 && measured > 0.0 {
        rest as f64 / measured
    } else {
        1.0
    };
    let take = |v: f64| (v * scale).floor() as i64;
    let cold_now = cold != Cold::No;
    parts[Cause::Gc as usize] = take(gc);
    parts[Cause::ShuffleFetch as usize] = take(fetch);
    // Deserialising the task on a cold executor is its cold start (classes, broadcasts).
    let deserialize_cause = if cold_now {
        Cause::ColdStart
    } else {
        Cause::Scheduling
    };
    parts[deserialize_cause as usize] += take(deserialize);
    parts[Cause::Scheduling as usize] += take(scheduling);
    let left = excess - parts.iter().sum::<i64>();
    let leftover_cause = if cold_now {
        Cause::ColdStart
    } else if further(task.locality, typical.locality) {
        Cause::Locality
    } else if slow_executor {
        Cause::Executor
    } else {
        Cause::TaskItself
    };
    parts[leftover_cause as usize] += left.max(0);
    Attribution {
        excess_ms: excess,
        parts_ms: parts,
        cold,
        data_ratio,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn typical() -> Typical {
        Typical {
            tasks: 10,
            duration_ms: 1_000,
            bytes: 1 << 20,
            records: 1_000,
            gc_ms: 50,
            deserialize_ms: 10,
            fetch_wait_ms: 20,
            scheduler_delay_ms: 5,
            ..Default::default()
        }
    }

    fn long(duration_ms: u32, bytes: u64) -> LongTask {
        LongTask {
            duration_ms,
            bytes,
            records: 1_000,
            gc_ms: 50,
            deserialize_ms: 10,
            fetch_wait_ms: 20,
            scheduler_delay_ms: 5,
            ..Default::default()
        }
    }

    #[test]
    fn the_parts_sum_to_the_excess_and_data_goes_first() {
        // Four times the data, six times the time: three of the five extra seconds are data.
        let a = attribution(&long(6_000, 4 << 20), &typical(), Cold::No, false);
        assert_eq!(a.excess_ms, 5_000);
        assert_eq!(a.parts_ms.iter().sum::<i64>(), 5_000);
        assert_eq!(a.part(Cause::Data), 3_000);
        assert_eq!(a.part(Cause::TaskItself), 2_000);
        assert_eq!(a.cause(), Cause::Data);
    }

    #[test]
    fn measured_gc_and_fetch_take_their_share_before_the_rest() {
        let mut t = long(5_000, 1 << 20);
        t.gc_ms = 3_050;
        t.fetch_wait_ms = 520;
        let a = attribution(&t, &typical(), Cold::No, true);
        assert_eq!(a.part(Cause::Gc), 3_000);
        assert_eq!(a.part(Cause::ShuffleFetch), 500);
        assert_eq!(a.part(Cause::Executor), 500);
        assert_eq!(a.cause(), Cause::Gc);
        assert_eq!(a.parts_ms.iter().sum::<i64>(), 4_000);
    }

    #[test]
    fn a_cold_tasks_deserialisation_and_rest_are_its_cold_start() {
        let mut t = long(4_000, 1 << 20);
        t.deserialize_ms = 1_510;
        let a = attribution(&t, &typical(), Cold::NewExecutor, true);
        assert_eq!(a.part(Cause::ColdStart), 3_000);
        assert_eq!(a.part(Cause::Executor), 0);
        assert_eq!(a.cause(), Cause::ColdStart);
    }

    #[test]
    fn measured_parts_never_exceed_the_excess() {
        let mut t = long(2_000, 1 << 20);
        t.gc_ms = 5_000;
        t.fetch_wait_ms = 5_000;
        let a = attribution(&t, &typical(), Cold::No, false);
        assert_eq!(a.parts_ms.iter().sum::<i64>(), 1_000);
        assert!(a.parts_ms.iter().all(|&p| p >= 0));
    }

    #[test]
    fn a_first_wave_far_slower_than_the_rest_is_cold() {
        let mut t = typical();
        (t.first_wave, t.first_wave_ms, t.later_ms) = (2, 7_000, 300);
        assert!(t.cold_first_wave());
        (t.first_wave_ms, t.later_ms) = (500, 300);
        assert!(!t.cold_first_wave());
        // A single wave has no later tasks to be slower than.
        (t.first_wave, t.tasks, t.first_wave_ms, t.later_ms) = (10, 10, 7_000, 0);
        assert!(!t.cold_first_wave());
    }

    #[test]
    fn a_copy_ends_a_straggler_a_typical_task_after_speculation_starts() {
        let typical = Typical {
            duration_ms: 1_000,
            three_quarters_done_ms: 10_000,
            ..Default::default()
        };
        // Launched at 0 and still running when three quarters are done at 10 s: a copy then.
        assert_eq!(typical.speculated_ms(0, 60_000, 1.5), 11_000);
        // Launched at 9.5 s: the copy waits for 1.5x the typical task.
        assert_eq!(typical.speculated_ms(9_500, 60_000, 1.5), 2_500);
        // Short of the copy's end, it ends on its own.
        assert_eq!(typical.speculated_ms(9_500, 2_000, 1.5), 2_000);
    }
}

/// The attribution on real Spark output: each cause where a log planted it, and none of the
/// executor kind where no host was slow.
#[cfg(test)]
mod real_logs {
    use super::*;
    use crate::Facts;
    use crate::testing::apps;

    /// Each application of one log with its facts.
    fn with_facts(rel: &str) -> Vec<(Application, Facts)> {
        apps(rel)
            .into_iter()
            .map(|app| {
                let facts = Facts::of(&app);
                (app, facts)
            })
            .collect()
    }

    /// Every long task of every stage with its stage's id.
    fn causes(app: &Application, facts: &Facts) -> Vec<(i64, LongTask)> {
        app.stages
            .iter()
            .zip(&facts.stages)
            .flat_map(|(stage, s)| {
                s.facts
                    .slowness
                    .long_tasks
                    .iter()
                    .map(move |l| (stage.stage_id, *l))
            })
            .collect()
    }

    /// orders JOIN customers with 60 % of the orders on one customer: the hot partition's task
    /// is long for its data (24x the typical task's records).
    #[test]
    fn the_hot_join_partition_is_long_for_its_data() {
        for (app, facts) in with_facts("logs/patterns/skew-join") {
            let found = causes(&app, &facts);
            let (_, hot) = found
                .iter()
                .filter(|(stage, _)| *stage == 2)
                .max_by_key(|(_, l)| l.duration_ms)
                .expect("a long task in the join stage");
            assert_eq!(hot.index, 13);
            assert_eq!(hot.attribution.cause(), Cause::Data, "{hot:?}");
            assert!(hot.attribution.data_ratio > 10.0, "{hot:?}");
            assert_eq!(
                hot.attribution.parts_ms.iter().sum::<i64>(),
                hot.attribution.excess_ms
            );
        }
    }

    /// Two one-core executors whose first tasks each took 7 s against a 0.3 s median: the
    /// executors' cold start, not stragglers, and no executor slower than the other.
    #[test]
    fn an_executors_first_tasks_are_its_cold_start() {
        for (app, facts) in with_facts("logs/scaling/cpu-2x1") {
            let first: Vec<LongTask> = causes(&app, &facts)
                .into_iter()
                .filter(|(stage, _)| *stage == 0)
                .map(|(_, l)| l)
                .collect();
            assert_eq!(first.len(), 2, "{first:?}");
            for l in &first {
                assert_eq!(l.attribution.cause(), Cause::ColdStart, "{l:?}");
                assert_eq!(l.attribution.cold, Cold::NewExecutor, "{l:?}");
            }
            assert!(facts.slowness.paces.iter().all(|p| !p.slow));
        }
    }

    /// A sort-merge join stage whose first task on each executor took 47-51 s and the later
    /// ones 9 s with the same data, on executors that had run earlier stages: the stage's cold
    /// first wave.
    #[test]
    fn a_first_wave_far_slower_than_the_later_tasks_is_a_cold_start() {
        for (app, facts) in with_facts("logs/causes/broadcast") {
            let stage6: Vec<LongTask> = causes(&app, &facts)
                .into_iter()
                .filter(|(stage, _)| *stage == 6)
                .map(|(_, l)| l)
                .collect();
            assert_eq!(stage6.len(), 2, "{stage6:?}");
            for l in &stage6 {
                assert!(l.first_wave, "{l:?}");
                assert_eq!(l.attribution.cold, Cold::FirstWave, "{l:?}");
                assert_eq!(l.attribution.cause(), Cause::ColdStart, "{l:?}");
            }
        }
    }

    /// A UDF that sleeps ten times longer on executor 1: every task there after its first is
    /// beyond executor 0's 90th percentile, in both stages; executor 0 is not slow.
    #[test]
    fn an_executor_slow_in_every_wave_is_slow_and_its_tasks_say_so() {
        for (app, facts) in with_facts("logs/patterns/straggler") {
            let id = |e: &ExecutorPace| app.executors[e.executor as usize].id.as_str();
            let slow: Vec<&str> = facts
                .slowness
                .paces
                .iter()
                .filter(|p| p.slow)
                .map(id)
                .collect();
            assert_eq!(slow, ["1"]);
            let pace = facts.slowness.paces.iter().find(|p| id(p) == "1").unwrap();
            assert_eq!(pace.stages.len(), 2);
            assert!(pace.ratio > 4.0, "{pace:?}");
            let warm_on_1: Vec<LongTask> = causes(&app, &facts)
                .into_iter()
                .map(|(_, l)| l)
                .filter(|l| app.executors[l.executor as usize].id == "1" && !l.first_wave)
                .collect();
            assert!(!warm_on_1.is_empty());
            for l in warm_on_1 {
                assert_eq!(l.attribution.cause(), Cause::Executor, "{l:?}");
            }
        }
    }

    /// 250 stages of light work on two healthy executors (4 GiB each, one core): many cold
    /// first waves, no slow executor.
    #[test]
    fn no_executor_is_slow_on_a_healthy_run() {
        for (_, facts) in with_facts("logs/memory/overprovisioned") {
            assert!(facts.slowness.paces.iter().any(|p| p.compared > 100));
            assert!(
                facts.slowness.paces.iter().all(|p| !p.slow),
                "{:?}",
                facts.slowness.paces
            );
        }
    }
}
