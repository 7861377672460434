//! Findings a Spark engineer can trust on logs we did not write: other projects' real logs
//! (`../shared/real-world/`), Spark's History Server suite (`../shared/spark-conformance/`) and our
//! own fixtures. Impacts never add up past the runtime, one finding per problem, severity by the
//! share saved, interactive sessions, executor removals, failure chains, advice that fits the
//! version and API, Databricks metadata, logs that lack something, and Spark's plan node ids.

use std::path::{Path, PathBuf};

use serde_json::Value;
use sparkdiag_analysis::{Options, analyze};

use crate::util::{shared_opt, testdata};

/// One analysed application: where it came from and its JSON report.
struct Analysed {
    label: String,
    report: Value,
}

/// Every application under `root`, each file or folder analysed on its own so one unreadable
/// input never hides the rest; inputs that cannot be read are returned as errors (never panics).
fn analyse_tree(root: &Path) -> (Vec<Analysed>, Vec<String>) {
    let config = sparkdiag_rules::Config::default();
    let mut apps = Vec::new();
    let mut errors = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|e| e != "md" && e != "tsv"))
        .collect();
    entries.sort();
    for path in entries {
        let inputs = match sparkdiag_eventlog::discover(path.to_str().unwrap()) {
            Ok(inputs) => inputs,
            Err(e) => {
                errors.push(e.to_string());
                continue;
            }
        };
        for input in inputs {
            match analyze(&input, &Options::new(&config)) {
                Ok(a) => apps.push(Analysed {
                    label: input.display.clone(),
                    report: serde_json::to_value(&a.report).unwrap(),
                }),
                Err(e) => errors.push(e.to_string()),
            }
        }
    }
    (apps, errors)
}

fn report_of(path: &Path) -> Value {
    let config = sparkdiag_rules::Config::default();
    let inputs = sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap();
    assert_eq!(inputs.len(), 1, "{}", path.display());
    let a = analyze(&inputs[0], &Options::new(&config)).unwrap();
    serde_json::to_value(&a.report).unwrap()
}

fn findings(report: &Value) -> &Vec<Value> {
    report["findings"].as_array().unwrap()
}

fn of_rule<'a>(report: &'a Value, rule: &str) -> Vec<&'a Value> {
    findings(report)
        .iter()
        .filter(|f| f["rule"] == rule)
        .collect()
}

/// Every real log this project can see: ours, Spark's suite and other projects'.
fn every_log() -> Vec<Analysed> {
    let mut all = Vec::new();
    for root in crate::util::real_log_roots() {
        let mut stack = vec![root];
        while let Some(dir) = stack.pop() {
            let (apps, _) = analyse_tree(&dir);
            all.extend(apps);
            // other projects keep logs one folder down
            if dir.ends_with("real-world") {
                for e in std::fs::read_dir(&dir).unwrap() {
                    let p = e.unwrap().path();
                    if p.is_dir() {
                        for inner in std::fs::read_dir(&p).unwrap() {
                            let q = inner.unwrap().path();
                            if q.is_dir() {
                                stack.push(q);
                            }
                        }
                    }
                }
            }
        }
    }
    all.sort_by(|a, b| a.label.cmp(&b.label));
    all.dedup_by(|a, b| a.label == b.label);
    all
}

/// Each merged setting is what a finding's `evidence.conf` says (or the replay's cores), each key
/// once, and the one-submission advice lists exactly them: said for two settings or more, and for
/// the replay's cores alone (no finding's advice carries that flag).
#[test]
fn on_every_real_log_the_merged_settings_are_the_findings_own() {
    for a in &every_log() {
        let r = &a.report;
        let Some(settings) = r["what_if"]["settings"].as_array() else {
            continue;
        };
        let mut keys = std::collections::HashSet::new();
        for s in settings {
            let (key, value, from) = (
                s["key"].as_str().unwrap(),
                s["value"].as_str().unwrap(),
                s["from"].as_str().unwrap(),
            );
            assert!(keys.insert(key), "{}: {key} twice", a.label);
            if from != "what-if" {
                let named = of_rule(r, from).iter().any(|f| {
                    f["evidence"]["conf"]
                        .as_array()
                        .is_some_and(|c| c.iter().any(|e| e == &format!("{key}={value}")))
                });
                assert!(named, "{}: {key}={value} from {from}", a.label);
            }
        }
        let advice: Vec<&str> = r["what_if"]["advice"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["kind"] == "settings")
            .filter_map(|x| x["text"].as_str())
            .collect();
        let replay_alone = settings.len() == 1 && settings[0]["from"] == "what-if";
        assert_eq!(
            advice.len(),
            usize::from(settings.len() >= 2 || replay_alone),
            "{}",
            a.label
        );
        for text in advice {
            assert_eq!(text.matches("--conf ").count(), settings.len(), "{text}");
        }
    }
}

