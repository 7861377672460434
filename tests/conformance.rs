//! Replays every log of Apache Spark's History Server test suite and compares our model with
//! the History Server's expected REST responses (`../shared/spark-conformance/`). A fresh clone
//! has no `../shared`: each test then prints one line saying so and is skipped (CI fails instead).

use std::collections::HashMap;

use serde_json::Value;
use sparkdiag_model::quantile::shs_quantiles;
use sparkdiag_model::{AppStatus, Application, StageStatus, Task, TaskOutcome};

use std::path::PathBuf;

use crate::util::{load, shared_opt};

struct Fixtures {
    /// `../shared/spark-conformance`.
    root: PathBuf,
    /// (app id, attempt id or "") -> application.
    apps: HashMap<(String, String), Application>,
}

impl Fixtures {
    /// `None` (after one line on stderr) when `../shared` is absent outside CI.
    fn load() -> Option<Fixtures> {
        let root = shared_opt("spark-conformance")?;
        let dir = root.join("spark-events");
        let mut apps = HashMap::new();
        for entry in std::fs::read_dir(&dir).unwrap() {
            let (source, app) = load(&entry.unwrap().path());
            assert!(source.complete(), "{}: {:?}", source.input, source.warnings);
            let key = (
                app.id.clone().unwrap(),
                app.attempt_id.clone().unwrap_or_default(),
            );
            assert!(
                apps.insert(key.clone(), app).is_none(),
                "two logs for {key:?}"
            );
        }
        assert_eq!(apps.len(), 18);
        Some(Fixtures { root, apps })
    }

    fn app(&self, id: &str, attempt: &str) -> &Application {
        &self.apps[&(id.to_string(), attempt.to_string())]
    }

    fn expectation(&self, name: &str) -> Value {
        let path = self.root.join("expectations").join(name);
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    /// Every case of `cases.tsv` whose REST path matches `filter`, with its app id and attempt.
    fn cases(&self, filter: impl Fn(&str) -> bool) -> Vec<(String, String, String, String)> {
        let tsv = std::fs::read_to_string(self.root.join("cases.tsv")).unwrap();
        let mut out = Vec::new();
        for line in tsv.lines().skip(1) {
            let cols: Vec<&str> = line.split('\t').collect();
            let (file, rest) = (cols[0], cols[1]);
            let path = rest.split('?').next().unwrap();
            if !filter(rest) {
                continue;
            }
            let parts: Vec<&str> = path.split('/').collect();
            let app_id = parts[1].to_string();
            let attempt = parts
                .get(2)
                .filter(|p| p.chars().all(|c| c.is_ascii_digit()))
                .map(|s| s.to_string())
                .unwrap_or_default();
            out.push((file.to_string(), rest.to_string(), app_id, attempt));
        }
        assert!(!out.is_empty());
        out
    }
}

/// `2015-02-03T16:42:59.720GMT` -> epoch milliseconds.
pub fn epoch_ms(date: &str) -> i64 {
    let d = date.trim_end_matches("GMT");
    let num = |r: std::ops::Range<usize>| d[r].parse::<i64>().unwrap();
    let (y, m, day) = (num(0..4), num(5..7), num(8..10));
    let (h, min, s, ms) = (num(11..13), num(14..16), num(17..19), num(20..23));
    // Days from civil (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    ((days * 24 + h) * 60 + min) * 60_000 + s * 1000 + ms
}

/// Collects every difference so one run shows them all.
#[derive(Default)]
pub struct Diffs(pub Vec<String>);

impl Diffs {
    pub fn num(&mut self, what: &str, expected: &Value, ours: i64) {
        match expected.as_f64() {
            Some(e) if e == ours as f64 => {}
            Some(e) => self
                .0
                .push(format!("{what}: History Server {e}, ours {ours}")),
            None => self
                .0
                .push(format!("{what}: History Server has no number ({expected})")),
        }
    }

    pub fn eq<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, expected: T, ours: T) {
        if expected != ours {
            self.0.push(format!(
                "{what}: History Server {expected:?}, ours {ours:?}"
            ));
        }
    }

    pub fn assert_none(self, context: &str) {
        assert!(
            self.0.is_empty(),
            "{context}: {} difference(s):\n  {}",
            self.0.len(),
            self.0.join("\n  ")
        );
    }
}

