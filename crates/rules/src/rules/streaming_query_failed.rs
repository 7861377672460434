//! ST003 streaming-query-failed: a Structured Streaming query ended with an exception.

use super::common::clip;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};

declare_rule! {
    /// ## What it does
    /// Reads each query's `QueryTerminatedEvent`: one with an exception is a query that failed
    /// (one without is a query its program stopped, which is no failure). Names the exception,
    /// the last batch the query reported and the jobs of the batch that failed; when one of
    /// those jobs failed, its post-mortem (FA001's: the stage, the first failed task, memory
    /// that ran out and its fix), which FA001 then leaves to this finding.
    ///
    /// ## Why is this bad?
    /// A failed query stops consuming its source: everything after the failure waits until
    /// someone restarts it, and a driver that catches the exception still exits 0, so the run
    /// looks clean everywhere but here.
    ///
    /// ## How to fix it
    /// Fix the cause the exception names (a bad record in a UDF: filter or handle it; a lost
    /// source offset: check retention and `failOnDataLoss`), then restart the query from the
    /// same checkpoint: it resumes from the failed batch.
    ///
    /// ## Threshold and its source
    /// Any termination with an exception. Critical: the query is down. Its impact is 0, as a
    /// stream has no end to bring forward.
    pub static STREAMING_QUERY_FAILED = {
        code: "ST003",
        name: "streaming-query-failed",
        category: Failure,
        claims: Outcome,
        needs: [StreamingQueries],
        summary: "A streaming query terminated with an exception",
        thresholds: &[] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let s = &ctx.app.streaming;
    let mut findings = Vec::new();
    for (index, q) in s.queries.iter().enumerate() {
        let Some(end) = &q.terminated else { continue };
        let Some(exception) = &end.exception else {
            continue;
        };
        let cause = clip(sparkdiag_model::streaming::exception_cause(exception), 300);
        let last_reported = q.batches.last().map(|b| b.batch_id);
        let (failing_batch, jobs) = super::streaming_common::failing_batches(ctx.app)
            .into_iter()
            .find(|(i, _, _)| *i == index)
            .map_or((None, Vec::new()), |(_, batch, jobs)| (Some(batch), jobs));
        // The failed job of that batch, as FA001 would have told it (which FA001 leaves to
        // this finding): its stage, first failed task, and memory that ran out, with the fix.
        let post_mortem = jobs
            .iter()
            .find_map(|&job| super::failed_job::of_job(ctx, job));
        // Where in the batch it failed: "job 2, stage 2".
        let failed_in = post_mortem.as_ref().map(|f| {
            let mut at = format!("job {}", f.scope.job_ids.first().copied().unwrap_or(-1));
            if let Some(stage) = f.scope.stage_ids.first() {
                at += &format!(", stage {stage}");
            }
            at
        });
        let title = format!(
            "Query {} failed{}{} after {} completed batch{}: {cause}",
            q.label(),
            failing_batch
                .map(|b| format!(" in batch {b}"))
                .unwrap_or_default(),
            failed_in.map(|at| format!(" ({at})")).unwrap_or_default(),
            q.totals.progress_events,
            if q.totals.progress_events == 1 {
                ""
            } else {
                "es"
            },
        );
        let restart = "restart the query from the same checkpoint: it resumes at the failed batch.";
        let mut finding = Finding::new(&STREAMING_QUERY_FAILED, Severity::Critical, title, 0)
                .jobs(jobs)
                .evidence("query_id", q.id.clone())
                .evidence("run_id", q.run_id.clone())
                .evidence("exception", clip(exception, 2000))
                .evidence("error_class", end.error_class.clone())
                .evidence("last_reported_batch", last_reported)
                .evidence("failing_batch", failing_batch)
                .evidence("failed_at_ms", end.at_ms)
                .recommend(format!("Fix the cause the exception names (a bad record in a UDF: filter or handle it; a lost source offset: check the source's retention and `failOnDataLoss`), then {restart}"));
        if let Some(job) = post_mortem {
            finding = finding
                .stages(job.scope.stage_ids.iter().copied())
                .executors(job.scope.executor_ids.iter().cloned())
                .settings(job.evidence.get("conf").into_iter().flat_map(|c| {
                    c.as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(|v| v.as_str().map(str::to_string))
                }));
            for key in [
                "first_failure",
                "memory_failure",
                "data_cause",
                "stage_failure_reason",
            ] {
                if let Some(value) = job.evidence.get(key) {
                    finding = finding.evidence(key, value.clone());
                }
            }
            finding = finding
                .evidence("failed_job", job.title.clone())
                .recommend(format!(
                    "{} Once it is fixed, {restart}",
                    job.recommendation
                ));
        }
        findings.push(finding);
    }
    findings
}
