//! The memory each executor and the driver used at its peak, against what it was given.
//!
//! The peaks are Spark's own (`ExecutorMetricType`): what each task end's `Task Executor
//! Metrics` carried and, with `spark.eventLog.logStageExecutorMetrics=true`, each stage's
//! `SparkListenerStageExecutorMetrics`, raised metric by metric as the History Server keeps its
//! `peakMemoryMetrics` (the conformance tests hold the model to it). A metric Spark did not
//! measure is absent, and [`MemoryFigures::missing`] says why.

use sparkdiag_model::{Application, ExecutorMetrics};

pub use sparkdiag_contract::memory::{ExecutorMemory, MemoryFigures};

fn some(v: i64) -> Option<i64> {
    (v > 0).then_some(v)
}

fn executor_memory(id: &str, heap_limit: u64, m: &ExecutorMetrics) -> ExecutorMemory {
    ExecutorMemory {
        executor_id: id.to_string(),
        heap_limit_bytes: heap_limit,
        jvm_heap_bytes: some(m.jvm_heap_memory),
        jvm_off_heap_bytes: some(m.jvm_off_heap_memory),
        on_heap_execution_bytes: some(m.on_heap_execution_memory),
        on_heap_storage_bytes: some(m.on_heap_storage_memory),
        off_heap_execution_bytes: some(m.off_heap_execution_memory),
        off_heap_storage_bytes: some(m.off_heap_storage_memory),
        direct_pool_bytes: some(m.direct_pool_memory),
        mapped_pool_bytes: some(m.mapped_pool_memory),
        process_tree_jvm_rss_bytes: some(m.process_tree_jvm_rss_memory),
        process_tree_python_rss_bytes: some(m.process_tree_python_rss_memory),
        process_tree_other_rss_bytes: some(m.process_tree_other_rss_memory),
        minor_gc_count: some(m.minor_gc_count),
        minor_gc_time_ms: some(m.minor_gc_time),
        major_gc_count: some(m.major_gc_count),
        major_gc_time_ms: some(m.major_gc_time),
        heap_used_share: some(m.jvm_heap_memory).map(|h| h as f64 / heap_limit.max(1) as f64),
    }
}

/// The memory figures of `app`: `None` when no executor (nor the driver) has a single memory
/// peak in the log.
pub fn of(app: &Application) -> Option<MemoryFigures> {
    let limits = crate::memory_limits::of(app);
    let local = app.executors.iter().all(|e| e.id == "driver");
    let mut executors: Vec<ExecutorMemory> = app
        .executors
        .iter()
        .filter_map(|e| {
            let peaks = e.peak_metrics?;
            let limit = if e.id == "driver" {
                limits.driver_memory_bytes
            } else {
                limits.executor_memory_bytes
            };
            let row = executor_memory(&e.id, limit, &peaks);
            (row.jvm_heap_bytes.is_some() || row.jvm_off_heap_bytes.is_some()).then_some(row)
        })
        .collect();
    if executors.is_empty() {
        return None;
    }
    // The driver first, then executors by number.
    executors.sort_by_key(|e| {
        (
            e.executor_id != "driver",
            e.executor_id.parse::<u64>().ok(),
            e.executor_id.clone(),
        )
    });
    let mut peak: Option<ExecutorMetrics> = None;
    for e in app.executors.iter().filter(|e| e.id != "driver" || local) {
        if let Some(p) = &e.peak_metrics {
            peak.get_or_insert_with(Default::default).raise_to(p);
        }
    }
    let executor_peak = peak.map(|p| {
        let limit = if local {
            limits.driver_memory_bytes
        } else {
            limits.executor_memory_bytes
        };
        executor_memory("all executors", limit, &p)
    });
    let prop = |k: &str| {
        app.spark_properties
            .get(k)
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
    };
    let mut missing = Vec::new();
    if !prop("spark.executor.processTreeMetrics.enabled") {
        missing.push("process-tree RSS (JVM, Python and other processes): spark.executor.processTreeMetrics.enabled is off, so the log cannot show memory outside the heap that the container counts".to_string());
    } else if executors
        .iter()
        .all(|e| e.process_tree_jvm_rss_bytes.is_none())
    {
        missing.push(
            "process-tree RSS: enabled, but measured only on Linux with /proc; none is in the log"
                .to_string(),
        );
    }
    let silent: Vec<&str> = app
        .executors
        .iter()
        .filter(|e| e.id != "driver" && e.total_tasks + e.completed_tasks > 0)
        .filter(|e| e.peak_metrics.is_none_or(|p| p.jvm_heap_memory <= 0))
        .map(|e| e.id.as_str())
        .collect();
    if !silent.is_empty() {
        missing.push(format!(
            "peaks of executor(s) {}: they ran tasks, but Spark samples the metrics at heartbeats (spark.executor.metrics.pollingInterval=0), and none fell within their tasks",
            silent.join(", ")
        ));
    }
    if !prop("spark.eventLog.logStageExecutorMetrics") {
        missing.push(if local {
            "per-stage peaks: spark.eventLog.logStageExecutorMetrics is off, so the peaks are those the task ends carried".to_string()
        } else {
            "per-stage peaks and the driver's own: spark.eventLog.logStageExecutorMetrics is off, so the peaks are those the task ends carried".to_string()
        });
    }
    Some(MemoryFigures {
        limits,
        executors,
        executor_peak,
        missing,
        local_mode: local,
    })
}

#[cfg(test)]
mod real_logs {
    use super::of;
    use crate::testing::apps;

    #[test]
    fn peaks_sit_under_the_heap_and_process_tree_figures_appear_only_when_enabled() {
        let app = &apps("logs/memory/overprovisioned")[0];
        let m = of(app).expect("peaks");
        assert_eq!(m.limits.executor_memory_bytes, 4 << 30);
        let executors: Vec<_> = m
            .executors
            .iter()
            .filter(|e| e.executor_id != "driver")
            .collect();
        assert!(!executors.is_empty(), "{m:#?}");
        for e in &executors {
            let share = e.heap_used_share.unwrap();
            assert!(share > 0.0 && share < 0.5, "{e:#?}");
            assert!(e.process_tree_jvm_rss_bytes.is_some(), "{e:#?}");
        }
        // An executor that ran tasks is either shown or named as having no peaks, never dropped.
        for e in app
            .executors
            .iter()
            .filter(|e| e.id != "driver" && e.total_tasks > 0)
        {
            assert!(
                executors.iter().any(|x| x.executor_id == e.id)
                    || m.missing
                        .iter()
                        .any(|s| s.contains("heartbeats") && s.contains(&e.id)),
                "{m:#?}"
            );
        }
        // logStageExecutorMetrics was on: the driver's peaks are there.
        assert!(
            m.executors.iter().any(|e| e.executor_id == "driver"),
            "{m:#?}"
        );
        assert!(
            m.missing.iter().all(
                |s| !s.contains("processTreeMetrics") && !s.contains("logStageExecutorMetrics")
            ),
            "{:?}",
            m.missing
        );

        let app = &apps("logs/memory/heap-oom-wide-healthy")[0];
        let m = of(app).expect("peaks");
        assert!(
            m.executors
                .iter()
                .all(|e| e.process_tree_jvm_rss_bytes.is_none())
        );
        assert!(
            m.missing.iter().any(|s| s.contains("processTreeMetrics")),
            "{:?}",
            m.missing
        );
        assert!(
            m.missing
                .iter()
                .any(|s| s.contains("logStageExecutorMetrics"))
        );
    }
}
