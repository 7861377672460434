//! What a fix saves, on real logs: each replayable finding's saving is the what-if's replay of
//! its change, the same figure the what-if lists; `summary.recoverable_ms` is the replay with
//! every fix applied; findings that cost money claim no wall-clock time; a failed job's time is
//! shown as lost, not saved.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sparkdiag_analysis::{Options, analyze};

use crate::util::{pattern_log, real_log_roots, testdata};

/// Every application under `root` (files and log folders, three levels down), with its label
/// and JSON report; inputs that cannot be read are left out (other tests cover them).
fn reports_under(root: &Path) -> Vec<(String, Value)> {
    let config = sparkdiag_rules::Config::default();
    let mut out = Vec::new();
    let mut stack: Vec<(PathBuf, usize)> = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
        paths.sort();
        for path in paths {
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if name.ends_with(".md") || name.ends_with(".tsv") || name.starts_with('.') {
                continue;
            }
            // Rolling logs are folders Spark names; other folders hold more logs.
            let rolling = name.starts_with("eventlog_v2_") || name.starts_with("rolling");
            if path.is_dir() && !rolling {
                if depth < 3 {
                    stack.push((path, depth + 1));
                }
                continue;
            }
            let Ok(inputs) = sparkdiag_eventlog::discover(path.to_str().unwrap()) else {
                continue;
            };
            for input in inputs {
                if let Ok(a) = analyze(&input, &Options::new(&config)) {
                    out.push((
                        input.display.clone(),
                        serde_json::to_value(&a.report).unwrap(),
                    ));
                }
            }
        }
    }
    out
}

fn every_report() -> Vec<(String, Value)> {
    real_log_roots()
        .iter()
        .flat_map(|root| reports_under(root))
        .collect()
}

fn report_of(path: &Path) -> Value {
    let config = sparkdiag_rules::Config::default();
    let inputs = sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap();
    let a = analyze(&inputs[0], &Options::new(&config)).unwrap();
    serde_json::to_value(&a.report).unwrap()
}

fn findings(report: &Value) -> &[Value] {
    report["findings"].as_array().map_or(&[], |f| f.as_slice())
}

fn scenarios(report: &Value) -> &[Value] {
    report["what_if"]["scenarios"]
        .as_array()
        .map_or(&[], |s| s.as_slice())
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or(0)
}

/// The what-if scenario that replays `finding`'s change.
fn scenario_of<'a>(report: &'a Value, finding: &Value) -> Option<&'a Value> {
    let change = &finding["counterfactual"]["change"];
    scenarios(report)
        .iter()
        .find(|s| &s["change"] == change && !change.is_null())
}

/// Each replayed finding names a scenario of the what-if, and its saving is that scenario's
/// figure: today's replay less the scenario's (capped only to keep the sum within the run).
fn check_replayed_findings_agree(label: &str, report: &Value) -> usize {
    let today = i(&report["what_if"]["replay_today_ms"]);
    let mut agreed = 0;
    for f in findings(report) {
        let cf = &f["counterfactual"];
        if cf["replayed"] != true {
            continue;
        }
        let s = scenario_of(report, f).unwrap_or_else(|| {
            panic!(
                "{label}: {} replayed {} but the what-if lists no such scenario",
                f["rule"], cf["change"]
            )
        });
        assert!(
            s["findings"]
                .as_array()
                .unwrap()
                .iter()
                .any(|r| r == &f["rule"]),
            "{label}: scenario {} does not name {}",
            s["label"],
            f["rule"]
        );
        if f["evidence"]["same_change_as"].is_string() {
            assert_eq!(
                i(&f["impact_ms"]),
                0,
                "{label}: a shared change counts once"
            );
            continue;
        }
        let replayed = (today - i(&s["predicted_ms"]))
            .max(0)
            .min(i(&report["what_if"]["bounds"]["wall_ms"]));
        assert_eq!(
            i(&f["evidence"]["replayed_ms"]),
            replayed,
            "{label}: {} replayed {} but its scenario {} predicts {} of today's {}",
            f["rule"],
            f["evidence"]["replayed_ms"],
            s["label"],
            s["predicted_ms"],
            today
        );
        let before_cap = f["evidence"]["capped_from_ms"]
            .as_i64()
            .unwrap_or(i(&f["impact_ms"]));
        assert!(i(&f["impact_ms"]) <= before_cap);
        if f["evidence"]["time_attributed_to"].is_null() {
            assert_eq!(before_cap, replayed, "{label}: {}", f["rule"]);
        } else {
            // Part of its time was a larger finding's: it keeps that share of the replay.
            assert!(before_cap <= replayed, "{label}: {}", f["rule"]);
        }
        agreed += 1;
    }
    agreed
}

