//! The logs people actually have: a log reformatted by a JSON pretty-printer, logs compressed
//! by hand with bzip2, xz or zstd, and folders that hold files which are not logs. Each is
//! made here from a committed real Spark 4.3 log, with the system's own tools.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::util::{sparkdiag, testdata};

/// The real plain log (`testdata/logs/MANIFEST.tsv`: 182 events, 34 tasks, complete).
fn plain_log() -> PathBuf {
    testdata("logs/single/plain/local-1796049337368")
}

/// The failed application's real log: its job 2 fails, so it has findings at every level.
fn failed_log() -> PathBuf {
    testdata("logs/failed/local-1796049483373")
}

fn report_of(path: &Path) -> Value {
    let out = sparkdiag(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    assert!(
        out.status.success(),
        "analyze {}: {}",
        path.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON report")
}

/// What must not change with the way a log was stored: the application, its work, findings.
fn essentials(report: &Value) -> Value {
    let codes: Vec<&Value> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| &f["rule"])
        .collect();
    serde_json::json!({
        "app": report["application"]["id"],
        "summary": report["summary"],
        "stages": report["stages"].as_array().unwrap().len(),
        "findings": codes,
        "complete": report["source"]["complete"],
    })
}

/// Runs a compressor (`bzip2 -c`, ...) from the system on `input`, into `output`. `None` when
/// the tool is missing outside CI (one line says so); under CI a missing tool fails the test.
fn compress(tool: &str, args: &[&str], input: &Path, output: &Path) -> Option<()> {
    let file = std::fs::File::create(output).unwrap();
    match Command::new(tool)
        .args(args)
        .arg(input)
        .stdout(file)
        .status()
    {
        Ok(status) => {
            assert!(status.success(), "{tool} failed");
            Some(())
        }
        Err(e) if std::env::var_os("CI").is_none() => {
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "skipped: this check needs `{tool}` on the machine ({e})"
            );
            None
        }
        Err(e) => panic!("CI is set but `{tool}` cannot run: {e}"),
    }
}

/// Every line of a real log re-printed by a JSON pretty-printer (two-space indent, as `jq .`
/// and Python's `json.dumps(indent=2)` write), keys in their order.
fn pretty_printed(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap();
    let mut out = String::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let event: Value = serde_json::from_str(line).unwrap();
        out.push_str(&serde_json::to_string_pretty(&event).unwrap());
        out.push('\n');
    }
    out
}

#[test]
fn a_pretty_printed_log_is_read_event_by_event_with_the_same_report() {
    let tmp = tempfile::tempdir().unwrap();
    for log in [plain_log(), failed_log()] {
        let pretty = tmp.path().join(format!(
            "{}.json",
            log.file_name().unwrap().to_string_lossy()
        ));
        std::fs::write(&pretty, pretty_printed(&log)).unwrap();
        let original = report_of(&log);
        let reformatted = report_of(&pretty);
        assert_eq!(
            essentials(&reformatted),
            essentials(&original),
            "{}",
            pretty.display()
        );
        assert!(
            !original["stages"].as_array().unwrap().is_empty(),
            "a log with work in it"
        );
        let warnings = reformatted["source"]["warnings"].to_string();
        assert!(warnings.contains("pretty-printed JSON"), "{warnings}");
        // --fail-on behaves as on the original: the failed job's findings trip it.
        let out = sparkdiag(&["analyze", pretty.to_str().unwrap(), "--fail-on", "info"]);
        let expected = if original["findings"].as_array().unwrap().is_empty() {
            0
        } else {
            1
        };
        assert_eq!(out.status.code(), Some(expected), "{}", pretty.display());
    }
    // Zstd-compressed after the reformatting too: the reading is the decoded stream's.
    let pretty = tmp.path().join("local-1796049483373.json");
    let zst = tmp.path().join("pretty.json.zst");
    if compress("zstd", &["-q", "-c"], &pretty, &zst).is_some() {
        assert_eq!(
            essentials(&report_of(&zst)),
            essentials(&report_of(&failed_log()))
        );
    }
}

