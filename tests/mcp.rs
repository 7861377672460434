//! `sparkdiag mcp` over stdio, as a client speaks to it: raw JSON-RPC lines for every refusal
//! (malformed JSON, unknown methods and tools, bad arguments, paths outside the roots), the
//! size cap on the largest committed log, requests answered out of order, and the official
//! Python MCP SDK calling every tool (tests/mcp/client.py).

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{repo, testdata};

const CAP: usize = 64 * 1024;

/// A running `sparkdiag mcp` and the lines it has written.
struct Server {
    child: Child,
    /// `None` once closed: the end of the server's input.
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Answers read while waiting for another id.
    early: HashMap<String, Value>,
    /// The order answers arrived in, by id.
    order: Vec<String>,
}

impl Server {
    fn start(roots: &[&Path]) -> Server {
        Server::start_with(roots, &[])
    }

    /// [`Server::start`] with more of `sparkdiag mcp`'s flags.
    fn start_with(roots: &[&Path], flags: &[&str]) -> Server {
        let mut command = Command::new(env!("CARGO_BIN_EXE_sparkdiag"));
        command.arg("mcp").args(flags);
        for root in roots {
            command.arg("--root").arg(root);
        }
        let mut child = command
            .current_dir(repo())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start sparkdiag mcp");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut server = Server {
            child,
            stdin: Some(stdin),
            lines,
            early: HashMap::new(),
            order: Vec::new(),
        };
        let init = server.request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}),
        );
        assert_eq!(init["result"]["protocolVersion"], "2025-06-18", "{init}");
        server.send_line(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        server
    }

    fn send_line(&mut self, line: &str) {
        self.send_bytes(format!("{line}\n").as_bytes());
    }

    fn send_bytes(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("input still open");
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn send(&mut self, id: impl Into<Value>, method: &str, params: Value) {
        let message =
            json!({"jsonrpc": "2.0", "id": id.into(), "method": method, "params": params});
        self.send_line(&message.to_string());
    }

    /// The next message with this id (`null` for errors about unreadable lines).
    fn answer(&mut self, id: &Value) -> Value {
        let key = id.to_string();
        if let Some(found) = self.early.remove(&key) {
            return found;
        }
        let deadline = Instant::now() + Duration::from_secs(300);
        loop {
            let line = match self.lines.recv_timeout(deadline - Instant::now()) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => panic!("no answer to id {key}"),
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("the server exited before answering {key}")
                }
            };
            let message: Value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line}")
            });
            assert_eq!(message["jsonrpc"], "2.0", "{message}");
            let got = message["id"].to_string();
            self.order.push(got.clone());
            if got == key {
                return message;
            }
            self.early.insert(got, message);
        }
    }

    fn request(&mut self, id: impl Into<Value>, method: &str, params: Value) -> Value {
        let id = id.into();
        self.send(id.clone(), method, params);
        self.answer(&id)
    }

    fn call(&mut self, id: i64, tool: &str, arguments: Value) -> Value {
        self.request(
            id,
            "tools/call",
            json!({"name": tool, "arguments": arguments}),
        )
    }

    /// A tool's answer text, checked to be under the cap and not an error.
    fn text(&mut self, id: i64, tool: &str, arguments: Value) -> (usize, Value) {
        let answer = self.call(id, tool, arguments.clone());
        let result = &answer["result"];
        let text = result["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{answer}"));
        assert_eq!(result["isError"], false, "{tool} {arguments}: {text}");
        assert!(
            text.len() <= CAP,
            "{tool} {arguments}: {} bytes",
            text.len()
        );
        (text.len(), serde_json::from_str(text).unwrap())
    }

    fn error_code(&mut self, id: i64, method: &str, params: Value) -> (i64, String) {
        let answer = self.request(id, method, params);
        let error = &answer["error"];
        (
            error["code"]
                .as_i64()
                .unwrap_or_else(|| panic!("not an error: {answer}")),
            error["message"].as_str().unwrap_or_default().to_string(),
        )
    }

    /// A tool call refused as the tool's own error (`isError`), with its message.
    fn refused(&mut self, id: i64, tool: &str, arguments: Value) -> String {
        let answer = self.call(id, tool, arguments.clone());
        assert_eq!(
            answer["result"]["isError"], true,
            "{tool} {arguments} was answered: {answer}"
        );
        answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .to_string()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn malformed_messages_get_json_rpc_errors_and_the_server_goes_on() {
    let root = testdata(".");
    let mut server = Server::start(&[&root]);
    let null = Value::Null;
    for (line, code) in [
        ("{not json", -32700),
        ("\"just a string\"", -32600),
        ("[]", -32600),
        (r#"[{"jsonrpc":"2.0","id":5,"method":"ping"}]"#, -32600),
        (r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#, -32600),
        (r#"{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}"#, -32600),
    ] {
        server.send_line(line);
        let answer = server.answer(&null);
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
    }
    for (line, id, code) in [
        (r#"{"jsonrpc":"1.0","id":2,"method":"ping"}"#, 2, -32600),
        (r#"{"jsonrpc":"2.0","id":3}"#, 3, -32600),
        (r#"{"jsonrpc":"2.0","id":4,"method":7}"#, 4, -32600),
        (
            r#"{"jsonrpc":"2.0","id":6,"method":"ping","params":[1]}"#,
            6,
            -32602,
        ),
    ] {
        server.send_line(line);
        let answer = server.answer(&json!(id));
        assert_eq!(answer["error"]["code"], code, "{line}: {answer}");
    }
    // Not UTF-8, and a line far past the longest message read.
    server.send_bytes(b"\xff\xfe{}\n");
    assert_eq!(server.answer(&null)["error"]["code"], -32700);
    let long = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"ping\",\"pad\":\"{}\"}}",
        "x".repeat(5 << 20)
    );
    server.send_line(&long);
    let answer = server.answer(&null);
    assert_eq!(answer["error"]["code"], -32700, "{answer}");

    let (code, message) = server.error_code(10, "no/such/method", json!({}));
    assert_eq!(
        (code, message.as_str()),
        (-32601, "Method not found: no/such/method")
    );
    let (code, message) = server.error_code(
        11,
        "tools/call",
        json!({"name": "drop_tables", "arguments": {}}),
    );
    assert_eq!(code, -32602);
    assert!(message.contains("Unknown tool: drop_tables"), "{message}");
    for (arguments, expected) in [
        (json!({}), "missing the required argument `path`"),
        (json!({"path": 7}), "`path` must be a string"),
        (
            json!({"path": "logs/failed", "top": 0}),
            "`top` must be an integer from 1 to 50",
        ),
        (
            json!({"path": "logs/failed", "top": "ten"}),
            "`top` must be an integer",
        ),
        (
            json!({"path": "logs/failed", "verbose": true}),
            "unknown argument `verbose`",
        ),
    ] {
        let (code, message) = server.error_code(
            12,
            "tools/call",
            json!({"name": "analyze_application", "arguments": arguments}),
        );
        assert_eq!(code, -32602, "{arguments}: {message}");
        assert!(message.contains(expected), "{arguments}: {message}");
    }
    let (code, _) = server.error_code(
        13,
        "tools/call",
        json!({"name": "get_stage", "arguments": {"path": "logs/failed", "stage_id": -1}}),
    );
    assert_eq!(code, -32602);
    let (code, _) = server.error_code(
        14,
        "resources/read",
        json!({"uri": "sparkdiag://rules/XX999"}),
    );
    assert_eq!(code, -32002);
    let (code, _) = server.error_code(
        15,
        "prompts/get",
        json!({"name": "why-did-it-fail", "arguments": {}}),
    );
    assert_eq!(code, -32602);
    // Notifications get no answer, known or not; a cancellation of nothing is ignored.
    server.send_line(r#"{"jsonrpc":"2.0","method":"notifications/whatever"}"#);
    server.send_line(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":999}}"#,
    );
    // Still serving after all of it.
    let pong = server.request("after", "ping", json!({}));
    assert_eq!(pong["result"], json!({}), "{pong}");
    assert!(
        server.early.is_empty(),
        "unexpected answers: {:?}",
        server.early
    );
}

#[test]
fn paths_outside_the_roots_are_refused_links_included() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("root");
    std::fs::create_dir_all(root.join("nested")).unwrap();
    let log = testdata("logs/failed/local-1796049483373");
    std::fs::copy(&log, root.join("app.log")).unwrap();
    std::fs::write(tmp.path().join("secret.txt"), "SECRET-CONTENT\n").unwrap();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(tmp.path().join("secret.txt"), root.join("link-out")).unwrap();
        // A folder of logs outside, reached through a link: finding logs follows links.
        std::os::unix::fs::symlink(testdata("logs/diff"), root.join("nested/logs-out")).unwrap();
    }
    let mut server = Server::start(&[&root]);
    let (_, ok) = server.text(20, "analyze_application", json!({"path": "app.log"}));
    assert_eq!(ok["application"]["id"], "local-1796049483373");
    let outside = tmp.path().join("secret.txt");
    for (id, path) in [
        (21, "/etc/passwd".to_string()),
        (22, "../secret.txt".to_string()),
        (23, "nested/../../secret.txt".to_string()),
        (24, outside.display().to_string()),
        (25, format!("file://{}", outside.display())),
    ] {
        let message = server.refused(id, "analyze_application", json!({"path": path}));
        assert!(
            message.contains("outside the folders this server may read"),
            "{path}: {message}"
        );
        assert!(!message.contains("SECRET"), "{message}");
    }
    #[cfg(unix)]
    {
        let message = server.refused(26, "analyze_application", json!({"path": "link-out"}));
        assert!(message.contains("it is a link to"), "{message}");
        let message = server.refused(27, "list_applications", json!({"path": "nested"}));
        assert!(
            message.contains("is a link to") && message.contains("refused"),
            "{message}"
        );
        let message = server.refused(28, "list_applications", json!({"path": "."}));
        assert!(message.contains("is a link to"), "{message}");
    }
    // Every tool that takes a path refuses the same way.
    for (id, tool, arguments) in [
        (30, "failure_postmortem", json!({"path": "/etc/passwd"})),
        (
            31,
            "get_stage",
            json!({"path": "/etc/passwd", "stage_id": 0}),
        ),
        (32, "get_job", json!({"path": "/etc/passwd", "job_id": 0})),
        (33, "get_finding", json!({"path": "/etc/passwd", "rank": 1})),
        (34, "what_if", json!({"path": "/etc/passwd", "cores": 2})),
        (
            35,
            "compare_runs",
            json!({"before": "app.log", "after": "/etc/passwd"}),
        ),
        (36, "analyze_plan", json!({"path": "/etc/passwd"})),
        (37, "list_applications", json!({"path": "/etc"})),
    ] {
        let message = server.refused(id, tool, arguments);
        assert!(message.contains("outside the folders"), "{tool}: {message}");
    }
}

/// The largest file under testdata/logs, where the largest answers come from.
fn largest_log() -> PathBuf {
    fn walk(dir: &Path, best: &mut Option<(u64, PathBuf)>) {
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let path = entry.path();
            let meta = std::fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                walk(&path, best);
            } else if meta.is_file()
                && path.file_name().is_some_and(|n| n != "MANIFEST.tsv")
                && best.as_ref().is_none_or(|b| meta.len() > b.0)
            {
                *best = Some((meta.len(), path));
            }
        }
    }
    let mut best = None;
    walk(&testdata("logs"), &mut best);
    best.unwrap().1
}

#[test]
fn every_answer_on_the_largest_log_is_within_the_cap() {
    let root = testdata(".");
    let mut server = Server::start(&[&root]);
    let log = largest_log();
    let path = log.display().to_string();
    let (_, report) = server.text(40, "analyze_application", json!({"path": path, "top": 50}));
    let mut sizes: Vec<(String, usize)> = Vec::new();
    let stage_ids: Vec<i64> = {
        let out = crate::util::json_of(&["analyze", &path, "--format", "json"]);
        assert_eq!(report["summary"], out["summary"]);
        // The stage with the most tasks, and the first and last stages.
        let stages = out["stages"].as_array().unwrap();
        let most = stages
            .iter()
            .max_by_key(|s| s["num_tasks"].as_i64())
            .unwrap();
        vec![
            most["stage_id"].as_i64().unwrap(),
            stages[0]["stage_id"].as_i64().unwrap(),
        ]
    };
    let job_ids: Vec<i64> = (0..3).collect();
    let mut id = 41;
    let mut calls: Vec<(&str, Value)> = vec![
        ("analyze_application", json!({"path": path, "top": 50})),
        ("list_applications", json!({"path": "logs", "limit": 50})),
        ("failure_postmortem", json!({"path": path})),
        (
            "what_if",
            json!({"path": path, "cores": 64, "cut_skew": true}),
        ),
        ("list_rules", json!({})),
        (
            "compare_runs",
            json!({"before": path, "after": "logs/diff/loop-serial/local-1796117427923.zstd"}),
        ),
        ("get_finding", json!({"path": path, "rank": 1})),
        (
            "get_executor",
            json!({"path": path, "executor_id": "driver"}),
        ),
    ];
    for s in &stage_ids {
        calls.push(("get_stage", json!({"path": path, "stage_id": s})));
    }
    for j in &job_ids {
        calls.push(("get_job", json!({"path": path, "job_id": j})));
    }
    for (tool, arguments) in calls {
        id += 1;
        let (len, _) = server.text(id, tool, arguments);
        sizes.push((tool.to_string(), len));
    }
    // The largest plan text committed.
    let plan = std::fs::read_dir(testdata("plans"))
        .unwrap()
        .flatten()
        .max_by_key(|e| e.metadata().unwrap().len())
        .unwrap()
        .path();
    let (len, _) = server.text(
        90,
        "analyze_plan",
        json!({"path": plan.display().to_string()}),
    );
    sizes.push(("analyze_plan".into(), len));
    let (tool, largest) = sizes.iter().max_by_key(|s| s.1).unwrap();
    eprintln!(
        "largest answer on {} ({} bytes): {tool}, {largest} bytes; all: {sizes:?}",
        log.display(),
        std::fs::metadata(&log).unwrap().len()
    );
    assert!(*largest <= CAP);
}

#[test]
fn a_large_answer_is_cut_to_the_cap_and_says_what_it_left_out() {
    // Plan text of many plans makes an answer past 64 KiB; the cap cuts it and names the cut.
    let plans: String = std::fs::read_dir(testdata("plans"))
        .unwrap()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap())
        .collect::<Vec<_>>()
        .join("\n");
    let text = plans.repeat(4);
    let root = testdata(".");
    let mut server = Server::start(&[&root]);
    let (len, answer) = server.text(100, "analyze_plan", json!({"text": text}));
    assert!(len <= CAP);
    let omitted = answer["omitted"]
        .as_array()
        .expect("a note of what was cut");
    assert!(
        omitted
            .iter()
            .any(|n| n.as_str().unwrap().starts_with("size cap: plans")),
        "{omitted:?}"
    );
}

#[test]
fn a_slow_request_does_not_hold_up_the_others() {
    let root = testdata(".");
    let mut server = Server::start(&[&root]);
    // Analysing a page of 50 logs takes seconds; a ping and the rules are answered meanwhile.
    server.send(
        200,
        "tools/call",
        json!({"name": "list_applications", "arguments": {"path": "logs", "limit": 50}}),
    );
    server.send(201, "ping", json!({}));
    server.send(
        202,
        "tools/call",
        json!({"name": "list_rules", "arguments": {}}),
    );
    let slow = server.answer(&json!(200));
    assert_eq!(slow["result"]["isError"], false);
    assert!(server.early.contains_key("201") && server.early.contains_key("202"));
    let position = |id: &str| server.order.iter().position(|o| o == id).unwrap();
    assert!(
        position("201") < position("200") && position("202") < position("200"),
        "{:?}",
        server.order
    );
}

/// A Python that has the official MCP SDK: `target/mcp-venv` (made by .ci/run), else
/// `python3` when it has it. Without one the test says so in one line, except under CI.
fn python_with_mcp() -> Option<PathBuf> {
    let venv = repo().join("target/mcp-venv/bin/python");
    let candidates = [venv, PathBuf::from("python3")];
    let found = candidates.into_iter().find(|python| {
        Command::new(python)
            .args(["-c", "import mcp.client.stdio"])
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but no Python has the MCP SDK (.ci/run installs it into target/mcp-venv)"
        );
        let _ = writeln!(
            std::io::stderr(),
            "skipped: the MCP client test needs the Python MCP SDK (python3 -m venv target/mcp-venv && target/mcp-venv/bin/pip install mcp)"
        );
    }
    found
}

#[test]
fn the_official_python_client_calls_every_tool_on_real_logs() {
    let Some(python) = python_with_mcp() else {
        return;
    };
    let out = Command::new(python)
        .arg(repo().join("tests/mcp/client.py"))
        .arg(env!("CARGO_BIN_EXE_sparkdiag"))
        .arg(repo())
        .output()
        .expect("run tests/mcp/client.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "tests/mcp/client.py failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ok: "), "{stdout}");
}

#[test]
fn a_cancelled_request_is_not_answered() {
    let root = testdata(".");
    let mut server = Server::start(&[&root]);
    server.send(
        300,
        "tools/call",
        json!({"name": "list_applications", "arguments": {"path": "logs", "limit": 50}}),
    );
    server.send_line(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":300,"reason":"the user moved on"}}"#);
    assert_eq!(server.request(301, "ping", json!({}))["result"], json!({}));
    // At the end of its input the server finishes what runs and answers it, unless cancelled.
    drop(server.stdin.take());
    let rest: Vec<String> = server.lines.iter().collect();
    assert!(rest.is_empty(), "answered after cancellation: {rest:?}");
    assert!(server.child.wait().unwrap().success());
}

/// The server's prices reach the assistant: each finding row carries its money, and memory
/// right-sizing's is its GB-hours at the GB-hour price, as `analyze` prices them.
#[test]
fn the_servers_prices_put_money_in_the_finding_rows() {
    let root = testdata("logs/memory");
    let mut server = Server::start_with(
        &[&root],
        &["--price-per-core-hour", "0.5", "--price-per-gb-hour", "1"],
    );
    let (_, answer) = server.text(
        40,
        "get_finding",
        json!({"path": "overprovisioned", "rule": "GC002"}),
    );
    let gb_hours = answer["evidence"]["gb_hours_saved"].as_f64().unwrap();
    assert!(gb_hours > 1.0, "{answer}");
    let money = answer["impact_memory_cost"].as_f64().unwrap();
    assert!(
        (money - (gb_hours * 100.0).round() / 100.0).abs() < 1e-9,
        "{answer}"
    );
    let (_, brief) = server.text(
        41,
        "analyze_application",
        json!({"path": "overprovisioned"}),
    );
    let rows = brief["findings"].as_array().unwrap();
    assert!(
        rows.iter().all(|r| r["impact_cost"].is_number()),
        "every row priced at the core-hour price: {brief}"
    );
    drop(server);
    let mut unpriced = Server::start(&[&root]);
    let (_, brief) = unpriced.text(
        42,
        "analyze_application",
        json!({"path": "overprovisioned"}),
    );
    assert!(
        brief["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|r| r.get("impact_cost").is_none() && r.get("impact_memory_cost").is_none()),
        "{brief}"
    );
}

/// `compare_runs` takes the job's own noise band as `diff --noise` does: the skew pair's +28 s
/// is "slower" on the default band and within a one-minute band; a band that is neither a share
/// nor a duration is refused by name.
#[test]
fn compare_runs_takes_the_jobs_noise_band() {
    let root = testdata(".");
    let mut server = Server::start(&[&root]);
    let pair = json!({
        "before": "logs/causes/wait-base/app-20261203140202-0000.zstd",
        "after": "logs/causes/wait-skew/app-20261203140246-0000.zstd",
    });
    let (_, default) = server.text(60, "compare_runs", pair.clone());
    assert_eq!(
        default["verdict"]["runtime"], "slower",
        "{}",
        default["verdict"]
    );
    let mut wide = pair.clone();
    wide["noise"] = json!("1min");
    let (_, wide) = server.text(61, "compare_runs", wide);
    assert_eq!(wide["verdict"]["noise_ms"], 60_000);
    assert_eq!(wide["verdict"]["runtime"], "same", "{}", wide["verdict"]);
    let mut bad = pair;
    bad["noise"] = json!("0.25");
    let message = server.refused(62, "compare_runs", bad);
    assert!(
        message.contains("noise:") && message.contains("0.25"),
        "{message}"
    );
}

/// The server's peak resident memory so far, in KiB (`VmHWM` of `/proc/PID/status`).
fn peak_kib(server: &Server) -> u64 {
    std::fs::read_to_string(format!("/proc/{}/status", server.child.id()))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// Input built to hurt: nesting deeper than any parser's stack, a line of 64 MiB, a request of
/// 3 MB that is valid JSON-RPC, a method name and an id of megabytes, and two requests in
/// flight under one id. Each gets the protocol's error, every answer stays small, and the server
/// neither buffers the long line nor stops.
#[test]
fn hostile_messages_get_small_protocol_errors_and_the_server_goes_on() {
    let root = testdata(".");
    let mut server = Server::start(&[&root]);
    let null = Value::Null;
    let before = peak_kib(&server);
    let small = |answer: &Value| {
        let len = answer.to_string().len();
        assert!(len <= 4096, "an answer of {len} bytes");
    };
    // Deeper than serde_json's recursion limit: refused, not a stack overflow.
    server.send_line(&"[".repeat(100_000));
    let answer = server.answer(&null);
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    small(&answer);
    let nested = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{{\"a\":{}1{}}}}}",
        "[".repeat(10_000),
        "]".repeat(10_000)
    );
    server.send_line(&nested);
    let answer = server.answer(&null);
    assert_eq!(answer["error"]["code"], -32700, "{answer}");

    // 64 MiB without a line end until the last byte: skipped as it streams by.
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..64 {
        server.send_bytes(&chunk);
    }
    server.send_bytes(b"\n");
    let answer = server.answer(&null);
    assert_eq!(answer["error"]["code"], -32700, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("67108864 bytes or more"),
        "{answer}"
    );
    let grew = peak_kib(&server).saturating_sub(before);
    assert!(grew < 32 * 1024, "a 64 MiB line took {grew} KiB");

    // Valid JSON-RPC of 3 MB: a path that long is refused in a sentence, not echoed whole.
    let long_path = "a/".repeat(1_500_000);
    let answer = server.call(2, "analyze_application", json!({"path": long_path}));
    assert_eq!(
        answer["result"]["isError"],
        true,
        "{}",
        &answer.to_string()[..200]
    );
    assert!(
        answer.to_string().len() <= CAP,
        "{} bytes",
        answer.to_string().len()
    );
    // A method name of 3 MB: -32601, its name cut.
    let (code, message) = server.error_code(3, &"m".repeat(3_000_000), json!({}));
    assert_eq!(code, -32601);
    assert!(
        message.len() < 4096 && message.contains("more bytes]"),
        "{message}"
    );
    // An id of 2 MB is not echoed.
    server.send_line(&format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":\"{}\",\"method\":\"ping\"}}",
        "i".repeat(2_000_000)
    ));
    let answer = server.answer(&null);
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    small(&answer);

    // Two requests in flight under one id: the second is refused, the first answered.
    let slow = json!({"name": "list_applications", "arguments": {"path": "logs", "limit": 50}});
    server.send(4, "tools/call", slow.clone());
    server.send(4, "tools/call", slow);
    let first = server.answer(&json!(4));
    let second = server.answer(&json!(4));
    let codes: Vec<&Value> = [&first, &second]
        .iter()
        .map(|a| &a["error"]["code"])
        .collect();
    assert!(
        codes.contains(&&json!(-32600)) && codes.contains(&&Value::Null),
        "{first}\n{second}"
    );
    assert_eq!(server.request(5, "ping", json!({}))["result"], json!({}));
    assert!(server.early.is_empty(), "{:?}", server.early.keys());
}

/// 150 requests written at once, without waiting for any answer: each id is answered once, with
/// its result or with -32000 when more than 64 were in flight, every line is one JSON message
/// under the cap, and the server answers pings between them.
#[test]
fn a_burst_of_concurrent_requests_is_answered_once_each_and_bounded() {
    let root = testdata(".");
    let mut server = Server::start(&[&root]);
    let logs = [
        "logs/failed/local-1796049483373",
        "logs/single/plain/local-1796049337368",
        "logs/single/zstd/local-1796049355449.zstd",
    ];
    let mut burst = String::new();
    for id in 1000..1150 {
        let message = match id % 5 {
            0 => json!({"jsonrpc": "2.0", "id": id, "method": "ping"}),
            1 => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "list_rules", "arguments": {}}}),
            2 => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "get_stage", "arguments": {"path": logs[id % 3], "stage_id": 0}}}),
            _ => json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "analyze_application", "arguments": {"path": logs[id % 3]}}}),
        };
        burst.push_str(&message.to_string());
        burst.push('\n');
    }
    server.send_bytes(burst.as_bytes());
    let (mut answered, mut busy) = (0, 0);
    for id in 1000..1150 {
        let answer = server.answer(&json!(id));
        let len = answer.to_string().len();
        assert!(len <= CAP + 1024, "{id}: {len} bytes");
        match answer["error"]["code"].as_i64() {
            None => {
                answered += 1;
                assert_ne!(answer["result"]["isError"], true, "{id}: {answer}");
            }
            Some(-32000) => busy += 1,
            Some(code) => panic!("{id}: error {code}: {answer}"),
        }
    }
    assert_eq!(answered + busy, 150);
    assert!(answered >= 64, "{answered} answered, {busy} busy");
    assert_eq!(server.request(2000, "ping", json!({}))["result"], json!({}));
    assert!(
        server.early.is_empty(),
        "answered twice: {:?}",
        server.early.keys()
    );
    eprintln!("mcp burst: 150 requests at once, {answered} answered, {busy} refused as busy");
}

