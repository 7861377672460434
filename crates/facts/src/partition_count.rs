//! How many partitions some data wants: the one count the partition rules and the what-if name,
//! so a report never recommends two numbers for the same stage.

/// The partition size the recommended counts aim at, in MB (10^6 bytes): Databricks' and
/// spark-rapids' 128-256 MB, and the rules' `target_mb` default.
pub const DEFAULT_TARGET_MB: f64 = 128.0;

/// Partitions of about `target_mb` MB for `bytes` of data (at least one).
pub fn by_size(bytes: i64, target_mb: f64) -> i64 {
    ((bytes.max(0) as f64 / (target_mb * 1e6)).ceil() as i64).max(1)
}

/// Partitions for a stage of `bytes` on `cores`: about `target_mb` MB each, and never fewer
/// than the cores, which would leave some with nothing to do.
pub fn for_stage(bytes: i64, target_mb: f64, cores: i64) -> i64 {
    by_size(bytes, target_mb).max(cores)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_aim_at_the_target_and_keep_every_core_busy() {
        assert_eq!(by_size(0, DEFAULT_TARGET_MB), 1);
        assert_eq!(by_size(128_000_001, DEFAULT_TARGET_MB), 2);
        assert_eq!(for_stage(72_112_846_445, DEFAULT_TARGET_MB, 200), 564);
        assert_eq!(for_stage(1 << 30, DEFAULT_TARGET_MB, 200), 200);
    }
}
