//! UT002 too-few-cores: tasks waited for a free core through much of the run: one core for the
//! whole application, or a cluster too small for its stages.

use super::common::duration;
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
    "the time more cores would save, as a share of the application, worth a finding",
    "sparkdiag's own guard",
);

pub const MIN_MEDIAN_MS: Threshold = threshold(
    "min_median_ms",
    200.0,
    "ms",
    "median task of a stage whose tasks waited for cores: shorter tasks are tiny partitions, whose fix is fewer tasks (PA001), not more cores",
    "sparkdiag's own guard; Spark's scheduling costs a few milliseconds per task",
);

pub const MAX_FACTOR: Threshold = threshold(
    "max_factor",
    4.0,
    "times today's cores",
    "the most cores to ask for, as a multiple of today's: past it the cluster is a different one, whose price the owner must weigh",
    "sparkdiag's own guard",
);

pub const MIN_WAIT_SHARE: Threshold = threshold(
    "min_wait_share",
    0.25,
    "share",
    "share of the application during which tasks waited for a free core, for a cluster of several cores to be too small",
    "sparkdiag's own guard",
);

declare_rule! {
    /// ## What it does
    /// Finds applications whose tasks waited for a free core through much of the run: every
    /// task on one core (`local[1]`, or one executor with one core), or stages of many more
    /// tasks than the cluster had cores, run wave after wave. It says how long tasks waited,
    /// how many cores would let the stages' tasks run side by side, and what that saves.
    ///
    /// ## Why is this bad?
    /// A stage of 1,205 tasks on 32 cores runs in 38 waves: it takes its task time divided by 32,
    /// however short each task is. When the stages keep every core busy for most of the run,
    /// the cluster, not the code, sets the run's length. More cores cost more per hour, but the
    /// same work in core-hours then ends sooner: this is a claim about time, not money.
    ///
    /// ## How to fix it
    /// - Local runs: `--master local[*]` (or `local[N]`) instead of `local[1]` or `local`.
    /// - YARN, EMR, Kubernetes: more executors (`spark.executor.instances`, or
    ///   `spark.dynamicAllocation.maxExecutors`) or more cores each (`spark.executor.cores`).
    /// - Standalone: `spark.cores.max`. Databricks: more workers (or a higher autoscaling
    ///   maximum), or a node type with more cores.
    /// - Before adding cores, the other findings' fixes may shrink the work (data read again,
    ///   skew, tiny tasks).
    ///
    /// ## Threshold and its source
    /// Not on a run with a failed job (more cores do not fix a failure). At least
    /// `min_tasks` = 20 tasks, and either at most `max_cores` = 1 core at the
    /// application's peak, or tasks waiting for a core during at least `min_wait_share` = 25 %
    /// of the application (each stage of more tasks than cores counts its time beyond its longest
    /// task; stages whose median task is under `min_median_ms` = 200 ms are left to PA001, since
    /// their fix is fewer tasks). The cores to ask for are the fewest, doubling today's up to
    /// `max_factor` = 4 times them, past which another doubling saves under 10 % (each stage taking its task time over the cores, never less than its
    /// longest task), and it is a finding when that saves at least `min_app_share` = 5 % of the
    /// application. Its saving is the what-if's replay of the run on those cores (`add_cores`),
    /// every task taking the time it measured.
    pub static TOO_FEW_CORES = {
        code: "UT002",
        name: "too-few-cores",
        category: Utilization,
        claims: Saving,
        needs: [Executors, Tasks],
        summary: "Tasks waited for a free core through much of the run: one core, or too few for the stages",
        thresholds: &[
            MAX_CORES,
            MIN_TASKS,
            MIN_MEDIAN_MS,
            MIN_APP_SHARE,
            MIN_WAIT_SHARE,
            MAX_FACTOR,
        ] as &[Threshold],
        check: check,
    };
}

