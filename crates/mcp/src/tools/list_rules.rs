//! `list_rules`: the rules catalogue, as `sparkdiag rules --format json` lists it.

use serde_json::{Value, json};

use super::{Args, Failure, Tool, ToolError, Tools, props, string};

pub static TOOL: Tool = Tool {
    name: "list_rules",
    title: "The rules catalogue",
    description: "The detectors sparkdiag runs, as `sparkdiag rules --format json` lists them: each rule's code, name, category and one-line summary, and its thresholds (key, default, unit, meaning, source). Each rule's full documentation is the resource sparkdiag://rules/CODE (and part of get_finding's answer). `category` keeps one category (skew, partitions, gc, driver-bound, spill, failure, utilization, config, exchanges, plan).",
    arguments: || props(&[("category", string("Only the rules of this category."))]),
    required: &[],
    run,
};

fn run(_: &Tools, args: &Args) -> Result<Value, Failure> {
    let category = args.str("category");
    let rules: Vec<Value> = sparkdiag_analysis::catalogue::rule_docs()
        .iter()
        .filter(|r| category.is_none_or(|c| r.category.name().eq_ignore_ascii_case(c)))
        .map(|r| {
            json!({
                "code": r.code, "name": r.name, "category": r.category.name(),
                "summary": r.summary, "thresholds": r.thresholds,
                "doc": format!("sparkdiag://rules/{}", r.code),
            })
        })
        .collect();
    if rules.is_empty() {
        return Err(ToolError(format!(
            "no rules in category `{}`",
            category.unwrap_or_default()
        ))
        .into());
    }
    Ok(json!({"rules_total": rules.len(), "rules": rules}))
}
