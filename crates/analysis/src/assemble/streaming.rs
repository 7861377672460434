//! The report's `streaming` section built from the model's queries, batches and sessions.

use sparkdiag_contract::streaming::*;
use sparkdiag_model::streaming::{MicroBatch, StreamingQuery};
use sparkdiag_model::{Application, JobStatus, Workload};

/// The section, or `None` for an application with no streaming query, DStreams batch or
/// Connect operation.
pub fn streaming_out(app: &Application) -> Option<StreamingOut> {
    let s = &app.streaming;
    if !matches!(
        app.workload(),
        Workload::StructuredStreaming | Workload::Dstreams | Workload::SparkConnect
    ) {
        return None;
    }
    let by_id: std::collections::HashMap<i64, &sparkdiag_model::Job> =
        app.jobs.iter().map(|j| (j.job_id, j)).collect();
    let job = |id: i64| by_id.get(&id).copied();
    let mut batch_jobs: std::collections::HashMap<(u32, i64), Vec<i64>> =
        std::collections::HashMap::new();
    for j in &s.query_jobs {
        batch_jobs
            .entry((j.query, j.batch_id))
            .or_default()
            .push(j.job_id);
    }
    let span = |ids: &[i64]| -> (Option<i64>, Option<i64>, usize) {
        let start = ids.iter().filter_map(|&i| job(i)?.submission_ms).min();
        let end = ids.iter().filter_map(|&i| job(i)?.completion_ms).max();
        let failed = ids
            .iter()
            .filter(|&&i| job(i).is_some_and(|j| j.status == JobStatus::Failed))
            .count();
        (start, end, failed)
    };
    let queries = s
        .queries
        .iter()
        .enumerate()
        .map(|(i, q)| query_out(&batch_jobs, app.end_ms.is_some(), i, q))
        .collect();
    let dstreams = (!s.dstream_batches.is_empty()).then(|| DStreamsOut {
        batch_interval_ms: dstream_interval_ms(app),
        batches: s
            .dstream_batches
            .iter()
            .map(|b| {
                let (start, end, failed) = span(&b.jobs);
                DStreamBatchOut {
                    batch_time_ms: b.batch_time_ms,
                    job_ids: b.jobs.clone(),
                    scheduling_delay_ms: start.map(|t| t - b.batch_time_ms),
                    processing_ms: start.zip(end).map(|(s, e)| e - s),
                    total_delay_ms: end.map(|e| e - b.batch_time_ms),
                    failed_jobs: failed,
                }
            })
            .collect(),
        batches_dropped: s.dstream_batches_dropped,
    });
    let connect = (!s.connect_operations.is_empty()).then(|| {
        // Each stage attempt's work, by the first job that named it.
        let mut work: std::collections::HashMap<i64, (i64, i64, i64)> =
            std::collections::HashMap::new();
        for stage in &app.stages {
            if let Some(&first) = stage.job_ids.iter().min() {
                let w = work.entry(first).or_default();
                w.0 += stage.totals.executor_run_time;
                w.1 += stage.totals.shuffle_read_bytes();
                w.2 += stage.totals.shuffle_write_bytes;
            }
        }
        let mut sessions: Vec<ConnectSessionOut> = Vec::new();
        for op in &s.connect_operations {
            let (start, end, failed) = span(&op.jobs);
            let of = |f: fn(&(i64, i64, i64)) -> i64| -> i64 {
                op.jobs.iter().filter_map(|j| work.get(j)).map(f).sum()
            };
            let out = ConnectOperationOut {
                operation_id: op.operation_id.clone(),
                job_ids: op.jobs.clone(),
                duration_ms: start.zip(end).map(|(s, e)| e - s),
                failed_jobs: failed,
                executor_run_time_ms: of(|w| w.0),
                shuffle_read_bytes: of(|w| w.1),
                shuffle_write_bytes: of(|w| w.2),
            };
            match sessions.iter_mut().find(|x| x.session_id == op.session_id) {
                Some(session) => session.operations.push(out),
                None => sessions.push(ConnectSessionOut {
                    session_id: op.session_id.clone(),
                    user: op.user.clone(),
                    operations: vec![out],
                }),
            }
        }
        ConnectOut {
            sessions,
            operations_dropped: s.connect_operations_dropped,
        }
    });
    Some(StreamingOut {
        queries,
        queries_dropped: s.queries_dropped,
        dstreams,
        connect,
    })
}

