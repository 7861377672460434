//! UT003 waiting-for-executors: jobs were submitted before any executor had registered, so
//! they waited for the cluster, and the first tasks spent long deserialising.

use super::common::duration;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_WAIT_S: Threshold = threshold(
    "min_wait_s",
    10.0,
    "s",
    "time the first job waited for its first executor that is worth a finding",
    "sparkdiag's own guard",
);

pub const MIN_DESERIALIZE_S: Threshold = threshold(
    "min_deserialize_s",
    5.0,
    "s",
    "a first task deserialising this long is named in the finding",
    "sparkdiag's own guard",
);

pub const CONTAINER_START_S: Threshold = threshold(
    "container_start_s",
    30.0,
    "s",
    "a wait from the application's start to its first executor this short, on YARN or Kubernetes, is the containers starting: a fixed cost of every run, so the finding is low",
    "YARN and Kubernetes containers usually take 10-30 s to allocate, localise and start a JVM",
);

declare_rule! {
    /// ## What it does
    /// Measures how long the application's first job waited, from its submission, until the
    /// first executor registered (on a cluster; local mode has its executor from the start) —
    /// or, when the job followed the first executor within 3 s where SparkContext holds the
    /// program until executors register (YARN and Kubernetes, or
    /// `spark.scheduler.minRegisteredResourcesRatio` set), how long after the application's
    /// start that was —
    /// and how long the first stage's slowest task spent deserialising (loading classes and the
    /// task's closure and broadcasts on a fresh executor).
    ///
    /// ## Why is this bad?
    /// The job is ready but nothing can run it: every second of the wait adds to the run, and on
    /// a cluster that scales up from zero it can be a minute or more. It is not driver work and
    /// no change to the job's code shortens it; what shortens it is capacity ready when the job
    /// starts.
    ///
    /// ## How to fix it
    /// - Ask for executors the cluster can give at once: fewer or smaller ones
    ///   (`spark.executor.instances`, `spark.executor.memory`, `spark.executor.cores`) fit a busy
    ///   queue sooner; with dynamic allocation, `spark.dynamicAllocation.initialExecutors`.
    /// - YARN: a queue with free capacity; Kubernetes: nodes ready (a warm node pool, images
    ///   pulled in advance); Databricks: an instance pool for the job cluster, or a warm cluster.
    /// - A long first deserialisation is a large closure or many classes: broadcast big lookup
    ///   data explicitly, and keep large objects out of the functions sent to executors.
    ///
    /// ## Threshold and its source
    /// The first job waited at least `min_wait_s` = 10 s for its first executor; the first
    /// stage's slowest deserialisation is named when it is `min_deserialize_s` = 5 s or more.
    /// On YARN and Kubernetes, a wait from the application's start of at most
    /// `container_start_s` = 30 s is the containers starting, a cost every run pays: low, with
    /// the fix that amortises it (several steps in one application or on a running cluster).
    /// The saving is the wait itself: what executors ready at submission would have recovered.
    pub static EXECUTOR_WAIT = {
        code: "UT003",
        name: "waiting-for-executors",
        category: Utilization,
        claims: Saving,
        needs: [Executors, Tasks],
        summary: "The first job waited for executors to register before any task could run",
        thresholds: &[MIN_WAIT_S, MIN_DESERIALIZE_S, CONTAINER_START_S] as &[Threshold],
        check: check,
    };
}

/// A first job submitted this soon after the first executor was waiting for it.
const FOLLOWED_AT_ONCE_MS: i64 = 3_000;

