//! A smaller executor that still holds what the run used: GC002's suggestion and the what-if's
//! memory advice, computed once so that both name the same size.

use sparkdiag_model::Application;

use crate::memory_limits::{MIN_HEAP_BYTES, MIN_OVERHEAD_BYTES, RESERVED_BYTES, setting};

/// A smaller executor that still holds what the run used, with the margin stated.
#[derive(Debug, Clone, PartialEq)]
pub struct Sizing {
    pub heap: u64,
    pub overhead: u64,
    pub peak_heap: u64,
    pub peak_unified: u64,
    /// Share of the suggested heap the peak leaves free.
    pub headroom: f64,
    pub executor_hours: f64,
    pub gb_hours_saved: f64,
    /// `--conf` settings, pasteable.
    pub conf: Vec<String>,
}

/// The margin over the peaks the suggestion keeps: a run's peaks move with its data.
pub const MARGIN: f64 = 1.5;

/// The executor memory that holds `peak_heap` (the largest executor heap peak) and the unified
/// pool's peak with [`MARGIN`], in whole 256 MiB steps, never under Spark's floor nor above what
/// the application had; its overhead, the GB-hours it gives back and the `--conf` to paste.
pub fn smaller_executor(app: &Application, peak_heap: u64) -> Sizing {
    let limits = crate::memory_limits::of(app);
    let executors = || app.executors.iter().filter(|e| e.id != "driver");
    // What the unified pool held at its peak (execution plus storage), which the smaller heap's
    // pool must still hold with the margin.
    let peak_unified = executors()
        .filter_map(|e| e.peak_metrics)
        .map(|p| (p.on_heap_execution_memory + p.on_heap_storage_memory).max(0) as u64)
        .max()
        .unwrap_or(0);
    let for_pool =
        RESERVED_BYTES + (peak_unified as f64 * MARGIN / limits.memory_fraction.max(0.1)) as u64;
    let needed = ((peak_heap as f64 * MARGIN) as u64)
        .max(for_pool)
        .max(MIN_HEAP_BYTES);
    // Whole 256 MiB steps, never above what it was.
    let step = 256 << 20;
    let heap = needed.div_ceil(step) * step;
    let heap = heap.min(limits.executor_memory_bytes);
    let overhead = if limits.executor_overhead_set {
        limits.executor_overhead_bytes
    } else {
        ((heap as f64 * limits.overhead_factor) as u64).max(MIN_OVERHEAD_BYTES)
    };
    let end = app.effective_end_ms().unwrap_or(0);
    let executor_ms: i64 = executors()
        .filter_map(|e| Some(app.span_without_jumps_ms(e.added_ms?, e.removed_ms.unwrap_or(end))))
        .sum();
    let executor_hours = executor_ms as f64 / 3_600_000.0;
    let saved_bytes = limits.container_bytes().saturating_sub(
        heap + overhead
            + limits.off_heap_bytes.unwrap_or(0)
            + limits.pyspark_memory_bytes.unwrap_or(0),
    );
    let mut conf = vec![format!("spark.executor.memory={}", setting(heap))];
    if limits.executor_overhead_set {
        conf.push(format!(
            "spark.executor.memoryOverhead={}",
            setting(overhead)
        ));
    }
    for key in [
        "spark.executor.cores",
        "spark.executor.instances",
        "spark.sql.shuffle.partitions",
    ] {
        if let Some(v) = app.spark_properties.get(key) {
            conf.push(format!("{key}={}", v.trim()));
        }
    }
    Sizing {
        heap,
        overhead,
        peak_heap,
        peak_unified,
        headroom: 1.0 - peak_heap as f64 / heap.max(1) as f64,
        executor_hours,
        gb_hours_saved: saved_bytes as f64 / (1u64 << 30) as f64 * executor_hours,
        conf,
    }
}
