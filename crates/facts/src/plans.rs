//! Each SQL execution's physical plan, parsed and paired with Spark's own plan graph once, with
//! what the log measured for it.

use sparkdiag_model::{Application, StageAttempt};

use crate::StageStats;

/// A physical plan and what the log says it cost.
#[derive(Debug, Clone)]
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
    pub measured: std::collections::HashMap<usize, sparkdiag_model::NodeMetrics>,
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

/// Parses each SQL execution's plan text once (the plan that ran is the last adaptive one when AQE
/// re-planned) and pairs its operators with Spark's structured plan once, by one algorithm
/// (`spark_node_ids`): finding scopes, titles and the Exchanges' measured sizes all use that
/// pairing. Text that does not parse is left out of the plan rules.
///
/// Every plan of the application at once: the rules parse theirs a batch at a time
/// ([`SqlPlans::parse`]), since a log of many queries holds more parsed plans than anything else.
pub fn sql_plans(app: &Application, stats: &[StageStats]) -> Vec<PlanInput> {
    SqlPlans::new(app, stats).parse(&app.sql)
}

/// What parsing an application's plans needs besides their text, gathered once: the SQL
/// metrics' values and each job's stage attempts.
pub struct SqlPlans<'a> {
    app: &'a Application,
    stats: &'a [StageStats],
    values: sparkdiag_model::SqlMetricValues,
    /// Each job's stage attempts, so that finding an execution's stages costs its jobs rather
    /// than every stage of the application (executions and stages both grow with the log).
    stages_of_job: std::collections::HashMap<i64, Vec<usize>>,
}

impl<'a> SqlPlans<'a> {
    pub fn new(app: &'a Application, stats: &'a [StageStats]) -> SqlPlans<'a> {
        let mut stages_of_job: std::collections::HashMap<i64, Vec<usize>> = Default::default();
        for (i, stage) in app.stages.iter().enumerate() {
            for &job in &stage.job_ids {
                stages_of_job.entry(job).or_default().push(i);
            }
        }
        SqlPlans {
            app,
            stats,
            values: sparkdiag_model::SqlMetricValues::new(app),
            stages_of_job,
        }
    }

    /// The plans of `executions` (some of `app.sql`), in their order, those that parse.
    pub fn parse(&self, executions: &[sparkdiag_model::SqlExecution]) -> Vec<PlanInput> {
        // Each execution's plan text is parsed on its own: shared out over every core (in order).
        use rayon::prelude::*;
        executions
            .par_iter()
            .filter_map(|sql| self.one(sql))
            .collect()
    }

    /// The plan of the first execution (in `app.sql`'s order) whose plan parses and whose jobs
    /// ran `stage_id`: the one a stage's finding reads, parsed alone.
    pub fn of_stage(&self, stage_id: i64) -> Option<PlanInput> {
        let jobs: Vec<i64> = self
            .app
            .stages
            .iter()
            .filter(|s| s.stage_id == stage_id)
            .flat_map(|s| s.job_ids.iter().copied())
            .collect();
        self.app
            .sql
            .iter()
            .filter(|sql| sql.job_ids.iter().any(|job| jobs.contains(job)))
            .filter_map(|sql| self.one(sql))
            .find(|input| input.stage_ids.contains(&stage_id))
    }

    fn one(&self, sql: &sparkdiag_model::SqlExecution) -> Option<PlanInput> {
        let (app, stats, values) = (self.app, self.stats, &self.values);
        let plan = sparkdiag_plan::parse_plans(&sql.plan_text_that_ran())
            .ok()?
            .into_iter()
            .next()?;
        let mut indices: Vec<usize> = sql
            .job_ids
            .iter()
            .filter_map(|job| self.stages_of_job.get(job))
            .flatten()
            .copied()
            .collect();
        indices.sort_unstable();
        indices.dedup();
        let stages: Vec<(usize, &StageAttempt)> =
            indices.into_iter().map(|i| (i, &app.stages[i])).collect();
        let shuffle_stage_ms = stages
            .iter()
            .filter(|(_, s)| s.totals.shuffle_write_bytes > 0 || s.totals.shuffle_read_bytes() > 0)
            .map(|(i, _)| stats[*i].duration_ms)
            .sum();
        let graph = sql.plan_that_ran().map(sparkdiag_model::PlanGraph::new);
        let spark_ids = graph
            .as_ref()
            .map(|graph| spark_node_ids(&plan, graph))
            .unwrap_or_else(|| vec![None; plan.nodes.len()]);
        let measured = graph
            .map(|graph| measured_exchanges(&plan, &spark_ids, &graph, sql, values))
            .unwrap_or_default();
        Some(PlanInput {
            spark_ids,
            sql_execution_id: Some(sql.execution_id),
            plan,
            stage_ids: stages.iter().map(|(_, s)| s.stage_id).collect(),
            shuffle_stage_ms,
            measured,
        })
    }
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
) -> std::collections::HashMap<usize, sparkdiag_model::NodeMetrics> {
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