#[test]
fn the_top_findings_change_is_a_what_if_scenario_with_the_same_figure() {
    let mut tops_replayed = 0;
    let mut agreed = 0;
    for dir in ["logs/patterns", "logs/scaling"] {
        for (label, report) in reports_under(&testdata(dir)) {
            agreed += check_replayed_findings_agree(&label, &report);
            let Some(top) = findings(&report).first() else {
                continue;
            };
            if top["counterfactual"]["replayed"] == true && i(&top["impact_ms"]) > 0 {
                let s = scenario_of(&report, top).unwrap();
                assert!(i(&s["predicted_ms"]) < i(&report["what_if"]["replay_today_ms"]));
                tops_replayed += 1;
            }
        }
    }
    // The planted problems are skew, stragglers, tiny tasks and driver loops: replayable.
    assert!(
        tops_replayed >= 5,
        "only {tops_replayed} logs' top finding was replayed"
    );
    assert!(agreed >= 8, "only {agreed} replayed findings checked");
}

#[test]
fn on_every_real_log_replayed_savings_agree_with_the_what_if() {
    let all = every_report();
    assert!(all.len() >= 40, "only {} applications", all.len());
    for (label, report) in &all {
        check_replayed_findings_agree(label, report);
    }
}

#[test]
fn no_money_only_finding_claims_wall_clock_on_any_real_log() {
    let mut costs = 0;
    for (label, report) in every_report() {
        for f in findings(&report) {
            let money = f["impact_kind"] == "cost";
            if f["rule"] == "UT001" {
                assert!(money, "{label}: UT001 is idle cores, money: {f}");
            }
            if money {
                costs += 1;
                assert_eq!(i(&f["impact_ms"]), 0, "{label}: {f}");
                assert!(
                    f["impact_core_hours"].as_f64().unwrap() > 0.0,
                    "{label}: {f}"
                );
                assert!(
                    !f["title"].as_str().unwrap().contains("wall-clock"),
                    "{label}: {}",
                    f["title"]
                );
            }
        }
    }
    // The bundled logs are short runs under UT001's core-hour floor; without it, the serial
    // driver loop's idle cores are a finding, and still money, not time.
    let mut config = sparkdiag_rules::Config::default();
    config.set_from_arg("UT001.min_core_h=0").unwrap();
    let inputs =
        sparkdiag_eventlog::discover(pattern_log("driver-loop-serial").to_str().unwrap()).unwrap();
    let a = analyze(&inputs[0], &Options::new(&config)).unwrap();
    let report = serde_json::to_value(&a.report).unwrap();
    let idle = findings(&report)
        .iter()
        .find(|f| f["rule"] == "UT001")
        .expect("UT001 fires without its floor");
    assert_eq!(idle["impact_kind"], "cost", "{idle}");
    assert_eq!(i(&idle["impact_ms"]), 0);
    assert!(idle["impact_core_hours"].as_f64().unwrap() > 0.0);
    assert_eq!(
        idle["counterfactual"]["change"]["kind"],
        "release_idle_executors"
    );
    costs += 1;
    assert!(costs >= 1);
}

#[test]
fn recoverable_time_is_the_every_fix_replay_and_within_the_runtime() {
    let mut with_fixes = 0;
    for (label, report) in every_report() {
        let runtime = i(&report["application"]["duration_ms"]);
        let recoverable = i(&report["summary"]["recoverable_ms"]);
        let beyond = i(&report["summary"]["estimated_beyond_replay_ms"]);
        assert!(
            recoverable + beyond <= runtime.max(0),
            "{label}: {recoverable} + {beyond} ms recoverable in {runtime} ms"
        );
        let sum: i64 = findings(&report).iter().map(|f| i(&f["impact_ms"])).sum();
        assert!(
            sum <= runtime.max(0),
            "{label}: findings add up to {sum} ms in {runtime}"
        );
        match scenarios(&report).iter().find(|s| s["every_fix"] == true) {
            Some(all) => {
                let today = i(&report["what_if"]["replay_today_ms"]);
                let saving = (today - i(&all["predicted_ms"])).clamp(0, runtime.max(0));
                assert_eq!(recoverable, saving, "{label}");
                // Together never worse than the best fix alone.
                let best = scenarios(&report)
                    .iter()
                    .filter(|s| !s["change"].is_null())
                    .map(|s| i(&s["predicted_ms"]))
                    .min()
                    .unwrap();
                assert!(i(&all["predicted_ms"]) <= best, "{label}");
                with_fixes += 1;
            }
            None => assert_eq!(recoverable, 0, "{label}"),
        }
    }
    assert!(
        with_fixes >= 10,
        "only {with_fixes} logs had a replayed fix"
    );
}

