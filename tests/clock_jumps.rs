//! Logs whose clock jumps by days or years (issue 53): the real sparkscope logs that splice two
//! runs years apart, and rewrites of one whose driver started on another day or whose executors
//! registered on another day. The warning names the jump; no duration, replay or finding
//! counts it, in the JSON, the terminal, Markdown or HTML (its charts included).

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::util::{shared_opt, sparkdiag};

const DAY_MS: i64 = 86_400_000;

/// Every duration of a day or more in `text`, as `units::duration` writes it (`NNNh MMm`): a
/// number of 24 or more followed by `h` and no more letters.
fn day_long_durations(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut found = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let start = i;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            i += 1;
        }
        let hours_end = i;
        let after_letter = start > 0 && bytes[start - 1].is_ascii_alphanumeric();
        if hours_end > start
            && !after_letter
            && bytes.get(hours_end) == Some(&b'h')
            && !bytes
                .get(hours_end + 1)
                .is_some_and(u8::is_ascii_alphanumeric)
            && text[start..hours_end]
                .parse::<u64>()
                .map_or(true, |h| h >= 24)
        {
            found.push(text[start..(hours_end + 5).min(text.len())].to_string());
        }
        i = i.max(start + 1);
    }
    found
}

/// What `analyze` says of `log` in each format, checked: a warning of a clock jump of
/// at least `jump_days`, and no duration, replay or finding that holds it. Returns the JSON.
fn check_log(log: &Path, jump_days: f64) -> Value {
    let path = log.to_str().unwrap();
    let out = sparkdiag(&["analyze", "--format", "json", path]);
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{path}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let warnings = report["source"]["warnings"].to_string();
    let said = warnings
        .split("no event for ")
        .skip(1)
        .filter_map(|w| w.split(' ').next()?.parse::<f64>().ok())
        .fold(0.0, f64::max);
    assert!(
        said >= jump_days,
        "{path}: the warnings name no jump of {jump_days} days: {warnings}"
    );
    let app = &report["application"];
    let duration = app["duration_ms"].as_i64().unwrap_or(0);
    assert!(
        duration < DAY_MS,
        "{path}: a duration of {duration} ms holds the jump"
    );
    if let (Some(start), Some(end)) = (app["start_ms"].as_i64(), app["end_ms"].as_i64())
        && end >= start
    {
        assert!(duration <= end - start, "{path}: {duration} ms");
    }
    assert!(report["what_if"].is_null(), "{path}: {}", report["what_if"]);
    for finding in report["findings"].as_array().unwrap() {
        let impact = finding["impact_ms"].as_i64().unwrap_or(0);
        assert!(
            impact <= duration,
            "{path}: {} saves {impact} ms of a {duration} ms run",
            finding["rule"]
        );
        for (key, value) in finding["evidence"].as_object().unwrap() {
            if key.ends_with("wait_ms") || key.ends_with("duration_ms") {
                assert!(
                    value.as_i64().unwrap_or(0) < DAY_MS,
                    "{path}: {} {key} = {value}",
                    finding["rule"]
                );
            }
        }
    }
    for format in ["text", "markdown", "html"] {
        let out = sparkdiag(&["analyze", "--format", format, path]);
        let text = String::from_utf8_lossy(&out.stdout);
        let long = day_long_durations(&text);
        assert!(long.is_empty(), "{path} as {format}: {long:?}");
    }
    report
}

/// The real logs whose clock jumps: sparkscope's test logs splice events of a run in 2018 (or
/// of another day) into runs of 2023.
fn sparkscope_logs() -> Option<Vec<PathBuf>> {
    let dir = shared_opt("real-world/sparkscope/eventlog")?;
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    logs.sort();
    Some(logs)
}

#[test]
fn no_duration_or_finding_of_a_real_log_holds_its_clock_jump() {
    let Some(logs) = sparkscope_logs() else {
        return;
    };
    let mut jumped = 0;
    for log in &logs {
        let out = sparkdiag(&["analyze", "--format", "json", log.to_str().unwrap()]);
        let Ok(report) = serde_json::from_slice::<Value>(&out.stdout) else {
            continue;
        };
        if report["source"]["warnings"]
            .to_string()
            .contains("the clock jumped")
        {
            jumped += 1;
            check_log(log, 20.0);
        }
    }
    // Nine logs of app-20231025121456-0004 jump 1,918 days, and the corrupted one 28 days.
    assert!(jumped >= 10, "{jumped} of {} logs jump", logs.len());
}

/// The finished sparkscope log rewritten as two clocks would write it: each event named shifted
/// by `days`.
fn shifted(events: &[&str], days: i64, from: &str, into: &Path) -> PathBuf {
    let text = std::fs::read_to_string(from).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut event: serde_json::Map<String, Value> = serde_json::from_str(line).unwrap();
            let name = event["Event"].as_str().unwrap().to_string();
            if events.contains(&name.as_str())
                && let Some(Value::Number(time)) = event.get("Timestamp")
            {
                let time = time.as_i64().unwrap() + days * DAY_MS;
                event.insert("Timestamp".into(), time.into());
            }
            serde_json::to_string(&event).unwrap()
        })
        .collect();
    let name = format!(
        "{}-{}-{days}d",
        Path::new(from).file_name().unwrap().to_string_lossy(),
        events[0].trim_start_matches("SparkListener")
    );
    let path = into.join(name);
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn a_driver_or_executors_on_another_day_add_no_time_to_the_run() {
    let Some(logs) = sparkscope_logs() else {
        return;
    };
    let find = |suffix: &str| {
        logs.iter()
            .find(|l| l.to_string_lossy().ends_with(suffix))
            .unwrap()
            .to_str()
            .unwrap()
            .to_string()
    };
    let (finished, running) = (
        find("0004-eventLog-finished"),
        find("0004-eventLog-running"),
    );
    let dir = tempfile::tempdir().unwrap();
    // The driver's clock 930 days behind when the application started (1,339,571 minutes of
    // start to end, as the header said before).
    let started_early = shifted(
        &["SparkListenerApplicationStart"],
        -930,
        &finished,
        dir.path(),
    );
    let report = check_log(&started_early, 900.0);
    assert!(report["application"]["duration_ms"].as_i64().unwrap() > 0);
    // The executors registered with a clock 593 days ahead: the first job "waited 14232h 00m for
    // its first executor" before; the wait without the jump is seconds, too short to report.
    let executors_late = shifted(
        &[
            "SparkListenerExecutorAdded",
            "SparkListenerBlockManagerAdded",
        ],
        593,
        &finished,
        dir.path(),
    );
    let report = check_log(&executors_late, 590.0);
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["rule"] != "UT003"),
        "{}",
        report["findings"]
    );
    // The same in a log without its end: its last event is the late one.
    let unfinished = shifted(
        &[
            "SparkListenerExecutorAdded",
            "SparkListenerBlockManagerAdded",
        ],
        593,
        &running,
        dir.path(),
    );
    let report = check_log(&unfinished, 590.0);
    assert_eq!(report["application"]["status"], "incomplete");
}
