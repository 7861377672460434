//! FA004 wasted-attempts: work thrown away by speculation and stage retries.

use super::common::duration;
use sparkdiag_model::{JobStatus, StageStatus, TaskOutcome};

use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_WASTED_S: Threshold = threshold(
    "min_wasted_s",
    30.0,
    "s",
    "wasted task time worth a finding",
    "SparkForensics (retry waste >= 30 s)",
);

declare_rule! {
    /// ## What it does
    /// Adds up task time thrown away without a task failing: speculative copies killed because
    /// another attempt finished first, the tasks killed with a stage attempt that a later
    /// attempt replaced, and every task of a later attempt of a stage that had not failed (its
    /// shuffle output lost, usually after a fetch failure, so finished work ran again). An attempt that
    /// replaced a failed one runs the partitions still missing: that is the work, not waste.
    /// Re-runs inside a job that failed anyway are left to that job's finding (FA001): what it
    /// lost includes them, and fixing the re-runs alone would not have saved them.
    ///
    /// ## Why is this bad?
    /// It is work done twice. A little speculation is the price of beating stragglers; a lot
    /// means speculation is too eager or the real problem (skew, a bad host, lost shuffle
    /// output) is elsewhere.
    ///
    /// ## How to fix it
    /// - Too much killed speculation: raise `spark.speculation.multiplier` (e.g. 3) or
    ///   `spark.speculation.quantile` (0.9), or fix the skew that triggers it (SK001).
    /// - Retried stages: fix what lost the shuffle output (FA003), enable the external shuffle
    ///   service.
    ///
    /// ## Threshold and its source
    /// At least `min_wasted_s` = 30 s of wasted task time (SparkForensics: retry waste ≥ 30 s,
    /// speculation waste ≥ 60 s).
    pub static WASTED_ATTEMPTS = {
        code: "FA004",
        name: "wasted-attempts",
        category: Failure,
        claims: Saving,
        needs: [Tasks],
        summary: "Task time thrown away by killed speculative copies and re-run stage attempts",
        thresholds: &[MIN_WASTED_S] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    // Each stage's latest attempt, so that a stage knows it was retried without a scan of every
    // stage (stages grow with the log).
    let mut latest_attempt: std::collections::HashMap<i64, i64> = Default::default();
    for stage in &app.stages {
        let latest = latest_attempt
            .entry(stage.stage_id)
            .or_insert(stage.attempt_id);
        *latest = (*latest).max(stage.attempt_id);
    }
    // Each stage's earliest failed attempt: a later attempt of a stage that never failed was
    // resubmitted because its shuffle output was lost, and re-ran finished work.
    let mut failed_attempt: std::collections::HashMap<i64, i64> = Default::default();
    for stage in app
        .stages
        .iter()
        .filter(|s| s.status == StageStatus::Failed)
    {
        let first = failed_attempt
            .entry(stage.stage_id)
            .or_insert(stage.attempt_id);
        *first = (*first).min(stage.attempt_id);
    }
    // Speculative copies killed; the tasks killed with an attempt a later attempt replaced
    // (they ran again there); and every task of a later attempt of a stage that had not failed
    // (its shuffle output was lost, so finished work ran again). An attempt that replaced a
    // failed one ran the partitions still missing, which is the work, not a waste.
    // Re-runs inside a job that failed anyway are part of what that job lost (FA001): fixing the
    // re-runs alone would not have saved them.
    let failed_jobs: std::collections::HashSet<i64> = app
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Failed)
        .map(|j| j.job_id)
        .collect();
    let mut speculative: i64 = 0;
    let mut retried_stages = Vec::new();
    let mut retried: i64 = 0;
    let mut in_failed_jobs: i64 = 0;
    for (stage, stats) in ctx.stage_stats() {
        speculative += stats.facts.killed_speculative_ms;
        if !stage.job_ids.is_empty() && stage.job_ids.iter().all(|j| failed_jobs.contains(j)) {
            if stage.attempt_id > 0 {
                in_failed_jobs += stats.task_time_ms - stats.facts.killed_speculative_ms;
            }
            continue;
        }
        if stage.attempt_id > 0
            && failed_attempt
                .get(&stage.stage_id)
                .is_none_or(|&first| first > stage.attempt_id)
        {
            retried += stats.task_time_ms - stats.facts.killed_speculative_ms;
            retried_stages.push(stage.stage_id);
        } else if latest_attempt[&stage.stage_id] > stage.attempt_id && stats.facts.killed > 0 {
            // Replaced attempts are few: their tasks are read again here only.
            retried += app
                .stage_tasks(stage)
                .iter()
                .filter(|t| t.outcome == TaskOutcome::Killed && !t.speculative)
                .map(|t| i64::from(t.duration_ms))
                .sum::<i64>();
            retried_stages.push(stage.stage_id);
        }
    }
    let wasted = speculative + retried;
    if (wasted as f64) < t.get(&MIN_WASTED_S) * 1000.0 {
        return Vec::new();
    }
    let impact = wasted / ctx.cores;
    retried_stages.dedup();
    let title = format!(
        "{} of task time thrown away: {} in killed speculative copies, {} in stage attempts that had to be re-run",
        duration(wasted),
        duration(speculative),
        duration(retried)
    );
    vec![
        Finding::new(&WASTED_ATTEMPTS, Severity::from_share(impact, ctx.app_ms), title, impact)
            .proposes(
                crate::Change::RemoveWastedAttempts,
                "the killed and re-run attempts' task time spread over the cores",
            )
            .stages(retried_stages)
            .evidence("speculative_killed_ms", speculative)
            .evidence("retried_stage_task_ms", retried)
            .evidence("retried_in_failed_jobs_ms", in_failed_jobs)
            .recommend("For speculation waste raise spark.speculation.multiplier (3) or spark.speculation.quantile (0.9) or fix the skew behind it; for re-run stages fix what lost the shuffle output (lost executors) and enable the external shuffle service."),
    ]
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::WASTED_ATTEMPTS;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    /// The map stage resubmitted after the fetch failure re-ran two finished tasks (986 ms);
    /// the reduce stage's second attempt ran the partitions still missing, which is not waste.
    #[test]
    fn fires_on_the_rerun_attempts_with_a_lower_floor() {
        let found = on_log(
            &WASTED_ATTEMPTS,
            "patterns/executor-lost",
            &["FA004.min_wasted_s=0.5"],
        );
        assert_fires(&found, WASTED_ATTEMPTS.code);
        assert_eq!(found[0].scope.stage_ids, vec![1], "{:?}", found[0]);
        assert!(
            on_log(
                &WASTED_ATTEMPTS,
                "patterns/executor-lost",
                &["FA004.min_wasted_s=1"],
            )
            .is_empty()
        );
    }

    #[test]
    fn is_quiet_on_the_same_log_at_its_defaults() {
        assert_quiet(&on_log(&WASTED_ATTEMPTS, "patterns/executor-lost", &[]));
    }
}