pub fn date_field(v: &Value, key: &str) -> Option<i64> {
    v.get(key).and_then(Value::as_str).map(epoch_ms)
}

#[test]
fn stage_lists_match_the_history_server() {
    let Some(fx) = Fixtures::load() else { return };
    let mut checked = 0;
    for (file, rest, app_id, attempt) in
        fx.cases(|r| r.ends_with("/stages") || r.contains("/stages?status="))
    {
        let app = fx.app(&app_id, &attempt);
        let wanted = rest.split("status=").nth(1);
        let mut diffs = Diffs::default();
        checked += compare_stage_list(&fx.expectation(&file), app, wanted, &mut diffs);
        diffs.assert_none(&file);
    }
    assert!(checked >= 10, "only {checked} stage attempts compared");
}

/// Compares a History Server `stages` list (optionally filtered by status) with our stage attempts.
pub fn compare_stage_list(
    expected: &Value,
    app: &Application,
    status: Option<&str>,
    diffs: &mut Diffs,
) -> usize {
    let mut checked = 0;
    let ours: Vec<_> = app
        .stages
        .iter()
        .filter(|s| status.is_none_or(|w| status_name(s.status).eq_ignore_ascii_case(w)))
        .collect();
    diffs.eq(
        "number of stage attempts",
        expected.as_array().unwrap().len(),
        ours.len(),
    );
    for e in expected.as_array().unwrap() {
        let (id, att) = (
            e["stageId"].as_i64().unwrap(),
            e["attemptId"].as_i64().unwrap(),
        );
        let Some(s) = ours
            .iter()
            .find(|s| s.stage_id == id && s.attempt_id == att)
        else {
            diffs.0.push(format!("stage {id}.{att} missing"));
            continue;
        };
        let at = |k: &str| format!("stage {id}.{att} {k}");
        diffs.eq(
            &at("status"),
            e["status"].as_str().unwrap(),
            status_name(s.status),
        );
        diffs.eq(&at("name"), e["name"].as_str().unwrap(), s.name.as_str());
        diffs.num(&at("numTasks"), &e["numTasks"], s.num_tasks);
        diffs.num(
            &at("numCompleteTasks"),
            &e["numCompleteTasks"],
            s.completed_tasks,
        );
        diffs.num(&at("numFailedTasks"), &e["numFailedTasks"], s.failed_tasks);
        diffs.num(&at("numKilledTasks"), &e["numKilledTasks"], s.killed_tasks);
        diffs.eq(
            &at("submissionTime"),
            date_field(e, "submissionTime"),
            s.submission_ms,
        );
        diffs.eq(
            &at("completionTime"),
            date_field(e, "completionTime"),
            s.completion_ms,
        );
        diffs.eq(
            &at("firstTaskLaunchedTime"),
            date_field(e, "firstTaskLaunchedTime"),
            s.first_task_launched_ms,
        );
        diffs.eq(
            &at("failureReason"),
            e.get("failureReason").and_then(Value::as_str),
            s.failure_reason.as_deref(),
        );
        let t = &s.totals;
        for (key, ours) in [
            ("executorRunTime", t.executor_run_time),
            ("executorCpuTime", t.executor_cpu_time),
            ("executorDeserializeTime", t.executor_deserialize_time),
            (
                "executorDeserializeCpuTime",
                t.executor_deserialize_cpu_time,
            ),
            ("resultSize", t.result_size),
            ("jvmGcTime", t.jvm_gc_time),
            ("resultSerializationTime", t.result_serialization_time),
            ("memoryBytesSpilled", t.memory_bytes_spilled),
            ("diskBytesSpilled", t.disk_bytes_spilled),
            ("peakExecutionMemory", t.peak_execution_memory),
            ("inputBytes", t.input_bytes),
            ("inputRecords", t.input_records),
            ("outputBytes", t.output_bytes),
            ("outputRecords", t.output_records),
            (
                "shuffleRemoteBlocksFetched",
                t.shuffle_remote_blocks_fetched,
            ),
            ("shuffleLocalBlocksFetched", t.shuffle_local_blocks_fetched),
            ("shuffleFetchWaitTime", t.shuffle_fetch_wait_time),
            ("shuffleRemoteBytesRead", t.shuffle_remote_bytes_read),
            (
                "shuffleRemoteBytesReadToDisk",
                t.shuffle_remote_bytes_read_to_disk,
            ),
            ("shuffleLocalBytesRead", t.shuffle_local_bytes_read),
            ("shuffleReadBytes", t.shuffle_read_bytes()),
            ("shuffleReadRecords", t.shuffle_read_records),
            ("shuffleWriteBytes", t.shuffle_write_bytes),
            ("shuffleWriteTime", t.shuffle_write_time),
            ("shuffleWriteRecords", t.shuffle_write_records),
        ] {
            diffs.num(&at(key), &e[key], ours);
        }
        if let Some(peaks) = e.get("peakExecutorMetrics") {
            let ours = s.peak_executor_metrics.unwrap_or_default();
            for (name, value) in sparkdiag_model::ExecutorMetrics::NAMES
                .iter()
                .zip(ours.values())
            {
                diffs.num(
                    &at(&format!("peakExecutorMetrics.{name}")),
                    &peaks[*name],
                    value,
                );
            }
        }
        checked += 1;
    }
    checked
}

