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
    /// Any failed job. Critical when it failed the application (exit code, or the last job to
    /// finish), high otherwise.
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
    let mut findings = Vec::new();
    for job in app.jobs.iter().filter(|j| j.status == JobStatus::Failed) {
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
                f.reason != "TaskKilled"
                    && stage.is_none_or(|s| {
                        f.stage_id == s.stage_id && f.stage_attempt_id == s.attempt_id
                    })
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
        let cause = first
            .map(describe_failure)
            .or_else(|| job.failure.as_ref().map(|m| first_line(m)))
            .unwrap_or_else(|| "no reason recorded".into());
        let same_cause = first.map_or(0, |f| {
            failures
                .iter()
                .filter(|g| g.reason == f.reason && g.exception_class == f.exception_class)
                .count()
        });
        let failed_app = app.status() == AppStatus::Failed && last_finished == Some(job.job_id);
        let severity = if failed_app {
            Severity::Critical
        } else {
            Severity::High
        };
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
            .evidence("job_failure", job.failure.as_deref().map(first_line))
            .recommend(recommendation(first.copied()));
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

fn recommendation(first: Option<&sparkdiag_model::TaskFailure>) -> String {
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
        "Out of memory: raise spark.executor.memory or spark.executor.memoryOverhead, use smaller partitions (more spark.sql.shuffle.partitions), and check for a skewed partition (SK001).".into()
    } else if f.reason == "FetchFailed" {
        "Shuffle output was lost with its executor: find why that executor died (FA003) and consider the external shuffle service (spark.shuffle.service.enabled=true).".into()
    } else if f.reason == "ExecutorLostFailure" {
        "The executor running the task was lost: see FA003 for its removal reason (memory limits, preemption, heartbeat timeouts).".into()
    } else {
        "The task failed in the job's own code: fix the error the message names (the failing record or UDF), or filter out the bad input.".into()
    }
}
