//! Two runs of one Structured Streaming query, micro-batch against micro-batch: queries are
//! paired by name (else by id, which a checkpoint keeps across restarts), and each side says
//! how its batches ran: how long, against the trigger, with how many tasks, at what rates.

use std::collections::HashMap;

use sparkdiag_contract::Report;
use sparkdiag_contract::diff::{QueryDiff, QuerySide};
use sparkdiag_contract::streaming::QueryOut;
use sparkdiag_model::quantile::{median, shs_quantiles};

/// Each query of either run, paired with its counterpart in the other; BEFORE's order, then
/// AFTER's queries BEFORE did not run.
pub(crate) fn compare(before: &Report, after: &Report) -> Vec<QueryDiff> {
    fn queries(r: &Report) -> Vec<&QueryOut> {
        r.streaming.iter().flat_map(|s| s.queries.iter()).collect()
    }
    // Each job's tasks run (skipped ones left out), looked up once per batch's job.
    fn tasks_of_job(r: &Report) -> HashMap<i64, i64> {
        r.jobs
            .iter()
            .map(|j| (j.job_id, j.num_tasks - j.skipped_tasks))
            .collect()
    }
    let (qb, qa) = (queries(before), queries(after));
    let (tasks_b, tasks_a) = (tasks_of_job(before), tasks_of_job(after));
    let key = |q: &QueryOut| q.name.clone().unwrap_or_else(|| q.id.clone());
    let mut out = Vec::new();
    let mut taken = vec![false; qa.len()];
    for b in &qb {
        let found = qa
            .iter()
            .enumerate()
            .find(|(i, a)| !taken[*i] && key(a) == key(b))
            .map(|(i, a)| {
                taken[i] = true;
                *a
            });
        out.push(QueryDiff {
            query: key(b),
            before: Some(side(b, &tasks_b)),
            after: found.map(|a| side(a, &tasks_a)),
        });
    }
    for (a, _) in qa.iter().zip(&taken).filter(|(_, t)| !**t) {
        out.push(QueryDiff {
            query: key(a),
            before: None,
            after: Some(side(a, &tasks_a)),
        });
    }
    out
}

/// How one query's micro-batches ran, from its progress events and the jobs they name.
fn side(q: &QueryOut, tasks_of_job: &HashMap<i64, i64>) -> QuerySide {
    let mut durations: Vec<i64> = q.batches.iter().filter_map(|b| b.duration_ms).collect();
    // The History Server's quantiles, as the report's task durations are.
    let (median_batch_ms, p95_batch_ms) = match shs_quantiles(&mut durations, &[0.5, 0.95]) {
        Some(q) => (Some(q[0]), Some(q[1])),
        None => (None, None),
    };
    let tasks = q
        .batches
        .iter()
        .filter(|b| !b.job_ids.is_empty())
        .map(|b| b.job_ids.iter().filter_map(|j| tasks_of_job.get(j)).sum());
    QuerySide {
        run_id: q.run_id.clone(),
        status: q.status,
        batches: q.batches.len(),
        trigger_interval_ms: q.trigger_interval_ms,
        median_batch_ms,
        p95_batch_ms,
        batches_over_trigger: q
            .trigger_interval_ms
            .map_or(0, |t| durations.iter().filter(|&&d| d > t).count()),
        median_tasks_per_batch: median(tasks),
        input_rows: q.input_rows,
        median_input_rows_per_second: median(
            q.batches.iter().filter_map(|b| b.input_rows_per_second),
        ),
        median_processed_rows_per_second: median(
            q.batches.iter().filter_map(|b| b.processed_rows_per_second),
        ),
        max_state_rows: q.max_state_rows,
    }
}
