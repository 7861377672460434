//! The tools: their definitions (name, description, input schema) and their answers. Every
//! answer is built from the same analysis `sparkdiag analyze` runs (`sparkdiag_analysis`), so
//! its numbers are those of `analyze --format json`; what it leaves out is said in `omitted`.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use sparkdiag_analysis::Analysis;
use sparkdiag_contract::units::{duration, share};
use sparkdiag_eventlog::LogInput;

use crate::fit::{MAX_TEXT_BYTES, fit};
use crate::roots::Roots;
use crate::server::RpcError;

/// Analysed logs kept for the next questions about them (most recent last).
const CACHE_ENTRIES: usize = 4;

pub struct Tools {
    rules: sparkdiag_rules::Config,
    prices: sparkdiag_analysis::Prices,
    roots: Arc<Roots>,
    /// Archives are unpacked under here (with `analyze`'s limits) and removed at exit.
    unpack: tempfile::TempDir,
    cache: Mutex<Vec<(CacheKey, Arc<Loaded>)>>,
}

#[derive(PartialEq, Clone)]
struct CacheKey {
    path: PathBuf,
    app_id: Option<String>,
    modified: Option<std::time::SystemTime>,
    len: u64,
}

/// One analysed application and its report as `analyze --format json` writes it.
pub struct Loaded {
    pub analysis: Analysis,
    pub json: Value,
}

/// A tool's failure the assistant should read (a path refused, a log unreadable): answered as
/// a result with `isError`, as the specification asks for errors of a tool's own.
struct ToolError(String);

impl From<String> for ToolError {
    fn from(s: String) -> ToolError {
        ToolError(s)
    }
}

enum Failure {
    Tool(ToolError),
    Rpc(RpcError),
}

impl From<ToolError> for Failure {
    fn from(e: ToolError) -> Failure {
        Failure::Tool(e)
    }
}

impl From<RpcError> for Failure {
    fn from(e: RpcError) -> Failure {
        Failure::Rpc(e)
    }
}

impl From<String> for Failure {
    fn from(s: String) -> Failure {
        Failure::Tool(ToolError(s))
    }
}

const PATH_DOC: &str = "An event log inside the server's roots: a log file of any codec (.inprogress too), a rolling eventlog_v2_* folder, a Databricks cluster-log folder, or a .zip/.tar.gz of them. A relative path is taken from the first root.";
const APP_ID_DOC: &str = "When the path holds several applications: the application id to pick (list_applications gives each one's).";

fn path_props() -> Map<String, Value> {
    let mut props = Map::new();
    props.insert(
        "path".into(),
        json!({"type": "string", "description": PATH_DOC}),
    );
    props.insert(
        "app_id".into(),
        json!({"type": "string", "description": APP_ID_DOC}),
    );
    props
}

fn tool(
    name: &str,
    title: &str,
    description: &str,
    props: Map<String, Value>,
    required: &[&str],
) -> Value {
    json!({
        "name": name,
        "title": title,
        "description": description,
        "inputSchema": {
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": false,
        },
        "annotations": {
            "title": title,
            "readOnlyHint": true,
            "destructiveHint": false,
            "idempotentHint": true,
            "openWorldHint": false,
        },
    })
}

fn with(mut props: Map<String, Value>, extra: &[(&str, Value)]) -> Map<String, Value> {
    for (key, schema) in extra {
        props.insert((*key).to_string(), schema.clone());
    }
    props
}

