//! The allocator setting `sparkdiag` makes as it starts (`src/process.rs`), so that the benches
//! measure the memory the program uses.

/// glibc hands blocks of 1 MiB or more straight back to the system when they are freed.
pub fn release_large_blocks() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets one of malloc's parameters, under malloc's own lock.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 1 << 20);
    }
}
