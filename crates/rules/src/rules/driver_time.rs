//! DR001 driver-only-time: long stretches when no Spark job ran.

use super::common::duration;
use crate::context::task_executors;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};
use sparkdiag_model::Application;

pub const MIN_SHARE: Threshold = threshold(
    "min_share",
    0.30,
    "share",
    "driver-only share of the application worth a finding",
    "Compass (uncovered job time over 30 %)",
);

pub const MIN_DRIVER_S: Threshold = threshold(
    "min_driver_s",
    30.0,
    "s",
    "driver-only time worth a finding",
    "sparkdiag's own guard",
);

pub const GAP_S: Threshold = threshold(
    "gap_s",
    60.0,
    "s",
    "a gap between jobs this long is listed",
    "the Databricks Spark UI guide (job gaps of a minute or more)",
);

declare_rule! {
    /// ## What it does
    /// Measures the wall-clock time during which no Spark job was running — before the first
    /// job, between jobs and after the last — and flags applications where this driver-only time
    /// is a large share of the run. It names the longest gaps and the jobs around them.
    ///
    /// ## Why is this bad?
    /// While no job runs, the run gets longer and every executor core held is idle but paid for.
    /// The finding counts the executor core time actually held then (`idle_core_ms`), and names
    /// the part before any executor had registered (`before_first_executor_ms`): there no core
    /// idles, and it is the driver's start-up and code or the wait for executors. Typical causes: Python or
    /// Scala code on the driver (pandas work, `collect()` then loops, API calls, `time.sleep`),
    /// planning of very large query plans, reading many small files' metadata, or waiting for
    /// executors to start.
    ///
    /// ## How to fix it
    /// - Move driver-side work into Spark: replace `collect()` + Python loops with DataFrame
    ///   operations; use `mapInPandas`/`applyInPandas` rather than pandas on the driver.
    /// - Replace loops that run one small job per item with one job over all items (DR002).
    /// - Start with executors ready (`spark.dynamicAllocation.initialExecutors`) and release them
    ///   during long driver phases (`spark.dynamicAllocation.enabled=true`; where it is on already,
    ///   the advice names what keeps executors: a long idle timeout, `minExecutors`, cached data).
    ///
    /// ## Threshold and its source
    /// Driver-only time over `min_share` = 30 % of the application (Compass: uncovered job time
    /// over 30 %) and at least `min_driver_s` = 30 s; gaps of `gap_s` = 60 s or more are listed
    /// (the Databricks Spark UI guide: job gaps of a minute or more point to the driver).
    pub static DRIVER_TIME = {
        code: "DR001",
        name: "driver-only-time",
        category: DriverBound,
        claims: Symptom,
        needs: [Jobs],
        summary: "Much of the application's time passed with no Spark job running",
        thresholds: &[
            MIN_SHARE,
            MIN_DRIVER_S,
            GAP_S,
        ] as &[Threshold],
        check: check,
        batch_only: true,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    let (Some(start), Some(end)) = (app.start_ms, app.effective_end_ms()) else {
        return Vec::new();
    };
    // No job at all is a log fragment or an application that never used Spark: nothing to
    // compare the driver's time with.
    if app.jobs.is_empty() {
        return Vec::new();
    }
    let (_, all_driver_ms) = app.job_and_driver_time_ms();
    // Walk the jobs in time order, tracking how far job coverage reaches.
    let mut jobs: Vec<&sparkdiag_model::Job> = app
        .jobs
        .iter()
        .filter(|j| j.submission_ms.is_some())
        .collect();
    jobs.sort_by_key(|j| j.submission_ms);
    let first = jobs
        .first()
        .and_then(|j| j.submission_ms)
        .map_or(end - start, |s| (s - start).max(0));
    let mut reach = jobs.first().and_then(|j| j.submission_ms).unwrap_or(end);
    let mut previous: Option<i64> = None;
    let mut gaps: Vec<(i64, Option<i64>, i64)> = Vec::new();
    // The driver-only stretches themselves: the only time this finding can claim.
    let mut windows = vec![(start, reach.min(end))];
    for job in &jobs {
        let s = job.submission_ms.unwrap();
        if s > reach {
            gaps.push((s - reach, previous, job.job_id));
            windows.push((reach, s));
        }
        reach = reach.max(job.completion_ms.unwrap_or(end));
        previous = Some(job.job_id);
    }
    let after_last = (end - reach).max(0);
    windows.push((reach, end));
    // Without the stretches the clock jumped over: those are no one's time.
    let jumped: i64 = app
        .clock_jumps
        .iter()
        .map(|&(s, e)| {
            windows
                .iter()
                .map(|&(ws, we)| (we.min(e) - ws.max(s)).max(0))
                .sum::<i64>()
        })
        .sum();
    let driver_ms = (all_driver_ms - jumped).max(0);
    let held_core_ms = core_ms_held_during(app, &windows, end);
    let before_first_executor = first_executor_ms(app).map_or(0, |registered| {
        (registered.min(start + first) - start).max(0)
    });
    if (driver_ms as f64) < t.get(&MIN_DRIVER_S) * 1000.0
        || (driver_ms as f64) < t.get(&MIN_SHARE) * ctx.app_ms as f64
    {
        return Vec::new();
    }
    let between: i64 = gaps.iter().map(|g| g.0).sum();
    gaps.sort_by_key(|g| std::cmp::Reverse(g.0));
    let long_gaps: Vec<serde_json::Value> = gaps
        .iter()
        .filter(|g| g.0 as f64 >= t.get(&GAP_S) * 1000.0)
        .take(5)
        .map(|(ms, before, after)| serde_json::json!({"gap_ms": ms, "after_job": before, "before_job": after}))
        .collect();
    let title = format!(
        "No Spark job ran for {} of the application's {} ({}): {} before the first job, {} between jobs, {} after the last",
        duration(driver_ms),
        duration(ctx.app_ms),
        ctx.percent_of_app(driver_ms),
        duration(first),
        duration(between),
        duration(after_last)
    );
    if let Some(why) = app.interactive() {
        // People think between commands: that is not time a fix to the application recovers.
        let title = format!(
            "Interactive session: {why}; no Spark job ran for {} of its {} ({}), the time between commands",
            duration(driver_ms),
            duration(ctx.app_ms),
            ctx.percent_of_app(driver_ms)
        );
        return vec![
            Finding::new(&DRIVER_TIME, Severity::Info, title, 0)
                .evidence("interactive", why)
                .evidence("driver_only_ms", driver_ms)
                .evidence("idle_core_ms", held_core_ms)
                .recommend(format!("Nothing to fix in the code: run finished notebooks as scheduled batch jobs, and release idle executors while nobody is typing: {}.", super::common::release_idle_executors(ctx))),
        ];
    }
    let move_work = "Move driver-side work into Spark (DataFrame operations instead of collect() and Python loops)";
    // Releasing executors is worth saying only where this time held them; where it did not,
    // the cost was the run's length, not paid-for idle cores.
    let mut advice = if held_core_ms as f64
        >= HELD_SHARE_WORTH_RELEASING * (driver_ms * ctx.cores) as f64
    {
        format!(
            "{move_work}, replace loops of small jobs with one job (DR002), and release executors during long driver phases: {}",
            super::common::release_idle_executors(ctx)
        )
    } else {
        format!(
            "{move_work} and replace loops of small jobs with one job (DR002); executors were held for little of it ({} of core time), so it cost the run's length rather than idle cores",
            duration(held_core_ms)
        )
    };
    advice.push('.');
    let databricks = app.platform() == sparkdiag_model::Platform::Databricks;
    if databricks && first as f64 >= BEFORE_EXECUTORS_WORTH_SAYING * driver_ms as f64 {
        // On Databricks the start before the first job is mostly the cluster coming up: capacity
        // ready in advance shortens it, not a change to the job's code.
        let start_up = databricks_start_up(app, first);
        advice = if first * 2 >= driver_ms {
            format!("{start_up} For the rest: {}", lowercase_first(&advice))
        } else {
            format!("{advice} {start_up}")
        };
    } else if before_first_executor as f64 >= BEFORE_EXECUTORS_WORTH_SAYING * driver_ms as f64 {
        advice += &format!(
            " {} of the time before the first job passed before any executor had registered: {}.",
            duration(before_first_executor),
            before_executors_cause(ctx)
        );
    }
    let mut finding = Finding::new(
        &DRIVER_TIME,
        Severity::from_share(driver_ms, ctx.app_ms),
        title,
        driver_ms,
    )
    .proposes(
        crate::Change::RemoveDriverGaps,
        "every millisecond no job ran",
    )
    .evidence("driver_only_ms", driver_ms)
    .evidence("before_first_job_ms", first)
    .evidence("before_first_executor_ms", before_first_executor)
    .evidence("between_jobs_ms", between)
    .evidence("after_last_job_ms", after_last)
    .evidence("idle_core_ms", held_core_ms)
    .evidence("longest_gaps", serde_json::Value::Array(long_gaps))
    .recommend(advice);
    for (s, e) in windows {
        finding = finding.during(s, e);
    }
    if let Some((_, before, after)) = gaps.first() {
        finding = finding.jobs(before.iter().copied().chain([*after]));
    }
    vec![finding]
}

/// Below this share of the peak cores held through the driver-only time, releasing executors
/// would recover little: they were already gone, or not yet there.
const HELD_SHARE_WORTH_RELEASING: f64 = 0.1;

/// The wait for the first executor is named when it is this share of the driver-only time.
const BEFORE_EXECUTORS_WORTH_SAYING: f64 = 0.25;

/// When the first executor that runs tasks registered.
fn first_executor_ms(app: &Application) -> Option<i64> {
    task_executors(app)
        .filter(|e| e.cores.is_some())
        .filter_map(|e| e.added_ms)
        .min()
}

/// Executor core time held during `windows`: each executor's cores from its registration to its
/// removal (or the application's end), within each window.
fn core_ms_held_during(app: &Application, windows: &[(i64, i64)], end: i64) -> i64 {
    task_executors(app)
        .filter_map(|e| {
            Some((
                e.cores?,
                e.added_ms.or(app.start_ms)?,
                e.removed_ms.unwrap_or(end),
            ))
        })
        .map(|(cores, added, removed)| {
            let held: i64 = windows
                .iter()
                .map(|&(from, to)| (to.min(removed) - from.max(added)).max(0))
                .sum();
            cores * held
        })
        .sum()
}

/// The start-up advice that fits Databricks: a job cluster starts from an instance pool or runs
/// on serverless jobs compute; an all-purpose cluster stays warm in a pool.
fn databricks_start_up(app: &Application, first_ms: i64) -> String {
    let how = if app.databricks_job_run_evidence().is_some() {
        "start the job cluster from an instance pool (idle instances kept ready, set in the cluster's instance_pool_id), run the task on serverless jobs compute (no cluster to start), or run several tasks of the job on one shared job cluster so that only the first pays for the start"
    } else {
        "attach to a running cluster, keep its nodes ready in an instance pool with the runtime preloaded, or use serverless compute; libraries in a custom container image (Databricks Container Services) rather than installed at each start"
    };
    format!(
        "On Databricks, the {} before the first job is mostly the cluster starting (nodes acquired, the runtime, init scripts and libraries): {how}. That is not driver work to move into Spark.",
        duration(first_ms)
    )
}

/// "Move driver-side work ..." as the rest of a sentence.
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map_or(String::new(), |c| c.to_lowercase().chain(chars).collect())
}

