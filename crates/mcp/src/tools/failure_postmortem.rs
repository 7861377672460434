//! `failure_postmortem`: why an application failed, in one verdict and the evidence under it.

use serde_json::{Value, json};
use sparkdiag_contract::{AppStatus, FindingOut, JobOut, JobStatus, Removal, StageStatus};

use super::common::{cut, finding_row, messages_cut};
use super::{Args, Failure, Tool, Tools, path_props};

pub static TOOL: Tool = Tool {
    name: "failure_postmortem",
    title: "Why did the application fail",
    description: "The failure post-mortem of one application: a one-sentence verdict, then the application's status, exit code and outcome; the failed jobs with their code sites and failure messages; the failed stages with their reasons; task failures grouped by cause (exception class, message, count, stages, executors); executors lost (how they left, exit code and what it means); failed SQL executions; and the failure findings in full with their fixes. Long stack traces are cut to their first lines.",
    arguments: || path_props(&[]),
    required: &["path"],
    run,
};

/// Failed jobs, failed stages and lost executors past this many are left out.
const EACH: usize = 20;

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let analysis = tools.load_args(args)?;
    let r = &analysis.report;
    let mut omitted = Vec::new();
    let failed_jobs: Vec<&JobOut> = r
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Failed)
        .collect();
    let failed_stages: Vec<Value> = r
        .stages
        .iter()
        .filter(|s| s.status == StageStatus::Failed)
        .map(|s| {
            json!({
                "stage_id": s.stage_id, "attempt_id": s.attempt_id, "name": s.name,
                "num_tasks": s.num_tasks, "failed_tasks": s.failed_tasks,
                "failure_reason": s.failure_reason.as_deref().map(|t| cut(t, 2000)),
            })
        })
        .collect();
    let executors_lost: Vec<Value> = r
        .executors
        .iter()
        .filter(|e| matches!(e.removal, Removal::Lost | Removal::KilledByClusterManager))
        .map(|e| {
            json!({
                "executor_id": e.executor_id, "host": e.host, "removal": e.removal,
                "removed_ms": e.removed_ms,
                "removed_reason": e.removed_reason.as_deref().map(|t| cut(t, 800)),
                "exit_code": e.exit_code,
                "exit_code_means": e.exit_code_means,
                "failed_tasks": e.failed_tasks,
            })
        })
        .collect();
    for (what, n) in [
        ("failed jobs", failed_jobs.len()),
        ("failed stages", failed_stages.len()),
        ("executors lost", executors_lost.len()),
    ] {
        if n > EACH {
            omitted.push(format!("{} more {what}", n - EACH));
        }
    }
    let sql_errors: Vec<Value> = r
        .sql
        .iter()
        .filter_map(|s| Some((s, s.error.as_deref()?)))
        .take(10)
        .map(|(s, error)| {
            json!({
                "execution_id": s.execution_id,
                "description": cut(&s.description, 500),
                "error": cut(error, 2000),
                "job_ids": s.job_ids,
            })
        })
        .collect();
    let failure_findings: Vec<(usize, &FindingOut)> = r
        .findings
        .iter()
        .enumerate()
        .filter(|(_, f)| f.finding.category == sparkdiag_contract::Category::Failure)
        .take(10)
        .collect();
    let a = &r.application;
    let verdict = verdict(
        a,
        &failed_jobs,
        failure_findings.first().map(|(_, f)| *f),
        executors_lost.len(),
    );
    Ok(json!({
        "verdict": verdict,
        "application": {
            "id": a.id, "name": a.name, "status": a.status, "outcome": a.outcome,
            "exit_code": a.exit_code, "duration_ms": a.duration_ms,
            "spark_version": a.spark_version, "platform": a.platform,
            "log_complete": r.source.complete, "log_in_progress": r.source.in_progress,
        },
        "failed_jobs": failed_jobs.iter().take(EACH).map(|j| json!({
            "job_id": j.job_id, "call_site": j.call_site,
            "description": j.description, "failed_stages": j.failed_stages,
            "failed_tasks": j.failed_tasks, "duration_ms": j.duration_ms,
            "failure": j.failure.as_deref().map(|t| cut(t, 2000)),
        })).collect::<Vec<_>>(),
        "failed_stages": failed_stages.into_iter().take(EACH).collect::<Vec<_>>(),
        "task_failures": messages_cut(sparkdiag_analysis::detail::task_failures(&analysis)),
        "executors_lost": executors_lost.into_iter().take(EACH).collect::<Vec<_>>(),
        "failed_sql_executions": sql_errors,
        "failure_findings": failure_findings
            .iter()
            .map(|(i, f)| finding_row(f, i + 1, true))
            .collect::<Vec<_>>(),
        "omitted": omitted,
    }))
}

fn verdict(
    a: &sparkdiag_contract::ApplicationOut,
    failed_jobs: &[&JobOut],
    top_failure: Option<&FindingOut>,
    executors_lost: usize,
) -> String {
    let name = a.name.as_deref().unwrap_or("the application");
    if failed_jobs.is_empty() && top_failure.is_none() && a.status != AppStatus::Failed {
        return format!("{name} {}: no job failed.", a.outcome);
    }
    let mut parts = vec![format!("{name}: {}", a.outcome)];
    // The failure rule's title tells the chain (an executor lost, then the fetch failures);
    // the job's own message is the fallback.
    match (top_failure, failed_jobs.first()) {
        (Some(f), job) => {
            let site = job
                .map(|j| format!(" (called from {})", j.call_site))
                .unwrap_or_default();
            parts.push(format!("{}{site}", f.finding.title));
        }
        (None, Some(job)) => {
            let why = job
                .failure
                .as_deref()
                .and_then(root_cause)
                .map(|l| cut(l, 300))
                .unwrap_or_else(|| "no reason in the log".into());
            parts.push(format!(
                "job {} ({}) failed: {why}",
                job.job_id, job.call_site
            ));
        }
        (None, None) => {}
    }
    if executors_lost > 0 {
        parts.push(format!("{executors_lost} executor(s) lost or killed"));
    }
    parts.join(". ") + "."
}

/// The line of a failure message that names its cause: the last `Caused by:` of a JVM stack
/// trace, else the last line that reads `SomeError: message` (a Python traceback's last
/// line), else the first line.
fn root_cause(message: &str) -> Option<&str> {
    let lines: Vec<&str> = message
        .lines()
        .take(400)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if let Some(caused) = lines.iter().rev().find(|l| l.starts_with("Caused by:")) {
        return Some(caused.trim_start_matches("Caused by:").trim());
    }
    let names_an_error = |l: &&&str| {
        let Some((head, _)) = l.split_once(':') else {
            return false;
        };
        !head.contains(' ')
            && ["Error", "Exception", "Exit", "Failure"]
                .iter()
                .any(|w| head.ends_with(w) || head.contains(&format!("{w}.")))
    };
    lines
        .iter()
        .rev()
        .find(names_an_error)
        .or(lines.first())
        .copied()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_root_cause_is_the_last_caused_by_else_the_error_line() {
        let jvm = "org.apache.spark.SparkException: Job aborted\n\tat x\nCaused by: java.io.IOException: disk\n\tat y";
        assert_eq!(super::root_cause(jvm), Some("java.io.IOException: disk"));
        let python = "Traceback (most recent call last):\n  File \"a.py\"\nValueError: bad row 12";
        assert_eq!(super::root_cause(python), Some("ValueError: bad row 12"));
        assert_eq!(super::root_cause("plain words"), Some("plain words"));
    }
}
