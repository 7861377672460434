//! ST003 streaming-query-failed: a Structured Streaming query ended with an exception.

use super::common::clip;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};

declare_rule! {
    /// ## What it does
    /// Reads each query's `QueryTerminatedEvent`: one with an exception is a query that failed
    /// (one without is a query its program stopped, which is no failure). Names the exception,
    /// the last batch the query reported and the jobs of the batch that failed.
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
        // The failing batch is the latest one that ran jobs.
        let failing_batch = s
            .query_jobs
            .iter()
            .filter(|j| j.query as usize == index)
            .map(|j| j.batch_id)
            .max();
        let jobs: Vec<i64> = s
            .query_jobs
            .iter()
            .filter(|j| j.query as usize == index && Some(j.batch_id) == failing_batch)
            .map(|j| j.job_id)
            .collect();
        let title = format!(
            "Query {} failed{} after {} completed batch{}: {cause}",
            q.label(),
            failing_batch
                .map(|b| format!(" in batch {b}"))
                .unwrap_or_default(),
            q.totals.progress_events,
            if q.totals.progress_events == 1 {
                ""
            } else {
                "es"
            },
        );
        findings.push(
            Finding::new(&STREAMING_QUERY_FAILED, Severity::Critical, title, 0)
                .jobs(jobs)
                .evidence("query_id", q.id.clone())
                .evidence("run_id", q.run_id.clone())
                .evidence("exception", clip(exception, 2000))
                .evidence("error_class", end.error_class.clone())
                .evidence("last_reported_batch", last_reported)
                .evidence("failing_batch", failing_batch)
                .evidence("failed_at_ms", end.at_ms)
                .recommend("Fix the cause the exception names (a bad record in a UDF: filter or handle it; a lost source offset: check the source's retention and `failOnDataLoss`), then restart the query from the same checkpoint: it resumes at the failed batch."),
        );
    }
    findings
}
