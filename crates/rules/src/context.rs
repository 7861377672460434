//! What every rule needs, computed once: per-stage task statistics and facts, the application's time and
//! how many cores it had.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use sparkdiag_model::{Application, StageAttempt, Task, TaskOutcome};

pub use crate::stage_facts::StageStats;

pub struct Context<'a> {
    pub app: &'a Application,
    /// The application's wall-clock time (to the last event for an incomplete log), without
    /// stretches the clock jumped over.
    pub app_ms: i64,
    /// The application's time as sorted `[start, end)` intervals: start to end, minus clock jumps.
    pub usable: Vec<(i64, i64)>,
    /// The most cores executors offered at once (the driver's, in local mode).
    pub cores: i64,
    /// Indexed like `app.stages`.
    pub stages: Vec<StageStats>,
    /// Physical plans: each SQL execution's (the last adaptive plan when AQE re-planned), or
    /// those of a plan text given on its own.
    pub plans: Vec<PlanInput>,
    /// The slow tasks [`Context::successful_tasks_over`] found, by stage index and limit: the
    /// rules naming slow tasks ask for the same ones, and each ask would unfold the stage again.
    slow_tasks: RefCell<HashMap<SlowTasksKey, Rc<Vec<Task>>>>,
    /// What each stage is (indexed like `app.stages`) and what the application ran on: the
    /// facts the rules' advice is chosen by.
    pub shapes: crate::stage_shape::Shapes,
}

/// A stage attempt's index in `app.stages` and a duration limit's bits.
type SlowTasksKey = (usize, u64);

/// A physical plan and what the log says it cost.
pub struct PlanInput {
    /// The SQL execution it belongs to, for plans from an event log.
    pub sql_execution_id: Option<i64>,
    pub plan: sparkdiag_plan::Plan,
    /// The stages of its jobs.
    pub stage_ids: Vec<i64>,
    /// Wall-clock time of those stages that shuffled (0 for a plan text alone).
    pub shuffle_stage_ms: i64,
    /// What the log measured for the plan's Exchanges (SQL metrics such as `data size`), by
    /// node index in [`PlanInput::plan`]; empty for a plan text alone.
    pub measured: std::collections::HashMap<usize, std::collections::BTreeMap<String, i64>>,
    /// Spark's own node id (its UI's plan graph, `SparkPlanGraph`) of each node of
    /// [`PlanInput::plan`], by node index, for plans from an event log; empty for a plan text.
    pub spark_ids: Vec<Option<u32>>,
}

impl PlanInput {
    /// "SQL execution 3" or "Plan 2 (line 40)", for titles.
    pub fn label(&self, index: usize) -> String {
        match self.sql_execution_id {
            Some(id) => format!("SQL execution {id}"),
            None => format!("Plan {} (line {})", index + 1, self.plan.line),
        }
    }
}

