//! `get_job`: one job in detail: its code site, stages, SQL execution and findings.

use serde_json::{Value, json};

use super::common::{cut, findings_naming, id_ranges};
use super::{Args, Failure, Tool, ToolError, Tools, int, path_props};

pub static TOOL: Tool = Tool {
    name: "get_job",
    title: "A job in detail",
    description: "One job in detail: status, timing, task and stage counts, its failure, the user's code site that started it, each of its stages (status, tasks, duration, task-duration quantiles, shuffle, spill; at most 50), its SQL execution (description, error, Exchange count and the plan nodes that ran, with the stages each ran in), and the findings that name the job or its stages.",
    arguments: || path_props(&[("job_id", int("The job id.", 0, i64::from(i32::MAX), 0))]),
    required: &["path", "job_id"],
    run,
};

const STAGES: usize = 50;
const PLAN_NODES: usize = 60;

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let analysis = tools.load_args(args)?;
    let r = &analysis.report;
    let job_id = args.int("job_id", 0);
    let Some(job) = r.jobs.iter().find(|j| j.job_id == job_id) else {
        let ids: Vec<i64> = r.jobs.iter().map(|j| j.job_id).collect();
        return Err(ToolError(format!(
            "no job {job_id} in this application (its jobs: {})",
            id_ranges(&ids)
        ))
        .into());
    };
    let mut omitted = Vec::new();
    let stages: Vec<Value> = r
        .stages
        .iter()
        .filter(|s| job.stage_ids.contains(&s.stage_id))
        .map(|s| {
            json!({
                "stage_id": s.stage_id, "attempt_id": s.attempt_id, "name": s.name,
                "status": s.status, "num_tasks": s.num_tasks,
                "failed_tasks": s.failed_tasks, "duration_ms": s.duration_ms,
                "task_duration_ms": s.task_duration_ms,
                "shuffle_read_bytes": s.shuffle_read_bytes,
                "shuffle_write_bytes": s.shuffle_write_bytes,
                "memory_spill_bytes": s.memory_spill_bytes,
                "disk_spill_bytes": s.disk_spill_bytes,
                "failure_reason": s.failure_reason.as_deref().map(|t| cut(t, 1500)),
            })
        })
        .collect();
    if stages.len() > STAGES {
        omitted.push(format!(
            "{} more stages: get_stage gives each",
            stages.len() - STAGES
        ));
    }
    let sql = job
        .sql_execution_id
        .and_then(|id| r.sql.iter().find(|s| s.execution_id == id))
        .map(|s| {
            if s.plan_nodes.len() > PLAN_NODES {
                omitted.push(format!(
                    "{} more plan nodes of SQL execution {}",
                    s.plan_nodes.len() - PLAN_NODES,
                    s.execution_id
                ));
            }
            json!({
                "execution_id": s.execution_id,
                "description": cut(&s.description, 1500),
                "error": s.error.as_deref().map(|t| cut(t, 2000)),
                "exchanges": s.exchanges,
                "plan_nodes": s.plan_nodes.iter().take(PLAN_NODES).map(|n| json!({
                    "index": n.index, "name": n.name, "stage_ids": n.stage_ids,
                })).collect::<Vec<_>>(),
            })
        });
    let mut out = json!(job);
    if let Some(failure) = &job.failure {
        out["failure"] = json!(cut(failure, 3000));
    }
    Ok(json!({
        "job": out,
        "call_site": job.call_site,
        "stages": stages.into_iter().take(STAGES).collect::<Vec<_>>(),
        "sql_execution": sql,
        "findings": findings_naming(r, |scope| {
            scope.job_ids.contains(&job_id)
                || job.stage_ids.iter().any(|s| scope.stage_ids.contains(s))
        }),
        "omitted": omitted,
    }))
}
