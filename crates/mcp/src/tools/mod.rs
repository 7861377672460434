//! The tools, one file each, and what they share: the registration every tool is ([`Tool`],
//! listed once in [`ALL`]), the arguments checked against its schema ([`Args`]), and the logs
//! analysed and kept for the next question ([`Tools`]). Every answer is read from the same
//! analysis `sparkdiag analyze` runs (`sparkdiag_analysis`): the typed report contract, and what
//! the analysis computes on demand beyond it (a stage's tasks, failures by cause, a replay), so
//! its numbers are those of `analyze --format json`; what it leaves out is said in `omitted`.
//! An answer becomes JSON text once, at the end, in [`fit`].

mod analyze_application;
mod analyze_plan;
mod common;
mod compare_runs;
mod failure_postmortem;
mod get_executor;
mod get_finding;
mod get_job;
mod get_stage;
mod list_applications;
mod list_rules;
mod what_if;

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use sparkdiag_analysis::Analysis;
use sparkdiag_eventlog::LogInput;

use crate::fit::{MAX_TEXT_BYTES, fit};
use crate::roots::Roots;
use crate::server::RpcError;

pub use common::cut;

/// One tool: what `tools/list` says of it and what answers it. Adding a tool is a file holding
/// one of these and a line in [`ALL`] (see CONTRIBUTING.md, "Adding an MCP tool").
pub struct Tool {
    /// What the assistant calls it: snake_case, never renamed.
    pub name: &'static str,
    pub title: &'static str,
    /// What it answers and when to use it, for the assistant (more than 80 characters).
    pub description: &'static str,
    /// Its arguments, as JSON Schema properties (`{"path": {"type": "string", ...}}`).
    pub arguments: fn() -> Map<String, Value>,
    /// The arguments it cannot do without.
    pub required: &'static [&'static str],
    /// Its answer: a JSON value, [`fit`] to the size cap before it is sent.
    pub run: fn(&Tools, &Args) -> Result<Value, Failure>,
}

/// Every tool, in the order `tools/list` gives them.
pub static ALL: &[&Tool] = &[
    &list_applications::TOOL,
    &analyze_application::TOOL,
    &get_finding::TOOL,
    &get_stage::TOOL,
    &get_job::TOOL,
    &get_executor::TOOL,
    &failure_postmortem::TOOL,
    &compare_runs::TOOL,
    &analyze_plan::TOOL,
    &what_if::TOOL,
    &list_rules::TOOL,
];

impl Tool {
    /// The tool as `tools/list` gives it.
    pub fn definition(&self) -> Value {
        json!({
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema(),
            "annotations": {
                "title": self.title,
                "readOnlyHint": true,
                "destructiveHint": false,
                "idempotentHint": true,
                "openWorldHint": false,
            },
        })
    }

    fn input_schema(&self) -> Value {
        json!({
            "type": "object",
            "properties": (self.arguments)(),
            "required": self.required,
            "additionalProperties": false,
        })
    }
}

/// Every tool, as `tools/list` gives them.
pub fn definitions() -> Vec<Value> {
    ALL.iter().map(|t| t.definition()).collect()
}

/// Analysed logs kept for the next questions about them (most recent last).
const CACHE_ENTRIES: usize = 4;

pub struct Tools {
    rules: sparkdiag_analysis::Config,
    prices: sparkdiag_analysis::Prices,
    redact: Option<std::sync::Mutex<sparkdiag_analysis::redact::Redactor>>,
    roots: Arc<Roots>,
    /// Archives are unpacked under here (with `analyze`'s limits) and removed at exit.
    unpack: tempfile::TempDir,
    cache: Mutex<Vec<(CacheKey, Arc<Analysis>)>>,
}

#[derive(PartialEq, Clone)]
struct CacheKey {
    path: PathBuf,
    app_id: Option<String>,
    modified: Option<std::time::SystemTime>,
    len: u64,
}

/// A tool's failure the assistant should read (a path refused, a log unreadable): answered as
/// a result with `isError`, as the specification asks for errors of a tool's own.
pub struct ToolError(pub String);

