//! JSON-RPC 2.0 over stdio as MCP frames it: one message a line, UTF-8, no batches. Every
//! line gets an answer or is a notification: a line that is not JSON gets -32700, a message
//! that is not a request -32600, an unknown method -32601, bad parameters -32602. Requests
//! that read logs run on their own threads (a few at a time), so a slow analysis never holds
//! up a `ping`, a `tools/list` or a cancellation; their answers go out as they finish, matched
//! by id.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use serde_json::{Value, json};

use crate::Options;
use crate::roots::Roots;
use crate::tools::Tools;

/// JSON-RPC's error codes.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// The longest line read; a longer one is answered with -32700 and skipped, never buffered.
const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// Requests that read logs, waiting or running, beyond which a request is refused at once
/// (each holds a thread): a client that floods the server gets errors, not an exhausted machine.
const MAX_IN_FLIGHT: usize = 64;

/// The JSON-RPC code (in the range left to servers) for that refusal.
const SERVER_BUSY: i64 = -32000;

/// The longest string id answered; a longer one gets -32600 with a null id.
const MAX_ID_BYTES: usize = 1024;

/// The longest error message sent: messages can quote what the client sent (a method's name, an
/// argument), which may be megabytes long.
const MAX_ERROR_BYTES: usize = 2048;

/// Protocol revisions this server speaks through `initialize`, oldest first: a client's
/// offer among them is accepted, anything else gets the newest.
pub const PROTOCOL_VERSIONS: [&str; 4] = ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];

/// A JSON-RPC error: code and message (and the data a client may show).
#[derive(Debug)]
pub struct RpcError {
    pub code: i64,
    pub message: String,
}

impl RpcError {
    pub fn invalid_params(message: impl Into<String>) -> RpcError {
        RpcError {
            code: INVALID_PARAMS,
            message: message.into(),
        }
    }
}

struct Server {
    out: Mutex<Box<dyn Write + Send>>,
    roots: Arc<Roots>,
    tools: Tools,
    /// Requests being worked on, by their id's JSON text: set to true on `notifications/cancelled`.
    in_flight: Mutex<HashMap<String, Arc<AtomicBool>>>,
    workers: Semaphore,
    client_has_roots: AtomicBool,
    /// The id of the `roots/list` request last sent to the client.
    roots_request: Mutex<Option<String>>,
    next_id: AtomicU64,
}

/// Serves MCP on `input` and `output` until `input` ends; requests still running then are
/// finished and answered first.
pub fn serve(
    mut input: impl BufRead,
    output: impl Write + Send + 'static,
    options: Options,
) -> Result<(), String> {
    let roots = Arc::new(Roots::new(&options.roots)?.allowing_remote(options.remote_prefixes));
    let tools = Tools::new(options.rules, options.prices, options.redact, roots.clone())?;
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(2, 4);
    let server = Arc::new(Server {
        out: Mutex::new(Box::new(output)),
        roots,
        tools,
        in_flight: Mutex::new(HashMap::new()),
        workers: Semaphore::new(workers),
        client_has_roots: AtomicBool::new(false),
        roots_request: Mutex::new(None),
        next_id: AtomicU64::new(1),
    });
    let mut threads: Vec<std::thread::JoinHandle<()>> = Vec::new();
    loop {
        let line = match read_line(&mut input) {
            Ok(Some(line)) => line,
            Ok(None) => break,
            Err(e) => return Err(format!("cannot read standard input: {e}")),
        };
        let line = match line {
            Line::Text(text) => text,
            Line::TooLong(n) => {
                server.send_error(
                    Value::Null,
                    PARSE_ERROR,
                    &format!(
                        "Parse error: a message of {n} bytes or more, longer than {} MiB; skipped",
                        MAX_LINE_BYTES >> 20
                    ),
                );
                continue;
            }
            Line::NotUtf8 => {
                server.send_error(
                    Value::Null,
                    PARSE_ERROR,
                    "Parse error: the line is not UTF-8 text",
                );
                continue;
            }
        };
        if line.trim().is_empty() {
            continue;
        }
        if let Some(thread) = server.on_line(line.trim_start_matches('\u{feff}')) {
            threads.push(thread);
        }
        threads.retain(|t| !t.is_finished());
    }
    for thread in threads {
        let _ = thread.join();
    }
    Ok(())
}

