//! The prompts (the two questions people ask most, as tool plans) and the resources (each
//! rule's documentation, which an assistant can read without a log).

use serde_json::{Value, json};

use crate::fit::MAX_TEXT_BYTES;
use crate::server::RpcError;
use crate::tools::cut;

pub fn definitions() -> Vec<Value> {
    vec![
        json!({
            "name": "why-did-it-fail",
            "title": "Why did this job fail?",
            "description": "Finds the root cause of a failed Spark application from its event log: the exception, the user's code that ran it, what was lost, and the fix.",
            "arguments": [
                {"name": "path", "description": "The application's event log (file, folder or archive) inside the server's roots.", "required": true},
                {"name": "app_id", "description": "When the path holds several applications: the one to explain.", "required": false},
            ],
        }),
        json!({
            "name": "why-is-it-slower",
            "title": "Why is it slower than the last run?",
            "description": "Compares a run with an earlier one of the same job and explains what made it slower (or faster): the work that changed, the findings that appeared, and what to do.",
            "arguments": [
                {"name": "before", "description": "The earlier (faster) run's event log.", "required": true},
                {"name": "after", "description": "The later (slower) run's event log.", "required": true},
            ],
        }),
    ]
}

fn argument<'a>(params: &'a Value, name: &str) -> Option<&'a str> {
    params
        .get("arguments")
        .and_then(|a| a.get(name))
        .and_then(Value::as_str)
}

/// `prompts/get`.
pub fn get(params: &Value) -> Result<Value, RpcError> {
    let name = params
        .get("name")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("prompts/get: missing the prompt's `name`"))?;
    let required = |arg: &str| {
        argument(params, arg).ok_or_else(|| {
            RpcError::invalid_params(format!("{name}: missing the required argument `{arg}`"))
        })
    };
    let (description, text) = match name {
        "why-did-it-fail" => {
            let path = required("path")?;
            let app = argument(params, "app_id")
                .map(|id| format!(", app_id \"{id}\""))
                .unwrap_or_default();
            (
                "Why did this job fail?",
                format!(
                    "Why did the Spark application at \"{path}\"{app} fail?\n\n\
                     1. Call failure_postmortem with path \"{path}\"{app}.\n\
                     2. For the failed stage it names, call get_stage for its executors and task failures; \
                        for the top failure finding, call get_finding for its evidence and the rule's doc.\n\
                     3. Answer in a few sentences: the root cause (the exception or the executor loss, \
                        quoted), the user's code it happened in (the call site, file:line), what was lost \
                        (jobs, tasks, time), and the fix the findings recommend. Quote the numbers the \
                        tools give; do not guess beyond them."
                ),
            )
        }
        "why-is-it-slower" => {
            let before = required("before")?;
            let after = required("after")?;
            (
                "Why is it slower than the last run?",
                format!(
                    "Why is the Spark run at \"{after}\" slower than the earlier run at \"{before}\"?\n\n\
                     1. Call compare_runs with before \"{before}\" and after \"{after}\".\n\
                     2. Read its headline, its metrics (runtime, core-hours, shuffle, spill, GC) and the \
                        matched work with the largest change; check `correctness` (did both write the same rows?).\n\
                     3. For the findings that appeared or grew in the later run, call analyze_application \
                        on \"{after}\" and get_finding for the top one.\n\
                     4. Answer in a few sentences: how much slower, which work (code site) took the \
                        extra time and why, and the fix. Quote the numbers the tools give."
                ),
            )
        }
        _ => {
            return Err(RpcError::invalid_params(format!(
                "Unknown prompt: {name} (prompts/list lists them)"
            )));
        }
    };
    Ok(json!({
        "description": description,
        "messages": [{"role": "user", "content": {"type": "text", "text": text}}],
    }))
}

/// `resources/list`: every rule's documentation.
pub fn resources() -> Vec<Value> {
    sparkdiag_analysis::catalogue::rule_docs()
        .iter()
        .map(|r| {
            json!({
                "uri": format!("sparkdiag://rules/{}", r.code),
                "name": format!("{} {}", r.code, r.name),
                "title": format!("{} {}: {}", r.code, r.name, r.summary),
                "description": r.summary,
                "mimeType": "text/markdown",
            })
        })
        .collect()
}

pub fn resource_templates() -> Vec<Value> {
    vec![json!({
        "uriTemplate": "sparkdiag://rules/{code}",
        "name": "rule documentation",
        "description": "A rule's documentation by code (SK001) or name (data-skew): what it detects, why it hurts, how to fix it, its thresholds.",
        "mimeType": "text/markdown",
    })]
}

/// `resources/read`.
pub fn read(params: &Value) -> Result<Value, RpcError> {
    let uri = params
        .get("uri")
        .and_then(Value::as_str)
        .ok_or_else(|| RpcError::invalid_params("resources/read: missing the `uri`"))?;
    let rule = uri
        .strip_prefix("sparkdiag://rules/")
        .and_then(sparkdiag_analysis::catalogue::find_rule)
        .ok_or_else(|| RpcError {
            // The specification's code for a resource that does not exist.
            code: -32002,
            message: format!("Resource not found: {uri} (resources/list lists them)"),
        })?;
    let mut text = format!(
        "# {} {}\n\n{}\n\n{}\n",
        rule.code,
        rule.name,
        rule.summary,
        rule.doc_markdown()
    );
    if !rule.thresholds.is_empty() {
        text.push_str("\n## Thresholds\n\n");
        for t in rule.thresholds {
            text.push_str(&format!(
                "- `{}.{}` = {} {}: {} ({})\n",
                rule.code, t.key, t.default, t.unit, t.meaning, t.source
            ));
        }
    }
    Ok(json!({
        "contents": [{
            "uri": format!("sparkdiag://rules/{}", rule.code),
            "mimeType": "text/markdown",
            "text": cut(&text, MAX_TEXT_BYTES),
        }],
    }))
}