/// What the driver waited on before any executor was there, as far as the settings tell.
fn before_executors_cause(ctx: &Context) -> &'static str {
    let requested_at_start = ["initialExecutors", "minExecutors"].iter().any(|key| {
        super::common::property(ctx, &format!("spark.dynamicAllocation.{key}"))
            .and_then(|v| v.parse::<i64>().ok())
            .is_some_and(|n| n > 0)
    }) || super::common::property(ctx, "spark.executor.instances")
        .is_some();
    if ctx.app.dynamic_allocation() && !requested_at_start {
        // Dynamic allocation asks for executors only once tasks wait, so none were on their way.
        "with dynamic allocation and no initial executors, none are asked for before a job needs them, so this is the driver's own start-up and code"
    } else {
        "the driver's start-up, its code before the first action, and the cluster manager granting executors all fall here, and the log cannot tell them apart"
    }
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::DRIVER_TIME;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_serial_driver_loop() {
        assert_fires(
            &on_log(&DRIVER_TIME, "patterns/driver-loop-serial", &[]),
            DRIVER_TIME.code,
        );
    }

    #[test]
    fn is_quiet_on_the_loop_rewritten_as_one_job() {
        assert_quiet(&on_log(&DRIVER_TIME, "patterns/driver-loop-fixed", &[]));
    }
}
