//! The real Spark 4.3 logs in `testdata/logs/` (written by the scripts in `testdata/gen/`): every
//! codec and layout reads to the counts an independent Python check wrote into `MANIFEST.tsv`.

use std::collections::HashMap;

use sparkdiag_model::{Application, StageStatus, TaskOutcome};

use crate::util::{json_of, load_all, testdata};

struct Row {
    path: String,
    cols: HashMap<String, String>,
}

fn manifest() -> Vec<Row> {
    let text = std::fs::read_to_string(testdata("logs/MANIFEST.tsv")).unwrap();
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap().split('\t').collect();
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let cols: HashMap<String, String> = header
                .iter()
                .zip(line.split('\t'))
                .map(|(h, v)| (h.to_string(), v.to_string()))
                .collect();
            Row {
                path: cols["path"].clone(),
                cols,
            }
        })
        .collect()
}

fn started_stages(app: &Application) -> usize {
    app.stages
        .iter()
        .filter(|s| {
            s.submission_ms.is_some()
                || !matches!(s.status, StageStatus::Pending | StageStatus::Skipped)
        })
        .count()
}

#[test]
fn every_fixture_reads_to_its_manifest_counts() {
    let rows = manifest();
    assert!(rows.len() >= 14, "manifest lists {} fixtures", rows.len());
    let mut layouts = std::collections::BTreeSet::new();
    let mut codecs = std::collections::BTreeSet::new();
    for row in &rows {
        let path = testdata(&format!("logs/{}", row.path));
        let all = load_all(&path);
        assert_eq!(all.len(), 1, "{}: one application", row.path);
        let (source, app) = &all[0];
        let c = |k: &str| row.cols[k].as_str();
        let n = |k: &str| {
            c(k).parse::<usize>()
                .unwrap_or_else(|_| panic!("{}: {k} = {}", row.path, c(k)))
        };
        let at = &row.path;
        assert_eq!(app.id.as_deref(), Some(c("app_id")), "{at}: app id");
        let version = c("spark_version").split_whitespace().next().unwrap();
        assert_eq!(
            app.spark_version
                .as_deref()
                .or(app.databricks_runtime.as_deref()),
            Some(version),
            "{at}: Spark version"
        );
        assert_eq!(app.jobs.len(), n("jobs"), "{at}: jobs");
        assert_eq!(
            app.jobs
                .iter()
                .filter(|j| j.status == sparkdiag_model::JobStatus::Failed)
                .count(),
            n("failed_jobs"),
            "{at}: failed jobs"
        );
        assert_eq!(started_stages(app), n("stages"), "{at}: stage attempts");
        assert_eq!(app.tasks.len(), n("tasks"), "{at}: tasks");
        assert_eq!(
            app.tasks
                .iter()
                .filter(|t| t.outcome == TaskOutcome::Failed)
                .count(),
            n("failed_tasks"),
            "{at}: failed tasks"
        );
        assert_eq!(
            app.executors.iter().filter(|e| e.cores.is_some()).count(),
            n("executors"),
            "{at}: executors added"
        );
        assert_eq!(
            source.complete(),
            c("complete") == "yes",
            "{at}: complete; warnings {:?}",
            source.warnings
        );
        let layout = c("layout")
            .rsplit(':')
            .next()
            .unwrap()
            .replace("single", "single-file");
        assert_eq!(source.layout.name(), layout, "{at}: layout");
        let ours: Vec<&str> = source
            .files
            .iter()
            .map(|f| f.codec.unwrap().name())
            .collect::<Vec<_>>();
        let mut ours_dedup = ours.clone();
        ours_dedup.dedup();
        assert_eq!(
            ours_dedup.join("+"),
            c("codec").replace("none", "plain"),
            "{at}: codecs"
        );
        layouts.insert(layout);
        codecs.extend(ours.into_iter().map(str::to_string));
    }
    let expected_layouts = ["databricks", "rolling", "single-file"];
    assert!(
        expected_layouts.iter().all(|l| layouts.contains(*l)),
        "{layouts:?}"
    );
    let expected_codecs = ["gzip", "lz4", "lzf", "plain", "snappy", "zstd"];
    assert!(
        expected_codecs.iter().all(|c| codecs.contains(*c)),
        "{codecs:?}"
    );
}