impl From<String> for ToolError {
    fn from(s: String) -> ToolError {
        ToolError(s)
    }
}

/// Why a tool did not answer: its own error, or the request's.
pub enum Failure {
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

/// The arguments of one call, checked against the tool's schema.
pub struct Args<'a> {
    map: &'a Map<String, Value>,
}

impl<'a> Args<'a> {
    fn check(tool: &Tool, args: &'a Value) -> Result<Args<'a>, RpcError> {
        let name = tool.name;
        let map = match args {
            Value::Object(map) => map,
            other => {
                return Err(RpcError::invalid_params(format!(
                    "{name}: arguments must be an object, not {other}"
                )));
            }
        };
        let props = (tool.arguments)();
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
        for key in tool.required {
            if !map.contains_key(*key) {
                return Err(RpcError::invalid_params(format!(
                    "{name}: missing the required argument `{key}`"
                )));
            }
        }
        Ok(Args { map })
    }

    pub fn str(&self, key: &str) -> Option<&'a str> {
        self.map.get(key).and_then(Value::as_str)
    }

    pub fn int(&self, key: &str, default: i64) -> i64 {
        self.map.get(key).and_then(Value::as_i64).unwrap_or(default)
    }

    pub fn flag(&self, key: &str) -> bool {
        self.map.get(key).and_then(Value::as_bool).unwrap_or(false)
    }

    /// Whether the call gave `key` at all.
    pub fn has(&self, key: &str) -> bool {
        self.map.contains_key(key)
    }
}

/// What a log path is, for every tool that takes one.
pub const PATH_DOC: &str = "An event log inside the server's roots: a log file of any codec (.inprogress too), a rolling eventlog_v2_* folder, a Databricks cluster-log folder, or a .zip/.tar.gz of them. A relative path is taken from the first root.";
const APP_ID_DOC: &str = "When the path holds several applications: the application id to pick (list_applications gives each one's).";

/// `path` and `app_id`, the arguments of every tool about one application, with `extra`.
pub fn path_props(extra: &[(&str, Value)]) -> Map<String, Value> {
    let mut props = Map::new();
    props.insert(
        "path".into(),
        json!({"type": "string", "description": PATH_DOC}),
    );
    props.insert(
        "app_id".into(),
        json!({"type": "string", "description": APP_ID_DOC}),
    );
    props.extend(extra.iter().map(|(k, v)| ((*k).to_string(), v.clone())));
    props
}

/// An integer argument's schema.
pub fn int(description: &str, min: i64, max: i64, default: i64) -> Value {
    json!({"type": "integer", "minimum": min, "maximum": max, "default": default, "description": description})
}

/// A string argument's schema.
pub fn string(description: &str) -> Value {
    json!({"type": "string", "description": description})
}

/// A schema's properties from `(name, schema)` pairs.
pub fn props(pairs: &[(&str, Value)]) -> Map<String, Value> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect()
}

