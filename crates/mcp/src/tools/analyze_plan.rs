//! `analyze_plan`: physical-plan text read on its own, as `sparkdiag plan --format json`.

use serde_json::{Value, json};

use super::{Args, Failure, Tool, ToolError, Tools, props, string};
use crate::server::RpcError;

pub static TOOL: Tool = Tool {
    name: "analyze_plan",
    title: "Analyse physical-plan text",
    description: "Parses physical-plan text (what df.explain(\"formatted\"), EXPLAIN FORMATTED or df.explain() print) as `sparkdiag plan --format json` does: each plan's operator tree, its shuffle Exchanges and joins, and the plan rules' findings (EX*, PL*) with their fixes. Give the text itself in `text`, or a file of it inside the roots in `path`.",
    arguments: || {
        props(&[
            ("text", string("The plan text (at most 4 MiB).")),
            (
                "path",
                string("A file of plan text inside the server's roots."),
            ),
        ])
    },
    required: &[],
    run,
};

/// The most plan text read.
const MAX_BYTES: u64 = 4 << 20;

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let (bytes, shown) = match (args.str("text"), args.str("path")) {
        (Some(text), None) => (text.as_bytes().to_vec(), "<text>".to_string()),
        (None, Some(path)) => {
            let file = tools.roots().resolve(path)?;
            let len = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
            if len > MAX_BYTES {
                return Err(ToolError(format!(
                    "{path}: {len} bytes; plan text is read up to 4 MiB"
                ))
                .into());
            }
            let bytes = std::fs::read(&file).map_err(|e| format!("{path}: cannot read ({e})"))?;
            (bytes, path.to_string())
        }
        _ => {
            return Err(
                RpcError::invalid_params("analyze_plan: give either `text` or `path`").into(),
            );
        }
    };
    if bytes.len() as u64 > MAX_BYTES {
        return Err(ToolError("plan text is read up to 4 MiB".into()).into());
    }
    let (plans, findings) = sparkdiag_analysis::analyze_plan_text(bytes, &shown, tools.rules())
        .map_err(|e| e.to_string())?;
    Ok(json!(sparkdiag_contract::PlanReport::new(
        &plans, &findings
    )))
}