#[test]
fn the_same_workload_in_every_codec_models_the_same() {
    let shape = |codec: &str| {
        let dir = testdata(&format!("logs/single/{codec}"));
        let (source, app) = load_all(&dir).pop().unwrap();
        assert!(source.complete(), "{codec}: {:?}", source.warnings);
        // Separate Spark runs may number a join's two sides either way round: compare the stages
        // as a set of shapes, not by id.
        let mut stages: Vec<(String, i64, i64)> = app
            .stages
            .iter()
            .map(|s| {
                (
                    format!("{:?}", s.status),
                    s.num_tasks,
                    s.totals.shuffle_write_records,
                )
            })
            .collect();
        stages.sort();
        (app.jobs.len(), app.tasks.len(), stages)
    };
    let plain = shape("plain");
    assert!(plain.1 > 0);
    for codec in ["zstd", "lz4", "snappy", "lzf"] {
        assert_eq!(shape(codec), plain, "{codec} differs from plain");
    }
}

#[test]
fn a_directory_of_several_logs_yields_one_report_each() {
    let reports = json_of(&[
        "analyze",
        testdata("logs/multi").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let reports = reports
        .as_array()
        .expect("several applications give a JSON array");
    assert_eq!(reports.len(), 2);
    let mut layouts: Vec<&str> = reports
        .iter()
        .map(|r| r["source"]["layout"].as_str().unwrap())
        .collect();
    layouts.sort();
    assert_eq!(layouts, ["rolling", "single-file"]);
    assert!(reports.iter().all(|r| r["schema"] == "sparkdiag/report/v1"));
}

#[test]
fn databricks_folder_and_its_zip_read_alike_and_say_databricks() {
    let folder = json_of(&[
        "analyze",
        testdata("logs/databricks").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let zip = json_of(&[
        "analyze",
        testdata("logs/archives/0101-123456-abcdefgh.zip")
            .to_str()
            .unwrap(),
        "--format",
        "json",
    ]);
    for report in [&folder, &zip] {
        assert_eq!(report["application"]["platform"], "databricks");
        assert_eq!(report["application"]["spark_version"], "15.4.x-scala2.12");
        assert_eq!(report["source"]["layout"], "databricks");
        let files: Vec<&str> = report["source"]["files"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["path"].as_str().unwrap())
            .collect();
        assert!(
            files[0].ends_with("eventlog-2026-11-29--10-00.gz") && files[2].ends_with("/eventlog"),
            "{files:?}"
        );
    }
    assert_eq!(folder["summary"], zip["summary"]);
    assert_eq!(folder["stages"], zip["stages"]);
}

#[test]
fn a_killed_run_is_analysed_up_to_the_cut_and_says_so() {
    for path in ["logs/killed/single", "logs/killed/rolling"] {
        let report = json_of(&[
            "analyze",
            testdata(path).to_str().unwrap(),
            "--format",
            "json",
        ]);
        assert_eq!(report["application"]["status"], "incomplete", "{path}");
        assert_eq!(report["application"]["end_ms"], serde_json::Value::Null);
        assert!(report["application"]["duration_ms"].as_i64().unwrap() > 0);
        let source = &report["source"];
        assert_eq!(source["complete"], false);
        assert_eq!(source["in_progress"], true);
        assert_eq!(source["truncated"], true);
        let warnings: Vec<&str> = source["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| w.as_str().unwrap())
            .collect();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("zstd stream is cut short")),
            "{path}: {warnings:?}"
        );
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("no SparkListenerApplicationEnd")),
            "{path}: {warnings:?}"
        );
        // The stage that was running when the JVM died has tasks but no completion.
        let running = report["stages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["status"] == "active")
            .expect("an active stage");
        assert!(running["completed_tasks"].as_i64().unwrap() > 0);
    }
}

#[test]
fn a_failed_job_names_its_exception_and_failed_tasks() {
    let report = json_of(&[
        "analyze",
        testdata("logs/failed").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(report["summary"]["failed_jobs"], 1);
    assert_eq!(report["summary"]["failed_tasks"], 2);
    assert_eq!(report["summary"]["killed_tasks"], 1);
    let failed_job = report["jobs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|j| j["status"] == "failed")
        .unwrap();
    assert!(
        failed_job["failure"]
            .as_str()
            .unwrap()
            .contains("ValueError: bad row 1234"),
        "{}",
        failed_job["failure"]
    );
    let failed_stage = report["stages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["status"] == "failed")
        .unwrap();
    assert!(
        failed_stage["failure_reason"]
            .as_str()
            .unwrap()
            .contains("1234"),
        "the UDF's message names the bad order id"
    );
}

/// What a real Spark 4.3 History Server reported for each fixture (`testdata/expected/`, written by
/// `testdata/gen/shs_expectations.py`), compared field by field with our model.
#[test]
fn a_real_history_server_agrees_on_every_spark_4_fixture() {
    use crate::conformance::{
        Diffs, compare_executors, compare_jobs, compare_stage_list, compare_task_summary,
    };
    let dir = testdata("expected");
    let index = std::fs::read_to_string(dir.join("INDEX.tsv")).unwrap();
    let (mut apps, mut stages, mut summaries) = (0, 0, 0);
    for line in index.lines().skip(1).filter(|l| !l.trim().is_empty()) {
        let cols: Vec<&str> = line.split('\t').collect();
        let (name, app_id, log) = (cols[0], cols[1], cols[2]);
        let read = |file: &str| -> serde_json::Value {
            serde_json::from_str(&std::fs::read_to_string(dir.join(name).join(file)).unwrap())
                .unwrap()
        };
        let (_, app) = crate::util::load(&testdata(&format!("logs/{log}")));
        assert_eq!(app.id.as_deref(), Some(app_id), "{name}");
        let mut diffs = Diffs::default();

        let attempt = &read("application.json")["attempts"][0];
        let completed = attempt["completed"].as_bool().unwrap();
        diffs.eq("completed", completed, app.end_ms.is_some());
        diffs.num(
            "startTimeEpoch",
            &attempt["startTimeEpoch"],
            app.start_ms.unwrap(),
        );
        if completed {
            diffs.num(
                "endTimeEpoch",
                &attempt["endTimeEpoch"],
                app.end_ms.unwrap(),
            );
            diffs.num("duration", &attempt["duration"], app.duration_ms().unwrap());
        }
        diffs.eq(
            "sparkUser",
            attempt["sparkUser"].as_str(),
            app.user.as_deref(),
        );
        if let Some(code) = attempt.get("exitCode") {
            diffs.num("exitCode", code, app.exit_code.unwrap_or(-1));
        }

        stages += compare_stage_list(&read("stages.json"), &app, None, &mut diffs);
        compare_jobs(&read("jobs.json"), &app, true, &mut diffs);
        let executors = read("allexecutors.json");
        diffs.eq(
            "number of executors",
            executors.as_array().unwrap().len(),
            app.executors.len(),
        );
        compare_executors(&executors, &app, &mut diffs);
        for entry in std::fs::read_dir(dir.join(name)).unwrap() {
            let file = entry.unwrap().file_name().to_string_lossy().into_owned();
            if let Some(ids) = file
                .strip_prefix("taskSummary_")
                .and_then(|f| f.strip_suffix(".json"))
            {
                let (stage, attempt) = ids.split_once('_').unwrap();
                compare_task_summary(
                    &read(&file),
                    &app,
                    stage.parse().unwrap(),
                    attempt.parse().unwrap(),
                    &mut diffs,
                );
                summaries += 1;
            }
        }
        diffs.assert_none(name);
        apps += 1;
    }
    assert!(
        apps >= 12 && stages >= 100 && summaries >= 50,
        "{apps} apps, {stages} stages, {summaries} task summaries"
    );
}

#[test]
fn the_text_view_names_the_failure_and_what_the_log_is_missing() {
    let out = crate::util::sparkdiag(&["analyze", testdata("logs/failed").to_str().unwrap()]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Spark 4.3.0 · succeeded"), "{text}");
    assert!(text.contains("5 (1 failed)"), "{text}");
    let failure = text
        .lines()
        .find(|l| l.starts_with("Job ") && l.contains(" failed: "))
        .expect("a failed-job line");
    assert!(failure.contains("PYTHON_EXCEPTION"), "{failure}");

    let out =
        crate::util::sparkdiag(&["analyze", testdata("logs/killed/single").to_str().unwrap()]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.contains("· incomplete ·") && text.contains("INCOMPLETE (see warnings)"),
        "{text}"
    );
    assert!(
        text.contains("What the log is missing or could not be read"),
        "{text}"
    );
    assert!(text.contains("zstd stream is cut short"), "{text}");
}
