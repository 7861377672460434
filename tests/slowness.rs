//! Why a task was slow (issue 47): the skew, straggler and slow-host findings on logs other
//! projects wrote on Databricks, EMR, YARN and standalone clusters, and on the real Spark 4.3
//! logs of `testdata/logs/slowness/` (`testdata/gen/slowness.py`).

use serde_json::Value;

use crate::util::{json_of, shared_opt, testdata};

fn report(path: &std::path::Path) -> Value {
    json_of(&["analyze", path.to_str().unwrap(), "--format", "json"])
}

fn findings<'a>(r: &'a Value, rule: &str) -> Vec<&'a Value> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

fn at_medium_or_above(f: &Value) -> bool {
    matches!(f["severity"].as_str(), Some("medium" | "high" | "critical"))
}

/// Every skew, straggler and slow-host finding at medium or above on the real-world logs
/// (Databricks, EMR, YARN, standalone), which must each be one their owner would agree with.
/// The only one is the sparklint example's three 128 MiB reads that ran 1 min each at the
/// same time on two executors against a 2 s typical task: a shared stall of what they read,
/// with the same data and no GC, fetch or cold start to blame. The Databricks job run's first
/// wave of 16-17 s against 1-3 s (a cold start as the executors registered) and its slow
/// executors on dynamic allocation are not called skew, stragglers or slow hosts.
#[test]
fn on_real_world_logs_only_a_shared_stall_is_called_a_straggler() {
    let mut alarms = Vec::new();
    for rel in [
        "spark_log_parser/tests/logs/databricks.zip",
        "spark_log_parser/tests/logs/databricks-rollover.zip",
        "spark_log_parser/tests/logs/emr.zip",
        "syncsparkpy/demo/emr/application_1678162862227_0001",
        "sparklint/docs-spark_summit_euro_2016-event_logs/application_1472176676028_407508_1",
        "sparklint/spark_event_log_example",
        "delight/documentation-resources/example_spark_event_log.txt",
        "sparklens/event-history-test-files/local-1532512550423",
        "compass/task-parser/src/test/resources/log/event/eventlog",
    ] {
        let Some(path) = shared_opt(&format!("real-world/{rel}")) else {
            return;
        };
        let r = report(&path);
        for rule in ["SK001", "SK002", "SK003"] {
            for f in findings(&r, rule) {
                if at_medium_or_above(f) {
                    alarms.push((rel, rule, f["title"].as_str().unwrap().to_string()));
                }
            }
        }
    }
    assert_eq!(alarms.len(), 1, "{alarms:#?}");
    let (rel, rule, title) = &alarms[0];
    assert_eq!(
        (*rel, *rule),
        ("sparklint/spark_event_log_example", "SK002")
    );
    assert!(
        title.contains("with the data of the others")
            && title.contains("not its data")
            && title.contains("ran at the same time")
            && title.contains("a stall they shared"),
        "{title}"
    );
}

/// The delight example's long task is its executor's first, 3 s after the executor
/// registered: said as a cold start, at info, with nothing to save.
#[test]
fn a_new_executors_first_task_is_a_cold_start_at_info() {
    let Some(path) =
        shared_opt("real-world/delight/documentation-resources/example_spark_event_log.txt")
    else {
        return;
    };
    let r = report(&path);
    let sk002 = findings(&r, "SK002");
    assert_eq!(sk002.len(), 1, "{sk002:#?}");
    let f = sk002[0];
    assert_eq!(f["severity"], "info", "{f:#}");
    let title = f["title"].as_str().unwrap();
    assert!(
        title.contains("a cold start, one of the executor's first tasks"),
        "{title}"
    );
}

/// Both Databricks job runs end without an application end (a live cluster's log), with
/// every job done: FA005 says so at low, naming the last job, where it used to be only a
/// status.
#[test]
fn a_databricks_log_without_an_end_says_nothing_was_running() {
    let Some(logs) = shared_opt("real-world/spark_log_parser/tests/logs") else {
        return;
    };
    for (zip, last_job) in [
        ("databricks.zip", "job 49"),
        ("databricks-rollover.zip", "job 71"),
    ] {
        let r = report(&logs.join(zip));
        let fa005 = findings(&r, "FA005");
        assert_eq!(fa005.len(), 1, "{zip}");
        assert_eq!(fa005[0]["severity"], "low", "{zip}");
        let title = fa005[0]["title"].as_str().unwrap();
        assert!(
            title.contains("without an application end, with nothing running")
                && title.contains(&format!("the last job ({last_job}) ended")),
            "{zip}: {title}"
        );
    }
}

/// The one log of `testdata/logs/slowness/<name>/`.
fn slowness_log(name: &str) -> std::path::PathBuf {
    let dir = testdata(&format!("logs/slowness/{name}"));
    let mut logs: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    logs.pop().unwrap()
}

/// A Python UDF that fails the first attempt of each of 4 tasks after sleeping: 4 of 9
/// attempts failed and every retry succeeded. Ten failures were once needed; the wasted share
/// of the run is what counts now, and the title says it.
#[test]
fn retries_that_succeed_are_named_for_the_time_they_wasted() {
    let r = report(&slowness_log("retries"));
    let fa002 = findings(&r, "FA002");
    assert_eq!(fa002.len(), 1, "{:#}", r["findings"]);
    let f = fa002[0];
    assert!(at_medium_or_above(f), "{f:#}");
    let title = f["title"].as_str().unwrap();
    assert!(
        title.starts_with("4 task attempts failed")
            && title.contains("PythonException")
            && title.contains("of the application's core time"),
        "{title}"
    );
    // Every job succeeded: no failed-job post-mortem.
    assert!(findings(&r, "FA001").is_empty(), "{:#}", r["findings"]);
}