/// Every tool, as `tools/list` gives them.
pub fn definitions() -> Vec<Value> {
    let int = |description: &str, min: i64, max: i64, default: i64| json!({"type": "integer", "minimum": min, "maximum": max, "default": default, "description": description});
    vec![
        tool(
            "list_applications",
            "List the applications in a folder",
            "Lists the Spark applications whose event logs are under a folder (or in one archive), in file-name order: each one's path, application id, name, status (succeeded / failed / incomplete), outcome, duration, number of findings, recoverable time and its top finding. Paged: `offset` and `limit` (at most 50 a page); `next_offset` is set when more remain. Every application on the page is analysed, so a page of large logs takes a while.",
            json!({
                "path": {"type": "string", "description": "A folder (or archive) inside the server's roots; a relative path is taken from the first root."},
                "offset": int("Applications to skip (from a previous page's next_offset).", 0, 1_000_000, 0),
                "limit": int("Applications on this page.", 1, 50, 20),
            }).as_object().cloned().unwrap_or_default(),
            &["path"],
        ),
        tool(
            "analyze_application",
            "Analyse one application",
            "Analyses one application's event log as `sparkdiag analyze` does: the application header (id, name, Spark version, platform, status, outcome, duration), its summary (jobs, stages, tasks, failures, executor time, GC, shuffle, spill, driver time, recoverable time), the `top` findings ranked by the wall-clock time fixing each would save (rule, severity, title, impact_ms, scope, the user's code sites as `method at File:line`, the fix), and the what-if verdict (what bounds the run, more or fewer cores). Evidence is left out here: get_finding gives one finding in full.",
            with(path_props(), &[("top", int("Findings to give, most severe first, then most time saved.", 1, 50, 10))]),
            &["path"],
        ),
        tool(
            "get_finding",
            "One finding in full",
            "One finding of an application in full: its evidence (the numbers that justify it), scope (jobs, stages, executors, SQL executions, plan nodes), the user's code sites, the recommended fix, its recoverable time in ms and core-hours, and the rule's documentation (what it detects, why it hurts, how to fix it, thresholds). Name it by `rank` (1 is the finding with the most recoverable time, as analyze_application numbers them) or by `rule` code (SK001) or name, which picks that rule's highest-ranked finding.",
            with(path_props(), &[
                ("rank", int("The finding's rank, 1-based.", 1, 100_000, 1)),
                ("rule", json!({"type": "string", "description": "A rule code (SK001) or name (data-skew)."})),
            ]),
            &["path"],
        ),
        tool(
            "get_stage",
            "A stage in detail",
            "One stage attempt in detail: status, timing, task counts, task-duration quantiles (min, p25, median, p75, p95, max, as the Spark History Server computes them), executor time, GC, shuffle, input, output and spill totals, its failure reason; the executors its tasks ran on (top 20 by task time); its 10 slowest tasks; its task failures grouped by cause; the SQL plan nodes whose metrics its tasks updated (the operators it ran); its jobs with their code sites; and the findings that name it. The latest attempt unless `attempt_id` is given.",
            with(path_props(), &[
                ("stage_id", int("The stage id.", 0, i64::from(i32::MAX), 0)),
                ("attempt_id", int("The stage attempt (default: the latest).", 0, 1000, 0)),
            ]),
            &["path", "stage_id"],
        ),
        tool(
            "get_job",
            "A job in detail",
            "One job in detail: status, timing, task and stage counts, its failure, the user's code site that started it, each of its stages (status, tasks, duration, task-duration quantiles, shuffle, spill; at most 50), its SQL execution (description, error, Exchange count and the plan nodes that ran, with the stages each ran in), and the findings that name the job or its stages.",
            with(path_props(), &[("job_id", int("The job id.", 0, i64::from(i32::MAX), 0))]),
            &["path", "job_id"],
        ),
        tool(
            "failure_postmortem",
            "Why did the application fail",
            "The failure post-mortem of one application: a one-sentence verdict, then the application's status, exit code and outcome; the failed jobs with their code sites and failure messages; the failed stages with their reasons; task failures grouped by cause (exception class, message, count, stages, executors); executors lost (how they left, exit code and what it means); failed SQL executions; and the failure findings in full with their fixes. Long stack traces are cut to their first lines.",
            path_props(),
            &["path"],
        ),
        tool(
            "compare_runs",
            "Compare two runs",
            "Compares two runs of a job as `sparkdiag diff BEFORE AFTER --format json` does: a headline of what changed most, whether the outputs agree (rows, files and bytes written per destination), whole-run metrics side by side (runtime, core-hours, tasks, shuffle, spill, GC...), findings that appeared, went away or changed, and matched work (SQL executions and jobs paired by plan shape, destination and call site, with their time before and after). Use it for 'why is it slower than the last run?'.",
            json!({
                "before": {"type": "string", "description": format!("The earlier run. {PATH_DOC}")},
                "after": {"type": "string", "description": "The later run, as `before`."},
                "before_app_id": {"type": "string", "description": "When `before` holds several applications: the one with this id."},
                "after_app_id": {"type": "string", "description": "When `after` holds several applications: the one with this id."},
                "noise": {"type": "string", "description": "How far this job's runtime moves between identical runs, as `diff --noise` takes it: a share of BEFORE's runtime (`25%`) or a duration (`20s`). A change within it is \"nothing material\". Default: the larger of 15% and 3 s."},
            }).as_object().cloned().unwrap_or_default(),
            &["before", "after"],
        ),
        tool(
            "analyze_plan",
            "Analyse physical-plan text",
            "Parses physical-plan text (what df.explain(\"formatted\"), EXPLAIN FORMATTED or df.explain() print) as `sparkdiag plan --format json` does: each plan's operator tree, its shuffle Exchanges and joins, and the plan rules' findings (EX*, PL*) with their fixes. Give the text itself in `text`, or a file of it inside the roots in `path`.",
            json!({
                "text": {"type": "string", "description": "The plan text (at most 4 MiB)."},
                "path": {"type": "string", "description": "A file of plan text inside the server's roots."},
            }).as_object().cloned().unwrap_or_default(),
            &[],
        ),
        tool(
            "what_if",
            "Predict the run with another core count",
            "Predicts one application's wall clock with `cores` executor cores by replaying the log's own tasks (each task keeps its measured time; stages wait for their parents; the driver keeps its gaps between jobs), optionally with skewed tasks cut to their stage's median or the driver's gaps removed. Answers the predicted time, its change against the replay of today's cores, today's measured wall clock and what bounds it (driver-only time, critical path, waiting for cores), and what the replay assumes.",
            with(path_props(), &[
                ("cores", int("Executor cores (task slots) to replay with.", 1, 100_000, 1)),
                ("cut_skew", json!({"type": "boolean", "default": false, "description": "Also cut each task longer than 5x its stage's median to the median."})),
                ("remove_driver_gaps", json!({"type": "boolean", "default": false, "description": "Also submit each job as soon as the one it waited for ended."})),
            ]),
            &["path", "cores"],
        ),
        tool(
            "list_rules",
            "The rules catalogue",
            "The detectors sparkdiag runs, as `sparkdiag rules --format json` lists them: each rule's code, name, category and one-line summary, and its thresholds (key, default, unit, meaning, source). Each rule's full documentation is the resource sparkdiag://rules/CODE (and part of get_finding's answer). `category` keeps one category (skew, partitions, gc, driver-bound, spill, failure, utilization, config, exchanges, plan).",
            json!({"category": {"type": "string", "description": "Only the rules of this category."}})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            &[],
        ),
    ]
}

/// The arguments of one call, checked against the tool's schema.
struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    fn check(tool: &Value, args: &'a Value) -> Result<Args<'a>, RpcError> {
        let name = tool["name"].as_str().unwrap_or_default();
        let map = match args {
            Value::Object(map) => map,
            other => {
                return Err(RpcError::invalid_params(format!(
                    "{name}: arguments must be an object, not {other}"
                )));
            }
        };
        let schema = &tool["inputSchema"];
        let props = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        for (key, value) in map {
            let Some(prop) = props.get(key) else {
                let known: Vec<&String> = props.keys().collect();
                return Err(RpcError::invalid_params(format!(
                    "{name}: unknown argument `{key}` (it takes {known:?})"
                )));
            };
            let ok = match prop["type"].as_str() {
                Some("string") => value.is_string(),
                Some("boolean") => value.is_boolean(),
                Some("integer") => value.as_i64().is_some_and(|n| {
                    prop["minimum"].as_i64().is_none_or(|min| n >= min)
                        && prop["maximum"].as_i64().is_none_or(|max| n <= max)
                }),
                _ => true,
            };
            if !ok {
                let range = match (prop["minimum"].as_i64(), prop["maximum"].as_i64()) {
                    (Some(min), Some(max)) => format!(" from {min} to {max}"),
                    _ => String::new(),
                };
                return Err(RpcError::invalid_params(format!(
                    "{name}: `{key}` must be {} {}{range}, not {value}",
                    if prop["type"] == "integer" { "an" } else { "a" },
                    prop["type"].as_str().unwrap_or("value"),
                )));
            }
        }
        for key in schema["required"].as_array().into_iter().flatten() {
            let key = key.as_str().unwrap_or_default();
            if !map.contains_key(key) {
                return Err(RpcError::invalid_params(format!(
                    "{name}: missing the required argument `{key}`"
                )));
            }
        }
        Ok(Args { map })
    }

    fn str(&self, key: &str) -> Option<&'a str> {
        self.map.get(key).and_then(Value::as_str)
    }

    fn int(&self, key: &str, default: i64) -> i64 {
        self.map.get(key).and_then(Value::as_i64).unwrap_or(default)
    }

    fn flag(&self, key: &str) -> bool {
        self.map.get(key).and_then(Value::as_bool).unwrap_or(false)
    }
}

