//! ST002 streaming-batch-overhead: a micro-batch's time goes to planning, offsets and commits
//! rather than to the work itself.

use super::common::duration;
use super::streaming_common::{median, steady_batches};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_BATCHES: Threshold = threshold(
    "min_batches",
    5.0,
    "batches",
    "steady batches needed to say where a query's batch time goes",
    "sparkdiag's own",
);

pub const MIN_SHARE: Threshold = threshold(
    "min_share",
    0.5,
    "share",
    "share of the batches' time spent outside addBatch (the work) that is worth a finding",
    "sparkdiag's own",
);

pub const MIN_MEDIAN_MS: Threshold = threshold(
    "min_median_ms",
    500.0,
    "ms",
    "median batch duration under which the overhead costs too little to matter",
    "sparkdiag's own",
);

declare_rule! {
    /// ## What it does
    /// Adds up each query's `durationMs` parts over its steady batches: the work itself
    /// (`addBatch`) against what surrounds it — asking the source for offsets (`latestOffset`,
    /// `getOffset`, `getBatch`), planning the batch (`queryPlanning`) and writing the offset and
    /// commit logs (`walCommit`, `commitOffsets`). When the surroundings take most of the time,
    /// names the largest part.
    ///
    /// ## Why is this bad?
    /// Every batch pays the overhead again, however few rows it reads: a query whose batches
    /// spend most of their time listing files or writing checkpoint files to slow storage gets
    /// latency and cost without doing more work.
    ///
    /// ## How to fix it
    /// Offsets: a file source lists its whole directory each trigger (archive or delete
    /// processed files with `cleanSource`, partition the input directory), and a Kafka source
    /// asks the brokers (check their latency). Planning: a very wide plan is planned every batch
    /// (fewer unions and columns). Commits: the checkpoint's storage is slow (put the checkpoint
    /// on a faster file system; for Kafka sinks, `asyncProgressTrackingEnabled`). In every case a
    /// longer trigger amortises the overhead over more rows.
    ///
    /// ## Threshold and its source
    /// `min_batches` = 5 steady batches with a median of at least `min_median_ms` = 500 ms, and
    /// at least `min_share` = 0.5 of their time outside `addBatch`. Medium from 0.7, low below.
    /// Impact 0: the cost is each batch's latency.
    pub static STREAMING_BATCH_OVERHEAD = {
        code: "ST002",
        name: "streaming-batch-overhead",
        category: Streaming,
        claims: Saving,
        needs: [StreamingQueries],
        summary: "A streaming query's batches spend most of their time on offsets, planning or commits",
        thresholds: &[MIN_BATCHES, MIN_SHARE, MIN_MEDIAN_MS],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for q in &ctx.app.streaming.queries {
        let batches = steady_batches(q);
        // Two at the least, whatever `min_batches` is set to.
        if batches.len() < 2 || (batches.len() as f64) < t.get(&MIN_BATCHES) {
            continue;
        }
        let median_ms = median(batches.iter().filter_map(|b| b.duration_ms)).unwrap_or(0);
        if (median_ms as f64) < t.get(&MIN_MEDIAN_MS) {
            continue;
        }
        let total: i64 = batches.iter().filter_map(|b| b.duration_ms).sum();
        let sum = |f: fn(&sparkdiag_model::streaming::BatchParts) -> Option<i64>| -> i64 {
            batches.iter().filter_map(|b| f(&b.parts)).sum()
        };
        let parts = [
            (
                "asking the source for offsets (latestOffset, getOffset, getBatch)",
                sum(|p| p.latest_offset) + sum(|p| p.get_offset) + sum(|p| p.get_batch),
            ),
            (
                "planning the batch (queryPlanning)",
                sum(|p| p.query_planning),
            ),
            (
                "writing the offset and commit logs (walCommit, commitOffsets)",
                sum(|p| p.wal_commit) + sum(|p| p.commit_offsets),
            ),
        ];
        let overhead: i64 = parts.iter().map(|p| p.1).sum();
        if total <= 0 {
            continue;
        }
        let share = overhead as f64 / total as f64;
        if share < t.get(&MIN_SHARE) {
            continue;
        }
        let (largest, largest_ms) = parts.iter().max_by_key(|p| p.1).copied().unwrap();
        let title = format!(
            "Query {}'s batches spend {:.0}% of their time around the work: {} took {} of {} over {} batches (median batch {})",
            q.label(),
            100.0 * share,
            largest,
            duration(largest_ms),
            duration(total),
            batches.len(),
            duration(median_ms)
        );
        let severity = if share >= 0.7 {
            Severity::Medium
        } else {
            Severity::Low
        };
        findings.push(
            Finding::new(&STREAMING_BATCH_OVERHEAD, severity, title, 0)
                .evidence("query_id", q.id.clone())
                .evidence("batches", batches.len())
                .evidence("batch_ms", total)
                .evidence("offsets_ms", parts[0].1)
                .evidence("planning_ms", parts[1].1)
                .evidence("commit_ms", parts[2].1)
                .evidence("add_batch_ms", sum(|p| p.add_batch))
                .recommend("Offsets: a file source lists its whole directory every trigger (archive processed files with `cleanSource`, partition the input), a Kafka source waits on its brokers. Planning: a very wide plan is planned every batch. Commits: the checkpoint's storage is slow (a faster file system for the checkpoint; `asyncProgressTrackingEnabled` for Kafka sinks). A longer trigger spreads any of them over more rows."),
        );
    }
    findings
}

/// The rule alone on real Spark output: a healthy stream at its defaults, and the same stream
/// with the bar lowered until its ordinary overhead counts.
#[cfg(test)]
mod real_logs {
    use super::STREAMING_BATCH_OVERHEAD;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn is_quiet_on_a_healthy_stream_and_splits_the_overhead_once_the_bar_is_low() {
        assert_quiet(&on_log(&STREAMING_BATCH_OVERHEAD, "streaming/healthy", &[]));
        let found = on_log(
            &STREAMING_BATCH_OVERHEAD,
            "streaming/healthy",
            &["ST002.min_share=0.1", "ST002.min_median_ms=0"],
        );
        assert_fires(&found, "ST002");
        for f in &found {
            let ms = |key: &str| f.evidence[key].as_i64().unwrap();
            let overhead = ms("offsets_ms") + ms("planning_ms") + ms("commit_ms");
            assert!(overhead > 0 && overhead <= ms("batch_ms"), "{f:?}");
            assert!(10 * overhead >= ms("batch_ms"), "under min_share: {f:?}");
            assert!(f.title.contains("batches spend"), "{}", f.title);
        }
    }
}
