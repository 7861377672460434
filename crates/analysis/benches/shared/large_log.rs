//! The large event log of the read bench, written from the real Spark 4.3 rolling fixture in
//! `testdata/logs/rolling/zstd/`: its events repeated, with job, stage, task, SQL and
//! accumulator ids and times shifted so every copy is new work (Spark numbers accumulators once
//! an application: a copy updating the first copy's would tie every SQL operator to every
//! copy's stages), until the text reaches the size asked for. Shared
//! by `crates/analysis/benches/read.rs` and the `serve` load tests and bench (`tests/serve_load.rs`,
//! `benches/serve_load.rs`), which include this file by path.

use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;

use serde_json::Value;

/// Events that describe the application once; the rest is repeated.
const ONCE: &[&str] = &[
    "SparkListenerLogStart",
    "SparkListenerApplicationStart",
    "SparkListenerEnvironmentUpdate",
    "SparkListenerResourceProfileAdded",
    "SparkListenerExecutorAdded",
    "SparkListenerBlockManagerAdded",
];

/// Writes at least `target` bytes of the log's text to `out`, from the rolling fixture in
/// `fixture` (its `eventlog_v2_*` folder or the folder holding it), ending with the
/// application's end.
pub fn write(fixture: &Path, out: &mut impl Write, target: u64) -> std::io::Result<()> {
    // The rolling log's files, in order.
    let input = &sparkdiag_eventlog::discover(fixture.to_str().unwrap()).unwrap()[0];
    let files = input
        .parts
        .iter()
        .map(|part| part.file().unwrap().to_path_buf());
    let mut lines: Vec<Value> = Vec::new();
    for f in files {
        for line in BufReader::new(zstd::Decoder::new(File::open(f)?)?).lines() {
            lines.push(serde_json::from_str(&line?).unwrap());
        }
    }
    let name = |v: &Value| v["Event"].as_str().unwrap_or_default().to_string();
    let (mut max_job, mut max_stage, mut max_task, mut max_sql, mut max_accumulator) =
        (0, 0, 0, 0, 0);
    let (mut min_t, mut max_t) = (i64::MAX, 0);
    for v in &lines {
        scan(v, &mut |k, n| match k {
            "Job ID" => max_job = max_job.max(n),
            "Stage ID" => max_stage = max_stage.max(n),
            "Task ID" => max_task = max_task.max(n),
            "executionId" => max_sql = max_sql.max(n),
            "ID" | "accumulatorId" => max_accumulator = max_accumulator.max(n),
            k if is_time(k) && n > 1_000_000_000_000 => {
                min_t = min_t.min(n);
                max_t = max_t.max(n);
            }
            _ => {}
        });
    }
    let end = lines
        .iter()
        .find(|v| name(v) == "SparkListenerApplicationEnd")
        .cloned()
        .unwrap();
    let mut written = 0u64;
    let mut copy = 0i64;
    while written < target {
        for v in &lines {
            let n = name(v);
            if n == "SparkListenerApplicationEnd" || (copy > 0 && ONCE.contains(&n.as_str())) {
                continue;
            }
            let mut v = v.clone();
            if copy > 0 {
                let offsets = [
                    max_job + 1,
                    max_stage + 1,
                    max_task + 1,
                    max_sql + 1,
                    max_accumulator + 1,
                    max_t - min_t + 1,
                ]
                .map(|o| o * copy);
                shift(&mut v, &offsets);
            }
            let s = serde_json::to_string(&v).unwrap();
            written += s.len() as u64 + 1;
            writeln!(out, "{s}")?;
        }
        copy += 1;
    }
    let mut end = end;
    shift(&mut end, &[0, 0, 0, 0, 0, (max_t - min_t + 1) * (copy - 1)]);
    writeln!(out, "{}", serde_json::to_string(&end).unwrap())?;
    out.flush()
}

fn is_time(key: &str) -> bool {
    matches!(
        key,
        "Timestamp"
            | "Submission Time"
            | "Completion Time"
            | "Launch Time"
            | "Finish Time"
            | "Getting Result Time"
            | "time"
    )
}

fn scan(v: &Value, f: &mut impl FnMut(&str, i64)) {
    match v {
        Value::Object(map) => {
            for (k, val) in map {
                if let Some(n) = val.as_i64() {
                    f(k, n);
                }
                scan(val, f);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| scan(i, f)),
        _ => {}
    }
}

/// Adds `[job, stage, task, sql, accumulator, time]` offsets to every id and timestamp in an
/// event.
fn shift(v: &mut Value, offsets: &[i64; 6]) {
    let [job, stage, task, sql, accumulator, time] = *offsets;
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                let add = match k.as_str() {
                    "Job ID" => job,
                    "Stage ID" | "Stage IDs" | "Parent IDs" => stage,
                    "Task ID" => task,
                    "executionId" | "rootExecutionId" => sql,
                    // A task's and a stage's accumulables, a plan's metrics.
                    "ID" | "accumulatorId" => accumulator,
                    // The driver's updates: `[[accumulator id, value], ...]`.
                    "accumUpdates" => {
                        if let Value::Array(pairs) = val {
                            for pair in pairs {
                                if let Some(id) = pair.get_mut(0)
                                    && let Some(n) = id.as_i64()
                                {
                                    *id = Value::from(n + accumulator);
                                }
                            }
                        }
                        continue;
                    }
                    k if is_time(k) => time,
                    "spark.sql.execution.id" => {
                        if let Some(id) = val.as_str().and_then(|s| s.parse::<i64>().ok()) {
                            *val = Value::String((id + sql).to_string());
                        }
                        continue;
                    }
                    _ => 0,
                };
                match val {
                    Value::Number(n) if add != 0 => {
                        if let Some(x) = n.as_i64().filter(|&x| !is_time(k) || x > 0) {
                            *val = Value::from(x + add);
                        }
                    }
                    Value::Array(items) if add != 0 && items.iter().all(Value::is_number) => {
                        for item in items.iter_mut() {
                            *item = Value::from(item.as_i64().unwrap_or(0) + add);
                        }
                    }
                    _ => shift(val, offsets),
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|i| shift(i, offsets)),
        _ => {}
    }
}
