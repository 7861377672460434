//! FA003 lost-executors: executors that died while the application ran.

use std::collections::BTreeMap;

use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_model::{Removal, exit_code_of, explain_exit_code_on};

declare_rule! {
    /// ## What it does
    /// Classifies every executor removal — released (dynamic allocation giving back an idle
    /// executor, "exited from explicit termination request"), decommissioned, killed by the
    /// cluster manager, lost (a crash, an exit code, a lost heartbeat), or with the application's
    /// end — and lists those that cost work: lost executors, and executors the cluster manager
    /// killed while tasks ran on them. Exit codes are explained (137: the OOM killer, 143:
    /// SIGTERM).
    ///
    /// ## Why is this bad?
    /// A lost executor takes its running tasks and its shuffle output with it: its tasks fail,
    /// and later stages that need its shuffle files hit `FetchFailed` and re-run whole map stages.
    ///
    /// ## How to fix it
    /// Read the removal reason:
    /// - "exceeding memory limits", exit code 137 or 143: raise `spark.executor.memoryOverhead`
    ///   (off-heap, Python workers) or `spark.executor.memory`; smaller partitions.
    /// - heartbeat timeouts: long GC pauses (GC001) or an overloaded node; raise
    ///   `spark.network.timeout` only as a last resort.
    /// - preemption or spot loss: enable decommissioning (`spark.decommission.enabled=true`) and
    ///   the external shuffle service.
    ///
    /// ## Threshold and its source
    /// Any executor lost or killed by the cluster manager that cost work: tasks failed on it, or
    /// later tasks hit `FetchFailed` (its shuffle output was gone). From Spark's `ExecutorRemoved`
    /// reason and the task end reasons. High when tasks failed on them,
    /// medium otherwise. What the run lost is the what-if's replay of the run without the failed
    /// attempts on those executors (`remove_failed_attempts`), shown as lost, not as a saving.
    pub static LOST_EXECUTORS = {
        code: "FA003",
        name: "lost-executors",
        category: Failure,
        claims: Outcome,
        needs: [Executors],
        summary: "Executors died while the application ran, and why",
        thresholds: &[] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    let mut failed_on = vec![0usize; app.executors.len()];
    let mut failed_task_ms = vec![0i64; app.executors.len()];
    for failed in ctx.stages.iter().flat_map(|s| &s.facts.failed_by_executor) {
        failed_on[failed.executor as usize] += failed.tasks;
        failed_task_ms[failed.executor as usize] += failed.time_ms;
    }
    // Every removal by kind, so the finding can say what the others were.
    let mut kinds: BTreeMap<&'static str, usize> = BTreeMap::new();
    let mut lost = Vec::new();
    let mut lost_ids = Vec::new();
    let mut windows = Vec::new();
    let mut wasted_ms = 0i64;
    for (i, e) in app.executors.iter().enumerate() {
        let removal = app.removal(e);
        if removal == Removal::NotRemoved {
            continue;
        }
        *kinds.entry(removal.name()).or_default() += 1;
        // Released and decommissioned executors, and those leaving with the application, cost
        // no work; a lost or killed one only when tasks failed on it, or when later tasks could
        // not fetch the shuffle output it took with it.
        let removed_at = e.removed_ms.unwrap_or(i64::MAX);
        let costly = matches!(removal, Removal::Lost | Removal::KilledByClusterManager)
            && (failed_on[i] > 0
                || app
                    .task_failures
                    .iter()
                    .any(|f| f.reason == "FetchFailed" && f.finish_ms >= removed_at));
        if !costly {
            continue;
        }
        let reason = e.removed_reason.clone().unwrap_or_default();
        let exit_code = exit_code_of(&reason);
        let removed = e.removed_ms.unwrap_or_default();
        lost.push(serde_json::json!({"executor_id": e.id, "host": e.host, "removed_ms": removed,
            "kind": removal.name(), "reason": reason, "exit_code": exit_code,
            "exit_code_means": exit_code.and_then(|c| explain_exit_code_on(c, app.cluster_manager())), "failed_tasks": failed_on[i]}));
        lost_ids.push(e.id.clone());
        wasted_ms += failed_task_ms[i];
        if let Some(added) = e.added_ms.or(app.start_ms) {
            windows.push((added, removed));
        }
    }
    if lost.is_empty() {
        return Vec::new();
    }
    let first = &lost[0];
    let reason_line = first["reason"]
        .as_str()
        .unwrap_or_default()
        .lines()
        .next()
        .unwrap_or_default()
        .to_string();
    // What ran out: the lost executors' own task errors name the pool (an OutOfMemoryError:
    // Metaspace), which exit code 52 alone does not; else the removal reason's words.
    let memory = app
        .task_failures
        .iter()
        .filter(|f| f.reason != "ExecutorLostFailure")
        .filter(|f| lost_ids.contains(&app.executors[f.executor as usize].id))
        .find_map(|f| crate::memory_region::of_task_failure(app, f))
        .or_else(|| crate::memory_region::of_message(app, &reason_line, String::new(), None));
    let means = match (&memory, first["exit_code"].as_i64()) {
        (Some(m), Some(52)) if m.task_id.is_some() => format!(
            " (Spark's OOM exit code: its tasks failed with {})",
            m.evidence
        ),
        _ => first["exit_code_means"]
            .as_str()
            .map(|m| format!(" ({m})"))
            .unwrap_or_default(),
    };
    let others: Vec<String> = kinds
        .iter()
        .filter(|(k, _)| **k != Removal::Lost.name())
        .map(|(k, n)| format!("{n} {k}"))
        .collect();
    let failed_tasks: usize = lost
        .iter()
        .map(|l| l["failed_tasks"].as_u64().unwrap_or(0) as usize)
        .sum();
    let title = format!(
        "{} executor(s) died while the application ran, failing {} task(s); executor {} on {}: {}{}{}",
        lost.len(),
        failed_tasks,
        first["executor_id"].as_str().unwrap_or_default(),
        first["host"].as_str().unwrap_or_default(),
        reason_line,
        means,
        if others.is_empty() {
            String::new()
        } else {
            format!(" (other removals, no work lost: {})", others.join(", "))
        }
    );
    let severity = if failed_tasks > 0 {
        Severity::High
    } else {
        Severity::Medium
    };
    let mut finding = Finding::new(&LOST_EXECUTORS, severity, title, wasted_ms / ctx.cores.max(1))
        .proposes(
            crate::Change::RemoveFailedAttempts {
                executors: lost_ids.clone(),
            },
            "the failed attempts on the lost executors' task time spread over the cores",
        )
        .executors(lost_ids)
        .evidence("executors", serde_json::Value::Array(lost))
        .evidence("removals_by_kind", serde_json::to_value(&kinds).unwrap_or_default())
        .evidence("dynamic_allocation", app.dynamic_allocation())
        .evidence("failed_task_ms", wasted_ms)
        .evidence(
            "memory_region",
            memory
                .as_ref()
                .map(|m| serde_json::to_value(m.region).unwrap_or_default()),
        )
        .recommend(match &memory {
            // The memory that ran out is the reason: its fix, not the list of other reasons.
            Some(m) => format!("{}To lose less when one goes: {}.", memory_lead(ctx, m), super::common::keep_shuffle_output(ctx)),
            None if matches!(app.cluster_manager(), Some("yarn" | "kubernetes") | None) => format!("Read the removal reason: exit code 137 or \"exceeding memory limits\" needs more spark.executor.memoryOverhead (or memory) and smaller partitions; 143 is a SIGTERM from the cluster manager (preemption or a node drain); heartbeat timeouts point to GC pauses (GC001) or overloaded nodes. To lose less when one goes: {}.", super::common::keep_shuffle_output(ctx)),
            // Standalone and local-cluster put no limit on an executor's memory: a 137 is the
            // kernel (the machine out of memory) or a person, a 143 a stop.
            None => format!("Read the removal reason: exit code 137 here is the kernel's OOM killer (the machine ran out of memory: fewer or smaller executors per machine, less spark.executor.memory plus overhead than the machine has) or a kill -9; 143 a stop; heartbeat timeouts point to GC pauses (GC001) or overloaded machines. To lose less when one goes: {}.", super::common::keep_shuffle_output(ctx)),
        });
    for (s, e) in windows {
        finding = finding.during(s, e);
    }
    // With no failed job there is no FA001 to carry the memory's settings: this finding does.
    if let (Some(m), false) = (&memory, super::failed_job::tells_a_failed_job(ctx)) {
        let limits = crate::memory_limits::of(app);
        let conf = m.settings(&limits);
        finding
            .recommendation
            .push_str(&super::failed_job::paste(&conf));
        finding = finding.settings(conf.into_iter().map(|(k, v)| format!("{k}={v}")));
    }
    vec![finding]
}

/// "The executor JVM heap ran out (...): FA001 gives the fix. " when a job failed of it, else
/// the fix itself: no finding of a failed job exists to point to.
pub(crate) fn memory_lead(ctx: &Context, m: &crate::memory_region::MemoryFailure) -> String {
    if super::failed_job::tells_a_failed_job(ctx) {
        format!(
            "The {} ran out ({}); the failed job's finding (FA001) gives the fix for it. ",
            m.name(),
            m.evidence
        )
    } else {
        let limits = crate::memory_limits::of(ctx.app);
        format!(
            "The {} ran out ({}) and the retries got through. {} ",
            m.name(),
            m.evidence,
            m.advice(ctx, &limits)
        )
    }
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::LOST_EXECUTORS;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_run_that_lost_an_executor() {
        assert_fires(
            &on_log(&LOST_EXECUTORS, "patterns/executor-lost", &[]),
            LOST_EXECUTORS.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&LOST_EXECUTORS, "patterns/healthy", &[]));
    }

    /// Executors capped at 56 MiB of metaspace (`-XX:MaxMetaspaceSize`) died of it with exit
    /// code 52, which alone reads as the heap: their tasks' errors name the metaspace, and the
    /// fix is that cap, not the heap or the overhead. No job failed (the retries got through),
    /// so the finding gives the fix itself rather than pointing to an FA001 that is not there.
    #[test]
    fn executors_dead_of_metaspace_are_told_about_the_metaspace_cap() {
        let found = on_log(&LOST_EXECUTORS, "memory/metaspace", &[]);
        assert_fires(&found, LOST_EXECUTORS.code);
        let f = &found[0];
        assert!(f.title.contains("code 52"), "{}", f.title);
        assert!(
            f.title.contains("OutOfMemoryError: Metaspace"),
            "{}",
            f.title
        );
        assert!(!f.title.contains("ran out of heap"), "{}", f.title);
        assert_eq!(f.evidence["memory_region"], "container_overhead");
        let advice = &f.recommendation;
        assert!(advice.contains("-XX:MaxMetaspaceSize=56m"), "{advice}");
        assert!(advice.contains("metaspace"), "{advice}");
        assert!(!advice.contains("FA001"), "{advice}");
        assert!(!advice.contains("spark.executor.memory="), "{advice}");
        // Spark's own options are not pasted back: only the user's cap, doubled.
        assert_eq!(
            f.evidence["conf"],
            serde_json::json!(["spark.executor.extraJavaOptions=-XX:MaxMetaspaceSize=112m"])
        );
        assert!(
            advice.ends_with("First change to try: --conf spark.executor.extraJavaOptions=-XX:MaxMetaspaceSize=112m"),
            "{advice}"
        );
    }

    /// The same script rerun with exactly that setting: no executor lost, no task failed, and
    /// the run took half the time (1m 30s before, 44 s after).
    #[test]
    fn the_metaspace_rerun_with_the_recommended_cap_loses_no_executor() {
        let fixed = &crate::rules::testing::apps("logs/memory/metaspace-fixed")[0];
        let options = &fixed.spark_properties["spark.executor.extraJavaOptions"];
        assert!(options.ends_with(" -XX:MaxMetaspaceSize=112m"), "{options}");
        assert!(fixed.task_failures.is_empty(), "{:?}", fixed.task_failures);
        assert!(
            fixed
                .jobs
                .iter()
                .all(|j| j.status == sparkdiag_model::JobStatus::Succeeded)
        );
        let before = &crate::rules::testing::apps("logs/memory/metaspace")[0];
        assert!(fixed.duration_ms().unwrap() * 3 < before.duration_ms().unwrap() * 2);
        assert_quiet(&on_log(&LOST_EXECUTORS, "memory/metaspace-fixed", &[]));
    }
}