/// The what-if's advice cites a rule only where that rule fired: its memory advice once said
/// "512m would do (... GC002)" on runs where GC002's guards had kept it quiet, one of them already
/// on 512m.
#[test]
fn the_what_if_cites_only_findings_the_report_holds() {
    let mut cited = 0;
    for a in &every_log() {
        let r = &a.report;
        let Some(advice) = r["what_if"]["advice"].as_array() else {
            continue;
        };
        for text in advice.iter().filter_map(|x| x["text"].as_str()) {
            for code in rule_codes(text) {
                cited += 1;
                assert!(
                    !of_rule(r, code).is_empty(),
                    "{}: the what-if cites {code}, which did not fire: {text}",
                    a.label
                );
            }
        }
    }
    assert!(
        cited > 0,
        "no log's what-if cites a rule: the check checks nothing"
    );
}

/// The rule codes in `text`: two capitals and three digits (`GC002`), standing alone.
fn rule_codes(text: &str) -> Vec<&str> {
    text.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| {
            let b = w.as_bytes();
            b.len() == 5
                && b[..2].iter().all(u8::is_ascii_uppercase)
                && b[2..].iter().all(u8::is_ascii_digit)
        })
        .collect()
}

/// A sparkscope fixture splices two runs 1,918 days apart: the clock jump is named, and no replay
/// predicts days for a run of 8 s.
#[test]
fn a_log_whose_clock_jumped_gets_no_replay() {
    let Some(log) =
        shared_opt("real-world/sparkscope/eventlog/app-20231025121456-0004-eventLog-finished")
    else {
        return;
    };
    let r = report_of(&log);
    assert!(
        r["source"]["warnings"].to_string().contains("clock jumped"),
        "{}",
        r["source"]["warnings"]
    );
    assert!(r["what_if"].is_null(), "{}", r["what_if"]);
    // The run's own time leaves the jump out.
    assert!(r["application"]["duration_ms"].as_i64().unwrap() < 60_000);
}

#[test]
fn on_every_real_log_impacts_fit_in_the_runtime_and_each_rule_speaks_once() {
    let all = every_log();
    assert!(all.len() >= 40, "only {} applications analysed", all.len());
    let mut serious = Vec::new();
    for a in &all {
        let r = &a.report;
        let runtime = r["application"]["duration_ms"].as_i64().unwrap_or(0);
        let sum: i64 = findings(r)
            .iter()
            .map(|f| f["impact_ms"].as_i64().unwrap())
            .sum();
        assert!(
            sum <= runtime,
            "{}: findings add up to {sum} ms in a {runtime} ms application",
            a.label
        );
        // The replay with every fix applied (tests/savings.rs checks it against the what-if).
        let recoverable = r["summary"]["recoverable_ms"].as_i64().unwrap();
        assert!(recoverable <= runtime.max(0), "{}", a.label);
        let mut rules: Vec<&str> = findings(r)
            .iter()
            .map(|f| f["rule"].as_str().unwrap())
            .collect();
        let n = rules.len();
        rules.sort_unstable();
        rules.dedup();
        assert_eq!(rules.len(), n, "{}: a rule spoke twice: {rules:?}", a.label);
        for f in findings(r) {
            let severity = f["severity"].as_str().unwrap();
            if !["critical", "high"].contains(&severity) {
                continue;
            }
            let rule = f["rule"].as_str().unwrap();
            let impact = f["impact_ms"].as_i64().unwrap();
            // Time-saving findings earn high by a share of at least 10 % and a minute; the
            // streaming rules say how a stream fares, which has no end to bring forward, and
            // a cost (idle cores) is rated by its core-hours.
            if ![
                "FA001", "FA003", "FA005", "ST001", "ST003", "ST004", "ST007",
            ]
            .contains(&rule)
                && f["impact_kind"] != "cost"
            {
                assert!(
                    impact >= 60_000 && impact * 10 >= runtime,
                    "{}: {rule} is {severity} for {impact} ms of {runtime} ms",
                    a.label
                );
            }
            serious.push(format!(
                "{} | {} | {rule} {severity} | {} | {}",
                a.label,
                r["application"]["name"].as_str().unwrap_or("-"),
                impact,
                f["title"].as_str().unwrap()
            ));
        }
    }
    // What a reviewer reads: every high and critical finding on every log.
    println!(
        "{} applications; {} high or critical findings",
        all.len(),
        serious.len()
    );
    for line in &serious {
        println!("{line}");
    }
}