impl Tools {
    pub fn new(
        rules: sparkdiag_rules::Config,
        prices: sparkdiag_analysis::Prices,
        roots: Arc<Roots>,
    ) -> Result<Tools, String> {
        let unpack = tempfile::Builder::new()
            .prefix("sparkdiag-mcp-")
            .tempdir()
            .map_err(|e| format!("cannot make a folder to unpack archives into: {e}"))?;
        Ok(Tools {
            rules,
            prices,
            roots,
            unpack,
            cache: Mutex::new(Vec::new()),
        })
    }

    /// `tools/call`: the tool's answer as MCP's `CallToolResult`, its text capped.
    pub fn call(&self, params: &Value) -> Result<Value, RpcError> {
        let Some(name) = params.get("name").and_then(Value::as_str) else {
            return Err(RpcError::invalid_params(
                "tools/call: missing the tool's `name`",
            ));
        };
        let definitions = definitions();
        let Some(tool) = definitions.iter().find(|t| t["name"] == name) else {
            return Err(RpcError::invalid_params(format!(
                "Unknown tool: {name} (tools/list lists them)"
            )));
        };
        let mut arguments = match params.get("arguments") {
            None | Some(Value::Null) => json!({}),
            Some(given) => given.clone(),
        };
        // Clients send `null` for an optional argument left out (an application without an
        // id, say): it is left out.
        if let Value::Object(map) = &mut arguments {
            map.retain(|_, v| !v.is_null());
        }
        let args = Args::check(tool, &arguments)?;
        let answer = match name {
            "list_applications" => self.list_applications(&args),
            "analyze_application" => self.analyze_application(&args),
            "get_finding" => self.get_finding(&args),
            "get_stage" => self.get_stage(&args),
            "get_job" => self.get_job(&args),
            "failure_postmortem" => self.failure_postmortem(&args),
            "compare_runs" => self.compare_runs(&args),
            "analyze_plan" => self.analyze_plan(&args),
            "what_if" => self.what_if(&args),
            "list_rules" => list_rules(&args),
            _ => Err(Failure::Rpc(RpcError::invalid_params(format!(
                "Unknown tool: {name}"
            )))),
        };
        match answer {
            Ok(value) => Ok(json!({
                "content": [{"type": "text", "text": fit(value, MAX_TEXT_BYTES)}],
                "isError": false,
            })),
            Err(Failure::Tool(ToolError(message))) => Ok(json!({
                "content": [{"type": "text", "text": cut(&message, 8 * 1024)}],
                "isError": true,
            })),
            Err(Failure::Rpc(e)) => Err(e),
        }
    }

    /// The logs `path` holds, each of whose files is inside the roots.
    fn discover(&self, path: &str) -> Result<(PathBuf, Vec<LogInput>), String> {
        let canonical = self.roots.resolve(path)?;
        let shown = canonical
            .to_str()
            .ok_or_else(|| format!("{path}: the path is not UTF-8"))?;
        let inputs = sparkdiag_eventlog::discover_unpacking_into(shown, self.unpack.path())
            .map_err(|e| e.to_string())?;
        for input in &inputs {
            for part in &input.parts {
                if let Some(file) = &part.path {
                    self.roots.check_found(file, self.unpack.path())?;
                }
            }
        }
        Ok((canonical, inputs))
    }

    fn analyze_input(&self, input: &LogInput, named: &str) -> Result<Analysis, String> {
        let options = sparkdiag_analysis::Options {
            config: &self.rules,
            prices: self.prices,
            inputs: vec![named.to_string()],
        };
        sparkdiag_analysis::analyze(input, &options).map_err(|e| e.to_string())
    }

    /// The application `path` (and `app_id`) names, analysed; the last few are kept.
    pub fn load(&self, path: &str, app_id: Option<&str>) -> Result<Arc<Loaded>, String> {
        let canonical = self.roots.resolve(path)?;
        let meta = std::fs::metadata(&canonical).ok();
        let key = CacheKey {
            path: canonical.clone(),
            app_id: app_id.map(str::to_string),
            modified: meta.as_ref().and_then(|m| m.modified().ok()),
            len: meta.as_ref().map_or(0, |m| m.len()),
        };
        if let Some((_, hit)) = self
            .cache
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .find(|(k, _)| *k == key)
        {
            return Ok(hit.clone());
        }
        let (_, mut inputs) = self.discover(path)?;
        let analysis = match app_id {
            None if inputs.len() == 1 => self.analyze_input(&inputs[0], path)?,
            None => {
                return Err(format!(
                    "{path} holds {} applications: pass app_id to pick one (list_applications lists them)",
                    inputs.len()
                ));
            }
            Some(id) => {
                // Logs are usually named after their application id: those first.
                inputs.sort_by_key(|i| !i.display.contains(id));
                let mut found = None;
                let mut seen = Vec::new();
                for input in &inputs {
                    let Ok(analysis) = self.analyze_input(input, path) else {
                        continue;
                    };
                    if analysis.report.application.id.as_deref() == Some(id) {
                        found = Some(analysis);
                        break;
                    }
                    seen.extend(analysis.report.application.id.clone());
                }
                found.ok_or_else(|| {
                    format!(
                        "{path}: no application with id {id} (it holds {})",
                        if seen.is_empty() {
                            "none that can be read".to_string()
                        } else {
                            seen.join(", ")
                        }
                    )
                })?
            }
        };
        let json = serde_json::to_value(&analysis.report)
            .map_err(|e| format!("{path}: cannot build the report: {e}"))?;
        let loaded = Arc::new(Loaded { analysis, json });
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.push((key, loaded.clone()));
        if cache.len() > CACHE_ENTRIES {
            cache.remove(0);
        }
        Ok(loaded)
    }

    fn load_args(&self, args: &Args) -> Result<Arc<Loaded>, String> {
        self.load(args.str("path").unwrap_or_default(), args.str("app_id"))
    }

