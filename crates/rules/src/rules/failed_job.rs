//! FA001 failed-job: the post-mortem of each failed job — which stage, task and exception.

use super::common::duration;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_model::{AppStatus, JobStatus, StageStatus};

declare_rule! {
    /// ## What it does
    /// For every failed job, finds the stage that failed it, the first task failure in that
    /// stage (its executor, host, end reason, exception class and message) and how many
    /// attempts failed the same way, and says how long the job ran before it was lost.
    ///
    /// ## Why is this bad?
    /// A failed job's work is lost, and its error is usually buried in a long stage failure
    /// message whose first line names the wrong exception (`SparkException: Job aborted`).
    ///
    /// ## How to fix it
    /// Read the exception the finding names. The usual causes and fixes:
    /// - `OutOfMemoryError` / `ExecutorLostFailure` with exit code 137 or "exceeding memory
    ///   limits": more `spark.executor.memory` or `spark.executor.memoryOverhead`, smaller
    ///   partitions, no skewed partition (SK001).
    /// - `FetchFailed`: an executor holding shuffle output died; fix that executor's failure and
    ///   consider the external shuffle service (`spark.shuffle.service.enabled=true`).
    /// - An exception from user code (a Python UDF, a bad record): the message names the row.
    ///
    /// ## Threshold and its source
    /// Any failed job. Critical when it failed the application (exit code, or the first failure
    /// of a failed application), high otherwise; medium for a job only cancelled because the
    /// application was shutting down, and for a failed command in an interactive session.
    pub static FAILED_JOB = {
        code: "FA001",
        name: "failed-job",
        category: Failure,
        summary: "A job failed: the stage, task and exception that killed it",
        thresholds: &[] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    let end = app.effective_end_ms().unwrap_or(0);
    let last_finished = app
        .jobs
        .iter()
        .filter(|j| j.completion_ms.is_some())
        .max_by_key(|j| (j.completion_ms, j.job_id))
        .map(|j| j.job_id);
    // In time order, causes before consequences: a job cancelled because the SparkContext shut
    // down is what another failure did, not a failure of its own.
    let mut failed: Vec<&sparkdiag_model::Job> = app
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Failed)
        .collect();
    failed.sort_by_key(|j| (is_cascade(j), j.completion_ms.unwrap_or(end), j.job_id));
    let root_job = failed.first().filter(|j| !is_cascade(j)).map(|j| j.job_id);
    let mut findings = Vec::new();
    for job in failed {
        let lost_ms = job.completion_ms.unwrap_or(end) - job.submission_ms.unwrap_or(end);
        // The failed stage attempt of this job; its first failed task is where it started.
        let stage = app
            .stages
            .iter()
            .filter(|s| s.status == StageStatus::Failed && s.job_ids.contains(&job.job_id))
            .min_by_key(|s| s.completion_ms);
        let failures: Vec<&sparkdiag_model::TaskFailure> = app
            .task_failures
            .iter()
            .filter(|f| {
                // Kills and resubmissions are what a failure did to other tasks, not its cause.
                !matches!(
                    f.reason.as_str(),
                    "TaskKilled" | "TaskCommitDenied" | "Resubmitted"
                ) && stage
                    .is_none_or(|s| f.stage_id == s.stage_id && f.stage_attempt_id == s.attempt_id)
            })
            .filter(|f| {
                stage.is_some()
                    || app
                        .stages
                        .iter()
                        .any(|s| s.stage_id == f.stage_id && s.job_ids.contains(&job.job_id))
            })
            .collect();
        let first = failures.iter().min_by_key(|f| (f.finish_ms, f.task_id));
        let mut cause = first
            .map(describe_failure)
            .or_else(|| job.failure.as_ref().map(|m| first_line(m)))
            .unwrap_or_else(|| "no reason recorded".into());
        // A fetch failure is what a lost executor did: name the loss that started the chain.
        let fetch = failures
            .iter()
            .filter(|f| f.reason == "FetchFailed")
            .min_by_key(|f| (f.finish_ms, f.task_id));
        let origin = fetch.and_then(|f| executor_loss_before(app, f.finish_ms));
        if let (Some(origin), Some(fetch)) = (&origin, fetch) {
            cause = format!("{origin} → {}", describe_failure(fetch));
        }
        let same_cause = first.map_or(0, |f| {
            failures
                .iter()
                .filter(|g| g.reason == f.reason && g.exception_class == f.exception_class)
                .count()
        });
        let cascade = is_cascade(job);
        let failed_app = app.status() == AppStatus::Failed
            && (root_job == Some(job.job_id)
                || (root_job.is_none() && last_finished == Some(job.job_id)));
        // A command that failed in a shell or notebook is the person's to retry, not an incident.
        let severity = if failed_app {
            Severity::Critical
        } else if cascade || app.interactive().is_some() {
            Severity::Medium
        } else {
            Severity::High
        };
        match root_job {
            Some(root) if cascade && root != job.job_id => {
                cause = format!("{cause} (a consequence of job {root}'s failure)");
            }
            // Nothing failed before it: the application was stopped while this job ran, and
            // what its tasks then hit (a closed filesystem, say) is the shutdown's doing.
            _ if cascade => {
                cause = format!(
                    "SparkContext was shut down while it ran; its tasks then failed with {cause}"
                );
            }
            _ => {}
        }
        let title = match stage {
            Some(s) => format!(
                "Job {} failed after {}: stage {}{} aborted — {}",
                job.job_id,
                duration(lost_ms),
                s.stage_id,
                if s.attempt_id > 0 {
                    format!(" (attempt {})", s.attempt_id)
                } else {
                    String::new()
                },
                cause
            ),
            None => format!(
                "Job {} failed after {}: {}",
                job.job_id,
                duration(lost_ms),
                cause
            ),
        };
        let mut finding = Finding::new(&FAILED_JOB, severity, title, lost_ms)
            .jobs([job.job_id])
            .evidence("job_id", job.job_id)
            .evidence("job_duration_ms", lost_ms)
            .evidence("failed_task_attempts", failures.len())
            .evidence("attempts_with_the_same_cause", same_cause)
            .evidence("failed_the_application", failed_app)
            .evidence("consequence_of_another_failure", cascade)
            .evidence("failed_at_ms", job.completion_ms.unwrap_or(end))
            .evidence("started_by", origin.clone())
            .evidence("job_failure", job.failure.as_deref().map(first_line))
            .recommend(if cascade {
                "This job was stopped because the application was shutting down: fix the first failure (the finding's lead job) and it will run.".to_string()
            } else {
                recommendation(ctx, first.copied(), origin.is_some())
            });
        if let Some(s) = stage {
            finding = finding
                .stages([s.stage_id])
                .evidence("stage_attempt", s.attempt_id)
                .evidence(
                    "stage_failure_reason",
                    s.failure_reason.as_deref().map(first_line),
                );
        }
        if let Some(f) = first {
            let executor = &app.executors[f.executor as usize];
            finding = finding
                .executors([executor.id.clone()])
                .evidence("first_failure", serde_json::json!({
                    "task_id": f.task_id, "stage_id": f.stage_id, "stage_attempt": f.stage_attempt_id,
                    "executor": executor.id, "host": executor.host, "reason": f.reason,
                    "exception_class": f.exception_class, "message": f.message.as_deref().map(|m| truncate(m, 1000)),
                }));
        }
        findings.push(finding);
    }
    findings
}

