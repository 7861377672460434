//! GC002 heap-overprovisioned: executors asked for far more heap than they ever used.

use super::common::{bytes, ratio};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MAX_GC_SHARE: Threshold = threshold(
    "max_gc_share",
    0.05,
    "share",
    "GC share under which executors are not short of memory",
    "Dr. Elephant's low-GC (over-provisioned) tier",
);

pub const MAX_HEAP_SHARE: Threshold = threshold(
    "max_heap_share",
    0.5,
    "share",
    "peak heap over spark.executor.memory under which memory is wasted",
    "sparkdiag's own, stricter than DataFlint's warning below 70 %",
);

pub const MIN_RUN_S: Threshold = threshold(
    "min_run_s",
    60.0,
    "s",
    "task run time an executor needs before its peak means anything",
    "sparkdiag's own guard",
);

declare_rule! {
    /// ## What it does
    /// The opposite of GC001: executors that barely collect garbage and whose peak JVM heap use
    /// stayed far below `spark.executor.memory`.
    ///
    /// ## Why is this bad?
    /// It is not slow, it is expensive: memory that is reserved and never used could run more
    /// executors per node, or smaller (cheaper) nodes. Information only.
    ///
    /// ## How to fix it
    /// Lower `spark.executor.memory` towards the peak in the finding plus a margin (the finding
    /// suggests 1.5x the peak), or raise `spark.executor.cores` to use the heap with more tasks.
    ///
    /// ## Threshold and its source
    /// GC under `max_gc_share` = 5 % of task time (Dr. Elephant's "low GC means over-provisioned"
    /// tier) and peak heap under `max_heap_share` = 50 % of `spark.executor.memory` (DataFlint
    /// warns below 70 %), on executors whose tasks ran at least `min_run_s` = 60 s.
    pub static HEAP_OVERPROVISIONED = {
        code: "GC002",
        name: "heap-overprovisioned",
        category: Gc,
        summary: "Executors used far less heap than they reserved (information)",
        thresholds: &[
            MAX_GC_SHARE,
            MAX_HEAP_SHARE,
            MIN_RUN_S,
        ] as &[Threshold],
        check: check,
    };
}

/// `spark.executor.memory` in bytes: `4g`, `4096m`, `4096` (MiB, Spark's default unit).
pub fn parse_memory(text: &str) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&text[..i], &text[i..]),
        None => (text.as_str(), "m"),
    };
    let n: f64 = number.trim().parse().ok()?;
    let scale: u64 = match unit.trim_end_matches('b') {
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    Some((n * scale as f64) as u64)
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let Some(memory) = ctx
        .app
        .spark_properties
        .get("spark.executor.memory")
        .and_then(|m| parse_memory(m))
    else {
        return Vec::new();
    };
    let idle: Vec<(&sparkdiag_model::Executor, i64)> = ctx
        .app
        .executors
        .iter()
        .filter(|e| e.id != "driver" && e.run_time_ms as f64 >= t.get(&MIN_RUN_S) * 1000.0)
        .filter(|e| ratio(e.jvm_gc_time_ms as f64, e.run_time_ms as f64) < t.get(&MAX_GC_SHARE))
        .filter_map(|e| Some((e, e.peak_metrics?.jvm_heap_memory)))
        .filter(|(_, peak)| *peak > 0 && (*peak as f64) < t.get(&MAX_HEAP_SHARE) * memory as f64)
        .collect();
    let Some(peak) = idle.iter().map(|(_, p)| *p).max() else {
        return Vec::new();
    };
    let suggested = (peak as f64 * 1.5) as i64;
    let title = format!(
        "{} executor(s) peaked at {} of heap or less out of spark.executor.memory={}",
        idle.len(),
        bytes(peak),
        bytes(memory as i64)
    );
    vec![
        Finding::new(&HEAP_OVERPROVISIONED, Severity::Info, title, 0)
            .executors(idle.iter().map(|(e, _)| e.id.clone()))
            .evidence("executor_memory_bytes", memory)
            .evidence("peak_heap_bytes", peak)
            .evidence("suggested_executor_memory_bytes", suggested)
            .recommend(format!(
                "Lower spark.executor.memory towards {}m (1.5x the peak heap), or run more cores per executor.",
                suggested >> 20
            )),
    ]
}

#[cfg(test)]
mod tests {
    #[test]
    fn parses_spark_memory_strings() {
        assert_eq!(super::parse_memory("4g"), Some(4 << 30));
        assert_eq!(super::parse_memory("512m"), Some(512 << 20));
        assert_eq!(super::parse_memory("2048"), Some(2048 << 20));
        assert_eq!(super::parse_memory("1.5gb"), Some(3 << 29));
        assert_eq!(super::parse_memory("lots"), None);
    }
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::HEAP_OVERPROVISIONED;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_roomy_heap_with_a_shorter_guard() {
        assert_fires(
            &on_log(
                &HEAP_OVERPROVISIONED,
                "patterns/gc-healthy",
                &["GC002.min_run_s=1"],
            ),
            HEAP_OVERPROVISIONED.code,
        );
    }

    #[test]
    fn is_quiet_on_the_same_log_at_its_defaults() {
        assert_quiet(&on_log(&HEAP_OVERPROVISIONED, "patterns/gc-healthy", &[]));
    }
}
