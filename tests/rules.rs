//! The detectors on real logs: what must fire, where, and what must not.

use serde_json::Value;

use crate::util::{json_of, sparkdiag, testdata};

fn findings(path: &str, extra: &[&str]) -> Vec<Value> {
    let p = testdata(path);
    let mut args = vec!["analyze", p.to_str().unwrap(), "--format", "json"];
    args.extend_from_slice(extra);
    json_of(&args)["findings"].as_array().unwrap().clone()
}

fn of_rule<'a>(findings: &'a [Value], rule: &str) -> Vec<&'a Value> {
    findings.iter().filter(|f| f["rule"] == rule).collect()
}

#[test]
fn the_failed_job_post_mortem_names_stage_task_and_exception() {
    let all = findings("logs/failed", &[]);
    let fa001 = of_rule(&all, "FA001");
    assert_eq!(fa001.len(), 1, "{all:#?}");
    let f = fa001[0];
    assert!(
        f["title"]
            .as_str()
            .unwrap()
            .contains("ValueError: bad row 1234"),
        "{}",
        f["title"]
    );
    assert_eq!(f["evidence"]["first_failure"]["reason"], "ExceptionFailure");
    assert_eq!(
        f["evidence"]["failed_task_attempts"], 2,
        "two attempts of the same task failed"
    );
    let stage = f["scope"]["stage_ids"][0].as_i64().unwrap();
    let report = json_of(&[
        "analyze",
        testdata("logs/failed").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let failed_stage = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["status"] == "failed")
        .unwrap();
    assert_eq!(failed_stage["stage_id"].as_i64(), Some(stage));
    assert!(["high", "critical"].contains(&f["severity"].as_str().unwrap()));
}

#[test]
fn a_killed_run_says_what_was_running_when_it_stopped() {
    for path in ["logs/killed/single", "logs/killed/rolling"] {
        let all = findings(path, &[]);
        let fa005 = of_rule(&all, "FA005");
        assert_eq!(fa005.len(), 1, "{path}: {all:#?}");
        let report = json_of(&[
            "analyze",
            testdata(path).to_str().unwrap(),
            "--format",
            "json",
        ]);
        let active: Vec<i64> = report["stages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["status"] == "active")
            .map(|s| s["stage_id"].as_i64().unwrap())
            .collect();
        let named: Vec<i64> = fa005[0]["scope"]["stage_ids"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        assert_eq!(named, active, "{path}");
        assert!(fa005[0]["impact_ms"].as_i64().unwrap() > 0);
    }
}

#[test]
fn fail_on_sets_the_exit_code_and_overrides_change_what_fires() {
    let failed = testdata("logs/failed");
    let failed = failed.to_str().unwrap();
    assert_eq!(
        sparkdiag(&["analyze", failed, "--fail-on", "high"])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(
        sparkdiag(&["analyze", failed, "--fail-on", "critical"])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(
        sparkdiag(&["analyze", failed, "--fail-on", "high", "--disable", "FA001"])
            .status
            .code(),
        Some(0)
    );

    let out = sparkdiag(&["analyze", failed, "--set", "SK001.ratoi=4"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no threshold `ratoi`"));

    let dir = tempfile::tempdir().unwrap();
    let toml = dir.path().join("custom.toml");
    std::fs::write(&toml, "disable = [\"failed-job\"]\n").unwrap();
    let all = findings("logs/failed", &["--config", toml.to_str().unwrap()]);
    assert!(of_rule(&all, "FA001").is_empty());
}

#[test]
fn the_rule_catalogue_lists_and_explains_every_rule() {
    let out = sparkdiag(&["rules"]);
    assert!(out.status.success());
    let list = String::from_utf8(out.stdout).unwrap();
    for code in [
        "SK001", "SK002", "SK003", "PA001", "PA002", "SP001", "GC001", "GC002", "DR001", "DR002",
        "UT001", "FA001", "FA002", "FA003", "FA004", "FA005", "CF001", "CF002", "CF003",
    ] {
        assert!(list.contains(code), "{code} missing from `sparkdiag rules`");
    }
    let out = sparkdiag(&["rules", "data-skew"]);
    let doc = String::from_utf8(out.stdout).unwrap();
    assert!(doc.starts_with("# SK001 (data-skew) — skew"), "{doc}");
    assert!(
        doc.contains("skewedPartitionFactor") && doc.contains("- ratio = 5 x median"),
        "{doc}"
    );
    let out = sparkdiag(&["rules", "XX999"]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn price_per_core_hour_adds_a_cost() {
    let all = findings("logs/failed", &["--price-per-core-hour", "0.5"]);
    let f = of_rule(&all, "FA001")[0];
    let hours = f["impact_core_hours"].as_f64().unwrap();
    assert!(hours > 0.0);
    assert!(
        (f["impact_cost"].as_f64().unwrap() - (hours * 0.5 * 100.0).round() / 100.0).abs() < 0.011
    );
}
