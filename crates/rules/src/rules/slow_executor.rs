//! SK003 slow-executor: one executor's tasks are slower than the other executors' on the same
//! data, in every stage and wave it ran, not only its first tasks.

use sparkdiag_facts::slowness::{SLOW_EXECUTOR_MIN_SHARE, StagePace};

use super::common::{duration, stage_label};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const RATIO: Threshold = threshold(
    "ratio",
    2.0,
    "x others",
    "the executor's median task over the other executors' median on the same data",
    "SparkForensics' slow-host rule (mean >= 2x the overall median)",
);

pub const MIN_SLOW_TASKS: Threshold = threshold(
    "min_slow_tasks",
    3.0,
    "tasks",
    "its tasks beyond the other executors' 90th percentile (and half of its compared tasks)",
    "sparkdiag's own guard: three tasks no other executor's were as slow as are not chance",
);

pub const MIN_EXCESS_S: Threshold = threshold(
    "min_excess_s",
    10.0,
    "s",
    "task time lost on the executor worth a finding, or min_app_share",
    "sparkdiag's own guard",
);

pub const MIN_APP_SHARE: Threshold = threshold(
    "min_app_share",
    0.02,
    "share",
    "task time lost, as a share of the application, worth a finding",
    "sparkdiag's own guard",
);

