//! Reading + modelling a large event log, plain and zstd, next to `zstd -dc` on the same file.
//!
//! The log is made from the real Spark 4.3 rolling fixture in `testdata/logs/rolling/zstd/`,
//! repeated with job, stage, task and SQL ids and times shifted so every copy is new work.
//! `SPARKDIAG_BENCH_MB` sets its uncompressed size (default 1024). Files go to
//! `target/bench-data/` and are reused when present. Run with `cargo bench --bench read`.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

const RUNS: usize = 5;

fn main() {
    let target_mb: u64 = std::env::var("SPARKDIAG_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let plain = dir.join(format!("large-{target_mb}mb.jsonl"));
    let zst = dir.join(format!("large-{target_mb}mb.zstd"));
    if !plain.exists() || !zst.exists() {
        generate(&plain, &zst, target_mb << 20);
    }
    let plain_len = std::fs::metadata(&plain).unwrap().len();
    let zst_len = std::fs::metadata(&zst).unwrap().len();
    println!(
        "log: {} MB uncompressed, {} MB zstd ({})",
        plain_len >> 20,
        zst_len >> 20,
        zst.display()
    );

    let mb = plain_len as f64 / 1e6;
    let report = |what: &str, times: &[Duration]| {
        let mut sorted = times.to_vec();
        sorted.sort();
        let median = sorted[sorted.len() / 2].as_secs_f64();
        let best = sorted[0].as_secs_f64();
        println!(
            "{what:<44} median {median:>6.3} s  {:>7.0} MB/s   (best {best:.3} s, {} runs)",
            mb / median,
            times.len()
        );
        median
    };

    let zstd_cli = if Command::new("zstd").arg("--version").output().is_ok() {
        let times = time_runs(|| {
            let status = Command::new("zstd")
                .arg("-dc")
                .arg(&zst)
                .stdout(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
        });
        Some(report("zstd -dc FILE > /dev/null", &times))
    } else {
        println!("zstd CLI not installed: no baseline");
        None
    };
    let mut tasks = 0;
    let plain_s = report(
        "read + model, plain",
        &time_runs(|| tasks = read_and_model(&plain)),
    );
    let zstd_s = report(
        "read + model, zstd",
        &time_runs(|| tasks = read_and_model(&zst)),
    );
    println!("tasks modelled: {tasks}");
    if let Some(base) = zstd_cli {
        println!("zstd read + model / zstd -dc: {:.2}x", zstd_s / base);
    }
    let _ = plain_s;

    let bin = env!("CARGO_BIN_EXE_sparkdiag");
    let start = Instant::now();
    let out = Command::new("/usr/bin/time")
        .args(["-f", "%M"])
        .arg(bin)
        .args([
            "analyze",
            zst.to_str().unwrap(),
            "--format",
            "json",
            "-o",
            "/dev/null",
        ])
        .output();
    match out {
        Ok(out) if out.status.success() => {
            let kb: u64 = String::from_utf8_lossy(&out.stderr)
                .trim()
                .lines()
                .last()
                .unwrap_or("0")
                .parse()
                .unwrap_or(0);
            println!(
                "sparkdiag analyze (zstd, JSON out): {:.3} s, peak RSS {} MB",
                start.elapsed().as_secs_f64(),
                kb / 1024
            );
        }
        _ => println!("/usr/bin/time not available: peak RSS not measured"),
    }
}

fn time_runs(mut f: impl FnMut()) -> Vec<Duration> {
    (0..RUNS)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect()
}

fn read_and_model(path: &Path) -> usize {
    let input = &sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap()[0];
    let (source, app) = sparkdiag_analysis::model(input).unwrap();
    assert!(source.complete(), "{:?}", source.warnings);
    app.tasks.len()
}

/// Events that describe the application once; the rest is repeated.
const ONCE: &[&str] = &[
    "SparkListenerLogStart",
    "SparkListenerApplicationStart",
    "SparkListenerEnvironmentUpdate",
    "SparkListenerResourceProfileAdded",
    "SparkListenerExecutorAdded",
    "SparkListenerBlockManagerAdded",
];

fn generate(plain: &Path, zst: &Path, target: u64) {
    let fixture = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/logs/rolling/zstd");
    let dir = std::fs::read_dir(&fixture)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("events_")
        })
        .collect();
    files.sort_by_key(|p| {
        p.file_name()
            .unwrap()
            .to_string_lossy()
            .split('_')
            .nth(1)
            .unwrap()
            .parse::<u32>()
            .unwrap()
    });
    let mut lines: Vec<Value> = Vec::new();
    for f in files {
        for line in BufReader::new(zstd::Decoder::new(File::open(f).unwrap()).unwrap()).lines() {
            lines.push(serde_json::from_str(&line.unwrap()).unwrap());
        }
    }
    let name = |v: &Value| v["Event"].as_str().unwrap_or_default().to_string();
    let (mut max_job, mut max_stage, mut max_task, mut max_sql, mut min_t, mut max_t) =
        (0, 0, 0, 0, i64::MAX, 0);
    for v in &lines {
        scan(v, &mut |k, n| match k {
            "Job ID" => max_job = max_job.max(n),
            "Stage ID" => max_stage = max_stage.max(n),
            "Task ID" => max_task = max_task.max(n),
            "executionId" => max_sql = max_sql.max(n),
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
    let mut out = BufWriter::new(File::create(plain).unwrap());
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
                    max_t - min_t + 1,
                ]
                .map(|o| o * copy);
                shift(&mut v, &offsets);
            }
            let s = serde_json::to_string(&v).unwrap();
            written += s.len() as u64 + 1;
            writeln!(out, "{s}").unwrap();
        }
        copy += 1;
    }
    let mut end = end;
    shift(&mut end, &[0, 0, 0, 0, (max_t - min_t + 1) * (copy - 1)]);
    writeln!(out, "{}", serde_json::to_string(&end).unwrap()).unwrap();
    out.flush().unwrap();
    drop(out);
    // Spark closes a zstd frame at every flush; level 1 is its default.
    let mut encoder = zstd::Encoder::new(File::create(zst).unwrap(), 1).unwrap();
    std::io::copy(&mut File::open(plain).unwrap(), &mut encoder).unwrap();
    encoder.finish().unwrap();
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

/// Adds `[job, stage, task, sql, time]` offsets to every id and timestamp in an event.
fn shift(v: &mut Value, offsets: &[i64; 5]) {
    let [job, stage, task, sql, time] = *offsets;
    match v {
        Value::Object(map) => {
            for (k, val) in map.iter_mut() {
                let add = match k.as_str() {
                    "Job ID" => job,
                    "Stage ID" | "Stage IDs" | "Parent IDs" => stage,
                    "Task ID" => task,
                    "executionId" | "rootExecutionId" => sql,
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
