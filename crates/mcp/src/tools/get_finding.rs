//! `get_finding`: one finding in full, with its rule's documentation.

use serde_json::{Value, json};

use super::common::finding_row;
use super::{Args, Failure, Tool, ToolError, Tools, int, path_props, string};
use crate::server::RpcError;

pub static TOOL: Tool = Tool {
    name: "get_finding",
    title: "One finding in full",
    description: "One finding of an application in full: its evidence (the numbers that justify it), scope (jobs, stages, executors, SQL executions, plan nodes), the user's code sites, the recommended fix, its recoverable time in ms and core-hours, and the rule's documentation (what it detects, why it hurts, how to fix it, thresholds). Name it by `rank` (1 is the finding with the most recoverable time, as analyze_application numbers them) or by `rule` code (SK001) or name, which picks that rule's highest-ranked finding.",
    arguments: || {
        path_props(&[
            ("rank", int("The finding's rank, 1-based.", 1, 100_000, 1)),
            ("rule", string("A rule code (SK001) or name (data-skew).")),
        ])
    },
    required: &["path"],
    run,
};

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let analysis = tools.load_args(args)?;
    let findings = &analysis.report.findings;
    if findings.is_empty() {
        return Err(ToolError("this application has no findings".into()).into());
    }
    let index = match (args.has("rank"), args.str("rule")) {
        (true, _) => {
            let rank = args.int("rank", 1) as usize;
            if rank > findings.len() {
                return Err(ToolError(format!(
                    "rank {rank}: the application has {} findings",
                    findings.len()
                ))
                .into());
            }
            rank - 1
        }
        (false, Some(rule)) => {
            let code = sparkdiag_analysis::catalogue::find_rule(rule)
                .map(|r| r.code)
                .ok_or_else(|| ToolError(format!("no rule `{rule}`; list_rules lists them")))?;
            findings
                .iter()
                .position(|f| f.finding.rule == code)
                .ok_or_else(|| ToolError(format!("no {code} finding in this application")))?
        }
        (false, None) => {
            return Err(RpcError::invalid_params("get_finding: give `rank` or `rule`").into());
        }
    };
    let finding = &findings[index];
    let mut answer = finding_row(finding, index + 1, true);
    if let Some(rule) = sparkdiag_analysis::catalogue::find_rule(finding.finding.rule) {
        answer["rule_doc"] = json!({
            "code": rule.code,
            "name": rule.name,
            "category": rule.category.name(),
            "summary": rule.summary,
            "doc": rule.doc_markdown(),
            "thresholds": rule.thresholds,
        });
    }
    let same: Vec<usize> = findings
        .iter()
        .enumerate()
        .filter(|(i, f)| *i != index && f.finding.rule == finding.finding.rule)
        .map(|(i, _)| i + 1)
        .collect();
    answer["same_rule_at_ranks"] = json!(same);
    Ok(answer)
}