declare_rule! {
    /// ## What it does
    /// Compares every task of an executor with the other executors' tasks of the same stage,
    /// per unit of data (the stage's typical task's bytes and records) and without the time
    /// spent waiting for shuffle blocks, leaving out each executor's first wave of each stage
    /// (its cold start: classes, the JIT, Python workers, broadcasts). An executor whose tasks
    /// are typically several times slower than the others' on the same data, across stages and
    /// waves, is a slow host, not a skewed partition and not a cold one.
    ///
    /// ## Why is this bad?
    /// Every stage that places a task there waits for it. The cause is outside the job: a
    /// throttled or overloaded node (CPU quota, other tenants, CPU steal), a degraded disk, a
    /// bad network link, or a JVM thrashing in GC.
    ///
    /// ## How to fix it
    /// - Check the executor's host (the finding names it): CPU throttling and steal, other
    ///   tenants, disk and network, and its GC time (GC001).
    /// - Replace the node, or keep it out: `spark.excludeOnFailure.enabled=true` excludes
    ///   failing executors and nodes; on a cloud cluster, replace the instance.
    /// - `spark.speculation=true` re-runs its slow tasks elsewhere meanwhile.
    ///
    /// ## Threshold and its source
    /// `ratio` = 2: the executor's median task is at least twice the other executors' median on
    /// the same data (weighted over the stages it ran), SparkForensics' slow-host rule ("mean
    /// ≥ 2x the overall median"). `min_slow_tasks` = 3: at least three of its tasks, and half of
    /// those compared, beyond the other executors' 90th percentile of their stage, so one slow
    /// task is not a slow host, while an executor that ran three tasks at 60x is. No stage is
    /// left out for its short median or its size. `min_excess_s` = 10 s of task time lost in
    /// all, or `min_app_share` = 2 % of the application. The saving is the replay of its tasks
    /// at the others' pace.
    pub static SLOW_EXECUTOR = {
        code: "SK003",
        name: "slow-executor",
        category: Skew,
        claims: Saving,
        needs: [TaskMetrics],
        summary: "An executor whose tasks are slower than the other executors' on the same data, in every stage and wave it ran",
        thresholds: &[
            RATIO,
            MIN_SLOW_TASKS,
            MIN_EXCESS_S,
            MIN_APP_SHARE,
        ] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for pace in &ctx.facts.slowness.paces {
        let enough_lost = pace.excess_ms as f64 >= t.get(&MIN_EXCESS_S) * 1000.0
            || pace.excess_ms as f64 >= t.get(&MIN_APP_SHARE) * ctx.app_ms as f64;
        let consistent = f64::from(pace.clearly_slower) >= t.get(&MIN_SLOW_TASKS)
            && f64::from(pace.clearly_slower) >= SLOW_EXECUTOR_MIN_SHARE * f64::from(pace.compared);
        if pace.ratio < t.get(&RATIO) || !consistent || !enough_lost {
            continue;
        }
        let executor = &ctx.app.executors[pace.executor as usize];
        let cores = executor.cores.unwrap_or(1).max(1);
        // Its cores ran the extra time in parallel: that is the wall-clock it cost at most.
        let impact = pace.excess_ms / cores;
        // The stage with the most of its tasks compared: the example the title gives.
        let in_stage = |index: usize| -> Option<&StagePace> {
            let paces = &ctx.stages[index].facts.slowness.paces;
            paces.iter().find(|p| p.executor == pace.executor)
        };
        let example = pace
            .stages
            .iter()
            .filter_map(|&i| Some((i, in_stage(i)?)))
            .max_by_key(|(_, p)| p.compared);
        let example_text = example.map_or(String::new(), |(i, p)| {
            format!(
                "; in {} its tasks took {} against the others' {}",
                stage_label(&ctx.app.stages[i]).replacen("Stage", "stage", 1),
                duration(p.own_median_ms.into()),
                duration(p.others_median_ms.into())
            )
        });
        let stage_ids: Vec<i64> = pace
            .slow_stages
            .iter()
            .map(|&i| ctx.app.stages[i].stage_id)
            .collect();
        let title = format!(
            "Executor {} ({}): {} of its {} tasks compared were beyond the other executors' 90th percentile, a median {:.1}x theirs on the same data across {} stage(s), after its first wave{}; {} of task time lost",
            executor.id,
            executor.host,
            pace.clearly_slower,
            pace.compared,
            pace.ratio,
            pace.stages.len(),
            example_text,
            duration(pace.excess_ms)
        );
        let gc_share = if executor.run_time_ms > 0 {
            executor.jvm_gc_time_ms as f64 / executor.run_time_ms as f64
        } else {
            0.0
        };
        let gc = if gc_share >= 0.1 {
            format!(
                " Its tasks spent {:.0}% of their run time in GC: look at its heap first (GC001).",
                gc_share * 100.0
            )
        } else {
            String::new()
        };
        let per_stage: Vec<serde_json::Value> = pace
            .stages
            .iter()
            .filter_map(|&i| Some((i, in_stage(i)?)))
            .take(20)
            .map(|(i, p)| {
                serde_json::json!({"stage_id": ctx.app.stages[i].stage_id,
                    "attempt": ctx.app.stages[i].attempt_id, "compared": p.compared,
                    "clearly_slower": p.clearly_slower, "ratio": (f64::from(p.ratio) * 10.0).round() / 10.0,
                    "median_ms": p.own_median_ms, "others_median_ms": p.others_median_ms})
            })
            .collect();
        findings.push(
            Finding::new(&SLOW_EXECUTOR, Severity::from_share(impact, ctx.app_ms), title, impact)
                .proposes(
                    crate::Change::AvoidSlowExecutors {
                        executors: vec![executor.id.clone()],
                    },
                    "its tasks at the other executors' pace",
                )
                .executors([executor.id.clone()])
                .stages(stage_ids)
                .evidence("cause", "executor")
                .evidence("host", executor.host.clone())
                .evidence("compared_tasks", pace.compared)
                .evidence("slower_than_others_median", pace.slower)
                .evidence("beyond_others_p90", pace.clearly_slower)
                .evidence("median_time_ratio", (pace.ratio * 10.0).round() / 10.0)
                .evidence("excess_task_time_ms", pace.excess_ms)
                .evidence("stages_compared", pace.stages.len())
                .evidence("by_stage", serde_json::Value::Array(per_stage))
                .evidence("gc_share", (gc_share * 1000.0).round() / 1000.0)
                .evidence("cores", cores)
                .recommend(format!(
                    "Its tasks are slow on the same data in every wave, not only its first: the host, not the data or a cold start. Check host {} (CPU throttling or steal, other tenants, disk, network) and replace or exclude it (spark.excludeOnFailure.enabled=true keeps failing executors out); spark.speculation=true re-runs its slow tasks elsewhere meanwhile.{gc}",
                    executor.host
                )),
        );
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::SLOW_EXECUTOR;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_run_with_a_slow_host() {
        assert_fires(
            &on_log(&SLOW_EXECUTOR, "patterns/straggler", &[]),
            SLOW_EXECUTOR.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&SLOW_EXECUTOR, "patterns/healthy", &[]));
    }
}
