//! Folds completed stages' tasks on a thread of its own while the reading goes on.
//!
//! Folding (sorting a stage's tasks, writing their columns, compressing them) took a tenth of
//! the reading thread's time, and that thread set the pace of the whole read: the decoding
//! thread beside it waited for it. Handed to a thread that runs only on a core nobody else wants
//! (`SCHED_IDLE` on Linux), the folding fills the decoding thread's waits instead.
//!
//! Memory stays bounded: at most [`PENDING_MAX_TASKS`] tasks wait for the folder at once; a
//! stage beyond that is folded on the reading thread as before, so a folder that cannot keep up
//! costs time, never memory. When the reading ends, the reading thread folds the stages still
//! queued itself and waits only for the one being folded: a folder starved by a busy machine
//! holds up the end of a read by one stage at most. The folded columns are the same bytes
//! either way, and tasks that end after their stage was handed over are kept as late ones, as
//! they are beside a folded stage.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, mpsc};
use std::thread::JoinHandle;

use crate::model::Task;
use crate::tasks::{Folded, Tasks};

/// Tasks handed to the folder and not yet back, at most (168 bytes each while they wait: about
/// 1.4 MB).
pub const PENDING_MAX_TASKS: usize = 8_192;

/// The stages waiting for the folder, shared with it.
#[derive(Default)]
struct Queue {
    waiting: Mutex<Waiting>,
    /// Rung when a stage is queued or the reading has ended.
    rung: Condvar,
}

#[derive(Default)]
struct Waiting {
    stages: VecDeque<(usize, Vec<Task>)>,
    ended: bool,
}

impl Queue {
    fn lock(&self) -> MutexGuard<'_, Waiting> {
        // The folder never panics while holding the lock: what it guards is whole.
        self.waiting.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The next stage to fold, waiting for one; `None` once the reading has ended and none is
    /// left.
    fn next(&self) -> Option<(usize, Vec<Task>)> {
        let mut waiting = self.lock();
        loop {
            if let Some(stage) = waiting.stages.pop_front() {
                return Some(stage);
            }
            if waiting.ended {
                return None;
            }
            waiting = self.rung.wait(waiting).unwrap_or_else(|e| e.into_inner());
        }
    }
}

/// The folding thread and the stages on their way through it.
pub(crate) struct Folder {
    queue: Arc<Queue>,
    /// Each stage folded, with its emptied list of tasks.
    folded: mpsc::Receiver<(usize, Folded, Vec<Task>)>,
    thread: Option<JoinHandle<()>>,
    /// Tasks handed over and not yet back.
    pending_tasks: usize,
}

