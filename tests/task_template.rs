//! The template for Spark's own layout of task events (`parse_task_by_template`) against the
//! general reading (`parse_line_generally`: the field extractor, then serde_json), on every line
//! of every real log this project can see.

use std::io::Read;
use std::path::{Path, PathBuf};

use sparkdiag_eventlog::Codec;
use sparkdiag_eventlog::events::{parse_line, parse_line_generally, parse_task_by_template};

use crate::util::real_log_roots;

/// What the template made of one file's task ends.
#[derive(Debug, Default)]
struct Counts {
    task_ends: usize,
    task_ends_by_template: usize,
    task_starts: usize,
    task_starts_by_template: usize,
}

fn files_under(dir: &Path, files: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, files);
        } else {
            files.push(path);
        }
    }
}

/// A file's decoded text, if it is a log in a codec Spark writes (archives and other files are
/// not: their logs are also found unpacked, or are not logs).
fn decoded(path: &Path) -> Option<Vec<u8>> {
    let raw = std::fs::read(path).ok()?;
    let name = path.file_name()?.to_string_lossy();
    let codec = Codec::detect(&raw, &name)?;
    let mut text = Vec::new();
    // A cut stream (the damage fixtures) still yields the lines before the cut.
    let _ = codec.decoder(&raw[..]).read_to_end(&mut text);
    Some(text)
}

/// The Spark version the log's `SparkListenerLogStart` names, if it has one.
fn spark_version(text: &[u8]) -> Option<String> {
    let line = text
        .split(|&b| b == b'\n')
        .find(|l| l.starts_with(br#"{"Event":"SparkListenerLogStart""#))?;
    let start: serde_json::Value = serde_json::from_slice(line).ok()?;
    Some(start["Spark Version"].as_str()?.to_string())
}

/// Compares the template with the general reading on every line of `text`, and `parse_line`
/// (what the reader runs) with both.
fn compare_lines(path: &Path, text: &[u8]) -> Counts {
    let mut counts = Counts::default();
    for (number, line) in text.split(|&b| b == b'\n').enumerate() {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        let generally = format!("{:?}", parse_line_generally(line));
        let by_template = parse_task_by_template(line).map(|event| format!("Ok({event:?})"));
        if let Some(by_template) = &by_template {
            assert_eq!(
                by_template,
                &generally,
                "{} line {}: the template read the line otherwise",
                path.display(),
                number + 1
            );
        }
        assert_eq!(
            format!("{:?}", parse_line(line)),
            generally,
            "{} line {}",
            path.display(),
            number + 1
        );
        let read = usize::from(by_template.is_some());
        if line.starts_with(br#"{"Event":"SparkListenerTaskEnd""#) {
            counts.task_ends += 1;
            counts.task_ends_by_template += read;
        } else if line.starts_with(br#"{"Event":"SparkListenerTaskStart""#) {
            counts.task_starts += 1;
            counts.task_starts_by_template += read;
        } else {
            assert_eq!(read, 0, "{} line {}", path.display(), number + 1);
        }
    }
    counts
}

/// Every line of every real log reads the same by the template as by the general reading, and the
/// template does read most task events of Spark 3.x and 4.x logs, so that it cannot silently stop
/// matching (it would then cost a failed attempt on every line and gain nothing).
#[test]
fn template_reads_every_real_task_line_as_the_general_reading_does() {
    let mut files = Vec::new();
    for root in real_log_roots() {
        files_under(&root, &mut files);
    }
    let (mut recent, mut older) = (Counts::default(), Counts::default());
    let mut recent_files = 0;
    for path in &files {
        let Some(text) = decoded(path) else {
            continue;
        };
        let counts = compare_lines(path, &text);
        let version = spark_version(&text).unwrap_or_default();
        // Roll files after the first have no `SparkListenerLogStart`: counted with the others.
        let total = if version.starts_with("3.") || version.starts_with("4.") {
            recent_files += usize::from(counts.task_ends > 0);
            &mut recent
        } else {
            &mut older
        };
        total.task_ends += counts.task_ends;
        total.task_ends_by_template += counts.task_ends_by_template;
        total.task_starts += counts.task_starts;
        total.task_starts_by_template += counts.task_starts_by_template;
    }
    println!("Spark 3.x and 4.x, {recent_files} files: {recent:?}; others: {older:?}");
    assert!(
        recent_files >= 20,
        "{recent_files} files of Spark 3.x and 4.x"
    );
    assert!(recent.task_ends >= 5_000, "{recent:?}");
    // Only failed tasks (stack traces, with escapes) and unusual reasons are left.
    assert!(
        recent.task_ends_by_template * 100 >= recent.task_ends * 97,
        "{recent:?}"
    );
    assert!(
        recent.task_starts_by_template * 100 >= recent.task_starts * 99,
        "{recent:?}"
    );
}
