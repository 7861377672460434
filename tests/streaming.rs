//! Structured Streaming, DStreams and Spark Connect applications (issue 24), on the real logs
//! `testdata/gen/streaming.py` writes (one Spark 4.3 application per scenario) and on the
//! History Server suite's Structured Streaming log of Spark 3.1.

use std::io::Read;
use std::path::PathBuf;

use serde_json::Value;

use crate::util::{json_of, shared_opt, sparkdiag, testdata};

/// The one event log of a scenario.
fn log(scenario: &str) -> PathBuf {
    let dir = testdata(&format!("logs/streaming/{scenario}"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one log in {}", dir.display());
    files.pop().unwrap()
}

fn report(path: &std::path::Path) -> Value {
    json_of(&["analyze", path.to_str().unwrap(), "--format", "json"])
}

/// The log's lines as JSON, read independently of sparkdiag's reader.
fn events(path: &std::path::Path) -> Vec<Value> {
    let raw = std::fs::read(path).unwrap();
    let text = if raw.starts_with(&[0x28, 0xb5, 0x2f, 0xfd]) {
        let mut out = String::new();
        zstd::stream::Decoder::new(&raw[..])
            .unwrap()
            .read_to_string(&mut out)
            .unwrap();
        out
    } else {
        String::from_utf8(raw).unwrap()
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

const STRUCTURED: &[&str] = &[
    "behind",
    "behind_files",
    "healthy",
    "state_no_watermark",
    "tiny_200",
    "stopped",
    "failed_udf",
    "late_rows",
    "idle",
];

fn rules_of(report: &Value) -> Vec<(String, String, String)> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["title"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn each_workload_is_recognised_and_said_in_the_header() {
    for scenario in STRUCTURED {
        let r = report(&log(scenario));
        assert_eq!(
            r["application"]["workload"], "structured_streaming",
            "{scenario}"
        );
        assert_eq!(r["streaming"]["queries"].as_array().unwrap().len(), 1);
    }
    let r = report(&log("dstreams"));
    assert_eq!(r["application"]["workload"], "dstreams");
    assert!(
        r["streaming"]["dstreams"]["batches"]
            .as_array()
            .unwrap()
            .len()
            >= 5
    );
    let r = report(&log("connect"));
    assert_eq!(r["application"]["workload"], "spark_connect");
    // A batch application says nothing of streaming.
    let batch = testdata("logs/single/zstd");
    let r = report(
        &std::fs::read_dir(batch)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path(),
    );
    assert_eq!(r["application"]["workload"], "batch");
    assert!(r.get("streaming").is_none());

    let text = sparkdiag(&["analyze", log("dstreams").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("workload: DStreams"), "{text}");
    let md = sparkdiag(&[
        "analyze",
        log("healthy").to_str().unwrap(),
        "--format",
        "markdown",
    ]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert!(md.contains("workload: Structured Streaming"), "{md}");
    assert!(md.contains("## Streaming queries"), "{md}");
}

/// Every batch of the report is its progress event, figure for figure.
fn assert_batches_equal_progress(path: &std::path::Path) -> usize {
    let r = report(path);
    let progress: Vec<Value> = events(path)
        .into_iter()
        .filter(|e| {
            e["Event"] == "org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent"
        })
        .map(|e| e["progress"].clone())
        .collect();
    let queries = r["streaming"]["queries"].as_array().unwrap();
    let batches: Vec<&Value> = queries
        .iter()
        .flat_map(|q| q["batches"].as_array().unwrap())
        .collect();
    assert_eq!(batches.len(), progress.len(), "{}", path.display());
    let total: i64 = queries
        .iter()
        .map(|q| q["progress_events"].as_i64().unwrap())
        .sum();
    assert_eq!(total as usize, progress.len());
    let rate = |v: &Value| -> Option<f64> {
        match v {
            Value::Number(n) => n.as_f64(),
            _ => None, // "NaN" and "Infinity" are no rate
        }
    };
    for (b, p) in batches.iter().zip(&progress) {
        assert_eq!(b["batch_id"], p["batchId"]);
        let duration = p
            .get("batchDuration")
            .cloned()
            .unwrap_or_else(|| p["durationMs"]["triggerExecution"].clone());
        assert_eq!(b["duration_ms"], duration, "batch {}", p["batchId"]);
        for (k, v) in p["durationMs"].as_object().unwrap() {
            assert_eq!(b["duration_parts_ms"][k], *v, "durationMs.{k}");
        }
        let sources = p["sources"].as_array().unwrap();
        let rows: i64 = sources
            .iter()
            .map(|s| s["numInputRows"].as_i64().unwrap())
            .sum();
        assert_eq!(b["input_rows"].as_i64().unwrap(), rows);
        assert_eq!(b["sources"].as_array().unwrap().len(), sources.len());
        for (bs, ps) in b["sources"].as_array().unwrap().iter().zip(sources) {
            assert_eq!(bs["description"], ps["description"]);
            assert_eq!(bs["input_rows"], ps["numInputRows"]);
            assert_eq!(
                bs["input_rows_per_second"].as_f64(),
                rate(&ps["inputRowsPerSecond"])
            );
            assert_eq!(
                bs["processed_rows_per_second"].as_f64(),
                rate(&ps["processedRowsPerSecond"])
            );
        }
        if sources.len() == 1 {
            assert_eq!(
                b["input_rows_per_second"].as_f64(),
                rate(&sources[0]["inputRowsPerSecond"])
            );
        }
        assert_eq!(b["sink_output_rows"], p["sink"]["numOutputRows"]);
        let state = p["stateOperators"].as_array().unwrap();
        let out = b["state_operators"].as_array().unwrap();
        assert_eq!(out.len(), state.len());
        for (o, s) in out.iter().zip(state) {
            assert_eq!(o["rows_total"], s["numRowsTotal"]);
            assert_eq!(o["rows_updated"], s["numRowsUpdated"]);
            assert_eq!(o["memory_used_bytes"], s["memoryUsedBytes"]);
            let dropped = s
                .get("numRowsDroppedByWatermark")
                .or_else(|| s.get("numLateInputs"));
            assert_eq!(Some(&o["rows_dropped_by_watermark"]), dropped);
            if let Some(n) = s.get("numShufflePartitions") {
                assert_eq!(o["shuffle_partitions"], *n);
            }
        }
    }
    // Each batch's jobs are the jobs whose properties name that batch.
    let mut mapped = 0;
    for e in events(path)
        .iter()
        .filter(|e| e["Event"] == "SparkListenerJobStart")
    {
        let Some(batch) = e["Properties"]["streaming.sql.batchId"].as_str() else {
            continue;
        };
        let job = e["Job ID"].as_i64().unwrap();
        let found = batches.iter().any(|b| {
            b["batch_id"].as_i64().unwrap().to_string() == batch
                && b["job_ids"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|j| j.as_i64() == Some(job))
        });
        // A batch cut short by a stop or a failure has jobs and no progress event.
        let reported = batches
            .iter()
            .any(|b| b["batch_id"].as_i64().unwrap().to_string() == batch);
        assert_eq!(found, reported, "job {job} of batch {batch}");
        mapped += found as usize;
    }
    mapped
}

#[test]
fn every_batch_equals_its_progress_event_and_names_its_jobs() {
    for scenario in STRUCTURED {
        let path = log(scenario);
        let mapped = assert_batches_equal_progress(&path);
        assert!(
            mapped > 0 || *scenario == "failed_udf",
            "{scenario}: no job mapped"
        );
    }
}

#[test]
fn the_history_server_suite_s_spark_3_1_stream_reads_with_its_nan_rates() {
    let Some(path) = shared_opt("spark-conformance/sql-spark-events/local-1596020211915") else {
        return;
    };
    assert_batches_equal_progress(&path);
    let r = report(&path);
    assert_eq!(r["application"]["workload"], "structured_streaming");
    let q = &r["streaming"]["queries"][0];
    // Its first batch's input rate is "NaN": no rate, not a zero.
    assert!(q["batches"][0]["input_rows_per_second"].is_null());
    assert!(
        q["batches"][0]["processed_rows_per_second"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

#[test]
fn no_batch_only_finding_fires_on_streams_or_connect_servers() {
    let mut all: Vec<&str> = STRUCTURED.to_vec();
    all.extend(["dstreams", "connect", "connect_clients"]);
    for scenario in all {
        let r = report(&log(scenario));
        for (rule, severity, title) in rules_of(&r) {
            assert!(
                !["DR001", "DR002", "UT001"].contains(&rule.as_str()),
                "{scenario}: {rule} {severity} {title}"
            );
        }
    }
}

#[test]
fn a_program_s_own_stop_is_never_a_failure() {
    // `query.stop()` under a running batch, the end of a run that cancels its batch, and
    // `StreamingContext.stop()` while a batch ran.
    for scenario in [
        "stopped",
        "tiny_200",
        "behind",
        "dstreams",
        "connect",
        "connect_clients",
    ] {
        let path = log(scenario);
        let r = report(&path);
        let rules = rules_of(&r);
        assert!(
            !rules.iter().any(|(rule, _, _)| rule == "FA001"),
            "{scenario}: {rules:?}"
        );
        assert_eq!(r["application"]["status"], "succeeded", "{scenario}");
        // Falling behind is high on its own account: the exit code is checked where nothing
        // but the stop could make it 1.
        if ["behind", "tiny_200", "dstreams"].contains(&scenario) {
            continue;
        }
        let out = sparkdiag(&["analyze", path.to_str().unwrap(), "--fail-on", "high"]);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{scenario}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
    let r = report(&log("stopped"));
    assert_eq!(r["streaming"]["queries"][0]["status"], "stopped");
    // The stop cancelled the running batch's job: a failed job the report still counts.
    assert!(
        r["summary"]["failed_jobs"].as_i64().unwrap() >= 1,
        "{}",
        r["summary"]
    );
}

#[test]
fn a_query_that_fails_is_a_failure_named_by_its_exception() {
    let path = log("failed_udf");
    let r = report(&path);
    let q = &r["streaming"]["queries"][0];
    assert_eq!(q["status"], "failed");
    assert!(q["exception"].as_str().unwrap().contains("ValueError"));
    let st003: Vec<_> = rules_of(&r)
        .into_iter()
        .filter(|(rule, _, _)| rule == "ST003")
        .collect();
    assert_eq!(st003.len(), 1, "{:?}", rules_of(&r));
    assert_eq!(st003[0].1, "critical");
    assert!(
        st003[0].2.contains("ValueError: value") && st003[0].2.contains("out of range"),
        "{}",
        st003[0].2
    );
    // One failure, one finding: the failed batch's job is told in ST003 (its stage and first
    // failed task), not again as FA001.
    assert!(
        rules_of(&r).iter().all(|(rule, _, _)| rule != "FA001"),
        "{:?}",
        rules_of(&r)
    );
    let finding = r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "ST003")
        .unwrap();
    assert_eq!(r["findings"][0]["rule"], "ST003", "the failure leads");
    let failed_job = r["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["status"] == "failed")
        .unwrap();
    let at = format!("(job {}, stage ", failed_job["job_id"]);
    assert!(st003[0].2.contains(&at), "{}", st003[0].2);
    assert!(
        finding["evidence"]["first_failure"]["exception_class"]
            .as_str()
            .unwrap()
            .contains("PythonException"),
        "{}",
        finding["evidence"]
    );
    let advice = finding["recommendation"].as_str().unwrap();
    assert!(
        advice.contains("failing record or UDF") && advice.contains("restart the query"),
        "{advice}"
    );
    let out = sparkdiag(&["analyze", path.to_str().unwrap(), "--fail-on", "high"]);
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn each_streaming_problem_is_found_where_it_was_made_and_only_there() {
    let found = |scenario: &str| -> Vec<(String, String, String)> {
        rules_of(&report(&log(scenario)))
            .into_iter()
            .filter(|(rule, _, _)| rule.starts_with("ST"))
            .collect()
    };
    assert_eq!(found("healthy"), vec![], "a healthy query");
    let behind = found("behind");
    assert!(
        behind.iter().any(|(r, s, _)| r == "ST001" && s != "low"),
        "{behind:?}"
    );
    // A file source at its maxFilesPerTrigger: the rates agree and no batch grows, but every
    // batch runs back to back with the same 160 rows.
    let files = report(&log("behind_files"));
    let st001 = files["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "ST001")
        .unwrap_or_else(|| panic!("{:?}", rules_of(&files)));
    let title = st001["title"].as_str().unwrap();
    assert!(title.contains("each reading the same 160 rows"), "{title}");
    let advice = st001["recommendation"].as_str().unwrap();
    assert!(
        advice.contains("maxFilesPerTrigger") && advice.contains("not the query faster"),
        "{advice}"
    );
    assert!(
        !advice.contains("backlog grows by"),
        "the rates cannot show it: {advice}"
    );
    let state = found("state_no_watermark");
    assert!(
        state
            .iter()
            .any(|(r, _, t)| r == "ST004" && t.contains("no watermark")),
        "{state:?}"
    );
    let tiny = report(&log("tiny_200"));
    let st005 = tiny["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "ST005")
        .unwrap_or_else(|| panic!("{:?}", rules_of(&tiny)));
    assert!(
        st005["title"]
            .as_str()
            .unwrap()
            .contains("200 state partitions")
    );
    assert!(
        st005["recommendation"]
            .as_str()
            .unwrap()
            .contains("new checkpoint")
    );
    // The batch rule's "set spark.sql.shuffle.partitions" would do nothing for this query.
    assert!(
        !rules_of(&tiny)
            .iter()
            .any(|(r, _, _)| r == "PA001" || r == "CF002"),
        "{:?}",
        rules_of(&tiny)
    );
    // A batch rule on a stream says which micro-batch it is about.
    let sk002 = tiny["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "SK002")
        .unwrap_or_else(|| panic!("{:?}", rules_of(&tiny)));
    let named = &sk002["evidence"]["streaming_batches"][0];
    assert_eq!(named["query_name"], "count_mod5");
    assert!(!named["batch_ids"].as_array().unwrap().is_empty());
    let idle = found("idle");
    assert!(idle.iter().any(|(r, _, _)| r == "ST008"), "{idle:?}");
    let late = found("late_rows");
    assert!(late.iter().any(|(r, _, _)| r == "ST006"), "{late:?}");
    let dstreams = found("dstreams");
    assert!(
        dstreams
            .iter()
            .any(|(r, _, t)| r == "ST007" && t.contains("scheduling delay grew")),
        "{dstreams:?}"
    );
    for scenario in ["healthy", "stopped", "failed_udf", "connect"] {
        assert!(
            !found(scenario).iter().any(|(r, _, _)| r == "ST001"),
            "{scenario}"
        );
    }
}

/// Two client processes, `alice` and `bob`, on one server at once: each session is its client's
/// user, their operations' jobs interleave (bob's first query ran jobs 2 and 4 while alice's ran
/// 3 and 5), and the gaps between requests are the clients', not a driver loop to remove.
#[test]
fn a_connect_server_s_clients_are_told_apart_and_their_gaps_are_theirs() {
    let r = report(&log("connect_clients"));
    assert_eq!(r["application"]["workload"], "spark_connect");
    let sessions = r["streaming"]["connect"]["sessions"].as_array().unwrap();
    let mut users: Vec<&str> = sessions.iter().filter_map(|s| s["user"].as_str()).collect();
    users.sort_unstable();
    assert_eq!(users, ["alice", "bob"]);
    let jobs_of = |user: &str| -> Vec<i64> {
        let mut jobs: Vec<i64> = sessions
            .iter()
            .filter(|s| s["user"] == user)
            .flat_map(|s| s["operations"].as_array().unwrap())
            .flat_map(|o| o["job_ids"].as_array().unwrap())
            .map(|j| j.as_i64().unwrap())
            .collect();
        jobs.sort_unstable();
        jobs
    };
    let (alice, bob) = (jobs_of("alice"), jobs_of("bob"));
    assert_eq!(alice.len(), 6, "{alice:?}");
    assert_eq!(bob.len(), 6, "{bob:?}");
    // Interleaved: neither client's jobs form one run of ids.
    let interleaved = |jobs: &[i64]| jobs.windows(2).any(|w| w[1] - w[0] > 1);
    assert!(
        interleaved(&alice) && interleaved(&bob),
        "{alice:?} {bob:?}"
    );
    let what_if = &r["what_if"];
    assert!(
        what_if["headline"]
            .as_str()
            .unwrap()
            .starts_with("A Spark Connect server: its driver-only time is its clients"),
        "{}",
        what_if["headline"]
    );
    let kinds: Vec<&str> = what_if["advice"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|a| a["kind"].as_str())
        .collect();
    assert!(!kinds.contains(&"driver"), "{kinds:?}");
    let text = sparkdiag(&["analyze", log("connect_clients").to_str().unwrap()]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("(user alice): 3 operation(s)"), "{text}");
}

#[test]
fn connect_operations_add_up_to_the_application_s_jobs() {
    // Two sessions of one client process, then three (the server's own and two other client
    // processes whose queries interleaved on the server).
    for (scenario, session_count) in [("connect", 2), ("connect_clients", 3)] {
        operations_add_up(scenario, session_count);
    }
}

fn operations_add_up(scenario: &str, session_count: usize) {
    let path = log(scenario);
    let r = report(&path);
    let sessions = r["streaming"]["connect"]["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), session_count, "{scenario}: client sessions");
    let mut jobs: Vec<i64> = sessions
        .iter()
        .flat_map(|s| s["operations"].as_array().unwrap())
        .flat_map(|o| o["job_ids"].as_array().unwrap())
        .map(|j| j.as_i64().unwrap())
        .collect();
    jobs.sort_unstable();
    let mut all: Vec<i64> = r["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|j| j["job_id"].as_i64().unwrap())
        .collect();
    all.sort_unstable();
    // Every job of the server ran for one operation, and none for two.
    assert_eq!(jobs, all);
    let operations: usize = sessions
        .iter()
        .map(|s| s["operations"].as_array().unwrap().len())
        .sum();
    let tagged = events(&path)
        .iter()
        .filter(|e| {
            e["Event"]
                == "org.apache.spark.sql.connect.service.SparkListenerConnectOperationStarted"
        })
        .count();
    assert_eq!(operations, tagged);
    // Their task time and shuffle add up to the application's.
    let sum = |key: &str| -> i64 {
        sessions
            .iter()
            .flat_map(|s| s["operations"].as_array().unwrap())
            .map(|o| o[key].as_i64().unwrap())
            .sum()
    };
    for key in [
        "executor_run_time_ms",
        "shuffle_read_bytes",
        "shuffle_write_bytes",
    ] {
        assert_eq!(sum(key), r["summary"][key].as_i64().unwrap(), "{key}");
    }
    assert!(sum("executor_run_time_ms") > 0);
}

/// `yyyy/MM/dd HH:mm:ss` in UTC, as the History Server (run in UTC) prints a start time.
fn utc_seconds(ms: i64) -> String {
    let (days, secs) = (ms.div_euclid(86_400_000), ms.rem_euclid(86_400_000) / 1000);
    let (year, month, day) = sparkdiag_model::units::civil_from_days(days);
    format!(
        "{year:04}/{month:02}/{day:02} {:02}:{:02}:{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// Milliseconds from Spark's `formatDurationVerbose` ("46 seconds 797 ms", "2 minutes 5
/// seconds"), and the unit it was printed to: past a minute it drops the milliseconds.
fn verbose_ms(text: &str) -> (i64, i64) {
    let words: Vec<&str> = text.split_whitespace().collect();
    let (mut total, mut finest) = (0, i64::MAX);
    for pair in words.chunks(2) {
        let n: i64 = pair[0].parse().unwrap_or_else(|_| panic!("{text}"));
        let unit = match pair[1].trim_end_matches('s') {
            "m" => 1,
            "second" => 1000,
            "minute" => 60_000,
            "hour" => 3_600_000,
            other => panic!("unit {other} in {text}"),
        };
        total += n * unit;
        finest = finest.min(unit);
    }
    (total, if finest == 1 { 1 } else { 1000 })
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// What the History Server's Structured Streaming tab shows for each query, read from its pages
/// by `testdata/gen/shs_streaming.py` (`testdata/expected/streaming/`): status, start, duration,
/// average rates and latest batch on the list, and every batch's rates, rows, duration and
/// parts on the statistics page, against the report's `streaming.queries`.
#[test]
fn the_history_server_s_structured_streaming_tab_agrees_on_every_query() {
    let dir = testdata("expected/streaming");
    let (mut queries, mut batches) = (0, 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let r = report(&testdata(&format!(
            "logs/{}",
            expected["log"].as_str().unwrap()
        )));
        for shs in expected["queries"].as_array().unwrap() {
            let run_id = shs["run_id"].as_str().unwrap();
            let ours = r["streaming"]["queries"]
                .as_array()
                .unwrap()
                .iter()
                .find(|q| q["run_id"] == run_id)
                .unwrap_or_else(|| panic!("{name}: no query with run id {run_id}"));
            let at = format!("{name}, query {}", shs["name"]);
            assert_eq!(ours["name"], shs["name"], "{at}");
            assert_eq!(ours["id"], shs["id"], "{at}");
            let status = match ours["status"].as_str().unwrap() {
                "failed" => "FAILED",
                "running" => "RUNNING",
                _ => "FINISHED",
            };
            assert_eq!(status, shs["status"], "{at}: status {}", ours["status"]);
            let started = ours["started_ms"].as_i64().unwrap();
            assert_eq!(utc_seconds(started), shs["start_time"], "{at}: start");
            let ours_batches = ours["batches"].as_array().unwrap();
            let last = ours_batches.last().expect("a batch");
            // A finished query's duration is its last progress's timestamp less its start.
            let (duration, unit) = verbose_ms(shs["duration"].as_str().unwrap());
            let span = last["timestamp_ms"].as_i64().unwrap() - started;
            assert_eq!(
                span / unit * unit,
                duration,
                "{at}: duration {}",
                shs["duration"]
            );
            assert_eq!(last["batch_id"].to_string(), shs["latest_batch"], "{at}");
            // The list's averages are the means of the batches' rates, NaN counted as 0.
            for (rate, column) in [
                ("input_rows_per_second", "avg_input_per_s"),
                ("processed_rows_per_second", "avg_process_per_s"),
            ] {
                let sum: f64 = ours_batches
                    .iter()
                    .map(|b| b[rate].as_f64().unwrap_or(0.0))
                    .sum();
                let mean = format!("{:.2}", sum / ours_batches.len() as f64);
                assert_eq!(mean, shs[column], "{at}: {column}");
            }
            if status == "FAILED" {
                let exception = ours["exception"].as_str().unwrap();
                assert!(
                    exception.contains(shs["error"].as_str().unwrap()),
                    "{at}: {exception}"
                );
            }
            let shs_batches = shs["batches"].as_array().unwrap();
            assert_eq!(ours_batches.len(), shs_batches.len(), "{at}: batches");
            for (b, s) in ours_batches.iter().zip(shs_batches) {
                let at = format!("{at}, batch {}", s["batch_id"]);
                assert_eq!(b["batch_id"], s["batch_id"], "{at}");
                assert_eq!(b["timestamp_ms"], s["timestamp_ms"], "{at}");
                for (field, counted) in [
                    ("input_rows", b["input_rows"].as_f64()),
                    ("duration_ms", b["duration_ms"].as_f64()),
                    ("input_rows_per_second", b["input_rows_per_second"].as_f64()),
                    (
                        "processed_rows_per_second",
                        b["processed_rows_per_second"].as_f64(),
                    ),
                ] {
                    let shown = s[field].as_f64().unwrap();
                    // The page draws a NaN rate (no time elapsed) as 0.
                    let ours = counted.unwrap_or(0.0);
                    assert!(close(ours, shown), "{at}: {field} {ours} against {shown}");
                }
                // The chart leaves out triggerExecution, the whole of the others.
                let parts = s["duration_parts_ms"].as_object().unwrap();
                assert!(!parts.is_empty(), "{at}");
                for (part, shown) in parts {
                    let ours = b["duration_parts_ms"][part].as_f64();
                    assert_eq!(ours, shown.as_f64(), "{at}: {part}");
                }
                batches += 1;
            }
            queries += 1;
        }
    }
    assert!(
        queries >= 9 && batches >= 90,
        "{queries} queries, {batches} batches"
    );
}