/// The threads of the server process whose name starts with `prefix`.
fn threads_named(server: &Server, prefix: &str) -> usize {
    std::fs::read_dir(format!("/proc/{}/task", server.child.id()))
        .unwrap()
        .flatten()
        .filter(|task| {
            std::fs::read_to_string(task.path().join("comm"))
                .is_ok_and(|name| name.starts_with(prefix))
        })
        .count()
}

/// An analysis of the read bench's large log, cancelled while it runs: never answered, and the
/// server answers others meanwhile. Then standard input ends in the middle of a request: the
/// fragment gets -32700, and the server exits 0 once the running analysis is done.
#[test]
fn a_cancelled_analysis_and_input_closed_mid_request_end_cleanly() {
    let root = tempfile::tempdir().unwrap();
    let log = root.path().join("large.jsonl");
    let mut file = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
    // One pass over the fixture: 29 MB, seconds of analysis in a debug build.
    crate::large_log::write(&testdata("logs/rolling/zstd"), &mut file, 1).unwrap();
    drop(file);
    let mut server = Server::start(&[root.path()]);
    server.send(
        700,
        "tools/call",
        json!({"name": "analyze_application", "arguments": {"path": "large.jsonl"}}),
    );
    let start = Instant::now();
    while threads_named(&server, "mcp tools/call") == 0 {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the analysis never started"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    server.send_line(
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":700,"reason":"the user moved on"}}"#,
    );
    // Still running, and others are answered meanwhile.
    assert_eq!(server.request(701, "ping", json!({}))["result"], json!({}));
    let (_, rules) = server.text(702, "list_rules", json!({}));
    assert!(rules.to_string().contains("UT003"));
    // Standard input ends half way through a request.
    server
        .send_bytes(br#"{"jsonrpc":"2.0","id":703,"method":"tools/call","params":{"name":"list_"#);
    drop(server.stdin.take());
    let fragment = server.answer(&Value::Null);
    assert_eq!(fragment["error"]["code"], -32700, "{fragment}");
    let rest: Vec<String> = server.lines.iter().collect();
    assert!(rest.is_empty(), "answered after the end: {rest:?}");
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            assert!(status.success(), "{status}");
            break;
        }
        assert!(Instant::now() < deadline, "the server did not exit");
        std::thread::sleep(Duration::from_millis(50));
    }
}
