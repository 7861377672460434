//! FA001 failed-job: the post-mortem of each failed job — which stage, task and exception.

use super::common::{clip, duration};
use crate::memory_limits::MemoryLimits;
use crate::memory_region::{self, MemoryFailure, Region};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_model::{AppStatus, JobStatus, Removal, StageStatus};

declare_rule! {
    /// ## What it does
    /// For every failed job, finds the stage that failed it, the first task failure in that
    /// stage (its executor, host, end reason, exception class and message) and how many
    /// attempts failed the same way, and says how long the job ran before it was lost. A job of
    /// the micro-batch a Structured Streaming query failed in is told in that query's ST003
    /// finding instead, with this post-mortem in it: one finding for one failure.
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
    /// application was shutting down, and for a failed command in an interactive session. Medium
    /// too, not critical, when the log has no exit code (before Spark 3.0) and the application
    /// counts as failed only because its last job was cancelled by a shutdown nothing before
    /// it explains (`evidence.why_the_context_stopped_is_unknown`): the program may have ended
    /// while another thread's job ran.
    pub static FAILED_JOB = {
        code: "FA001",
        name: "failed-job",
        category: Failure,
        claims: Outcome,
        needs: [Jobs],
        summary: "A job failed: the stage, task and exception that killed it",
        thresholds: &[] as &[Threshold],
        check: check,
        lead: FirstCause,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let chain = Chain::of(ctx);
    // A job of the batch a streaming query failed in is that query's post-mortem (ST003).
    let queries = super::streaming_common::failed_query_jobs(ctx.app);
    chain
        .failed
        .iter()
        .filter(|j| !queries.contains(&j.job_id))
        .map(|job| post_mortem(ctx, &chain, job))
        .collect()
}

/// What every failed job's post-mortem reads: the failed jobs in time order, causes before
/// consequences, the first of them that is a root, and the last job that finished.
struct Chain<'a> {
    failed: Vec<&'a sparkdiag_model::Job>,
    root_job: Option<i64>,
    last_finished: Option<i64>,
    limits: MemoryLimits,
    end: i64,
}