/// One line naming the failure: `ExceptionFailure: java.lang.OutOfMemoryError: Java heap space`.
pub fn describe_failure(f: &&sparkdiag_model::TaskFailure) -> String {
    let message = f.message.as_deref().map(key_line).unwrap_or_default();
    match &f.exception_class {
        Some(class) if message.contains(class.as_str()) => message,
        Some(class) => format!("{class}: {message}"),
        None if message.is_empty() => f.reason.clone(),
        None => format!("{}: {message}", f.reason),
    }
}

/// The most telling line of an error message: for Python tracebacks the last line that names
/// an exception (`ValueError: bad row 1234`), otherwise the first line.
fn key_line(message: &str) -> String {
    let lines: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    let python = lines.iter().rev().find(|l| {
        let head = l.split(':').next().unwrap_or_default();
        !l.starts_with("File ") && (head.ends_with("Error") || head.ends_with("Exception"))
    });
    truncate(python.or(lines.first()).copied().unwrap_or_default(), 300)
}

fn first_line(message: &str) -> String {
    truncate(message.lines().next().unwrap_or_default(), 300)
}

fn truncate(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(max).collect::<String>())
    }
}

/// A job the driver cancelled because the application was going down, not a failure itself.
fn is_cascade(job: &sparkdiag_model::Job) -> bool {
    let m = job.failure.as_deref().unwrap_or_default();
    m.contains("SparkContext was shut down")
        || m.contains("cancelled because")
        || m.contains("cancelled as part of cancellation of all jobs")
}

