//! Every task end of an application, stored by stage attempt so that memory follows the work in
//! flight rather than the length of the log.
//!
//! A stage attempt that can still change keeps its tasks as plain [`Task`]s (168 bytes each).
//! When it completes, its tasks are folded: sorted by task id and written column by column
//! (each field of every task, then the next field) as variable-length integers, task ids,
//! launch times and partition indices as differences from the previous task, the whole
//! compressed with zstd. Nothing is dropped, so every quantile, finding and chart computed from a
//! folded stage is exactly the one computed from the tasks as they were read; a folded stage is
//! unfolded for the duration of one look ([`Tasks::of_stage`]).
//!
//! A rule that looks at a stage again while it still holds its first look (a helper called with
//! the stage) is handed the same unfolding: the last stage unfolded is remembered for as long
//! as someone holds it, and no longer, so that no unfolded stage outlives its looks.

use std::ops::{Deref, Range};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

use crate::model::{Task, TaskMetricsCompact, TaskOutcome};

/// Every task end, by stage attempt (indexed like [`crate::Application::stages`]).
#[derive(Debug, Default)]
pub struct Tasks {
    stages: Vec<StageTasks>,
    count: usize,
    /// The earliest launch and latest end (launch plus duration) of every task, kept as the
    /// tasks arrive so that the time the tasks cover needs no look at a folded stage.
    span: Option<(i64, i64)>,
    /// Each stage attempt's first position in [`Tasks::iter`]'s order, set by [`Tasks::finish`].
    starts: Vec<usize>,
    /// The folded stage unfolded last, with its index, while a look at it lasts.
    last_unfolded: Mutex<Option<(usize, Weak<Vec<Task>>)>>,
    /// How many times a folded stage was unfolded to be looked at.
    unfolds: AtomicUsize,
}

/// One stage attempt's task ends (or some of them), borrowed while the stage is open, shared
/// with [`Tasks`]' last unfolded stage once it is folded.
#[derive(Debug, Clone)]
pub enum StageView<'a> {
    Borrowed(&'a [Task]),
    Unfolded(Arc<Vec<Task>>, Range<usize>),
}

impl Deref for StageView<'_> {
    type Target = [Task];

    fn deref(&self) -> &[Task] {
        match self {
            StageView::Borrowed(tasks) => tasks,
            StageView::Unfolded(tasks, range) => &tasks[range.clone()],
        }
    }
}

impl AsRef<[Task]> for StageView<'_> {
    fn as_ref(&self) -> &[Task] {
        self
    }
}

#[derive(Debug)]
enum StageTasks {
    /// Tasks of a stage that can still change, in the order they ended.
    Open(Vec<Task>),
    /// A completed stage's tasks, sorted by task id, as compressed columns.
    Folded(Folded),
    /// A completed stage's `count` tasks, with the folder ([`crate::folder`]); the tasks that
    /// ended since wait in `late`. Only while the builder reads: it puts every stage back before
    /// the application is finished.
    Folding { count: usize, late: Vec<Task> },
}

impl Default for StageTasks {
    fn default() -> Self {
        StageTasks::Open(Vec::new())
    }
}

#[derive(Debug)]
pub(crate) struct Folded {
    count: usize,
    /// Length of the columns before compression.
    raw_len: usize,
    bytes: Box<[u8]>,
    /// Tasks that ended after the stage completed (speculative copies killed late, a failed
    /// attempt's zombie tasks), folded in when the application is finished: folding again for
    /// each of them would cost the whole stage each time.
    late: Vec<Task>,
}

/// zstd's fastest levels already find the repetition in the columns; higher ones cost more
/// time at the end of each stage than they save in bytes.
const ZSTD_LEVEL: i32 = 1;

impl Tasks {
    /// How many task ends, in every stage attempt.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many task ends stage attempt `stage` (its index) has.
    pub fn count_of_stage(&self, stage: usize) -> usize {
        match self.stages.get(stage) {
            Some(StageTasks::Open(tasks)) => tasks.len(),
            Some(StageTasks::Folded(folded)) => folded.count + folded.late.len(),
            Some(StageTasks::Folding { count, late }) => count + late.len(),
            None => 0,
        }
    }

