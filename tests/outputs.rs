//! What a report says about itself and how a pipeline uses it (issue 49), on real logs: the
//! evidence ledger, the settings used, the CI gates and their exit codes, unusable input,
//! narrowing the findings shown, and SARIF.

use std::process::Command;

use serde_json::Value;

use crate::util::{pattern_log, repo, sparkdiag, testdata};

fn failed_log() -> String {
    testdata("logs/failed/local-1796049483373")
        .display()
        .to_string()
}

fn stdout(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Every report of every committed log, as one `analyze --format json` writes them.
fn every_committed_report() -> Vec<Value> {
    let out = sparkdiag(&[
        "analyze",
        testdata("logs").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    match serde_json::from_slice(&out.stdout).unwrap() {
        Value::Array(reports) => reports,
        one => vec![one],
    }
}

#[test]
fn the_ledger_never_says_a_rule_could_not_run_that_found_something() {
    let reports = every_committed_report();
    assert!(reports.len() > 60);
    let catalogue: Value =
        serde_json::from_slice(&sparkdiag(&["rules", "--format", "json"]).stdout).unwrap();
    let rule_count = catalogue["rules"].as_array().unwrap().len();
    assert!(rule_count >= 40);
    let mut missing_evidence = 0;
    for r in &reports {
        let fired: Vec<&str> = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap())
            .collect();
        let ledger = &r["ledger"];
        for not_run in ledger["not_run"].as_array().unwrap() {
            let rule = not_run["rule"].as_str().unwrap();
            assert!(
                !fired.contains(&rule),
                "{}: {rule} found something, yet the ledger says it could not run ({})",
                r["source"]["inputs"],
                not_run["detail"]
            );
            missing_evidence += usize::from(not_run["reason"] == "missing-evidence");
        }
        // Every rule is in one place: fired, could not run, or found nothing.
        let quiet = ledger["found_nothing"].as_array().unwrap().len();
        let not_run = ledger["not_run"].as_array().unwrap().len();
        let mut distinct = fired.clone();
        distinct.sort_unstable();
        distinct.dedup();
        assert_eq!(
            distinct.len() + quiet + not_run,
            rule_count,
            "{}",
            r["source"]["inputs"]
        );
        for e in ledger["evidence"].as_array().unwrap() {
            assert_eq!(e["present"], e["count"].as_u64().unwrap() > 0);
        }
    }
    assert!(
        missing_evidence > 0,
        "some committed log lacks some evidence"
    );
}

#[test]
fn a_log_without_executor_metrics_says_which_rules_could_not_run_in_every_format() {
    let log = failed_log();
    let json: Value =
        serde_json::from_slice(&sparkdiag(&["analyze", &log, "--format", "json"]).stdout).unwrap();
    let metrics = json["ledger"]["evidence"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "executor-metrics")
        .unwrap();
    assert_eq!(
        metrics["present"], false,
        "the failed fixture has no executor metrics"
    );
    let gc002 = json["ledger"]["not_run"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["rule"] == "GC002")
        .expect("GC002 could not run");
    assert_eq!(gc002["reason"], "missing-evidence");
    assert_eq!(gc002["missing"][0], "executor-metrics");
    let sk001 = json["ledger"]["found_nothing"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["rule"] == "SK001")
        .expect("SK001 ran and found nothing");
    assert!(
        sk001["thresholds"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["key"] == "ratio" && t["value"] == 5.0)
    );
    for format in ["text", "markdown", "html"] {
        let view = stdout(&sparkdiag(&["analyze", &log, "--format", format]));
        assert!(
            view.contains("What this report could check")
                && view.contains("no executor memory metrics"),
            "{format} has no ledger"
        );
        assert!(
            view.contains("GC002") && view.contains("SK001 (ratio 5"),
            "{format}"
        );
    }
    // A log with executor metrics runs GC002.
    let memory = testdata("logs/memory/overprovisioned");
    let json: Value = serde_json::from_slice(
        &sparkdiag(&["analyze", memory.to_str().unwrap(), "--format", "json"]).stdout,
    )
    .unwrap();
    assert!(
        !json["ledger"]["not_run"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["rule"] == "GC002"),
        "GC002 runs where executor metrics are"
    );
}

#[test]
fn a_config_file_is_named_with_every_threshold_it_changed_and_no_config_ignores_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(
        tmp.path().join("sparkdiag.toml"),
        "disable = [\"CF003\"]\n[rules.SK001]\nratio = 100\n",
    )
    .unwrap();
    let log = pattern_log("skew-join");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
            .current_dir(tmp.path())
            .env("XDG_CONFIG_HOME", tmp.path().join("none"))
            .arg("analyze")
            .arg(&log)
            .args(args)
            .output()
            .unwrap()
    };
    let json: Value = serde_json::from_slice(&run(&["--format", "json"]).stdout).unwrap();
    let config = &json["source"]["config"];
    assert!(
        config["files"][0]
            .as_str()
            .unwrap()
            .ends_with("sparkdiag.toml"),
        "{config}"
    );
    assert_eq!(config["thresholds"][0]["rule"], "SK001");
    assert_eq!(config["thresholds"][0]["value"], 100.0);
    assert_eq!(config["thresholds"][0]["default"], 5.0);
    assert!(
        config["thresholds"][0]["from"]
            .as_str()
            .unwrap()
            .ends_with("sparkdiag.toml")
    );
    assert_eq!(config["disabled"][0]["rule"], "CF003");
    let rules = |r: &Value| -> Vec<String> {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    assert!(
        !rules(&json).contains(&"SK001".to_string()),
        "ratio 100 hides the skew"
    );
    let text = stdout(&run(&[]));
    let header = text
        .lines()
        .find(|l| l.starts_with("config: "))
        .expect("a config line");
    assert!(
        header.contains("sparkdiag.toml") && header.contains("SK001.ratio = 100 (default 5)"),
        "{header}"
    );
    // --no-config: the file is not read, and the report says so.
    let json: Value =
        serde_json::from_slice(&run(&["--no-config", "--format", "json"]).stdout).unwrap();
    assert_eq!(
        json["source"]["config"]["files"].as_array().unwrap().len(),
        0
    );
    assert_eq!(json["source"]["config"]["ignored_config_files"], true);
    assert!(
        rules(&json).contains(&"SK001".to_string()),
        "the default ratio finds the skew"
    );
}

#[test]
fn each_gate_prints_one_line_and_the_exit_code_says_passed_failed_or_inconclusive() {
    let log = failed_log();
    // Passed: exit 0, each gate one line in the text view.
    let out = sparkdiag(&[
        "analyze",
        &log,
        "--max-runtime",
        "1h",
        "--max-spill",
        "10GiB",
        "--max-skew",
        "50",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    for gate in [
        "max-runtime: 9.3 s, limit 1h 00m: passed",
        "max-spill: 0 B, limit 10.0 GiB: passed",
        "max-skew:",
    ] {
        assert!(text.contains(gate), "{gate} in {text}");
    }
    // Failed: two failed tasks against a budget of one; the JSON says so, the gate is on stderr.
    let out = sparkdiag(&[
        "analyze",
        &log,
        "--max-failed-tasks",
        "1",
        "--format",
        "json",
    ]);
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(json["gates"]["exit_code"], 1);
    assert_eq!(json["gates"]["checks"][0]["measured"], 2.0);
    assert!(
        stderr(&out).contains("gate max-failed-tasks: 2 failed task(s), limit 1: FAILED"),
        "{}",
        stderr(&out)
    );
    // Inconclusive: a killed log has no application end; a runtime within the budget so far
    // cannot be judged, one past it has failed.
    let killed = std::fs::read_dir(testdata("logs/killed/single"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let killed = killed.to_str().unwrap();
    let out = sparkdiag(&["analyze", killed, "--max-runtime", "10h"]);
    assert_eq!(out.status.code(), Some(3), "{}", stdout(&out));
    assert!(stdout(&out).contains("inconclusive, the log has no application end"));
    assert_eq!(
        sparkdiag(&["analyze", killed, "--max-runtime", "1s"])
            .status
            .code(),
        Some(1)
    );
    // Money needs a price.
    let out = sparkdiag(&["analyze", &log, "--max-cost", "1"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--max-cost needs a price"));
    let out = sparkdiag(&[
        "analyze",
        &log,
        "--max-cost",
        "1",
        "--price-per-core-hour",
        "1000",
    ]);
    assert_eq!(
        out.status.code(),
        Some(1),
        "9.3 s on 2 cores at 1000 an hour is over 5"
    );
    assert!(stdout(&out).contains("max-cost: 5.1"), "{}", stdout(&out));
    assert!(
        stdout(&out).contains("limit 1.00: FAILED"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn diff_fails_on_a_new_finding_and_says_so() {
    let before = testdata("logs/diff/loop-threadpool/local-1796117371922.zstd");
    let after = testdata("logs/diff/loop-serial/local-1796117427923.zstd");
    let out = sparkdiag(&[
        "diff",
        before.to_str().unwrap(),
        after.to_str().unwrap(),
        "--format",
        "json",
        "--fail-on-new",
        "info",
        "--fail-on-regression",
        "1000",
    ]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let new = json["findings"]["new"].as_array().unwrap().len();
    let gate = json["gates"]["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["gate"] == "fail-on-new info")
        .unwrap();
    assert_eq!(gate["measured"], new as f64);
    assert_eq!(
        out.status.code(),
        Some(if new > 0 { 1 } else { 0 }),
        "{}",
        stderr(&out)
    );
    assert!(
        stderr(&out).contains("gate fail-on-regression:"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn exit_codes_are_documented_in_help_the_man_page_and_the_docs() {
    let help = stdout(&sparkdiag(&["--help"]));
    // roff writes each dash of `--fail-on` as `\-`.
    let man = stdout(&sparkdiag(&["man"])).replace("\\-", "-");
    let docs = std::fs::read_to_string(repo().join("docs/cli.md")).unwrap();
    for (code, means) in [
        (0, "analysed; every gate passed"),
        (
            1,
            "a gate failed (or a finding at least as severe as --fail-on)",
        ),
        (2, "unusable input or a usage error: nothing was analysed"),
        (
            3,
            "a gate could not be judged on this input, and none failed",
        ),
    ] {
        assert!(help.contains(&format!("{code}  {means}")), "--help: {code}");
        assert!(man.contains(means), "man: {code}");
        assert!(docs.contains(means), "docs/cli.md: {code}");
    }
    for gate in [
        "--max-runtime",
        "--max-spill",
        "--max-skew",
        "--max-failed-tasks",
        "--max-idle-core-hours",
        "--max-cost",
        "--fail-on-new",
        "--only",
        "--min-severity",
        "--stage",
        "--no-config",
    ] {
        assert!(docs.contains(gate), "docs/cli.md says nothing of {gate}");
    }
}

#[test]
fn nothing_readable_is_exit_2_and_never_an_application() {
    let tmp = tempfile::tempdir().unwrap();
    let empty = tmp.path().join("empty.log");
    std::fs::write(&empty, b"").unwrap();
    let out = sparkdiag(&["analyze", empty.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("nothing readable") && stderr(&out).contains("empty.log"),
        "{}",
        stderr(&out)
    );
    assert!(out.stdout.is_empty());
    // In a folder beside a real log: listed as unreadable, the real one analysed alone.
    std::fs::copy(failed_log(), tmp.path().join("app.log")).unwrap();
    let out = sparkdiag(&["analyze", tmp.path().to_str().unwrap(), "--format", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        json["application"]["id"], "local-1796049483373",
        "one report, the real one"
    );
    assert!(stderr(&out).contains("unreadable, left out") && stderr(&out).contains("empty.log"));
}

#[test]
fn narrowing_shows_some_findings_and_keeps_the_whole_runs_counts() {
    let log = failed_log();
    let all: Value =
        serde_json::from_slice(&sparkdiag(&["analyze", &log, "--format", "json"]).stdout).unwrap();
    let only: Value = serde_json::from_slice(
        &sparkdiag(&["analyze", &log, "--format", "json", "--only", "failure"]).stdout,
    )
    .unwrap();
    assert_eq!(only["summary"], all["summary"]);
    assert_eq!(only["ledger"], all["ledger"]);
    let shown = only["findings"].as_array().unwrap();
    assert!(!shown.is_empty() && shown.iter().all(|f| f["category"] == "failure"));
    assert!(shown.len() < all["findings"].as_array().unwrap().len());
    assert_eq!(
        only["narrowed"]["findings_total"],
        all["findings"].as_array().unwrap().len()
    );
    assert_eq!(only["narrowed"]["flags"], "--only failure");
    let by_code: Value = serde_json::from_slice(
        &sparkdiag(&["analyze", &log, "--format", "json", "--only", "python-udf"]).stdout,
    )
    .unwrap();
    assert!(
        by_code["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["rule"] == "PL001")
    );
    let stage: Value = serde_json::from_slice(
        &sparkdiag(&[
            "analyze",
            &log,
            "--format",
            "json",
            "--stage",
            "3",
            "--min-severity",
            "high",
        ])
        .stdout,
    )
    .unwrap();
    for f in stage["findings"].as_array().unwrap() {
        assert!(
            f["scope"]["stage_ids"]
                .as_array()
                .unwrap()
                .contains(&Value::from(3))
        );
        assert!(matches!(f["severity"].as_str(), Some("critical" | "high")));
    }
    let text = stdout(&sparkdiag(&["analyze", &log, "--only", "failure"]));
    assert!(
        text.contains("(showing 2 of the 3 findings: --only failure)"),
        "{text}"
    );
    let out = sparkdiag(&["analyze", &log, "--only", "nonsense"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("no rule or category"));
}

/// SARIF 2.1.0's required structure (the official schema cannot be vendored here): a version,
/// runs with a tool driver, results with a rule id, a level and a message, and locations with
/// an artifact and a 1-based line.
fn assert_sarif(log: &Value) {
    assert_eq!(log["version"], "2.1.0");
    assert!(log["$schema"].as_str().unwrap().contains("sarif-2.1.0"));
    for run in log["runs"].as_array().unwrap() {
        let driver = &run["tool"]["driver"];
        assert_eq!(driver["name"], "sparkdiag");
        let rules: Vec<&str> = driver["rules"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["id"].as_str().unwrap())
            .collect();
        for result in run["results"].as_array().unwrap() {
            let id = result["ruleId"].as_str().unwrap();
            assert!(rules.contains(&id), "{id} is among the driver's rules");
            assert!(matches!(
                result["level"].as_str(),
                Some("error" | "warning" | "note")
            ));
            assert!(!result["message"]["text"].as_str().unwrap().is_empty());
            for location in result["locations"].as_array().into_iter().flatten() {
                let physical = &location["physicalLocation"];
                assert!(
                    !physical["artifactLocation"]["uri"]
                        .as_str()
                        .unwrap()
                        .is_empty()
                );
                assert!(physical["region"]["startLine"].as_u64().unwrap() >= 1);
            }
        }
    }
}

#[test]
fn sarif_puts_findings_at_their_code_sites() {
    let out = sparkdiag(&["analyze", &failed_log(), "--format", "sarif"]);
    assert_eq!(out.status.code(), Some(0));
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_sarif(&log);
    let fa001 = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["ruleId"] == "FA001")
        .unwrap();
    assert_eq!(fa001["level"], "error");
    let location = &fa001["locations"][0]["physicalLocation"];
    assert!(
        location["artifactLocation"]["uri"]
            .as_str()
            .unwrap()
            .ends_with("testdata/gen/workload.py")
    );
    assert_eq!(
        location["region"]["startLine"], 107,
        "collect at workload.py:107"
    );
    // Plan text names no file: its findings are the run's.
    let plan = testdata("plans/antipattern-many-exchanges.txt");
    let out = sparkdiag(&["plan", plan.to_str().unwrap(), "--format", "sarif"]);
    let log: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_sarif(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert!(!results.is_empty() && results.iter().all(|r| r.get("locations").is_none()));
    // A document without a SARIF view says which formats it has.
    let out = sparkdiag(&["rules", "--format", "sarif"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("has no sarif view; it comes as text, json"));
}

/// What `testdata/gen/redact.py` planted in its log (its `PLANTED`).
pub(crate) const PLANTED: &[&str] = &[
    "Payroll for Globex Corporation",
    "hank.scorpio@globex.example.com",
    "s3a://globex-payroll-archive/2026/11/salaries.parquet",
    "globex-payroll-archive",
    "Springfield Nuclear Plant",
    "Cypress Creek",
    "SPRINGFIELD NUCLEAR PLANT",
    "hscorpio",
];

fn redact_log() -> String {
    let dir = testdata("logs/redact");
    let log = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap();
    log.path().display().to_string()
}

/// Every format of `analyze` on `logs` (and its charts), concatenated, with its finding
/// codes and savings as the JSON gives them.
fn every_format(logs: &[&str], extra: &[&str]) -> (String, Vec<(String, i64)>) {
    let charts = tempfile::tempdir().unwrap();
    let mut all = String::new();
    let mut findings = Vec::new();
    for format in ["text", "json", "markdown", "html", "sarif"] {
        let mut args = vec!["analyze", "--no-config", "--format", format];
        args.extend_from_slice(logs);
        args.extend_from_slice(extra);
        if format == "html" {
            args.extend(["--charts", charts.path().to_str().unwrap()]);
        }
        let out = sparkdiag(&args);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {}", stderr(&out));
        all += &stdout(&out);
        all += &stderr(&out);
        if format == "json" {
            let reports = match serde_json::from_slice(&out.stdout).unwrap() {
                Value::Array(reports) => reports,
                one => vec![one],
            };
            for r in &reports {
                for f in r["findings"].as_array().unwrap() {
                    findings.push((
                        f["rule"].as_str().unwrap().to_string(),
                        f["impact_ms"].as_i64().unwrap(),
                    ));
                }
            }
        }
    }
    for chart in std::fs::read_dir(charts.path()).unwrap() {
        let chart = chart.unwrap().path();
        if chart.extension().is_some_and(|e| e == "svg") {
            all += &std::fs::read_to_string(chart).unwrap();
        }
    }
    (all, findings)
}

#[test]
fn redact_leaves_none_of_the_originals_in_any_format_and_the_same_findings() {
    let log = redact_log();
    let raw =
        String::from_utf8(zstd::decode_all(std::fs::File::open(&log).unwrap()).unwrap()).unwrap();
    for planted in PLANTED {
        assert!(raw.contains(planted), "redact.py planted {planted}");
    }
    let (plain, plain_findings) = every_format(&[&log], &[]);
    // The test can fail: without --redact the reports show what was planted.
    for shown in [
        "Payroll for Globex Corporation",
        "hank.scorpio@globex.example.com",
        "globex-payroll-archive",
        "SPRINGFIELD NUCLEAR PLANT",
        "7007",
    ] {
        assert!(
            plain.contains(shown),
            "without --redact a report shows {shown}"
        );
    }
    let (redacted, redacted_findings) = every_format(&[&log], &["--redact"]);
    for planted in PLANTED.iter().chain(&["7007", "/tmp/", "local-17"]) {
        assert!(!redacted.contains(planted), "--redact leaves {planted}");
    }
    // Each pseudonym says what it stands for, and is the same wherever the value was.
    for pseudonym in [
        "app-1",
        "app-id-1",
        "user-1",
        "email-1",
        "s3a://bucket-1/path-",
        "literal-",
    ] {
        assert!(redacted.contains(pseudonym), "--redact writes {pseudonym}");
    }
    assert!(!redacted.contains("app-2"), "one application, one name");
    assert_eq!(
        redacted_findings, plain_findings,
        "the diagnosis is the same"
    );
    assert!(!plain_findings.is_empty());

    // Other tools' real logs: hosts, IP addresses, e-mail addresses, S3 buckets, HDFS paths.
    let (Some(emr), Some(databricks)) = (
        crate::util::shared_opt("real-world/spark_log_parser/tests/logs/emr.zip"),
        crate::util::shared_opt("real-world/spark_log_parser/tests/logs/databricks.zip"),
    ) else {
        return;
    };
    let logs = [emr.to_str().unwrap(), databricks.to_str().unwrap()];
    let (plain, plain_findings) = every_format(&logs, &[]);
    let originals = [
        "ip-10-0-2-184",
        "10.77.243.103",
        "arianna@synccomputing.com",
        "job-bank",
        "/home/hadoop",
        "Text Similarity",
        "application_1640227485896_0002",
        "app-20220304222044-0000",
    ];
    let shown: Vec<&&str> = originals.iter().filter(|o| plain.contains(**o)).collect();
    assert!(
        shown.len() >= 5,
        "without --redact the reports show {shown:?}"
    );
    let (redacted, redacted_findings) = every_format(&logs, &["--redact"]);
    for original in originals {
        assert!(!redacted.contains(original), "--redact leaves {original}");
    }
    // One pseudonym a value across the reports of one command.
    assert!(redacted.contains("app-2") && !redacted.contains("app-3"));
    assert_eq!(redacted_findings, plain_findings);
}

/// `-o FILE` gets the JSON streamed into it, byte for byte what standard output gets; a file
/// that cannot be written is named, and nothing is left behind.
#[test]
fn a_json_report_written_to_a_file_is_the_one_printed() {
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("report.json");
    let printed = sparkdiag(&["analyze", &failed_log(), "--format", "json"]);
    let written = sparkdiag(&[
        "analyze",
        &failed_log(),
        "--format",
        "json",
        "-o",
        file.to_str().unwrap(),
    ]);
    assert_eq!(printed.status.code(), written.status.code());
    assert!(written.stdout.is_empty(), "{}", stdout(&written));
    let bytes = std::fs::read(&file).unwrap();
    assert!(!bytes.is_empty() && bytes.ends_with(b"}\n"));
    assert!(
        bytes == printed.stdout,
        "the file differs from standard output"
    );

    let nowhere = tmp.path().join("no-such-folder/report.json");
    let failed = sparkdiag(&[
        "analyze",
        &failed_log(),
        "--format",
        "json",
        "-o",
        nowhere.to_str().unwrap(),
    ]);
    assert!(!failed.status.success());
    assert!(
        stderr(&failed).contains(nowhere.to_str().unwrap()),
        "{}",
        stderr(&failed)
    );
    assert!(!nowhere.exists());
}
