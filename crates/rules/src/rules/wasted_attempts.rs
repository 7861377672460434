//! FA004 wasted-attempts: work thrown away by speculation and stage retries.

use super::common::duration;
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
    /// another attempt finished first, and the tasks of stage attempts that Spark had to
    /// re-run (a retried stage attempt, usually after a fetch failure).
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
    // Speculative copies killed, and the successful tasks of attempts a later attempt ran again
    // for nothing, in one look at each stage's tasks.
    let mut speculative: i64 = 0;
    let mut retried_stages = Vec::new();
    let mut retried: i64 = 0;
    for (stage, stats) in ctx.stage_stats() {
        speculative += stats.facts.killed_speculative_ms;
        if latest_attempt[&stage.stage_id] > stage.attempt_id {
            retried += stats.facts.succeeded_ms;
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
                "not replayed: the killed and re-run attempts' task time spread over the cores",
            )
            .stages(retried_stages)
            .evidence("speculative_killed_ms", speculative)
            .evidence("retried_stage_task_ms", retried)
            .recommend("For speculation waste raise spark.speculation.multiplier (3) or spark.speculation.quantile (0.9) or fix the skew behind it; for re-run stages fix what lost the shuffle output (lost executors) and enable the external shuffle service."),
    ]
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::WASTED_ATTEMPTS;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_rerun_attempts_with_a_lower_floor() {
        assert_fires(
            &on_log(
                &WASTED_ATTEMPTS,
                "patterns/executor-lost",
                &["FA004.min_wasted_s=1"],
            ),
            WASTED_ATTEMPTS.code,
        );
    }

    #[test]
    fn is_quiet_on_the_same_log_at_its_defaults() {
        assert_quiet(&on_log(&WASTED_ATTEMPTS, "patterns/executor-lost", &[]));
    }
}
