//! `get_executor`: one executor in detail: how it left, its tasks and time, its memory peaks
//! against its limit, its task failures by cause, and the findings that name it.

use serde_json::{Value, json};

use super::common::{findings_naming, messages_cut};
use super::{Args, Failure, Tool, ToolError, Tools, path_props, string};

pub static TOOL: Tool = Tool {
    name: "get_executor",
    title: "An executor in detail",
    description: "One executor (or the driver) in detail: host, cores, when it was added and removed, how it left (released, lost, killed by the cluster manager) with its exit code and what that code means on this cluster manager; its tasks (completed, failed, killed), task time, GC, shuffle, input and spill; its memory peaks against the heap it was given (heap, off-heap, pools, process tree); its task failures grouped by cause; and the findings that name it. Use it when a post-mortem or a finding names an executor.",
    arguments: || {
        path_props(&[(
            "executor_id",
            string("The executor's id, as the report gives it (`3`, or `driver`)."),
        )])
    },
    required: &["path", "executor_id"],
    run,
};

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let analysis = tools.load_args(args)?;
    let r = &analysis.report;
    let id = args.str("executor_id").unwrap_or_default();
    let Some(executor) = r.executors.iter().find(|e| e.executor_id == id) else {
        let ids: Vec<&str> = r.executors.iter().map(|e| e.executor_id.as_str()).collect();
        return Err(ToolError(format!(
            "no executor `{id}` in this application (its executors: {})",
            super::common::cut(&ids.join(", "), 2000)
        ))
        .into());
    };
    let memory = r.memory.as_ref().and_then(|m| {
        m.executors
            .iter()
            .find(|e| e.executor_id == id)
            .map(|e| (e, m.local_mode))
    });
    Ok(json!({
        "executor": executor,
        "memory": memory.map(|(e, local_mode)| json!({
            "peaks": e,
            "beyond_heap_bytes": e.beyond_heap_bytes(),
            "local_mode": local_mode,
        })),
        "task_failures": messages_cut(sparkdiag_analysis::detail::executor_failures(&analysis, id)),
        "findings": findings_naming(r, |scope| scope.executor_ids.iter().any(|e| e == id)),
    }))
}
