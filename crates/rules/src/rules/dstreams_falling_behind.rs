//! ST007 dstreams-falling-behind: DStreams batches take longer than the batch interval and the
//! scheduling delay grows.

use super::common::duration;
use super::streaming_common::median;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_BATCHES: Threshold = threshold(
    "min_batches",
    5.0,
    "batches",
    "batches (with a completed job) needed to judge a DStreams application",
    "sparkdiag's own",
);

pub const MIN_OVER_SHARE: Threshold = threshold(
    "min_over_share",
    0.5,
    "share",
    "share of the batches whose processing took longer than the batch interval",
    "Spark's Streaming tab: processing time above the batch interval means the queue grows",
);

declare_rule! {
    /// ## What it does
    /// Groups the jobs of a DStreams application by their batch time (job property
    /// `spark.streaming.internal.batchTime`). A batch's processing time runs from its first job's
    /// submission to its last job's end, its scheduling delay from the batch time to its first
    /// job. When most batches process for longer than the batch interval, batches queue up:
    /// says how the scheduling delay grew and what interval the batches could meet.
    ///
    /// ## Why is this bad?
    /// A DStreams application runs one batch at a time (`spark.streaming.concurrentJobs` = 1):
    /// when a batch takes longer than the interval, the next waits, the delay grows without end,
    /// received blocks pile up in memory, and the results fall further behind real time.
    ///
    /// ## How to fix it
    /// Make a batch cheaper (its jobs are in the finding), give it more cores, raise the batch
    /// interval to what a batch takes, or bound the intake (`spark.streaming.backpressure.enabled`,
    /// `spark.streaming.kafka.maxRatePerPartition`, `spark.streaming.receiver.maxRate`).
    /// DStreams are deprecated: Structured Streaming's triggers and source limits do this better.
    ///
    /// ## Threshold and its source
    /// `min_batches` = 5 batches, `min_over_share` = 0.5 of them processing for longer than the interval
    /// (the smallest step between batch times). High when the scheduling delay at the end is
    /// more than ten intervals. Impact 0: a stream has no end to bring forward.
    pub static DSTREAMS_FALLING_BEHIND = {
        code: "ST007",
        name: "dstreams-falling-behind",
        category: Streaming,
        claims: Outcome,
        needs: [Jobs],
        summary: "DStreams batches take longer than the batch interval: the scheduling delay grows",
        thresholds: &[MIN_BATCHES, MIN_OVER_SHARE],
        check: check,
    };
}

struct Batch {
    time: i64,
    start: i64,
    end: i64,
    jobs: Vec<i64>,
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    let by_id: std::collections::HashMap<i64, &sparkdiag_model::Job> =
        app.jobs.iter().map(|j| (j.job_id, j)).collect();
    let mut batches: Vec<Batch> = app
        .streaming
        .dstream_batches
        .iter()
        .filter_map(|b| {
            let jobs: Vec<&sparkdiag_model::Job> = b
                .jobs
                .iter()
                .filter_map(|id| by_id.get(id).copied())
                .collect();
            Some(Batch {
                time: b.batch_time_ms,
                start: jobs.iter().filter_map(|j| j.submission_ms).min()?,
                end: jobs.iter().filter_map(|j| j.completion_ms).max()?,
                jobs: b.jobs.clone(),
            })
        })
        .collect();
    batches.sort_by_key(|b| b.time);
    // Two at the least, whatever `min_batches` is set to.
    if batches.len() < 2 || (batches.len() as f64) < t.get(&MIN_BATCHES) {
        return Vec::new();
    }
    let Some(interval) = batches
        .windows(2)
        .map(|w| w[1].time - w[0].time)
        .filter(|&d| d > 0)
        .min()
    else {
        return Vec::new();
    };
    let processing: Vec<i64> = batches.iter().map(|b| b.end - b.start).collect();
    let over = processing.iter().filter(|&&p| p > interval).count();
    if (over as f64) < batches.len() as f64 * t.get(&MIN_OVER_SHARE) {
        return Vec::new();
    }
    let delay = |b: &Batch| (b.start - b.time).max(0);
    let first_delay = delay(&batches[0]);
    let last_delay = delay(batches.last().expect("min_batches"));
    let median_processing = median(processing.iter().copied()).unwrap_or(0);
    let title = format!(
        "DStreams batches take longer than the {} batch interval: {over} of {} batches (median processing {}); the scheduling delay grew from {} to {}",
        duration(interval),
        batches.len(),
        duration(median_processing),
        duration(first_delay),
        duration(last_delay),
    );
    let growth_per_batch = (median_processing - interval).max(0);
    let severity = if last_delay > 10 * interval {
        Severity::High
    } else {
        Severity::Medium
    };
    let slowest = batches
        .iter()
        .max_by_key(|b| b.end - b.start)
        .expect("min_batches");
    vec![
        Finding::new(&DSTREAMS_FALLING_BEHIND, severity, title, 0)
            .jobs(slowest.jobs.iter().copied())
            .evidence("batch_interval_ms", interval)
            .evidence("batches", batches.len())
            .evidence("batches_over_interval", over)
            .evidence("median_processing_ms", median_processing)
            .evidence("first_scheduling_delay_ms", first_delay)
            .evidence("last_scheduling_delay_ms", last_delay)
            .evidence("delay_growth_per_batch_ms", growth_per_batch)
            .evidence("slowest_batch_time_ms", slowest.time)
            .recommend(format!(
                "Each batch adds about {} to the queue and the delay never clears at this pace. Make a batch cheaper or give it more cores, raise the batch interval to at least {} (what a batch takes), or bound the intake with `spark.streaming.backpressure.enabled=true` (and `spark.streaming.kafka.maxRatePerPartition` / `spark.streaming.receiver.maxRate`). DStreams are deprecated: Structured Streaming's triggers and `maxOffsetsPerTrigger` do this better.",
                duration(growth_per_batch),
                duration(median_processing)
            )),
    ]
}