    /// The task ends of stage attempt `stage` (its index): borrowed while the stage is open,
    /// unfolded once it is folded (or the same unfolding again while a look at it still holds
    /// it). Sorted by task id once the application is finished.
    pub fn of_stage(&self, stage: usize) -> StageView<'_> {
        match self.stages.get(stage) {
            Some(StageTasks::Open(tasks)) => StageView::Borrowed(tasks),
            Some(StageTasks::Folded(folded)) => {
                let tasks = self.unfolded(stage, folded);
                let all = 0..tasks.len();
                StageView::Unfolded(tasks, all)
            }
            Some(StageTasks::Folding { late, .. }) => {
                debug_assert!(false, "a stage looked at while the folder holds it");
                StageView::Borrowed(late)
            }
            None => StageView::Borrowed(&[]),
        }
    }

    /// The earliest task launch and the latest task end (launch plus duration, saturating), over
    /// every task end; `None` without tasks.
    pub fn span(&self) -> Option<(i64, i64)> {
        self.span
    }

    /// How many times a folded stage was unfolded to be looked at since the tasks were read.
    pub fn unfolds(&self) -> usize {
        self.unfolds.load(Ordering::Relaxed)
    }

    fn unfolded(&self, stage: usize, folded: &Folded) -> Arc<Vec<Task>> {
        let mut last = self.last_unfolded.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((at, tasks)) = last.as_ref()
            && *at == stage
            && let Some(tasks) = tasks.upgrade()
        {
            return tasks;
        }
        self.unfolds.fetch_add(1, Ordering::Relaxed);
        // In an `Arc<Vec>` rather than an `Arc<[Task]>`, which would copy the whole stage.
        let tasks = Arc::new(folded.unfold(stage as u32));
        *last = Some((stage, Arc::downgrade(&tasks)));
        tasks
    }

    /// Forgets the last unfolded stage: the stages are changing.
    fn forget_unfolded(&mut self) {
        *self
            .last_unfolded
            .get_mut()
            .unwrap_or_else(|e| e.into_inner()) = None;
    }

    /// The task ends at `positions` in [`Tasks::iter`]'s order: one stage attempt's
    /// ([`crate::StageAttempt::tasks`]).
    pub fn at_positions(&self, positions: &Range<usize>) -> StageView<'_> {
        if positions.is_empty() {
            return StageView::Borrowed(&[]);
        }
        // Stages without tasks share their start with the next stage that has some: the last
        // stage starting at or before `positions` is the one holding it.
        let stage = self.starts.partition_point(|&s| s <= positions.start) - 1;
        let tasks = self.of_stage(stage);
        let offset = positions.start - self.starts[stage];
        let wanted = offset..offset + positions.len();
        match tasks {
            StageView::Borrowed(tasks) => StageView::Borrowed(&tasks[wanted]),
            StageView::Unfolded(tasks, _) => StageView::Unfolded(tasks, wanted),
        }
    }

    /// Each task end at `positions` (one stage attempt's, as [`Tasks::at_positions`] takes
    /// them), in no set order, without holding the stage unfolded: a folded stage's tasks are
    /// built one at a time from its columns, so a look that needs each task once costs the
    /// columns (about 48 bytes a task) instead of the whole stage (168).
    pub fn for_each_at_positions(&self, positions: &Range<usize>, mut each: impl FnMut(&Task)) {
        if positions.is_empty() {
            return;
        }
        let stage = self.starts.partition_point(|&s| s <= positions.start) - 1;
        let whole =
            self.starts[stage] == positions.start && positions.len() == self.count_of_stage(stage);
        match self.stages.get(stage) {
            Some(StageTasks::Folded(folded)) if whole => {
                self.unfolds.fetch_add(1, Ordering::Relaxed);
                folded.visit(stage as u32, |t| each(&t));
                folded.late.iter().for_each(each);
            }
            _ => self.at_positions(positions).iter().for_each(each),
        }
    }

    /// Every task end, stage attempt by stage attempt, unfolding one stage at a time.
    pub fn iter(&self) -> impl Iterator<Item = Task> + '_ {
        (0..self.stages.len()).flat_map(move |stage| {
            let tasks = self.of_stage(stage);
            (0..tasks.len()).map(move |i| tasks[i])
        })
    }

    /// Bytes the stored tasks take: the open stages' tasks and the folded stages' columns.
    pub fn heap_bytes(&self) -> usize {
        self.stages
            .iter()
            .map(|s| match s {
                StageTasks::Open(tasks) => tasks.capacity() * std::mem::size_of::<Task>(),
                StageTasks::Folded(folded) => {
                    folded.bytes.len() + folded.late.capacity() * std::mem::size_of::<Task>()
                }
                StageTasks::Folding { count, late } => {
                    (count + late.capacity()) * std::mem::size_of::<Task>()
                }
            })
            .sum::<usize>()
            + self.stages.capacity() * std::mem::size_of::<StageTasks>()
    }

    /// Adds a task end of stage attempt `task.stage`.
    pub(crate) fn push(&mut self, task: Task) {
        self.forget_unfolded();
        let (launch, end) = (
            task.launch_ms,
            task.launch_ms.saturating_add(i64::from(task.duration_ms)),
        );
        self.span = Some(match self.span {
            Some((first, last)) => (first.min(launch), last.max(end)),
            None => (launch, end),
        });
        let stage = task.stage as usize;
        if self.stages.len() <= stage {
            self.stages.resize_with(stage + 1, StageTasks::default);
        }
        match &mut self.stages[stage] {
            StageTasks::Open(tasks) => tasks.push(task),
            StageTasks::Folded(folded) => folded.late.push(task),
            StageTasks::Folding { late, .. } => late.push(task),
        }
        self.count += 1;
    }

    /// Folds stage attempt `stage`: its tasks are final unless a late one arrives.
    pub(crate) fn fold(&mut self, stage: usize) {
        self.forget_unfolded();
        if let Some(slot) = self.stages.get_mut(stage)
            && let StageTasks::Open(tasks) = slot
            && !tasks.is_empty()
        {
            *slot = StageTasks::Folded(Folded::new(tasks));
        }
    }

    /// Stage attempt `stage`'s tasks, to be folded elsewhere and put back with
    /// [`Tasks::put_folded`]; `None` when it has none to fold.
    pub(crate) fn take_to_fold(&mut self, stage: usize) -> Option<Vec<Task>> {
        self.forget_unfolded();
        let slot = self.stages.get_mut(stage)?;
        let StageTasks::Open(open) = slot else {
            return None;
        };
        if open.is_empty() {
            return None;
        }
        let tasks = std::mem::take(open);
        *slot = StageTasks::Folding {
            count: tasks.len(),
            late: Vec::new(),
        };
        Some(tasks)
    }

    /// Puts back stage attempt `stage`'s tasks, folded elsewhere, with those that ended since.
    pub(crate) fn put_folded(&mut self, stage: usize, mut folded: Folded) {
        self.forget_unfolded();
        if let Some(slot) = self.stages.get_mut(stage)
            && let StageTasks::Folding { late, .. } = slot
        {
            folded.late = std::mem::take(late);
            *slot = StageTasks::Folded(folded);
        }
    }

    /// Sorts every open stage's tasks by task id and, when `fold` is set, folds them too; pads
    /// the stages to `stage_count` so every stage attempt has an entry.
    pub(crate) fn finish(&mut self, stage_count: usize, fold: bool) {
        self.forget_unfolded();
        if self.stages.len() < stage_count {
            self.stages.resize_with(stage_count, StageTasks::default);
        }
        for stage in 0..self.stages.len() {
            let slot = &mut self.stages[stage];
            if let StageTasks::Folded(folded) = slot
                && !folded.late.is_empty()
            {
                *slot = StageTasks::Open(folded.unfold(stage as u32));
            }
            if let StageTasks::Open(tasks) = slot {
                tasks.sort_unstable_by_key(|t| t.task_id);
                tasks.shrink_to_fit();
                if fold {
                    self.fold(stage);
                }
            }
        }
        self.stages.shrink_to_fit();
        let mut start = 0;
        self.starts = (0..self.stages.len())
            .map(|stage| {
                let at = start;
                start += self.count_of_stage(stage);
                at
            })
            .collect();
    }

    /// Each stage attempt's positions in [`Tasks::iter`]'s order, once finished.
    pub(crate) fn positions(&self, stage: usize) -> Range<usize> {
        let start = self.starts.get(stage).copied().unwrap_or(self.count);
        start..start + self.count_of_stage(stage)
    }
}