/// The executor loss that came before a fetch failure at `at`: the latest lost executor removal
/// or `ExecutorLostFailure` task end at or before it.
fn executor_loss_before(app: &sparkdiag_model::Application, at: i64) -> Option<String> {
    let removed = app
        .executors
        .iter()
        .filter(|e| e.removed_ms.is_some_and(|r| r <= at))
        .filter(|e| {
            matches!(
                app.removal(e),
                sparkdiag_model::Removal::Lost | sparkdiag_model::Removal::KilledByClusterManager
            )
        })
        .max_by_key(|e| e.removed_ms)
        .map(|e| {
            (
                e.removed_ms.unwrap_or_default(),
                loss_text(
                    e,
                    e.removed_reason
                        .as_deref()
                        .and_then(|r| r.lines().next())
                        .unwrap_or("no reason recorded"),
                ),
            )
        });
    let task_loss = app
        .task_failures
        .iter()
        .filter(|f| f.reason == "ExecutorLostFailure" && f.finish_ms <= at)
        .max_by_key(|f| f.finish_ms)
        .map(|f| {
            let e = &app.executors[f.executor as usize];
            (
                f.finish_ms,
                loss_text(
                    e,
                    f.message
                        .as_deref()
                        .and_then(|m| m.lines().next())
                        .unwrap_or("ExecutorLostFailure"),
                ),
            )
        });
    [removed, task_loss]
        .into_iter()
        .flatten()
        .min_by_key(|(t, _)| *t)
        .map(|(_, text)| text)
}

/// "executor 1 on host lost (Command exited with code 137: SIGKILL — …)".
fn loss_text(e: &sparkdiag_model::Executor, reason: &str) -> String {
    let means = sparkdiag_model::exit_code_of(reason)
        .and_then(sparkdiag_model::explain_exit_code)
        .map(|m| format!(": {m}"))
        .unwrap_or_default();
    format!("executor {} on {} lost ({reason}{means})", e.id, e.host)
}

fn recommendation(
    ctx: &Context,
    first: Option<&sparkdiag_model::TaskFailure>,
    after_loss: bool,
) -> String {
    if after_loss {
        return format!(
            "An executor died and took its shuffle output with it, so the next stage could not fetch it: fix why the executor died (FA003: memory limits, preemption, heartbeats), and {}.",
            super::common::keep_shuffle_output(ctx)
        );
    }
    let Some(f) = first else {
        return "Read the job's failure message; the log holds no failed task for it.".into();
    };
    let text = format!(
        "{} {}",
        f.exception_class.as_deref().unwrap_or(""),
        f.message.as_deref().unwrap_or("")
    );
    if text.contains("OutOfMemoryError")
        || text.contains("exceeding memory limits")
        || text.contains("exit code 137")
    {
        "Out of memory: raise spark.executor.memory or spark.executor.memoryOverhead, use smaller partitions (more shuffle partitions), and check for a skewed partition (SK001).".into()
    } else if f.reason == "FetchFailed" {
        format!(
            "Shuffle output was lost with its executor: find why that executor died (FA003), and {}.",
            super::common::keep_shuffle_output(ctx)
        )
    } else if f.reason == "ExecutorLostFailure" {
        "The executor running the task was lost: see FA003 for its removal reason (memory limits, preemption, heartbeat timeouts).".into()
    } else {
        "The task failed in the job's own code: fix the error the message names (the failing record or UDF), or filter out the bad input.".into()
    }
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::FAILED_JOB;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_failed_job() {
        assert_fires(&on_log(&FAILED_JOB, "failed", &[]), FAILED_JOB.code);
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&FAILED_JOB, "patterns/healthy", &[]));
    }
}
