//! What the streaming rules share: medians, the batches worth judging, source-specific advice.

use sparkdiag_model::streaming::{MicroBatch, StreamingQuery};

pub use sparkdiag_model::quantile::median;

/// The batches that read rows, without the run's first batch: it starts the Python workers,
/// plans the query for the first time and, on a restart, replays what the last run left, so it
/// says nothing about the steady state.
pub fn steady_batches(q: &StreamingQuery) -> Vec<&MicroBatch> {
    let first = q.batches.first().map(|b| b.batch_id);
    q.batches
        .iter()
        .filter(|b| b.input_rows > 0 && Some(b.batch_id) != first)
        .collect()
}

/// The batch each query that failed (terminated with an exception) failed in: the latest batch
/// that ran jobs, with those jobs, by query index.
pub fn failing_batches(app: &sparkdiag_model::Application) -> Vec<(usize, i64, Vec<i64>)> {
    let s = &app.streaming;
    s.queries
        .iter()
        .enumerate()
        .filter(|(_, q)| q.terminated.as_ref().is_some_and(|t| t.exception.is_some()))
        .filter_map(|(index, _)| {
            let of_query = || {
                s.query_jobs
                    .iter()
                    .filter(move |j| j.query as usize == index)
            };
            let batch = of_query().map(|j| j.batch_id).max()?;
            let jobs = of_query()
                .filter(|j| j.batch_id == batch)
                .map(|j| j.job_id)
                .collect();
            Some((index, batch, jobs))
        })
        .collect()
}

/// The jobs of the batches failed queries failed in: their post-mortem is the query's.
pub fn failed_query_jobs(app: &sparkdiag_model::Application) -> Vec<i64> {
    failing_batches(app)
        .into_iter()
        .flat_map(|(_, _, jobs)| jobs)
        .collect()
}

/// The setting that bounds each batch of this source, when it has one.
pub fn source_limit(description: &str) -> Option<&'static str> {
    let d = description.to_ascii_lowercase();
    if d.contains("kafka") {
        Some("`maxOffsetsPerTrigger` (Kafka)")
    } else if d.contains("filestreamsource") || d.contains("filesource") {
        Some("`maxFilesPerTrigger` / `maxBytesPerTrigger` (files)")
    } else if d.contains("delta") {
        Some("`maxFilesPerTrigger` / `maxBytesPerTrigger` (Delta)")
    } else if d.contains("kinesis") {
        Some("`maxRecordsPerFetch` / `maxFetchDuration` (Kinesis)")
    } else {
        None
    }
}

/// The rate source is a load generator: its rows arrive by the clock whatever the query does.
pub fn is_rate_source(description: &str) -> bool {
    description.starts_with("RateStream") || description.starts_with("RateSource")
}

/// A rate for people: `40 rows/s`, `1.2k rows/s`.
pub fn rate(r: f64) -> String {
    if r >= 10_000.0 {
        format!("{:.0}k rows/s", r / 1000.0)
    } else if r >= 1000.0 {
        format!("{:.1}k rows/s", r / 1000.0)
    } else if r >= 10.0 {
        format!("{r:.0} rows/s")
    } else {
        format!("{r:.1} rows/s")
    }
}