fn put(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push(value as u8 | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

fn zigzag(value: i64) -> u64 {
    ((value << 1) ^ (value >> 63)) as u64
}

fn unzigzag(value: u64) -> i64 {
    (value >> 1) as i64 ^ -((value & 1) as i64)
}

/// Reads the variable-length integers [`put`] wrote. The bytes were written by this process, so
/// running out of them is a bug, not bad input.
struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn next(&mut self) -> u64 {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let byte = self.bytes[self.at];
            self.at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return value;
            }
            shift += 7;
        }
    }
}

type Get = fn(&Task) -> u64;
type Set = fn(&mut Task, u64);

/// A column of a field stored as it is: its reader and its writer.
macro_rules! column {
    ($($field:ident).+ : $ty:ty) => {
        (
            |t: &Task| u64::from(t.$($field).+),
            |t: &mut Task, v: u64| t.$($field).+ = v as $ty,
        )
    };
}

/// The columns stored as they are (the others are differences, see [`Folded::new`]).
const PLAIN_COLUMNS: &[(Get, Set)] = &[
    column!(duration_ms: u32),
    column!(executor: u32),
    column!(attempt: u16),
    (
        |t| {
            let outcome = match t.outcome {
                TaskOutcome::Success => 0,
                TaskOutcome::Failed => 1,
                TaskOutcome::Killed => 2,
            };
            outcome
                | u64::from(t.speculative) << 2
                | u64::from(t.has_metrics) << 3
                | u64::from(t.locality.code()) << 4
        },
        |t, v| {
            t.outcome = match v & 3 {
                0 => TaskOutcome::Success,
                1 => TaskOutcome::Failed,
                _ => TaskOutcome::Killed,
            };
            t.speculative = v & 4 != 0;
            t.has_metrics = v & 8 != 0;
            t.locality = crate::model::Locality::from_code((v >> 4) as u8 & 7);
        },
    ),
    column!(getting_result_ms: u32),
    column!(metrics.run_ms: u32),
    column!(metrics.deserialize_ms: u32),
    column!(metrics.gc_ms: u32),
    column!(metrics.result_serialization_ms: u32),
    column!(metrics.fetch_wait_ms: u32),
    (
        |t| t.metrics.cpu_ms.map_or(0, |ms| u64::from(ms) + 1),
        |t, v| t.metrics.cpu_ms = v.checked_sub(1).map(|ms| ms as u32),
    ),
    column!(metrics.result_size: u64),
    column!(metrics.peak_execution_memory: u64),
    column!(metrics.memory_spill: u64),
    column!(metrics.disk_spill: u64),
    column!(metrics.input_bytes: u64),
    column!(metrics.input_records: u64),
    column!(metrics.output_bytes: u64),
    column!(metrics.output_records: u64),
    column!(metrics.shuffle_read_bytes: u64),
    column!(metrics.shuffle_read_records: u64),
    column!(metrics.shuffle_write_bytes: u64),
];

