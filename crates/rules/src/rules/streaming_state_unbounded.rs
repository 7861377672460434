//! ST004 streaming-state-unbounded: a stateful query's state grows batch after batch without a
//! watermark to expire it.

use super::common::bytes;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_BATCHES: Threshold = threshold(
    "min_batches",
    5.0,
    "batches",
    "batches with state needed to call its growth a trend",
    "sparkdiag's own",
);

pub const MIN_GROWTH: Threshold = threshold(
    "min_growth",
    2.0,
    "ratio",
    "the state's rows at the last batch over those at the first that is unbounded growth",
    "sparkdiag's own",
);

pub const MIN_GROWING_SHARE: Threshold = threshold(
    "min_growing_share",
    0.8,
    "share",
    "share of batch-to-batch steps in which the state's rows did not shrink",
    "sparkdiag's own",
);

declare_rule! {
    /// ## What it does
    /// For each stateful query (aggregation, deduplication, stream-stream join,
    /// `flatMapGroupsWithState`), follows the state operators' `numRowsTotal` over the batches.
    /// When it grows in almost every batch and ends at `min_growth` times where it began, with
    /// no watermark (or one that never moves), the state is unbounded: nothing ever removes a
    /// key.
    ///
    /// ## Why is this bad?
    /// Every key ever seen stays in the state store: memory on the executors grows without end,
    /// each batch's state checkpoint and its recovery get slower, and the query eventually runs
    /// out of memory or grinds through garbage collection.
    ///
    /// ## How to fix it
    /// Give the query a watermark on its event time (`withWatermark("ts", "10 minutes")`) and
    /// aggregate over event-time windows or use `dropDuplicatesWithinWatermark`, so old state is
    /// dropped; with arbitrary state, set a timeout or TTL. For state that must be large, use the
    /// RocksDB state store (`spark.sql.streaming.stateStore.providerClass`), which keeps it off
    /// the JVM heap. Adding a watermark changes the query's semantics, and some changes need a
    /// new checkpoint.
    ///
    /// ## Threshold and its source
    /// `min_batches` = 5 batches with state, rows not shrinking in `min_growing_share` = 0.8 of
    /// the steps, and `min_growth` = 2 times as many rows at the end as at the start, without an advancing
    /// watermark. High when the state holds 1 GB or more. Impact 0: the cost is memory and
    /// future batches.
    pub static STREAMING_STATE_UNBOUNDED = {
        code: "ST004",
        name: "streaming-state-unbounded",
        category: Streaming,
        claims: Outcome,
        needs: [StreamingQueries],
        summary: "A streaming query's state grows every batch with no watermark to expire it",
        thresholds: &[MIN_BATCHES, MIN_GROWTH, MIN_GROWING_SHARE],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for q in &ctx.app.streaming.queries {
        let series: Vec<(i64, i64, i64, Option<i64>)> = q
            .batches
            .iter()
            .filter(|b| !b.state.is_empty())
            .map(|b| {
                (
                    b.batch_id,
                    b.state.iter().map(|s| s.rows_total).sum(),
                    b.state.iter().map(|s| s.memory_used_bytes).sum(),
                    b.watermark_ms.filter(|&w| w > 0),
                )
            })
            .collect();
        // Two at the least, whatever `min_batches` is set to.
        if series.len() < 2 || (series.len() as f64) < t.get(&MIN_BATCHES) {
            continue;
        }
        let first = series.iter().map(|s| s.1).find(|&r| r > 0).unwrap_or(0);
        let (_, last, memory, _) = *series.last().expect("at least min_batches");
        if first <= 0 || (last as f64) < first as f64 * t.get(&MIN_GROWTH) {
            continue;
        }
        let steps = series.len() - 1;
        let growing = series.windows(2).filter(|w| w[1].1 >= w[0].1).count();
        if (growing as f64) < steps as f64 * t.get(&MIN_GROWING_SHARE) {
            continue;
        }
        let watermarks: Vec<i64> = series.iter().filter_map(|s| s.3).collect();
        let advancing = watermarks.windows(2).any(|w| w[1] > w[0]);
        if advancing {
            continue;
        }
        let why = if watermarks.is_empty() {
            "the query has no watermark".to_string()
        } else {
            "its watermark never advanced".to_string()
        };
        let title = format!(
            "Query {}'s state grew from {first} to {last} rows over {} batches ({} in memory) and nothing expires it: {why}",
            q.label(),
            series.len(),
            bytes(memory)
        );
        let severity = if memory >= 1 << 30 {
            Severity::High
        } else {
            Severity::Medium
        };
        let operators: Vec<String> = q
            .batches
            .last()
            .map(|b| {
                b.state
                    .iter()
                    .map(|s| s.operator_name.clone().unwrap_or_else(|| "state".into()))
                    .collect()
            })
            .unwrap_or_default();
        findings.push(
            Finding::new(&STREAMING_STATE_UNBOUNDED, severity, title, 0)
                .evidence("query_id", q.id.clone())
                .evidence("state_operators", operators)
                .evidence("first_state_rows", first)
                .evidence("last_state_rows", last)
                .evidence("last_state_memory_bytes", memory)
                .evidence("batches_with_state", series.len())
                .evidence("non_shrinking_steps", growing)
                .evidence("watermark", !watermarks.is_empty())
                .recommend("Add a watermark on the event time (`withWatermark(\"ts\", \"10 minutes\")`) and aggregate over event-time windows, or deduplicate with `dropDuplicatesWithinWatermark`, so old keys leave the state; with arbitrary state (`transformWithState`, `flatMapGroupsWithState`) set a TTL or timeout. For state that must stay large, the RocksDB state store keeps it off the heap. Changing the stateful part of a query may need a new checkpoint."),
        );
    }
    findings
}
