//! FA002 task-failures: failed task attempts grouped by cause.

use std::collections::BTreeMap;

use super::common::{duration, ratio};
use super::failed_job::describe_failure;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_WASTED_SHARE: Threshold = threshold(
    "min_wasted_share",
    0.05,
    "share",
    "the failed attempts' task time, as a share of the application's core time, worth a finding",
    "Dr. Elephant's and SparkForensics' 5 % tier, applied to the time thrown away",
);

pub const MIN_WASTED_S: Threshold = threshold(
    "min_wasted_s",
    1.0,
    "s",
    "failed attempts' task time under this is never a finding on its own",
    "sparkdiag's own guard",
);

declare_rule! {
    /// ## What it does
    /// Groups every failed task attempt by its end reason and exception class
    /// (`ExceptionFailure` with `java.lang.OutOfMemoryError`, `FetchFailed`,
    /// `ExecutorLostFailure`, ...) and reports how many failed, where, and the time they wasted.
    ///
    /// ## Why is this bad?
    /// Every failed attempt's work is thrown away and redone; failures that repeat usually end
    /// in a failed stage once `spark.task.maxFailures` (4) attempts are spent, and fetch
    /// failures re-run whole map stages.
    ///
    /// ## How to fix it
    /// Fix the largest group first: memory errors need more memory per task or smaller
    /// partitions, fetch failures a stable executor for the shuffle output (or the external
    /// shuffle service), exceptions in user code a fix in that code or its input.
    ///
    /// ## Threshold and its source
    /// The failed attempts' task time is at least `min_wasted_share` = 5 % of the application's
    /// core time (its wall clock times its cores; Dr. Elephant's and SparkForensics' 5 % tier,
    /// applied to the time thrown away rather than to a count of failures) and at least
    /// `min_wasted_s` = 1 s, or any out-of-memory, fetch failure or lost executor (always worth
    /// knowing). Four failed attempts of a few seconds each in a short run are a finding; a
    /// hundred that failed at once are not. The saving is the what-if's replay of the run
    /// without the failed attempts (`remove_failed_attempts`): their retries did the work.
    pub static TASK_FAILURES = {
        code: "FA002",
        name: "task-failures",
        category: Failure,
        claims: Saving,
        needs: [Tasks],
        summary: "Task attempts failed: grouped by end reason and exception, with the time they wasted",
        thresholds: &[
            MIN_WASTED_SHARE,
            MIN_WASTED_S,
        ] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    let failed: Vec<&sparkdiag_model::TaskFailure> = app
        .task_failures
        .iter()
        .filter(|f| f.reason != "TaskKilled" && f.reason != "TaskCommitDenied")
        .collect();
    if failed.is_empty() {
        return Vec::new();
    }
    let share = ratio(failed.len() as f64, app.tasks.len() as f64);
    let serious = failed.iter().any(|f| {
        f.reason == "FetchFailed"
            || f.reason == "ExecutorLostFailure"
            || f.exception_class
                .as_deref()
                .is_some_and(|c| c.contains("OutOfMemoryError"))
            || f.message
                .as_deref()
                .is_some_and(|m| m.contains("OutOfMemoryError"))
    });
    let wasted: i64 = ctx
        .stages
        .iter()
        .flat_map(|s| &s.facts.failed_by_executor)
        .map(|failed| failed.time_ms)
        .sum();
    let core_ms = ctx.app_ms as f64 * ctx.cores.max(1) as f64;
    let wasted_share = ratio(wasted as f64, core_ms);
    let too_much =
        wasted_share >= t.get(&MIN_WASTED_SHARE) && wasted as f64 >= t.get(&MIN_WASTED_S) * 1000.0;
    if !serious && !too_much {
        return Vec::new();
    }
    let mut groups: BTreeMap<(String, String), Vec<&sparkdiag_model::TaskFailure>> =
        BTreeMap::new();
    for f in &failed {
        groups
            .entry((
                f.reason.clone(),
                f.exception_class.clone().unwrap_or_default(),
            ))
            .or_default()
            .push(f);
    }
    let mut groups: Vec<_> = groups.into_iter().collect();
    groups.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    let impact = wasted / ctx.cores.max(1);
    let summary: Vec<serde_json::Value> = groups
        .iter()
        .take(5)
        .map(|((reason, class), list)| {
            let mut stages: Vec<i64> = list.iter().map(|f| f.stage_id).collect();
            stages.dedup();
            let mut executors: Vec<&str> = list
                .iter()
                .map(|f| app.executors[f.executor as usize].id.as_str())
                .collect();
            executors.sort_unstable();
            executors.dedup();
            serde_json::json!({"reason": reason, "exception_class": class, "count": list.len(),
                "stages": stages, "executors": executors, "example": describe_failure(&list[0])})
        })
        .collect();
    let ((reason, class), top) = &groups[0];
    let title = format!(
        "{} task attempts failed ({:.1}% of {}), most as {}{} ({}); {} of task time wasted, {:.0}% of the application's core time",
        failed.len(),
        100.0 * share,
        app.tasks.len(),
        reason,
        if class.is_empty() {
            String::new()
        } else {
            format!(" {class}")
        },
        top.len(),
        duration(wasted),
        100.0 * wasted_share
    );
    // The memory the failures name, from the first that names one: FA001 has its fix.
    let memory = failed
        .iter()
        .find_map(|f| crate::memory_region::of_task_failure(app, f));
    let mut severity = Severity::from_share(impact, ctx.app_ms);
    if serious {
        severity = severity.at_least(Severity::Medium);
    }
    let mut stages: Vec<i64> = failed.iter().map(|f| f.stage_id).collect();
    stages.sort_unstable();
    stages.dedup();
    vec![
        Finding::new(&TASK_FAILURES, severity, title, impact)
            .proposes(
                crate::Change::RemoveFailedAttempts {
                    executors: Vec::new(),
                },
                "the failed attempts' task time spread over the cores",
            )
            .stages(stages)
            .evidence("failed_attempts", failed.len())
            .evidence("task_attempts", app.tasks.len())
            .evidence("wasted_task_ms", wasted)
            .evidence("wasted_share", (wasted_share * 1000.0).round() / 1000.0)
            .evidence("groups", serde_json::Value::Array(summary))
            .evidence(
                "memory_region",
                memory
                    .as_ref()
                    .map(|m| serde_json::to_value(m.region).unwrap_or_default()),
            )
            .recommend(format!(
                "{}Fix the largest group first: memory errors need the memory that ran out raised or less data per task, fetch failures a stable executor or the external shuffle service, exceptions in user code a fix in the code or its input.",
                memory
                    .map(|m| {
                        // A failed job's FA001 gives the fix (memory_lead points there); else,
                        // on an executor that died of it, FA003 names the memory and its fix.
                        let died = !super::failed_job::tells_a_failed_job(ctx) && m.executor.as_ref().is_some_and(|id| {
                            app.executors.iter().any(|e| {
                                e.id == *id && app.removal(e) == sparkdiag_model::Removal::Lost
                            })
                        });
                        if died {
                            format!(
                                "The {} ran out ({}); the lost executors' finding (FA003) gives its fix. ",
                                m.name(),
                                m.evidence
                            )
                        } else {
                            super::lost_executors::memory_lead(ctx, &m)
                        }
                    })
                    .unwrap_or_default()
            )),
    ]
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::TASK_FAILURES;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_run_that_lost_an_executor() {
        assert_fires(
            &on_log(&TASK_FAILURES, "patterns/executor-lost", &[]),
            TASK_FAILURES.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&TASK_FAILURES, "patterns/healthy", &[]));
    }

    /// Tasks that died of the metaspace on executors that then died of it: the lost executors'
    /// finding (FA003) carries the fix, and this one says so once.
    #[test]
    fn failures_of_the_metaspace_point_to_the_lost_executors_finding() {
        let found = on_log(&TASK_FAILURES, "memory/metaspace", &[]);
        assert_fires(&found, TASK_FAILURES.code);
        let advice = &found[0].recommendation;
        assert!(advice.contains("metaspace"), "{advice}");
        assert!(advice.contains("(FA003) gives its fix"), "{advice}");
        assert!(!advice.contains("FA001"), "{advice}");
    }
}