#[test]
fn logs_that_lack_an_application_say_so_and_get_no_findings() {
    let Some(dir) = shared_opt("real-world/sparklint") else {
        return;
    };
    // sparklint's fragments: two start mid-application, one stops before any job.
    for name in [
        "file_event_log_test_simple",
        "file_event_log_test_nav_events",
    ] {
        let r = report_of(&dir.join(name));
        assert!(findings(&r).is_empty(), "{name}: {:?}", findings(&r));
        let warnings = r["source"]["warnings"].to_string();
        assert!(
            warnings.contains("no SparkListenerApplicationStart"),
            "{name}: {warnings}"
        );
    }
    let r = report_of(&dir.join("file_event_log_test_state_events"));
    assert!(findings(&r).is_empty(), "no job ran: {:?}", findings(&r));
    assert!(
        r["source"]["warnings"]
            .to_string()
            .contains("no SparkListenerApplicationEnd")
    );
    let empty = dir.join("file_event_log_empty_test");
    if let Ok(inputs) = sparkdiag_eventlog::discover(empty.to_str().unwrap()) {
        let config = sparkdiag_rules::Config::default();
        if let Ok(a) = analyze(&inputs[0], &Options::new(&config)) {
            let r = serde_json::to_value(&a.report).unwrap();
            assert!(findings(&r).is_empty(), "empty file: {:?}", findings(&r));
            assert!(
                r["source"]["warnings"].to_string().contains("no event"),
                "{}",
                r["source"]["warnings"]
            );
        }
    }
}

/// The Spark Summit 2016 YARN log: its first job was submitted 26 s before any executor had
/// registered. That is waiting for the cluster, said as such, with YARN's own advice.
#[test]
fn a_first_job_waiting_for_executors_on_yarn_is_named() {
    let Some(log) = shared_opt(
        "real-world/sparklint/docs-spark_summit_euro_2016-event_logs/application_1472176676028_407508_1",
    ) else {
        return;
    };
    let r = report_of(&log);
    let waits = of_rule(&r, "UT003");
    assert_eq!(waits.len(), 1, "{waits:?}");
    let wait = &waits[0];
    let ms = wait["evidence"]["wait_ms"].as_i64().unwrap();
    assert!((20_000..40_000).contains(&ms), "{wait}");
    assert!(
        wait["recommendation"].as_str().unwrap().contains("YARN"),
        "{wait}"
    );
    // Local mode has its executor from the start: never a wait.
    let local = report_of(&testdata("logs/trust/interactive"));
    assert!(of_rule(&local, "UT003").is_empty());
}

/// The EMR PySpark ETL of `syncsparkpy`: SparkContext held the program 22 s until YARN's
/// containers registered. Every YARN run pays that: low, with the fix that amortises it, not
/// medium as if the job wasted it.
#[test]
fn a_yarn_container_start_is_a_low_fixed_cost() {
    let Some(log) = shared_opt("real-world/syncsparkpy/demo/emr/application_1678162862227_0001")
    else {
        return;
    };
    let r = report_of(&log);
    let waits = of_rule(&r, "UT003");
    assert_eq!(waits.len(), 1, "{waits:?}");
    let wait = &waits[0];
    assert_eq!(wait["severity"], "low", "{wait}");
    assert_eq!(wait["evidence"]["container_start"], true, "{wait}");
    assert!(
        wait["recommendation"]
            .as_str()
            .unwrap()
            .contains("fixed cost of each run"),
        "{wait}"
    );
}

/// Spark 1.6 logs no query events, but this job is `df.write.json` (its jobs carry
/// `spark.sql.execution.id`, its reduce stage is a `ShuffledRowRDD`). Its 40 shuffle partitions
/// are not the setting's 200, so the program asked for them: the advice says so, not "RDDs only",
/// and the what-if leaves the stage's count to the finding.
#[test]
fn a_dataframe_shuffle_before_spark_2_is_advised_as_dataframe_work() {
    let Some(log) = shared_opt(
        "real-world/sparklint/docs-spark_summit_euro_2016-event_logs/application_1472176676028_407508_1",
    ) else {
        return;
    };
    let r = report_of(&log);
    assert_eq!(r["application"]["api"], "sql");
    let oversized = of_rule(&r, "PA002");
    assert_eq!(oversized.len(), 1, "{oversized:?}");
    let finding = &oversized[0];
    let advice = finding["recommendation"].as_str().unwrap();
    assert!(!advice.contains("RDDs only"), "{advice}");
    let n = finding["evidence"]["recommended_partitions"]
        .as_i64()
        .unwrap();
    for wanted in [
        "repartition(40)".to_string(),
        "spark.sql.shuffle.partitions is 200".to_string(),
        "before 2.0".to_string(),
        format!("to {n}"),
    ] {
        assert!(advice.contains(&wanted), "{wanted:?} not in {advice}");
    }
    // The what-if does not restate the stage with a count of its own: the finding sizes it.
    let restated: Vec<&str> = r["what_if"]["advice"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|a| a["kind"] == "partitions")
        .filter_map(|a| a["text"].as_str())
        .filter(|t| t.starts_with("Stage 1 "))
        .collect();
    assert!(restated.is_empty(), "{restated:?}");
}

