//! `get_stage`: one stage attempt in detail: its executors, slowest tasks and failures (what the
//! analysis reads from the tasks on demand), the plan nodes it ran, its jobs and its findings.

use serde_json::{Value, json};
use sparkdiag_contract::Report;

use super::common::{findings_naming, id_ranges, messages_cut};
use super::{Args, Failure, Tool, ToolError, Tools, int, path_props};

pub static TOOL: Tool = Tool {
    name: "get_stage",
    title: "A stage in detail",
    description: "One stage attempt in detail: status, timing, task counts, task-duration quantiles (min, p25, median, p75, p95, max, as the Spark History Server computes them), executor time, GC, shuffle, input, output and spill totals, its failure reason; the executors its tasks ran on (top 20 by task time); its 10 slowest tasks; its task failures grouped by cause; the SQL plan nodes whose metrics its tasks updated (the operators it ran); its jobs with their code sites; and the findings that name it. The latest attempt unless `attempt_id` is given.",
    arguments: || {
        path_props(&[
            ("stage_id", int("The stage id.", 0, i64::from(i32::MAX), 0)),
            (
                "attempt_id",
                int("The stage attempt (default: the latest).", 0, 1000, 0),
            ),
        ])
    },
    required: &["path", "stage_id"],
    run,
};

const EXECUTORS: usize = 20;
const SLOWEST_TASKS: usize = 10;
const PLAN_NODES: usize = 40;

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let analysis = tools.load_args(args)?;
    let r = &analysis.report;
    let stage_id = args.int("stage_id", 0);
    let attempts: Vec<usize> = r
        .stages
        .iter()
        .enumerate()
        .filter(|(_, s)| s.stage_id == stage_id)
        .map(|(i, _)| i)
        .collect();
    if attempts.is_empty() {
        let ids: Vec<i64> = r.stages.iter().map(|s| s.stage_id).collect();
        return Err(ToolError(format!(
            "no stage {stage_id} in this application (its stages: {})",
            id_ranges(&ids)
        ))
        .into());
    }
    let index = if args.has("attempt_id") {
        let attempt = args.int("attempt_id", 0);
        *attempts
            .iter()
            .find(|&&i| r.stages[i].attempt_id == attempt)
            .ok_or_else(|| ToolError(format!("stage {stage_id} has no attempt {attempt}")))?
    } else {
        *attempts
            .iter()
            .max_by_key(|&&i| r.stages[i].attempt_id)
            .unwrap_or(&attempts[0])
    };
    let stage = &r.stages[index];
    let detail = sparkdiag_analysis::detail::stage_detail(&analysis, index, SLOWEST_TASKS)
        .ok_or_else(|| ToolError(format!("stage {stage_id}: no such stage attempt")))?;
    let mut omitted = Vec::new();
    if detail.executors.len() > EXECUTORS {
        omitted.push(format!(
            "{} more executors with less task time",
            detail.executors.len() - EXECUTORS
        ));
    }
    if detail.tasks > SLOWEST_TASKS {
        omitted.push(format!(
            "{} faster tasks (the quantiles cover them all)",
            detail.tasks - SLOWEST_TASKS
        ));
    }
    let plan_nodes = plan_nodes_of(r, stage_id, &mut omitted);
    let jobs: Vec<Value> = stage
        .job_ids
        .iter()
        .filter_map(|id| r.jobs.iter().find(|j| j.job_id == *id))
        .map(|j| json!({"job_id": j.job_id, "call_site": j.call_site, "status": j.status}))
        .collect();
    let other_attempts: Vec<i64> = attempts
        .iter()
        .filter(|&&i| i != index)
        .map(|&i| r.stages[i].attempt_id)
        .collect();
    Ok(json!({
        "stage": stage,
        "other_attempts": other_attempts,
        "executors": &detail.executors[..detail.executors.len().min(EXECUTORS)],
        "slowest_tasks": detail.slowest_tasks,
        "task_failures": messages_cut(detail.task_failures),
        "plan_nodes": plan_nodes,
        "jobs": jobs,
        "findings": findings_naming(r, |scope| scope.stage_ids.contains(&stage_id)),
        "omitted": omitted,
    }))
}

/// The plan nodes whose metrics the stage's tasks updated (at most [`PLAN_NODES`]).
fn plan_nodes_of(r: &Report, stage_id: i64, omitted: &mut Vec<String>) -> Vec<Value> {
    let mut nodes = Vec::new();
    for sql in &r.sql {
        for node in sql
            .plan_nodes
            .iter()
            .filter(|n| n.stage_ids.contains(&stage_id))
        {
            nodes.push(json!({
                "execution_id": sql.execution_id,
                "index": node.index,
                "name": node.name,
                "metrics": node.metrics,
            }));
        }
    }
    if nodes.len() > PLAN_NODES {
        omitted.push(format!("{} more plan nodes", nodes.len() - PLAN_NODES));
        nodes.truncate(PLAN_NODES);
    }
    nodes
}
