//! `list_applications`: the applications under a folder (or in one archive), a page at a time.

use serde_json::{Value, json};

use super::{Args, Failure, Tool, Tools, int, props, string};

pub static TOOL: Tool = Tool {
    name: "list_applications",
    title: "List the applications in a folder",
    description: "Lists the Spark applications whose event logs are under a folder (or in one archive), in file-name order: each one's path, application id, name, status (succeeded / failed / incomplete), outcome, duration, number of findings, recoverable time and its top finding. Paged: `offset` and `limit` (at most 50 a page); `next_offset` is set when more remain. Every application on the page is analysed, so a page of large logs takes a while.",
    arguments: || {
        props(&[
            (
                "path",
                string(
                    "A folder (or archive) inside the server's roots; a relative path is taken from the first root.",
                ),
            ),
            (
                "offset",
                int(
                    "Applications to skip (from a previous page's next_offset).",
                    0,
                    1_000_000,
                    0,
                ),
            ),
            ("limit", int("Applications on this page.", 1, 50, 20)),
        ])
    },
    required: &["path"],
    run,
};

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let path = args.str("path").unwrap_or_default();
    let offset = args.int("offset", 0).max(0) as usize;
    let limit = args.int("limit", 20).clamp(1, 50) as usize;
    let (canonical, inputs) = tools.discover(path)?;
    let total = inputs.len();
    let mut rows = Vec::new();
    for input in inputs.iter().skip(offset).take(limit) {
        // A log inside an archive has no path of its own: it is asked for by the archive's
        // path and its id.
        let ask_path = if tools.unpacked(input) {
            canonical.display().to_string()
        } else {
            input.display.clone()
        };
        match tools.analyze_input(input, &input.display) {
            Ok(analysis) => {
                let r = &analysis.report;
                let top = r.findings.first().map(|f| {
                    json!({
                        "rule": f.finding.rule,
                        "severity": f.finding.severity,
                        "title": f.finding.title,
                        "impact_ms": f.finding.impact_ms,
                    })
                });
                rows.push(json!({
                    "path": ask_path,
                    "app_id": r.application.id,
                    "name": r.application.name,
                    "status": r.application.status,
                    "outcome": r.application.outcome,
                    "duration_ms": r.application.duration_ms,
                    "spark_version": r.application.spark_version,
                    "complete": r.source.complete,
                    "findings": r.findings.len(),
                    "recoverable_ms": r.summary.recoverable_ms,
                    "top_finding": top,
                }));
            }
            Err(e) => rows.push(json!({"path": input.display, "error": e})),
        }
    }
    let next = (offset + rows.len() < total).then_some(offset + rows.len());
    let mut answer = json!({
        "folder": canonical.display().to_string(),
        "applications_total": total,
        "offset": offset,
        "returned": rows.len(),
        "next_offset": next,
        "applications": rows,
        "how_to_ask": "pass an application's `path` (and its `app_id` when the path holds several) to analyze_application, failure_postmortem, get_stage, get_job or what_if",
    });
    if let Some(next) = next {
        answer["omitted"] = json!([format!(
            "{} more applications: call again with offset {next}",
            total - next
        )]);
    }
    Ok(answer)
}