/// A driver killed (SIGKILL) 3 s after its last job: no application end, no job running.
/// FA005 says so at low, naming the last job, instead of only a status.
#[test]
fn a_driver_killed_after_its_last_job_says_nothing_was_running() {
    let r = report(&slowness_log("driver-halts"));
    let fa005 = findings(&r, "FA005");
    assert_eq!(fa005.len(), 1, "{:#}", r["findings"]);
    assert_eq!(fa005[0]["severity"], "low");
    let title = fa005[0]["title"].as_str().unwrap();
    assert!(
        title.contains("without an application end, with nothing running")
            && title.contains("the last job (job 4) ended"),
        "{title}"
    );
}

/// 5M rows over 1000 keys joined into 2000 shuffle partitions: most reduce tasks read nothing,
/// so the median task reads 0 bytes. No key is hot: no skew, and no straggler or slow host at
/// medium or above (the executors' first tasks are their cold start).
#[test]
fn empty_partitions_are_not_skew() {
    let r = report(&slowness_log("empty-partitions"));
    assert!(findings(&r, "SK001").is_empty(), "{:#}", r["findings"]);
    for rule in ["SK002", "SK003"] {
        for f in findings(&r, rule) {
            assert!(!at_medium_or_above(f), "{f:#}");
        }
    }
    // What the run does show: 2000 partitions for 33 MiB.
    assert!(!findings(&r, "PA001").is_empty(), "{:#}", r["findings"]);
}

/// The same join with ten hot keys of 400,000 rows among the 1000: SK001 names a hot
/// partition against the median of the tasks that read data (not the 0-byte median of all
/// 2000), and not the executors' cold first tasks, which ran longer (7.4-7.8 s) on no more data.
#[test]
fn hot_keys_among_empty_partitions_are_named_against_the_tasks_that_read_data() {
    let r = report(&slowness_log("empty-partitions-skew"));
    let sk001 = findings(&r, "SK001");
    assert_eq!(sk001.len(), 1, "{:#}", r["findings"]);
    let f = sk001[0];
    let ev = &f["evidence"];
    assert_eq!(ev["cause"], "data", "{f:#}");
    assert!(ev["task_records"].as_u64().unwrap() > 400_000, "{ev:#}");
    assert_eq!(ev["tasks_without_data"], 1194, "{ev:#}");
    assert_eq!(ev["typical_of_tasks"], 806, "{ev:#}");
    assert!(ev["data_ratio"].as_f64().unwrap() > 100.0, "{ev:#}");
    let title = f["title"].as_str().unwrap();
    assert!(
        title.contains("the median of the 806 tasks that read data (1194 read none)")
            && title.contains("more data than the others")
            && !title.contains("(0x"),
        "{title}"
    );
    // The ten hot partitions are the stage's planted tasks (SLOWNESS.tsv): the one named is one.
    let hot = [253, 316, 558, 1037, 445, 710, 725, 1074, 1100, 1508];
    assert!(hot.contains(&ev["task_id"].as_i64().unwrap()), "{ev:#}");
}

/// A real two-Worker standalone cluster whose second Worker (127.0.0.2) and its executor run
/// under a CPU quota of 0.1 core: SK003 names that executor, over the tasks of several stages
/// (among them the 2,000-task stage whose median is under 50 ms, which the old guards skipped);
/// the same cluster and jobs without the quota have no slow host.
#[test]
fn a_throttled_worker_is_named_and_its_healthy_twin_is_not() {
    let r = report(&slowness_log("slow-host"));
    let slow = findings(&r, "SK003");
    assert_eq!(slow.len(), 1, "{slow:?}");
    let f = slow[0];
    assert!(at_medium_or_above(f), "{f}");
    assert!(f["title"].as_str().unwrap().contains("127.0.0.2"), "{f}");
    assert_eq!(f["scope"]["executor_ids"], serde_json::json!(["0"]), "{f}");
    let healthy = report(&slowness_log("slow-host-healthy"));
    assert!(
        findings(&healthy, "SK003").is_empty(),
        "{}",
        healthy["findings"]
    );
    // Neither is data skew: every task of a stage read about as much as the others.
    assert!(findings(&r, "SK001").is_empty() && findings(&healthy, "SK001").is_empty());
}

/// Dynamic allocation on the standalone cluster: the second executor registers while the first
/// runs the join's map stages, gets ANY-locality tasks when the 3 s locality wait runs out and
/// runs its first ones cold. That is not a slow host (SK003 fired on it before). And a first
/// job submitted as the executors register pays for class loading and the JIT in its first
/// wave: a cold start, never a straggler at medium or above.
#[test]
fn a_late_executor_and_a_cold_first_wave_are_not_slow_hosts_or_stragglers() {
    let late = report(&slowness_log("late-executor"));
    assert!(findings(&late, "SK003").is_empty(), "{}", late["findings"]);
    let cold = report(&slowness_log("cold-first-wave"));
    for rule in ["SK001", "SK002", "SK003"] {
        for log in [&late, &cold] {
            assert!(
                findings(log, rule).iter().all(|f| !at_medium_or_above(f)),
                "{rule}: {}",
                log["findings"]
            );
        }
    }
}
