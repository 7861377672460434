//! What is asked of one analysed application beyond its report (`sparkdiag_contract::detail`),
//! read from its model on demand: one stage's executors and slowest tasks, and task failures
//! grouped by cause (of the application, or of one executor). `sparkdiag mcp` answers `get_stage` and `failure_postmortem` from these.

use std::collections::BTreeMap;

use sparkdiag_contract::detail::{
    ExecutorTasks, FailureGroup, StageDetail, TaskFailures, TaskOut, TaskOutcome,
};
use sparkdiag_model::{Application, TaskFailure};

use crate::Analysis;

/// The most failure causes [`task_failures`] lists.
pub const MAX_FAILURE_GROUPS: usize = 15;

/// The stage attempt at `index` (of `report.stages`, which is indexed like the model's stages):
/// its executors by task time, its `slowest` longest tasks and its failures by cause; `None`
/// when there is no such stage.
pub fn stage_detail(analysis: &Analysis, index: usize, slowest: usize) -> Option<StageDetail> {
    let app = &analysis.app;
    let stage = app.stages.get(index)?;
    let tasks = app.stage_tasks(stage);
    let mut by_executor: BTreeMap<u32, ExecutorTasks> = BTreeMap::new();
    for t in tasks.iter() {
        let e = by_executor.entry(t.executor).or_insert_with(|| {
            let ex = app.executor(t);
            ExecutorTasks {
                executor_id: ex.id.clone(),
                host: ex.host.clone(),
                tasks: 0,
                failed_tasks: 0,
                killed_tasks: 0,
                task_time_ms: 0,
                max_task_ms: 0,
                gc_ms: 0,
                shuffle_read_bytes: 0,
                spill_bytes: 0,
            }
        });
        e.tasks += 1;
        e.failed_tasks += i64::from(t.outcome == sparkdiag_model::TaskOutcome::Failed);
        e.killed_tasks += i64::from(t.outcome == sparkdiag_model::TaskOutcome::Killed);
        e.task_time_ms += i64::from(t.duration_ms);
        e.max_task_ms = e.max_task_ms.max(i64::from(t.duration_ms));
        e.gc_ms += i64::from(t.metrics.gc_ms);
        e.shuffle_read_bytes += t.metrics.shuffle_read_bytes as i64;
        e.spill_bytes += (t.metrics.memory_spill + t.metrics.disk_spill) as i64;
    }
    let mut executors: Vec<ExecutorTasks> = by_executor.into_values().collect();
    executors.sort_by_key(|e| std::cmp::Reverse(e.task_time_ms));

    let mut longest: Vec<&sparkdiag_model::Task> = tasks.iter().collect();
    longest.sort_by_key(|t| std::cmp::Reverse(t.duration_ms));
    let slowest_tasks = longest
        .iter()
        .take(slowest)
        .map(|t| {
            let ex = app.executor(t);
            TaskOut {
                task_id: t.task_id,
                index: t.index,
                attempt: t.attempt,
                executor_id: ex.id.clone(),
                host: ex.host.clone(),
                launch_ms: t.launch_ms,
                duration_ms: t.duration_ms,
                run_ms: t.metrics.run_ms,
                gc_ms: t.metrics.gc_ms,
                fetch_wait_ms: t.metrics.fetch_wait_ms,
                scheduler_delay_ms: t.scheduler_delay_ms(),
                input_bytes: t.metrics.input_bytes,
                shuffle_read_bytes: t.metrics.shuffle_read_bytes,
                shuffle_write_bytes: t.metrics.shuffle_write_bytes,
                memory_spill_bytes: t.metrics.memory_spill,
                disk_spill_bytes: t.metrics.disk_spill,
                outcome: match t.outcome {
                    sparkdiag_model::TaskOutcome::Success => TaskOutcome::Success,
                    sparkdiag_model::TaskOutcome::Failed => TaskOutcome::Failed,
                    sparkdiag_model::TaskOutcome::Killed => TaskOutcome::Killed,
                },
                speculative: t.speculative,
            }
        })
        .collect();
    Some(StageDetail {
        tasks: longest.len(),
        executors,
        slowest_tasks,
        task_failures: grouped(app, |f| {
            f.stage_id == stage.stage_id && f.stage_attempt_id == stage.attempt_id
        }),
    })
}

/// Every task failure of the application grouped by cause, the most frequent first (at most
/// [`MAX_FAILURE_GROUPS`] causes).
pub fn task_failures(analysis: &Analysis) -> TaskFailures {
    grouped(&analysis.app, |_| true)
}

/// The task failures on the executor `executor_id`, grouped by cause as [`task_failures`].
pub fn executor_failures(analysis: &Analysis, executor_id: &str) -> TaskFailures {
    let app = &analysis.app;
    grouped(app, |f| {
        app.executors
            .get(f.executor as usize)
            .is_some_and(|e| e.id == executor_id)
    })
}

/// The failures `keep` keeps, grouped by reason, exception class and the message's first line.
fn grouped(app: &Application, keep: impl Fn(&TaskFailure) -> bool) -> TaskFailures {
    let mut groups: Vec<(String, FailureGroup)> = Vec::new();
    let mut total = 0usize;
    for f in app.task_failures.iter().filter(|f| keep(f)) {
        total += 1;
        let first_line: String = f
            .message
            .as_deref()
            .and_then(|m| m.lines().next())
            .unwrap_or_default()
            .chars()
            .take(300)
            .collect();
        let executor = app
            .executors
            .get(f.executor as usize)
            .map(|e| e.id.clone())
            .unwrap_or_default();
        let at = match groups.iter().position(|(line, g)| {
            g.reason == f.reason && g.exception_class == f.exception_class && *line == first_line
        }) {
            Some(at) => at,
            None => {
                groups.push((
                    first_line,
                    FailureGroup {
                        reason: f.reason.clone(),
                        exception_class: f.exception_class.clone(),
                        count: 0,
                        message: f.message.clone(),
                        stage_ids: Vec::new(),
                        executor_ids: Vec::new(),
                    },
                ));
                groups.len() - 1
            }
        };
        let group = &mut groups[at].1;
        group.count += 1;
        if !group.stage_ids.contains(&f.stage_id) && group.stage_ids.len() < 10 {
            group.stage_ids.push(f.stage_id);
        }
        if !group.executor_ids.contains(&executor) && group.executor_ids.len() < 10 {
            group.executor_ids.push(executor);
        }
    }
    // Stable: causes as frequent as each other stay in the order they first happened.
    groups.sort_by_key(|(_, g)| std::cmp::Reverse(g.count));
    TaskFailures {
        total,
        causes: groups.len(),
        groups: groups
            .into_iter()
            .take(MAX_FAILURE_GROUPS)
            .map(|(_, g)| g)
            .collect(),
    }
}
