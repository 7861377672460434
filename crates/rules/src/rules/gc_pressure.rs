//! GC001 gc-pressure: executors whose JVMs spend a large share of task time collecting garbage.

use super::common::{duration, ratio};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const WARN_SHARE: Threshold = threshold(
    "warn_share",
    0.10,
    "share",
    "GC time over task run time worth a finding",
    "the Spark UI (GC time red above 10 %)",
);

pub const HIGH_SHARE: Threshold = threshold(
    "high_share",
    0.20,
    "share",
    "GC share that is high severity",
    "Dr. Elephant's critical tier",
);

pub const HEALTHY_SHARE: Threshold = threshold(
    "healthy_share",
    0.05,
    "share",
    "GC share considered normal: the rest is recoverable",
    "sparkdiag's own",
);

pub const MIN_RUN_S: Threshold = threshold(
    "min_run_s",
    10.0,
    "s",
    "task run time of the GC-heavy executors together before their share means anything",
    "SparkForensics' guard",
);

pub const MIN_EXECUTOR_RUN_S: Threshold = threshold(
    "min_executor_run_s",
    1.0,
    "s",
    "task run time one executor needs to be counted at all",
    "sparkdiag's own guard",
);

declare_rule! {
    /// ## What it does
    /// Compares each executor's JVM garbage-collection time with the time its tasks ran, and
    /// flags executors where GC takes a large share.
    ///
    /// ## Why is this bad?
    /// While the JVM collects, tasks stall. A fifth of executor time in GC means a fifth of the
    /// cluster paid for nothing, and heavy GC is often the step before executors are lost to
    /// out-of-memory errors or missed heartbeats.
    ///
    /// ## How to fix it
    /// - Give each task more heap: raise `spark.executor.memory`, or lower `spark.executor.cores`
    ///   (the heap is shared by the executor's concurrent tasks).
    /// - Create less garbage: prefer DataFrame operations over RDD lambdas and Python UDFs,
    ///   avoid `collect_list` of wide rows, cache serialized (`MEMORY_AND_DISK_SER`) or not at all.
    /// - Use smaller partitions so each task holds less at once (see PA002, SP001).
    /// - On large heaps, G1 with `-XX:InitiatingHeapOccupancyPercent=35` in
    ///   `spark.executor.extraJavaOptions`.
    ///
    /// ## Threshold and its source
    /// GC over `warn_share` = 10 % of task run time (the Spark UI shows it red above 10 %), and
        /// high over `high_share` = 20 % (Dr. Elephant's critical tier), when those executors' tasks
    /// ran at least `min_run_s` = 10 s together (SparkForensics' guard), each at least
    /// `min_executor_run_s` = 1 s. The saving is the what-if's replay of the run with each task
    /// on those executors spending no more than a healthy `healthy_share` = 5 % of its run time
    /// in GC (`reduce_gc`): more heap per task removes the excess collection, not all of it.
    pub static GC_PRESSURE = {
        code: "GC001",
        name: "gc-pressure",
        category: Gc,
        claims: Saving,
        needs: [TaskMetrics],
        summary: "Executors spend a large share of their task time in JVM garbage collection",
        thresholds: &[
            WARN_SHARE,
            HIGH_SHARE,
            HEALTHY_SHARE,
                        MIN_RUN_S,
            MIN_EXECUTOR_RUN_S,
        ] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut heavy: Vec<(&sparkdiag_model::Executor, f64)> = ctx
        .app
        .executors
        .iter()
        .filter(|e| e.run_time_ms as f64 >= t.get(&MIN_EXECUTOR_RUN_S) * 1000.0)
        .map(|e| (e, ratio(e.jvm_gc_time_ms as f64, e.run_time_ms as f64)))
        .filter(|(_, share)| *share >= t.get(&WARN_SHARE))
        .collect();
    let run_ms: i64 = heavy.iter().map(|(e, _)| e.run_time_ms).sum();
    if heavy.is_empty() || (run_ms as f64) < t.get(&MIN_RUN_S) * 1000.0 {
        return Vec::new();
    }
    heavy.sort_by(|a, b| b.1.total_cmp(&a.1));
    let healthy = t.get(&HEALTHY_SHARE);
    let excess: i64 = heavy
        .iter()
        .map(|(e, _)| (e.jvm_gc_time_ms as f64 - healthy * e.run_time_ms as f64) as i64)
        .sum();
    let impact = excess / ctx.cores;
    let (worst, worst_share) = heavy[0];
    let gc_total: i64 = heavy.iter().map(|(e, _)| e.jvm_gc_time_ms).sum();
    let mut severity = Severity::from_share(impact, ctx.app_ms);
    if worst_share >= t.get(&HIGH_SHARE) {
        severity = severity.at_least(Severity::High);
    }
    // The stage where GC weighed most, to say where the garbage is made.
    let worst_stage = ctx
        .app
        .stages
        .iter()
        .filter(|s| s.totals.executor_run_time >= 1000)
        .max_by(|a, b| {
            ratio(
                a.totals.jvm_gc_time as f64,
                a.totals.executor_run_time as f64,
            )
            .total_cmp(&ratio(
                b.totals.jvm_gc_time as f64,
                b.totals.executor_run_time as f64,
            ))
        });
    let title = format!(
        "{} executor(s) spent {:.0}% or more of task time in GC (worst: executor {} on {}, {:.0}%, {} of GC)",
        heavy.len(),
        100.0 * heavy.last().map_or(0.0, |h| h.1),
        worst.id,
        worst.host,
        100.0 * worst_share,
        duration(worst.jvm_gc_time_ms)
    );
    let mut finding = Finding::new(&GC_PRESSURE, severity, title, impact)
        .proposes(
            crate::Change::ReduceGc {
                executors: heavy.iter().map(|(e, _)| e.id.clone()).collect(),
                healthy_permille: (healthy * 1000.0).round() as i64,
            },
            "the GC time above the healthy share, spread over the cores",
        )
        .executors(heavy.iter().map(|(e, _)| e.id.clone()))
        .evidence("gc_time_ms", gc_total)
        .evidence("worst_executor", worst.id.clone())
        .evidence("worst_gc_share", (worst_share * 1000.0).round() / 1000.0)
        .evidence(
            "executors",
            serde_json::Value::Array(
                heavy
                    .iter()
                    .take(10)
                    .map(|(e, share)| {
                        serde_json::json!({"executor_id": e.id, "host": e.host, "gc_ms": e.jvm_gc_time_ms,
                            "run_ms": e.run_time_ms, "gc_share": (share * 1000.0).round() / 1000.0,
                            "peak_heap_bytes": e.peak_metrics.map(|p| p.jvm_heap_memory)})
                    })
                    .collect(),
            ),
        )
        .recommend(if ctx.shapes.app.single_core() {
            // One task at a time already has the whole heap: more of it is not the fix.
            "The application had one core, so each task already had the whole heap to itself: create less garbage (DataFrame operations instead of RDD lambdas and Python UDFs, no collect_list of wide rows, cache serialized or not at all) and use smaller partitions."
        } else {
            "Give each task more heap (raise spark.executor.memory or lower spark.executor.cores), create less garbage (DataFrame operations instead of RDD lambdas and Python UDFs, no collect_list of wide rows, cache serialized or not at all), and use smaller partitions."
        });
    if let Some(stage) = worst_stage {
        finding = finding
            .stages([stage.stage_id])
            .evidence("worst_stage", stage.stage_id)
            .evidence(
                "worst_stage_gc_share",
                (ratio(
                    stage.totals.jvm_gc_time as f64,
                    stage.totals.executor_run_time as f64,
                ) * 1000.0)
                    .round()
                    / 1000.0,
            );
    }
    vec![finding]
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::GC_PRESSURE;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_gc_bound_run() {
        assert_fires(
            &on_log(&GC_PRESSURE, "patterns/gc-pressure", &[]),
            GC_PRESSURE.code,
        );
    }

    #[test]
    fn is_quiet_on_the_same_job_with_enough_memory() {
        assert_quiet(&on_log(&GC_PRESSURE, "patterns/gc-healthy", &[]));
    }
}