impl<'a> Chain<'a> {
    fn of(ctx: &Context<'a>) -> Chain<'a> {
        let app = ctx.app;
        let limits = crate::memory_limits::of(app);
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
        Chain {
            failed,
            root_job,
            last_finished,
            limits,
            end,
        }
    }
}

/// Whether FA001 tells a failed job's post-mortem in this application (a failed query's batch
/// jobs are ST003's): the other failure rules point to it only then.
pub(crate) fn tells_a_failed_job(ctx: &Context) -> bool {
    let queries = super::streaming_common::failed_query_jobs(ctx.app);
    Chain::of(ctx)
        .failed
        .iter()
        .any(|j| !queries.contains(&j.job_id))
}

/// FA001's finding for one failed job: its stage, first failed task and root cause, memory that
/// ran out and what was lost, and the fix; ST003 builds a failed query's on it.
pub(crate) fn of_job(ctx: &Context, job_id: i64) -> Option<Finding> {
    let chain = Chain::of(ctx);
    let job = *chain.failed.iter().find(|j| j.job_id == job_id)?;
    Some(post_mortem(ctx, &chain, job))
}

fn post_mortem(ctx: &Context, chain: &Chain, job: &sparkdiag_model::Job) -> Finding {
    let app = ctx.app;
    let (limits, end, root_job, last_finished) = (
        &chain.limits,
        chain.end,
        chain.root_job,
        chain.last_finished,
    );
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
    // Memory that ran out anywhere in the job is the root of the chain it started (the
    // executor it killed, the fetch failures after it, the retries), whatever the last
    // attempt died of.
    let memory = memory_root(app, job, end);
    let data = memory.as_ref().and_then(|m| {
        let (stage_id, stage_attempt) = m.stage?;
        matches!(
            m.region,
            Region::ExecutorHeap | Region::ContainerOverhead | Region::PythonWorker | Region::Gpu
        )
        .then(|| memory_region::data_cause(app, stage_id, stage_attempt, m.task_id?, limits))
        .flatten()
        .map(|d| {
            match app
                .stages
                .iter()
                .find(|s| s.stage_id == stage_id && s.attempt_id == stage_attempt)
            {
                Some(stage) => d.with_operator(ctx, stage),
                None => d,
            }
        })
    });
    // An aggregate that keeps every value of a group (an exact percentile, a collect_list)
    // behind a heap failure: the fix is the aggregate, whatever the partitions. A hot key's
    // cause already names it.
    let sql_shuffle_partitions = app
        .spark_properties
        .get("spark.sql.shuffle.partitions")
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or(200);
    // Few partitions each holding many groups (every partition had data) are the partitions'
    // cause: more of them split the groups apart. Fewer groups than partitions, or no grouping,
    // is the aggregate's.
    let holding = memory
        .as_ref()
        .filter(|m| m.region == Region::ExecutorHeap)
        .and_then(|m| m.stage)
        .and_then(|(id, attempt)| {
            app.stages
                .iter()
                .find(|s| s.stage_id == id && s.attempt_id == attempt)
        })
        .filter(|s| match &data {
            Some(memory_region::DataCause::Skew {
                behind: Some(b), ..
            }) => !b.keeps_values,
            // AQE coalesces the empty partitions away: the shuffle's own count is the setting's.
            Some(memory_region::DataCause::FewPartitions { partitions, .. }) => {
                *partitions < s.num_tasks.max(sql_shuffle_partitions)
            }
            _ => true,
        })
        .and_then(|s| memory_region::value_keeping_aggregate(ctx, s));
    let data = if holding.is_some() { None } else { data };
    let lost = memory.as_ref().map(|_| what_was_lost(app, job, end));
    // The first change to try: the data's settings when the data is the cause, else the
    // memory's.
    let conf: Vec<(String, String)> = match (&memory, &data) {
        // No setting bounds an aggregate that keeps every value: the fix is in the query.
        _ if holding.is_some() => Vec::new(),
        (_, Some(d)) if !d.settings().is_empty() => d.settings(),
        (Some(m), None) => m.settings(limits),
        _ => Vec::new(),
    };
    if let (Some(m), Some(lost)) = (&memory, &lost) {
        cause = format!(
            "{} ran out: {} ({}{}){}",
            m.name(),
            m.evidence,
            m.source,
            m.executor
                .as_ref()
                .map(|e| format!(" on executor {e}"))
                .unwrap_or_default(),
            lost.chain()
        );
        if let Some(d) = &data {
            cause = format!("{cause}; {}", d.headline());
        }
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
    // With no exit code (logs before Spark 3.0) the application counts as failed only
    // because its last job did. When that job was itself cancelled by the shutdown and no
    // job failed before it, the log cannot tell a failure from a program that ended (or
    // stopped its context) while another thread's job ran: lost work, not a known crash.
    let stop_unexplained = cascade && root_job.is_none() && app.exit_code.is_none();
    // A command that failed in a shell or notebook is the person's to retry, not an incident.
    // A shutdown nothing explains is lost work of unknown cause, not a known crash: as any job
    // the shutdown cancelled, medium.
    let severity = if failed_app && stop_unexplained {
        Severity::Medium
    } else if failed_app {
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
        .evidence("why_the_context_stopped_is_unknown", stop_unexplained)
        .evidence("failed_at_ms", job.completion_ms.unwrap_or(end))
        .evidence("started_by", origin.clone())
        .evidence("job_failure", job.failure.as_deref().map(first_line))
        .recommend(match (&memory, &data) {
            _ if cascade => match root_job {
                Some(root) if root != job.job_id => format!(
                    "This job was stopped because the application was shutting down after job {root} failed: fix that failure (the finding's lead job) and this job will run."
                ),
                _ => "This job was stopped because the application was shut down while it ran, and no job failed before it: find what stopped the application (a cancel, the driver's own shutdown, or a failure outside Spark's jobs in the driver's log).".to_string(),
            },
            (Some(m), Some(d)) => format!(
                "{} Only then, if it still fails: {}{}",
                d.advice(ctx),
                m.advice(ctx, limits),
                paste(&conf)
            ),
            (Some(m), None) => match &holding {
                Some(aggregate) => format!(
                    "{} Only then, if it still fails: {}{}",
                    memory_region::value_keeping_advice(aggregate),
                    m.advice(ctx, limits),
                    paste(&conf)
                ),
                None => format!("{}{}", m.advice(ctx, limits), paste(&conf)),
            },
            (None, _) => recommendation(ctx, first.copied(), origin.is_some()),
        });
    if let Some(m) = &memory {
        finding = finding.evidence(
            "memory_failure",
            serde_json::json!({
                "region": m.region, "kind": m.kind, "evidence": m.evidence, "why": m.why,
                "source": m.source, "task_id": m.task_id,
                "stage_id": m.stage.map(|s| s.0), "stage_attempt": m.stage.map(|s| s.1),
                "executor": m.executor,
                "executor_memory_bytes": limits.executor_memory_bytes,
                "executor_overhead_bytes": limits.executor_overhead_bytes,
                "pyspark_memory_bytes": limits.pyspark_memory_bytes,
                "driver_memory_bytes": limits.driver_memory_bytes,
                "lost": lost.as_ref().map(Lost::json),
            }),
        );
        if let Some(executor) = &m.executor {
            finding = finding.executors([executor.clone()]);
        }
    }
    if let Some(d) = &data {
        finding = finding.evidence("data_cause", d.json());
    }
    if let Some(aggregate) = &holding {
        finding = finding.evidence(
            "data_cause",
            serde_json::json!({"kind": "value_keeping_aggregate", "aggregate": aggregate}),
        );
    }
    finding = finding.settings(conf.iter().map(|(k, v)| format!("{k}={v}")));
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
                "exception_class": f.exception_class, "message": f.message.as_deref().map(|m| clip(m, 1000)),
                "root_cause": f.root_cause,
            }));
    }
    let mut seen = std::collections::HashSet::new();
    finding
        .scope
        .executor_ids
        .retain(|id| seen.insert(id.clone()));
    finding
}

