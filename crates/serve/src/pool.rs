//! The analysis workers: `workers` threads of their own, on which every analysis and every diff
//! runs, in the order they were queued.
//!
//! Not tokio's blocking pool: it starts a thread whenever none is free and lets idle ones go, so
//! over a day analyses run on many different threads, and glibc gives each thread that
//! allocates an arena (up to the limit `sparkdiag` sets as it starts: one a core), which keeps
//! the freed memory of the largest analysis it served. On `workers` threads of their own, what
//! the allocator keeps is bounded by that many arenas, and by the cores.
//! The queue in front of them is bounded by the server's admission (`workers` + `queue`
//! analyses; beyond, 503), not here. Figures under load: docs/reliability.md.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};

type Task = Box<dyn FnOnce() + Send>;

/// Runs work on a fixed set of threads; dropping every clone of it ends them once idle.
pub struct Pool {
    queue: Mutex<Sender<Task>>,
}

impl Pool {
    /// Starts `workers` threads, each with room for deep plans (the analysis recurses over
    /// them, as on the main thread).
    pub fn new(workers: usize) -> std::io::Result<Pool> {
        let (queue, tasks) = channel::<Task>();
        let tasks = Arc::new(Mutex::new(tasks));
        for n in 0..workers {
            let tasks = tasks.clone();
            std::thread::Builder::new()
                .name(format!("sparkdiag-analysis-{n}"))
                .stack_size(16 << 20)
                .spawn(move || work(&tasks))?;
        }
        Ok(Pool {
            queue: Mutex::new(queue),
        })
    }

    /// Runs `task` on the next free worker and waits for it without holding a thread of the
    /// runtime; `None` when it panicked (the worker goes on) or the pool is gone.
    pub async fn run<T: Send + 'static>(
        &self,
        task: impl FnOnce() -> T + Send + 'static,
    ) -> Option<T> {
        let (done, result) = tokio::sync::oneshot::channel();
        let task: Task = Box::new(move || {
            if let Ok(value) = std::panic::catch_unwind(AssertUnwindSafe(task)) {
                let _ = done.send(value);
            }
        });
        self.queue
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(task)
            .ok()?;
        result.await.ok()
    }
}

/// One worker: the next task, until the pool is dropped.
fn work(tasks: &Mutex<Receiver<Task>>) {
    loop {
        let next = tasks.lock().unwrap_or_else(|e| e.into_inner()).recv();
        match next {
            Ok(task) => task(),
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn work_runs_on_the_pools_threads_only_and_a_panic_spares_the_worker() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let pool = Pool::new(2).unwrap();
        runtime.block_on(async {
            let mut names = std::collections::BTreeSet::new();
            for _ in 0..20 {
                let name = pool
                    .run(|| std::thread::current().name().unwrap().to_string())
                    .await
                    .unwrap();
                names.insert(name);
            }
            assert!(
                names.iter().all(|n| n.starts_with("sparkdiag-analysis-")) && names.len() <= 2,
                "{names:?}"
            );
            let panicked: Option<()> = pool.run(|| panic!("a bad log")).await;
            assert!(panicked.is_none());
            assert_eq!(pool.run(|| 7).await, Some(7));
            assert_eq!(pool.run(|| 8).await, Some(8));
        });
    }
}
