//! `sparkdiag serve` under load, on loopback: 50 clients upload 50 different real logs at
//! once (the single-file logs of every codec and layout in `testdata/logs`, and its two
//! archives) and each waits for its report. Then the same 50 uploads again, which the content
//! hash answers from the first analyses. Prints throughput, latency percentiles (upload start
//! to report ready) and the process's peak memory, then stops; a run that takes longer than
//! `SPARKDIAG_SERVE_LIMIT_S` (default 600) seconds fails instead of hanging.
//! Run with `cargo bench -p sparkdiag-serve --bench serve`.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const CLIENTS: usize = 50;

fn main() {
    let limit = Duration::from_secs(
        std::env::var("SPARKDIAG_SERVE_LIMIT_S")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(600),
    );
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/logs");
    let mut logs = Vec::new();
    collect(&root, &mut logs);
    logs.sort();
    logs.truncate(CLIENTS);
    assert_eq!(
        logs.len(),
        CLIENTS,
        "testdata/logs holds {} logs",
        logs.len()
    );
    let total_bytes: u64 = logs
        .iter()
        .map(|p| std::fs::metadata(p).unwrap().len())
        .sum();

    let dir = tempfile::tempdir().unwrap();
    let mut config = sparkdiag_serve::Config::new(dir.path().join("data"));
    config.bind = "127.0.0.1:0".parse().unwrap();
    config.queue = CLIENTS;
    config.max_uploads = CLIENTS;
    let workers = config.workers;
    let server = sparkdiag_serve::start(config).unwrap();
    let addr = server.addr();
    println!(
        "{CLIENTS} concurrent uploads of {CLIENTS} different real logs ({:.1} MiB in all), {workers} analysis workers",
        total_bytes as f64 / (1 << 20) as f64
    );
    for round in [
        "first uploads (analysed)",
        "same files again (answered by hash)",
    ] {
        let start = Instant::now();
        let deadline = start + limit;
        let clients: Vec<_> = logs
            .iter()
            .cloned()
            .map(|log| std::thread::spawn(move || one_upload(addr, &log, deadline)))
            .collect();
        let mut latencies: Vec<Duration> = clients
            .into_iter()
            .map(|c| c.join().expect("a client failed"))
            .collect();
        let wall = start.elapsed();
        latencies.sort();
        let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
        println!(
            "{round}: {:.1} uploads/s ({CLIENTS} in {:.2} s); latency p50 {:.0} ms, p95 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
            CLIENTS as f64 / wall.as_secs_f64(),
            wall.as_secs_f64(),
            ms(at(0.5)),
            ms(at(0.95)),
            ms(at(0.99)),
            ms(*latencies.last().unwrap())
        );
    }
    println!(
        "peak memory of the process (server and clients): {}",
        peak_rss()
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// The single-file logs and the archives under `dir`, not the parts of folder layouts.
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            if !name.starts_with("eventlog_v2_") && name != "databricks" {
                collect(&path, out);
            }
        } else if !name.ends_with(".tsv") && !name.ends_with(".md") {
            out.push(path);
        }
    }
}

/// Uploads `log` and waits for its report; the time from the first byte sent to the report.
fn one_upload(addr: SocketAddr, log: &Path, deadline: Instant) -> Duration {
    let bytes = std::fs::read(log).unwrap();
    let name = log.file_name().unwrap().to_string_lossy();
    let start = Instant::now();
    let boundary = "sparkdiag-bench-boundary";
    let mut body = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"log\"; filename=\"{name}\"\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(&bytes);
    body.extend_from_slice(format!("\r\n--{boundary}--\r\n").as_bytes());
    let mut request = format!(
        "POST /upload HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    request.extend_from_slice(&body);
    let reply = exchange(addr, &request, deadline);
    let location = reply
        .lines()
        .find_map(|l| {
            l.strip_prefix("location: ")
                .or_else(|| l.strip_prefix("Location: "))
        })
        .unwrap_or_else(|| panic!("{name}: no redirect: {reply}"))
        .trim()
        .to_string();
    loop {
        let status = exchange(
            addr,
            format!("GET {location}/status HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n")
                .as_bytes(),
            deadline,
        );
        if status.contains("\"state\":\"done\"") {
            return start.elapsed();
        }
        assert!(
            !status.contains("\"state\":\"failed\""),
            "{name}: the analysis failed: {status}"
        );
        assert!(
            Instant::now() < deadline,
            "{name}: no report before the time limit"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn exchange(addr: SocketAddr, request: &[u8], deadline: Instant) -> String {
    let mut stream = TcpStream::connect(addr).unwrap();
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    stream.set_read_timeout(Some(left)).unwrap();
    stream.write_all(request).unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).unwrap();
    String::from_utf8_lossy(&reply).into_owned()
}

/// VmHWM from /proc (Linux); "unknown" elsewhere.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .map(|l| l["VmHWM:".len()..].trim().to_string())
        })
        .unwrap_or_else(|| "unknown".into())
}
