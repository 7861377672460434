//! The night's worker loop: work done on a pool, results handed over in order, with a bounded
//! number alive at once.

/// How many applications may be in flight or finished-but-not-yet-written at once: enough that
/// a slow application does not idle the other workers for long, few enough that memory does not
/// grow with the night.
pub(crate) fn window(jobs: usize) -> usize {
    jobs * 4
}

/// Runs `work(i, item)` on `pool` for each of the `n` items of `items` (the `i`th) and hands
/// each result to `sink` on this thread in that order, with at most `window` items taken but not
/// yet handed over, so the results alive at once are bounded whatever `n` is. Each item is
/// taken from `items` when a worker starts on it and dropped when its work is done, so
/// whatever an item owns is freed as the night goes. A worker that would run ahead of the window waits; the item the
/// sink waits for is always inside it, so the pipeline never stalls. A panic in `work` is
/// re-raised here once the workers have stopped.
pub(crate) fn ordered_bounded<I: Send, T: Send>(
    pool: &rayon::ThreadPool,
    items: impl ExactSizeIterator<Item = I> + Send,
    window: usize,
    work: impl Fn(usize, I) -> T + Sync,
    mut sink: impl FnMut(T),
) {
    use std::collections::BTreeMap;
    use std::sync::{Condvar, Mutex};

    struct State<It, T> {
        items: It,
        next_take: usize,
        next_give: usize,
        done: BTreeMap<usize, std::thread::Result<T>>,
        stop: bool,
    }
    let window = window.max(1);
    let n = items.len();
    let state = Mutex::new(State {
        items,
        next_take: 0,
        next_give: 0,
        done: BTreeMap::new(),
        stop: false,
    });
    let changed = Condvar::new();
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    let worker = || {
        loop {
            let (i, item) = {
                let mut s = lock();
                while !s.stop && s.next_take < n && s.next_take >= s.next_give + window {
                    s = changed.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                if s.stop || s.next_take >= n {
                    return;
                }
                let Some(item) = s.items.next() else {
                    return;
                };
                s.next_take += 1;
                (s.next_take - 1, item)
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(i, item)));
            lock().done.insert(i, result);
            changed.notify_all();
        }
    };
    let workers = pool.current_num_threads().min(n);
    let mut panic = None;
    std::thread::scope(|scope| {
        scope.spawn(|| pool.scope(|s| (0..workers).for_each(|_| s.spawn(|_| worker()))));
        for i in 0..n {
            let result = {
                let mut s = lock();
                loop {
                    if let Some(result) = s.done.remove(&i) {
                        s.next_give = i + 1;
                        break result;
                    }
                    s = changed.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            };
            changed.notify_all();
            // A sink that panics must also stop the workers, or they would wait on the window
            // forever and the scope would never end.
            let given = result.and_then(|value| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(value)))
            });
            match given {
                Ok(()) => {}
                Err(payload) => {
                    // Let the workers finish what they hold and stop taking more.
                    lock().stop = true;
                    changed.notify_all();
                    panic = Some(payload);
                    break;
                }
            }
        }
    });
    if let Some(payload) = panic {
        std::panic::resume_unwind(payload);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts the values alive at once, as reports would be.
    struct Tracked<'a>(usize, &'a std::sync::atomic::AtomicUsize);

    impl Drop for Tracked<'_> {
        fn drop(&mut self) {
            self.1.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn results_come_in_order_and_few_are_alive_at_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let (alive, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let mut seen = Vec::new();
        let window = 6;
        ordered_bounded(
            &pool,
            0..2_000,
            window,
            |i, item| {
                assert_eq!(i, item);
                // The first item is slow, so unbounded workers would race far ahead of it.
                if i == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                let now = alive.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                Tracked(i, &alive)
            },
            |t| seen.push(t.0),
        );
        assert_eq!(seen, (0..2_000).collect::<Vec<_>>());
        assert_eq!(alive.load(Ordering::SeqCst), 0);
        // The window, plus the one the sink holds.
        let peak = peak.load(Ordering::SeqCst);
        assert!(peak <= window + 1, "{peak} results alive at once");
    }

    #[test]
    fn a_panicking_worker_stops_the_night_instead_of_hanging_it() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let mut seen = Vec::new();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ordered_bounded(
                &pool,
                0..100,
                3,
                |i, _| {
                    assert!(i != 7, "boom");
                    i
                },
                |i| seen.push(i),
            )
        }));
        assert!(outcome.is_err());
        assert_eq!(seen, (0..7).collect::<Vec<_>>());
        assert!(ordered_bounded_is_empty_safe(&pool));
    }

    /// No items: nothing is handed over and nothing waits.
    fn ordered_bounded_is_empty_safe(pool: &rayon::ThreadPool) -> bool {
        let mut calls = 0;
        ordered_bounded(pool, 0..0, 4, |i, _| i, |_| calls += 1);
        calls == 0
    }
}
