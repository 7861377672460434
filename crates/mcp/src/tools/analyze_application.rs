//! `analyze_application`: one application's header, summary, top findings and what-if verdict.

use serde_json::{Value, json};
use sparkdiag_contract::WhatIf;

use super::common::finding_row;
use super::{Args, Failure, Tool, Tools, int, path_props};

pub static TOOL: Tool = Tool {
    name: "analyze_application",
    title: "Analyse one application",
    description: "Analyses one application's event log as `sparkdiag analyze` does: the application header (id, name, Spark version, platform, status, outcome, duration), its summary (jobs, stages, tasks, failures, executor time, GC, shuffle, spill, driver time, recoverable time), the `top` findings ranked by the wall-clock time fixing each would save (rule, severity, title, impact_ms, scope, the user's code sites as `method at File:line`, the fix), the what-if verdict (what bounds the run, more or fewer cores), the settings it ran with (`source.config`), and the evidence ledger: what the log held, which rules could not run and why, which ran and found nothing and with what thresholds (so no findings is not read as healthy when the log lacked what the rules need). Evidence is left out here: get_finding gives one finding in full.",
    arguments: || {
        path_props(&[(
            "top",
            int(
                "Findings to give, most severe first, then most time saved.",
                1,
                50,
                10,
            ),
        )])
    },
    required: &["path"],
    run,
};

/// Reading warnings past this many are left out.
const WARNINGS: usize = 10;

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let analysis = tools.load_args(args)?;
    let r = &analysis.report;
    let top = args.int("top", 10).clamp(1, 50) as usize;
    let mut omitted = Vec::new();
    let rows: Vec<Value> = r
        .findings
        .iter()
        .take(top)
        .enumerate()
        .map(|(i, f)| finding_row(f, i + 1, false))
        .collect();
    if r.findings.len() > top {
        omitted.push(format!(
            "{} more findings (ranks {}..{}): raise `top` or call get_finding with a rank",
            r.findings.len() - top,
            top + 1,
            r.findings.len()
        ));
    }
    omitted.push(
        "each finding's evidence: get_finding; stages, jobs and executors in detail: get_stage, get_job"
            .into(),
    );
    let source = &r.source;
    if source.warnings.len() > WARNINGS {
        omitted.push(format!(
            "{} more reading warnings",
            source.warnings.len() - WARNINGS
        ));
    }
    Ok(json!({
        "application": r.application,
        "summary": r.summary,
        "source": {
            "inputs": source.inputs,
            "layout": source.layout,
            "complete": source.complete,
            "in_progress": source.in_progress,
            "truncated": source.truncated,
            "malformed_lines": source.malformed_lines,
            "warnings": source.warnings.iter().take(WARNINGS).collect::<Vec<_>>(),
            "config": source.config,
        },
        "ledger": r.ledger,
        "findings_total": r.findings.len(),
        "findings": rows,
        "what_if": r.what_if.as_ref().map(brief),
        "omitted": omitted,
    }))
}

/// The what-if without its settings list and assumptions.
fn brief(w: &WhatIf) -> Value {
    json!({
        "headline": w.headline,
        "cores_today": w.cores_today,
        "bounds": w.bounds,
        "replay_today_ms": w.replay_today_ms,
        "scenarios": w.scenarios,
        "advice": w.advice,
    })
}