/// A stage's task time and longest task: what it would take on `cores` cores.
struct StageWork {
    stage_id: i64,
    tasks: usize,
    task_time_ms: i64,
    max_ms: i64,
    duration_ms: i64,
}

impl StageWork {
    /// The stage on `cores` cores: its task time spread over them, never less than its longest
    /// task, never more than it took today.
    fn on(&self, cores: i64) -> i64 {
        (self.task_time_ms / cores.max(1))
            .max(self.max_ms)
            .min(self.duration_ms)
    }
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let shape = &ctx.shapes.app;
    if ctx.app_ms <= 0 {
        return Vec::new();
    }
    // More cores do not fix a failure, and a failed run's length is the failure's, not the
    // cluster's: the failure findings come first.
    if ctx
        .app
        .jobs
        .iter()
        .any(|j| j.status == sparkdiag_model::JobStatus::Failed)
    {
        return Vec::new();
    }
    let tasks: usize = ctx.stages.iter().map(|s| s.facts.tasks).sum();
    if (tasks as f64) < t.get(&MIN_TASKS) {
        return Vec::new();
    }
    let cores = shape.total_cores.max(1);
    let one_core = cores as f64 <= t.get(&MAX_CORES);
    let work: Vec<StageWork> = ctx
        .stage_stats()
        .filter(|(_, stats)| {
            stats.facts.tasks >= 2
                && (one_core || f64::from(stats.median_ms) >= t.get(&MIN_MEDIAN_MS))
        })
        .map(|(stage, stats)| StageWork {
            stage_id: stage.stage_id,
            tasks: stats.facts.tasks,
            task_time_ms: stats.task_time_ms,
            max_ms: i64::from(stats.max_ms),
            duration_ms: stats.duration_ms,
        })
        .collect();
    // Time tasks waited for a core: each stage with more tasks than cores kept them all busy
    // for its task time over the cores, of which what passes its longest task (what it would
    // take with a core for every task) was waiting. A stage of tiny tasks whose time went to
    // scheduling, not to its cores, waited for no core.
    let waves: Vec<&StageWork> = work.iter().filter(|w| w.tasks as i64 > cores).collect();
    let waiting_ms: i64 = waves
        .iter()
        .map(|w| {
            (w.task_time_ms / cores - w.max_ms)
                .min(w.duration_ms - w.max_ms)
                .max(0)
        })
        .sum::<i64>()
        .min(ctx.app_ms);
    if !one_core && (waiting_ms as f64) < t.get(&MIN_WAIT_SHARE) * ctx.app_ms as f64 {
        return Vec::new();
    }
    let total = |c: i64| -> i64 { work.iter().map(|w| w.on(c)).sum() };
    // The fewest cores, doubling today's up to the most to ask for, past which another
    // doubling saves under 10 %.
    let most = cores * (t.get(&MAX_FACTOR) as i64).max(2);
    let mut wanted = cores * 2;
    while wanted * 2 <= most {
        let (now, doubled) = (total(wanted), total(wanted * 2));
        if (now - doubled) as f64 <= 0.10 * now as f64 {
            break;
        }
        wanted *= 2;
    }
    let saving = (total(cores) - total(wanted)).clamp(0, ctx.app_ms);
    if (saving as f64) < t.get(&MIN_APP_SHARE) * ctx.app_ms as f64 {
        return Vec::new();
    }
    let stages: Vec<i64> = work
        .iter()
        .filter(|w| w.on(wanted) < w.on(cores))
        .map(|w| w.stage_id)
        .collect();
    let (title, advice) = if one_core {
        (
            format!(
                "The application ran its {tasks} tasks on one core, one after another: with a second core its stages' tasks would run side by side"
            ),
            if ctx.app.cluster_manager() == Some("local") {
                "Run with more than one core: --master local[*] (or local[N]) instead of local[1]; each stage's tasks then run side by side.".to_string()
            } else {
                "Give the application more than one core: raise spark.executor.cores or the number of executors (spark.executor.instances, or spark.dynamicAllocation.maxExecutors), so a stage's tasks run side by side.".to_string()
            },
        )
    } else {
        let widest = waves.iter().map(|w| w.tasks).max().unwrap_or(0);
        (
            format!(
                "Tasks waited for a free core during {} of the run ({}): stages of up to {widest} tasks ran on {cores} cores, in up to {} waves; on {wanted} cores the stages would take about {} instead of {}",
                duration(waiting_ms),
                ctx.percent_of_app(waiting_ms),
                widest.div_ceil(cores as usize),
                duration(total(wanted)),
                duration(total(cores)),
            ),
            more_cores(ctx, cores, wanted),
        )
    };
    let change_cores = if one_core { 2 } else { wanted };
    vec![
        Finding::new(
            &TOO_FEW_CORES,
            Severity::from_saving(saving, ctx.app_ms),
            title,
            saving,
        )
        .proposes(
            crate::Change::AddCores {
                cores: change_cores,
            },
            "each stage's tasks spread evenly over the cores, no stage shorter than its longest task",
        )
        .stages(stages)
        .evidence("cores", shape.total_cores)
        .evidence("executors", shape.executors)
        .evidence("tasks", tasks)
        .evidence("waiting_for_cores_ms", waiting_ms)
        .evidence("recommended_cores", change_cores)
        .evidence("estimated_saving_ms", saving)
        .evidence(
            "assumption",
            "each stage's tasks spread evenly over the cores, no stage shorter than its longest task",
        )
        .recommend(advice),
    ]
}

