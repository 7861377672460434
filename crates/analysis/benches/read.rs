//! Reading + modelling a large event log, plain and zstd, next to `zstd -dc` on the same file.
//!
//! The log is made from the real Spark 4.3 rolling fixture in `testdata/logs/rolling/zstd/`,
//! repeated with job, stage, task and SQL ids and times shifted so every copy is new work.
//! `SPARKDIAG_BENCH_MB` sets its uncompressed size (default 1024; 100 to 10240 were measured).
//! Files go to `target/bench-data/` and are reused when present; above 2 GB only the zstd file is
//! written, to spare the disk. `SPARKDIAG_BENCH_RUNS` sets the runs of each measurement (5; 1 for
//! callgrind). `SPARKDIAG_BENCH_ONLY=analyze` (or `model`, or `read`: the events parsed and
//! dropped) runs that step once and prints a hash of its result instead of timing anything: the
//! run to give a profiler, and a check that a change leaves a large log's report byte for byte
//! the same. `SPARKDIAG_BENCH_ONLY=after-reading` reads once and times the rest of `analyze`
//! alone, many times over, and the stage statistics within it. `SPARKDIAG_BENCH_PLAIN=1` runs
//! the step on the uncompressed log instead (up to 2 GB). `SPARKDIAG_BIN` names a built
//! `sparkdiag` binary to time `analyze` on the same file with its peak memory. Run with
//! `cargo bench -p sparkdiag-analysis --bench read` (it needs no polars, so it builds quickly).

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "shared/cpu.rs"]
mod cpu;
#[path = "shared/large_log.rs"]
mod large_log;
#[path = "shared/malloc.rs"]
mod malloc;
use cpu::cpu_seconds;

/// Runs of each measurement; `SPARKDIAG_BENCH_RUNS=1` suits a profiler (callgrind).
const RUNS: usize = 5;
/// Largest log also written uncompressed.
const PLAIN_LIMIT_MB: u64 = 2048;

