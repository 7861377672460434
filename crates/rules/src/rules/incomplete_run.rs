//! FA005 incomplete-run: the log ends without the application ending — what was running.

use super::common::duration;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_model::{JobStatus, StageStatus};

declare_rule! {
    /// ## What it does
    /// When the log has no `SparkListenerApplicationEnd` — the driver was killed, crashed, or
    /// is still running — says when the last event was written and which jobs and stages were
    /// still running then, with how many of their tasks had finished.
    ///
    /// ## Why is this bad?
    /// A killed driver loses all running work, and nothing in Spark's UI says what it was doing.
    /// The last running stage is where to look: a stage that never finishes (skew, a hang, an
    /// external system) or a driver that ran out of memory collecting results.
    ///
    /// ## How to fix it
    /// Look at the running stage named here and its tasks' progress; check the driver's own
    /// logs for its last error (an out-of-memory in `collect()`/`toPandas()` is common: raise
    /// `spark.driver.memory` or `spark.driver.maxResultSize`, or stop collecting large results).
    ///
    /// ## Threshold and its source
    /// Every log without an application end. With jobs running, its impact is the work lost
    /// (how long the running jobs had run): high when that is a minute or more, medium
    /// otherwise. With nothing running, it says when the last job ended and that no work was
    /// lost (low): the driver stopped or was killed after its work, before `SparkContext.stop()`
    /// wrote the end (a `sys.exit` or `os._exit` without `spark.stop()`, a killed container, a
    /// driver still running when the log was copied).
    pub static INCOMPLETE_RUN = {
        code: "FA005",
        name: "incomplete-run",
        category: Failure,
        claims: Outcome,
        needs: [],
        summary: "The application never ended in this log: what was running when it stopped",
        thresholds: &[] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    if app.end_ms.is_some() {
        return Vec::new();
    }
    let last = app.last_event_ms.unwrap_or(0);
    // A job whose result stage (its highest stage id) completed with none of its stages still
    // active has done its work: only its end was not written (a log cut on the job's end line).
    let work_done = |job: &sparkdiag_model::Job| {
        let of_job = |s: &&sparkdiag_model::StageAttempt| s.job_ids.contains(&job.job_id);
        job.stage_ids.iter().max().is_some_and(|result| {
            app.stages
                .iter()
                .any(|s| s.stage_id == *result && s.status == StageStatus::Complete)
        }) && !app
            .stages
            .iter()
            .filter(of_job)
            .any(|s| s.status == StageStatus::Active)
    };
    let running_jobs: Vec<&sparkdiag_model::Job> = app
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Running && !work_done(j))
        .collect();
    let running_stages: Vec<&sparkdiag_model::StageAttempt> = app
        .stages
        .iter()
        .filter(|s| s.status == StageStatus::Active)
        .collect();
    if running_jobs.is_empty() {
        return nothing_running(ctx, last).into_iter().collect();
    }
    let lost: i64 = running_jobs
        .iter()
        .filter_map(|j| j.submission_ms)
        .map(|s| ctx.app.span_without_jumps_ms(s, last).max(0))
        .sum();
    let severity = if lost >= 60_000 {
        Severity::High
    } else {
        Severity::Medium
    };
    let stages_text: Vec<String> = running_stages
        .iter()
        .map(|s| {
            format!(
                "stage {} ({} of {} tasks done)",
                s.stage_id, s.completed_tasks, s.num_tasks
            )
        })
        .collect();
    let title = format!(
        "The log ends {} after the start without an application end; running then: {}",
        duration(ctx.app_ms),
        if stages_text.is_empty() {
            "no stage".to_string()
        } else {
            stages_text.join(", ")
        }
    );
    vec![
        Finding::new(&INCOMPLETE_RUN, severity, title, lost)
            .jobs(running_jobs.iter().map(|j| j.job_id))
            .stages(running_stages.iter().map(|s| s.stage_id))
            .evidence("last_event_ms", last)
            .evidence("running_jobs", running_jobs.len())
            .evidence("running_job_ms", lost)
            .evidence(
                "running_stages",
                serde_json::Value::Array(
                    running_stages
                        .iter()
                        .map(|s| serde_json::json!({"stage_id": s.stage_id, "attempt": s.attempt_id, "name": s.name,
                            "completed_tasks": s.completed_tasks, "num_tasks": s.num_tasks}))
                        .collect(),
                ),
            )
            .evidence("driver_heap_share", driver_heap_share(ctx))
            .recommend(format!("{}Look at the stage that was running and its tasks' progress, and at the driver's own log for its last error; a driver killed while collecting results needs more spark.driver.memory / spark.driver.maxResultSize or no large collect().", driver_lead(ctx))),
    ]
}

