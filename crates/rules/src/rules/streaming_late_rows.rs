//! ST006 streaming-late-rows: rows that arrived behind the watermark were dropped.

use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const HIGH_SHARE: Threshold = threshold(
    "high_share",
    0.01,
    "share",
    "share of the input dropped as late above which the finding is medium",
    "sparkdiag's own",
);

declare_rule! {
    /// ## What it does
    /// Adds up the state operators' `numRowsDroppedByWatermark` (`numLateInputs` in Spark 3.0
    /// and 3.1) over a query's batches: rows whose event time was already behind the watermark
    /// when they arrived, which a stateful operator ignores.
    ///
    /// ## Why is this bad?
    /// Those rows are silently missing from the results: a window's count, a join's matches or a
    /// deduplication are computed without them.
    ///
    /// ## How to fix it
    /// If the data is legitimately that late, lengthen the watermark's delay
    /// (`withWatermark("ts", "...")`), at the price of more state held longer; if it is not,
    /// look at the producer (clock skew, replays). Either way, count the drops in monitoring.
    ///
    /// ## Threshold and its source
    /// Any dropped row; medium when they are at least `high_share` = 0.01 of the query's input
    /// rows, low below. The operator counts the rows it sees: after a partial aggregation one of
    /// them stands for all the input rows of its key, so the share is a floor. Impact 0: the cost is in the results, not the run time.
    pub static STREAMING_LATE_ROWS = {
        code: "ST006",
        name: "streaming-late-rows",
        category: Streaming,
        claims: Saving,
        needs: [StreamingQueries],
        summary: "Rows behind the watermark were dropped by a stateful streaming query",
        thresholds: &[HIGH_SHARE],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for q in &ctx.app.streaming.queries {
        let dropped = q.totals.rows_dropped_by_watermark;
        if dropped <= 0 {
            continue;
        }
        let batches = q
            .batches
            .iter()
            .filter(|b| {
                b.state
                    .iter()
                    .any(|s| s.rows_dropped_by_watermark.unwrap_or(0) > 0)
            })
            .count();
        let input = q.totals.input_rows.max(1);
        let share = dropped as f64 / input as f64;
        let title = format!(
            "Query {} dropped late rows behind its watermark in {batches} batch{}: {dropped} row{} at its stateful operator, against {} input rows (after a partial aggregation one dropped row can stand for many input rows)",
            q.label(),
            if batches == 1 { "" } else { "es" },
            if dropped == 1 { "" } else { "s" },
            q.totals.input_rows
        );
        let severity = if share >= t.get(&HIGH_SHARE) {
            Severity::Medium
        } else {
            Severity::Low
        };
        findings.push(
            Finding::new(&STREAMING_LATE_ROWS, severity, title, 0)
                .evidence("query_id", q.id.clone())
                .evidence("rows_dropped_by_watermark", dropped)
                .evidence("input_rows", q.totals.input_rows)
                .evidence("batches_with_drops", batches)
                .recommend("If the data is legitimately that late, lengthen the watermark's delay (`withWatermark(\"ts\", \"...\")`), which holds more state for longer; if not, look at the producer (clock skew, replays). Count the drops in monitoring either way: they are missing from the results."),
        );
    }
    findings
}
