//! The logs users bring from Databricks and EMR (issue 46): the workload read from what the
//! application did, not from the platform's defaults, and advice for the operation that made
//! each stage. The Databricks and EMR runs are other projects' real logs in
//! `../shared/real-world/`; the platform defaults on a batch program are a real Spark 4.3 log
//! (`testdata/gen/platforms.py`).

use serde_json::Value;

use crate::util::{json_of, shared_opt, testdata};

fn report(path: &std::path::Path) -> Value {
    json_of(&["analyze", path.to_str().unwrap(), "--format", "json"])
}

fn rules_of(r: &Value) -> Vec<String> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

/// Both Databricks 9.1 job runs set `spark.streaming.*` defaults and call themselves
/// "Databricks Shell"; the EMR runs are batch programs too. Each says what decided it.
#[test]
fn databricks_and_emr_runs_are_read_as_what_they_did() {
    let Some(logs) = shared_opt("real-world/spark_log_parser/tests/logs") else {
        return;
    };
    for (zip, job, run) in [
        ("databricks.zip", "703", "31144"),
        ("databricks-rollover.zip", "313", "18"),
    ] {
        let r = report(&logs.join(zip));
        let app = &r["application"];
        assert_eq!(app["workload"], "batch", "{zip}");
        let why = app["workload_evidence"].as_str().unwrap();
        assert!(
            why.contains("Databricks job run")
                && why.contains(&format!("job {job}, run {run}"))
                && why.contains("python task")
                && why.contains("no streaming batch ran"),
            "{zip}: {why}"
        );
        // A job cluster ends with its run: its idle cores' fix is the job cluster's autoscaling,
        // never "run the work on a job cluster".
        for idle in r["findings"].as_array().unwrap() {
            let advice = idle["recommendation"].as_str().unwrap();
            if idle["rule"] == "UT001" {
                assert!(
                    advice.contains("autoscaling on the job cluster")
                        && !advice.contains("run the work on a job cluster"),
                    "{zip}: {advice}"
                );
            }
        }
    }
    let r = report(&logs.join("emr.zip"));
    assert_eq!(r["application"]["workload"], "batch");
    let Some(etl) = shared_opt("real-world/syncsparkpy/demo/emr/application_1678162862227_0001")
    else {
        return;
    };
    assert_eq!(report(&etl)["application"]["workload"], "batch");
}

/// A batch program on a cluster that loads the Spark Connect plugin and sets `spark.streaming.*`
/// (as Databricks 13.x and 9.1 do) is a batch program: its Python loop of small jobs is DR002's,
/// its idle driver DR001's, and the header says why it is not a server.
#[test]
fn platform_defaults_do_not_make_a_batch_program_a_server() {
    let r = report(&testdata("logs/platforms/connect-plugin-loop"));
    let app = &r["application"];
    assert_eq!(app["workload"], "batch");
    let why = app["workload_evidence"].as_str().unwrap();
    assert!(
        why.contains("Connect plugin is loaded, but no Connect operation ran"),
        "{why}"
    );
    let rules = rules_of(&r);
    for code in ["DR001", "DR002"] {
        assert!(rules.iter().any(|r| r == code), "{code} missing: {rules:?}");
    }
    let loop_finding = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "DR002")
        .unwrap();
    assert!(
        loop_finding["title"]
            .as_str()
            .unwrap()
            .contains("platforms.py"),
        "{loop_finding}"
    );
    let text = crate::util::sparkdiag_ok(&[
        "analyze",
        testdata("logs/platforms/connect-plugin-loop")
            .to_str()
            .unwrap(),
    ]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("workload: batch ("), "{text}");
}

/// Databricks runtimes turn AQE on by default (their Spark 3.1 did not), and both 9.1 runs
/// re-planned adaptively; the EMR run's shuffles are MLlib's RDD work, which AQE never plans.
/// CF001 ("AQE was off") is false on all three.
#[test]
fn aqe_is_not_called_off_where_it_ran_or_cannot_apply() {
    let Some(logs) = shared_opt("real-world/spark_log_parser/tests/logs") else {
        return;
    };
    for zip in ["databricks.zip", "databricks-rollover.zip", "emr.zip"] {
        let rules = rules_of(&report(&logs.join(zip)));
        assert!(!rules.iter().any(|r| r == "CF001"), "{zip}: {rules:?}");
    }
}