/// Issue 23's disagreement: the top finding says "about N partitions would do", and the what-if
/// must size the cores for that partitioning, saying the partitioning comes first.
#[test]
fn tiny_tasks_come_before_more_cores_in_the_what_if() {
    let report = report_of(&pattern_log("tiny-partitions"));
    let top = &findings(&report)[0];
    assert_eq!(top["rule"], "PA001", "{top}");
    assert_eq!(top["counterfactual"]["change"]["kind"], "merge_partitions");
    assert_eq!(top["counterfactual"]["replayed"], true);
    let s = scenario_of(&report, top).unwrap();
    assert!(s["label"].as_str().unwrap().starts_with("PA001: "), "{s}");
    let advice = report["what_if"]["advice"].as_array().unwrap();
    let cores = advice.iter().find(|a| a["kind"] == "cores").unwrap();
    let text = cores["text"].as_str().unwrap();
    assert!(
        text.starts_with("Fix the partitioning first (PA001"),
        "{text}"
    );
}

/// A failed job's time is what the run lost, not what a fix saves.
#[test]
fn a_failed_jobs_time_is_shown_as_lost() {
    let mut seen = 0;
    for (label, report) in reports_under(&testdata("logs/failed")) {
        for f in findings(&report).iter().filter(|f| f["rule"] == "FA001") {
            if i(&f["impact_ms"]) > 0 {
                assert_eq!(f["impact_kind"], "lost", "{label}: {f}");
                assert!(f["counterfactual"].is_null(), "{label}");
                seen += 1;
            }
        }
    }
    assert!(seen >= 1, "no failed job with time in logs/failed");
}

/// The replayed saving of merging the tiny partitions against the same job run with fewer
/// partitions (`tiny-partitions-fixed`, written by the same script): the replay keeps every
/// other task and the driver's time as measured, so it may fall short of the real saving, but
/// must neither exceed it nor miss most of it.
#[test]
fn merging_tiny_partitions_saves_about_what_the_fixed_run_saved() {
    let tiny = report_of(&pattern_log("tiny-partitions"));
    let fixed = report_of(&pattern_log("tiny-partitions-fixed"));
    let pa001 = findings(&tiny)
        .iter()
        .find(|f| f["rule"] == "PA001")
        .unwrap();
    let predicted = i(&pa001["impact_ms"]);
    let real = i(&tiny["application"]["duration_ms"]) - i(&fixed["application"]["duration_ms"]);
    assert!(real > 0, "the fixed run was faster");
    let ratio = predicted as f64 / real as f64;
    assert!(
        (0.5..=1.1).contains(&ratio),
        "PA001 replays a saving of {predicted} ms; the fixed run saved {real} ms ({ratio:.2})"
    );
}

fn report_with(path: &Path, sets: &[&str]) -> Value {
    let mut config = sparkdiag_rules::Config::default();
    for set in sets {
        config.set_from_arg(set).unwrap();
    }
    let inputs = sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap();
    let a = analyze(&inputs[0], &Options::new(&config)).unwrap();
    serde_json::to_value(&a.report).unwrap()
}

fn finding<'a>(report: &'a Value, rule: &str) -> &'a Value {
    findings(report)
        .iter()
        .find(|f| f["rule"] == rule)
        .unwrap_or_else(|| panic!("no {rule} among {:?}", findings(report)))
}

