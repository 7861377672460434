//! `sparkdiag diff` on real before/after pairs (testdata/logs/diff/, testdata/gen/diff.py, and
//! the pattern twins): every number is checked against the two runs' own `analyze` reports.

use std::path::PathBuf;

use serde_json::Value;

use crate::util::{json_of, pattern_log, sparkdiag, sparkdiag_ok, testdata};

/// The one log of a testdata/logs/diff/<run>/ folder (file names change when regenerated).
fn run_log(run: &str) -> String {
    let dir = testdata(&format!("logs/diff/{run}"));
    let logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(logs.len(), 1, "one log in {}", dir.display());
    logs[0].to_string_lossy().into_owned()
}

fn report(log: &str) -> Value {
    json_of(&["analyze", log, "--format", "json"])
}

fn diff(before: &str, after: &str, extra: &[&str]) -> Value {
    let mut args = vec!["diff", before, after, "--format", "json"];
    args.extend_from_slice(extra);
    let d = json_of(&args);
    assert_eq!(d["schema"], "sparkdiag/diff/v1");
    d
}

fn metric<'a>(d: &'a Value, name: &str) -> &'a Value {
    d["metrics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["metric"] == name)
        .unwrap_or_else(|| panic!("no metric {name}"))
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

/// Whole-run numbers are the reports' own, side by side.
fn check_metrics_against_reports(d: &Value, rb: &Value, ra: &Value) {
    for (name, field) in [
        ("executor_run_time_ms", "executor_run_time_ms"),
        ("executor_cpu_time_ms", "executor_cpu_time_ms"),
        ("jvm_gc_time_ms", "jvm_gc_time_ms"),
        ("driver_time_ms", "driver_time_ms"),
        ("shuffle_read_bytes", "shuffle_read_bytes"),
        ("shuffle_write_bytes", "shuffle_write_bytes"),
        ("memory_spill_bytes", "memory_spill_bytes"),
        ("disk_spill_bytes", "disk_spill_bytes"),
        ("jobs", "jobs"),
        ("stages", "stages"),
        ("tasks", "tasks"),
    ] {
        let m = metric(d, name);
        let (b, a) = (i(&rb["summary"][field]), i(&ra["summary"][field]));
        assert_eq!(f(&m["before"]), b as f64, "{name} before");
        assert_eq!(f(&m["after"]), a as f64, "{name} after");
        assert_eq!(f(&m["change"]), (a - b) as f64, "{name} change");
        if b != 0 {
            assert!(
                (f(&m["ratio"]) - a as f64 / b as f64).abs() < 1e-9,
                "{name} ratio"
            );
        }
    }
    let rt = metric(d, "runtime_ms");
    assert_eq!(f(&rt["after"]), f(&ra["application"]["duration_ms"]));
    if rt["projected"] == false {
        assert_eq!(f(&rt["before"]), f(&rb["application"]["duration_ms"]));
    }
}

/// Rule codes of a report's findings.
fn rules(r: &Value) -> std::collections::BTreeSet<String> {
    r["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

fn codes(list: &Value) -> std::collections::BTreeSet<String> {
    list.as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect()
}

fn check_findings_against_reports(d: &Value, rb: &Value, ra: &Value) {
    let (b, a) = (rules(rb), rules(ra));
    assert_eq!(codes(&d["findings"]["resolved"]), &b - &a);
    assert_eq!(codes(&d["findings"]["new"]), &a - &b);
    assert_eq!(
        codes(&d["findings"]["remaining"]),
        b.intersection(&a).cloned().collect()
    );
    for c in d["findings"]["resolved"].as_array().unwrap() {
        let impact: i64 = rb["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == c["rule"])
            .map(|f| i(&f["impact_ms"]))
            .sum();
        assert_eq!(i(&c["impact_ms_before"]), impact, "{}", c["rule"]);
    }
}

/// Rows, files and bytes each write command of `r` wrote, summed: from the report's own SQL
/// plan nodes.
fn written(r: &Value) -> (i64, i64, i64, usize) {
    let mut out = (0, 0, 0, 0);
    for sql in r["sql"].as_array().unwrap() {
        for node in sql["plan_nodes"].as_array().unwrap() {
            if node["name"].as_str().unwrap().contains("InsertInto") {
                let m = &node["metrics"];
                out.0 += i(&m["number of output rows"]);
                out.1 += i(&m["number of written files"]);
                out.2 += i(&m["written output"]);
                out.3 += 1;
            }
        }
    }
    out
}

/// The SQL executions of `r` whose description starts with `prefix`: (count, finished, summed
/// duration of the finished).
fn executions(r: &Value, prefix: &str) -> (usize, usize, i64) {
    let mut out = (0, 0, 0);
    for sql in r["sql"].as_array().unwrap() {
        if sql["description"].as_str().unwrap().starts_with(prefix) {
            out.0 += 1;
            if let (Some(s), Some(e)) = (sql["start_ms"].as_i64(), sql["end_ms"].as_i64()) {
                out.1 += 1;
                out.2 += e - s;
            }
        }
    }
    out
}

fn work_writing(d: &Value) -> &Value {
    d["work"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["matched_by"] == "output destination")
        .expect("work matched by its output destination")
}

#[test]
fn the_loop_pair_tells_the_story_24_writes_became_one_with_the_same_rows() {
    let (before, after) = (run_log("loop-threadpool"), run_log("fixed"));
    let (rb, ra) = (report(&before), report(&after));
    let d = diff(&before, &after, &[]);
    check_metrics_against_reports(&d, &rb, &ra);
    check_findings_against_reports(&d, &rb, &ra);

    // Faster, and by the reports' own runtimes.
    let rt = metric(&d, "runtime_ms");
    assert!(f(&rt["after"]) < f(&rt["before"]), "the fix is faster");
    assert_eq!(rt["projected"], false);

    // Which work merged: the 24 monthly executions are one match with the one write.
    let w = work_writing(&d);
    let (count, finished, summed) = executions(&rb, "month ");
    assert_eq!(count, 24);
    assert_eq!(i(&w["before"]["count"]), count as i64);
    assert_eq!(i(&w["before"]["completed"]), finished as i64);
    assert_eq!(i(&w["before"]["time_ms"]), summed);
    assert_eq!(i(&w["after"]["count"]), 1);
    assert_eq!(i(&w["after"]["time_ms"]), executions(&ra, "all months").2);
    let jobs_b: usize = rb["sql"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["description"].as_str().unwrap().starts_with("month "))
        .map(|s| s["job_ids"].as_array().unwrap().len())
        .sum();
    assert_eq!(i(&w["before"]["jobs"]), jobs_b as i64);
    assert!(
        w["summary"].as_str().unwrap().starts_with(&format!(
            "24 SQL executions ({jobs_b} jobs) → 1 SQL execution"
        )),
        "{}",
        w["summary"]
    );
    // The matched stages add up to the work's stages and tasks, which are the report's stages
    // of those executions' jobs.
    let month_jobs: Vec<i64> = rb["sql"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["description"].as_str().unwrap().starts_with("month "))
        .flat_map(|s| s["job_ids"].as_array().unwrap().iter().map(i))
        .collect();
    let (mut stages_b, mut tasks_b) = (0, 0);
    for s in rb["stages"].as_array().unwrap() {
        let ran = s["submission_ms"].is_i64();
        if ran
            && s["job_ids"]
                .as_array()
                .unwrap()
                .iter()
                .any(|j| month_jobs.contains(&i(j)))
        {
            stages_b += 1;
            tasks_b += i(&s["completed_tasks"]) + i(&s["failed_tasks"]) + i(&s["killed_tasks"]);
        }
    }
    let sum = |key: &str| -> i64 {
        w["stages"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|s| s["before"][key].as_i64())
            .sum()
    };
    assert_eq!(sum("count"), stages_b);
    assert_eq!(i(&w["before"]["stages"]), stages_b);
    assert_eq!(sum("tasks"), tasks_b);
    assert_eq!(i(&w["before"]["tasks"]), tasks_b);
    // The fix's plan sorts by the partition column: the plans differ, the destination matches.
    assert_ne!(
        w["before"]["plan"]["fingerprint"],
        w["after"]["plan"]["fingerprint"]
    );

    // The outputs agree: the same rows to the same destination, as each report measured.
    assert_eq!(d["correctness"]["status"], "equal");
    let outputs = d["correctness"]["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 1);
    let o = &outputs[0];
    assert!(
        o["destination"]
            .as_str()
            .unwrap()
            .ends_with("/sales_by_month")
    );
    let (rows_b, files_b, bytes_b, writes_b) = written(&rb);
    let (rows_a, files_a, bytes_a, writes_a) = written(&ra);
    assert_eq!(rows_b, rows_a, "the fix writes the same rows");
    assert_eq!(i(&o["before"]["rows"]), rows_b);
    assert_eq!(i(&o["after"]["rows"]), rows_a);
    assert_eq!(i(&o["before"]["files"]), files_b);
    assert_eq!(i(&o["after"]["files"]), files_a);
    assert_eq!(i(&o["before"]["bytes"]), bytes_b);
    assert_eq!(i(&o["after"]["bytes"]), bytes_a);
    assert_eq!(i(&o["before"]["writes"]), writes_b as i64);
    assert_eq!(i(&o["after"]["writes"]), writes_a as i64);
    // 24 static partition directories before, 24 dynamic partitions after.
    assert_eq!(i(&o["before"]["partitions"]), 24);
    assert_eq!(i(&o["after"]["partitions"]), 24);
    // Rows read: the loop read the input 24 times, the fix once.
    let input = d["correctness"]["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["source"].as_str().unwrap().ends_with("/diff-in/sales"))
        .expect("the parquet input");
    assert_eq!(i(&input["reads_before"]), 24);
    assert_eq!(i(&input["reads_after"]), 1);

    // The driver-bound loop's findings went away.
    assert!(!d["findings"]["resolved"].as_array().unwrap().is_empty());
    assert!(d["headline"][0].as_str().unwrap().starts_with("Runtime"));

    // Core-hours are runtime × peak cores; a price turns them into money.
    let priced = diff(&before, &after, &["--price-per-core-hour", "2.5"]);
    for side in ["before", "after"] {
        let run = &priced[side];
        let r = if side == "before" { &rb } else { &ra };
        assert_eq!(run["duration_ms"], r["application"]["duration_ms"]);
        // Both ran in local[2]: the driver's 2 cores ran the tasks.
        assert_eq!(i(&run["cores"]), 2);
        let ch = f(&run["duration_ms"]) * 2.0 / 3_600_000.0;
        assert!((f(&metric(&priced, "core_hours")[side]) - ch).abs() < 1e-12);
        assert!((f(&metric(&priced, "cost")[side]) - ch * 2.5).abs() < 1e-12);
    }

    let text = sparkdiag(&["diff", &before, &after]);
    assert!(text.status.success());
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("24 SQL executions"), "{text}");
    assert!(text.contains("Outputs (equal)"), "{text}");
    assert!(!text.contains("OUTPUT CHANGED"), "{text}");
}

#[test]
fn the_serial_loop_pair_matches_the_same_way() {
    let (before, after) = (run_log("loop-serial"), run_log("fixed"));
    let (rb, ra) = (report(&before), report(&after));
    let d = diff(&before, &after, &[]);
    check_metrics_against_reports(&d, &rb, &ra);
    check_findings_against_reports(&d, &rb, &ra);
    let w = work_writing(&d);
    assert_eq!(i(&w["before"]["count"]), 24);
    assert_eq!(i(&w["after"]["count"]), 1);
    // Serial: the executions never overlap, so their wall time is their summed time.
    assert_eq!(w["before"]["wall_ms"], w["before"]["time_ms"]);
    assert_eq!(d["correctness"]["status"], "equal");
}

#[test]
fn a_fix_that_drops_rows_is_flagged_first_and_fails_ci() {
    let (before, after) = (run_log("fixed"), run_log("fixed-drops-rows"));
    let (rb, ra) = (report(&before), report(&after));
    let d = diff(&before, &after, &[]);
    check_metrics_against_reports(&d, &rb, &ra);
    assert_eq!(d["correctness"]["status"], "changed");
    let (rows_b, rows_a) = (written(&rb).0, written(&ra).0);
    assert!(rows_a < rows_b, "the changed filter drops rows");
    let o = &d["correctness"]["outputs"][0];
    assert_eq!(o["status"], "changed");
    assert_eq!(i(&o["before"]["rows"]), rows_b);
    assert_eq!(i(&o["after"]["rows"]), rows_a);
    let first = d["headline"][0].as_str().unwrap();
    assert!(first.starts_with("OUTPUT CHANGED"), "{first}");
    assert!(
        first.contains(&format!("{rows_b} rows written before, {rows_a} after")),
        "{first}"
    );
    // The added Filter changes the plan's shape: the write is matched by its destination, and
    // the diff says the operator tree changed.
    let w = work_writing(&d);
    let changes = w["plan_changes"].to_string();
    assert!(changes.contains("operator tree changed"), "{changes}");
    assert!(
        i(&w["after"]["plan"]["operators"]) > i(&w["before"]["plan"]["operators"]),
        "{changes}"
    );

    let out = sparkdiag(&["diff", &before, &after, "--fail-on-output-change"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let loud = text.lines().find(|l| l.starts_with("!! OUTPUT CHANGED"));
    assert!(loud.is_some(), "{text}");
    // Loud at the top: before the runtime line.
    assert!(text.find("!! OUTPUT CHANGED").unwrap() < text.find("* Runtime").unwrap());
    let md = sparkdiag(&["diff", &before, &after, "--format", "markdown"]);
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.contains("> [!CAUTION]"), "{md}");
}

#[test]
fn a_killed_loop_is_projected_from_the_iterations_it_finished() {
    let (before, after) = (run_log("loop-killed"), run_log("fixed"));
    let (rb, ra) = (report(&before), report(&after));
    assert_eq!(rb["application"]["status"], "incomplete");
    let d = diff(&before, &after, &[]);
    check_metrics_against_reports(&d, &rb, &ra);
    let p = &d["before"]["projection"];
    let (count, finished, _) = executions(&rb, "month ");
    assert!((2..24).contains(&finished), "{finished} of 24 months");
    assert_eq!(i(&p["iterations_done"]), finished as i64);
    // The whole series: the partitions the fix wrote to the same destination.
    let dynamic: i64 = ra["sql"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|s| s["plan_nodes"].as_array().unwrap())
        .filter_map(|n| n["metrics"]["number of dynamic part"].as_i64())
        .sum();
    assert_eq!(dynamic, 24);
    assert_eq!(i(&p["iterations_total"]), dynamic);
    // The projection, from the report's own times: startup, then the pace of the finished ones.
    let month_sql: Vec<&Value> = rb["sql"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["description"].as_str().unwrap().starts_with("month "))
        .collect();
    assert!(count >= finished);
    let first = month_sql
        .iter()
        .filter_map(|s| s["start_ms"].as_i64())
        .min()
        .unwrap();
    let last = month_sql
        .iter()
        .filter_map(|s| s["end_ms"].as_i64())
        .max()
        .unwrap();
    let app_start = i(&rb["application"]["start_ms"]);
    let expected =
        (first - app_start) + ((last - first) as f64 / finished as f64 * 24.0).round() as i64;
    assert_eq!(i(&p["duration_ms"]), expected);
    assert!(i(&p["duration_ms"]) > i(&rb["application"]["duration_ms"]));
    let rt = metric(&d, "runtime_ms");
    assert_eq!(rt["projected"], true);
    assert_eq!(f(&rt["before"]), expected as f64);
    // A killed run's partial output proves nothing either way, and the diff says so.
    assert_eq!(d["correctness"]["status"], "unknown");
    let notes = d["correctness"]["notes"].to_string();
    assert!(notes.contains("BEFORE did not finish"), "{notes}");
    let o = &d["correctness"]["outputs"][0];
    assert_eq!(i(&o["before"]["partitions"]), finished as i64);
    assert!(
        o["note"].as_str().unwrap().contains(", the same"),
        "{}",
        o["note"]
    );
    // And it is not a failure for CI: nothing shows the output changed.
    let out = sparkdiag(&["diff", &before, &after, "--fail-on-output-change"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("Projection of BEFORE"), "{text}");
}

#[test]
fn a_run_against_itself_shows_no_change_and_exits_0() {
    let log = run_log("loop-threadpool");
    let d = diff(&log, &log, &[]);
    for m in d["metrics"].as_array().unwrap() {
        assert_eq!(f(&m["change"]), 0.0, "{}", m["metric"]);
    }
    assert_eq!(d["correctness"]["status"], "equal");
    assert!(d["findings"]["resolved"].as_array().unwrap().is_empty());
    assert!(d["findings"]["new"].as_array().unwrap().is_empty());
    for w in d["work"].as_array().unwrap() {
        assert_ne!(w["matched_by"], "none", "{}", w["label"]);
        assert_eq!(w["before"]["count"], w["after"]["count"]);
        assert!(w["plan_changes"].as_array().unwrap().is_empty());
    }
    sparkdiag_ok(&[
        "diff",
        &log,
        &log,
        "--fail-on-regression",
        "0",
        "--fail-on-output-change",
    ]);
}

#[test]
fn a_slower_after_fails_the_regression_gate() {
    let (before, after) = (run_log("fixed"), run_log("loop-threadpool"));
    let out = sparkdiag(&["diff", &before, &after, "--fail-on-regression", "10"]);
    assert_eq!(out.status.code(), Some(1));
    // The gate is one line of the view: the rise measured, the limit, the verdict.
    let view = String::from_utf8_lossy(&out.stdout);
    let gate = view
        .lines()
        .find(|l| l.trim_start().starts_with("fail-on-regression: +"))
        .unwrap_or_else(|| panic!("{view}"));
    assert!(gate.ends_with("limit +10%: FAILED"), "{gate}");
    // A threshold above the actual rise passes.
    let d = diff(&before, &after, &[]);
    let rise = (f(&metric(&d, "runtime_ms")["ratio"]) - 1.0) * 100.0;
    let ch_rise = (f(&metric(&d, "core_hours")["ratio"]) - 1.0) * 100.0;
    let above = format!("{:.0}", rise.max(ch_rise) + 1.0);
    let out = sparkdiag(&["diff", &before, &after, "--fail-on-regression", &above]);
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn the_skew_pair_matches_by_plan_shape_and_shows_aqe_turned_on() {
    let (before, after) = (
        pattern_log("skew-join").to_string_lossy().into_owned(),
        pattern_log("skew-join-aqe").to_string_lossy().into_owned(),
    );
    let (rb, ra) = (report(&before), report(&after));
    let d = diff(&before, &after, &[]);
    check_metrics_against_reports(&d, &rb, &ra);
    check_findings_against_reports(&d, &rb, &ra);
    let join = d["work"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| {
            w["before"]["plan"]["joins"]
                .as_object()
                .is_some_and(|j| j.contains_key("SortMergeJoin"))
        })
        .expect("the join query");
    assert!(
        join["matched_by"]
            .as_str()
            .unwrap()
            .starts_with("plan shape")
    );
    let changes = join["plan_changes"].to_string();
    assert!(changes.contains("AQE: off → on"), "{changes}");
    // The skew finding of the before run is resolved.
    let resolved = codes(&d["findings"]["resolved"]);
    let skew: Vec<String> = rb["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["category"] == "skew")
        .map(|f| f["rule"].as_str().unwrap().to_string())
        .collect();
    assert!(!skew.is_empty());
    assert!(
        skew.iter().all(|r| resolved.contains(r)),
        "{skew:?} {resolved:?}"
    );
    // Neither run wrote anything: the diff says the logs hold nothing to compare.
    assert_eq!(d["correctness"]["status"], "no-output");
}

#[test]
fn the_partitions_pair_shows_aqe_coalescing_the_200_partitions() {
    let (before, after) = (run_log("partitions-default"), run_log("partitions-aqe"));
    let (rb, ra) = (report(&before), report(&after));
    let d = diff(&before, &after, &[]);
    check_metrics_against_reports(&d, &rb, &ra);
    check_findings_against_reports(&d, &rb, &ra);
    let w = &d["work"][0];
    assert_eq!(w["matched_by"], "plan shape and description");
    assert_eq!(w["before"]["plan"]["shuffle_partitions"][0], 200);
    assert_eq!(w["before"]["plan"]["aqe"], false);
    assert_eq!(w["after"]["plan"]["aqe"], true);
    let stage_tasks = |r: &Value| -> i64 {
        r["stages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["status"] != "skipped")
            .map(|s| i(&s["num_tasks"]))
            .sum()
    };
    assert_eq!(i(&w["before"]["tasks"]), stage_tasks(&rb));
    assert_eq!(i(&w["after"]["tasks"]), stage_tasks(&ra));
    assert!(i(&w["after"]["tasks"]) < i(&w["before"]["tasks"]));
    let changes = w["plan_changes"].to_string();
    assert!(changes.contains("tasks run"), "{changes}");
}

#[test]
fn markdown_and_html_carry_the_same_story() {
    let (before, after) = (run_log("loop-killed"), run_log("fixed"));
    let out = sparkdiag(&["diff", &before, &after, "--format", "html"]);
    assert!(out.status.success());
    let html = String::from_utf8(out.stdout).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    // Runtime bars (with the projection), the timelines and the per-query bars, drawn as
    // `analyze`'s charts are: each a figure, drawn wide and again for a phone.
    assert_eq!(html.matches("<figure>").count(), 3, "three charts");
    assert_eq!(
        html.matches("<svg").count(),
        6,
        "each drawn wide and narrow"
    );
    for title in ["Runtime", "Stage timelines", "Time per matched query"] {
        assert!(html.contains(&format!("aria-label=\"{title}\"")), "{title}");
    }
    assert!(html.contains("BEFORE (projected)"));
    assert!(!html.contains("<script"), "self-contained and inert");
    let out = sparkdiag(&["diff", &before, &after, "--format", "markdown"]);
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.starts_with("## sparkdiag diff:"));
    assert!(md.contains("| runtime |"), "{md}");
    assert!(md.contains("(projected)"), "{md}");
}

#[test]
fn bad_input_names_the_side_and_the_file() {
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("broken.zstd");
    std::fs::write(&bad, b"\x28\xB5\x2F\xFD\xFF\xFF garbage").unwrap();
    let good = run_log("fixed");
    let out = sparkdiag(&["diff", bad.to_str().unwrap(), &good]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("BEFORE") && err.contains("broken.zstd"),
        "{err}"
    );
    // A folder of several applications needs a name to pick one.
    let dir = tmp.path().join("night");
    std::fs::create_dir(&dir).unwrap();
    for run in ["partitions-default", "fixed"] {
        let log = PathBuf::from(run_log(run));
        std::fs::copy(&log, dir.join(log.file_name().unwrap())).unwrap();
    }
    let out = sparkdiag(&["diff", dir.to_str().unwrap(), &good]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--app-name"));
    let d = diff(
        dir.to_str().unwrap(),
        &good,
        &["--app-name", "sales-by-month"],
    );
    assert_eq!(d["before"]["name"], "sales-by-month");
    assert_eq!(d["correctness"]["status"], "equal");
}

/// Logs other tools test with (Spark 1.4 to 3.2, RDD-only, cut and edited ones): each diffed
/// against itself reads without a panic and shows no change; the one that is not a log is an
/// error naming it.
#[test]
fn real_world_logs_diffed_against_themselves_show_no_change() {
    let Some(dir) = crate::util::shared_opt("real-world") else {
        return;
    };
    let mut logs = Vec::new();
    let mut stack = vec![dir.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if !matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("md") | Some("json")
            ) {
                logs.push(p);
            }
        }
    }
    logs.sort();
    assert!(logs.len() >= 20, "{} logs", logs.len());
    for log in &logs {
        let log = log.to_str().unwrap();
        let out = sparkdiag(&[
            "diff",
            log,
            log,
            "--format",
            "json",
            "--fail-on-regression",
            "0",
        ]);
        if log.ends_with("invalid_log_file") {
            assert_eq!(out.status.code(), Some(2));
            assert!(String::from_utf8_lossy(&out.stderr).contains("invalid_log_file"));
            continue;
        }
        // An empty file (sparklint's `file_event_log_empty_test`) is no run to compare.
        if std::fs::metadata(log).is_ok_and(|m| m.len() == 0) {
            assert_eq!(out.status.code(), Some(2), "{log}");
            assert!(String::from_utf8_lossy(&out.stderr).contains("nothing readable"));
            continue;
        }
        let d: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{log}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
        // A run against itself never regresses (never exit 1); one that did not finish, or whose
        // runtime cannot be compared (no application start), cannot be judged: exit 3.
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 3)),
            "{log}: {code:?} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(
            d["gates"]["exit_code"],
            Value::from(code.unwrap_or(-1)),
            "{log}: the JSON says the exit code"
        );
        for m in d["metrics"].as_array().unwrap() {
            assert_eq!(f(&m["change"]), 0.0, "{log}: {}", m["metric"]);
        }
        assert!(d["findings"]["new"].as_array().unwrap().is_empty(), "{log}");
        assert!(
            d["work"]
                .as_array()
                .unwrap()
                .iter()
                .all(|w| w["matched_by"] != "none"),
            "{log}"
        );
    }

    // A still-running log of an application against its finished log: the same work, and the
    // diff says the running one did not finish rather than comparing its outputs.
    let events = dir.join("sparkscope/eventlog");
    let running = events.join("app-20231025121456-0004-eventLog-running");
    let finished = events.join("app-20231025121456-0004-eventLog-finished");
    let d = diff(running.to_str().unwrap(), finished.to_str().unwrap(), &[]);
    assert_eq!(d["before"]["status"], "incomplete");
    assert_eq!(d["after"]["status"], "succeeded");
    assert!(
        d["correctness"]["notes"]
            .to_string()
            .contains("BEFORE did not finish")
    );
    assert_eq!(
        d["work"][0]["before"]["count"],
        d["work"][0]["after"]["count"]
    );
}

/// The pattern twins wrote to different scratch paths: each run's only output is paired, and
/// the pairing is said, not hidden.
#[test]
fn outputs_under_different_paths_are_paired_and_said_to_be() {
    let (before, after) = (
        pattern_log("driver-loop-threadpool")
            .to_string_lossy()
            .into_owned(),
        pattern_log("driver-loop-fixed")
            .to_string_lossy()
            .into_owned(),
    );
    let (rb, ra) = (report(&before), report(&after));
    let d = diff(&before, &after, &[]);
    check_metrics_against_reports(&d, &rb, &ra);
    let o = &d["correctness"]["outputs"][0];
    assert!(
        o["destination"]
            .as_str()
            .unwrap()
            .ends_with("/driver-loop-threadpool")
    );
    assert!(
        o["after_destination"]
            .as_str()
            .unwrap()
            .ends_with("/driver-loop-fixed")
    );
    assert_eq!(i(&o["before"]["rows"]), written(&rb).0);
    assert_eq!(i(&o["after"]["rows"]), written(&ra).0);
    assert_eq!(d["correctness"]["status"], "equal");
    assert!(d["headline"].to_string().contains("different path"));
    // The paired destination also pairs the work.
    let w = work_writing(&d);
    assert_eq!(i(&w["before"]["count"]), 24);
    assert_eq!(i(&w["after"]["count"]), 1);
}

/// A killed loop against a fix that writes one unpartitioned table: no partitions count the
/// iterations, so the projection takes AFTER's rows at the rows per finished iteration, and
/// says what that assumes.
#[test]
fn a_killed_loop_against_an_unpartitioned_fix_is_projected_from_rows() {
    let (before, after) = (run_log("loop-killed"), run_log("fixed-unpartitioned"));
    let (rb, ra) = (report(&before), report(&after));
    let d = diff(&before, &after, &[]);
    check_metrics_against_reports(&d, &rb, &ra);
    let (_, finished, _) = executions(&rb, "month ");
    let (rows_b, rows_a) = (written(&rb).0, written(&ra).0);
    let total = (rows_a as f64 / (rows_b as f64 / finished as f64)).round() as i64;
    assert_eq!(total, 24);
    let p = &d["before"]["projection"];
    assert_eq!(i(&p["iterations_done"]), finished as i64);
    assert_eq!(i(&p["iterations_total"]), total);
    assert!(
        p["total_from"].as_str().unwrap().contains("assumes"),
        "{}",
        p["total_from"]
    );
    assert_eq!(d["correctness"]["status"], "unknown");
}

/// Two Spark 1.x shell sessions that wrote with RDD `saveAsTextFile`: the logs name no path and
/// hold no row counts, and the diff says so instead of calling the outputs equal.
#[test]
fn rdd_saves_are_reported_as_not_comparable() {
    let Some(events) = crate::util::shared_opt("spark-conformance/spark-events") else {
        return;
    };
    let before = events.join("local-1422981759269");
    let after = events.join("local-1425081759269");
    let d = diff(before.to_str().unwrap(), after.to_str().unwrap(), &[]);
    assert_eq!(d["correctness"]["status"], "unknown");
    let o = &d["correctness"]["outputs"][0];
    assert!(o["destination"].as_str().unwrap().starts_with("RDD saveAs"));
    assert_eq!(o["status"], "unknown");
    let notes = d["correctness"]["notes"].to_string();
    assert!(notes.contains("saveAsTextFile"), "{notes}");
    assert!(notes.contains("compare those outputs yourself"), "{notes}");
    assert_eq!(
        d["headline"].as_array().unwrap().last().unwrap(),
        "Outputs: cannot be compared from these logs (see notes)."
    );
}

/// Catalog writes in Spark 4: saveAsTable runs as nested executions (SaveAsV1TableCommand and
/// CreateDataSourceTableAsSelectCommand, without metrics, around the InsertIntoHadoopFsRelation
/// that counts). Only the counting writer is an output, so the run against itself is `equal`
/// with the report's own rows per table directory, not `unknown`.
#[test]
fn catalog_writes_count_once_per_table() {
    let log = run_log("tables");
    let r = report(&log);
    let d = diff(&log, &log, &["--fail-on-output-change"]);
    assert_eq!(d["correctness"]["status"], "equal");
    let outputs = d["correctness"]["outputs"].as_array().unwrap();
    assert_eq!(outputs.len(), 2, "t1 and t2");
    // Rows the report measured per table directory (static partitions folded in).
    let mut per_table: std::collections::BTreeMap<String, i64> = Default::default();
    let mut wrappers = 0;
    for sql in r["sql"].as_array().unwrap() {
        for node in sql["plan_nodes"].as_array().unwrap() {
            let name = node["name"].as_str().unwrap();
            if name.contains("TableAsSelect") || name.contains("SaveAsV1Table") {
                wrappers += 1;
            }
            if let Some(rows) = node["metrics"]["number of output rows"].as_i64()
                && name.contains("InsertInto")
            {
                let table = if sql["description"].as_str().unwrap().contains("partition") {
                    "t2"
                } else {
                    "t1"
                };
                *per_table.entry(table.to_string()).or_default() += rows;
            }
        }
    }
    assert!(wrappers >= 4, "the log has saveAsTable's wrapper commands");
    for o in outputs {
        let table = o["destination"]
            .as_str()
            .unwrap()
            .rsplit('/')
            .next()
            .unwrap();
        assert_eq!(i(&o["before"]["rows"]), per_table[table], "{table}");
        assert_eq!(o["status"], "equal");
    }
    assert_eq!(i(&outputs[1]["before"]["writes"]), 2);
    assert_eq!(i(&outputs[1]["before"]["partitions"]), 7 + 1);
}

/// A query rewritten in both description and plan (broadcast off → a broadcast join with AQE):
/// each run's only query, paired as such, with the join strategy and Exchanges that changed.
#[test]
fn a_rewritten_query_shows_its_join_strategy_change() {
    let (before, after) = (
        pattern_log("broadcast-disabled")
            .to_string_lossy()
            .into_owned(),
        pattern_log("healthy").to_string_lossy().into_owned(),
    );
    let (rb, ra) = (report(&before), report(&after));
    let d = diff(&before, &after, &[]);
    check_metrics_against_reports(&d, &rb, &ra);
    check_findings_against_reports(&d, &rb, &ra);
    let w = &d["work"][0];
    assert_eq!(w["matched_by"], "only SQL work left on each side");
    let changes = w["plan_changes"].to_string();
    assert!(
        changes.contains("join strategy: SortMergeJoin → BroadcastHashJoin"),
        "{changes}"
    );
    // The shuffle Exchanges of the plan that ran, as each report counted them.
    let exchanges = |r: &Value| i(&r["sql"][0]["exchanges"]);
    assert_eq!(i(&w["before"]["plan"]["exchanges"]), exchanges(&rb));
    assert_eq!(i(&w["after"]["plan"]["exchanges"]), exchanges(&ra));
    assert!(changes.contains(&format!(
        "shuffle Exchanges: {} → {}",
        exchanges(&rb),
        exchanges(&ra)
    )));
}

/// The one log of a testdata/logs/causes/<run>/ folder (testdata/gen/causes.py).
fn cause_log(run: &str) -> String {
    let dir = testdata(&format!("logs/causes/{run}"));
    let logs: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
        .collect();
    assert_eq!(logs.len(), 1, "one log in {}", dir.display());
    logs[0].to_string_lossy().into_owned()
}

fn top_cause(d: &Value) -> &Value {
    &d["causes"][0]
}

#[test]
fn every_planted_cause_is_named_first_with_its_evidence() {
    let base = cause_log("base");
    for (run, kind, title_says, evidence_says) in [
        ("grow", "data_growth", "the input grew", "rows read"),
        (
            "partitions",
            "configuration_change",
            "spark.sql.shuffle.partitions",
            "shuffle partitions",
        ),
        (
            "broadcast",
            "configuration_change",
            "spark.sql.autoBroadcastJoinThreshold",
            "SortMergeJoin",
        ),
        (
            "one-executor",
            "cluster_change",
            "2 → 1 executor",
            "replayed",
        ),
    ] {
        let d = diff(&base, &cause_log(run), &[]);
        let top = top_cause(&d);
        assert_eq!(top["kind"], kind, "{run}: {:#}", d["causes"]);
        assert!(
            top["title"].as_str().unwrap().contains(title_says),
            "{run}: {}",
            top["title"]
        );
        let evidence = format!("{}{}", top["evidence"], top["facts"]);
        assert!(evidence.contains(evidence_says), "{run}: {evidence}");
        assert_ne!(d["verdict"]["runtime"], "faster", "{run}: {}", d["verdict"]);
        // The verdict's sentence names the top cause.
        let sentence = d["verdict"]["sentence"].as_str().unwrap();
        assert!(
            sentence.contains(top["title"].as_str().unwrap()),
            "{run}: {sentence}"
        );
        // Shares never add up to more than the whole change.
        let shares: f64 = d["causes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["share"].as_f64())
            .sum();
        assert!(shares <= 1.0 + 1e-9, "{run}: {shares}");
    }
}

/// The skew pair: customer 0 holds half the orders behind `repartition(8, "customer")`, on
/// eight slots whose tasks wait rather than compute. The new skew is named first, measured by
/// the replay with the skewed task cut to its stage's median, with the new SK001 as evidence.
#[test]
fn the_skew_pair_names_new_skew() {
    let d = diff(&cause_log("wait-base"), &cause_log("wait-skew"), &[]);
    let top = top_cause(&d);
    assert_eq!(top["kind"], "skew_spill_failures", "{:#}", d["causes"]);
    assert_eq!(top["measured_by"], "replay", "{top:#}");
    assert!(
        top["title"].as_str().unwrap().contains("new skew"),
        "{}",
        top["title"]
    );
    assert!(top["share"].as_f64().unwrap() > 0.8, "{top:#}");
    assert!(top["evidence"].to_string().contains("new SK001"), "{top:#}");
    assert_eq!(d["verdict"]["runtime"], "slower", "{}", d["verdict"]);
    // The same rows reach the same files: skew moved time, not output.
    assert_eq!(d["verdict"]["output"], "same", "{}", d["verdict"]);
}

/// `--noise` is the job's own band when its owner knows it: tighter, the disabled broadcast
/// that moved the still pair by 10 % becomes its cause; wider, the skew pair's +28 s is within
/// it, and the new skew is still named, never called the same.
#[test]
fn the_noise_band_can_be_the_jobs_own() {
    let (still_b, still_a) = (cause_log("still-base"), cause_log("still-broadcast"));
    let tight = diff(&still_b, &still_a, &["--noise", "5%"]);
    assert_eq!(
        top_cause(&tight)["kind"],
        "configuration_change",
        "{:#}",
        tight["causes"]
    );
    assert_eq!(
        tight["verdict"]["runtime"], "slower",
        "{}",
        tight["verdict"]
    );
    let runtime_b = metric(&tight, "runtime_ms")["before"].as_f64().unwrap();
    assert_eq!(
        tight["verdict"]["noise_ms"].as_f64().unwrap(),
        (runtime_b * 0.05).round()
    );

    let wide = diff(
        &cause_log("wait-base"),
        &cause_log("wait-skew"),
        &["--noise", "1min"],
    );
    assert_eq!(wide["verdict"]["noise_ms"], 60_000);
    assert_eq!(wide["verdict"]["runtime"], "same", "{}", wide["verdict"]);
    let only = top_cause(&wide);
    assert_eq!(only["kind"], "nothing_material", "{only:#}");
    assert!(only.to_string().contains("SK001"), "{only:#}");

    for bad in ["0.25", "-5%", "soon"] {
        let out = sparkdiag(&["diff", &still_b, &still_a, &format!("--noise={bad}")]);
        assert_eq!(out.status.code(), Some(2), "{bad}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("--noise") && err.contains(bad), "{err}");
    }
}

/// Two runs of one streaming query: `count_mod5` with the default 200 shuffle partitions on
/// batches of a few rows, then after its fix (2 partitions, a new checkpoint). The query is
/// paired by name and its batches compared: the tasks per batch fall from 200-odd to a few,
/// and the batches get shorter; every view shows the query.
#[test]
fn two_runs_of_one_streaming_query_are_compared_batch_for_batch() {
    let (before, after) = (
        testdata("logs/streaming/tiny_200"),
        testdata("logs/streaming/tiny_fixed"),
    );
    let (before, after) = (before.to_str().unwrap(), after.to_str().unwrap());
    let d = diff(before, after, &[]);
    let queries = d["queries"].as_array().unwrap();
    assert_eq!(queries.len(), 1, "{queries:#?}");
    let q = &queries[0];
    assert_eq!(q["query"], "count_mod5");
    let (b, a) = (&q["before"], &q["after"]);
    assert!(b["median_tasks_per_batch"].as_i64().unwrap() >= 200, "{b}");
    assert!(a["median_tasks_per_batch"].as_i64().unwrap() <= 10, "{a}");
    assert!(
        a["median_batch_ms"].as_i64().unwrap() < b["median_batch_ms"].as_i64().unwrap(),
        "{q:#}"
    );
    assert!(
        a["batches"].as_u64().unwrap() > b["batches"].as_u64().unwrap(),
        "{q:#}"
    );
    assert_ne!(b["run_id"], a["run_id"]);
    // A stream runs as long as it is left to: the verdict is the batches', not the runtime's.
    assert_eq!(d["verdict"]["runtime"], "faster", "{}", d["verdict"]);
    let sentence = d["verdict"]["sentence"].as_str().unwrap();
    assert!(
        sentence.starts_with("Batches ") && sentence.contains("spark.sql.shuffle.partitions"),
        "{sentence}"
    );
    // The story leads with the batches, and a stream's sink is not an output change: two runs
    // of a stream write what arrived while each ran.
    let headline = d["headline"].to_string();
    assert!(
        headline.contains("Streaming query `count_mod5`: median batch")
            && !headline.contains("OUTPUT CHANGED"),
        "{headline}"
    );
    let sinks: Vec<&Value> = d["correctness"]["outputs"]
        .as_array()
        .unwrap()
        .iter()
        .collect();
    assert_eq!(sinks.len(), 1, "{sinks:#?}");
    assert_eq!(
        sinks[0]["destination"],
        "sink of micro-batches of count_mod5"
    );
    assert_eq!(sinks[0]["status"], "unknown");
    assert_eq!(d["work"][0]["label"], "micro-batches of count_mod5");
    for format in ["text", "markdown", "html"] {
        let out = sparkdiag(&["diff", before, after, "--format", format]);
        let page = String::from_utf8(out.stdout).unwrap();
        assert!(
            page.contains("count_mod5") && page.contains("tasks per batch (median)"),
            "{format}: {page}"
        );
    }
    // A batch run diffed with another has no query section.
    let plain = diff(&cause_log("base"), &cause_log("rerun"), &[]);
    assert!(plain.get("queries").is_none(), "{}", plain["queries"]);
}

/// One job and its settings on pyspark 3.5, then on 4.3 (`testdata/gen/trust.py spark-3.5` and
/// `spark-4.3-twin`): the Spark version change is named first. The settings that differ are
/// PySpark's own defaults (3.5 sets spark.rdd.compress), none known to matter, so they come
/// after it, still named.
#[test]
fn a_spark_upgrade_is_named_before_the_defaults_it_brought() {
    let (before, after) = (
        testdata("logs/trust/spark-3.5"),
        testdata("logs/trust/spark-4.3-twin"),
    );
    let d = diff(before.to_str().unwrap(), after.to_str().unwrap(), &[]);
    let top = top_cause(&d);
    assert_eq!(top["kind"], "version_change", "{:#}", d["causes"]);
    assert!(
        top["title"]
            .as_str()
            .unwrap()
            .contains("Spark 3.5.9 → 4.3.0"),
        "{top:#}"
    );
    let kinds: Vec<&str> = d["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["kind"].as_str().unwrap())
        .collect();
    let config = kinds.iter().position(|k| *k == "configuration_change");
    assert!(config.is_some_and(|i| i > 0), "{kinds:?}");
    assert!(
        d["causes"].to_string().contains("spark.rdd.compress"),
        "{:#}",
        d["causes"]
    );
}

/// A planted change that moved nothing (broadcast disabled on a run that JVM start-up and the
/// driver dominate): "nothing material changed", yet the setting and the join that did change
/// are named, never called the same.
#[test]
fn a_change_within_the_noise_is_named_not_called_the_same() {
    let d = diff(&cause_log("still-base"), &cause_log("still-broadcast"), &[]);
    let causes = d["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{:#}", d["causes"]);
    let only = &causes[0];
    assert_eq!(only["kind"], "nothing_material", "{only:#}");
    assert_eq!(d["verdict"]["runtime"], "same", "{}", d["verdict"]);
    let title = only["title"].as_str().unwrap();
    assert!(
        title.contains("spark.sql.autoBroadcastJoinThreshold")
            && title.contains("less than its noise")
            && !title.contains("the same input"),
        "{title}"
    );
    let evidence = only["evidence"].to_string();
    assert!(evidence.contains("SortMergeJoin"), "{evidence}");
    assert!(evidence.contains("within the noise band"), "{evidence}");
    assert!(
        only["properties"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["key"] == "spark.sql.autoBroadcastJoinThreshold"),
        "{only:#}"
    );
}

#[test]
fn the_growth_read_backwards_is_a_shrink() {
    let d = diff(&cause_log("grow"), &cause_log("base"), &[]);
    let top = top_cause(&d);
    assert_eq!(top["kind"], "data_growth", "{:#}", d["causes"]);
    assert!(top["title"].as_str().unwrap().contains("shrank"));
    assert!(i(&top["explained_ms"]) < 0);
}

#[test]
fn an_identical_rerun_says_nothing_material_changed() {
    let d = diff(&cause_log("base"), &cause_log("rerun"), &[]);
    let causes = d["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{:#}", d["causes"]);
    assert_eq!(causes[0]["kind"], "nothing_material");
    assert_eq!(d["verdict"]["runtime"], "same");
    assert_eq!(d["verdict"]["output"], "same");
    assert!(
        d["verdict"]["sentence"]
            .as_str()
            .unwrap()
            .ends_with("the same output: nothing material changed."),
        "{}",
        d["verdict"]
    );
}

#[test]
fn the_text_view_leads_with_the_verdict_in_words_and_colours_on_request() {
    let (before, after) = (cause_log("base"), cause_log("grow"));
    let out = sparkdiag_ok(&["diff", &before, &after]);
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    // The grow pair's runtime moved less than its noise band on a loaded machine, so the verdict
    // may read "About as fast" or "Slower"; either way it leads with the planted cause.
    assert!(first.starts_with("Verdict: "), "{first}");
    assert!(first.contains("the input grew 4.0×"), "{first}");
    assert!(!text.contains('\x1b'), "plain into a pipe");
    // Counts with thousands separators, changes in percent.
    assert!(
        text.contains("rows read: 602,000 → 2,402,000 (+299%)"),
        "{text}"
    );
    let coloured = sparkdiag_ok(&["diff", &before, &after, "--color", "always"]);
    let coloured = String::from_utf8(coloured.stdout).unwrap();
    assert!(
        coloured.starts_with("\x1b[") && coloured.contains("Verdict: "),
        "{coloured}"
    );
    let md = sparkdiag_ok(&["diff", &before, &after, "--format", "markdown"]);
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(md.contains("**Verdict:** "), "{md}");
    let html = sparkdiag_ok(&["diff", &before, &after, "--format", "html"]);
    let html = String::from_utf8(html.stdout).unwrap();
    assert!(html.contains("<p class=\"verdict "), "{html}");
}

/// Seconds with one decimal, as docs/diff.md's table writes them: "-32.9 s".
fn seconds(ms: i64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// Each rerun of `testdata/logs/fixes/` applied exactly the fix sparkdiag recommended for one
/// of BEFORE's findings (`testdata/gen/fixes.py`): the diff says so finding by finding, with the
/// saving BEFORE's report predicted, the wall clock of the work the finding was about on each
/// side, and the error; and docs/diff.md's table of predicted against measured is what the
/// diff computes, row for row.
#[test]
fn a_rerun_with_the_recommended_fix_is_checked_against_the_prediction() {
    let docs = std::fs::read_to_string(crate::util::repo().join("docs/diff.md")).unwrap();
    let side = |case: &str, side: &str| {
        let dir = testdata(&format!("logs/fixes/{case}/{side}"));
        let logs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .filter(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
            .collect();
        assert_eq!(logs.len(), 1, "{}", dir.display());
        logs[0].to_string_lossy().into_owned()
    };
    let mut rules = std::collections::BTreeSet::new();
    for (case, rule) in [
        ("tiny-partitions", "PA001"),
        ("skew-join", "SK001"),
        ("skew-join-broadcast", "EX003"),
        ("driver-loop", "DR002"),
        ("broadcast-disabled", "EX003"),
    ] {
        let (before, after) = (side(case, "before"), side(case, "after"));
        let d = diff(&before, &after, &[]);
        assert_eq!(d["same_job"]["same"], true, "{case}: {}", d["same_job"]);
        let fix = d["fixes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["rule"] == rule)
            .unwrap_or_else(|| panic!("{case}: no check of {rule}'s fix: {}", d["fixes"]));
        assert!(
            !fix["applied"].as_array().unwrap().is_empty(),
            "{case}: {fix}"
        );
        // The prediction is BEFORE's own report's, and the fix took the finding away.
        let predicted = report(&before)["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["rule"] == rule)
            // A finding whose saving another fix holds ("in EX003") predicted its own
            // change's replay all the same.
            .map(|f| match i(&f["impact_ms"]) {
                0 => i(&f["evidence"]["replayed_ms"]),
                ms => ms,
            })
            .max()
            .unwrap();
        assert_eq!(i(&fix["predicted_ms"]), predicted, "{case}");
        assert_eq!(fix["resolved"], true, "{case}: {fix}");
        let (b, a) = (i(&fix["before_ms"]), i(&fix["after_ms"]));
        assert!(
            b > 0 && a > 0 && b <= i(&d["before"]["duration_ms"]),
            "{case}: {fix}"
        );
        assert_eq!(i(&fix["measured_ms"]), b - a, "{case}");
        assert_eq!(i(&fix["error_ms"]), predicted - (b - a), "{case}");
        let headline = d["headline"].as_array().unwrap();
        assert!(
            headline.iter().any(|h| h
                .as_str()
                .unwrap()
                .starts_with(&format!("Fix for {rule} applied"))),
            "{case}: {headline:?}"
        );
        let row_start = format!("| {case} | {rule} |");
        let row_end = format!(
            "| {} | {} → {} | {} | {} |",
            seconds(predicted),
            seconds(b),
            seconds(a),
            seconds(b - a),
            seconds(predicted - (b - a))
        );
        assert!(
            docs.lines()
                .any(|l| l.starts_with(&row_start) && l.ends_with(&row_end)),
            "docs/diff.md has no row `{row_start} ... {row_end}`"
        );
        rules.insert(rule);
    }
    assert!(rules.len() >= 4, "four rules' fixes checked: {rules:?}");
}

/// Two unrelated applications (a skewed join and a groupBy into 2000 partitions) are not the
/// same job: the diff says so and gives no verdict or cause; the same run against itself is.
#[test]
fn two_unrelated_runs_are_said_not_to_be_the_same_job() {
    let (a, b) = (
        pattern_log("skew-join").to_string_lossy().into_owned(),
        pattern_log("tiny-partitions")
            .to_string_lossy()
            .into_owned(),
    );
    let d = diff(&a, &b, &[]);
    assert_eq!(d["same_job"]["same"], false, "{}", d["same_job"]);
    assert_eq!(d["verdict"]["comparable"], false);
    let sentence = d["verdict"]["sentence"].as_str().unwrap();
    assert!(
        sentence.contains("do not look like the same job") && !sentence.contains("because"),
        "{sentence}"
    );
    assert!(
        d["headline"][0]
            .as_str()
            .unwrap()
            .starts_with("NOT THE SAME JOB"),
        "{}",
        d["headline"]
    );
    let causes = d["causes"].as_array().unwrap();
    assert_eq!(causes.len(), 1, "{causes:?}");
    assert_eq!(causes[0]["kind"], "not_comparable");
    let same = diff(&a, &a, &[]);
    assert_eq!(same["same_job"]["same"], true);
    assert_eq!(same["verdict"]["comparable"], true);
}

/// A run whose job now fails is headlined by the failure, not "Faster": a healthy run against
/// one whose only job failed (the driver's `maxResultSize`); a failure cannot be a speed-up.
#[test]
fn a_new_failure_is_the_headline() {
    let ok = pattern_log("healthy").to_string_lossy().into_owned();
    let failed = std::fs::read_dir(testdata("logs/memory/driver-max-result"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "zstd"))
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let d = diff(&ok, &failed, &[]);
    let failure = d["verdict"]["new_failure"].as_str().unwrap_or_default();
    assert!(failure.starts_with("job "), "{}", d["verdict"]);
    let sentence = d["verdict"]["sentence"].as_str().unwrap();
    assert!(
        sentence.starts_with("AFTER failed where BEFORE did not") && !sentence.contains("Faster"),
        "{sentence}"
    );
    assert!(
        d["headline"][0]
            .as_str()
            .unwrap()
            .starts_with("NEW FAILURE"),
        "{}",
        d["headline"]
    );
    // The other way round, nothing new failed.
    assert!(diff(&failed, &ok, &[])["verdict"]["new_failure"].is_null());
}
