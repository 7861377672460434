//! GC002 heap-overprovisioned: executors asked for far more heap than they ever used.

use sparkdiag_facts::settings::parse_memory;

use sparkdiag_facts::memory_sizing::{MARGIN, Sizing, smaller_executor};

use super::common::{bytes, ratio};
use crate::memory_limits::setting;
use crate::{Change, Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

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
    /// Lower `spark.executor.memory` to the finding's suggestion: 1.5x the peak heap, enough for
    /// 1.5x the unified pool's peak, never under Spark's 450 MiB floor, in 256 MiB steps; the
    /// finding gives the headroom, the GB-hours saved and a pasteable `--conf` list, and what
    /// the change means on Databricks (a node type), Kubernetes (the pod) or YARN (containers).
    /// Or raise `spark.executor.cores` to use the heap with more tasks.
    ///
    /// ## Threshold and its source
    /// GC under `max_gc_share` = 5 % of task time (Dr. Elephant's "low GC means over-provisioned"
    /// tier) and peak heap under `max_heap_share` = 50 % of `spark.executor.memory` (DataFlint
    /// warns below 70 %), on executors whose tasks ran at least `min_run_s` = 60 s.
    pub static HEAP_OVERPROVISIONED = {
        code: "GC002",
        name: "heap-overprovisioned",
        category: Gc,
        claims: Saving,
        needs: [ExecutorMetrics],
        summary: "Executors used far less heap than they reserved (information)",
        thresholds: &[
            MAX_GC_SHARE,
            MAX_HEAP_SHARE,
            MIN_RUN_S,
        ] as &[Threshold],
        check: check,
    };
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
    // A run that ran out of memory anywhere is no place to suggest less of it.
    if ctx
        .app
        .task_failures
        .iter()
        .any(|f| crate::memory_region::of_task_failure(ctx.app, f).is_some())
    {
        return Vec::new();
    }
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
    let sizing = smaller_executor(ctx.app, peak as u64);
    let title = format!(
        "{} executor(s) peaked at {} of heap or less out of spark.executor.memory={}: {} would do, saving {:.2} GB-hours",
        idle.len(),
        bytes(peak),
        bytes(memory as i64),
        setting(sizing.heap),
        sizing.gb_hours_saved
    );
    vec![
        Finding::new(&HEAP_OVERPROVISIONED, Severity::Info, title, 0)
            .executors(idle.iter().map(|(e, _)| e.id.clone()))
            .evidence("executor_memory_bytes", memory)
            .evidence("peak_heap_bytes", peak)
            .evidence("suggested_executor_memory_bytes", sizing.heap)
            .evidence("suggested_executor_memory_overhead_bytes", sizing.overhead)
            .evidence("peak_unified_memory_bytes", sizing.peak_unified)
            .evidence("headroom_share", sizing.headroom)
            .evidence("executor_hours", sizing.executor_hours)
            .evidence("gb_hours_saved", sizing.gb_hours_saved)
            .settings(sizing.conf.clone())
            .proposes(
                Change::ShrinkHeap {
                    executors: idle.iter().map(|(e, _)| e.id.clone()).collect(),
                    from_bytes: memory,
                    peak_bytes: peak as u64,
                    to_bytes: sizing.heap,
                },
                "memory, not time: the heap each named executor reserves, cut to its measured peak with a margin",
            )
            .recommend(advice(&sizing, ctx)),
    ]
}