/// Sets each plain column of `t` from its reader. Written out one column at a time with each
/// setter a constant, so every one is a direct call the compiler inlines: in a loop over the
/// table they were 25 indirect calls a task, most of the unfolding's own instructions.
fn set_plain_columns(t: &mut Task, columns: &mut [Reader<'_>]) {
    macro_rules! set_each {
        ($($i:literal)*) => {
            // A column added to the table must be added here too.
            const _: () = assert!(PLAIN_COLUMNS.len() == [$($i),*].len());
            $({
                const SET: Set = PLAIN_COLUMNS[$i].1;
                SET(t, columns[$i].next());
            })*
        };
    }
    set_each!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21);
}

impl Folded {
    /// How many tasks the columns hold (the late ones aside).
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    pub(crate) fn new(tasks: &mut [Task]) -> Folded {
        tasks.sort_unstable_by_key(|t| t.task_id);
        let mut raw = Vec::with_capacity(tasks.len() * 48);
        // Ids, launch times and partition indices grow with the task id: their differences
        // are small numbers.
        let mut previous = (0i64, 0i64, 0i64);
        for t in tasks.iter() {
            put(&mut raw, zigzag(t.task_id.wrapping_sub(previous.0)));
            put(&mut raw, zigzag(t.launch_ms.wrapping_sub(previous.1)));
            put(&mut raw, zigzag(i64::from(t.index) - previous.2));
            previous = (t.task_id, t.launch_ms, i64::from(t.index));
        }
        for (get, _) in PLAIN_COLUMNS {
            for t in tasks.iter() {
                put(&mut raw, get(t));
            }
        }
        let bytes = sparkdiag_contract::packed::compress(&raw, ZSTD_LEVEL)
            .expect("zstd compresses any bytes held in memory");
        Folded {
            count: tasks.len(),
            raw_len: raw.len(),
            bytes: bytes.into_boxed_slice(),
            late: Vec::new(),
        }
    }

