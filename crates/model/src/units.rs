//! Durations and sizes written for people.

/// A duration for people: milliseconds under a second, then seconds, minutes, hours.
///
/// ```
/// use sparkdiag_model::units::duration;
/// assert_eq!(duration(950), "950 ms");
/// assert_eq!(duration(125_000), "2m 05s");
/// assert_eq!(duration(126 * 3_600_000), "126h 00m");
/// ```
pub fn duration(ms: i64) -> String {
    let ms = ms.max(0);
    if ms < 1000 {
        return format!("{ms} ms");
    }
    let secs = ms / 1000;
    match secs {
        0..60 => format!("{:.1} s", ms as f64 / 1000.0),
        60..3600 => format!("{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{}h {:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

/// Bytes in binary units, as Spark's UI shows them.
///
/// ```
/// assert_eq!(sparkdiag_model::units::human_bytes(1536), "1.5 KiB");
/// ```
pub fn human_bytes(bytes: i64) -> String {
    const UNITS: [&str; 6] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut value = bytes.max(0) as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{value:.1} {}", UNITS[unit])
    }
}