/// " First change to try: --conf k=v --conf k2=v2", or nothing.
pub(crate) fn paste(conf: &[(String, String)]) -> String {
    if conf.is_empty() {
        return String::new();
    }
    let list: Vec<String> = conf
        .iter()
        .map(|(k, v)| sparkdiag_facts::settings::conf_flag(k, v))
        .collect();
    format!(" First change to try: {}", list.join(" "))
}

/// The job's stage attempts (every attempt of each of its stages).
fn job_stage_ids(app: &sparkdiag_model::Application, job: &sparkdiag_model::Job) -> Vec<i64> {
    let mut ids: Vec<i64> = app
        .stages
        .iter()
        .filter(|s| s.job_ids.contains(&job.job_id))
        .map(|s| s.stage_id)
        .collect();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// The first memory failure of a job, in time order: a task's (its exception, its root cause,
/// or the removal of the executor it was lost with), then an executor lost while the job ran,
/// then the stage's or the job's own failure message (the driver's limits have no task).
fn memory_root(
    app: &sparkdiag_model::Application,
    job: &sparkdiag_model::Job,
    end: i64,
) -> Option<MemoryFailure> {
    let stages = job_stage_ids(app, job);
    let from = job.submission_ms.unwrap_or(i64::MIN);
    let to = job.completion_ms.unwrap_or(end);
    let mut failures: Vec<&sparkdiag_model::TaskFailure> = app
        .task_failures
        .iter()
        .filter(|f| stages.contains(&f.stage_id))
        .filter(|f| {
            !matches!(
                f.reason.as_str(),
                "TaskKilled" | "TaskCommitDenied" | "Resubmitted"
            )
        })
        .collect();
    failures.sort_by_key(|f| (f.finish_ms, f.task_id));
    if let Some(found) = failures
        .iter()
        .find_map(|f| memory_region::of_task_failure(app, f))
    {
        return Some(found);
    }
    let mut removed: Vec<&sparkdiag_model::Executor> = app
        .executors
        .iter()
        .filter(|e| e.removed_ms.is_some_and(|r| r >= from && r <= to))
        .filter(|e| {
            matches!(
                app.removal(e),
                Removal::Lost | Removal::KilledByClusterManager
            )
        })
        .collect();
    removed.sort_by_key(|e| e.removed_ms);
    if let Some(found) = removed.iter().find_map(|e| {
        memory_region::of_message(
            app,
            e.removed_reason.as_deref()?,
            format!("executor {}'s removal", e.id),
            Some(e.id.clone()),
        )
    }) {
        return Some(found);
    }
    app.stages
        .iter()
        .filter(|s| s.job_ids.contains(&job.job_id) && s.status == StageStatus::Failed)
        .filter_map(|s| {
            let reason = s.failure_reason.as_deref()?;
            let mut m = memory_region::of_message(
                app,
                reason,
                format!("stage {}'s failure", s.stage_id),
                None,
            )?;
            m.stage = Some((s.stage_id, s.attempt_id));
            Some(m)
        })
        .next()
        .or_else(|| {
            memory_region::of_message(
                app,
                job.failure.as_deref()?,
                format!("job {}'s failure", job.job_id),
                None,
            )
        })
}

/// What a memory failure cost the job: the executors it took, the shuffle output they held,
/// the retries.
struct Lost {
    /// (executor id, removal reason's first line).
    executors: Vec<(String, String)>,
    fetch_failures: usize,
    failed_attempts: usize,
    /// Stage attempts after the first of a stage: re-runs.
    stage_retries: usize,
}

fn what_was_lost(app: &sparkdiag_model::Application, job: &sparkdiag_model::Job, end: i64) -> Lost {
    let stages = job_stage_ids(app, job);
    let from = job.submission_ms.unwrap_or(i64::MIN);
    let to = job.completion_ms.unwrap_or(end);
    let mut executors: Vec<(i64, String, String)> = app
        .executors
        .iter()
        .filter(|e| e.removed_ms.is_some_and(|r| r >= from && r <= to))
        .filter(|e| {
            matches!(
                app.removal(e),
                Removal::Lost | Removal::KilledByClusterManager
            )
        })
        .map(|e| {
            (
                e.removed_ms.unwrap_or_default(),
                e.id.clone(),
                e.removed_reason
                    .as_deref()
                    .and_then(|r| r.lines().next())
                    .unwrap_or("no reason recorded")
                    .to_string(),
            )
        })
        .collect();
    executors.sort();
    let failures = app
        .task_failures
        .iter()
        .filter(|f| stages.contains(&f.stage_id))
        .filter(|f| {
            !matches!(
                f.reason.as_str(),
                "TaskKilled" | "TaskCommitDenied" | "Resubmitted"
            )
        });
    let (mut fetch_failures, mut failed_attempts) = (0, 0);
    for f in failures {
        failed_attempts += 1;
        fetch_failures += usize::from(f.reason == "FetchFailed");
    }
    Lost {
        executors: executors.into_iter().map(|(_, id, r)| (id, r)).collect(),
        fetch_failures,
        failed_attempts,
        stage_retries: app
            .stages
            .iter()
            .filter(|s| stages.contains(&s.stage_id) && s.attempt_id > 0)
            .count(),
    }
}

impl Lost {
    /// " → executors 0, 1 lost (Command exited with code 52) → 2 fetch failures → 1 stage re-run, 6 failed attempts".
    fn chain(&self) -> String {
        let mut parts = Vec::new();
        if !self.executors.is_empty() {
            let ids: Vec<&str> = self.executors.iter().map(|(id, _)| id.as_str()).collect();
            parts.push(format!(
                "{} {} lost with {} ({})",
                if ids.len() == 1 {
                    "executor"
                } else {
                    "executors"
                },
                ids.join(", "),
                if ids.len() == 1 {
                    "its shuffle output"
                } else {
                    "their shuffle output"
                },
                self.executors[0].1
            ));
        }
        if self.fetch_failures > 0 {
            parts.push(format!("{} fetch failure(s)", self.fetch_failures));
        }
        if self.stage_retries > 0 {
            parts.push(format!("{} stage re-run(s)", self.stage_retries));
        }
        if self.failed_attempts > 0 {
            parts.push(format!("{} failed task attempt(s)", self.failed_attempts));
        }
        if parts.is_empty() {
            return String::new();
        }
        format!(" → {}", parts.join(" → "))
    }

    fn json(&self) -> serde_json::Value {
        serde_json::json!({
            "executors": self.executors.iter().map(|(id, reason)| serde_json::json!({"executor_id": id, "reason": reason})).collect::<Vec<_>>(),
            "fetch_failures": self.fetch_failures,
            "failed_task_attempts": self.failed_attempts,
            "stage_retries": self.stage_retries,
        })
    }
}

/// One line naming the failure: `ExceptionFailure: java.lang.OutOfMemoryError: Java heap space`.
pub fn describe_failure(f: &&sparkdiag_model::TaskFailure) -> String {
    let message = f.message.as_deref().map(key_line).unwrap_or_default();
    // A wrapper (`Exception thrown in awaitResult`) names the wrong exception: lead with the
    // root of the `Caused by:` chain.
    if let Some(root) = f.root_cause.as_deref().filter(|r| !message.contains(*r)) {
        let root = clip(root, 300);
        return match &f.exception_class {
            Some(class) => format!("{root} (under {class}: {})", clip(&message, 120)),
            None => format!("{root} (under {})", clip(&message, 120)),
        };
    }
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
    clip(python.or(lines.first()).copied().unwrap_or_default(), 300)
}

fn first_line(message: &str) -> String {
    clip(message.lines().next().unwrap_or_default(), 300)
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
                    app,
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
                    app,
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
fn loss_text(
    app: &sparkdiag_model::Application,
    e: &sparkdiag_model::Executor,
    reason: &str,
) -> String {
    let means = sparkdiag_model::exit_code_of(reason)
        .and_then(|c| sparkdiag_model::explain_exit_code_on(c, app.cluster_manager()))
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
        "{} {} {}",
        f.exception_class.as_deref().unwrap_or(""),
        f.message.as_deref().unwrap_or(""),
        f.root_cause.as_deref().unwrap_or("")
    );
    if text.contains("Could not read footer") || text.contains("is not a Parquet file") {
        "A file the job reads is damaged or not Parquet (the root cause names it): remove or rewrite that file, or skip such files with spark.sql.files.ignoreCorruptFiles=true.".into()
    } else if text.contains("FileNotFoundException") {
        "A file the job planned to read was gone when its task ran: something rewrote or deleted the table's files during the job; run it when the writer is done, or REFRESH TABLE first if Spark cached the file list.".into()
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

#[cfg(test)]
mod wrapped_exceptions {
    /// "Exception thrown in awaitResult" is a wrapper: the title leads with the root cause.
    #[test]
    fn the_root_cause_leads_a_wrapped_exception() {
        let failure = sparkdiag_model::TaskFailure {
            task_id: 7,
            stage_id: 1,
            stage_attempt_id: 0,
            executor: 0,
            finish_ms: 0,
            reason: "ExceptionFailure".into(),
            exception_class: Some("org.apache.spark.SparkException".into()),
            message: Some("Exception thrown in awaitResult: ".into()),
            root_cause: Some(
                "java.io.IOException: Could not read footer for file: file:/data/part-0001.parquet"
                    .into(),
            ),
        };
        let line = super::describe_failure(&&failure);
        assert!(
            line.starts_with("java.io.IOException: Could not read footer"),
            "{line}"
        );
        assert!(
            line.contains("under org.apache.spark.SparkException"),
            "{line}"
        );
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

    /// The one failed job's finding in a `testdata/logs/memory/` log.
    fn memory_finding(log: &str) -> crate::Finding {
        let found = on_log(&FAILED_JOB, &format!("memory/{log}"), &[]);
        assert_eq!(found.len(), 1, "{found:#?}");
        found.into_iter().next().unwrap()
    }

    fn region(f: &crate::Finding) -> &str {
        f.evidence["memory_failure"]["region"]
            .as_str()
            .unwrap_or_default()
    }

    #[test]
    fn a_heap_oom_from_two_wide_partitions_leads_with_the_partition_count() {
        let f = memory_finding("heap-oom-wide");
        assert_eq!(region(&f), "executor_heap", "{f:#?}");
        assert!(
            f.title
                .contains("java.lang.OutOfMemoryError: Java heap space"),
            "{}",
            f.title
        );
        // The chain: the executors the OOM killed (Spark's exit code 52) and the fetch failures.
        let lost = &f.evidence["memory_failure"]["lost"];
        assert!(lost["executors"].as_array().unwrap().len() >= 2, "{lost}");
        assert!(lost["fetch_failures"].as_u64().unwrap() >= 1, "{lost}");
        assert_eq!(f.evidence["data_cause"]["kind"], "few_partitions", "{f:#?}");
        assert_eq!(f.evidence["data_cause"]["partitions"], 2);
        assert!(
            f.recommendation.starts_with("Caused by the partitioning")
                && f.recommendation.contains("spark.sql.shuffle.partitions=8"),
            "{}",
            f.recommendation
        );
        assert!(!f.recommendation.contains("failing record"));
    }

    /// The advice, proved: `heap-oom-wide-fixed` is the same script rerun with exactly the
    /// partition count FA001 recommended for `heap-oom-wide`, and it succeeds.
    #[test]
    fn the_wide_heap_oom_rerun_with_the_recommended_partitions_succeeds() {
        let f = memory_finding("heap-oom-wide");
        let suggested = f.evidence["data_cause"]["suggested_partitions"]
            .as_i64()
            .unwrap();
        let fixed = &crate::rules::testing::apps("logs/memory/heap-oom-wide-fixed")[0];
        assert_eq!(
            fixed.spark_properties["spark.sql.shuffle.partitions"],
            suggested.to_string()
        );
        assert_eq!(
            fixed.spark_properties["spark.executor.memory"], "512m",
            "the same heap"
        );
        assert_eq!(fixed.status(), sparkdiag_model::AppStatus::Succeeded);
        assert!(
            fixed
                .jobs
                .iter()
                .all(|j| j.status == sparkdiag_model::JobStatus::Succeeded)
        );
        assert!(fixed.task_failures.is_empty(), "{:?}", fixed.task_failures);
        assert_quiet(&on_log(&FAILED_JOB, "memory/heap-oom-wide-fixed", &[]));
    }

    #[test]
    fn a_heap_oom_from_one_hot_key_leads_with_the_data() {
        let f = memory_finding("heap-oom-hot-key");
        assert_eq!(region(&f), "executor_heap", "{f:#?}");
        assert_eq!(f.evidence["data_cause"]["kind"], "skew", "{f:#?}");
        // The hot key and what held it lead, before any memory setting: 80 % of the rows on
        // key 0, repartition("k") and a collect_list per key.
        assert_eq!(
            f.evidence["data_cause"]["operator"],
            "collect_list(v) grouped by k after repartition(64, k)"
        );
        assert!(f.title.contains("caused by a hot key"), "{}", f.title);
        assert!(
            f.recommendation.starts_with("Caused by a hot key")
                && f.recommendation.contains("keeps every value of a group")
                && f.recommendation.contains("salt"),
            "{}",
            f.recommendation
        );
        // Memory comes after the data fix, not before it.
        let data = f.recommendation.find("salt").unwrap();
        let memory = f.recommendation.find("spark.executor.memory").unwrap();
        assert!(data < memory, "{}", f.recommendation);
    }

    /// median() over 30M distinct doubles, and collect_list of four groups of 3M strings, on
    /// 512 MiB executors: the aggregate keeps every value, so its fix leads (the approximate
    /// percentile, a bounded collection), with no memory setting to paste first; the
    /// percentile_approx rerun of the same data succeeds.
    #[test]
    fn an_aggregate_that_keeps_every_value_gets_the_bounded_function() {
        for (log, aggregate, fix) in [
            (
                "operations/exact-percentile-oom",
                "percentile(v)",
                "percentile_approx(col, 0.5)",
            ),
            (
                "operations/collect-list-oom",
                "collect_list(s) grouped by g",
                "slice(collect_list(...), 1, n)",
            ),
        ] {
            let found = on_log(&FAILED_JOB, log, &[]);
            let f = found
                .iter()
                .find(|f| f.evidence.contains_key("memory_failure"))
                .unwrap_or_else(|| panic!("{log}: {found:#?}"));
            assert_eq!(region(f), "executor_heap", "{log}");
            assert_eq!(f.evidence["data_cause"]["aggregate"], aggregate, "{log}");
            assert!(
                f.recommendation.starts_with("Caused by the aggregate")
                    && f.recommendation.contains(fix)
                    && !f.recommendation.contains("First change to try"),
                "{log}: {}",
                f.recommendation
            );
        }
        assert_quiet(&on_log(
            &FAILED_JOB,
            "operations/exact-percentile-approx",
            &[],
        ));
    }

    #[test]
    fn a_python_worker_over_its_limit_is_told_about_pyspark_memory() {
        let f = memory_finding("python-worker-memory");
        assert_eq!(region(&f), "python_worker", "{f:#?}");
        assert!(
            f.recommendation
                .contains("spark.executor.pyspark.memory to 256m (now 128m)")
                && f.recommendation
                    .contains("raising spark.executor.memory does not help"),
            "{}",
            f.recommendation
        );
    }

    #[test]
    fn a_collect_over_max_result_size_is_the_drivers() {
        let f = memory_finding("driver-max-result");
        assert_eq!(region(&f), "driver", "{f:#?}");
        assert_eq!(f.evidence["memory_failure"]["kind"], "driver_results");
        assert!(
            f.recommendation
                .contains("spark.driver.maxResultSize (now 4m)"),
            "{}",
            f.recommendation
        );
    }

    #[test]
    fn the_healthy_twin_and_a_udf_error_are_not_memory() {
        assert_quiet(&on_log(&FAILED_JOB, "memory/heap-oom-wide-healthy", &[]));
        let found = on_log(&FAILED_JOB, "failed", &[]);
        assert!(
            found
                .iter()
                .all(|f| !f.evidence.contains_key("memory_failure")),
            "{found:#?}"
        );
        assert!(
            found[0].recommendation.contains("failing record"),
            "{found:#?}"
        );
    }

    #[test]
    fn a_wrapped_exception_is_named_by_its_root_cause() {
        let f = memory_finding("corrupt-parquet");
        assert!(!f.evidence.contains_key("memory_failure"), "{f:#?}");
        assert!(
            f.title
                .contains("part-99999-broken.parquet is not a Parquet file")
                && f.title.contains("(under org.apache.spark.SparkException"),
            "{}",
            f.title
        );
        assert!(
            f.recommendation
                .contains("spark.sql.files.ignoreCorruptFiles=true"),
            "{}",
            f.recommendation
        );
    }

    #[test]
    fn a_cascade_names_the_job_that_failed_first() {
        let found = on_log(&FAILED_JOB, "trust/cascade", &[]);
        let cascade = found
            .iter()
            .find(|f| f.evidence["consequence_of_another_failure"] == true)
            .expect("the cancelled job");
        let root = found
            .iter()
            .find(|f| f.evidence["consequence_of_another_failure"] == false)
            .expect("the failing job");
        let root_job = root.evidence["job_id"].as_i64().unwrap();
        assert!(
            cascade
                .recommendation
                .contains(&format!("after job {root_job} failed")),
            "{}",
            cascade.recommendation
        );
        assert!(
            !root.recommendation.contains("lead job"),
            "{}",
            root.recommendation
        );
    }
}