/// The log stops with no job running: when the last one ended, and that no work was lost.
/// Nothing when no job ran at all: a fragment or a driver stopped before its first action has
/// no run to speak of, and the source's warnings already say the end is missing.
fn nothing_running(ctx: &Context, last: i64) -> Option<Finding> {
    let app = ctx.app;
    let last_job = app
        .jobs
        .iter()
        .filter_map(|j| j.completion_ms.map(|end| (end, j.job_id)))
        .max();
    let after = match last_job {
        Some((end, id)) => format!(
            "the last job (job {id}) ended {} before the last event",
            duration(app.span_without_jumps_ms(end, last).max(0))
        ),
        // Jobs ran, none with an end in the log, and none with a stage left to run: the log
        // was cut on the last job's end.
        None => format!(
            "job {} had completed its stages (its end is not in the log)",
            app.jobs.iter().map(|j| j.job_id).max()?
        ),
    };
    let title = format!(
        "The log ends {} after the start without an application end, with nothing running: {after}",
        duration(ctx.app_ms),
    );
    let finding = Finding::new(&INCOMPLETE_RUN, Severity::Low, title, 0)
        .evidence("last_event_ms", last)
        .evidence("running_jobs", 0)
        .evidence("running_job_ms", 0)
        .evidence("last_job_end_ms", last_job.map(|(end, _)| end))
        .evidence("driver_heap_share", driver_heap_share(ctx))
        .recommend(format!(
            "{}No work was lost: the driver stopped or was killed after its last job, before SparkContext.stop() wrote the application's end (a sys.exit or os._exit without spark.stop(), a killed driver or container, or a driver still running when the log was copied). Call spark.stop() at the end of the program, and look at the driver's own log for how it ended.",
            driver_lead(ctx)
        ));
    Some(finding)
}

/// A driver whose heap peak came this close to `spark.driver.memory` most likely died of it.
const DRIVER_FULL_SHARE: f64 = 0.9;

/// The driver's peak heap over `spark.driver.memory`, when the log has the driver's peaks.
fn driver_heap_share(ctx: &Context) -> Option<f64> {
    let driver = ctx.app.executors.iter().find(|e| e.id == "driver")?;
    let heap = driver.peak_metrics?.jvm_heap_memory;
    let limit = crate::memory_limits::of(ctx.app).driver_memory_bytes;
    (heap > 0).then(|| heap as f64 / limit.max(1) as f64)
}

fn driver_lead(ctx: &Context) -> String {
    match driver_heap_share(ctx) {
        Some(share) if share >= DRIVER_FULL_SHARE => format!(
            "The driver's heap peaked at {:.0}% of spark.driver.memory ({}): the log most likely stops because the driver ran out of memory; raise spark.driver.memory and keep large results off the driver (write them out instead of collect/toPandas). ",
            share * 100.0,
            crate::memory_limits::setting(crate::memory_limits::of(ctx.app).driver_memory_bytes)
        ),
        _ => String::new(),
    }
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::INCOMPLETE_RUN;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_killed_run() {
        assert_fires(
            &on_log(&INCOMPLETE_RUN, "killed/single", &[]),
            INCOMPLETE_RUN.code,
        );
    }

    #[test]
    fn is_quiet_on_a_run_that_ended() {
        assert_quiet(&on_log(&INCOMPLETE_RUN, "patterns/healthy", &[]));
    }
}
