//! UT002 too-few-cores: the whole application ran on one core, so every task waited for the one
//! before it.

use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MAX_CORES: Threshold = threshold(
    "max_cores",
    1.0,
    "cores",
    "an application with at most this many cores at its peak ran its tasks one at a time",
    "sparkdiag's own guard (local[1], one executor with one core)",
);

pub const MIN_TASKS: Threshold = threshold(
    "min_tasks",
    20.0,
    "tasks",
    "tasks the application must have run for their waiting to matter",
    "sparkdiag's own guard",
);

pub const MIN_APP_SHARE: Threshold = threshold(
    "min_app_share",
    0.05,
    "share",
    "the time a second core would save, as a share of the application, worth a finding",
    "sparkdiag's own guard",
);

declare_rule! {
    /// ## What it does
    /// Finds applications that ran every task on one core (`local[1]`, or one executor with one
    /// core) while their stages had tasks enough to run side by side, and says how much sooner
    /// the stages would end with a second core.
    ///
    /// ## Why is this bad?
    /// With one core a stage of 200 tasks runs them one after another: the stage takes the sum of
    /// its tasks, and one slow task holds up every other. Spark is built to run a stage's tasks
    /// at once; one core leaves that unused, and no setting (speculation, AQE, more heap) helps.
    ///
    /// ## How to fix it
    /// - Local runs: `--master local[*]` (or `local[N]`) instead of `local[1]` or `local`.
    /// - On a cluster: more cores per executor (`spark.executor.cores`) or more executors
    ///   (`spark.executor.instances`, or dynamic allocation with a higher
    ///   `spark.dynamicAllocation.maxExecutors`).
    ///
    /// ## Threshold and its source
    /// At most `max_cores` = 1 core at the application's peak and at least `min_tasks` = 20
    /// tasks. It is a finding when each stage's task time less what it would take on two cores
    /// (half its task time, never less than its longest task), summed over the stages, is at
    /// least `min_app_share` = 5 % of the application. Its saving is the what-if's replay of the
    /// run on two cores (`add_cores`), every task taking the time it measured.
    pub static TOO_FEW_CORES = {
        code: "UT002",
        name: "too-few-cores",
        category: Utilization,
        claims: Saving,
        needs: [Executors, Tasks],
        summary: "The application ran all its tasks on one core, one after another",
        thresholds: &[MAX_CORES, MIN_TASKS, MIN_APP_SHARE] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let shape = &ctx.shapes.app;
    if shape.total_cores as f64 > t.get(&MAX_CORES) || ctx.app_ms <= 0 {
        return Vec::new();
    }
    let tasks: usize = ctx.stages.iter().map(|s| s.facts.tasks).sum();
    if (tasks as f64) < t.get(&MIN_TASKS) {
        return Vec::new();
    }
    let mut saving = 0i64;
    let mut stages = Vec::new();
    for (stage, stats) in ctx.stage_stats() {
        if stats.facts.tasks < 2 {
            continue;
        }
        // On two cores a stage takes at least half its task time and at least its longest task.
        let on_two = (stats.task_time_ms / 2).max(i64::from(stats.max_ms));
        let saved = (stats.task_time_ms - on_two).clamp(0, stats.duration_ms);
        if saved > 0 {
            saving += saved;
            stages.push(stage.stage_id);
        }
    }
    if (saving as f64) < t.get(&MIN_APP_SHARE) * ctx.app_ms as f64 {
        return Vec::new();
    }
    let local = ctx.app.cluster_manager() == Some("local");
    // The saving is the replay of the run on two cores (the report's what-if); the title leaves
    // it to the finding's figure rather than state this rule's estimate beside it.
    let title = format!(
        "The application ran its {tasks} tasks on one core, one after another: with a second core its stages' tasks would run side by side"
    );
    let advice = if local {
        "Run with more than one core: --master local[*] (or local[N]) instead of local[1]; each stage's tasks then run side by side."
    } else {
        "Give the application more than one core: raise spark.executor.cores or the number of executors (spark.executor.instances, or spark.dynamicAllocation.maxExecutors), so a stage's tasks run side by side."
    };
    vec![
        Finding::new(
            &TOO_FEW_CORES,
            Severity::from_share(saving, ctx.app_ms),
            title,
            saving,
        )
        .proposes(
            crate::Change::AddCores { cores: 2 },
            "each stage's tasks spread evenly over two cores, no stage shorter than its longest task",
        )
        .stages(stages)
        .evidence("cores", shape.total_cores)
        .evidence("executors", shape.executors)
        .evidence("tasks", tasks)
        .evidence("saving_with_two_cores_ms", saving)
        .evidence(
            "assumption",
            "each stage's tasks spread evenly over two cores, no stage shorter than its longest task",
        )
        .recommend(advice),
    ]
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::TOO_FEW_CORES;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_one_core_application() {
        assert_fires(
            &on_log(&TOO_FEW_CORES, "shapes/one-core", &[]),
            TOO_FEW_CORES.code,
        );
    }

    #[test]
    fn is_quiet_on_an_application_with_two_cores() {
        assert_quiet(&on_log(&TOO_FEW_CORES, "patterns/tiny-partitions", &[]));
    }
}