/// SparkContext holds the program until this share of the executors registered
/// (`spark.scheduler.minRegisteredResourcesRatio`: 0.8 on YARN and Kubernetes, 0 elsewhere).
fn waits_for_executors(app: &sparkdiag_model::Application) -> bool {
    match app
        .spark_properties
        .get("spark.scheduler.minRegisteredResourcesRatio")
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        Some(ratio) => ratio > 0.0,
        None => matches!(app.cluster_manager(), Some("yarn" | "kubernetes")),
    }
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_uppercase().chain(chars).collect())
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    if matches!(app.cluster_manager(), Some("local")) {
        return Vec::new();
    }
    let Some(first_job) = app
        .jobs
        .iter()
        .filter(|j| j.submission_ms.is_some())
        .min_by_key(|j| (j.submission_ms, j.job_id))
    else {
        return Vec::new();
    };
    let submitted = first_job.submission_ms.unwrap();
    let Some(first_executor) = app
        .executors
        .iter()
        .filter(|e| e.id != "driver")
        .filter_map(|e| e.added_ms)
        .min()
    else {
        return Vec::new();
    };
    // Either the job was submitted first and waited, or SparkContext held the program until
    // executors registered (spark.scheduler.minRegisteredResourcesRatio) and the job followed
    // at once: then the whole start to the first executor was the wait.
    let (from, waited) = if submitted < first_executor {
        (submitted, "the first job waited")
    } else if submitted - first_executor <= FOLLOWED_AT_ONCE_MS
        && waits_for_executors(app)
        && let Some(start) = app.start_ms
        && start < first_executor
    {
        (start, "the application waited")
    } else {
        return Vec::new();
    };
    // A clock that jumped between the two is not time anyone waited.
    let wait = app.span_without_jumps_ms(from, first_executor);
    if (wait as f64) < t.get(&MIN_WAIT_S) * 1000.0 {
        return Vec::new();
    }
    // The first stage to launch a task: its slowest deserialisation is the fresh executors'.
    let first_stage = app
        .stages
        .iter()
        .enumerate()
        .filter(|(_, s)| s.first_task_launched_ms.is_some())
        .min_by_key(|(_, s)| s.first_task_launched_ms);
    let deserialize_ms = first_stage.map_or(0, |(i, _)| {
        i64::from(ctx.stages[i].facts.max_deserialize_ms)
    });
    let mut title = format!(
        "{} {} for its first executor to register before any task could run (job {})",
        capitalised(waited),
        duration(wait),
        first_job.job_id,
    );
    if (deserialize_ms as f64) >= t.get(&MIN_DESERIALIZE_S) * 1000.0
        && let Some((_, stage)) = first_stage
    {
        title += &format!(
            ", and a first task of stage {} spent {} deserialising",
            stage.stage_id,
            duration(deserialize_ms)
        );
    }
    let platform = match (app.platform(), app.cluster_manager()) {
        (sparkdiag_model::Platform::Databricks, _) => {
            "On Databricks, start the job cluster from an instance pool (or run on a warm cluster): this is the cluster starting, not driver work to move into Spark."
        }
        (_, Some("kubernetes")) => {
            "On Kubernetes, have nodes ready (a warm node pool, the image pulled in advance) or ask for fewer, smaller executors (spark.executor.instances, spark.executor.memory)."
        }
        (_, Some("yarn")) => {
            "On YARN, run in a queue with free capacity or ask for fewer, smaller executors (spark.executor.instances, spark.executor.memory) that the queue can give at once."
        }
        _ => {
            "Ask for executors the cluster can give at once: fewer or smaller ones (spark.executor.instances, spark.executor.memory, spark.executor.cores)."
        }
    };
    let container_start = from != submitted
        && matches!(app.cluster_manager(), Some("yarn" | "kubernetes"))
        && (wait as f64) <= t.get(&CONTAINER_START_S) * 1000.0;
    let mut advice = if container_start {
        format!(
            "{} is how long {} containers usually take to start: a fixed cost of each run rather than waste in the job. It is recovered only by paying it once for several steps: run them in one application, or submit them to a cluster that is already running (an EMR cluster kept for a batch of steps, not one per job). {platform}",
            duration(wait),
            if app.cluster_manager() == Some("yarn") {
                "YARN"
            } else {
                "Kubernetes"
            },
        )
    } else {
        platform.to_string()
    };
    if app.dynamic_allocation() {
        advice += " With dynamic allocation, spark.dynamicAllocation.initialExecutors starts some at once.";
    }
    vec![
        Finding::new(
            &EXECUTOR_WAIT,
            Severity::from_share(wait, ctx.app_ms),
            title,
            wait,
        )
        .severity_at_most(if container_start {
            Severity::Low
        } else {
            Severity::Critical
        })
        .during(from, first_executor)
        .jobs([first_job.job_id])
        .evidence("first_job_submitted_ms", submitted)
        .evidence("first_executor_added_ms", first_executor)
        .evidence("wait_ms", wait)
        .evidence("first_stage_max_deserialize_ms", deserialize_ms)
        .evidence("container_start", container_start)
        .evidence(
            "assumption",
            "executors ready when the first job was submitted",
        )
        .recommend(advice),
    ]
}

/// The rule alone on real Spark output. Where it fires (a YARN log whose first job waited 26 s
/// for executors) is in `tests/trust.rs`, as that log is one of `../shared`'s.
#[cfg(test)]
mod real_logs {
    use super::EXECUTOR_WAIT;
    use crate::rules::testing::{assert_quiet, on_log};

    /// `local-cluster`: executors registered 37 s after the start and the first job followed,
    /// but a standalone SparkContext does not hold the program for executors, so the log cannot
    /// say the program waited for them rather than ran its own code.
    #[test]
    fn is_quiet_where_spark_does_not_wait_for_executors() {
        assert_quiet(&on_log(&EXECUTOR_WAIT, "trust/dynamic-allocation", &[]));
    }

    #[test]
    fn is_quiet_in_local_mode() {
        assert_quiet(&on_log(&EXECUTOR_WAIT, "patterns/healthy", &[]));
    }
}
