//! SK003 slow-executor: one executor's tasks are consistently slower than their stages' medians.

use std::collections::BTreeSet;

use super::common::{duration, ratio};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const RATIO: Threshold = threshold(
    "ratio",
    2.0,
    "x median",
    "the executor's typical task duration over its stages' medians",
    "SparkForensics' slow-host rule (mean >= 2x the overall median)",
);

pub const DATA_RATIO: Threshold = threshold(
    "data_ratio",
    1.5,
    "x median",
    "its tasks' data must be at most this multiple of their stages' median",
    "sparkdiag's own guard",
);

pub const MIN_TASKS: Threshold = threshold(
    "min_tasks",
    5.0,
    "tasks",
    "successful tasks on the executor, in stages of at least as many tasks",
    "sparkdiag's own guard",
);

pub const MIN_MEDIAN_MS: Threshold = threshold(
    "min_median_ms",
    50.0,
    "ms",
    "stages whose median task is shorter are too noisy to compare",
    "sparkdiag's own guard",
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
    /// Compares every successful task with the median task of its own stage, and flags an
    /// executor whose tasks are typically several times slower than their stages' medians while
    /// processing no more data: a slow host, not a skewed partition.
    ///
    /// ## Why is this bad?
    /// Every stage that places a task there waits for it. The cause is outside the job: a
    /// degraded disk, an overloaded or noisy node, a bad network link, or a JVM thrashing in GC.
    ///
    /// ## How to fix it
    /// - Check the executor's host (the finding names it) and its GC time (GC001).
    /// - `spark.speculation=true` (with `spark.speculation.multiplier=3`) re-runs slow tasks elsewhere.
    /// - `spark.excludeOnFailure.enabled=true` keeps failing executors and nodes out; on a cloud
    ///   cluster, replace the node.
    ///
    /// ## Threshold and its source
    /// `ratio` = 2: the executor's median task is at least twice its stage's median, SparkForensics'
    /// slow-host rule ("mean ≥ 2x the overall median"). `data_ratio` = 1.5: its tasks' data is at
    /// most 1.5x their stages' median, so the slowness is not the data's. Guards: `min_tasks` = 5
    /// tasks on the executor in stages of at least 5 tasks with a median of at least
    /// `min_median_ms` = 50 ms, and `min_excess_s` = 10 s of task time lost in all or
    /// `min_app_share` = 2 % of the application.
    pub static SLOW_EXECUTOR = {
        code: "SK003",
        name: "slow-executor",
        category: Skew,
        claims: Saving,
        needs: [TaskMetrics],
        summary: "An executor whose tasks are consistently slower than their stages' medians, with the same data",
        thresholds: &[
            RATIO,
            DATA_RATIO,
            MIN_TASKS,
            MIN_MEDIAN_MS,
            MIN_EXCESS_S,
            MIN_APP_SHARE,
        ] as &[Threshold],
        check: check,
    };
}

#[derive(Default)]
struct Tally {
    time_ratios: Vec<f64>,
    data_ratios: Vec<f64>,
    excess_ms: i64,
    stages: Vec<i64>,
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let min_tasks = t.get(&MIN_TASKS);
    let stages: Vec<_> = ctx
        .stage_stats()
        .filter(|(_, stats)| {
            (stats.successful as f64) >= min_tasks
                && f64::from(stats.median_ms) >= t.get(&MIN_MEDIAN_MS)
        })
        .collect();
    let executors: BTreeSet<u32> = stages
        .iter()
        .flat_map(|(_, stats)| stats.facts.by_executor.iter().map(|e| e.executor))
        .collect();
    // With a single executor there is nothing to compare against.
    if executors.len() < 2 {
        return Vec::new();
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let mut findings = Vec::new();
    // One executor's tally at a time: every task's ratios are held for one executor, not all.
    for exec in executors {
        let mut tally = Tally::default();
        for (stage, stats) in &stages {
            let on_executor = &stats.facts.by_executor;
            let Ok(at) = on_executor.binary_search_by_key(&exec, |e| e.executor) else {
                continue;
            };
            let tasks = &on_executor[at];
            for (duration_ms, bytes) in tasks.durations_ms.iter().zip(tasks.data_bytes.iter()) {
                tally
                    .time_ratios
                    .push(ratio(duration_ms as f64, stats.median_ms.into()));
                tally
                    .data_ratios
                    .push(ratio(bytes as f64, stats.median_bytes.max(1) as f64));
                tally.excess_ms += (duration_ms - i64::from(stats.median_ms)).max(0);
            }
            if tally.stages.last() != Some(&stage.stage_id) {
                tally.stages.push(stage.stage_id);
            }
        }
        let enough_lost = tally.excess_ms as f64 >= t.get(&MIN_EXCESS_S) * 1000.0
            || tally.excess_ms as f64 >= t.get(&MIN_APP_SHARE) * ctx.app_ms as f64;
        if (tally.time_ratios.len() as f64) < min_tasks || !enough_lost {
            continue;
        }
        let time_ratio = median(&mut tally.time_ratios);
        let data_ratio = median(&mut tally.data_ratios);
        if time_ratio < t.get(&RATIO) || data_ratio > t.get(&DATA_RATIO) {
            continue;
        }
        let executor = &ctx.app.executors[exec as usize];
        let cores = executor.cores.unwrap_or(1).max(1);
        // Its cores ran the extra time in parallel: that is the wall-clock it cost.
        let impact = tally.excess_ms / cores;
        let title = format!(
            "Executor {} ({}): its tasks typically ran {:.1}x their stages' median with the same data, {} of task time lost",
            executor.id,
            executor.host,
            time_ratio,
            duration(tally.excess_ms)
        );
        findings.push(
            Finding::new(&SLOW_EXECUTOR, Severity::from_share(impact, ctx.app_ms), title, impact)
                .proposes(
                    crate::Change::AvoidSlowExecutors {
                        executors: vec![executor.id.clone()],
                    },
                    "not replayed: its tasks' time beyond their stages' median, spread over the cores",
                )
                .executors([executor.id.clone()])
                .stages(tally.stages.iter().copied())
                .evidence("host", executor.host.clone())
                .evidence("tasks", tally.time_ratios.len())
                .evidence("median_time_ratio", (time_ratio * 10.0).round() / 10.0)
                .evidence("median_data_ratio", (data_ratio * 100.0).round() / 100.0)
                .evidence("excess_task_time_ms", tally.excess_ms)
                .evidence("cores", cores)
                .recommend(format!(
                    "Check host {} (GC, disk, network, other tenants) and replace or exclude it; spark.speculation=true re-runs its slow tasks elsewhere.",
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
