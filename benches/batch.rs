//! `sparkdiag batch` over many real logs with 1 worker and with every core: it should scale with
//! cores. The logs are copies of the committed pattern fixtures and the rolling fixture
//! (`SPARKDIAG_BATCH_COPIES` copies of each, default 8). Run with `cargo bench --bench batch`.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

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
}