enum Line {
    Text(String),
    TooLong(usize),
    NotUtf8,
}

/// One line of `input`, without its end; at most [`MAX_LINE_BYTES`] are kept.
fn read_line(input: &mut impl BufRead) -> std::io::Result<Option<Line>> {
    let mut bytes = Vec::new();
    let mut too_long = 0usize;
    loop {
        let buf = input.fill_buf()?;
        if buf.is_empty() {
            if bytes.is_empty() && too_long == 0 {
                return Ok(None);
            }
            break;
        }
        let (chunk, done) = match memchr_newline(buf) {
            Some(at) => (&buf[..at], at + 1),
            None => (buf, buf.len()),
        };
        let end = done > chunk.len();
        if too_long > 0 || bytes.len() + chunk.len() > MAX_LINE_BYTES {
            too_long = too_long.max(bytes.len()) + chunk.len();
            bytes.clear();
        } else {
            bytes.extend_from_slice(chunk);
        }
        input.consume(done);
        if end {
            break;
        }
    }
    if too_long > 0 {
        return Ok(Some(Line::TooLong(too_long)));
    }
    if bytes.last() == Some(&b'\r') {
        bytes.pop();
    }
    Ok(Some(match String::from_utf8(bytes) {
        Ok(text) => Line::Text(text),
        Err(_) => Line::NotUtf8,
    }))
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

impl Server {
    fn write(&self, message: &Value) {
        let mut text = serde_json::to_string(message).unwrap_or_default();
        text.push('\n');
        let mut out = self.out.lock().unwrap_or_else(|e| e.into_inner());
        // A client that went away cannot be told anything; reading stops at its end of input.
        let _ = out.write_all(text.as_bytes()).and_then(|_| out.flush());
    }

    fn send_result(&self, id: Value, result: Value) {
        self.write(&json!({"jsonrpc": "2.0", "id": id, "result": result}));
    }

    fn send_error(&self, id: Value, code: i64, message: &str) {
        let message = cut_to(message, MAX_ERROR_BYTES);
        self.write(
            &json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}),
        );
    }

    /// Handles one message; a request that reads logs is handed to a thread, returned.
    fn on_line(self: &Arc<Self>, line: &str) -> Option<std::thread::JoinHandle<()>> {
        let message: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                self.send_error(
                    Value::Null,
                    PARSE_ERROR,
                    &format!("Parse error: not JSON ({e})"),
                );
                return None;
            }
        };
        let Value::Object(map) = message else {
            let what = if message.is_array() {
                "a batch (an array); MCP sends one message at a time since 2025-06-18"
            } else {
                "not a JSON object"
            };
            self.send_error(
                Value::Null,
                INVALID_REQUEST,
                &format!("Invalid Request: {what}"),
            );
            return None;
        };
        let id = match map.get("id") {
            None => None,
            // An id is echoed in the answer: one of many megabytes would make the answer as big.
            Some(Value::String(text)) if text.len() > MAX_ID_BYTES => {
                self.send_error(
                    Value::Null,
                    INVALID_REQUEST,
                    &format!(
                        "Invalid Request: an id of {} bytes; ids of at most {MAX_ID_BYTES} bytes are answered",
                        text.len()
                    ),
                );
                return None;
            }
            Some(id @ (Value::String(_) | Value::Number(_))) => Some(id.clone()),
            Some(other) => {
                self.send_error(
                    Value::Null,
                    INVALID_REQUEST,
                    &format!("Invalid Request: id must be a string or a number, not {other}"),
                );
                return None;
            }
        };
        if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            self.send_error(
                id.unwrap_or(Value::Null),
                INVALID_REQUEST,
                "Invalid Request: \"jsonrpc\" must be \"2.0\"",
            );
            return None;
        }
        let params = map.get("params").cloned().unwrap_or(Value::Null);
        match (map.get("method"), id) {
            (Some(Value::String(method)), Some(id)) => self.on_request(method, id, params),
            (Some(Value::String(method)), None) => {
                self.on_notification(method, &params);
                None
            }
            (Some(_), id) => {
                self.send_error(
                    id.unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    "Invalid Request: \"method\" must be a string",
                );
                None
            }
            (None, Some(id)) if map.contains_key("result") || map.contains_key("error") => {
                self.on_response(&id, map.get("result"));
                None
            }
            (None, id) => {
                self.send_error(
                    id.unwrap_or(Value::Null),
                    INVALID_REQUEST,
                    "Invalid Request: no \"method\"",
                );
                None
            }
        }
    }

    fn on_request(
        self: &Arc<Self>,
        method: &str,
        id: Value,
        params: Value,
    ) -> Option<std::thread::JoinHandle<()>> {
        if !(params.is_null() || params.is_object()) {
            self.send_error(
                id,
                INVALID_PARAMS,
                "Invalid params: \"params\" must be an object",
            );
            return None;
        }
        let quick = match method {
            "initialize" => Some(self.initialize(&params)),
            "ping" => Some(Ok(json!({}))),
            "tools/list" => Some(Ok(json!({"tools": crate::tools::definitions()}))),
            "prompts/list" => Some(Ok(json!({"prompts": crate::prompts::definitions()}))),
            "resources/list" => Some(Ok(json!({"resources": crate::prompts::resources()}))),
            "resources/templates/list" => Some(Ok(
                json!({"resourceTemplates": crate::prompts::resource_templates()}),
            )),
            "tools/call" | "prompts/get" | "resources/read" => None,
            _ => Some(Err(RpcError {
                code: METHOD_NOT_FOUND,
                message: format!("Method not found: {method}"),
            })),
        };
        if let Some(answer) = quick {
            self.answer(id, answer);
            return None;
        }
        let cancelled = Arc::new(AtomicBool::new(false));
        let key = id.to_string();
        {
            let mut in_flight = self.in_flight.lock().unwrap_or_else(|e| e.into_inner());
            if in_flight.len() >= MAX_IN_FLIGHT {
                drop(in_flight);
                self.send_error(
                    id,
                    SERVER_BUSY,
                    &format!(
                        "Server busy: {MAX_IN_FLIGHT} requests are being worked on; send this again once some are answered"
                    ),
                );
                return None;
            }
            // Two requests with one id could not be told apart in the answers, nor cancelled
            // one at a time (JSON-RPC asks ids to be unique among requests in flight).
            if in_flight.contains_key(&key) {
                drop(in_flight);
                self.send_error(
                    id,
                    INVALID_REQUEST,
                    "Invalid Request: a request with this id is still being worked on; use a new id",
                );
                return None;
            }
            in_flight.insert(key.clone(), cancelled.clone());
        }
        let server = self.clone();
        let method = method.to_string();
        let (id_if_failed, key_if_failed) = (id.clone(), key.clone());
        let spawned = std::thread::Builder::new()
            .name(format!("mcp {method}"))
            // The plan parser and the analysis recurse over deep plans: the main thread's room.
            .stack_size(16 << 20)
            .spawn(move || {
                let answer = {
                    let _permit = server.workers.acquire();
                    if cancelled.load(Ordering::Relaxed) {
                        None
                    } else {
                        Some(
                            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                                server.slow_request(&method, &params)
                            }))
                            .unwrap_or_else(|panic| {
                                let why = panic
                                    .downcast_ref::<&str>()
                                    .map(|s| s.to_string())
                                    .or_else(|| panic.downcast_ref::<String>().cloned())
                                    .unwrap_or_default();
                                Err(RpcError {
                                    code: INTERNAL_ERROR,
                                    message: format!("Internal error: {why}"),
                                })
                            }),
                        )
                    }
                };
                server
                    .in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key);
                // A cancelled request gets no answer (the specification's SHOULD NOT).
                if let Some(answer) = answer
                    && !cancelled.load(Ordering::Relaxed)
                {
                    server.answer(id, answer);
                }
            });
        match spawned {
            Ok(thread) => Some(thread),
            Err(e) => {
                self.in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&key_if_failed);
                self.send_error(
                    id_if_failed,
                    INTERNAL_ERROR,
                    &format!("Internal error: cannot start a thread ({e})"),
                );
                None
            }
        }
    }

    fn answer(&self, id: Value, answer: Result<Value, RpcError>) {
        match answer {
            Ok(result) => self.send_result(id, result),
            Err(e) => self.send_error(id, e.code, &e.message),
        }
    }

    fn slow_request(&self, method: &str, params: &Value) -> Result<Value, RpcError> {
        match method {
            "tools/call" => self.tools.call(params),
            "prompts/get" => crate::prompts::get(params),
            "resources/read" => crate::prompts::read(params),
            _ => Err(RpcError {
                code: METHOD_NOT_FOUND,
                message: format!("Method not found: {method}"),
            }),
        }
    }

    fn initialize(&self, params: &Value) -> Result<Value, RpcError> {
        let offered = params.get("protocolVersion").and_then(Value::as_str);
        let version = offered
            .filter(|v| PROTOCOL_VERSIONS.contains(v))
            .unwrap_or(PROTOCOL_VERSIONS[PROTOCOL_VERSIONS.len() - 1]);
        let has_roots = params
            .get("capabilities")
            .and_then(|c| c.get("roots"))
            .is_some_and(|r| !r.is_null());
        self.client_has_roots.store(has_roots, Ordering::Relaxed);
        Ok(json!({
            "protocolVersion": version,
            "capabilities": {
                "tools": {"listChanged": false},
                "prompts": {"listChanged": false},
                "resources": {"subscribe": false, "listChanged": false},
            },
            "serverInfo": {
                "name": "sparkdiag",
                "title": "sparkdiag: Spark event log diagnostics",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "instructions": crate::INSTRUCTIONS,
        }))
    }

    fn on_notification(&self, method: &str, params: &Value) {
        match method {
            "notifications/initialized" | "notifications/roots/list_changed"
                if self.client_has_roots.load(Ordering::Relaxed) =>
            {
                self.ask_for_roots()
            }
            "notifications/cancelled" => {
                if let Some(id) = params.get("requestId")
                    && let Some(flag) = self
                        .in_flight
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .get(&id.to_string())
                {
                    flag.store(true, Ordering::Relaxed);
                }
            }
            // Other notifications need nothing from a read-only server.
            _ => {}
        }
    }

    fn ask_for_roots(&self) {
        let id = format!(
            "sparkdiag-roots-{}",
            self.next_id.fetch_add(1, Ordering::Relaxed)
        );
        *self.roots_request.lock().unwrap_or_else(|e| e.into_inner()) = Some(id.clone());
        self.roots.expect_client_roots();
        self.write(&json!({"jsonrpc": "2.0", "id": id, "method": "roots/list"}));
    }

    fn on_response(&self, id: &Value, result: Option<&Value>) {
        let expected = self
            .roots_request
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        if id.as_str() != expected.as_deref() {
            return;
        }
        let uris: Option<Vec<String>> = result
            .and_then(|r| r.get("roots"))
            .and_then(Value::as_array)
            .map(|roots| {
                roots
                    .iter()
                    .filter_map(|r| r.get("uri").and_then(Value::as_str))
                    .map(str::to_string)
                    .collect()
            });
        match uris {
            Some(uris) => {
                for note in self.roots.set_client_roots(&uris) {
                    eprintln!("sparkdiag mcp: {note}");
                }
            }
            None => self.roots.client_roots_failed(),
        }
    }
}

/// `text` cut to at most `max` bytes at a character boundary, saying how much was left out.
fn cut_to(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{} … [{} more bytes]", &text[..end], text.len() - end)
}

/// At most `n` holders at once.
struct Semaphore {
    free: Mutex<usize>,
    released: Condvar,
}

struct Permit<'a>(&'a Semaphore);

impl Semaphore {
    fn new(n: usize) -> Semaphore {
        Semaphore {
            free: Mutex::new(n),
            released: Condvar::new(),
        }
    }

    fn acquire(&self) -> Permit<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.released.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Permit(self)
    }
}

impl Drop for Permit<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.0.released.notify_one();
    }
}
