//! ST001 streaming-falling-behind: a Structured Streaming query cannot keep up with its input.

use super::common::duration;
use super::streaming_common::{is_rate_source, median, rate, source_limit, steady_batches};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_BATCHES: Threshold = threshold(
    "min_batches",
    5.0,
    "batches",
    "steady batches (with input, the first one left out) needed to judge a query",
    "sparkdiag's own: fewer say nothing about a trend",
);

pub const MIN_BEHIND_SHARE: Threshold = threshold(
    "min_behind_share",
    0.5,
    "share",
    "share of the steady batches that overran the trigger or processed slower than rows came in",
    "sparkdiag's own; Spark warns on every single batch that overruns (ProcessingTimeExecutor)",
);

pub const RATE_MARGIN: Threshold = threshold(
    "rate_margin",
    0.9,
    "ratio",
    "a batch is behind when its processed rate is below this share of its input rate",
    "sparkdiag's own: a 10% margin for the rates' one-batch noise",
);

declare_rule! {
    /// ## What it does
    /// For each Structured Streaming query, reads its progress events and counts the batches
    /// (after the first) that took longer than the processing-time trigger interval, or whose
    /// `processedRowsPerSecond` stayed below their `inputRowsPerSecond`. When most batches do,
    /// the query is falling behind: it says by how much, and whether the input per batch grows
    /// (the backlog building up). Where every batch overruns, the trigger interval cannot be
    /// read from the log (the next batch starts at once) and the two rates agree; batches that
    /// run back to back while each reads more rows than the last are then the sign, and so are
    /// batches back to back that each read exactly as many rows as the last: a source limit
    /// (`maxFilesPerTrigger`, `maxOffsetsPerTrigger`) hands out a batch's worth and more waits.
    ///
    /// ## Why is this bad?
    /// A query that processes slower than data arrives never catches up: latency grows batch
    /// after batch, a Kafka source falls further behind its topic (and may lose data to
    /// retention), and each batch reads more than the last, so it gets slower still.
    ///
    /// ## How to fix it
    /// Make each batch cheaper (the batch's time parts say whether the work itself, `addBatch`,
    /// or planning and commits dominate; the batch's jobs are in the finding), give the query
    /// more cores, or bound each batch with the source's limit (`maxOffsetsPerTrigger`,
    /// `maxFilesPerTrigger`) so batches stay predictable, and set a trigger interval the batches
    /// can meet.
    ///
    /// ## Threshold and its source
    /// At least `min_batches` = 5 steady batches, `min_behind_share` = 0.5 of them behind (over
    /// the trigger interval, or processed under `rate_margin` = 0.9 of the input rate), or, when
    /// every batch overruns, four in five run back to back while rows per batch grow by a fifth
    /// or stay exactly the same (a source at its limit). High when four
    /// batches in five are. A stream has no end to bring forward, so the impact is 0: the cost
    /// is latency and backlog, said in the title.
    pub static STREAMING_FALLING_BEHIND = {
        code: "ST001",
        name: "streaming-falling-behind",
        category: Streaming,
        claims: Outcome,
        needs: [StreamingQueries],
        summary: "A streaming query processes slower than its input arrives, or overruns its trigger",
        thresholds: &[MIN_BATCHES, MIN_BEHIND_SHARE, RATE_MARGIN],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (index, q) in ctx.app.streaming.queries.iter().enumerate() {
        let batches = steady_batches(q);
        // Two batches at the least, whatever `min_batches` is set to: a trend needs a pair.
        if batches.len() < 2 || (batches.len() as f64) < t.get(&MIN_BATCHES) {
            continue;
        }
        let interval = sparkdiag_model::streaming::trigger_interval_ms(q);
        let over = |b: &&&sparkdiag_model::streaming::MicroBatch| {
            interval.is_some_and(|i| b.duration_ms.is_some_and(|d| d > i))
        };
        let slow = |b: &&&sparkdiag_model::streaming::MicroBatch| match (
            b.input_rows_per_second,
            b.processed_rows_per_second,
        ) {
            (Some(i), Some(p)) => p < i * t.get(&RATE_MARGIN),
            _ => false,
        };
        let behind: Vec<_> = batches.iter().filter(|b| over(b) || slow(b)).collect();
        let half = batches.len() / 2;
        let rows_early = median(batches[..half].iter().map(|b| b.input_rows)).unwrap_or(0);
        let rows_late = median(batches[half..].iter().map(|b| b.input_rows)).unwrap_or(0);
        let growing = rows_late as f64 > rows_early as f64 * 1.2;
        // A batch followed at once by the next: the query never waited for its trigger. With
        // rows per batch growing as well, the backlog builds up even where the rates agree.
        let back_to_back = batches
            .windows(2)
            .filter(
                |w| match (w[0].timestamp_ms, w[1].timestamp_ms, w[0].duration_ms) {
                    (Some(a), Some(b), Some(d)) => b - a <= d + (d / 20).max(100),
                    _ => false,
                },
            )
            .count();
        let busy = back_to_back * 10 >= (batches.len() - 1) * 8;
        // Every batch the same size while none waits for its trigger: the source hands out a
        // batch's worth at a time (maxFilesPerTrigger, maxOffsetsPerTrigger) and has more each
        // time, so the backlog waits behind the cap where no rate or row count grows.
        let capped_rows = batches[0].input_rows > 0
            && batches
                .iter()
                .all(|b| b.input_rows == batches[0].input_rows);
        let mut share = behind.len() as f64 / batches.len() as f64;
        let by_cap = share < t.get(&MIN_BEHIND_SHARE) && busy && capped_rows && !growing;
        let by_backlog = (share < t.get(&MIN_BEHIND_SHARE) && busy && growing) || by_cap;
        if by_backlog {
            share = back_to_back as f64 / (batches.len() - 1) as f64;
        } else if share < t.get(&MIN_BEHIND_SHARE) {
            continue;
        }
        let over_count = batches.iter().filter(over).count();
        let input = median(batches.iter().filter_map(|b| b.input_rows_per_second));
        let processed = median(batches.iter().filter_map(|b| b.processed_rows_per_second));
        let took = median(batches.iter().filter_map(|b| b.duration_ms)).unwrap_or(0);
        let mut title = format!("Query {} is falling behind: ", q.label());
        match interval {
            _ if by_cap => title.push_str(&format!(
                "{} of {} batches ran back to back (median {}), each reading the same {} rows: the source hands a batch no more, and input waits behind every one",
                back_to_back + 1,
                batches.len(),
                duration(took),
                batches[0].input_rows
            )),
            _ if by_backlog => title.push_str(&format!(
                "{} of {} batches ran back to back (median {}), never waiting for a trigger",
                back_to_back + 1,
                batches.len(),
                duration(took)
            )),
            Some(i) if over_count * 2 >= batches.len() => title.push_str(&format!(
                "{} of {} batches took longer than the {} trigger (median {})",
                behind.len(),
                batches.len(),
                duration(i),
                duration(took)
            )),
            _ => title.push_str(&format!(
                "{} of {} batches processed rows slower than they came in",
                behind.len(),
                batches.len()
            )),
        }
        match (input, processed) {
            (Some(_), Some(p)) if by_cap => title.push_str(&format!(
                "; its input and processed rates agree ({}) because they count only what the limit lets in",
                rate(p)
            )),
            (Some(i), Some(p)) => title.push_str(&format!(
                "; input {} against {} processed",
                rate(i),
                rate(p)
            )),
            _ => {}
        }
        // Only a gap the rates can show: at a source's limit they agree whatever waits.
        let catch_up = match (input, processed) {
            (Some(i), Some(p)) if !by_cap && p < i * t.get(&RATE_MARGIN) => format!(
                "At these rates the backlog grows by about {} and never clears: processing must outpace {} to catch up.",
                rate(i - p),
                rate(i)
            ),
            _ => String::new(),
        };
        if growing {
            title.push_str(&format!(
                "; rows per batch grew from {rows_early} to {rows_late}"
            ));
        }
        let source = q.sources.first().map(String::as_str).unwrap_or_default();
        let addbatch_share = {
            let work: i64 = batches.iter().filter_map(|b| b.parts.add_batch).sum();
            let all: i64 = batches.iter().filter_map(|b| b.duration_ms).sum();
            if all > 0 {
                work as f64 / all as f64
            } else {
                0.0
            }
        };
        let mut advice = if addbatch_share >= 0.5 {
            format!(
                "{:.0}% of the batches' time is the work itself (addBatch): make it cheaper (look at the batch's jobs and stages: Python UDFs, wide shuffles, skew) or give the query more cores",
                100.0 * addbatch_share
            )
        } else {
            "Most of the batches' time is around the work (planning, offsets, commits; ST002 says which): make the trigger longer so each batch amortises them".to_string()
        };
        let state_partitions = batches
            .iter()
            .flat_map(|b| b.state.iter().filter_map(|s| s.shuffle_partitions))
            .max()
            .unwrap_or(0);
        let median_rows = median(batches.iter().map(|b| b.input_rows)).unwrap_or(0);
        // ST005's own defaults: 64 partitions or more, under 100 rows a partition.
        if state_partitions >= 64 && median_rows < state_partitions * 100 {
            advice.push_str(&format!(
                "; each batch runs {state_partitions} state partitions, and on batches this small they are most of the work (ST005)"
            ));
        }
        if let (true, Some(limit)) = (by_cap, source_limit(source)) {
            advice.push_str(&format!(
                "; every batch is already at the source's limit, {limit}: a larger limit makes each batch larger, not the query faster"
            ));
        } else if let Some(limit) = source_limit(source) {
            advice.push_str(&format!(
                "; bound each batch with {limit} so batches stay predictable while it catches up"
            ));
        } else if is_rate_source(source) {
            advice.push_str("; the rate source makes rows by the clock, so lower its `rowsPerSecond` to what the query can process");
        }
        if let Some(i) = interval {
            advice.push_str(&format!(
                ", and set a trigger interval the batches can meet (now {}, median batch {})",
                duration(i),
                duration(took)
            ));
        }
        advice.push('.');
        if !catch_up.is_empty() {
            advice.push(' ');
            advice.push_str(&catch_up);
        }
        let slowest = batches.iter().max_by_key(|b| b.duration_ms).copied();
        let jobs = slowest
            .map(|b| {
                ctx.app
                    .streaming
                    .query_jobs
                    .iter()
                    .filter(|j| j.query as usize == index && j.batch_id == b.batch_id)
                    .map(|j| j.job_id)
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        let severity = if share >= 0.8 {
            Severity::High
        } else {
            Severity::Medium
        };
        findings.push(
            Finding::new(&STREAMING_FALLING_BEHIND, severity, title, 0)
                .jobs(jobs)
                .evidence("query_id", q.id.clone())
                .evidence("run_id", q.run_id.clone())
                .evidence("steady_batches", batches.len())
                .evidence("behind_batches", behind.len())
                .evidence("over_trigger_batches", over_count)
                .evidence("back_to_back_batches", back_to_back)
                .evidence("trigger_interval_ms", interval)
                .evidence("median_batch_ms", took)
                .evidence("median_input_rows_per_second", input)
                .evidence("median_processed_rows_per_second", processed)
                .evidence("median_rows_per_batch_first_half", rows_early)
                .evidence("median_rows_per_batch_second_half", rows_late)
                .evidence("slowest_batch_id", slowest.map(|b| b.batch_id))
                .evidence("source", source.to_string())
                .recommend(advice),
        );
    }
    findings
}
