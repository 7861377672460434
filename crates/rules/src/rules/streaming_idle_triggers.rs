//! ST008 streaming-idle-triggers: a query that mostly wakes up to find nothing.

use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_IDLE: Threshold = threshold(
    "min_idle",
    5.0,
    "triggers",
    "idle triggers reported before a query counts as mostly idle",
    "sparkdiag's own; Spark reports an idle trigger at most every 10 s (noDataProgressEventInterval)",
);

pub const MIN_IDLE_SHARE: Threshold = threshold(
    "min_idle_share",
    0.5,
    "share",
    "share of the reported triggers that found no new data",
    "sparkdiag's own",
);

declare_rule! {
    /// ## What it does
    /// Counts a query's triggers that found no new data: `QueryIdleEvent`s (Spark 3.5+) and
    /// progress events that read no rows. When they are most of what the query reported, it
    /// spends its life polling an empty source while holding its cluster.
    ///
    /// ## Why is this bad?
    /// An always-on query for data that comes rarely pays for executors around the clock and
    /// polls the source (list a directory, ask the brokers) every trigger for nothing.
    ///
    /// ## How to fix it
    /// When the data comes in bursts or on a schedule, run the query as a job with
    /// `trigger(availableNow=True)` (it processes what is there and stops) and release the
    /// cluster between runs; otherwise lengthen the trigger interval.
    ///
    /// ## Threshold and its source
    /// At least `min_idle` = 5 idle triggers, being at least `min_idle_share` = 0.5 of the
    /// reported triggers. Spark reports an idle trigger at most every 10 s by default, so the
    /// real count is higher. Low; impact 0.
    pub static STREAMING_IDLE_TRIGGERS = {
        code: "ST008",
        name: "streaming-idle-triggers",
        category: Streaming,
        claims: Saving,
        needs: [StreamingQueries],
        summary: "A streaming query mostly finds no new data when it triggers",
        thresholds: &[MIN_IDLE, MIN_IDLE_SHARE],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for q in &ctx.app.streaming.queries {
        let empty = q.batches.iter().filter(|b| b.input_rows == 0).count() as u64;
        let idle = q.idle_events + empty;
        let reported = q.idle_events + q.totals.progress_events;
        if (idle as f64) < t.get(&MIN_IDLE)
            || reported == 0
            || (idle as f64) < reported as f64 * t.get(&MIN_IDLE_SHARE)
        {
            continue;
        }
        let title = format!(
            "Query {} found no new data at {idle} of the {reported} triggers Spark reported (idle triggers are reported at most every 10 s, so there were more)",
            q.label()
        );
        findings.push(
            Finding::new(&STREAMING_IDLE_TRIGGERS, Severity::Low, title, 0)
                .evidence("query_id", q.id.clone())
                .evidence("idle_events", q.idle_events)
                .evidence("progress_events_without_rows", empty)
                .evidence("progress_events", q.totals.progress_events)
                .recommend("When the data comes in bursts or on a schedule, run the query as a job with `trigger(availableNow=True)`, which processes what is there and stops, and release the cluster between runs; otherwise lengthen the trigger interval."),
        );
    }
    findings
}