fn main() {
    // As `sparkdiag` itself starts.
    malloc::release_large_blocks();
    malloc::one_arena_a_core();
    let target_mb: u64 = std::env::var("SPARKDIAG_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let root = workspace_root();
    let dir = root.join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let plain =
        (target_mb <= PLAIN_LIMIT_MB).then(|| dir.join(format!("large-{target_mb}mb.jsonl")));
    let zst = dir.join(format!("large-{target_mb}mb.zstd"));
    if !zst.exists() || plain.as_ref().is_some_and(|p| !p.exists()) {
        generate(plain.as_deref(), &zst, target_mb << 20);
    }
    if let Ok(only) = std::env::var("SPARKDIAG_BENCH_ONLY") {
        // `SPARKDIAG_BENCH_PLAIN=1`: the same step on the uncompressed log, where decoding
        // leaves a core free.
        let plain_wanted = std::env::var_os("SPARKDIAG_BENCH_PLAIN").is_some_and(|v| v == "1");
        let log = match (&plain, plain_wanted) {
            (Some(plain), true) => plain.as_path(),
            (None, true) => {
                panic!("SPARKDIAG_BENCH_PLAIN=1 needs SPARKDIAG_BENCH_MB <= {PLAIN_LIMIT_MB}")
            }
            (_, false) => zst.as_path(),
        };
        profile_once(&only, log);
        return;
    }
    let zst_len = std::fs::metadata(&zst).unwrap().len();
    let mut decoded_len = 0;
    let decoded_events = read_and_model(&zst, &mut decoded_len);
    println!(
        "log: {} MB uncompressed, {} MB zstd, {decoded_events} events ({})",
        decoded_len / 1_000_000,
        zst_len / 1_000_000,
        zst.display()
    );

    let mb = decoded_len as f64 / 1e6;
    let report = |what: &str, (times, cpu): &(Vec<Duration>, f64)| {
        let mut sorted = times.to_vec();
        sorted.sort();
        let median = sorted[sorted.len() / 2].as_secs_f64();
        let best = sorted[0].as_secs_f64();
        println!(
            "{what:<30} median {median:>6.3} s  {:>6.0} MB/s  (best {best:.3} s; CPU {:.3} s a run; {} runs)",
            mb / median,
            cpu / times.len() as f64,
            times.len()
        );
        (median, cpu / times.len() as f64)
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
    if let Some(plain) = &plain {
        report(
            "read + model, plain",
            &time_runs(|| {
                read_and_model(plain, &mut 0);
            }),
        );
    }
    let zstd_s = report(
        "read + model, zstd",
        &time_runs(|| {
            read_and_model(&zst, &mut 0);
        }),
    );
    let analyze_s = report(
        "analyze (zstd, JSON report)",
        &time_runs(|| analyze_to_json(&zst)),
    );
    if let Some(base) = zstd_cli {
        for (what, measured) in [("read + model", zstd_s), ("analyze", analyze_s)] {
            println!(
                "{what} (zstd) / zstd -dc: {:.2}x wall, {:.2}x CPU",
                measured.0 / base.0,
                measured.1 / base.1
            );
        }
    }
    println!("load average after the runs: {}", load_average());

    let Some(bin) = std::env::var_os("SPARKDIAG_BIN") else {
        println!("SPARKDIAG_BIN not set: `sparkdiag analyze` not timed");
        return;
    };
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
        Ok(out) => println!(
            "sparkdiag analyze failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => println!("/usr/bin/time not available ({e}): peak RSS not measured"),
    }
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Wall time of each run, and the CPU time (user + system, every thread and waited-for child)
/// of all of them: on a shared machine the CPU time is the steadier figure.
fn time_runs(f: impl FnMut()) -> (Vec<Duration>, f64) {
    let runs = std::env::var("SPARKDIAG_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RUNS);
    time_n_runs(runs, f)
}

/// `f` run `runs` times: each run's wall time, in order, and the CPU time of them all.
fn time_n_runs(runs: usize, mut f: impl FnMut()) -> (Vec<Duration>, f64) {
    let cpu_before = cpu_seconds();
    let times = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed()
        })
        .collect();
    (times, cpu_seconds() - cpu_before)
}

/// Reads and models one log as `analyze` does; returns its events and sets its decoded size.
fn read_and_model(path: &Path, decoded_len: &mut u64) -> u64 {
    let input = &sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap()[0];
    let (source, app) = sparkdiag_analysis::model(input).unwrap();
    assert!(source.complete(), "{:?}", source.warnings);
    assert!(app.events > 0);
    *decoded_len = source.files.iter().map(|f| f.decoded_bytes).sum();
    source.events()
}

/// One step, once, untimed, for a profiler; the hash of the report's JSON (or of the events
/// read) tells whether a change altered the result.
fn profile_once(only: &str, zst: &Path) {
    use std::hash::{DefaultHasher, Hasher};
    match only {
        "analyze" => {
            let json = report_json(zst);
            let mut hash = DefaultHasher::new();
            hash.write(json.as_bytes());
            println!(
                "analyze: {} bytes of JSON, hash {:016x}",
                json.len(),
                hash.finish()
            );
        }
        "model" => println!("model: {} events", read_and_model(zst, &mut 0)),
        "read" => {
            // Decoding, line splitting and parsing, with every event dropped: how far the
            // reading alone is from `zstd -dc`, and the model from the reading.
            let input = &sparkdiag_eventlog::discover(zst.to_str().unwrap()).unwrap()[0];
            let source = sparkdiag_eventlog::read_log(input, |event| {
                std::hint::black_box(&event);
            })
            .unwrap();
            println!("read: {} events", source.events());
        }
        "after-reading" => after_reading(zst),
        other => {
            panic!("SPARKDIAG_BENCH_ONLY is analyze, model, read or after-reading, not {other}")
        }
    }
}

/// What `analyze` does once the reading has ended (facts, rules, what-if, report, its JSON text),
/// timed apart from the reading: the log is read once, then that step runs
/// `SPARKDIAG_BENCH_RUNS` times (default 15) on the same model. Its wall time is the part of
/// `analyze` that a second core can shorten; the hash says the report did not change.
fn after_reading(zst: &Path) {
    use std::hash::{DefaultHasher, Hasher};
    let input = &sparkdiag_eventlog::discover(zst.to_str().unwrap()).unwrap()[0];
    let config = sparkdiag_rules::Config::default();
    let options = sparkdiag_analysis::Options {
        report_only: true,
        ..sparkdiag_analysis::Options::new(&config)
    };
    let (source, app) = sparkdiag_analysis::model(input).unwrap();
    let runs: usize = std::env::var("SPARKDIAG_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(15);
    let mut hash = 0;
    let mut kept = Some((source, app));
    let (walls, cpu) = timed(runs, || {
        let (source, app) = kept.take().expect("put back after each run");
        let analysis = sparkdiag_analysis::analyze_model(input, source, app, &options);
        let json = serde_json::to_string_pretty(&analysis.report).unwrap();
        let mut hasher = DefaultHasher::new();
        hasher.write(json.as_bytes());
        hash = hasher.finish();
        kept = Some((analysis.source, analysis.app));
    });
    println!(
        "after reading: median {:.3} s wall (best {:.3}, worst {:.3}), {cpu:.3} s CPU a run, {runs} runs, report hash {hash:016x}",
        walls[runs / 2].as_secs_f64(),
        walls[0].as_secs_f64(),
        walls[runs - 1].as_secs_f64(),
    );
    // The part of it that needs no more than each stage's own tasks (issue 30's step 1: what
    // could be computed while the reading goes on): the stage statistics, folded stages
    // unfolded for them included.
    let (_, app) = kept.expect("put back after the last run");
    let (walls, cpu) = timed(runs, || {
        std::hint::black_box(sparkdiag_facts::stage_stats(&app));
    });
    println!(
        "  of which the stage statistics: median {:.3} s wall (best {:.3}), {cpu:.3} s CPU a run",
        walls[runs / 2].as_secs_f64(),
        walls[0].as_secs_f64(),
    );
}

/// `step` run `runs` times: each run's wall time, sorted, and the CPU time a run.
fn timed(runs: usize, step: impl FnMut()) -> (Vec<Duration>, f64) {
    let (mut walls, cpu) = time_n_runs(runs, step);
    walls.sort();
    (walls, cpu / runs as f64)
}

/// What `sparkdiag analyze LOG --format json` does, in this light crate: read, model, every
/// rule, the report, and its JSON text (thrown away, as `-o /dev/null` would).
fn analyze_to_json(path: &Path) {
    std::hint::black_box(report_json(path));
}

fn report_json(path: &Path) -> String {
    let input = &sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap()[0];
    let config = sparkdiag_rules::Config::default();
    let options = sparkdiag_analysis::Options {
        report_only: true,
        ..sparkdiag_analysis::Options::new(&config)
    };
    let analysis = sparkdiag_analysis::analyze(input, &options).unwrap();
    let json = serde_json::to_string_pretty(&analysis.report).unwrap();
    assert!(json.len() > 1000);
    json
}

/// The 1-minute load average, so a reader can tell a quiet machine's figures from a busy one's.
fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|l| l.split_whitespace().next().map(str::to_string))
        .unwrap_or_else(|| "unknown".to_string())
}

/// Writes the log as zstd (and plain, when asked) in one pass, so a 10 GB log needs no 10 GB
/// of disk.
fn generate(plain: Option<&Path>, zst: &Path, target: u64) {
    let fixture = workspace_root().join("testdata/logs/rolling/zstd");
    // Spark closes a zstd frame at every flush; level 1 is its default.
    let encoder = zstd::Encoder::new(File::create(zst).unwrap(), 1).unwrap();
    let mut out = Tee {
        zstd: BufWriter::with_capacity(1 << 20, encoder),
        plain: plain.map(|p| BufWriter::with_capacity(1 << 20, File::create(p).unwrap())),
    };
    large_log::write(&fixture, &mut out, target).unwrap();
    out.zstd.into_inner().ok().unwrap().finish().unwrap();
}

/// The generated text, to the zstd file and to the plain one when there is one.
struct Tee<Z: Write, P: Write> {
    zstd: Z,
    plain: Option<P>,
}

impl<Z: Write, P: Write> Write for Tee<Z, P> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.zstd.write_all(buf)?;
        if let Some(plain) = &mut self.plain {
            plain.write_all(buf)?;
        }
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.zstd.flush()?;
        if let Some(plain) = &mut self.plain {
            plain.flush()?;
        }
        Ok(())
    }
}