#[test]
fn released_executors_under_dynamic_allocation_are_not_lost() {
    let Some(log) = shared_opt(
        "real-world/sparklint/docs-spark_summit_euro_2016-event_logs/application_1472176676028_407508_1",
    ) else {
        return;
    };
    let r = report_of(&log);
    assert_eq!(r["application"]["dynamic_allocation"], true);
    let executors = r["executors"].as_array().unwrap();
    let released = executors
        .iter()
        .filter(|e| e["removal"] == "released")
        .count();
    assert!(released > 10, "{released} released");
    for e in executors.iter().filter(|e| {
        e["removed_reason"]
            .as_str()
            .is_some_and(|r| r.contains("explicit termination request"))
    }) {
        if e["failed_tasks"] == 0 {
            assert_eq!(e["removal"], "released", "{e}");
        }
    }
    for f in of_rule(&r, "FA003") {
        let listed = f["evidence"]["executors"].as_array().unwrap();
        assert!(
            listed
                .iter()
                .all(|e| e["kind"] != "released" && e["kind"] != "decommissioned"),
            "{f}"
        );
    }
}

#[test]
fn our_dynamic_allocation_run_releases_idle_executors_without_a_finding() {
    let dir = testdata("logs/trust/dynamic-allocation");
    let r = report_of(&dir);
    assert_eq!(r["application"]["dynamic_allocation"], true);
    let removals: Vec<&str> = r["executors"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["removal"].as_str())
        .collect();
    assert!(
        removals.iter().filter(|k| **k == "released").count() >= 2,
        "{removals:?}"
    );
    assert!(
        of_rule(&r, "FA003").is_empty(),
        "{:?}",
        of_rule(&r, "FA003")
    );
}

#[test]
fn a_fetch_failure_is_traced_to_the_executor_loss_that_started_it() {
    let r = report_of(&testdata("logs/trust/fetch-failed"));
    let fa001 = of_rule(&r, "FA001");
    assert_eq!(fa001.len(), 1, "{:?}", findings(&r));
    let title = fa001[0]["title"].as_str().unwrap();
    assert!(
        title.contains("lost") && title.contains("FetchFailed"),
        "{title}"
    );
    assert!(fa001[0]["evidence"]["started_by"].is_string());
    let rec = fa001[0]["recommendation"].as_str().unwrap();
    assert!(rec.contains("executor died"), "{rec}");
    // The killed executor is a loss, with its failed tasks.
    let fa003 = of_rule(&r, "FA003");
    assert_eq!(fa003.len(), 1, "{:?}", findings(&r));
    assert!(
        fa003[0]["scope"]["executor_ids"]
            .as_array()
            .unwrap()
            .contains(&Value::from("1"))
    );
    // local-cluster puts no memory limit on an executor: its SIGKILL is the kernel or a
    // person, never "the container went over its memory limit".
    for rule in ["FA001", "FA003"] {
        for f in of_rule(&r, rule) {
            let text = format!("{} {}", f["title"], f["recommendation"]);
            assert!(!text.contains("container went over"), "{rule}: {text}");
            assert!(
                !text.contains("needs more spark.executor.memoryOverhead"),
                "{rule}: {text}"
            );
        }
    }
}