impl<'a> Context<'a> {
    pub fn new(app: &'a Application) -> Context<'a> {
        let end = app.effective_end_ms();
        // Each stage's tasks are looked at here and only here: a folded stage costs a
        // decompression each time it is unfolded, so every figure a rule needs from the tasks
        // is taken in this one look.
        let stages = crate::stage_facts::of_application(app);
        let plans = sql_plans(app, &stages);
        let usable = match (app.start_ms, end) {
            (Some(start), Some(end)) if end > start => {
                crate::impact::subtract(&[(start, end)], &app.clock_jumps)
            }
            _ => Vec::new(),
        };
        Context {
            app,
            app_ms: crate::impact::length(&usable),
            usable,
            cores: peak_cores(app),
            stages,
            plans,
            slow_tasks: Default::default(),
            shapes: crate::stage_shape::of_application(app),
        }
    }

    /// A context holding only plans (a plan text given alone); the application is empty.
    pub fn for_plans(app: &'a Application, plans: Vec<sparkdiag_plan::Plan>) -> Context<'a> {
        Context {
            app,
            app_ms: 0,
            usable: Vec::new(),
            cores: 1,
            stages: Vec::new(),
            slow_tasks: Default::default(),
            shapes: Default::default(),
            plans: plans
                .into_iter()
                .map(|plan| PlanInput {
                    sql_execution_id: None,
                    plan,
                    stage_ids: Vec::new(),
                    shuffle_stage_ms: 0,
                    measured: Default::default(),
                    spark_ids: Vec::new(),
                })
                .collect(),
        }
    }

    pub fn stats(&self, stage: &StageAttempt) -> &StageStats {
        &self.stages[self.index_of(stage)]
    }

    /// What `stage` is: input or shuffle stage, where its partition count came from, what
    /// consumed its shuffle read.
    pub fn shape(&self, stage: &StageAttempt) -> &crate::stage_shape::StageShape {
        &self.shapes.stages[self.index_of(stage)]
    }

    fn index_of(&self, stage: &StageAttempt) -> usize {
        // The stage lives in `app.stages`: its index is its distance from the start.
        let offset =
            (stage as *const StageAttempt as usize).wrapping_sub(self.app.stages.as_ptr() as usize);
        let index = offset / std::mem::size_of::<StageAttempt>();
        assert!(
            std::ptr::eq(&self.app.stages[index], stage),
            "stage of another application"
        );
        index
    }

    /// The successful tasks (with metrics) of the stage attempt at `index` in `app.stages` that
    /// ran longer than `limit_ms`, slowest first (equals in task id order).
    pub fn successful_tasks_over(&self, index: usize, limit_ms: f64) -> Rc<Vec<Task>> {
        let key = (index, limit_ms.to_bits());
        if let Some(found) = self.slow_tasks.borrow().get(&key) {
            return Rc::clone(found);
        }
        let mut slow: Vec<Task> = self
            .app
            .stage_tasks(&self.app.stages[index])
            .iter()
            .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics)
            .filter(|t| f64::from(t.duration_ms) > limit_ms)
            .copied()
            .collect();
        slow.sort_by_key(|t| std::cmp::Reverse(t.duration_ms));
        let slow = Rc::new(slow);
        self.slow_tasks.borrow_mut().insert(key, Rc::clone(&slow));
        slow
    }

    /// Stage attempts with their statistics.
    pub fn stage_stats(&self) -> impl Iterator<Item = (&'a StageAttempt, &StageStats)> {
        self.app.stages.iter().zip(&self.stages)
    }

    /// `part` as a percentage of the application's time, for titles.
    pub fn percent_of_app(&self, part: i64) -> String {
        if self.app_ms <= 0 {
            return "-".into();
        }
        sparkdiag_model::units::share(part as f64 / self.app_ms as f64, 0)
    }
}

/// Parses each SQL execution's plan text once (the plan that ran is the last adaptive one when AQE
/// re-planned) and pairs its operators with Spark's structured plan once, by one algorithm
/// ([`spark_node_ids`]): finding scopes, titles and the Exchanges' measured sizes all use that
/// pairing. Text that does not parse is left out of the plan rules.
fn sql_plans(app: &Application, stats: &[StageStats]) -> Vec<PlanInput> {
    let values = sparkdiag_model::SqlMetricValues::new(app);
    // Each job's stage attempts, so that finding an execution's stages costs its jobs rather
    // than every stage of the application (executions and stages both grow with the log).
    let mut stages_of_job: std::collections::HashMap<i64, Vec<usize>> = Default::default();
    for (i, stage) in app.stages.iter().enumerate() {
        for &job in &stage.job_ids {
            stages_of_job.entry(job).or_default().push(i);
        }
    }
    app.sql
        .iter()
        .filter_map(|sql| {
            let text = sql
                .final_plan_description
                .as_deref()
                .unwrap_or(&sql.plan_description);
            let plan = sparkdiag_plan::parse_plans(text).ok()?.into_iter().next()?;
            let mut indices: Vec<usize> = sql
                .job_ids
                .iter()
                .filter_map(|job| stages_of_job.get(job))
                .flatten()
                .copied()
                .collect();
            indices.sort_unstable();
            indices.dedup();
            let stages: Vec<(usize, &StageAttempt)> =
                indices.into_iter().map(|i| (i, &app.stages[i])).collect();
            let shuffle_stage_ms = stages
                .iter()
                .filter(|(_, s)| {
                    s.totals.shuffle_write_bytes > 0 || s.totals.shuffle_read_bytes() > 0
                })
                .map(|(i, _)| stats[*i].duration_ms)
                .sum();
            let graph = sql.plan_that_ran().map(sparkdiag_model::PlanGraph::new);
            let spark_ids = graph
                .as_ref()
                .map(|graph| spark_node_ids(&plan, graph))
                .unwrap_or_else(|| vec![None; plan.nodes.len()]);
            let measured = graph
                .map(|graph| measured_exchanges(&plan, &spark_ids, &graph, sql, &values))
                .unwrap_or_default();
            Some(PlanInput {
                spark_ids,
                sql_execution_id: Some(sql.execution_id),
                plan,
                stage_ids: stages.iter().map(|(_, s)| s.stage_id).collect(),
                shuffle_stage_ms,
                measured,
            })
        })
        .collect()
}

/// What the log measured for each of the text plan's Exchanges (SQL metrics such as
/// `data size`), through the pairing [`spark_node_ids`] made: an Exchange it could not pair
/// has no entry rather than another one's numbers.
fn measured_exchanges(
    plan: &sparkdiag_plan::Plan,
    spark_ids: &[Option<u32>],
    graph: &sparkdiag_model::PlanGraph,
    sql: &sparkdiag_model::SqlExecution,
    values: &sparkdiag_model::SqlMetricValues,
) -> std::collections::HashMap<usize, std::collections::BTreeMap<String, i64>> {
    let nodes = graph.nodes();
    plan.preorder(plan.root)
        .into_iter()
        .filter(|&n| plan.nodes[n].operator == sparkdiag_plan::Operator::Exchange)
        .filter_map(|n| {
            let id = spark_ids[n]? as usize;
            let (_, info) = nodes.iter().find(|(i, _)| *i == id)?;
            Some((n, values.of_node(info, sql)))
        })
        .collect()
}

/// Pairs the text plan's operators with Spark's graph nodes of the structured plan: both list
/// the same operators in the same pre-order, the graph without the text's AQE wrappers and the
/// text without the graph's codegen clusters. Each text operator takes the next graph node of the
/// same operator name; one without a match keeps no id rather than a guessed one.
fn spark_node_ids(
    plan: &sparkdiag_plan::Plan,
    graph: &sparkdiag_model::PlanGraph,
) -> Vec<Option<u32>> {
    let first_word = |s: &str| s.split_whitespace().next().unwrap_or_default().to_string();
    let graph_nodes: Vec<(usize, String)> = graph
        .nodes()
        .into_iter()
        .filter(|(_, n)| !n.node_name.starts_with("WholeStageCodegen"))
        .map(|(id, n)| (id, first_word(&n.node_name)))
        .collect();
    // Graph ids follow the graph's own pre-order, so ordering by id walks it.
    let mut ids = vec![None; plan.nodes.len()];
    let mut at = 0;
    for i in plan.preorder(plan.root) {
        let node = &plan.nodes[i];
        if node.inner {
            continue;
        }
        let name = first_word(&node.name);
        if let Some(found) = (at..graph_nodes.len()).find(|&j| graph_nodes[j].1 == name) {
            ids[i] = Some(graph_nodes[found].0 as u32);
            at = found + 1;
        }
    }
    ids
}

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
