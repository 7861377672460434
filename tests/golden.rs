//! Golden files: the Markdown and the plain text view of three real logs, byte for byte, under
//! `tests/golden/` (`NAME.md`, `NAME.txt`).
//!
//! After a deliberate change to either view, rewrite them and read the diff before committing:
//!
//! ```sh
//! SPARKDIAG_UPDATE_GOLDEN=1 cargo test --test integration golden
//! git diff tests/golden/
//! ```
//!
//! The binary runs from the repository root with relative paths, so no path of the machine
//! running the tests gets into the output (the absolute paths in some stage names are the
//! logs' own: PySpark names stages after the script that ran them). Its standard output is a
//! pipe, so the text view is the plain one: no colour, tables as wide as their content.

use std::path::PathBuf;
use std::process::Command;

use crate::util::{repo, testdata};

const UPDATE: &str = "SPARKDIAG_UPDATE_GOLDEN";

/// A planted pattern's log, relative to the repository root, by its name in PATTERNS.tsv.
fn pattern(name: &str) -> String {
    let table = std::fs::read_to_string(testdata("logs/patterns/PATTERNS.tsv")).unwrap();
    let path = table
        .lines()
        .skip(1)
        .map(|line| line.split('\t').collect::<Vec<_>>())
        .find(|cols| cols[0] == name)
        .unwrap_or_else(|| panic!("no pattern {name} in PATTERNS.tsv"))[1];
    format!("testdata/logs/{path}")
}

fn golden(name: &str, ext: &str) -> PathBuf {
    repo().join("tests/golden").join(format!("{name}.{ext}"))
}

/// `sparkdiag analyze LOG --format FORMAT`, run from the repository root.
fn render(log: &str, format: &str) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
        .current_dir(repo())
        .args(["analyze", log, "--format", format])
        .env_remove("NO_COLOR")
        .output()
        .expect("run sparkdiag");
    assert!(
        out.status.success(),
        "sparkdiag analyze {log} --format {format}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Compares both views of `log` with their golden files, or rewrites them under
/// `SPARKDIAG_UPDATE_GOLDEN=1`.
fn check(name: &str, log: &str) {
    let update = std::env::var_os(UPDATE).is_some_and(|v| v == "1");
    for (ext, format) in [("md", "markdown"), ("txt", "text")] {
        let actual = render(log, format);
        assert!(
            !actual.contains("\u{1b}["),
            "{name}.{ext}: colour codes in piped output"
        );
        let file = golden(name, ext);
        if update {
            std::fs::write(&file, &actual)
                .unwrap_or_else(|e| panic!("cannot write {}: {e}", file.display()));
            continue;
        }
        let expected = std::fs::read_to_string(&file).unwrap_or_else(|e| {
            panic!(
                "{}: {e}; create it with {UPDATE}=1 cargo test --test integration golden",
                file.display()
            )
        });
        if actual != expected {
            let line = actual
                .lines()
                .zip(expected.lines())
                .position(|(a, e)| a != e)
                .unwrap_or_else(|| actual.lines().count().min(expected.lines().count()));
            panic!(
                "{} differs from `sparkdiag analyze {log} --format {format}`, first at line {}:\n\
                 expected: {:?}\n  actual: {:?}\n\
                 If the change is intended: {UPDATE}=1 cargo test --test integration golden, \
                 then read git diff tests/golden/",
                file.display(),
                line + 1,
                expected.lines().nth(line).unwrap_or("<end of file>"),
                actual.lines().nth(line).unwrap_or("<end of file>"),
            );
        }
    }
}

#[test]
fn failed_application() {
    check("failed", "testdata/logs/failed");
}

#[test]
fn skew_join() {
    check("skew-join", &pattern("skew-join"));
}

#[test]
fn driver_loop_serial() {
    check("driver-loop-serial", &pattern("driver-loop-serial"));
}