#[test]
fn a_folder_with_a_pretty_printed_log_holds_one_application_not_a_phantom() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("app-1.json"), pretty_printed(&failed_log())).unwrap();
    let report = report_of(tmp.path());
    // One application (an object, not an array of several), the real one.
    assert!(report.is_object(), "{}", report.to_string().len());
    assert_eq!(report["application"]["id"], "local-1796049483373");
}

#[test]
fn logs_compressed_by_hand_with_bzip2_xz_or_zstd_are_read() {
    let tmp = tempfile::tempdir().unwrap();
    let original = essentials(&report_of(&failed_log()));
    let cases = [
        ("bzip2", vec!["-c"], "app.bz2", "bzip2"),
        ("xz", vec!["-c"], "app.xz", "xz"),
        ("zstd", vec!["-q", "-c"], "app.zst", "zstd"),
        // Renamed, or compressed twice over: the first bytes decide, not the name.
        ("bzip2", vec!["-c"], "app-renamed.log", "bzip2"),
    ];
    for (tool, args, name, codec) in cases {
        let out = tmp.path().join(name);
        if compress(tool, &args, &failed_log(), &out).is_none() {
            continue;
        }
        let report = report_of(&out);
        assert_eq!(essentials(&report), original, "{name}");
        assert_eq!(report["source"]["files"][0]["codec"], codec, "{name}");
    }
    // Two bzip2 streams one after the other (`cat a.bz2 b.bz2`, as pbzip2 writes) are one log.
    let whole = std::fs::read(failed_log()).unwrap();
    let cut = whole.len() / 2;
    let cut = cut + whole[cut..].iter().position(|&b| b == b'\n').unwrap() + 1;
    let (first, second) = (tmp.path().join("first"), tmp.path().join("second"));
    std::fs::write(&first, &whole[..cut]).unwrap();
    std::fs::write(&second, &whole[cut..]).unwrap();
    let (a, b) = (tmp.path().join("a.bz2"), tmp.path().join("b.bz2"));
    if compress("bzip2", &["-c"], &first, &a).is_some() {
        compress("bzip2", &["-c"], &second, &b).unwrap();
        let mut joined = std::fs::read(&a).unwrap();
        joined.extend(std::fs::read(&b).unwrap());
        let multi = tmp.path().join("multi.bz2");
        std::fs::write(&multi, joined).unwrap();
        assert_eq!(essentials(&report_of(&multi)), original);
    }
}

#[test]
fn a_folder_names_every_file_it_could_not_read_and_why() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::copy(plain_log(), dir.join("app-good")).unwrap();
    // A real bzip2 log beside it: read, not dropped.
    if compress("bzip2", &["-c"], &failed_log(), &dir.join("app-failed.bz2")).is_none() {
        return;
    }
    // A driver's own log4j output, which people copy next to the event logs.
    std::fs::write(
        dir.join("driver.log"),
        "26/11/29 10:00:01 INFO SparkContext: Running Spark version 4.3.0\n26/11/29 10:00:02 INFO ResourceUtils: ==============\n",
    )
    .unwrap();
    std::fs::write(dir.join("notes.pdf"), b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n").unwrap();

    let out = sparkdiag(&["analyze", dir.to_str().unwrap(), "--format", "json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let reports: Value = serde_json::from_slice(&out.stdout).unwrap();
    let ids: Vec<&str> = reports
        .as_array()
        .expect("two applications")
        .iter()
        .map(|r| r["application"]["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids.len(), 2, "{ids:?}");
    assert!(
        ids.contains(&"local-1796049483373"),
        "the bzip2 log is read: {ids:?}"
    );
    // Each file passed over is named, with why, on stderr and in the report's warnings.
    let warnings = reports.to_string();
    for (file, why) in [
        ("driver.log", "a driver or executor log?"),
        ("notes.pdf", "a PDF document"),
    ] {
        assert!(
            stderr.lines().any(|l| l.contains(file) && l.contains(why)),
            "{file} on stderr: {stderr}"
        );
        assert!(
            warnings.contains(file) && warnings.contains(why),
            "{file} in the report"
        );
    }
    assert!(
        !stderr.contains("app-good") && !stderr.contains("app-failed"),
        "{stderr}"
    );
}
