//! ST005 streaming-state-partitions: every micro-batch runs hundreds of near-empty state tasks.

use super::streaming_common::{median, steady_batches};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_PARTITIONS: Threshold = threshold(
    "min_partitions",
    64.0,
    "partitions",
    "state partitions below which a batch's task count is not worth a finding",
    "sparkdiag's own; Spark's default is 200 (spark.sql.shuffle.partitions)",
);

pub const MAX_ROWS_PER_PARTITION: Threshold = threshold(
    "max_rows_per_partition",
    100.0,
    "rows",
    "median input rows per batch per state partition under which the partitions are mostly empty",
    "sparkdiag's own",
);

declare_rule! {
    /// ## What it does
    /// For each stateful streaming query, compares its state operators' shuffle partitions
    /// (`numShufflePartitions`, else `spark.sql.shuffle.partitions`) with the rows a batch
    /// reads. When a batch's rows would not fill even `max_rows_per_partition` rows a
    /// partition, every micro-batch schedules that many tasks, each loading and committing a
    /// state store, for almost nothing.
    ///
    /// ## Why is this bad?
    /// Each state partition is a task and a state store version per batch: 200 of them on a few
    /// rows spend the batch on scheduling and checkpoint files, not on the data, and the state
    /// directory holds 200 stores' files per batch.
    ///
    /// ## How to fix it
    /// A stateful query's partition count is fixed in its checkpoint: changing
    /// `spark.sql.shuffle.partitions` has no effect on a query that restarts from the same
    /// checkpoint. Set it (to a small multiple of the cores) before starting the query from a
    /// new checkpoint location, which starts its state afresh.
    ///
    /// ## Threshold and its source
    /// At least `min_partitions` = 64 state partitions and a median of fewer than
    /// `max_rows_per_partition` = 100 input rows per partition per batch, over the steady batches.
    /// Medium; its impact is 0 (each batch's saving is its scheduling, not a known wall-clock).
    pub static STREAMING_STATE_PARTITIONS = {
        code: "ST005",
        name: "streaming-state-partitions",
        category: Streaming,
        claims: Saving,
        needs: [StreamingQueries],
        summary: "Every micro-batch runs hundreds of state partitions for a few rows",
        thresholds: &[MIN_PARTITIONS, MAX_ROWS_PER_PARTITION],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let configured = ctx
        .app
        .spark_properties
        .get("spark.sql.shuffle.partitions")
        .and_then(|p| p.trim().parse::<i64>().ok())
        .unwrap_or(200);
    let mut findings = Vec::new();
    for (index, q) in ctx.app.streaming.queries.iter().enumerate() {
        let batches = steady_batches(q);
        let with_state: Vec<_> = batches.iter().filter(|b| !b.state.is_empty()).collect();
        if with_state.is_empty() {
            continue;
        }
        let partitions = with_state
            .iter()
            .flat_map(|b| {
                b.state
                    .iter()
                    .map(|s| s.shuffle_partitions.unwrap_or(configured))
            })
            .max()
            .unwrap_or(configured);
        if (partitions as f64) < t.get(&MIN_PARTITIONS) {
            continue;
        }
        let rows = median(with_state.iter().map(|b| b.input_rows)).unwrap_or(0);
        if rows as f64 >= partitions as f64 * t.get(&MAX_ROWS_PER_PARTITION) {
            continue;
        }
        let batch_ids: std::collections::BTreeSet<i64> =
            with_state.iter().map(|b| b.batch_id).collect();
        let jobs: Vec<i64> = ctx
            .app
            .streaming
            .query_jobs
            .iter()
            .filter(|j| j.query as usize == index && batch_ids.contains(&j.batch_id))
            .map(|j| j.job_id)
            .collect();
        let stages: std::collections::BTreeSet<i64> = ctx
            .app
            .jobs
            .iter()
            .filter(|j| jobs.binary_search(&j.job_id).is_ok())
            .flat_map(|j| j.stage_ids.iter().copied())
            .collect();
        let tasks: i64 = ctx
            .app
            .stages
            .iter()
            .filter(|s| stages.contains(&s.stage_id))
            .map(|s| s.num_tasks)
            .sum();
        let title = format!(
            "Query {} runs {partitions} state partitions for batches of a median {rows} rows: {} batches ran {tasks} tasks in all",
            q.label(),
            with_state.len()
        );
        findings.push(
            Finding::new(&STREAMING_STATE_PARTITIONS, Severity::Medium, title, 0)
                .jobs(jobs.iter().copied().take(50))
                .stages(stages.iter().copied().take(50))
                .evidence("query_id", q.id.clone())
                .evidence("state_partitions", partitions)
                .evidence("median_input_rows_per_batch", rows)
                .evidence("batches", with_state.len())
                .evidence("tasks_in_those_batches", tasks)
                .recommend(format!(
                    "A stateful query keeps its partition count in its checkpoint: setting `spark.sql.shuffle.partitions` does nothing for a restart from the same checkpoint. Set it to about {} (a small multiple of the {} cores) and start the query from a new checkpoint location; its state then starts empty.",
                    (ctx.cores * 2).max(2),
                    ctx.cores
                )),
        );
    }
    findings
}
