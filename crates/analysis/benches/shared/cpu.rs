//! CPU time for the benchmarks: on a shared machine it is steadier than the wall clock.

/// This process's and its reaped children's user + system time, from `/proc/self/stat`.
pub fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the command name (which may hold spaces) in parentheses; utime, stime,
    // cutime and cstime are fields 14 to 17, in clock ticks of 1/100 s on Linux.
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let ticks: f64 = after
        .split_whitespace()
        .skip(11)
        .take(4)
        .filter_map(|v| v.parse::<f64>().ok())
        .sum();
    ticks / 100.0
}
