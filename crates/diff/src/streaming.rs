//! Two runs of one Structured Streaming query, micro-batch against micro-batch: queries are
//! paired by name (else by id, which a checkpoint keeps across restarts), and each side says
//! how its batches ran: how long, against the trigger, with how many tasks, at what rates.

use sparkdiag_contract::Report;
use sparkdiag_contract::diff::{QueryDiff, QuerySide};
use sparkdiag_contract::streaming::QueryOut;

/// Each query of either run, paired with its counterpart in the other; BEFORE's order, then
/// AFTER's queries BEFORE did not run.
pub(crate) fn compare(before: &Report, after: &Report) -> Vec<QueryDiff> {
    fn queries(r: &Report) -> Vec<&QueryOut> {
        r.streaming.iter().flat_map(|s| s.queries.iter()).collect()
    }
    let (qb, qa) = (queries(before), queries(after));
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
            before: Some(side(before, b)),
            after: found.map(|a| side(after, a)),
        });
    }
    for (a, _) in qa.iter().zip(&taken).filter(|(_, t)| !**t) {
        out.push(QueryDiff {
            query: key(a),
            before: None,
            after: Some(side(after, a)),
        });
    }
    out
}

fn median(mut values: Vec<i64>) -> Option<i64> {
    values.sort_unstable();
    values.get(values.len() / 2).copied()
}

fn median_f(mut values: Vec<f64>) -> Option<f64> {
    values.sort_by(f64::total_cmp);
    values.get(values.len() / 2).copied()
}

/// How one query's micro-batches ran, from its progress events and the jobs they name.
fn side(report: &Report, q: &QueryOut) -> QuerySide {
    let durations: Vec<i64> = q.batches.iter().filter_map(|b| b.duration_ms).collect();
    let p95 = {
        let mut d = durations.clone();
        d.sort_unstable();
        (!d.is_empty()).then(|| d[((d.len() - 1) as f64 * 0.95).round() as usize])
    };
    let tasks_of = |job: i64| {
        report
            .jobs
            .iter()
            .find(|j| j.job_id == job)
            .map_or(0, |j| j.num_tasks - j.skipped_tasks)
    };
    let tasks: Vec<i64> = q
        .batches
        .iter()
        .filter(|b| !b.job_ids.is_empty())
        .map(|b| b.job_ids.iter().map(|&j| tasks_of(j)).sum())
        .collect();
    QuerySide {
        run_id: q.run_id.clone(),
        status: q.status,
        batches: q.batches.len(),
        trigger_interval_ms: q.trigger_interval_ms,
        median_batch_ms: median(durations.clone()),
        p95_batch_ms: p95,
        batches_over_trigger: q
            .trigger_interval_ms
            .map_or(0, |t| durations.iter().filter(|&&d| d > t).count()),
        median_tasks_per_batch: median(tasks),
        input_rows: q.input_rows,
        median_input_rows_per_second: median_f(
            q.batches
                .iter()
                .filter_map(|b| b.input_rows_per_second)
                .collect(),
        ),
        median_processed_rows_per_second: median_f(
            q.batches
                .iter()
                .filter_map(|b| b.processed_rows_per_second)
                .collect(),
        ),
        max_state_rows: q.max_state_rows,
    }
}
