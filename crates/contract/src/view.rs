//! What the views draw that the JSON contract does not carry: every task's duration and span for
//! the charts, and each SQL execution's plan tree with Spark's wrappers for the HTML page.
//!
//! It is a separate struct, not more `Report` fields, because it is per task (a log of a million
//! tasks would add megabytes to every JSON report) and because `sparkdiag/report/v1` stays byte
//! for byte what it was. It is built once, in the analysis step, from the model; the views then
//! need only the [`crate::Report`] and this.

use sparkdiag_model::{Application, SparkPlanInfo, TaskOutcome};

/// Per-task and plan-shape data for the charts and the HTML view of one application.
#[derive(Debug, Default, Clone)]
pub struct ViewData {
    /// Where the charts' time axes start: the application start, else the earliest time seen.
    pub origin_ms: Option<i64>,
    /// Where they end: the application end (or last event), or the latest time seen if later.
    pub horizon_ms: Option<i64>,
    /// One per stage attempt, in the order of the report's `stages`.
    pub stages: Vec<StageTasks>,
    /// Every task's launch and run time, for the cores-busy chart.
    pub task_spans: Vec<TaskSpan>,
    /// The plan that ran of each SQL execution that has one, in the order of the report's `sql`.
    pub plans: Vec<PlanTree>,
}

/// The task durations of one stage attempt.
#[derive(Debug, Default, Clone)]
pub struct StageTasks {
    pub stage_id: i64,
    pub attempt_id: i64,
    /// Successful tasks with metrics (the History Server's population), in ms, sorted.
    pub succeeded_ms: Vec<u32>,
    /// Failed tasks, in ms, sorted.
    pub failed_ms: Vec<u32>,
}

#[derive(Debug, Clone, Copy)]
pub struct TaskSpan {
    pub launch_ms: i64,
    pub duration_ms: u32,
}

/// Spark's structured plan (`sparkPlanInfo`) of one SQL execution, flattened in pre-order (the
/// order of the report's `plan_nodes`), wrappers such as `WholeStageCodegen` and
/// `InputAdapter` included.
#[derive(Debug, Default, Clone)]
pub struct PlanTree {
    pub execution_id: i64,
    /// Node 0 is the root.
    pub nodes: Vec<PlanTreeNode>,
}

#[derive(Debug, Default, Clone)]
pub struct PlanTreeNode {
    pub name: String,
    /// Spark's node id (`plan_nodes[].index`); `None` for the wrappers Spark's graph skips.
    pub spark_id: Option<usize>,
    /// Indexes into [`PlanTree::nodes`].
    pub children: Vec<usize>,
}

impl ViewData {
    /// The one place the views' per-task data is taken from the model.
    pub fn new(app: &Application) -> ViewData {
        let stages = app
            .stages
            .iter()
            .map(|stage| {
                let tasks = app.stage_tasks(stage);
                let durations = |outcome: TaskOutcome| -> Vec<u32> {
                    let mut d: Vec<u32> = tasks
                        .iter()
                        .filter(|t| t.outcome == outcome)
                        .filter(|t| t.has_metrics || outcome == TaskOutcome::Failed)
                        .map(|t| t.duration_ms)
                        .collect();
                    d.sort_unstable();
                    d
                };
                StageTasks {
                    stage_id: stage.stage_id,
                    attempt_id: stage.attempt_id,
                    succeeded_ms: durations(TaskOutcome::Success),
                    failed_ms: durations(TaskOutcome::Failed),
                }
            })
            .collect();
        let task_spans: Vec<TaskSpan> = app
            .tasks
            .iter()
            .map(|t| TaskSpan {
                launch_ms: t.launch_ms,
                duration_ms: t.duration_ms,
            })
            .collect();
        let origin_ms = app
            .start_ms
            .or_else(|| app.stages.iter().filter_map(|s| s.submission_ms).min())
            .or_else(|| task_spans.iter().map(|t| t.launch_ms).min());
        let seen = app
            .stages
            .iter()
            .filter_map(|s| s.completion_ms.or(s.submission_ms))
            .chain(
                task_spans
                    .iter()
                    .map(|t| t.launch_ms.saturating_add(i64::from(t.duration_ms))),
            )
            .max();
        let horizon_ms = match (app.effective_end_ms(), seen) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let plans = app
            .sql
            .iter()
            .filter_map(|sql| Some(PlanTree::new(sql.execution_id, sql.plan_that_ran()?)))
            .collect();
        ViewData {
            origin_ms,
            horizon_ms,
            stages,
            task_spans,
            plans,
        }
    }

    /// The plan tree of SQL execution `execution_id`.
    pub fn plan(&self, execution_id: i64) -> Option<&PlanTree> {
        self.plans.iter().find(|p| p.execution_id == execution_id)
    }
}

impl PlanTree {
    fn new(execution_id: i64, root: &SparkPlanInfo) -> PlanTree {
        let graph = sparkdiag_model::PlanGraph::new(root);
        let mut nodes: Vec<PlanTreeNode> = Vec::with_capacity(graph.preorder.len());
        // The graph's pre-order walks `children` in order, so a node's children follow it, each
        // after the whole subtree of the one before.
        fn walk(node: &SparkPlanInfo, ids: &[Option<usize>], nodes: &mut Vec<PlanTreeNode>) {
            let index = nodes.len();
            nodes.push(PlanTreeNode {
                name: node.node_name.clone(),
                spark_id: ids.get(index).copied().flatten(),
                children: Vec::new(),
            });
            for child in &node.children {
                let at = nodes.len();
                nodes[index].children.push(at);
                walk(child, ids, nodes);
            }
        }
        walk(root, &graph.ids, &mut nodes);
        PlanTree {
            execution_id,
            nodes,
        }
    }
}
