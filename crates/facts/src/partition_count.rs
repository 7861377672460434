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

/// Partitions for a stage whose `partitions` tasks spilled: each split until what a task held
/// in memory plus what it spilled (`peak` and `spill`, a middle task's bytes) fits in the
/// execution memory it peaked at, and at least [`for_stage`]'s count and twice today's, so
/// SP001 and PA002 name one count for a stage that spilled.
pub fn to_fit_memory(
    partitions: i64,
    bytes: u64,
    peak: u64,
    spill: u64,
    target_mb: f64,
    cores: i64,
) -> i64 {
    let by_memory = if peak > 0 {
        partitions * ((peak.saturating_add(spill)) as f64 / peak as f64).ceil() as i64
    } else {
        2 * partitions
    };
    by_memory
        .max(for_stage(
            i64::try_from(bytes).unwrap_or(i64::MAX),
            target_mb,
            cores,
        ))
        .max(2 * partitions)
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

    #[test]
    fn a_spilling_stage_is_split_until_a_task_fits_its_memory() {
        // Two tasks that peaked at 17 MB and spilled 676 MB each: 40 pieces each.
        let peak = 17_825_552;
        let spill = 676_321_200;
        assert_eq!(
            to_fit_memory(2, 1_148_853_718, peak, spill, DEFAULT_TARGET_MB, 2),
            78
        );
        // Nothing spilled from memory: twice today's, or what the size and cores want.
        assert_eq!(to_fit_memory(10, 0, peak, 0, DEFAULT_TARGET_MB, 4), 20);
        assert_eq!(to_fit_memory(10, 0, peak, 0, DEFAULT_TARGET_MB, 64), 64);
        assert_eq!(to_fit_memory(3, 0, 0, 0, DEFAULT_TARGET_MB, 1), 6);
    }
}
