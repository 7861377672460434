//! Reading and modelling the read bench's large log from an S3 server on loopback (moto, as
//! the tests start it), against reading the same file from disk: the cost of the network path
//! (HTTP, the bounded bridge, the store's retries) over the local one. The target is at most
//! 1.5 times the disk's wall time. Each read's peak resident memory is printed beside its time:
//! the object is streamed, so the S3 read's peak stays near the disk read's and far below the
//! log's size.
//!
//! Needs the log the read bench writes (`cargo bench -p sparkdiag-analysis --bench read` makes
//! `target/bench-data/large-{MB}mb.zstd`; `SPARKDIAG_BENCH_MB` picks the size, 1024 by default)
//! and the emulators .ci/run installs under `target/emulators`. `SPARKDIAG_BENCH_RUNS` sets the
//! runs of each (3). Run with `cargo bench -p sparkdiag-remote --bench s3`.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn main() {
    let mb: u64 = std::env::var("SPARKDIAG_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let runs: usize = std::env::var("SPARKDIAG_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let data = root.join("target/bench-data");
    let name = format!("large-{mb}mb.zstd");
    let log = data.join(&name);
    if !log.exists() {
        eprintln!(
            "{} is missing: run `SPARKDIAG_BENCH_MB={mb} cargo bench -p sparkdiag-analysis --bench read` first",
            log.display()
        );
        std::process::exit(2);
    }
    // The harness uploads target/bench-data/NAME to the bucket `logs` under the key NAME.
    let mut harness = Command::new("python3")
        .arg(root.join("tests/remote/servers.py"))
        .args(["s3", data.to_str().unwrap(), &name])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("start tests/remote/servers.py");
    let mut line = String::new();
    BufReader::new(harness.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let info: serde_json::Value = serde_json::from_str(&line).expect("the S3 server's address");
    let endpoint = info["endpoint"].as_str().unwrap().to_string();
    let options = sparkdiag_remote::StorageOptions {
        pairs: vec![
            ("aws_endpoint".into(), endpoint),
            ("aws_access_key_id".into(), "bench".into()),
            ("aws_secret_access_key".into(), "bench-secret".into()),
            ("aws_region".into(), "us-east-1".into()),
        ],
    };
    sparkdiag_remote::install(options).unwrap();
    let url = format!("s3://logs/{name}");
    let len = std::fs::metadata(&log).unwrap().len();
    println!(
        "{name}: {:.0} MiB compressed, {runs} runs each, load {}",
        len as f64 / (1 << 20) as f64,
        load_average()
    );
    // Paired: a disk read, then an S3 read, `runs` times, so the machine's load falls on both.
    let (disk, s3) = paired(runs, || events(log.to_str().unwrap()), || events(&url));
    let ratio = s3.median.as_secs_f64() / disk.median.as_secs_f64();
    println!(
        "disk: {:.2} s (median wall), {} events, peak {}",
        disk.median.as_secs_f64(),
        disk.events,
        disk.peak
    );
    println!(
        "s3 (moto on loopback): {:.2} s (median wall), {} events, peak {}",
        s3.median.as_secs_f64(),
        s3.events,
        s3.peak
    );
    println!(
        "s3 / disk: {ratio:.2}x ({} the 1.5x target)",
        if ratio <= 1.5 { "within" } else { "OVER" }
    );
    assert_eq!(disk.events, s3.events, "the two reads saw different events");
    drop(harness.stdin.take());
    let _ = harness.wait();
    let _ = std::io::stdout().flush();
}

/// Reads and models the log at `path` (a file or a URL); the events it held.
fn events(path: &str) -> u64 {
    let inputs = sparkdiag_eventlog::discover(path).unwrap();
    let (report, _app) = sparkdiag_analysis::model(&inputs[0]).unwrap();
    report.events()
}

/// A read's median wall time, what it returned, and its highest resident memory.
struct Measured {
    median: Duration,
    events: u64,
    peak: String,
}

/// `first` and `second` run one after the other, `runs` times.
fn paired(
    runs: usize,
    mut first: impl FnMut() -> u64,
    mut second: impl FnMut() -> u64,
) -> (Measured, Measured) {
    let (mut a, mut b) = (Samples::default(), Samples::default());
    for _ in 0..runs {
        a.run(&mut first);
        b.run(&mut second);
    }
    (a.measured(), b.measured())
}

#[derive(Default)]
struct Samples {
    times: Vec<Duration>,
    events: u64,
    peak_kb: Option<u64>,
}

impl Samples {
    fn run(&mut self, f: &mut impl FnMut() -> u64) {
        // Writing 5 to clear_refs resets this process's VmHWM (Linux), so that each read has
        // its own peak, not the one of the read before it.
        let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let start = Instant::now();
        self.events = f();
        self.times.push(start.elapsed());
        if let Some(kb) = peak_resident_kb().filter(|_| reset) {
            self.peak_kb = Some(self.peak_kb.unwrap_or(0).max(kb));
        }
    }

    fn measured(mut self) -> Measured {
        self.times.sort();
        Measured {
            median: self.times[self.times.len() / 2],
            events: self.events,
            peak: self
                .peak_kb
                .map_or_else(|| "unknown".into(), |kb| format!("{} MiB", kb / 1024)),
        }
    }
}

/// This process's peak resident set since the last reset (`VmHWM`), in KiB.
fn peak_resident_kb() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find_map(|l| l.strip_prefix("VmHWM:"))?;
    line.trim().trim_end_matches("kB").trim().parse().ok()
}

fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".into())
}