/// How to get `wanted` cores instead of `cores` on this application's cluster manager.
fn more_cores(ctx: &Context, cores: i64, wanted: i64) -> String {
    use sparkdiag_model::Platform;
    let per_executor = ctx.shapes.app.cores_per_executor.max(1);
    let executors = (wanted + per_executor - 1) / per_executor;
    let how = match (ctx.app.platform(), ctx.app.cluster_manager()) {
        (Platform::Databricks, _) => format!(
            "more workers (or a higher autoscaling maximum) for about {wanted} cores, or a node type with more cores"
        ),
        (_, Some("local")) => "--master local[*] on a machine with more cores".to_string(),
        (_, Some("standalone")) => format!("spark.cores.max={wanted}"),
        _ if ctx.app.dynamic_allocation() => format!(
            "spark.dynamicAllocation.maxExecutors={executors} (of {per_executor} core(s) each)"
        ),
        _ => format!(
            "spark.executor.instances={executors} (of {per_executor} core(s) each), or fewer executors with more spark.executor.cores"
        ),
    };
    format!(
        "Give the run about {wanted} cores instead of {cores}: {how}. The same core-hours of work then end sooner (a time saving, not a money one); fix the other findings first where they shrink the work."
    )
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

    /// The EMR run of `../shared/real-world`: 32 one-core executors, stages of 1,205 tasks, and
    /// tasks waiting for a core through most of its 65 minutes.
    #[test]
    fn names_the_cluster_too_small_for_its_stages() {
        let Some(apps) =
            crate::rules::testing::shared_apps("real-world/spark_log_parser/tests/logs/emr.zip")
        else {
            return;
        };
        let found = crate::rules::testing::run(&TOO_FEW_CORES, &apps[0], &[]);
        assert_fires(&found, TOO_FEW_CORES.code);
        let f = &found[0];
        assert_eq!(f.evidence["cores"], 32);
        let wanted = f.evidence["recommended_cores"].as_i64().unwrap();
        assert!(wanted >= 64, "{f:?}");
        assert!(
            f.evidence["waiting_for_cores_ms"].as_i64().unwrap() > 30 * 60_000,
            "{f:?}"
        );
        assert!(
            f.recommendation.contains("spark.executor.instances"),
            "{}",
            f.recommendation
        );
        assert!(f.title.contains("waited for a free core"), "{}", f.title);
    }
}