impl Tools {
    pub fn new(
        rules: sparkdiag_analysis::Config,
        prices: sparkdiag_analysis::Prices,
        redact: bool,
        roots: Arc<Roots>,
    ) -> Result<Tools, String> {
        let unpack = tempfile::Builder::new()
            .prefix("sparkdiag-mcp-")
            .tempdir()
            .map_err(|e| format!("cannot make a folder to unpack archives into: {e}"))?;
        Ok(Tools {
            rules,
            prices,
            redact: redact.then(Default::default),
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
        let Some(tool) = ALL.iter().find(|t| t.name == name) else {
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
        match (tool.run)(self, &args) {
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

    /// The rules' configuration the server was started with.
    pub fn rules(&self) -> &sparkdiag_analysis::Config {
        &self.rules
    }

    /// The prices the server was started with.
    pub fn prices(&self) -> sparkdiag_analysis::Prices {
        self.prices
    }

    /// The folders the server may read.
    pub fn roots(&self) -> &Roots {
        &self.roots
    }

    /// The logs `path` holds, each of whose files is inside the roots.
    pub fn discover(&self, path: &str) -> Result<(PathBuf, Vec<LogInput>), String> {
        if let Some(allowed) = self.roots.remote(path) {
            let url = allowed?;
            let inputs = sparkdiag_eventlog::discover_unpacking_into(&url, self.unpack.path())
                .map_err(|e| e.to_string())?;
            return Ok((PathBuf::from(url), inputs));
        }
        let canonical = self.roots.resolve(path)?;
        let shown = canonical
            .to_str()
            .ok_or_else(|| format!("{path}: the path is not UTF-8"))?;
        let inputs = sparkdiag_eventlog::discover_unpacking_into(shown, self.unpack.path())
            .map_err(|e| e.to_string())?;
        for input in &inputs {
            for part in &input.parts {
                if let Some(file) = part.file() {
                    self.roots.check_found(file, self.unpack.path())?;
                }
            }
        }
        Ok((canonical, inputs))
    }

    /// Whether a log found by [`Tools::discover`] was unpacked from an archive (and so has no
    /// path of its own to ask for).
    pub fn unpacked(&self, input: &LogInput) -> bool {
        input
            .parts
            .first()
            .and_then(|p| p.file())
            .is_none_or(|p| p.starts_with(self.unpack.path()))
    }

    pub fn analyze_input(&self, input: &LogInput, named: &str) -> Result<Analysis, String> {
        let options = sparkdiag_analysis::Options {
            config: &self.rules,
            prices: self.prices,
            inputs: vec![named.to_string()],
            redact: self.redact.as_ref(),
            // A session's analyses are kept and may be compared.
            report_only: false,
        };
        sparkdiag_analysis::analyze(input, &options).map_err(|e| e.to_string())
    }

    /// The application `path` (and `app_id`) names, analysed; the last few are kept.
    pub fn load(&self, path: &str, app_id: Option<&str>) -> Result<Arc<Analysis>, String> {
        let canonical = match self.roots.remote(path) {
            Some(allowed) => PathBuf::from(allowed?),
            None => self.roots.resolve(path)?,
        };
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
        let loaded = Arc::new(analysis);
        let mut cache = self.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.push((key, loaded.clone()));
        if cache.len() > CACHE_ENTRIES {
            cache.remove(0);
        }
        Ok(loaded)
    }

    /// The application a tool's `path` and `app_id` name.
    pub fn load_args(&self, args: &Args) -> Result<Arc<Analysis>, String> {
        self.load(args.str("path").unwrap_or_default(), args.str("app_id"))
    }
}

#[cfg(test)]
mod tests {
    use super::ALL;

    fn repo_file(path: &str) -> String {
        let file = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../..")
            .join(path);
        std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()))
    }

    #[test]
    fn every_tool_has_one_name_and_a_description_worth_reading() {
        let mut names: Vec<&str> = ALL.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), ALL.len(), "a tool name is registered twice");
        for tool in ALL {
            assert!(
                tool.name
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c == '_'),
                "{}: tool names are snake_case",
                tool.name
            );
            assert!(tool.description.len() > 80, "{}: say more", tool.name);
            let props = (tool.arguments)();
            for key in tool.required {
                assert!(
                    props.contains_key(*key),
                    "{}: `{key}` is required but not an argument",
                    tool.name
                );
            }
        }
    }

    /// A tool is named in the server's instructions, the user's page and the client test, so
    /// an assistant is told of it, a user can read about it and the official SDK calls it.
    #[test]
    fn every_tool_is_named_in_the_instructions_the_docs_and_the_client_test() {
        let docs = repo_file("docs/mcp.md");
        let client = repo_file("tests/mcp/client.py");
        for tool in ALL {
            let name = tool.name;
            assert!(
                crate::INSTRUCTIONS.contains(name),
                "INSTRUCTIONS (crates/mcp/src/lib.rs) never mentions {name}: say when to use it"
            );
            assert!(
                docs.contains(&format!("| `{name}` |")),
                "docs/mcp.md's table of tools has no row for `{name}`"
            );
            assert!(
                client.contains(&format!("\"{name}\"")),
                "tests/mcp/client.py never calls {name}: add it to `expected` and call it in every_tool"
            );
        }
    }
}
