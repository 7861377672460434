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