/// GC, spill and failed attempts are replayed: each task less the GC beyond the healthy share
/// (not all of it), less its disk spill's I/O, or the failed attempts left out; the figure is
/// the what-if's scenario, and never more than what the rule measured.
#[test]
fn gc_spill_and_failed_attempts_are_replayed_not_summed() {
    let gc = report_of(&pattern_log("gc-pressure"));
    let gc001 = finding(&gc, "GC001");
    assert_eq!(gc001["counterfactual"]["change"]["kind"], "reduce_gc");
    assert_eq!(gc001["counterfactual"]["change"]["healthy_permille"], 50);
    assert_eq!(gc001["counterfactual"]["replayed"], true);
    let saved = i(&gc001["evidence"]["replayed_ms"]);
    assert!(saved > 0, "{gc001}");
    // Less than all the GC of the heavy executors: the healthy share stays.
    assert!(saved < i(&gc001["evidence"]["gc_time_ms"]), "{gc001}");
    check_replayed_findings_agree("gc-pressure", &gc);

    let spill = report_with(&pattern_log("spill"), &["SP001.min_disk_mb=32"]);
    let sp001 = finding(&spill, "SP001");
    assert_eq!(sp001["counterfactual"]["change"]["kind"], "avoid_spill");
    assert_eq!(sp001["counterfactual"]["replayed"], true);
    let replayed = i(&sp001["evidence"]["replayed_ms"]);
    // The spill's I/O is bounded by the tasks' time off the CPU: under the rule's estimate.
    assert!(
        replayed > 0 && replayed <= i(&sp001["evidence"]["rule_estimate_ms"]),
        "{sp001}"
    );
    check_replayed_findings_agree("spill", &spill);

    let lost = report_of(&pattern_log("executor-lost"));
    let fa002 = finding(&lost, "FA002");
    assert_eq!(
        fa002["counterfactual"]["change"]["kind"],
        "remove_failed_attempts"
    );
    assert_eq!(fa002["counterfactual"]["replayed"], true);
    // A lost executor's failed work is part of every failed attempt FA002 leaves out: counted
    // once, there, and said so ("in FA002"), not replayed a second time as lost.
    let fa003 = finding(&lost, "FA003");
    assert_eq!(
        fa003["counterfactual"]["change"]["executors"],
        serde_json::json!(["1"])
    );
    assert_eq!(fa003["evidence"]["same_change_as"], "FA002", "{fa003}");
    assert_eq!(i(&fa003["impact_ms"]), 0, "{fa003}");
    assert!(i(&fa002["impact_ms"]) > 0, "{fa002}");
    let every = scenarios(&lost).iter().find(|s| s["every_fix"] == true);
    if let Some(every) = every {
        assert!(
            !every["findings"]
                .as_array()
                .unwrap()
                .contains(&"FA003".into()),
            "an outcome is no fix to apply: {every}"
        );
    }
    check_replayed_findings_agree("executor-lost", &lost);
}

/// UT002's fix is a second core: its saving is the replay on two cores, the same figure as
/// the what-if's 2x scenario.
#[test]
fn one_core_is_replayed_on_two() {
    let report = report_of(&testdata("logs/shapes/one-core"));
    let ut002 = finding(&report, "UT002");
    assert_eq!(
        ut002["counterfactual"]["change"],
        serde_json::json!({"kind": "add_cores", "cores": 2})
    );
    let mine = scenario_of(&report, ut002).unwrap();
    let doubled = scenarios(&report)
        .iter()
        .find(|s| s["change"].is_null() && s["cores"] == 2 && s["every_fix"] != true)
        .expect("a 2-core scenario");
    assert_eq!(mine["predicted_ms"], doubled["predicted_ms"]);
    assert!(i(&ut002["impact_ms"]) > 0);
    check_replayed_findings_agree("one-core", &report);
}

