//! SK002 straggler-task: a task far longer than its stage's median with no more data.

use sparkdiag_facts::slowness::{Cause, LongTask};

use super::slow_tasks::{DATA_RATIO, SKEW_THRESHOLDS, finding_for, long_for_its_data, slow_stages};
use crate::{Context, Finding, Thresholds, declare_rule};

declare_rule! {
    /// ## What it does
    /// Finds stages where a task ran far longer than the stage's median task **without** having
    /// more data to process: a straggler, slowed by its executor or host (GC, a busy or failing
    /// disk, a noisy neighbour, a slow remote fetch), not by its partition.
    ///
    /// ## Why is this bad?
    /// The whole stage waits for the straggler. Unlike data skew, repartitioning does not help:
    /// the same task on a healthy executor would have finished with the others.
    ///
    /// ## How to fix it
    /// - Turn on speculative execution so a copy of the slow task runs elsewhere:
    ///   `spark.speculation=true`, `spark.speculation.multiplier=3`, `spark.speculation.quantile=0.9`.
    ///   Not with one core (no other core can run the copy) nor one executor (the copy would
    ///   share the slow host): there, look at what the task itself did, and add cores.
    /// - Look at the executor and host named in the finding: its GC time (GC001), its other
    ///   tasks (SK003), and the node's health. `spark.excludeOnFailure.enabled=true` keeps
    ///   failing nodes out.
    /// - If the slow tasks wait on shuffle fetches, check `Fetch Wait Time` and the shuffle service.
    ///
    /// ## Threshold and its source
    /// The same detection as SK001: a task over `ratio` = 5x the stage median (AQE's skew factor)
    /// in a stage of at least `min_tasks` = 5 successful tasks, lasting `min_task_s` = 30 s or
    /// `min_app_share` = 0.5 % of the application and at least `floor_s` = 1 s — where the slow
    /// task's bytes and records are both under `data_ratio` = 5x the median task's.
    pub static STRAGGLER = {
        code: "SK002",
        name: "straggler-task",
        category: Skew,
        claims: Saving,
        needs: [TaskMetrics],
        summary: "A task ran far longer than its stage's median with no more data than the others",
        thresholds: SKEW_THRESHOLDS,
        check: check_straggler,
    };
}

fn check_straggler(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let data_ratio = t.get(&DATA_RATIO);
    slow_stages(ctx, t)
        .iter()
        .filter_map(|s| {
            // Tasks long for their data are SK001's, a slow executor's are SK003's: the rest
            // are stragglers, a cold start named only when no other straggler is.
            let others: Vec<&LongTask> = s
                .slow
                .iter()
                .copied()
                .filter(|task| !long_for_its_data(task, s, data_ratio))
                .filter(|task| task.attribution.cause() != Cause::Executor)
                .filter(|task| task.attribution.cause() != Cause::Data)
                .collect();
            let (warm, cold): (Vec<&LongTask>, Vec<&LongTask>) = others
                .into_iter()
                .partition(|task| task.attribution.cause() != Cause::ColdStart);
            let tasks = if warm.is_empty() { cold } else { warm };
            let worst = *tasks.first()?;
            // A speculative copy ends it a typical task after it is launched (Spark's default
            // multiplier, 1.5); with one core no copy runs, and its own time is the bound.
            let worst_ms = i64::from(worst.duration_ms);
            let estimate = if ctx.shapes.app.single_core() {
                worst_ms - i64::from(s.typical.duration_ms)
            } else {
                worst_ms - s.typical.speculated_ms(worst.launch_ms, worst_ms, 1.5)
            };
            Some(finding_for(ctx, &STRAGGLER, s, &tasks, estimate.max(0)))
        })
        .collect()
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::STRAGGLER;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_straggler() {
        assert_fires(
            &on_log(&STRAGGLER, "patterns/straggler", &[]),
            STRAGGLER.code,
        );
    }

    /// `local[1]`: one executor with one core, where a speculative copy has nowhere to run.
    #[test]
    fn on_one_core_the_advice_is_not_speculation() {
        let found = on_log(&STRAGGLER, "shapes/one-core", &[]);
        assert_fires(&found, STRAGGLER.code);
        for f in &found {
            let advice = f.recommendation.as_str();
            assert!(!advice.contains("spark.speculation=true"), "{advice}");
            assert!(advice.contains("one core"), "{advice}");
        }
    }

    /// In a shell session where one join was typed again and again, the real straggler at the
    /// end is not taken for part of a driver loop: it keeps its own severity.
    #[test]
    fn a_straggler_in_a_shell_session_keeps_its_severity() {
        for app in crate::rules::testing::apps("logs/shapes/interactive-retyped") {
            let found = crate::analyze(
                &app,
                &sparkdiag_facts::Facts::of(&app),
                &crate::Config::default(),
            );
            assert!(found.iter().all(|f| f.rule != "DR002"), "{found:?}");
            let straggler = found
                .iter()
                .find(|f| f.rule == STRAGGLER.code)
                .expect("the straggler");
            assert!(straggler.impact_ms > 0, "{straggler:?}");
            assert_ne!(straggler.severity, crate::Severity::Info, "{straggler:?}");
        }
    }

    #[test]
    fn is_quiet_on_the_skewed_join_whose_slow_task_had_more_data() {
        assert_quiet(&on_log(&STRAGGLER, "patterns/skew-join", &[]));
    }
}
