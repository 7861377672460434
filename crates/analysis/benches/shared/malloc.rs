//! The allocator settings `sparkdiag` makes as it starts (`src/process.rs`), so that the benches
//! measure the memory the program uses.

/// glibc hands blocks of 1 MiB or more straight back to the system when they are freed.
pub fn release_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets one of malloc's parameters, under malloc's own lock.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}

/// glibc keeps one arena a core, so that memory freed by one thread is reused by the others.
pub fn one_arena_a_core() {
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