impl Folder {
    /// The folding thread, started; `None` when the system gives no thread (the reading thread
    /// then folds every stage itself).
    pub(crate) fn start() -> Option<Folder> {
        let queue = Arc::new(Queue::default());
        let (done, folded) = mpsc::channel();
        let queued = Arc::clone(&queue);
        let thread = std::thread::Builder::new()
            .name("sparkdiag-fold".into())
            .spawn(move || {
                run_only_when_a_core_is_idle();
                while let Some((stage, mut tasks)) = queued.next() {
                    let folded = Folded::new(&mut tasks);
                    if done.send((stage, folded, tasks)).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Folder {
            queue,
            folded,
            thread: Some(thread),
            pending_tasks: 0,
        })
    }

    /// Hands stage attempt `stage`'s tasks to the folder, or gives them back when too many
    /// already wait (to be folded by the caller).
    pub(crate) fn hand(&mut self, stage: usize, tasks: Vec<Task>) -> Result<(), Vec<Task>> {
        if self.pending_tasks + tasks.len() > PENDING_MAX_TASKS {
            return Err(tasks);
        }
        self.pending_tasks += tasks.len();
        self.queue.lock().stages.push_back((stage, tasks));
        self.queue.rung.notify_one();
        Ok(())
    }

    /// Puts the stages folded so far in their places, without waiting.
    pub(crate) fn collect(&mut self, tasks: &mut Tasks) {
        while let Ok((stage, folded, spent)) = self.folded.try_recv() {
            self.put(tasks, stage, folded);
            // Freed by the thread that allocated it: glibc frees another thread's block under
            // that thread's arena lock, which the reading thread takes for every allocation.
            drop(spent);
        }
    }

    /// Folds here the stages still queued, waits for the one the folder is folding, and puts
    /// each in its place; the thread ends.
    pub(crate) fn finish(mut self, tasks: &mut Tasks) {
        let queued = {
            let mut waiting = self.queue.lock();
            waiting.ended = true;
            std::mem::take(&mut waiting.stages)
        };
        self.queue.rung.notify_one();
        for (stage, mut stage_tasks) in queued {
            self.put(tasks, stage, Folded::new(&mut stage_tasks));
        }
        if let Some(thread) = self.thread.take() {
            let panicked = thread.join().err();
            self.collect(tasks);
            if let Some(panic) = panicked {
                // Folding failed where it would have failed on the reading thread: the same
                // panic.
                std::panic::resume_unwind(panic);
            }
        }
    }

    fn put(&mut self, tasks: &mut Tasks, stage: usize, folded: Folded) {
        self.pending_tasks -= folded.count();
        tasks.put_folded(stage, folded);
    }
}

impl Drop for Folder {
    /// A builder dropped before it finished (a log that could not be read) lets its folder go:
    /// the thread ends after the stage it is on instead of waiting for work forever (in `serve`,
    /// a thread for every unreadable log).
    fn drop(&mut self) {
        self.queue.lock().ended = true;
        self.queue.rung.notify_one();
    }
}

/// Lets the calling thread run only when a core would otherwise be idle, where the system
/// offers that; elsewhere it runs as any other thread. Should the system refuse, it runs as any
/// other thread too: slower, never wrong.
fn run_only_when_a_core_is_idle() {
    #[cfg(target_os = "linux")]
    // SAFETY: sets the calling thread's own policy; a zeroed `sched_param` is the priority that
    // `SCHED_IDLE` requires.
    unsafe {
        let param: libc::sched_param = std::mem::zeroed();
        libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_IDLE, &param);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Task, TaskMetricsCompact, TaskOutcome};

    fn stage_of(stage: u32, count: usize) -> Vec<Task> {
        (0..count)
            .map(|i| Task {
                task_id: (count - i) as i64,
                launch_ms: 1_700_000_000_000 + i as i64,
                duration_ms: 100 + i as u32 % 7,
                stage,
                executor: i as u32 % 3,
                index: i as u32,
                attempt: 0,
                outcome: TaskOutcome::Success,
                speculative: false,
                has_metrics: true,
                locality: crate::model::Locality::ProcessLocal,
                getting_result_ms: 0,
                metrics: TaskMetricsCompact {
                    run_ms: 90,
                    shuffle_read_bytes: i as u64 * 1_000,
                    ..TaskMetricsCompact::default()
                },
            })
            .collect()
    }

    /// Every stage handed over comes back folded to the same tasks; a stage beyond the room
    /// left is given back to be folded by the caller, so no more than the room ever waits.
    #[test]
    fn stages_come_back_folded_and_none_waits_beyond_the_room() {
        let mut tasks = Tasks::default();
        let sizes = [3, PENDING_MAX_TASKS - 3, 1, 5];
        for (stage, &count) in sizes.iter().enumerate() {
            stage_of(stage as u32, count)
                .into_iter()
                .for_each(|t| tasks.push(t));
        }
        let mut folder = Folder::start().expect("a thread");
        let mut given_back = Vec::new();
        for stage in 0..sizes.len() {
            let away = tasks.take_to_fold(stage).expect("tasks to fold");
            if let Err(mut back) = folder.hand(stage, away) {
                assert!(folder.pending_tasks + back.len() > PENDING_MAX_TASKS);
                given_back.push(stage);
                tasks.put_folded(stage, Folded::new(&mut back));
            }
            assert!(folder.pending_tasks <= PENDING_MAX_TASKS);
        }
        assert_eq!(given_back, vec![2, 3], "the first two fill the room");
        folder.finish(&mut tasks);
        tasks.finish(sizes.len(), true);
        for (stage, &count) in sizes.iter().enumerate() {
            let mut expected = stage_of(stage as u32, count);
            expected.sort_unstable_by_key(|t| t.task_id);
            assert_eq!(tasks.of_stage(stage).as_ref(), expected.as_slice());
        }
    }

    /// A folder dropped unfinished (its builder's log could not be read) ends its thread.
    #[test]
    fn a_folder_dropped_unfinished_ends_its_thread() {
        let mut tasks = Tasks::default();
        stage_of(0, 3).into_iter().for_each(|t| tasks.push(t));
        let mut folder = Folder::start().expect("a thread");
        let away = tasks.take_to_fold(0).expect("tasks to fold");
        assert!(folder.hand(0, away).is_ok());
        let started = std::time::Instant::now();
        // Back, so that the thread waits for more work rather than ending on a send that fails.
        while folder.pending_tasks > 0 {
            assert!(started.elapsed() < std::time::Duration::from_secs(30));
            folder.collect(&mut tasks);
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let queue = Arc::clone(&folder.queue);
        drop(folder);
        // The thread holds the other reference until it ends.
        while Arc::strong_count(&queue) > 1 {
            assert!(
                started.elapsed() < std::time::Duration::from_secs(30),
                "the folding thread still runs"
            );
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
    }
}