/// A grouped skew finding over a join's stage and a groupBy's keeps both stages' fixes.
#[test]
fn a_grouped_skew_finding_keeps_each_stage_shapes_advice() {
    let report = report_of(&testdata("logs/shapes/groupby-and-join-skew"));
    let sk001 = finding(&report, "SK001");
    let advice = sk001["recommendation"].as_str().unwrap();
    assert!(
        advice.contains("spark.sql.adaptive.skewJoin.enabled=true"),
        "{advice}"
    );
    assert!(advice.contains("F.rand"), "{advice}");
    let shapes: Vec<&str> = sk001["evidence"]["advice_by_shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["stage_shape"].as_str().unwrap())
        .collect();
    assert!(
        shapes.contains(&"join") && shapes.contains(&"aggregation"),
        "{shapes:?}"
    );
}

/// On Databricks the time before the first job is the cluster starting: the advice is pools
/// and serverless, not moving driver work into Spark.
#[test]
fn databricks_start_up_gets_pool_and_serverless_advice() {
    let report = report_with(
        &testdata("logs/databricks/0101-123456-abcdefgh"),
        &["DR001.min_driver_s=0", "DR001.min_share=0"],
    );
    let dr001 = finding(&report, "DR001");
    let advice = dr001["recommendation"].as_str().unwrap();
    assert!(advice.starts_with("On Databricks"), "{advice}");
    assert!(
        advice.contains("instance pool") && advice.contains("serverless"),
        "{advice}"
    );
    // Elsewhere the same rule leads with the driver's code.
    let local = report_of(&pattern_log("driver-loop-serial"));
    let text = finding(&local, "DR001")["recommendation"].as_str().unwrap();
    assert!(!text.contains("Databricks"), "{text}");
}

/// Failed attempts are counted once. On the hot-key OOM log every failed attempt lies in the
/// job that failed, so leaving them out saves nothing (the job still fails): FA002's and FA003's
/// time is FA001's lost job, shown "in FA001" (they were 52.3 s saved and 48.9 s lost beside
/// it, of the same attempts). Where no job failed (the executor-lost pattern), FA003's lost
/// executors' attempts are inside FA002's. On every real log, no two findings whose changes
/// nest both claim time.
#[test]
fn failed_attempts_of_lost_executors_are_counted_once() {
    let report = report_of(&testdata("logs/memory/heap-oom-hot-key"));
    let fa001 = finding(&report, "FA001");
    assert!(i(&fa001["impact_ms"]) > 0, "{fa001}");
    for rule in ["FA002", "FA003"] {
        let f = finding(&report, rule);
        assert_eq!(f["evidence"]["same_change_as"], "FA001", "{f}");
        assert_eq!(i(&f["impact_ms"]), 0, "{f}");
    }
    let lost = report_of(&pattern_log("executor-lost"));
    assert!(i(&finding(&lost, "FA002")["impact_ms"]) > 0);
    assert_eq!(
        finding(&lost, "FA003")["evidence"]["same_change_as"],
        "FA002"
    );
    let executors = |f: &Value| -> Option<Vec<String>> {
        let change = &f["counterfactual"]["change"];
        (change["kind"] == "remove_failed_attempts").then(|| {
            change["executors"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e.as_str().unwrap().to_string())
                .collect()
        })
    };
    let mut pairs = 0;
    for (label, report) in every_report() {
        for wide in findings(&report) {
            for narrow in findings(&report) {
                let (Some(w), Some(n)) = (executors(wide), executors(narrow)) else {
                    continue;
                };
                let nests =
                    w != n && (w.is_empty() || (!n.is_empty() && n.iter().all(|e| w.contains(e))));
                if nests {
                    pairs += 1;
                    assert!(
                        i(&narrow["impact_ms"]) == 0,
                        "{label}: {} claims {} ms of failed attempts that {}'s change holds",
                        narrow["rule"],
                        narrow["impact_ms"],
                        wide["rule"]
                    );
                }
            }
        }
    }
    assert!(pairs > 0, "some real log has nested failed-attempt changes");
}

/// The fix that removes a finding is credited with it: on the skewed join whose broadcast was
/// turned off, broadcasting the small side (EX003) removes the join's shuffle and the skew of
/// its stage with it, so EX003's saving holds the skew finding's replayed saving and ranks
/// above it, both say they share the fix, and the report's totals count it once.
#[test]
fn the_broadcast_that_removes_a_skewed_join_is_credited_with_it() {
    let report = report_of(&pattern_log("skew-join"));
    let found = findings(&report);
    let at = |rule: &str| {
        found
            .iter()
            .position(|f| f["rule"] == rule)
            .unwrap_or_else(|| panic!("no {rule}"))
    };
    let (ex, sk) = (&found[at("EX003")], &found[at("SK001")]);
    assert!(at("EX003") < at("SK001"), "EX003 ranks above SK001");
    let skew_ms = sk["evidence"]["replayed_ms"].as_i64().unwrap();
    assert!(skew_ms > 1_000, "{sk}");
    assert_eq!(
        ex["evidence"]["includes_replayed_ms"].as_i64(),
        Some(skew_ms)
    );
    assert!(ex["impact_ms"].as_i64().unwrap() > skew_ms, "{ex}");
    assert_eq!(ex["evidence"]["also_removes"], serde_json::json!(["SK001"]));
    assert_eq!(sk["evidence"]["removed_by_fix_of"], "EX003");
    assert_eq!(
        sk["impact_ms"].as_i64(),
        Some(skew_ms),
        "its own fix's saving"
    );
    assert!(
        sk["recommendation"]
            .as_str()
            .unwrap()
            .starts_with("EX003's fix"),
        "{sk}"
    );
    let runtime = report["application"]["duration_ms"].as_i64().unwrap();
    let summary = &report["summary"];
    assert!(
        summary["recoverable_ms"].as_i64().unwrap()
            + summary["estimated_beyond_replay_ms"].as_i64().unwrap()
            <= runtime,
        "{summary}"
    );
    // The twin run with AQE's skew join has no skew to credit.
    let twin = report_of(&pattern_log("skew-join-aqe"));
    assert!(
        findings(&twin)
            .iter()
            .all(|f| f["evidence"].get("also_removes").is_none())
    );
}
