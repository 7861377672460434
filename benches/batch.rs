//! `sparkdiag batch` over many real logs with 1 worker and with every core: it should scale with
//! cores. The logs are copies of the committed pattern fixtures and the rolling fixture
//! (`SPARKDIAG_BATCH_COPIES` copies of each, default 8; 0 skips this part). Then nights of
//! `SPARKDIAG_BATCH_APPS` applications (default 1,000; a list such as `1000,10000` runs each,
//! links to the pattern fixtures) with every core: wall time, apps/s and peak memory, and how
//! much the peak grew per application from one size to the next, which should stay small
//! because each application's table rows and night-file line are written as it finishes, and
//! only what ranks it for the index (48 bytes), its place in the list of logs found (its name
//! after the searched folder's and 12 bytes) and the Parquet writer's record of each row group
//! (for the files' footers) are kept. Run with `cargo bench --bench batch`.

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn main() {
    let copies: usize = std::env::var("SPARKDIAG_BATCH_COPIES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(8);
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let mut sources: Vec<std::path::PathBuf> = Vec::new();
    for entry in std::fs::read_dir(root.join("testdata/logs/patterns")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources.extend(std::fs::read_dir(&path).unwrap().map(|e| e.unwrap().path()));
        }
    }
    let rolling = std::fs::read_dir(root.join("testdata/logs/rolling/zstd"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    for copy in 0..copies {
        for (i, src) in sources.iter().enumerate() {
            std::fs::copy(
                src,
                logs.join(format!(
                    "c{copy}-{i}-{}",
                    src.file_name().unwrap().to_string_lossy()
                )),
            )
            .unwrap();
        }
        let target = logs.join(format!(
            "c{copy}-{}",
            rolling.file_name().unwrap().to_string_lossy()
        ));
        std::fs::create_dir_all(&target).unwrap();
        for f in std::fs::read_dir(&rolling).unwrap() {
            let f = f.unwrap().path();
            std::fs::copy(&f, target.join(f.file_name().unwrap())).unwrap();
        }
    }
    let apps = copies * (sources.len() + 1);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!(
        "{apps} applications ({copies} copies of {} real logs), {cores} cores",
        sources.len() + 1
    );
    let mut first = None;
    for jobs in [1, cores] {
        let mut best = f64::MAX;
        for _ in 0..3 {
            let out = dir.path().join(format!("out-{jobs}"));
            let start = Instant::now();
            let status = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
                .args([
                    "batch",
                    logs.to_str().unwrap(),
                    "-o",
                    out.to_str().unwrap(),
                    "--date",
                    "2026-11-29",
                    "--jobs",
                    &jobs.to_string(),
                ])
                .stdout(std::process::Stdio::null())
                .status()
                .unwrap();
            assert!(status.success());
            best = best.min(start.elapsed().as_secs_f64());
        }
        let speedup = first.map_or(1.0, |f: f64| f / best);
        first.get_or_insert(best);
        println!(
            "--jobs {jobs:<3} best of 3: {best:>6.2} s  {:>6.1} apps/s  speed-up {speedup:.2}x",
            apps as f64 / best
        );
    }

    let sizes: Vec<usize> = std::env::var("SPARKDIAG_BATCH_APPS")
        .unwrap_or_else(|_| "1000".into())
        .split(',')
        .map(|n| {
            n.trim()
                .parse()
                .expect("SPARKDIAG_BATCH_APPS: numbers, e.g. 1000,10000")
        })
        .collect();
    let mut previous: Option<(usize, u64)> = None;
    for apps in sizes {
        let peak_kb = night(dir.path(), &sources, apps, cores);
        if let Some((before_apps, before_kb)) = previous {
            println!(
                "  peak grew {:.0} bytes per application from {before_apps} to {apps}",
                (peak_kb as f64 - before_kb as f64) * 1024.0 / (apps as f64 - before_apps as f64)
            );
        }
        previous = Some((apps, peak_kb));
    }
}

/// One night of `apps` applications (links to `sources` in turn) with every core; prints its
/// time and returns its peak resident memory in KB.
fn night(dir: &Path, sources: &[std::path::PathBuf], apps: usize, cores: usize) -> u64 {
    let night = dir.join(format!("night-{apps}"));
    std::fs::create_dir_all(&night).unwrap();
    for i in 0..apps {
        let src = &sources[i % sources.len()];
        let link = night.join(format!(
            "n{i}-{}",
            src.file_name().unwrap().to_string_lossy()
        ));
        // Links, not copies: 10,000 copies would be gigabytes of the same bytes.
        if std::fs::hard_link(src, &link).is_err() {
            std::fs::copy(src, &link).unwrap();
        }
    }
    let out = dir.join(format!("out-night-{apps}"));
    let start = Instant::now();
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
        .args([
            "batch",
            night.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--date",
            "2026-11-29",
        ])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut peak_kb = 0;
    let status = loop {
        // VmHWM is the process's own peak so far; sampled until it exits, it misses at most the
        // last few milliseconds, when the tables' footers are written.
        if let Some(kb) = peak_rss_kb(child.id()) {
            peak_kb = peak_kb.max(kb);
        }
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(status.success());
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{apps} applications, --jobs {cores}: {secs:>6.2} s  {:>6.1} apps/s  peak RSS {:.0} MB",
        apps as f64 / secs,
        peak_kb as f64 / 1024.0
    );
    peak_kb
}

/// The peak resident memory of a running process, from Linux's `/proc`; `None` elsewhere.
fn peak_rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}