fn status_name(s: StageStatus) -> &'static str {
    match s {
        StageStatus::Pending => "PENDING",
        StageStatus::Active => "ACTIVE",
        StageStatus::Complete => "COMPLETE",
        StageStatus::Failed => "FAILED",
        StageStatus::Skipped => "SKIPPED",
    }
}

#[test]
fn job_lists_match_the_history_server() {
    let Some(fx) = Fixtures::load() else { return };
    let mut checked = 0;
    for (file, rest, app_id, attempt) in fx.cases(|r| r.contains("/jobs")) {
        let app = fx.app(&app_id, &attempt);
        let mut diffs = Diffs::default();
        checked += compare_jobs(
            &fx.expectation(&file),
            app,
            rest.ends_with("/jobs"),
            &mut diffs,
        );
        diffs.assert_none(&file);
    }
    assert!(checked >= 8, "only {checked} jobs compared");
}

/// Compares History Server jobs (a list, or one job) with ours; `whole_list` also checks the count.
pub fn compare_jobs(
    expected: &Value,
    app: &Application,
    whole_list: bool,
    diffs: &mut Diffs,
) -> usize {
    let list = match expected.as_array() {
        Some(list) => list.clone(),
        None => vec![expected.clone()],
    };
    if whole_list {
        diffs.eq("number of jobs", list.len(), app.jobs.len());
    }
    let mut checked = 0;
    for e in &list {
        let id = e["jobId"].as_i64().unwrap();
        let Some(j) = app.jobs.iter().find(|j| j.job_id == id) else {
            diffs.0.push(format!("job {id} missing"));
            continue;
        };
        let at = |k: &str| format!("job {id} {k}");
        let status = format!("{:?}", j.status).to_uppercase();
        diffs.eq(
            &at("status"),
            e["status"].as_str().unwrap(),
            status.as_str(),
        );
        diffs.eq(&at("name"), e["name"].as_str().unwrap(), j.name.as_str());
        diffs.eq(
            &at("description"),
            e.get("description").and_then(Value::as_str),
            j.description.as_deref(),
        );
        diffs.eq(
            &at("jobGroup"),
            e.get("jobGroup").and_then(Value::as_str),
            j.job_group.as_deref(),
        );
        let stage_ids: Vec<i64> = e["stageIds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        diffs.eq(&at("stageIds"), stage_ids, j.stage_ids.clone());
        if let Some(t) = date_field(e, "submissionTime") {
            diffs.eq(&at("submissionTime"), Some(t), j.submission_ms);
        }
        if let Some(t) = date_field(e, "completionTime") {
            diffs.eq(&at("completionTime"), Some(t), j.completion_ms);
        }
        diffs.num(&at("numTasks"), &e["numTasks"], j.num_tasks);
        diffs.num(
            &at("numCompletedTasks"),
            &e["numCompletedTasks"],
            j.completed_tasks,
        );
        diffs.num(&at("numFailedTasks"), &e["numFailedTasks"], j.failed_tasks);
        diffs.num(&at("numKilledTasks"), &e["numKilledTasks"], j.killed_tasks);
        diffs.num(
            &at("numSkippedTasks"),
            &e["numSkippedTasks"],
            j.skipped_tasks,
        );
        diffs.num(
            &at("numCompletedStages"),
            &e["numCompletedStages"],
            j.completed_stages.len() as i64,
        );
        diffs.num(
            &at("numSkippedStages"),
            &e["numSkippedStages"],
            j.skipped_stages.len() as i64,
        );
        diffs.num(
            &at("numFailedStages"),
            &e["numFailedStages"],
            j.failed_stages,
        );
        checked += 1;
    }
    checked
}

#[test]
fn executor_totals_match_the_history_server() {
    let Some(fx) = Fixtures::load() else { return };
    let mut checked = 0;
    for (file, _, app_id, attempt) in fx.cases(|r| r.ends_with("/executors")) {
        let app = fx.app(&app_id, &attempt);
        let mut diffs = Diffs::default();
        checked += compare_executors(&fx.expectation(&file), app, &mut diffs);
        diffs.assert_none(&file);
    }
    assert!(checked >= 10, "only {checked} executors compared");
}

/// Compares each executor the History Server lists with ours.
pub fn compare_executors(expected: &Value, app: &Application, diffs: &mut Diffs) -> usize {
    let mut checked = 0;
    for e in expected.as_array().unwrap() {
        let id = e["id"].as_str().unwrap();
        let Some(x) = app.executors.iter().find(|x| x.id == id) else {
            diffs.0.push(format!("executor {id} missing"));
            continue;
        };
        let at = |k: &str| format!("executor {id} {k}");
        diffs.eq(
            &at("host"),
            e["hostPort"]
                .as_str()
                .unwrap()
                .rsplit_once(':')
                .map_or("", |h| h.0),
            x.host.as_str(),
        );
        diffs.num(
            &at("completedTasks"),
            &e["completedTasks"],
            x.completed_tasks,
        );
        diffs.num(&at("failedTasks"), &e["failedTasks"], x.failed_tasks);
        diffs.num(&at("totalTasks"), &e["totalTasks"], x.total_tasks);
        diffs.num(&at("totalInputBytes"), &e["totalInputBytes"], x.input_bytes);
        diffs.num(
            &at("totalShuffleRead"),
            &e["totalShuffleRead"],
            x.shuffle_read_bytes,
        );
        diffs.num(
            &at("totalShuffleWrite"),
            &e["totalShuffleWrite"],
            x.shuffle_write_bytes,
        );
        diffs.num(&at("maxMemory"), &e["maxMemory"], x.max_memory.unwrap_or(0));
        diffs.eq(&at("addTime"), date_field(e, "addTime"), x.added_ms);
        diffs.eq(&at("removeTime"), date_field(e, "removeTime"), x.removed_ms);
        diffs.eq(
            &at("removeReason"),
            e.get("removeReason").and_then(Value::as_str),
            x.removed_reason.as_deref(),
        );
        if id == "driver" {
            // The History Server shows the application's duration and the driver JVM's own GC
            // time here, not sums over the tasks the driver ran (AppStatusStore.replaceExec).
            // For an application without an end the History Server measures to the log file's
            // modification time, which the log does not hold: only completed ones compare.
            if let Some(duration) = app.end_ms.and(app.duration_ms()) {
                diffs.num(
                    &at("totalDuration (application duration)"),
                    &e["totalDuration"],
                    duration,
                );
            }
            let gc = x.peak_metrics.map_or(x.jvm_gc_time_ms, |p| p.total_gc_time);
            diffs.num(&at("totalGCTime (driver JVM)"), &e["totalGCTime"], gc);
        } else {
            diffs.num(&at("totalDuration"), &e["totalDuration"], x.task_time_ms);
            diffs.num(&at("totalGCTime"), &e["totalGCTime"], x.jvm_gc_time_ms);
            diffs.num(&at("totalCores"), &e["totalCores"], x.cores.unwrap_or(0));
        }
        if let Some(peaks) = e.get("peakMemoryMetrics") {
            let ours = x.peak_metrics.unwrap_or_default();
            for (name, value) in sparkdiag_model::ExecutorMetrics::NAMES
                .iter()
                .zip(ours.values())
            {
                diffs.num(
                    &at(&format!("peakMemoryMetrics.{name}")),
                    &peaks[*name],
                    value,
                );
            }
        } else {
            diffs.eq(
                &at("has peakMemoryMetrics"),
                false,
                x.peak_metrics.is_some(),
            );
        }
        checked += 1;
    }
    checked
}

/// A taskSummary key, its sub-key, and how to read that metric from one of our tasks.
type MetricGetter = (&'static str, Option<&'static str>, fn(&Task) -> u64);

/// The model keeps a task's CPU time in whole milliseconds, and the History Server's quantiles
/// are tasks' own values (an order statistic, never an average), so each of its nanosecond
/// quantiles rounded down to the millisecond is exactly the quantile of the model's figures.
const CPU_TIME_NS_PER_UNIT: f64 = 1_000_000.0;

#[test]
fn task_summary_quantiles_match_the_history_server() {
    let Some(fx) = Fixtures::load() else { return };
    let mut checked = 0;
    for (file, rest, app_id, attempt) in
        fx.cases(|r| r.contains("/taskSummary") || r.contains("withSummaries=true"))
    {
        let app = fx.app(&app_id, &attempt);
        let expected = fx.expectation(&file);
        let (summary, path) = match expected.get("taskMetricsDistributions") {
            Some(dist) => (dist.clone(), rest.split('?').next().unwrap().to_string()),
            None => (
                expected.clone(),
                rest.split("/taskSummary").next().unwrap().to_string(),
            ),
        };
        let parts: Vec<&str> = path.split('/').collect();
        let n = parts.len();
        let (stage_id, att): (i64, i64) =
            (parts[n - 2].parse().unwrap(), parts[n - 1].parse().unwrap());
        let mut diffs = Diffs::default();
        compare_task_summary(&summary, app, stage_id, att, &mut diffs);
        diffs.assert_none(&file);
        checked += 1;
    }
    assert_eq!(checked, 4, "the four quantile fixtures");
}

/// Compares a History Server `taskSummary` with our quantiles of the same metrics.
pub fn compare_task_summary(
    summary: &Value,
    app: &Application,
    stage_id: i64,
    att: i64,
    diffs: &mut Diffs,
) {
    let stage = app
        .stages
        .iter()
        .find(|s| s.stage_id == stage_id && s.attempt_id == att)
        .unwrap();
    let quantiles: Vec<f64> = summary["quantiles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q.as_f64().unwrap())
        .collect();
    let stage_tasks = app.stage_tasks(stage);
    let tasks: Vec<&Task> = stage_tasks
        .iter()
        .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics)
        .collect();
    let metrics: [MetricGetter; 20] = [
        ("duration", None, |t| t.duration_ms.into()),
        ("executorRunTime", None, |t| t.metrics.run_ms.into()),
        // Kept in whole milliseconds: compared with the History Server's nanoseconds rounded
        // down the same way (see `CPU_TIME_NS_PER_UNIT`).
        ("executorCpuTime", None, |t| {
            t.metrics.cpu_ms.map_or(0, u64::from)
        }),
        ("executorDeserializeTime", None, |t| {
            t.metrics.deserialize_ms.into()
        }),
        ("jvmGcTime", None, |t| t.metrics.gc_ms.into()),
        ("resultSize", None, |t| t.metrics.result_size),
        ("resultSerializationTime", None, |t| {
            t.metrics.result_serialization_ms.into()
        }),
        ("gettingResultTime", None, |t| t.getting_result_ms.into()),
        ("schedulerDelay", None, |t| t.scheduler_delay_ms().into()),
        ("peakExecutionMemory", None, |t| {
            t.metrics.peak_execution_memory
        }),
        ("memoryBytesSpilled", None, |t| t.metrics.memory_spill),
        ("diskBytesSpilled", None, |t| t.metrics.disk_spill),
        ("inputMetrics", Some("bytesRead"), |t| t.metrics.input_bytes),
        ("inputMetrics", Some("recordsRead"), |t| {
            t.metrics.input_records
        }),
        ("outputMetrics", Some("bytesWritten"), |t| {
            t.metrics.output_bytes
        }),
        ("outputMetrics", Some("recordsWritten"), |t| {
            t.metrics.output_records
        }),
        ("shuffleReadMetrics", Some("readBytes"), |t| {
            t.metrics.shuffle_read_bytes
        }),
        ("shuffleReadMetrics", Some("readRecords"), |t| {
            t.metrics.shuffle_read_records
        }),
        ("shuffleReadMetrics", Some("fetchWaitTime"), |t| {
            t.metrics.fetch_wait_ms.into()
        }),
        ("shuffleWriteMetrics", Some("writeBytes"), |t| {
            t.metrics.shuffle_write_bytes
        }),
    ];
    for (key, sub, get) in metrics {
        let e = match sub {
            Some(sub) => &summary[key][sub],
            None => &summary[key],
        };
        if tasks.is_empty() {
            diffs.0.push(format!(
                "stage {stage_id}.{att}: no successful task with metrics"
            ));
            return;
        }
        // The History Server's quirk (AppStatusStore.taskSummary): these three are picked from
        // every task (duration) or every task with metrics, failed and killed included, at the
        // index computed from the count of successful tasks. sparkdiag's own quantiles use the
        // successful tasks only; here we reproduce the quirk to check the History Server's figures.
        let ours = if matches!(key, "duration" | "schedulerDelay" | "gettingResultTime") {
            let all = stage_tasks
                .iter()
                .filter(|t| key == "duration" || t.has_metrics);
            let mut values: Vec<u64> = all.map(get).collect();
            values.sort_unstable();
            quantiles
                .iter()
                .map(|&q| values[sparkdiag_model::quantile::shs_index(tasks.len(), q)])
                .collect()
        } else {
            let mut values: Vec<u64> = tasks.iter().map(|t| get(t)).collect();
            shs_quantiles(&mut values, &quantiles).unwrap()
        };
        let e: Vec<f64> = e
            .as_array()
            .unwrap_or_else(|| panic!("taskSummary has no {key}"))
            .iter()
            .map(|v| v.as_f64().unwrap())
            // Only the CPU time is rounded: every other figure is compared as printed.
            .map(|v| match key {
                "executorCpuTime" => (v / CPU_TIME_NS_PER_UNIT).floor(),
                _ => v,
            })
            .collect();
        let ours: Vec<f64> = ours.into_iter().map(|v| v as f64).collect();
        diffs.eq(
            &format!(
                "stage {stage_id}.{att} {key}{}",
                sub.map(|s| format!(".{s}")).unwrap_or_default()
            ),
            e,
            ours,
        );
    }
}

#[test]
fn application_info_matches_the_history_server() {
    let Some(fx) = Fixtures::load() else { return };
    let list = fx.expectation("application_list_json_expectation.json");
    let mut diffs = Diffs::default();
    let mut attempts = 0;
    for e in list.as_array().unwrap() {
        let id = e["id"].as_str().unwrap();
        for a in e["attempts"].as_array().unwrap() {
            let attempt = a
                .get("attemptId")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let app = fx.app(id, attempt);
            let at = |k: &str| format!("{id}/{attempt} {k}");
            diffs.eq(&at("name"), e["name"].as_str(), app.name.as_deref());
            diffs.num(
                &at("startTimeEpoch"),
                &a["startTimeEpoch"],
                app.start_ms.unwrap(),
            );
            diffs.num(
                &at("endTimeEpoch"),
                &a["endTimeEpoch"],
                app.end_ms.unwrap_or(-1),
            );
            diffs.num(&at("duration"), &a["duration"], app.duration_ms().unwrap());
            diffs.eq(
                &at("completed"),
                a["completed"].as_bool().unwrap(),
                app.status() != AppStatus::Incomplete,
            );
            diffs.eq(
                &at("sparkUser"),
                a["sparkUser"].as_str(),
                app.user.as_deref(),
            );
            diffs.eq(
                &at("appSparkVersion"),
                a["appSparkVersion"].as_str().unwrap(),
                app.spark_version.as_deref().unwrap_or(""),
            );
            attempts += 1;
        }
    }
    diffs.assert_none("application list");
    assert_eq!(attempts, fx.apps.len(), "every log is one listed attempt");
}

#[test]
fn history_server_dates_parse_to_epoch_ms() {
    assert_eq!(epoch_ms("2015-02-03T16:42:59.720GMT"), 1_422_981_779_720);
}
