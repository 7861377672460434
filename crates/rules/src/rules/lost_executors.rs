//! FA003 lost-executors: executors that died while the application ran.

use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_model::TaskOutcome;

declare_rule! {
    /// ## What it does
    /// Lists executors removed while the application ran for a reason other than a normal
    /// release (dynamic allocation giving back an idle executor), with the removal reason
    /// Spark recorded, and counts the tasks that failed on them.
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
    /// Any executor removed with failed tasks on it, or whose removal reason names a failure
    /// (lost, killed, exit code, heartbeat, memory): Spark's `ExecutorRemoved` reason and the
    /// `ExecutorLostFailure` task end reason.
    pub static LOST_EXECUTORS = {
        code: "FA003",
        name: "lost-executors",
        category: Failure,
        summary: "Executors died while the application ran, and why",
        thresholds: &[] as &[Threshold],
        check: check,
    };
}

const FAILURE_WORDS: &[&str] = &[
    "lost",
    "exit",
    "heartbeat",
    "memory",
    "oom",
    "killed by",
    "exceed",
    "preempt",
    "crash",
    "failed",
];

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    let end = app.end_ms;
    let mut lost = Vec::new();
    for (i, e) in app.executors.iter().enumerate() {
        let Some(removed) = e.removed_ms else {
            continue;
        };
        // Executors released together with the application's end are not lost.
        if end.is_some_and(|end| removed >= end - 1000) {
            continue;
        }
        let reason = e.removed_reason.clone().unwrap_or_default();
        let failed_here = app
            .tasks
            .iter()
            .filter(|t| t.executor as usize == i && t.outcome == TaskOutcome::Failed)
            .count();
        let lower = reason.to_ascii_lowercase();
        let looks_failed =
            FAILURE_WORDS.iter().any(|w| lower.contains(w)) && !lower.contains("killed by driver");
        if failed_here == 0 && !looks_failed {
            continue;
        }
        lost.push(
            serde_json::json!({"executor_id": e.id, "host": e.host, "removed_ms": removed,
            "reason": reason, "failed_tasks": failed_here}),
        );
    }
    if lost.is_empty() {
        return Vec::new();
    }
    let first = &lost[0];
    let title = format!(
        "{} executor(s) lost while the application ran; executor {} on {}: {}",
        lost.len(),
        first["executor_id"].as_str().unwrap_or_default(),
        first["host"].as_str().unwrap_or_default(),
        first["reason"]
            .as_str()
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
    );
    let ids: Vec<String> = lost
        .iter()
        .map(|l| l["executor_id"].as_str().unwrap_or_default().to_string())
        .collect();
    vec![
        Finding::new(&LOST_EXECUTORS, Severity::High, title, 0)
            .executors(ids)
            .evidence("executors", serde_json::Value::Array(lost))
            .recommend("Read the removal reason: memory limits need more spark.executor.memoryOverhead or memory and smaller partitions; heartbeat timeouts point to GC pauses or overloaded nodes; preemption needs decommissioning (spark.decommission.enabled=true) and the external shuffle service."),
    ]
}
