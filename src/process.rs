//! What only the program may decide for the whole process: glibc's allocator settings and what
//! happens on SIGINT, SIGTERM and SIGHUP. The libraries make no such decision; they offer what
//! is needed here (`sparkdiag_eventlog::remove_unpacked_archives`).

/// Sets the allocator up and catches the signals that stop a run. Called once, first thing.
pub fn set_up() {
    release_large_blocks();
    one_arena_a_core();
    remove_unpacked_archives_on_signal();
}

/// Has glibc hand blocks of 1 MiB or more straight back to the system when they are freed.
///
/// A folded stage is unfolded into one large block (192 bytes a task: 19 MB for 100,000 tasks)
/// for each look at it. glibc's default raises its threshold for such blocks to the largest one
/// freed, and from then on serves them from its heap, where a stage's block and the smaller
/// figures taken from it fragment the heap: on 10M tasks in 100 stages, 15 MB of peak memory
/// held and not used (167.6 MB against 152.7 MB with the threshold fixed, memory bench, whose
/// children set the same threshold).
fn release_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets one of malloc's parameters, under malloc's own lock.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// Has glibc keep one arena a core instead of up to eight.
///
/// Each thread allocates from an arena of its own while there are arenas to spare, and memory
/// freed in one arena is reused by the threads of that arena only. The plans are parsed on the
/// pool's threads and let go after the rules; the report is built on the main thread, which
/// took fresh memory beside the freed plans: on a 3.5 GB log of 2,210 queries, 132 MB at the
/// peak against 120 MB with an arena a core, in the same time.
fn one_arena_a_core() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let cores = std::thread::available_parallelism().map_or(2, std::num::NonZero::get);
        let arenas = libc::c_int::try_from(cores).unwrap_or(libc::c_int::MAX);
        // SAFETY: `mallopt` only sets one of malloc's parameters, under malloc's own lock.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, arenas);
        }
    }
}

/// On SIGINT, SIGTERM or SIGHUP, removes the archives unpacked so far, then dies of the signal
/// as if nothing had caught it (a process killed by a signal runs no destructors, so without
/// this the folders would stay in the temporary folder until a later run found them).
#[cfg(unix)]
#[allow(
    clippy::exit,
    reason = "the program's own way out on a signal, after the default handler did not end it"
)]
fn remove_unpacked_archives_on_signal() {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    std::thread::spawn(move || {
        if let Some(signal) = signals.forever().next() {
            sparkdiag_eventlog::remove_unpacked_archives();
            let _ = signal_hook::low_level::emulate_default_handler(signal);
            std::process::exit(128 + signal);
        }
    });
}

#[cfg(not(unix))]
fn remove_unpacked_archives_on_signal() {}
