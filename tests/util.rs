use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sparkdiag_eventlog::SourceReport;
use sparkdiag_model::Application;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared/<rel>`, the fixtures that sit beside the repository for developers and in CI
/// (Spark's History Server suite, real plans, other tools' real logs). A fresh clone does not
/// have them: then the calling test prints one line saying what it needs and is skipped (the
/// caller returns on `None`), except under CI (`CI` set), where their absence is a failure.
pub fn shared_opt(rel: &str) -> Option<PathBuf> {
    shared_or_skip(rel, "")
}

/// [`shared_opt`] for one check of a test whose other checks still run: the skip line names
/// `what` (e.g. "PL004's check") rather than the whole test.
pub fn shared_opt_for(rel: &str, what: &str) -> Option<PathBuf> {
    shared_or_skip(rel, &format!("{what} in "))
}

fn shared_or_skip(rel: &str, what: &str) -> Option<PathBuf> {
    let path = repo().join("../shared").join(rel);
    if path.exists() {
        return Some(path);
    }
    if std::env::var_os("CI").is_some() {
        panic!(
            "CI is set but the shared fixtures are missing: {}",
            path.display()
        );
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    // Straight to standard error: the test harness captures eprintln! of passing tests, and
    // this line must be seen.
    let _ = writeln!(
        std::io::stderr(),
        "skipped: {what}{test} needs ../shared/{rel} beside the repository (present for developers and in CI)"
    );
    None
}

/// Every folder of real logs this project can see: ours, and when present other projects'
/// (`real-world/`, one folder down per project) and Spark's History Server suite.
pub fn real_log_roots() -> Vec<PathBuf> {
    let mut roots = vec![testdata("logs")];
    for rel in [
        "real-world",
        "spark-conformance/spark-events",
        "spark-conformance/sql-spark-events",
    ] {
        roots.extend(shared_opt(rel));
    }
    roots
}

pub fn testdata(rel: &str) -> PathBuf {
    repo().join("testdata").join(rel)
}

/// A real, uncompressed Spark 4.3 log (`testdata/logs/MANIFEST.tsv`): 182 events, 34 tasks, ends
/// with `SparkListenerApplicationEnd`. The damage and hostile-input tests cut and corrupt it.
pub fn real_plain_log() -> Vec<u8> {
    std::fs::read(testdata("logs/single/plain/local-1796049337368")).unwrap()
}

/// A tar holding the real plain log as `logs/app-1`, then `extra` members.
pub fn tar_with(extra: impl FnOnce(&mut tar::Builder<Vec<u8>>)) -> Vec<u8> {
    let log = real_plain_log();
    let mut builder = tar::Builder::new(Vec::new());
    let mut header = tar::Header::new_ustar();
    header.set_size(log.len() as u64);
    header.set_mode(0o644);
    header.set_cksum();
    builder
        .append_data(&mut header, "logs/app-1", log.as_slice())
        .unwrap();
    extra(&mut builder);
    builder.into_inner().unwrap()
}

/// The lines of a log, each with its newline.
pub fn lines(log: &[u8]) -> Vec<&[u8]> {
    log.split_inclusive(|&b| b == b'\n').collect()
}

/// Writes `bytes` to `dir/name`.
pub fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Reads every application under `path` into the model.
pub fn load_all(path: &Path) -> Vec<(SourceReport, Application)> {
    let inputs =
        sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
    inputs
        .iter()
        .map(|input| sparkdiag_analysis::model(input).unwrap_or_else(|e| panic!("{e}")))
        .collect()
}

pub fn load(path: &Path) -> (SourceReport, Application) {
    let mut all = load_all(path);
    assert_eq!(
        all.len(),
        1,
        "expected one application in {}",
        path.display()
    );
    all.pop().unwrap()
}

pub fn sparkdiag(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
        .args(args)
        .output()
        .expect("run sparkdiag")
}

/// Runs sparkdiag and checks that it exited 0, showing its arguments and standard error if not.
pub fn sparkdiag_ok(args: &[&str]) -> Output {
    let out = sparkdiag(args);
    assert_eq!(
        out.status.code(),
        Some(0),
        "sparkdiag {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

pub fn json_of(args: &[&str]) -> serde_json::Value {
    let out = sparkdiag(args);
    assert!(
        out.status.success(),
        "sparkdiag {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("valid JSON")
}

/// The log of a pattern fixture, by its name in `testdata/logs/patterns/PATTERNS.tsv`.
pub fn pattern_log(name: &str) -> PathBuf {
    let tsv = std::fs::read_to_string(testdata("logs/patterns/PATTERNS.tsv")).unwrap();
    let row = tsv
        .lines()
        .find(|l| l.starts_with(&format!("{name}\t")))
        .unwrap_or_else(|| panic!("no pattern {name}"));
    testdata(&format!("logs/{}", row.split('\t').nth(1).unwrap()))
}