#[test]
fn rdd_only_and_old_spark_applications_get_no_sql_advice() {
    let mut reports = vec![(
        "rdd-only".to_string(),
        report_of(&testdata("logs/trust/rdd-only")),
    )];
    let real_world = shared_opt("real-world");
    if let Some(root) = &real_world {
        for a in every_log() {
            if a.label.starts_with(root.to_str().unwrap()) {
                reports.push((a.label, a.report));
            }
        }
    }
    let mut rdd = 0;
    for (label, r) in &reports {
        let version = r["application"]["spark_version"].as_str().unwrap_or("");
        let old = version.starts_with("1.") || version.starts_with("2.");
        if r["application"]["api"] == "rdd" {
            rdd += 1;
        }
        if r["application"]["api"] != "rdd" && !old {
            continue;
        }
        for f in findings(r) {
            assert!(
                !["CF001", "CF002", "CF003"].contains(&f["rule"].as_str().unwrap()),
                "{label}: {f}"
            );
            let rec = f["recommendation"].as_str().unwrap();
            assert!(!rec.contains("spark.sql.adaptive"), "{label}: {rec}");
            if r["application"]["api"] == "rdd" {
                assert!(
                    !rec.contains("spark.sql.shuffle.partitions=")
                        || rec.contains("does not apply"),
                    "{label}: {rec}"
                );
            }
        }
    }
    // Ours, and at least one of other projects' Spark 1.x logs when they are here.
    let expected = if real_world.is_some() { 2 } else { 1 };
    assert!(rdd >= expected, "{rdd} RDD-only applications");
    let ours = &reports[0].1;
    let pa001 = of_rule(ours, "PA001");
    assert_eq!(pa001.len(), 1, "{:?}", findings(ours));
    assert!(
        pa001[0]["recommendation"]
            .as_str()
            .unwrap()
            .contains("numPartitions")
    );
}

#[test]
fn an_interactive_session_is_not_called_driver_bound() {
    let r = report_of(&testdata("logs/trust/interactive"));
    assert!(
        r["application"]["interactive"]
            .as_str()
            .is_some_and(|w| w.contains("PySparkShell")),
        "{}",
        r["application"]
    );
    let dr001 = of_rule(&r, "DR001");
    assert_eq!(dr001.len(), 1, "{:?}", findings(&r));
    assert_eq!(dr001[0]["severity"], "info");
    assert_eq!(dr001[0]["impact_ms"], 0);
    assert!(
        dr001[0]["title"]
            .as_str()
            .unwrap()
            .starts_with("Interactive session")
    );
    // sparklint's example: a Spark 1.5 app named "MyAppName" whose jobs were typed at a Scala
    // REPL (`count at <console>:22`): its 2m 42s without a job are a person typing.
    if let Some(log) = shared_opt("real-world/sparklint/spark_event_log_example") {
        let r = report_of(&log);
        assert!(
            r["application"]["interactive"]
                .as_str()
                .is_some_and(|w| w.contains("<console>")),
            "{}",
            r["application"]
        );
        assert!(
            of_rule(&r, "DR001")
                .iter()
                .all(|f| f["severity"] == "info" && f["impact_ms"] == 0)
        );
    }
    // The batch twin of the idea: a driver loop of ours keeps its finding.
    let batch = report_of(&crate::util::pattern_log("driver-loop-serial"));
    assert!(batch["application"]["interactive"].is_null());
    // Its gaps' saving is counted once, under the loop (DR002) that DR001 shares its change with.
    let gaps: Vec<&Value> = findings(&batch)
        .iter()
        .filter(|f| f["counterfactual"]["change"]["kind"] == "remove_driver_gaps")
        .collect();
    assert!(gaps.iter().any(|f| f["impact_ms"].as_i64().unwrap() > 0));
    assert!(of_rule(&batch, "DR001").iter().all(
        |f| f["impact_ms"].as_i64().unwrap() > 0 || f["evidence"]["same_change_as"] == "DR002"
    ));
}

#[test]
fn databricks_metadata_gives_the_spark_version_and_a_job_run_is_batch() {
    // NVIDIA's NDS q88 on Databricks 13.3 Photon: Spark's version is only in the metadata
    // event; the app calls itself "Databricks Shell", but its jobs carry
    // spark.databricks.job.runId: a scheduled job run, not a notebook session.
    let Some(path) = shared_opt(
        "plan-samples/databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__selected-events.jsonl",
    ) else {
        return;
    };
    let r = report_of(&path);
    assert_eq!(r["application"]["spark_version"], "3.4.1");
    assert_eq!(r["application"]["name"], "Databricks Shell");
    assert!(
        r["application"]["interactive"].is_null(),
        "{}",
        r["application"]
    );
    assert!(
        !r["source"]["unknown_events"]
            .to_string()
            .contains("DBCEventLoggingListenerMetadata")
    );
}

