//! The SARIF 2.1.0 view, for code-scanning tools (GitHub code scanning, IDEs): one run per
//! application, one result per finding, placed at the code sites Spark recorded for its jobs
//! and stages (`file:line` of the user's program); a finding without a code site is a result of
//! the run, with no location.

use serde_json::{Value, json};
use sparkdiag_contract::{CodeSite, Finding, Severity};

use crate::Report;

/// Where the SARIF 2.1.0 schema is published.
pub const SCHEMA: &str = "https://json.schemastore.org/sarif-2.1.0.json";

/// SARIF's level for a severity: what blocks a merge (`error`), what should be looked at
/// (`warning`), what is worth knowing (`note`).
pub fn level(severity: Severity) -> &'static str {
    match severity {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "note",
    }
}

/// A SARIF log of `runs` (each from [`run`]).
pub fn log(runs: Vec<Value>) -> Value {
    json!({
        "$schema": SCHEMA,
        "version": "2.1.0",
        "runs": runs,
    })
}

/// One tool run: sparkdiag on one input, with `results` ([`result`]) about `findings`.
pub fn run(findings: &[&Finding], results: Vec<Value>, about: Value) -> Value {
    let mut codes: Vec<&str> = findings.iter().map(|f| f.rule).collect();
    codes.sort_unstable();
    codes.dedup();
    let rules: Vec<Value> = codes
        .iter()
        .map(|code| {
            let category = findings
                .iter()
                .find(|f| f.rule == *code)
                .map(|f| f.category.name());
            json!({
                "id": code,
                "help": {"text": format!("sparkdiag rules {code} explains it and its thresholds.")},
                "properties": {"category": category},
            })
        })
        .collect();
    json!({
        "tool": {"driver": {
            "name": "sparkdiag",
            "version": env!("CARGO_PKG_VERSION"),
            "rules": rules,
        }},
        "results": results,
        "properties": about,
    })
}

/// One finding as a result, at `sites` (none: a result of the whole run).
pub fn result(finding: &Finding, sites: &[CodeSite], extra: Value) -> Value {
    let locations: Vec<Value> = sites
        .iter()
        .filter_map(|site| {
            let (file, line) = (site.file.as_deref()?, site.line?);
            Some(json!({
                "physicalLocation": {
                    "artifactLocation": {"uri": uri(file)},
                    "region": {"startLine": line},
                },
                "message": {"text": site.to_string()},
            }))
        })
        .collect();
    let mut properties = json!({
        "severity": finding.severity.name(),
        "category": finding.category.name(),
        "impact_ms": finding.impact_ms,
    });
    if let (Value::Object(props), Value::Object(extra)) = (&mut properties, extra) {
        props.extend(extra);
    }
    let mut out = json!({
        "ruleId": finding.rule,
        "level": level(finding.severity),
        "message": {"text": format!("{} Fix: {}", sentence(&finding.title), finding.recommendation)},
        "properties": properties,
    });
    if !locations.is_empty() {
        out["locations"] = Value::Array(locations);
    }
    out
}

/// A title as a sentence: ends with a full stop.
fn sentence(title: &str) -> String {
    let title = title.trim_end();
    if title.ends_with(['.', '!', '?']) {
        title.to_string()
    } else {
        format!("{title}.")
    }
}

/// A file a call site names as a SARIF artifact URI: an absolute path as a `file://` URI, a
/// bare file name (`Etl.scala`) as the relative reference it is.
fn uri(file: &str) -> String {
    let encoded: String = file
        .chars()
        .map(|c| match c {
            ' ' => "%20".to_string(),
            '#' => "%23".to_string(),
            '?' => "%3F".to_string(),
            '\\' => "/".to_string(),
            c => c.to_string(),
        })
        .collect();
    if encoded.starts_with('/') {
        format!("file://{encoded}")
    } else if encoded.as_bytes().get(1) == Some(&b':') {
        // A Windows drive: `C:/etl/Job.scala`.
        format!("file:///{encoded}")
    } else {
        encoded
    }
}

/// The applications' findings as a SARIF log, one run each, with the findings `options` shows.
pub fn render(reports: &[&Report], options: &crate::Options) -> Result<String, crate::RenderError> {
    let runs = reports
        .iter()
        .map(|report| {
            let shown = options.shown(report);
            let findings: Vec<&Finding> = shown.iter().map(|f| &f.finding).collect();
            let results = shown
                .iter()
                .map(|f| {
                    result(
                        &f.finding,
                        &f.code_sites,
                        json!({"impact_kind": f.impact_kind, "scope": f.finding.scope}),
                    )
                })
                .collect();
            let a = &report.application;
            run(
                &findings,
                results,
                json!({
                    "application_id": a.id,
                    "application_name": a.name,
                    "inputs": report.source.inputs,
                }),
            )
        })
        .collect();
    crate::output::json(&log(runs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_become_uris_and_severities_levels() {
        assert_eq!(uri("/work/job.py"), "file:///work/job.py");
        assert_eq!(uri("Etl.scala"), "Etl.scala");
        assert_eq!(uri("C:\\etl\\Job.scala"), "file:///C:/etl/Job.scala");
        assert_eq!(uri("/a b/c#d.py"), "file:///a%20b/c%23d.py");
        assert_eq!(level(Severity::High), "error");
        assert_eq!(level(Severity::Medium), "warning");
        assert_eq!(level(Severity::Info), "note");
    }
}
