//! `sparkdiag plan` on real plan text: the tree and Exchange counts are exact, planted
//! anti-patterns are found on the right operators, clean plans stay clean.

use serde_json::Value;

use crate::util::{json_of, pattern_log, shared_opt, sparkdiag, testdata};

fn plan_json(path: &std::path::Path) -> Value {
    json_of(&["plan", path.to_str().unwrap(), "--format", "json"])
}

fn rules_of(plan: &Value) -> Vec<(String, Vec<u64>)> {
    plan["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let ids = f["scope"]["plan_node_ids"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v.as_u64().unwrap())
                .collect();
            (f["rule"].as_str().unwrap().to_string(), ids)
        })
        .collect()
}

fn node_name(plan: &Value, id: u64) -> String {
    plan["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == id)
        .map(|n| n["name"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

#[test]
fn planted_anti_patterns_in_real_spark_plans_are_found_on_their_operators() {
    // (file, shuffle exchanges, rule, operator names the finding must point at). Counts follow
    // Spark's planning with broadcasts off: each sort-merge join shuffles both sides.
    let cases = [
        ("antipattern-many-exchanges", 7, "EX001", vec!["Exchange"]),
        ("antipattern-back-to-back", 2, "EX002", vec!["Exchange"]),
        (
            "antipattern-cross-join",
            0,
            "EX004",
            vec!["CartesianProduct"],
        ),
        (
            "antipattern-window-no-partition",
            1,
            "PL002",
            vec!["Window", "Exchange"],
        ),
    ];
    for (file, exchanges, rule, operators) in cases {
        let out = plan_json(&testdata(&format!("plans/{file}.txt")));
        assert_eq!(out["schema"], "sparkdiag/plan/v1");
        let plan = &out["plans"][0];
        assert_eq!(plan["exchanges"], exchanges, "{file}");
        let found = rules_of(plan);
        let (_, ids) = found
            .iter()
            .find(|(r, _)| r == rule)
            .unwrap_or_else(|| panic!("{file}: {rule} did not fire: {found:?}"));
        assert!(!ids.is_empty());
        let names: Vec<String> = ids.iter().map(|&id| node_name(plan, id)).collect();
        for op in operators {
            assert!(
                names.iter().any(|n| n.starts_with(op)),
                "{file}: {rule} points at {names:?}, expected a {op}"
            );
        }
    }
}

#[test]
fn clean_real_plans_have_no_findings_at_medium_or_above() {
    for file in [
        "healthy",
        "tiny-partitions-fixed",
        "skew-join",
        "gc-healthy",
        "driver-loop-fixed",
    ] {
        let out = plan_json(&testdata(&format!("plans/{file}.txt")));
        for plan in out["plans"].as_array().unwrap() {
            for f in plan["findings"].as_array().unwrap() {
                assert!(
                    ["low", "info"].contains(&f["severity"].as_str().unwrap()),
                    "{file}: {}",
                    f["title"]
                );
            }
        }
    }
}

#[test]
fn exchange_counts_of_a_tpcds_plan_match_a_hand_count() {
    // TPC-DS q1 (Spark 4.1.1): 3 shuffles, 4 broadcasts, 2 reused exchanges (counted by hand in
    // crates/plan/tests/samples.rs).
    let Some(path) = shared_opt("plan-samples/spark-4.1.1__tpcds-v1_4__q1__explain.txt") else {
        return;
    };
    let out = plan_json(&path);
    let plan = &out["plans"][0];
    assert_eq!(
        (
            plan["exchanges"].as_u64(),
            plan["broadcast_exchanges"].as_u64(),
            plan["reused_exchanges"].as_u64()
        ),
        (Some(3), Some(4), Some(2))
    );
    let nodes = plan["nodes"].as_array().unwrap();
    assert!(nodes.iter().all(|n| {
        n["children"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| nodes.iter().any(|m| m["id"] == *c))
    }));
}

#[test]
fn plan_text_that_is_not_a_plan_is_an_error_with_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.txt");
    std::fs::write(&path, "hello\nthis is not a plan\n").unwrap();
    let out = sparkdiag(&["plan", path.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("notes.txt: line 1"), "{err}");
}

#[test]
fn plan_findings_from_an_event_log_name_the_sql_execution_node_and_stages() {
    // The AQE fixture measured the customers side at a few KB, yet broadcasts were off.
    let report = json_of(&[
        "analyze",
        testdata("logs/patterns/skew-join-aqe").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let ex003 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "EX003")
        .expect("EX003 fires");
    assert_eq!(ex003["scope"]["sql_execution_ids"], serde_json::json!([0]));
    assert!(
        !ex003["scope"]["plan_node_ids"]
            .as_array()
            .unwrap()
            .is_empty()
    );
    assert!(!ex003["scope"]["stage_ids"].as_array().unwrap().is_empty());
    assert!(ex003["evidence"]["small_side_bytes"].as_u64().unwrap() < 10_000_000);
}

#[test]
fn sql_metrics_tie_each_exchange_to_the_stages_that_wrote_and_read_it() {
    // Two independent records of the same bytes: the Exchange's SQL metric (accumulators) and the
    // task metrics of the stages it names as its writers.
    let mut exchanges = 0;
    for name in [
        "skew-join",
        "broadcast-disabled",
        "tiny-partitions",
        "healthy",
    ] {
        let report = json_of(&[
            "analyze",
            pattern_log(name).to_str().unwrap(),
            "--format",
            "json",
        ]);
        let stages = report["stages"].as_array().unwrap();
        let write_bytes = |id: i64| {
            stages
                .iter()
                .filter(|s| s["stage_id"] == id)
                .map(|s| s["shuffle_write_bytes"].as_i64().unwrap())
                .sum::<i64>()
        };
        for sql in report["sql"].as_array().unwrap() {
            for e in sql["exchange_stages"].as_array().unwrap() {
                let writers: Vec<i64> = e["writer_stage_ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_i64().unwrap())
                    .collect();
                let readers: Vec<i64> = e["reader_stage_ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_i64().unwrap())
                    .collect();
                assert!(!writers.is_empty() && !readers.is_empty(), "{name}: {e}");
                assert!(
                    writers.iter().all(|w| readers.iter().all(|r| r > w)),
                    "{name}: readers {readers:?} run after writers {writers:?}"
                );
                let written: i64 = writers.iter().map(|&w| write_bytes(w)).sum();
                assert_eq!(
                    e["shuffle_bytes_written"].as_i64(),
                    Some(written),
                    "{name}: exchange {}",
                    e["node"]
                );
                let node = &sql["plan_nodes"][e["node"].as_u64().unwrap() as usize];
                assert_eq!(node["name"], "Exchange");
                exchanges += 1;
            }
        }
    }
    assert!(exchanges >= 5, "{exchanges} exchanges checked");
}

#[test]
fn a_join_that_could_broadcast_is_found_from_the_sizes_the_log_measured() {
    // The planted config problem: a 100-row dimension joined with broadcasts off and AQE off, so
    // the plan text has no sizes; the Exchange's `data size` SQL metric measured the small side.
    let report = json_of(&[
        "analyze",
        pattern_log("broadcast-disabled").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let ex003 = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "EX003")
        .expect("EX003 fires");
    assert!(
        ex003["evidence"]["small_side_bytes"].as_u64().unwrap() < 100_000,
        "{ex003}"
    );
    assert!(ex003["title"].as_str().unwrap().contains("SortMergeJoin"));
    assert_eq!(ex003["scope"]["sql_execution_ids"], serde_json::json!([0]));
    let healthy = pattern_log("healthy");
    let report = json_of(&["analyze", healthy.to_str().unwrap(), "--format", "json"]);
    assert!(
        report["findings"]
            .as_array()
            .unwrap()
            .iter()
            .all(|f| f["rule"] != "EX003"),
        "the healthy run broadcasts"
    );
}