/// The Databricks rollover run: a 234 GB Hive SerDe insert that committed for 52 minutes after
/// its only job (DR003, with the data source writer as its fix), a Hive text table read in
/// splits Hadoop decides, and 13 CSV writes behind `repartition(1)`, one task each: PA002 gives
/// each kind of stage its own fix, the single-file trade-off said.
#[test]
fn the_rollover_runs_commit_and_single_task_writes_each_get_their_fix() {
    let Some(logs) = shared_opt("real-world/spark_log_parser/tests/logs") else {
        return;
    };
    let r = report(&logs.join("databricks-rollover.zip"));
    let find = |code: &str| {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == code)
            .unwrap_or_else(|| panic!("{code} missing"))
            .clone()
    };
    let commit = find("DR003");
    assert_eq!(commit["severity"], "critical");
    assert!(
        commit["title"]
            .as_str()
            .unwrap()
            .contains("InsertIntoHiveTable")
    );
    assert!(
        commit["recommendation"]
            .as_str()
            .unwrap()
            .contains("data source writer")
    );
    let partitions = find("PA002");
    let advice = partitions["recommendation"].as_str().unwrap();
    assert!(advice.contains("Hive SerDe table"), "{advice}");
    let by_shape = partitions["evidence"]["advice_by_shape"]
        .as_array()
        .unwrap();
    let single = by_shape
        .iter()
        .find(|s| s["stage_shape"] == "repartition(1)")
        .expect("the repartition(1) writes have advice of their own");
    assert_eq!(single["stages"], 13);
    let single = single["recommendation"].as_str().unwrap();
    assert!(
        single.contains("one output file against") && single.contains("Drop it"),
        "{single}"
    );
}

/// The Databricks 9.1 fit over ten gzip CSV files: PL008 names the input read again and again,
/// and no advice asks for a partition count that cannot split a gzip file.
#[test]
fn gzip_input_read_again_is_named_and_never_given_split_advice() {
    let Some(logs) = shared_opt("real-world/spark_log_parser/tests/logs") else {
        return;
    };
    let r = report(&logs.join("databricks.zip"));
    let findings = r["findings"].as_array().unwrap();
    let again = findings.iter().find(|f| f["rule"] == "PL008").unwrap();
    assert_eq!(again["evidence"]["unsplittable"], true);
    assert!(again["recommendation"].as_str().unwrap().contains("cache"));
    // Reading the gzip files once and repartitioning the cached data is also what spreads the
    // stages' ten large partitions (PA002): one fix, ranked first, its saving counted once.
    let rank = |rule: &str| findings.iter().position(|f| f["rule"] == rule).unwrap();
    assert!(rank("PL008") < rank("PA002"), "{:?}", rules_of(&r));
    let split = &findings[rank("PA002")];
    assert_eq!(split["evidence"]["removed_by_fix_of"], "PL008");
    assert_eq!(again["evidence"]["also_removes"][0], "PA002");
    assert!(again["impact_ms"].as_i64().unwrap() >= split["impact_ms"].as_i64().unwrap());
    assert_eq!(
        again["evidence"]["includes_replayed_ms"], split["impact_ms"],
        "{again}"
    );
    for f in findings {
        let advice = f["recommendation"].as_str().unwrap();
        assert!(
            !advice.contains("pass the count to the RDD call"),
            "{}: {advice}",
            f["rule"]
        );
    }
}

/// `repartition(16, "tail_num")` with 70 % of the rows on one tail number before a Parquet
/// write: the hot key is the program's own repartition, not a join's, so the advice is to
/// repartition by row count, salt, or ask for a rebalance, never AQE's skew join; the rerun with
/// `hint("rebalance", "tail_num")` has no skew left.
#[test]
fn a_hot_key_repartition_before_a_write_gets_the_rebalance_fix() {
    let r = report(&testdata("logs/operations/hot-key-repartition-write"));
    let skew: Vec<&Value> = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == "SK001")
        .collect();
    assert_eq!(skew.len(), 1, "{skew:?}");
    assert_eq!(skew[0]["evidence"]["stage_shape"], "repartition");
    let advice = skew[0]["recommendation"].as_str().unwrap();
    assert!(
        advice.contains("repartition(16, key)")
            && advice.contains("hint(\"rebalance\"")
            && !advice.contains("skewJoin"),
        "{advice}"
    );
    let fixed = report(&testdata("logs/operations/hot-key-repartition-write-fixed"));
    assert!(
        !rules_of(&fixed).iter().any(|r| r.starts_with("SK")),
        "{:?}",
        rules_of(&fixed)
    );
}