    fn unfold(&self, stage: u32) -> Vec<Task> {
        let mut tasks = Vec::with_capacity(self.count + self.late.len());
        self.visit(stage, |t| tasks.push(t));
        if !self.late.is_empty() {
            tasks.extend_from_slice(&self.late);
            tasks.sort_unstable_by_key(|t| t.task_id);
        }
        tasks
    }

    /// Each folded task in task id order, built one at a time (the late ones are not among
    /// them).
    fn visit(&self, stage: u32, mut each: impl FnMut(Task)) {
        let raw = sparkdiag_contract::packed::decompress(&self.bytes, self.raw_len)
            .expect("the folded columns were compressed by this process");
        // One reader per column, each task filled field by field: writing a column at a time
        // would walk every 168-byte task once per column.
        let mut at = 0;
        let mut column_at = |varints: usize| {
            let start = at;
            let mut left = varints;
            while left > 0 {
                left -= usize::from(raw[at] < 0x80);
                at += 1;
            }
            Reader {
                bytes: &raw,
                at: start,
            }
        };
        let mut ids = column_at(3 * self.count);
        let mut columns: Vec<Reader> = PLAIN_COLUMNS
            .iter()
            .map(|_| column_at(self.count))
            .collect();
        let blank = Task {
            task_id: 0,
            launch_ms: 0,
            duration_ms: 0,
            stage,
            executor: 0,
            index: 0,
            attempt: 0,
            outcome: TaskOutcome::Success,
            speculative: false,
            has_metrics: false,
            locality: crate::model::Locality::Unknown,
            getting_result_ms: 0,
            metrics: TaskMetricsCompact::default(),
        };
        let mut previous = (0i64, 0i64, 0i64);
        for _ in 0..self.count {
            let mut t = blank;
            t.task_id = previous.0.wrapping_add(unzigzag(ids.next()));
            t.launch_ms = previous.1.wrapping_add(unzigzag(ids.next()));
            let index = previous.2 + unzigzag(ids.next());
            t.index = index as u32;
            previous = (t.task_id, t.launch_ms, index);
            set_plain_columns(&mut t, &mut columns);
            each(t);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(task_id: i64, launch_ms: i64, index: u32) -> Task {
        Task {
            task_id,
            launch_ms,
            duration_ms: 1_234,
            stage: 0,
            executor: 3,
            index,
            attempt: 1,
            outcome: TaskOutcome::Killed,
            speculative: true,
            has_metrics: true,
            locality: crate::model::Locality::Any,
            getting_result_ms: 7,
            metrics: TaskMetricsCompact {
                run_ms: u32::MAX,
                cpu_ms: Some(u32::MAX),
                shuffle_read_bytes: 1 << 40,
                ..TaskMetricsCompact::default()
            },
        }
    }

    #[test]
    fn a_folded_stage_unfolds_to_the_same_tasks_sorted_by_id() {
        let mut tasks = Tasks::default();
        // Out of order, with launch times and indices going backwards, and extreme values.
        for t in [
            task(9, 1_700_000_000_000, 4),
            task(2, 1_700_000_000_500, 0),
            task(i64::MAX, -5, u32::MAX),
        ] {
            tasks.push(t);
        }
        let mut expected: Vec<Task> = tasks.of_stage(0).to_vec();
        expected.sort_unstable_by_key(|t| t.task_id);
        tasks.fold(0);
        let first_look = tasks.of_stage(0);
        assert!(matches!(first_look, StageView::Unfolded(..)));
        assert_eq!(tasks.unfolds(), 1);
        assert_eq!(tasks.of_stage(0).as_ref(), expected.as_slice());
        assert_eq!(
            tasks.unfolds(),
            1,
            "a stage still held is not unfolded again"
        );
        drop(first_look);
        assert_eq!(tasks.of_stage(0).as_ref(), expected.as_slice());
        assert_eq!(tasks.unfolds(), 2, "nothing is kept once no look holds it");
        assert_eq!(tasks.len(), 3);
        assert_eq!(tasks.count_of_stage(0), 3);
    }

    /// Visiting a folded stage's tasks one at a time gives every task unfolding gives (a late
    /// one too, folded in when the application finished), in one pass over the columns.
    #[test]
    fn visiting_a_folded_stage_gives_every_task_in_one_pass() {
        let mut tasks = Tasks::default();
        for t in [task(9, 1_700_000_000_000, 4), task(2, 1_700_000_000_500, 0)] {
            tasks.push(t);
        }
        tasks.fold(0);
        tasks.push(task(5, -5, u32::MAX));
        tasks.finish(1, true);
        let positions = tasks.positions(0);
        let mut visited: Vec<Task> = Vec::new();
        tasks.for_each_at_positions(&positions, |t| visited.push(*t));
        visited.sort_unstable_by_key(|t| t.task_id);
        assert_eq!(visited.len(), 3);
        assert_eq!(tasks.unfolds(), 1, "one pass over the columns");
        assert_eq!(visited.as_slice(), tasks.at_positions(&positions).as_ref());
    }

    #[test]
    fn a_task_ending_after_its_stage_folded_joins_it_in_id_order() {
        let mut tasks = Tasks::default();
        tasks.push(task(1, 10, 0));
        tasks.push(task(3, 10, 2));
        tasks.fold(0);
        tasks.push(task(2, 5, 1));
        assert_eq!(tasks.count_of_stage(0), 3);
        let ids = |tasks: &Tasks| tasks.iter().map(|t| t.task_id).collect::<Vec<i64>>();
        assert_eq!(ids(&tasks), vec![1, 2, 3]);
        tasks.finish(2, true);
        assert!(matches!(&tasks.stages[0], StageTasks::Folded(f) if f.late.is_empty()));
        assert_eq!(ids(&tasks), vec![1, 2, 3]);
        assert_eq!(tasks.count_of_stage(1), 0);
        assert!(tasks.of_stage(1).is_empty());
    }

    /// A stage folded on another thread: the tasks that end while it is away are counted
    /// at once, and join it, in id order, when it comes back.
    #[test]
    fn a_stage_folded_elsewhere_keeps_the_tasks_that_ended_meanwhile() {
        let mut tasks = Tasks::default();
        tasks.push(task(1, 10, 0));
        tasks.push(task(3, 10, 2));
        let mut away = tasks.take_to_fold(0).expect("the stage has tasks");
        assert_eq!(away.len(), 2);
        assert!(tasks.take_to_fold(0).is_none(), "it is away already");
        tasks.push(task(2, 5, 1));
        assert_eq!(tasks.count_of_stage(0), 3);
        assert_eq!(tasks.len(), 3);
        tasks.put_folded(0, Folded::new(&mut away));
        assert!(matches!(&tasks.stages[0], StageTasks::Folded(f) if f.late.len() == 1));
        tasks.finish(1, true);
        let ids: Vec<i64> = tasks.iter().map(|t| t.task_id).collect();
        assert_eq!(ids, vec![1, 2, 3]);
        let mut expected = vec![task(1, 10, 0), task(2, 5, 1), task(3, 10, 2)];
        expected.sort_unstable_by_key(|t| t.task_id);
        assert_eq!(tasks.of_stage(0).as_ref(), expected.as_slice());
    }
}
