//! Facts of the whole application: what a task processed, which executors offer cores, and the
//! most cores it had at once.

use sparkdiag_model::{Application, Task};

/// Shuffle-read plus input bytes: what a task had to process.
pub fn data_bytes(t: &Task) -> u64 {
    t.metrics.shuffle_read_bytes + t.metrics.input_bytes
}

pub fn data_records(t: &Task) -> u64 {
    t.metrics.shuffle_read_records + t.metrics.input_records
}

/// The executors that offer cores to tasks: every executor, and the driver only in local mode,
/// where it runs the tasks.
pub fn task_executors(app: &Application) -> impl Iterator<Item = &sparkdiag_model::Executor> {
    let driver_runs_tasks = app
        .executors
        .iter()
        .any(|e| e.id == "driver" && e.total_tasks + e.completed_tasks > 0);
    app.executors
        .iter()
        .filter(move |e| e.id != "driver" || driver_runs_tasks)
}

/// The most cores live executors offered at one time. The driver counts only in local mode,
/// where it runs the tasks.
pub fn peak_cores(app: &Application) -> i64 {
    let mut changes: Vec<(i64, i64)> = Vec::new();
    for e in task_executors(app) {
        let Some(cores) = e.cores else { continue };
        changes.push((e.added_ms.unwrap_or(i64::MIN), cores));
        if let Some(removed) = e.removed_ms {
            changes.push((removed, -cores));
        }
    }
    changes.sort_unstable();
    let (mut live, mut peak) = (0i64, 0i64);
    for (_, delta) in changes {
        live += delta;
        peak = peak.max(live);
    }
    peak.max(1)
}