/// GC002's advice for `sizing`, fitted to the platform.
fn advice(sizing: &Sizing, ctx: &Context) -> String {
    let platform = match (ctx.app.platform(), ctx.app.cluster_manager()) {
        (sparkdiag_model::Platform::Databricks, _) => format!(
            " On Databricks memory comes with the node type: pick a node with less memory per core (a general-purpose or compute-optimized type instead of a memory-optimized one), about {} per executor core.",
            setting(
                ((sizing.heap + sizing.overhead) as f64
                    / crate::memory_limits::of(ctx.app).executor_cores.max(1) as f64)
                    as u64
            )
        ),
        (_, Some("kubernetes")) => format!(
            " On Kubernetes the executor pod's memory request and limit become {} (heap plus overhead).",
            setting(sizing.heap + sizing.overhead)
        ),
        (_, Some("yarn")) => format!(
            " On YARN each container shrinks to {} (heap plus overhead, rounded up to yarn.scheduler.minimum-allocation-mb).",
            setting(sizing.heap + sizing.overhead)
        ),
        _ => String::new(),
    };
    format!(
        "Lower the executor memory to {} (peak heap {} plus a {MARGIN}x margin, {:.0}% of it left free; never under Spark's 450 MiB floor, and room for the unified pool's peak of {}): {:.2} GB-hours less over {:.2} executor-hours.{platform} The list keeps today's cores, executors and shuffle partitions, so that only the memory changes; where the what-if gives one submission for the whole run, that one holds this memory with the other findings' settings and the cores it replayed: --conf {}",
        setting(sizing.heap),
        bytes(sizing.peak_heap as i64),
        sizing.headroom * 100.0,
        bytes(sizing.peak_unified as i64),
        sizing.gb_hours_saved,
        sizing.executor_hours,
        sizing.conf.join(" --conf ")
    )
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
    fn suggests_a_smaller_heap_for_4g_executors_doing_light_work() {
        let found = on_log(&HEAP_OVERPROVISIONED, "memory/overprovisioned", &[]);
        assert_fires(&found, HEAP_OVERPROVISIONED.code);
        let f = &found[0];
        let suggested = f.evidence["suggested_executor_memory_bytes"]
            .as_u64()
            .unwrap();
        let peak = f.evidence["peak_heap_bytes"].as_u64().unwrap();
        // Never under Spark's floor, always over the peak with the margin, far under 4 GiB.
        assert!(
            suggested >= 450 << 20 && suggested as f64 >= 1.5 * peak as f64,
            "{f:#?}"
        );
        assert!(suggested <= 1 << 30, "{f:#?}");
        assert!(f.evidence["gb_hours_saved"].as_f64().unwrap() > 0.0);
        assert!(
            f.recommendation.contains(&format!(
                "--conf spark.executor.memory={}",
                crate::memory_limits::setting(suggested)
            )),
            "{}",
            f.recommendation
        );
    }

    /// The advice, proved: `overprovisioned-fixed` is the same script rerun with exactly the
    /// heap GC002 suggested. It succeeds with containers a fifth the size, a smaller process
    /// tree, and no more CPU (CPU time, not wall time: the machine's load moved between runs).
    #[test]
    fn the_rerun_with_the_suggested_heap_uses_less_memory_and_no_more_cpu() {
        let found = on_log(&HEAP_OVERPROVISIONED, "memory/overprovisioned", &[]);
        let suggested = found[0].evidence["suggested_executor_memory_bytes"]
            .as_u64()
            .unwrap();
        let before = &crate::rules::testing::apps("logs/memory/overprovisioned")[0];
        let after = &crate::rules::testing::apps("logs/memory/overprovisioned-fixed")[0];
        assert_eq!(
            super::parse_memory(&after.spark_properties["spark.executor.memory"]),
            Some(suggested)
        );
        assert_eq!(after.status(), sparkdiag_model::AppStatus::Succeeded);
        assert!(after.task_failures.is_empty(), "{:?}", after.task_failures);
        assert_eq!(after.tasks.len(), before.tasks.len(), "the same work");
        assert!(
            crate::memory_limits::of(after).container_bytes() * 4
                < crate::memory_limits::of(before).container_bytes()
        );
        let peak = |app: &sparkdiag_model::Application,
                    f: fn(&sparkdiag_model::ExecutorMetrics) -> i64| {
            app.executors
                .iter()
                .filter(|e| e.id != "driver")
                .filter_map(|e| e.peak_metrics.as_ref().map(f))
                .max()
                .unwrap_or(0)
        };
        let rss = |m: &sparkdiag_model::ExecutorMetrics| m.process_tree_jvm_rss_memory;
        assert!(
            peak(after, rss) < peak(before, rss),
            "a smaller process tree"
        );
        let heap = |m: &sparkdiag_model::ExecutorMetrics| m.jvm_heap_memory;
        assert!(
            (peak(after, heap) as u64) < suggested,
            "the peak fits the new heap"
        );
        let cpu = |app: &sparkdiag_model::Application| -> u64 {
            app.stages
                .iter()
                .map(|s| s.totals.executor_cpu_time.max(0) as u64)
                .sum()
        };
        assert!(
            cpu(after) as f64 <= 1.25 * cpu(before) as f64,
            "CPU {} ns after, {} ns before",
            cpu(after),
            cpu(before)
        );
        // And the rerun is no longer over-provisioned.
        assert_quiet(&on_log(
            &HEAP_OVERPROVISIONED,
            "memory/overprovisioned-fixed",
            &[],
        ));
    }

    #[test]
    fn is_quiet_where_executors_ran_out_of_heap() {
        assert_quiet(&on_log(
            &HEAP_OVERPROVISIONED,
            "memory/heap-oom-hot-key",
            &["GC002.min_run_s=1"],
        ));
    }

    #[test]
    fn is_quiet_on_the_same_log_at_its_defaults() {
        assert_quiet(&on_log(&HEAP_OVERPROVISIONED, "patterns/gc-healthy", &[]));
    }
}