#[test]
fn plan_node_ids_are_sparks_own() {
    // Spark's SparkPlanGraph numbers WholeStageCodegen clusters and operators, and gives
    // InputAdapter and AQE query-stage wrappers no id.
    let r = report_of(&crate::util::pattern_log("skew-join"));
    let mut checked = 0;
    for q in r["sql"].as_array().unwrap() {
        let nodes = q["plan_nodes"].as_array().unwrap();
        for (i, n) in nodes.iter().enumerate() {
            assert_eq!(
                n["index"].as_u64(),
                Some(i as u64),
                "ids are dense and ordered"
            );
            let name = n["name"].as_str().unwrap();
            assert!(
                name != "InputAdapter" && !name.ends_with("QueryStage"),
                "{name} has no id in Spark's graph"
            );
            checked += 1;
        }
        for x in q["exchange_stages"].as_array().unwrap() {
            let id = x["node"].as_u64().unwrap() as usize;
            assert_eq!(nodes[id]["name"], "Exchange");
        }
    }
    assert!(checked > 10, "{checked} plan nodes");
    // And findings name operators by those ids.
    let r = report_of(&crate::util::pattern_log("skew-join-aqe"));
    let ex003 = of_rule(&r, "EX003");
    assert_eq!(ex003.len(), 1);
    let sql = ex003[0]["scope"]["sql_execution_ids"][0].as_i64().unwrap();
    let q = r["sql"]
        .as_array()
        .unwrap()
        .iter()
        .find(|q| q["execution_id"] == sql)
        .unwrap();
    let name_of = |id: &Value| {
        q["plan_nodes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| n["index"] == *id)
            .unwrap_or_else(|| panic!("node {id} not in the plan"))["name"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let ids = ex003[0]["scope"]["plan_node_ids"].as_array().unwrap();
    assert!(
        ids.iter()
            .any(|id| name_of(id).starts_with("SortMergeJoin")),
        "{ids:?}"
    );
    // The title names the join by the same id as the scope.
    let title = ex003[0]["title"].as_str().unwrap();
    let join = ids
        .iter()
        .find(|id| name_of(id).starts_with("SortMergeJoin"))
        .unwrap();
    assert!(
        title.contains(&format!("({join}) SortMergeJoin")),
        "{title}"
    );
}

#[test]
fn a_stage_where_every_task_spills_has_oversized_partitions() {
    let log = crate::util::pattern_log("spill");
    let out = crate::util::json_of(&[
        "analyze",
        log.to_str().unwrap(),
        "--format",
        "json",
        "--set",
        "PA002.min_spill_mb=32",
    ]);
    let pa002: Vec<&Value> = findings(&out)
        .iter()
        .filter(|f| f["rule"] == "PA002")
        .collect();
    assert_eq!(pa002.len(), 1, "{:?}", findings(&out));
    let f = pa002[0];
    assert!(f["title"].as_str().unwrap().contains("no skew"), "{f}");
    let tasks = f["evidence"]["tasks"].as_u64().unwrap();
    assert!(f["evidence"]["recommended_partitions"].as_u64().unwrap() > tasks);
    assert_eq!(f["evidence"]["spilling_tasks"], f["evidence"]["tasks"]);
}

#[test]
fn a_clock_jump_is_said_in_the_source_and_saves_nobody_hours() {
    // The smallest log whose clock jumps: one job of a second, then an application end dated
    // three years later (as a driver whose clock was reset writes). Hand-written: no Spark run
    // can be made to do this on purpose.
    let t0: i64 = 1_700_000_000_000;
    let later = t0 + 3 * 365 * 86_400_000;
    let log = [
        r#"{"Event":"SparkListenerLogStart","Spark Version":"3.5.1"}"#.to_string(),
        format!(
            r#"{{"Event":"SparkListenerApplicationStart","App Name":"nightly","App ID":"app-1","Timestamp":{t0},"User":"etl"}}"#
        ),
        format!(
            r#"{{"Event":"SparkListenerJobStart","Job ID":0,"Submission Time":{},"Stage Infos":[],"Stage IDs":[]}}"#,
            t0 + 1000
        ),
        format!(
            r#"{{"Event":"SparkListenerJobEnd","Job ID":0,"Completion Time":{},"Job Result":{{"Result":"JobSucceeded"}}}}"#,
            t0 + 2000
        ),
        format!(r#"{{"Event":"SparkListenerApplicationEnd","Timestamp":{later}}}"#),
    ]
    .join("\n");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app-1");
    std::fs::write(&path, log + "\n").unwrap();
    let r = report_of(&path);
    let warnings = r["source"]["warnings"].to_string();
    assert!(warnings.contains("no event for 1095.0 days"), "{warnings}");
    let total: i64 = findings(&r)
        .iter()
        .map(|f| f["impact_ms"].as_i64().unwrap())
        .sum();
    assert!(total <= 2000, "{:?}", findings(&r));
    assert_eq!(r["summary"]["recoverable_ms"].as_i64(), Some(total));
}

#[test]
fn repeats_of_a_rule_become_one_finding_that_lists_every_place() {
    // The driver loop runs 48 jobs; its plan findings (one per SQL execution before grouping)
    // and any per-stage finding come out once, listing every place.
    let mut grouped = 0;
    for a in every_log() {
        for f in findings(&a.report) {
            let Some(count) = f["evidence"]["occurrence_count"].as_u64() else {
                continue;
            };
            grouped += 1;
            let listed = f["evidence"]["occurrences"].as_array().unwrap();
            assert_eq!(listed.len() as u64, count.min(50), "{}: {f}", a.label);
            let title = f["title"].as_str().unwrap();
            assert!(
                title.ends_with(&format!("(and {} more like it)", count - 1))
                    || title.ends_with("cancelled as its consequence)"),
                "{title}"
            );
            // The scope holds every occurrence's places.
            for o in listed {
                for key in ["stage_ids", "job_ids", "sql_execution_ids"] {
                    for id in o["scope"][key].as_array().unwrap() {
                        assert!(
                            f["scope"][key].as_array().unwrap().contains(id),
                            "{}: {key} {id} missing from {}",
                            a.label,
                            f["scope"]
                        );
                    }
                }
            }
        }
    }
    assert!(grouped >= 3, "{grouped} grouped findings");
}

#[test]
fn a_job_cancelled_by_the_shutdown_is_a_consequence_of_the_failure_before_it() {
    // Job 0 ran long in a thread; job 1 failed in a UDF; the driver stopped the context, which
    // cancelled job 0. Job 0 ended last and ran longest, yet job 1 is the cause.
    let r = report_of(&testdata("logs/trust/cascade"));
    let fa001 = of_rule(&r, "FA001");
    assert_eq!(fa001.len(), 1, "{:?}", findings(&r));
    let f = fa001[0];
    let title = f["title"].as_str().unwrap();
    assert!(title.starts_with("Job 1 failed"), "{title}");
    assert!(title.contains("ValueError: bad row 1234"), "{title}");
    assert!(
        title.ends_with("(1 more cancelled as its consequence)"),
        "{title}"
    );
    assert_eq!(f["evidence"]["consequence_of_another_failure"], false);
    assert_eq!(f["scope"]["job_ids"], serde_json::json!([0, 1]));
    let cancelled = &f["evidence"]["occurrences"][1]["title"];
    assert!(
        cancelled
            .as_str()
            .unwrap()
            .contains("a consequence of job 1's failure"),
        "{cancelled}"
    );
}

#[test]
fn spark_3_5_gets_the_aqe_advice_that_exists_there() {
    // Written by pyspark 3.5 with AQE off: AQE exists in 3.5, so CF001 and AQE advice fit;
    // the RDD-only 4.3 run beside it gets none (see rdd_only_and_old_spark_...).
    let r = report_of(&testdata("logs/trust/spark-3.5"));
    assert!(
        r["application"]["spark_version"]
            .as_str()
            .unwrap()
            .starts_with("3.5."),
        "{}",
        r["application"]
    );
    assert_eq!(r["application"]["api"], "sql");
    assert_eq!(of_rule(&r, "CF001").len(), 1, "{:?}", findings(&r));
    let pa001 = of_rule(&r, "PA001");
    assert_eq!(pa001.len(), 1, "{:?}", findings(&r));
    assert!(
        pa001[0]["recommendation"]
            .as_str()
            .unwrap()
            .contains("spark.sql.adaptive.coalescePartitions.enabled=true")
    );
}

#[test]
fn driver_time_before_any_executor_is_named_and_not_blamed_on_idle_executors() {
    // SEM_Feed_Generator: YARN, dynamic allocation with no initial executors; the first job came
    // 67 s after the start and the first executor only once that job needed one.
    let Some(log) = shared_opt(
        "real-world/sparklint/history_source/eventLogs-application_1489705648216_1600.zip",
    ) else {
        return;
    };
    let r = report_of(&log);
    let dr = of_rule(&r, "DR001");
    let [f] = dr.as_slice() else {
        panic!("one DR001 expected: {dr:?}")
    };
    let evidence = &f["evidence"];
    assert_eq!(
        evidence["before_first_executor_ms"], evidence["before_first_job_ms"],
        "{evidence}"
    );
    assert!(evidence["before_first_executor_ms"].as_i64().unwrap() > 60_000);
    // No executor core was held before the first executor registered: at most every core
    // listed, through the rest of the driver-only time.
    let held = evidence["idle_core_ms"].as_i64().unwrap();
    let all_cores: i64 = r["executors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["executor_id"] != "driver")
        .filter_map(|e| e["cores"].as_i64())
        .sum();
    let after_first_executor = evidence["driver_only_ms"].as_i64().unwrap()
        - evidence["before_first_executor_ms"].as_i64().unwrap();
    assert!(all_cores > 0);
    assert!(
        held <= after_first_executor * all_cores,
        "{held} core-ms held, {all_cores} cores: {evidence}"
    );
    let advice = f["recommendation"].as_str().unwrap();
    assert!(
        advice.contains("driver's own start-up and code"),
        "{advice}"
    );
    // Dynamic allocation is on already: telling the owner to switch it on would not fit.
    for finding in findings(&r) {
        let text = finding["recommendation"].as_str().unwrap_or_default();
        assert!(
            !text.contains("spark.dynamicAllocation.enabled=true"),
            "{}: {text}",
            finding["rule"]
        );
    }
}

#[test]
fn driver_time_with_no_executor_held_costs_the_run_not_idle_cores() {
    // dr-elephant's first log: 36 s before the first job, while no executor had registered.
    let Some(log) = shared_opt("real-world/dr-elephant/spark_event_logs/event_log_1") else {
        return;
    };
    let r = report_of(&log);
    let dr = of_rule(&r, "DR001");
    let [f] = dr.as_slice() else {
        panic!("one DR001 expected: {dr:?}")
    };
    let advice = f["recommendation"].as_str().unwrap();
    assert!(advice.contains("rather than idle cores"), "{advice}");
    assert!(!advice.contains("release executors"), "{advice}");
    assert!(f["evidence"]["idle_core_ms"].as_i64().unwrap() < 1_000);
}

/// The count a stage's advice names, wherever it comes from: `recommended_partitions`, and the
/// explicit `repartition(n)`/`coalesce(n)` an advice asks the code to change to.
fn counts_named(finding: &Value) -> Vec<i64> {
    let mut counts: Vec<i64> = finding["evidence"]["recommended_partitions"]
        .as_i64()
        .into_iter()
        .collect();
    let advice = finding["recommendation"].as_str().unwrap_or("");
    for marker in ["change that call to repartition(", "change it to coalesce("] {
        for (at, _) in advice.match_indices(marker) {
            let digits: String = advice[at + marker.len()..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            counts.extend(digits.parse::<i64>().ok());
        }
    }
    counts
}

/// Two findings on one stage never name two partition counts for it (SP001 and PA002 on a
/// stage whose every task spilled once said repartition(4) and repartition(78)).
#[test]
fn every_finding_on_a_stage_names_one_partition_count() {
    let mut compared = 0;
    for a in &every_log() {
        let mut by_stage: std::collections::BTreeMap<i64, Vec<(String, i64)>> = Default::default();
        for f in findings(&a.report) {
            // A grouped finding's advice and evidence are its lead's, the first occurrence.
            let scope = match f["evidence"]["occurrences"].as_array() {
                Some(occurrences) => &occurrences[0]["scope"],
                None => &f["scope"],
            };
            let stages = scope["stage_ids"].as_array().unwrap();
            if stages.len() != 1 {
                continue;
            }
            for n in counts_named(f) {
                by_stage
                    .entry(stages[0].as_i64().unwrap())
                    .or_default()
                    .push((f["rule"].as_str().unwrap().to_string(), n));
            }
        }
        for (stage, named) in by_stage {
            compared += usize::from(named.len() > 1);
            assert!(
                named.iter().all(|(_, n)| *n == named[0].1),
                "{}: stage {stage} is given different counts: {named:?}",
                a.label
            );
        }
    }
    assert!(compared > 0, "no stage had two findings naming a count");
}

/// sparkscope's `running-incomplete` is its `running` log with the last line, job 0's end, cut
/// mid-string. Job 0's only stage had completed: nothing was lost, so no FA005 claims its 7 s
/// (the missing end and the cut line are the source's warnings).
#[test]
fn a_log_cut_on_a_finished_jobs_end_loses_nothing() {
    let Some(dir) = shared_opt("real-world/sparkscope/eventlog") else {
        return;
    };
    let r = report_of(&dir.join("app-20231025121456-0004-eventLog-running-incomplete"));
    assert_eq!(r["jobs"][0]["status"], "running");
    assert_eq!(r["stages"][0]["status"], "complete");
    assert!(of_rule(&r, "FA005").is_empty(), "{:#?}", findings(&r));
    let warnings = r["source"]["warnings"].to_string();
    assert!(warnings.contains("SparkListenerJobEnd"), "{warnings}");
    assert!(
        warnings.contains("no SparkListenerApplicationEnd"),
        "{warnings}"
    );
    // A log cut while a stage ran still says what was running.
    let killed = report_of(&testdata("logs/killed/single"));
    assert_eq!(of_rule(&killed, "FA005").len(), 1);
}