type BatchJobs = std::collections::HashMap<(u32, i64), Vec<i64>>;

fn query_out(
    batch_jobs: &BatchJobs,
    app_ended: bool,
    index: usize,
    q: &StreamingQuery,
) -> QueryOut {
    let end = q.terminated.as_ref();
    QueryOut {
        id: q.id.clone(),
        run_id: q.run_id.clone(),
        name: q.name.clone(),
        started_ms: q.started_ms,
        status: match end {
            None if app_ended => "ended_with_application",
            None => "running",
            Some(e) if e.exception.is_some() => "failed",
            Some(_) => "stopped",
        },
        terminated_ms: end.and_then(|e| e.at_ms),
        exception: end.and_then(|e| e.exception.clone()),
        error_class: end.and_then(|e| e.error_class.clone()),
        sources: q.sources.clone(),
        sink: q.sink.clone(),
        progress_events: q.totals.progress_events,
        idle_events: q.idle_events,
        input_rows: q.totals.input_rows,
        max_state_rows: q.totals.max_state_rows,
        rows_dropped_by_watermark: q.totals.rows_dropped_by_watermark,
        batches_dropped: q.totals.batches_dropped,
        trigger_interval_ms: sparkdiag_model::streaming::trigger_interval_ms(q),
        batches: q
            .batches
            .iter()
            .map(|b| batch_out(batch_jobs, index, q, b))
            .collect(),
    }
}

fn batch_out(batch_jobs: &BatchJobs, index: usize, q: &StreamingQuery, b: &MicroBatch) -> BatchOut {
    let p = &b.parts;
    let parts = [
        ("triggerExecution", p.trigger_execution),
        ("latestOffset", p.latest_offset),
        ("getOffset", p.get_offset),
        ("getBatch", p.get_batch),
        ("queryPlanning", p.query_planning),
        ("addBatch", p.add_batch),
        ("walCommit", p.wal_commit),
        ("commitOffsets", p.commit_offsets),
        ("commitBatch", p.commit_batch),
        ("setOffsetRange", p.set_offset_range),
    ];
    BatchOut {
        batch_id: b.batch_id,
        timestamp_ms: b.timestamp_ms,
        duration_ms: b.duration_ms,
        duration_parts_ms: parts
            .into_iter()
            .filter_map(|(k, v)| Some((k, v?)))
            .collect(),
        input_rows: b.input_rows,
        input_rows_per_second: b.input_rows_per_second,
        processed_rows_per_second: b.processed_rows_per_second,
        sources: b
            .sources
            .iter()
            .map(|s| SourceOut {
                description: q
                    .sources
                    .get(s.source as usize)
                    .cloned()
                    .unwrap_or_default(),
                input_rows: s.input_rows,
                input_rows_per_second: s.input_rows_per_second,
                processed_rows_per_second: s.processed_rows_per_second,
            })
            .collect(),
        sink_output_rows: b.sink_output_rows,
        watermark_ms: b.watermark_ms,
        state_operators: b
            .state
            .iter()
            .map(|s| StateOut {
                operator_name: s.operator_name.clone(),
                rows_total: s.rows_total,
                rows_updated: s.rows_updated,
                rows_removed: s.rows_removed,
                memory_used_bytes: s.memory_used_bytes,
                rows_dropped_by_watermark: s.rows_dropped_by_watermark,
                shuffle_partitions: s.shuffle_partitions,
                state_store_instances: s.state_store_instances,
            })
            .collect(),
        job_ids: batch_jobs
            .get(&(index as u32, b.batch_id))
            .cloned()
            .unwrap_or_default(),
    }
}

/// The DStreams batch interval: the smallest step between consecutive batch times.
pub fn dstream_interval_ms(app: &Application) -> Option<i64> {
    let mut times: Vec<i64> = app
        .streaming
        .dstream_batches
        .iter()
        .map(|b| b.batch_time_ms)
        .collect();
    times.sort_unstable();
    times
        .windows(2)
        .map(|w| w[1] - w[0])
        .filter(|&d| d > 0)
        .min()
}
