//! Damaged, cut and unreadable input, made from a real Spark 4.3 log of this repository: what is
//! readable is read, and the report says exactly what was skipped or lost.

use std::io::Write;

use crate::util::{load, sparkdiag};

/// The application id of [`real_log`], which rolling layouts put in their file names.
const APP_ID: &str = "local-1796049337368";

use crate::util::{lines, real_plain_log as real_log, write};

/// The tasks of [`real_log`].
const TASKS: usize = 34;

fn task_count(log: &[u8]) -> usize {
    lines(log)
        .iter()
        .filter(|l| l.starts_with(br#"{"Event":"SparkListenerTaskEnd""#))
        .count()
}

#[test]
fn the_intact_log_is_complete() {
    let dir = tempfile::tempdir().unwrap();
    let (source, app) = load(&write(dir.path(), "app", &real_log()));
    assert!(source.complete(), "{:?}", source.warnings);
    assert!(source.warnings.is_empty());
    assert_eq!(source.events(), 182);
    assert_eq!(app.tasks.len(), task_count(&real_log()));
}

#[test]
fn a_cut_last_line_is_reported_and_everything_before_it_is_kept() {
    let log = real_log();
    let all = lines(&log);
    let last = all.last().unwrap();
    let cut_at = log.len() - last.len() / 2;
    let dir = tempfile::tempdir().unwrap();
    let (source, app) = load(&write(dir.path(), "app.inprogress", &log[..cut_at]));
    assert!(source.truncated && !source.complete());
    assert!(source.in_progress);
    let warning = source
        .warnings
        .iter()
        .find(|w| w.contains("cut short"))
        .expect("a warning about the cut line");
    assert!(
        warning.contains(&format!("line {}", all.len())),
        "{warning}"
    );
    assert_eq!(source.events(), 181);
    assert_eq!(app.status(), sparkdiag_model::AppStatus::Incomplete);
    assert_eq!(app.tasks.len(), TASKS);
}

#[test]
fn a_malformed_line_in_the_middle_is_located_counted_and_skipped() {
    let log = real_log();
    let mut all: Vec<Vec<u8>> = lines(&log).into_iter().map(<[u8]>::to_vec).collect();
    let victim = all
        .iter()
        .position(|l| l.starts_with(br#"{"Event":"SparkListenerTaskEnd""#))
        .unwrap();
    let offset: usize = all[..victim].iter().map(Vec::len).sum();
    // A line whose tail was overwritten, as a bad disk or a concurrent writer leaves it.
    let keep = all[victim].len() / 3;
    all[victim].truncate(keep);
    all[victim].push(b'\n');
    let dir = tempfile::tempdir().unwrap();
    let (source, app) = load(&write(dir.path(), "app", &all.concat()));
    assert_eq!(source.malformed_lines, 1);
    assert!(!source.complete());
    let warning = &source.warnings[0];
    assert!(
        warning.contains(&format!("line {} (byte {offset})", victim + 1)),
        "{warning}"
    );
    assert!(warning.contains("SparkListenerTaskEnd"), "{warning}");
    assert_eq!(
        app.tasks.len(),
        TASKS - 1,
        "the damaged task end is skipped, the rest are read"
    );
    assert!(source.saw_application_end);
}

#[test]
fn unknown_event_types_are_counted_and_named() {
    let log = real_log();
    let mut all: Vec<&[u8]> = lines(&log);
    let vendor: &[u8] = b"{\"Event\":\"com.example.ClusterHealthEvent\",\"ok\":true}\n";
    all.insert(5, vendor);
    all.insert(9, vendor);
    let dir = tempfile::tempdir().unwrap();
    let (source, _) = load(&write(dir.path(), "app", &all.concat()));
    assert_eq!(
        source.unknown_events.get("com.example.ClusterHealthEvent"),
        Some(&2)
    );
    assert!(
        source
            .warnings
            .iter()
            .any(|w| w.contains("2 event(s) of unknown type com.example.ClusterHealthEvent"))
    );
}

/// One zstd frame per `per_frame` lines, as Spark closes a frame at every flush.
fn zstd_frames(log: &[u8], per_frame: usize) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in lines(log).chunks(per_frame) {
        out.extend(zstd::encode_all(&chunk.concat()[..], 1).unwrap());
    }
    out
}

#[test]
fn multi_frame_zstd_reads_whole_and_a_cut_frame_keeps_the_frames_before_it() {
    let log = real_log();
    let framed = zstd_frames(&log, 10);
    let dir = tempfile::tempdir().unwrap();
    let (source, app) = load(&write(dir.path(), "app.zstd", &framed));
    assert!(source.complete(), "{:?}", source.warnings);
    assert_eq!(source.files[0].codec, Some(sparkdiag_eventlog::Codec::Zstd));
    assert_eq!(source.files[0].decoded_bytes as usize, log.len());
    assert_eq!(app.tasks.len(), TASKS);

    let (source, _) = load(&write(
        dir.path(),
        "cut.zstd.inprogress",
        &framed[..framed.len() - 40],
    ));
    assert!(source.truncated);
    assert!(
        source.events() >= 180 && source.events() < 182,
        "{}",
        source.events()
    );
    assert!(
        source
            .warnings
            .iter()
            .any(|w| w.contains("zstd stream is cut short")),
        "{:?}",
        source.warnings
    );
}

#[test]
fn gzip_with_several_members_reads_every_member() {
    let log = real_log();
    let half = log.len() / 2;
    let mut bytes = Vec::new();
    for part in [&log[..half], &log[half..]] {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(part).unwrap();
        bytes.extend(gz.finish().unwrap());
    }
    let dir = tempfile::tempdir().unwrap();
    let (source, app) = load(&write(dir.path(), "eventlog-2026-11-29--10-00.gz", &bytes));
    assert!(source.complete(), "{:?}", source.warnings);
    assert_eq!(app.tasks.len(), TASKS);
}

#[test]
fn a_missing_roll_file_is_a_gap_and_the_rest_is_read() {
    let log = real_log();
    let all = lines(&log);
    let third = all.len() / 3;
    let dir = tempfile::tempdir().unwrap();
    let roll = dir.path().join(format!("eventlog_v2_{APP_ID}"));
    std::fs::create_dir(&roll).unwrap();
    write(&roll, &format!("appstatus_{APP_ID}"), b"");
    write(
        &roll,
        &format!("events_1_{APP_ID}.zstd"),
        &zstd_frames(&all[..third].concat(), 10),
    );
    write(
        &roll,
        &format!("events_3_{APP_ID}.zstd"),
        &zstd_frames(&all[2 * third..].concat(), 10),
    );
    let (source, _) = load(&roll);
    assert!(source.gaps && !source.complete());
    assert!(
        source
            .warnings
            .iter()
            .any(|w| w.contains("events_2 missing")),
        "{:?}",
        source.warnings
    );
    assert_eq!(source.files.len(), 2);
    assert_eq!(source.events() as usize, all.len() - (2 * third - third));
}

#[test]
fn a_compacted_rolling_log_starts_at_its_compact_file() {
    let log = real_log();
    let all = lines(&log);
    let half = all.len() / 2;
    let dir = tempfile::tempdir().unwrap();
    let roll = dir.path().join(format!("eventlog_v2_{APP_ID}"));
    std::fs::create_dir(&roll).unwrap();
    write(&roll, &format!("appstatus_{APP_ID}.inprogress"), b"");
    // events_1 is what compaction replaced; reading it as well would count its events twice.
    write(&roll, &format!("events_1_{APP_ID}"), &all[..half].concat());
    write(
        &roll,
        &format!("events_2_{APP_ID}.compact"),
        &all[..half].concat(),
    );
    write(&roll, &format!("events_3_{APP_ID}"), &all[half..].concat());
    let (source, app) = load(&roll);
    assert_eq!(source.files.len(), 2, "{:?}", source.files);
    assert!(
        source.in_progress,
        "the appstatus marker says the writer had not finished"
    );
    assert_eq!(app.tasks.len(), TASKS);
    assert!(
        source.warnings.iter().all(|w| !w.contains("missing")),
        "{:?}",
        source.warnings
    );
}

#[test]
fn unreadable_input_exits_2_naming_the_file_and_offset() {
    let dir = tempfile::tempdir().unwrap();
    let png = write(dir.path(), "chart.png", b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR");
    let out = sparkdiag(&["analyze", png.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("chart.png") && err.contains("byte 0") && err.contains("PNG"),
        "{err}"
    );

    let bad_zstd = write(
        dir.path(),
        "app.zstd",
        b"\x28\xB5\x2F\xFD\xFF\xFF\xFF\xFF garbage garbage",
    );
    let out = sparkdiag(&["analyze", bad_zstd.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("app.zstd") && err.contains("cannot decode as zstd"),
        "{err}"
    );

    let out = sparkdiag(&["analyze", dir.path().join("nope").to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("nope: cannot open"));

    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let out = sparkdiag(&["analyze", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no Spark event log found"));
}

#[test]
fn standard_input_reads_like_a_file() {
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
        .args(["analyze", "-", "--format", "json"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let framed = zstd_frames(&real_log(), 25);
    child.stdin.take().unwrap().write_all(&framed).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["tasks"], TASKS);
    assert_eq!(report["source"]["files"][0]["codec"], "zstd");
    assert_eq!(report["source"]["complete"], true);
}