    fn list_applications(&self, args: &Args) -> Result<Value, Failure> {
        let path = args.str("path").unwrap_or_default();
        let offset = args.int("offset", 0).max(0) as usize;
        let limit = args.int("limit", 20).clamp(1, 50) as usize;
        let (canonical, inputs) = self.discover(path)?;
        let total = inputs.len();
        let mut rows = Vec::new();
        for input in inputs.iter().skip(offset).take(limit) {
            // A log inside an archive has no path of its own: it is asked for by the archive's
            // path and its id.
            let own_path = input
                .parts
                .first()
                .and_then(|p| p.path.as_ref())
                .filter(|p| !p.starts_with(self.unpack.path()))
                .map(|_| input.display.clone());
            let ask_path = own_path.unwrap_or_else(|| canonical.display().to_string());
            match self.analyze_input(input, &input.display) {
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

    fn analyze_application(&self, args: &Args) -> Result<Value, Failure> {
        let loaded = self.load_args(args)?;
        let r = &loaded.json;
        let top = args.int("top", 10).clamp(1, 50) as usize;
        let findings = r["findings"].as_array().cloned().unwrap_or_default();
        let mut omitted = Vec::new();
        let rows: Vec<Value> = findings
            .iter()
            .take(top)
            .enumerate()
            .map(|(i, f)| finding_row(f, i + 1, &loaded.analysis.app, false))
            .collect();
        if findings.len() > top {
            omitted.push(json!(format!(
                "{} more findings (ranks {}..{}): raise `top` or call get_finding with a rank",
                findings.len() - top,
                top + 1,
                findings.len()
            )));
        }
        omitted.push(json!(
            "each finding's evidence: get_finding; stages, jobs and executors in detail: get_stage, get_job"
        ));
        let source = &r["source"];
        let warnings = source["warnings"].as_array().cloned().unwrap_or_default();
        if warnings.len() > 10 {
            omitted.push(json!(format!(
                "{} more reading warnings",
                warnings.len() - 10
            )));
        }
        Ok(json!({
            "application": r["application"],
            "summary": r["summary"],
            "source": {
                "inputs": source["inputs"],
                "layout": source["layout"],
                "complete": source["complete"],
                "in_progress": source["in_progress"],
                "truncated": source["truncated"],
                "malformed_lines": source["malformed_lines"],
                "warnings": warnings.iter().take(10).collect::<Vec<_>>(),
            },
            "findings_total": findings.len(),
            "findings": rows,
            "what_if": what_if_brief(&r["what_if"]),
            "omitted": omitted,
        }))
    }

    fn get_finding(&self, args: &Args) -> Result<Value, Failure> {
        let loaded = self.load_args(args)?;
        let findings = loaded.json["findings"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if findings.is_empty() {
            return Err(ToolError("this application has no findings".into()).into());
        }
        let index = match (args.map.get("rank"), args.str("rule")) {
            (Some(_), _) => {
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
            (None, Some(rule)) => {
                let code = sparkdiag_rules::find_rule(rule)
                    .map(|r| r.code)
                    .ok_or_else(|| ToolError(format!("no rule `{rule}`; list_rules lists them")))?;
                findings
                    .iter()
                    .position(|f| f["rule"] == code)
                    .ok_or_else(|| ToolError(format!("no {code} finding in this application")))?
            }
            (None, None) => {
                return Err(RpcError::invalid_params("get_finding: give `rank` or `rule`").into());
            }
        };
        let finding = &findings[index];
        let mut answer = finding_row(finding, index + 1, &loaded.analysis.app, true);
        if let Some(rule) = finding["rule"]
            .as_str()
            .and_then(sparkdiag_rules::find_rule)
        {
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
            .filter(|(i, f)| *i != index && f["rule"] == finding["rule"])
            .map(|(i, _)| i + 1)
            .collect();
        answer["same_rule_at_ranks"] = json!(same);
        Ok(answer)
    }

    fn get_stage(&self, args: &Args) -> Result<Value, Failure> {
        let loaded = self.load_args(args)?;
        let app = &loaded.analysis.app;
        let stage_id = args.int("stage_id", 0);
        let attempts: Vec<usize> = app
            .stages
            .iter()
            .enumerate()
            .filter(|(_, s)| s.stage_id == stage_id)
            .map(|(i, _)| i)
            .collect();
        if attempts.is_empty() {
            let ids: Vec<i64> = app.stages.iter().map(|s| s.stage_id).collect();
            return Err(ToolError(format!(
                "no stage {stage_id} in this application (its stages: {})",
                id_ranges(&ids)
            ))
            .into());
        }
        let index = match args.map.get("attempt_id") {
            Some(_) => {
                let attempt = args.int("attempt_id", 0);
                *attempts
                    .iter()
                    .find(|&&i| app.stages[i].attempt_id == attempt)
                    .ok_or_else(|| {
                        ToolError(format!("stage {stage_id} has no attempt {attempt}"))
                    })?
            }
            None => *attempts
                .iter()
                .max_by_key(|&&i| app.stages[i].attempt_id)
                .unwrap_or(&attempts[0]),
        };
        let stage = &app.stages[index];
        let report_stage = loaded.json["stages"]
            .get(index)
            .cloned()
            .unwrap_or(Value::Null);
        let tasks = app.stage_tasks(stage);
        let mut omitted = Vec::new();

        // Executors, by task time.
        let mut by_executor: std::collections::BTreeMap<u32, [i64; 8]> = Default::default();
        for t in tasks.iter() {
            let e = by_executor.entry(t.executor).or_default();
            e[0] += 1;
            e[1] += i64::from(t.outcome == sparkdiag_model::TaskOutcome::Failed);
            e[2] += i64::from(t.outcome == sparkdiag_model::TaskOutcome::Killed);
            e[3] += i64::from(t.duration_ms);
            e[4] = e[4].max(i64::from(t.duration_ms));
            e[5] += i64::from(t.metrics.gc_ms);
            e[6] += t.metrics.shuffle_read_bytes as i64;
            e[7] += (t.metrics.memory_spill + t.metrics.disk_spill) as i64;
        }
        let mut executors: Vec<(u32, [i64; 8])> = by_executor.into_iter().collect();
        executors.sort_by_key(|(_, e)| std::cmp::Reverse(e[3]));
        if executors.len() > 20 {
            omitted.push(json!(format!(
                "{} more executors with less task time",
                executors.len() - 20
            )));
        }
        let executors: Vec<Value> = executors
            .iter()
            .take(20)
            .map(|(i, e)| {
                let ex = &app.executors[*i as usize];
                json!({
                    "executor_id": ex.id, "host": ex.host, "tasks": e[0], "failed_tasks": e[1],
                    "killed_tasks": e[2], "task_time_ms": e[3], "max_task_ms": e[4],
                    "gc_ms": e[5], "shuffle_read_bytes": e[6], "spill_bytes": e[7],
                })
            })
            .collect();

        let mut slowest: Vec<&sparkdiag_model::Task> = tasks.iter().collect();
        slowest.sort_by_key(|t| std::cmp::Reverse(t.duration_ms));
        let slowest: Vec<Value> = slowest
            .iter()
            .take(10)
            .map(|t| {
                let ex = app.executor(t);
                json!({
                    "task_id": t.task_id, "index": t.index, "attempt": t.attempt,
                    "executor_id": ex.id, "host": ex.host, "launch_ms": t.launch_ms,
                    "duration_ms": t.duration_ms, "run_ms": t.metrics.run_ms,
                    "gc_ms": t.metrics.gc_ms, "fetch_wait_ms": t.metrics.fetch_wait_ms,
                    "scheduler_delay_ms": t.scheduler_delay_ms(),
                    "input_bytes": t.metrics.input_bytes,
                    "shuffle_read_bytes": t.metrics.shuffle_read_bytes,
                    "shuffle_write_bytes": t.metrics.shuffle_write_bytes,
                    "memory_spill_bytes": t.metrics.memory_spill,
                    "disk_spill_bytes": t.metrics.disk_spill,
                    "outcome": t.outcome, "speculative": t.speculative,
                })
            })
            .collect();
        if tasks.len() > 10 {
            omitted.push(json!(format!(
                "{} faster tasks (the quantiles cover them all)",
                tasks.len() - 10
            )));
        }

        let failures = task_failures(app, |f| {
            f.stage_id == stage.stage_id && f.stage_attempt_id == stage.attempt_id
        });
        let plan_nodes = plan_nodes_of(&loaded.json, stage_id, 40, &mut omitted);
        let jobs: Vec<Value> = stage
            .job_ids
            .iter()
            .filter_map(|id| app.jobs.iter().find(|j| j.job_id == *id))
            .map(|j| json!({"job_id": j.job_id, "call_site": app.user_call_site(j), "status": j.status}))
            .collect();
        let other_attempts: Vec<i64> = attempts
            .iter()
            .filter(|&&i| i != index)
            .map(|&i| app.stages[i].attempt_id)
            .collect();
        Ok(json!({
            "stage": report_stage,
            "other_attempts": other_attempts,
            "executors": executors,
            "slowest_tasks": slowest,
            "task_failures": failures,
            "plan_nodes": plan_nodes,
            "jobs": jobs,
            "findings": findings_naming(&loaded.json, |scope| ids_contain(&scope["stage_ids"], stage_id)),
            "omitted": omitted,
        }))
    }

    fn get_job(&self, args: &Args) -> Result<Value, Failure> {
        let loaded = self.load_args(args)?;
        let app = &loaded.analysis.app;
        let r = &loaded.json;
        let job_id = args.int("job_id", 0);
        let Some(index) = app.jobs.iter().position(|j| j.job_id == job_id) else {
            let ids: Vec<i64> = app.jobs.iter().map(|j| j.job_id).collect();
            return Err(ToolError(format!(
                "no job {job_id} in this application (its jobs: {})",
                id_ranges(&ids)
            ))
            .into());
        };
        let job = &r["jobs"][index];
        let mut omitted = Vec::new();
        let stage_ids: Vec<i64> = job["stage_ids"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_i64)
            .collect();
        let stages: Vec<Value> = r["stages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| {
                s["stage_id"]
                    .as_i64()
                    .is_some_and(|id| stage_ids.contains(&id))
            })
            .map(|s| {
                json!({
                    "stage_id": s["stage_id"], "attempt_id": s["attempt_id"], "name": s["name"],
                    "status": s["status"], "num_tasks": s["num_tasks"],
                    "failed_tasks": s["failed_tasks"], "duration_ms": s["duration_ms"],
                    "task_duration_ms": s["task_duration_ms"],
                    "shuffle_read_bytes": s["shuffle_read_bytes"],
                    "shuffle_write_bytes": s["shuffle_write_bytes"],
                    "memory_spill_bytes": s["memory_spill_bytes"],
                    "disk_spill_bytes": s["disk_spill_bytes"],
                    "failure_reason": s["failure_reason"].as_str().map(|t| cut(t, 1500)),
                })
            })
            .collect();
        if stages.len() > 50 {
            omitted.push(json!(format!(
                "{} more stages: get_stage gives each",
                stages.len() - 50
            )));
        }
        let sql = job["sql_execution_id"].as_i64().and_then(|id| {
            r["sql"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|s| s["execution_id"] == id)
        });
        let sql = sql.map(|s| {
            let nodes = s["plan_nodes"].as_array().cloned().unwrap_or_default();
            if nodes.len() > 60 {
                omitted.push(json!(format!(
                    "{} more plan nodes of SQL execution {}",
                    nodes.len() - 60,
                    s["execution_id"]
                )));
            }
            json!({
                "execution_id": s["execution_id"],
                "description": s["description"].as_str().map(|t| cut(t, 1500)),
                "error": s["error"].as_str().map(|t| cut(t, 2000)),
                "exchanges": s["exchanges"],
                "plan_nodes": nodes.iter().take(60).map(|n| json!({
                    "index": n["index"], "name": n["name"], "stage_ids": n["stage_ids"],
                })).collect::<Vec<_>>(),
            })
        });
        let mut out = job.clone();
        if let Some(failure) = out["failure"].as_str().map(|t| cut(t, 3000)) {
            out["failure"] = json!(failure);
        }
        Ok(json!({
            "job": out,
            "call_site": app.user_call_site(&app.jobs[index]),
            "stages": stages.into_iter().take(50).collect::<Vec<_>>(),
            "sql_execution": sql,
            "findings": findings_naming(r, |scope| {
                ids_contain(&scope["job_ids"], job_id)
                    || stage_ids.iter().any(|s| ids_contain(&scope["stage_ids"], *s))
            }),
            "omitted": omitted,
        }))
    }

    fn failure_postmortem(&self, args: &Args) -> Result<Value, Failure> {
        let loaded = self.load_args(args)?;
        let app = &loaded.analysis.app;
        let r = &loaded.json;
        let mut omitted = Vec::new();
        let failed_jobs: Vec<Value> = app
            .jobs
            .iter()
            .zip(r["jobs"].as_array().into_iter().flatten())
            .filter(|(_, j)| j["status"] == "failed")
            .map(|(job, j)| {
                json!({
                    "job_id": j["job_id"], "call_site": app.user_call_site(job),
                    "description": j["description"], "failed_stages": j["failed_stages"],
                    "failed_tasks": j["failed_tasks"], "duration_ms": j["duration_ms"],
                    "failure": j["failure"].as_str().map(|t| cut(t, 2000)),
                })
            })
            .collect();
        let failed_stages: Vec<Value> = r["stages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["status"] == "failed")
            .map(|s| {
                json!({
                    "stage_id": s["stage_id"], "attempt_id": s["attempt_id"], "name": s["name"],
                    "num_tasks": s["num_tasks"], "failed_tasks": s["failed_tasks"],
                    "failure_reason": s["failure_reason"].as_str().map(|t| cut(t, 2000)),
                })
            })
            .collect();
        for (what, n) in [
            ("failed jobs", failed_jobs.len()),
            ("failed stages", failed_stages.len()),
        ] {
            if n > 20 {
                omitted.push(json!(format!("{} more {what}", n - 20)));
            }
        }
        let executors_lost: Vec<Value> = r["executors"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|e| matches!(e["removal"].as_str(), Some("lost" | "killed-by-cluster-manager")))
            .map(|e| {
                json!({
                    "executor_id": e["executor_id"], "host": e["host"], "removal": e["removal"],
                    "removed_ms": e["removed_ms"],
                    "removed_reason": e["removed_reason"].as_str().map(|t| cut(t, 800)),
                    "exit_code": e["exit_code"],
                    "exit_code_means": e["exit_code"].as_i64().and_then(|c| {
                        sparkdiag_model::explain_exit_code_on(c, r["application"]["cluster_manager"].as_str())
                    }),
                    "failed_tasks": e["failed_tasks"],
                })
            })
            .collect();
        if executors_lost.len() > 20 {
            omitted.push(json!(format!(
                "{} more executors lost",
                executors_lost.len() - 20
            )));
        }
        let sql_errors: Vec<Value> = r["sql"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| s["error"].is_string())
            .take(10)
            .map(|s| {
                json!({
                    "execution_id": s["execution_id"],
                    "description": s["description"].as_str().map(|t| cut(t, 500)),
                    "error": s["error"].as_str().map(|t| cut(t, 2000)),
                    "job_ids": s["job_ids"],
                })
            })
            .collect();
        let findings: Vec<Value> = r["findings"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, f)| f["category"] == "failure")
            .take(10)
            .map(|(i, f)| finding_row(f, i + 1, app, true))
            .collect();
        let a = &r["application"];
        let verdict = verdict(a, &failed_jobs, &findings, &executors_lost);
        Ok(json!({
            "verdict": verdict,
            "application": {
                "id": a["id"], "name": a["name"], "status": a["status"], "outcome": a["outcome"],
                "exit_code": a["exit_code"], "duration_ms": a["duration_ms"],
                "spark_version": a["spark_version"], "platform": a["platform"],
                "log_complete": r["source"]["complete"], "log_in_progress": r["source"]["in_progress"],
            },
            "failed_jobs": failed_jobs.into_iter().take(20).collect::<Vec<_>>(),
            "failed_stages": failed_stages.into_iter().take(20).collect::<Vec<_>>(),
            "task_failures": task_failures(app, |_| true),
            "executors_lost": executors_lost.into_iter().take(20).collect::<Vec<_>>(),
            "failed_sql_executions": sql_errors,
            "failure_findings": findings,
            "omitted": omitted,
        }))
    }

    fn compare_runs(&self, args: &Args) -> Result<Value, Failure> {
        let noise = args
            .str("noise")
            .map(sparkdiag_diff::Noise::parse)
            .transpose()
            .map_err(|e| ToolError(format!("noise: {e}")))?;
        let before = self
            .load(
                args.str("before").unwrap_or_default(),
                args.str("before_app_id"),
            )
            .map_err(|e| format!("before: {e}"))?;
        let after = self
            .load(
                args.str("after").unwrap_or_default(),
                args.str("after_app_id"),
            )
            .map_err(|e| format!("after: {e}"))?;
        fn run(l: &Loaded) -> sparkdiag_diff::Run<'_> {
            sparkdiag_diff::Run {
                app: &l.analysis.app,
                report: &l.analysis.report,
                facts: &l.analysis.facts,
            }
        }
        let diff = sparkdiag_diff::compare(
            run(&before),
            run(&after),
            &sparkdiag_diff::Options {
                price_per_core_hour: self.prices.per_core_hour,
                noise,
            },
        );
        let mut value =
            serde_json::to_value(&diff).map_err(|e| format!("cannot build the diff: {e}"))?;
        // Matched work is the long part; the first groups are the largest changes.
        let mut omitted = Vec::new();
        if let Some(work) = value["work"].as_array_mut()
            && work.len() > 25
        {
            omitted.push(json!(format!(
                "{} more matched work groups",
                work.len() - 25
            )));
            work.truncate(25);
        }
        value["omitted"] = json!(omitted);
        Ok(value)
    }

    fn analyze_plan(&self, args: &Args) -> Result<Value, Failure> {
        let (bytes, shown) = match (args.str("text"), args.str("path")) {
            (Some(text), None) => (text.as_bytes().to_vec(), "<text>".to_string()),
            (None, Some(path)) => {
                let file = self.roots.resolve(path)?;
                let len = std::fs::metadata(&file).map(|m| m.len()).unwrap_or(0);
                if len > 4 << 20 {
                    return Err(ToolError(format!(
                        "{path}: {len} bytes; plan text is read up to 4 MiB"
                    ))
                    .into());
                }
                let bytes =
                    std::fs::read(&file).map_err(|e| format!("{path}: cannot read ({e})"))?;
                (bytes, path.to_string())
            }
            _ => {
                return Err(
                    RpcError::invalid_params("analyze_plan: give either `text` or `path`").into(),
                );
            }
        };
        if bytes.len() > 4 << 20 {
            return Err(ToolError("plan text is read up to 4 MiB".into()).into());
        }
        let (plans, findings) = sparkdiag_analysis::analyze_plan_text(bytes, &shown, &self.rules)
            .map_err(|e| e.to_string())?;
        let report = sparkdiag_contract::PlanReport::new(&plans, &findings);
        Ok(serde_json::to_value(&report).map_err(|e| e.to_string())?)
    }

    fn what_if(&self, args: &Args) -> Result<Value, Failure> {
        let loaded = self.load_args(args)?;
        let app = &loaded.analysis.app;
        let cores = args.int("cores", 1).max(1);
        let cut_skew = args.flag("cut_skew");
        let remove_driver_gaps = args.flag("remove_driver_gaps");
        let brief = &loaded.json["what_if"];
        let graph = sparkdiag_whatif::replay::Graph::new(app)
            .filter(|_| brief.is_object())
            .ok_or_else(|| {
                ToolError("the log has no application start or no tasks: nothing to replay".into())
            })?;
        let replay = |slots: i64, cut_skew: bool, remove_driver_gaps: bool| {
            graph.replay(sparkdiag_whatif::replay::ReplayOptions {
                slots: Some(slots as usize),
                cut_skew,
                remove_driver_gaps,
            })
        };
        let cores_today = brief["cores_today"].as_i64().unwrap_or(1);
        let today = brief["replay_today_ms"]
            .as_i64()
            .unwrap_or_else(|| replay(cores_today, false, false));
        let predicted = replay(cores, cut_skew, remove_driver_gaps);
        let change = if today > 0 {
            predicted as f64 / today as f64 - 1.0
        } else {
            0.0
        };
        let mut what = format!("{cores} cores");
        if cut_skew {
            what.push_str(", skewed tasks cut to the median");
        }
        if remove_driver_gaps {
            what.push_str(", the driver's gaps removed");
        }
        let verdict = format!(
            "With {what} (today {cores_today}), the replay predicts {} against {} for today's cores: {} {}.",
            duration(predicted),
            duration(today),
            share(change.abs(), 0),
            if change <= 0.0 { "faster" } else { "slower" }
        );
        Ok(json!({
            "verdict": verdict,
            "cores": cores,
            "cut_skew": cut_skew,
            "remove_driver_gaps": remove_driver_gaps,
            "predicted_ms": predicted,
            "cores_today": cores_today,
            "replay_today_ms": today,
            "change_vs_today": (change * 1000.0).round() / 1000.0,
            "measured_wall_ms": brief["bounds"]["wall_ms"],
            "bounds": brief["bounds"],
            "headline": brief["headline"],
            "assumptions": brief["assumptions"],
        }))
    }
}

fn list_rules(args: &Args) -> Result<Value, Failure> {
    let category = args.str("category");
    let rules: Vec<Value> = sparkdiag_rules::all_rules()
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

/// A finding as the tools give it: the report's fields, the user's code sites, and (in full)
/// its evidence.
fn finding_row(f: &Value, rank: usize, app: &sparkdiag_model::Application, full: bool) -> Value {
    let mut row = json!({
        "rank": rank,
        "rule": f["rule"],
        "category": f["category"],
        "severity": f["severity"],
        "title": f["title"],
        "impact_ms": f["impact_ms"],
        "impact_core_hours": f["impact_core_hours"],
        "code_sites": code_sites(&f["scope"], app),
        "recommendation": f["recommendation"],
    });
    let mut scope = f["scope"].clone();
    if !full && let Value::Object(map) = &mut scope {
        for (_, ids) in map.iter_mut() {
            if let Value::Array(items) = ids
                && items.len() > 20
            {
                let n = items.len();
                items.truncate(20);
                items.push(json!(format!("… {} more", n - 20)));
            }
        }
    }
    row["scope"] = scope;
    // Money only when the server was given a price; a number apiece, so every row carries it.
    for key in ["impact_cost", "impact_memory_cost"] {
        if let Some(cost) = f.get(key) {
            row[key] = cost.clone();
        }
    }
    if full {
        row["evidence"] = f["evidence"].clone();
    }
    row
}

/// Where in the user's program the finding's jobs and stages come from (`collect at
/// job.py:107`), as the log names them: at most five.
fn code_sites(scope: &Value, app: &sparkdiag_model::Application) -> Vec<String> {
    let mut sites: Vec<String> = Vec::new();
    let mut add = |site: String| {
        if !site.is_empty() && !sites.contains(&site) && sites.len() < 5 {
            sites.push(site);
        }
    };
    for id in scope["job_ids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
    {
        if let Some(job) = app.jobs.iter().find(|j| j.job_id == id) {
            add(format!("job {id}: {}", app.user_call_site(job)));
        }
    }
    for id in scope["stage_ids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
    {
        if let Some(stage) = app.stages.iter().find(|s| s.stage_id == id) {
            let name = stage.name.lines().next().unwrap_or_default();
            add(format!("stage {id}: {name}"));
        }
    }
    for id in scope["sql_execution_ids"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_i64)
    {
        if let Some(job) = app.jobs.iter().find(|j| j.sql_execution_id == Some(id)) {
            add(format!("SQL execution {id}: {}", app.user_call_site(job)));
        }
    }
    sites
}

fn what_if_brief(w: &Value) -> Value {
    if !w.is_object() {
        return Value::Null;
    }
    json!({
        "headline": w["headline"],
        "cores_today": w["cores_today"],
        "bounds": w["bounds"],
        "replay_today_ms": w["replay_today_ms"],
        "scenarios": w["scenarios"],
        "advice": w["advice"],
    })
}

/// The findings whose scope `names`: rank, rule, title, recoverable time.
fn findings_naming(r: &Value, names: impl Fn(&Value) -> bool) -> Vec<Value> {
    r["findings"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .filter(|(_, f)| names(&f["scope"]))
        .take(20)
        .map(|(i, f)| {
            json!({"rank": i + 1, "rule": f["rule"], "severity": f["severity"], "title": f["title"], "impact_ms": f["impact_ms"]})
        })
        .collect()
}

fn ids_contain(ids: &Value, id: i64) -> bool {
    ids.as_array()
        .is_some_and(|a| a.iter().any(|v| v.as_i64() == Some(id)))
}

/// The plan nodes whose metrics the stage's tasks updated.
fn plan_nodes_of(r: &Value, stage_id: i64, max: usize, omitted: &mut Vec<Value>) -> Vec<Value> {
    let mut nodes = Vec::new();
    for sql in r["sql"].as_array().into_iter().flatten() {
        for node in sql["plan_nodes"].as_array().into_iter().flatten() {
            if ids_contain(&node["stage_ids"], stage_id) {
                nodes.push(json!({
                    "execution_id": sql["execution_id"],
                    "index": node["index"],
                    "name": node["name"],
                    "metrics": node["metrics"],
                }));
            }
        }
    }
    if nodes.len() > max {
        omitted.push(json!(format!("{} more plan nodes", nodes.len() - max)));
        nodes.truncate(max);
    }
    nodes
}

/// Task failures grouped by cause (reason, exception class, the message's first line), the
/// most frequent first: at most 15 groups.
fn task_failures(
    app: &sparkdiag_model::Application,
    keep: impl Fn(&sparkdiag_model::TaskFailure) -> bool,
) -> Value {
    struct Group<'a> {
        reason: &'a str,
        class: Option<&'a str>,
        first_line: String,
        message: Option<&'a str>,
        count: usize,
        stages: Vec<i64>,
        executors: Vec<String>,
    }
    let mut groups: Vec<Group> = Vec::new();
    let mut total = 0usize;
    for f in app.task_failures.iter().filter(|f| keep(f)) {
        total += 1;
        let first_line: String = f
            .message
            .as_deref()
            .and_then(|m| m.lines().next())
            .unwrap_or_default()
            .chars()
            .take(300)
            .collect();
        let executor = app
            .executors
            .get(f.executor as usize)
            .map(|e| e.id.clone())
            .unwrap_or_default();
        let group = match groups.iter_mut().find(|g| {
            g.reason == f.reason
                && g.class == f.exception_class.as_deref()
                && g.first_line == first_line
        }) {
            Some(g) => g,
            None => {
                groups.push(Group {
                    reason: &f.reason,
                    class: f.exception_class.as_deref(),
                    first_line,
                    message: f.message.as_deref(),
                    count: 0,
                    stages: Vec::new(),
                    executors: Vec::new(),
                });
                groups.last_mut().expect("just pushed")
            }
        };
        group.count += 1;
        if !group.stages.contains(&f.stage_id) && group.stages.len() < 10 {
            group.stages.push(f.stage_id);
        }
        if !group.executors.contains(&executor) && group.executors.len() < 10 {
            group.executors.push(executor);
        }
    }
    groups.sort_by_key(|g| std::cmp::Reverse(g.count));
    let shown: Vec<Value> = groups
        .iter()
        .take(15)
        .map(|g| {
            json!({
                "reason": g.reason, "exception_class": g.class, "count": g.count,
                "message": g.message.map(|m| cut(m, 1500)),
                "stage_ids": g.stages, "executor_ids": g.executors,
            })
        })
        .collect();
    json!({"total": total, "causes": groups.len(), "groups": shown})
}

fn verdict(a: &Value, failed_jobs: &[Value], findings: &[Value], lost: &[Value]) -> String {
    let name = a["name"].as_str().unwrap_or("the application");
    let status = a["status"].as_str().unwrap_or("unknown");
    let outcome = a["outcome"].as_str().unwrap_or(status);
    if failed_jobs.is_empty() && findings.is_empty() && status != "failed" {
        return format!("{name} {outcome}: no job failed.");
    }
    let mut parts = vec![format!("{name}: {outcome}")];
    // The failure rule's title tells the chain (an executor lost, then the fetch failures);
    // the job's own message is the fallback.
    match (findings.first(), failed_jobs.first()) {
        (Some(f), job) => {
            let site = job
                .and_then(|j| j["call_site"].as_str())
                .map(|s| format!(" (called from {s})"))
                .unwrap_or_default();
            parts.push(format!("{}{site}", f["title"].as_str().unwrap_or_default()));
        }
        (None, Some(job)) => {
            let why = job["failure"]
                .as_str()
                .and_then(root_cause)
                .map(|l| cut(l, 300))
                .unwrap_or_else(|| "no reason in the log".into());
            parts.push(format!(
                "job {} ({}) failed: {why}",
                job["job_id"],
                job["call_site"].as_str().unwrap_or("?")
            ));
        }
        (None, None) => {}
    }
    if !lost.is_empty() {
        parts.push(format!("{} executor(s) lost or killed", lost.len()));
    }
    parts.join(". ") + "."
}

/// The line of a failure message that names its cause: the last `Caused by:` of a JVM stack
/// trace, else the last line that reads `SomeError: message` (a Python traceback's last
/// line), else the first line.
fn root_cause(message: &str) -> Option<&str> {
    let lines: Vec<&str> = message
        .lines()
        .take(400)
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    if let Some(caused) = lines.iter().rev().find(|l| l.starts_with("Caused by:")) {
        return Some(caused.trim_start_matches("Caused by:").trim());
    }
    let names_an_error = |l: &&&str| {
        let Some((head, _)) = l.split_once(':') else {
            return false;
        };
        !head.contains(' ')
            && ["Error", "Exception", "Exit", "Failure"]
                .iter()
                .any(|w| head.ends_with(w) || head.contains(&format!("{w}.")))
    };
    lines
        .iter()
        .rev()
        .find(names_an_error)
        .or(lines.first())
        .copied()
}

/// `text` cut to `max` bytes on a character boundary, saying how much was cut.
pub fn cut(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut at = max;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    format!("{} … [{} more bytes]", &text[..at], text.len() - at)
}

/// `3,4,5,9` as `3-5, 9`, at most 40 runs.
fn id_ranges(ids: &[i64]) -> String {
    if ids.is_empty() {
        return "none".into();
    }
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    let mut runs: Vec<String> = Vec::new();
    let mut i = 0;
    while i < ids.len() {
        let start = ids[i];
        while i + 1 < ids.len() && ids[i + 1] == ids[i] + 1 {
            i += 1;
        }
        runs.push(if ids[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", ids[i])
        });
        i += 1;
    }
    if runs.len() > 40 {
        let n = runs.len() - 40;
        runs.truncate(40);
        runs.push(format!("… {n} more"));
    }
    runs.join(", ")
}
