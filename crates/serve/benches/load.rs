//! `sparkdiag serve` under 32 uploads (`SPARKDIAG_SERVE_CLIENTS`) at once of the read bench's large log
//! (`crates/analysis/benches/shared/large_log.rs`, `SPARKDIAG_BENCH_MB` of text, default 1024,
//! written once to `target/bench-data/large-<MB>mb.zstd` as the read bench writes it). The
//! server is the real binary, a process of its own whose memory (`VmHWM`, `VmRSS`) and open files
//! (`/proc/PID/fd`) are read: `SPARKDIAG_BIN`, default `target/release/sparkdiag` (build it with
//! `cargo build --release --features serve`). Each client sends the same file with a zstd
//! skippable frame of its own at the end, so every upload is new bytes to the server (a new
//! analysis) and the same log to the reader. First one upload alone, for the memory one analysis
//! takes; then the 32 at once, each sent again when answered 503 as `Retry-After` asks. Prints
//! the uploads' latency, the 503s, the server's peak memory and its open files before and after.
//! `SPARKDIAG_SERVE_WORKERS` sets `--workers` (default 2), `SPARKDIAG_SERVE_CLIENTS` the clients
//! (default 32). Run with
//! `cargo bench -p sparkdiag-serve --bench load`; `-- --quick` for one pass over the fixture
//! (29 MB of text) and 8 clients, a check that it runs rather than a measurement.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Barrier};
use std::time::{Duration, Instant};

#[path = "../../analysis/benches/shared/large_log.rs"]
mod large_log;

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    // Any size up to one pass over the fixture is one pass.
    let target_mb: u64 = env_or("SPARKDIAG_BENCH_MB", if quick { 1 } else { 1024 });
    let workers: u64 = env_or("SPARKDIAG_SERVE_WORKERS", 2);
    let clients = env_or("SPARKDIAG_SERVE_CLIENTS", if quick { 8 } else { 32 }) as usize;
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let binary = std::env::var_os("SPARKDIAG_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| root.join("target/release/sparkdiag"));
    assert!(
        binary.exists(),
        "{} is missing: build it with `cargo build --release --features serve`, or name a \
         sparkdiag built with serve in SPARKDIAG_BIN",
        binary.display()
    );
    let dir = root.join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let zst = dir.join(format!("large-{target_mb}mb.zstd"));
    if !zst.exists() {
        let started = Instant::now();
        let file = std::fs::File::create(&zst).unwrap();
        let mut encoder = zstd::Encoder::new(std::io::BufWriter::new(file), 1).unwrap();
        large_log::write(
            &root.join("testdata/logs/rolling/zstd"),
            &mut encoder,
            target_mb << 20,
        )
        .unwrap();
        encoder.finish().unwrap().flush().unwrap();
        println!(
            "wrote {} in {:.0} s",
            zst.display(),
            started.elapsed().as_secs_f64()
        );
    }
    let log = Arc::new(std::fs::read(&zst).unwrap());
    let text_mb = std::io::copy(
        &mut zstd::Decoder::new(&log[..]).unwrap(),
        &mut std::io::sink(),
    )
    .unwrap() as f64
        / 1e6;
    let data = tempfile::tempdir().unwrap();
    let mut server = Command::new(&binary)
        .args(["serve", "--bind", "127.0.0.1:0", "--workers"])
        .arg(workers.to_string())
        .arg("--max-upload")
        .arg("16GiB")
        .arg("--data-dir")
        .arg(data.path())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let first = BufReader::new(server.stderr.take().unwrap())
        .lines()
        .next()
        .unwrap()
        .unwrap();
    let addr: SocketAddr = first
        .split("http://")
        .nth(1)
        .and_then(|r| r.split('/').next())
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| panic!("no address in {first:?}"));
    let pid = server.id();
    println!(
        "{clients} clients, a {text_mb:.0} MB log ({:.1} MB zstd) each, {workers} workers",
        log.len() as f64 / 1e6
    );
    println!(
        "idle: RSS {} MiB, {} open files",
        status_kib(pid, "VmRSS:") >> 10,
        open_files(pid)
    );

    let (alone, _) = upload_and_wait(addr, &log, 1_000);
    let one_peak = status_kib(pid, "VmHWM:");
    println!(
        "one upload alone: report in {:.1} s; peak RSS {} MiB",
        alone.as_secs_f64(),
        one_peak >> 10
    );
    let files_before = open_files(pid);

    let barrier = Arc::new(Barrier::new(clients));
    let start = Instant::now();
    let threads: Vec<_> = (0..clients)
        .map(|n| {
            let (log, barrier) = (log.clone(), barrier.clone());
            std::thread::spawn(move || {
                barrier.wait();
                upload_and_wait(addr, &log, n as u32)
            })
        })
        .collect();
    let mut most_rss = 0;
    while threads.iter().any(|c| !c.is_finished()) {
        most_rss = most_rss.max(status_kib(pid, "VmRSS:"));
        std::thread::sleep(Duration::from_millis(200));
    }
    let results: Vec<(Duration, usize)> = threads.into_iter().map(|c| c.join().unwrap()).collect();
    let wall = start.elapsed();
    let mut latencies: Vec<Duration> = results.iter().map(|r| r.0).collect();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q).round() as usize];
    println!(
        "{clients} at once: all reports in {:.1} s ({:.2} uploads/s, {:.0} MB/s of log text); \
         latency p50 {:.1} s, p95 {:.1} s, max {:.1} s; {} answers 503 with Retry-After",
        wall.as_secs_f64(),
        clients as f64 / wall.as_secs_f64(),
        clients as f64 * text_mb / wall.as_secs_f64(),
        at(0.5).as_secs_f64(),
        at(0.95).as_secs_f64(),
        latencies.last().unwrap().as_secs_f64(),
        results.iter().map(|r| r.1).sum::<usize>()
    );
    std::thread::sleep(Duration::from_secs(2));
    println!(
        "server: peak RSS {} MiB (one analysis alone: {} MiB), largest RSS seen {} MiB, {} MiB after; \
         open files {files_before} before, {} after; files left in incoming/ and unpacked/: {}",
        status_kib(pid, "VmHWM:") >> 10,
        one_peak >> 10,
        most_rss >> 10,
        status_kib(pid, "VmRSS:") >> 10,
        open_files(pid),
        ["incoming", "unpacked"]
            .iter()
            .map(|d| std::fs::read_dir(data.path().join(d)).map_or(0, |e| e.count()))
            .sum::<usize>()
    );
    let _ = server.kill();
    let _ = server.wait();
}

fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn status_kib(pid: u32, field: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn open_files(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .count()
}

/// Uploads the log with client `n`'s skippable frame until the server takes it, then waits for
/// the report: the time from the first upload's first byte, and the 503s met.
fn upload_and_wait(addr: SocketAddr, log: &[u8], n: u32) -> (Duration, usize) {
    let start = Instant::now();
    // A zstd skippable frame (magic 0x184D2A50): decoders pass over it.
    let mut frame = 0x184D_2A50u32.to_le_bytes().to_vec();
    frame.extend_from_slice(&4u32.to_le_bytes());
    frame.extend_from_slice(&n.to_le_bytes());
    let boundary = "sparkdiag-bench-boundary";
    let head = format!(
        "--{boundary}\r\nContent-Disposition: form-data; name=\"log\"; filename=\"large-{n}.zstd\"\r\n\r\n"
    );
    let tail = format!("\r\n--{boundary}--\r\n");
    let length = head.len() + log.len() + frame.len() + tail.len();
    let mut refused = 0;
    let location = loop {
        let mut stream = TcpStream::connect(addr).unwrap();
        let request = format!(
            "POST /upload HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
             Content-Type: multipart/form-data; boundary={boundary}\r\nContent-Length: {length}\r\n\r\n{head}"
        );
        // A 503 may come, and the connection close, before the body is sent.
        let _ = stream
            .write_all(request.as_bytes())
            .and_then(|()| stream.write_all(log))
            .and_then(|()| stream.write_all(&frame))
            .and_then(|()| stream.write_all(tail.as_bytes()));
        let mut reply = String::new();
        let _ = stream.read_to_string(&mut reply);
        if reply.starts_with("HTTP/1.1 503") {
            refused += 1;
            let wait = header(&reply, "retry-after")
                .and_then(|v| v.parse().ok())
                .expect("a 503 says when to come back");
            std::thread::sleep(Duration::from_secs(wait));
            continue;
        }
        break header(&reply, "location").unwrap_or_else(|| panic!("no redirect: {reply}"));
    };
    loop {
        let mut stream = TcpStream::connect(addr).unwrap();
        write!(
            stream,
            "GET {location}/status HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut status = String::new();
        stream.read_to_string(&mut status).unwrap();
        if status.contains("\"state\":\"done\"") {
            return (start.elapsed(), refused);
        }
        assert!(!status.contains("\"state\":\"failed\""), "{status}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

fn header(reply: &str, name: &str) -> Option<String> {
    reply.lines().find_map(|line| {
        let (key, value) = line.split_once(':')?;
        key.eq_ignore_ascii_case(name)
            .then(|| value.trim().to_string())
    })
}
