//! Tests over the 73 real plan texts in `../shared/plan-samples/` beside the repository
//! (provenance in its `README.md`): every file parses, ids agree between trees and detail blocks,
//! hand-counted exchanges, parsed details, and a no-panic run over damaged copies of every sample.
//! A fresh clone has no `../shared`: those tests then print one line saying so and are skipped,
//! except under CI (`CI` set), where the folder's absence fails them.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

use sparkdiag_plan::{
    AqeLabel, ErrorKind, ExchangeKind, Operator, PartitioningKind, Plan, PlanKind, SCHEMA, Section,
    ShuffleOrigin, UnsupportedKind, parse_plans,
};

/// The folder of real plans. This crate's tests cannot use the workspace's `tests/util.rs`, so
/// this repeats its `shared_opt` rule.
struct Samples(PathBuf);

impl Samples {
    /// `None` (after one line on stderr) when the folder is absent outside CI.
    fn find() -> Option<Samples> {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/plan-samples");
        if dir.is_dir() {
            return Some(Samples(dir));
        }
        if std::env::var_os("CI").is_some() {
            panic!(
                "CI is set but the shared fixtures are missing: {}",
                dir.display()
            );
        }
        let test = std::thread::current()
            .name()
            .unwrap_or("a test")
            .to_string();
        // Straight to standard error: the test harness captures eprintln! of passing tests, and
        // this line must be seen.
        let _ = writeln!(
            std::io::stderr(),
            "skipped: {test} needs ../shared/plan-samples beside the repository (present for developers and in CI)"
        );
        None
    }

    fn names(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .expect("list plan samples")
            .map(|entry| {
                entry
                    .expect("read dir entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .collect();
        names.sort();
        names
    }

    fn read(&self, name: &str) -> String {
        let path = self.0.join(name);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
    }

    fn parse(&self, name: &str) -> Vec<Plan> {
        parse_plans(&self.read(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
    }

    /// The one plan of a single-plan sample.
    fn only_plan(&self, name: &str) -> Plan {
        let mut plans = self.parse(name);
        assert_eq!(plans.len(), 1, "{name} holds one plan");
        plans.remove(0)
    }
}

/// Files of the folder that are not plan text, and the error `parse_plans` gives for them.
/// Plans inside event logs are JSON-escaped strings; the event-log reader extracts them.
const NOT_PLAN_TEXT: &[(&str, ErrorKind)] = &[
    // The provenance manifest.
    ("README.md", ErrorKind::NoPlan),
    // Event-log JSON lines (the plans in them are `physicalPlanDescription` string values).
    (
        "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__selected-events.jsonl",
        ErrorKind::NotPlanText,
    ),
    (
        "spark-3.1.0-SNAPSHOT__eventlog__app-20200706201101-0003.jsonl",
        ErrorKind::NotPlanText,
    ),
    (
        "spark-3.3.0-SNAPSHOT__eventlog__local-1642039451826.jsonl",
        ErrorKind::NotPlanText,
    ),
    // A `sparkPlanInfo` JSON tree, not explain text.
    (
        "spark-3.1.0-SNAPSHOT__eventlog-app-20200706201101-0003__exec0__SQLExecutionStart__sparkPlanInfo.json",
        ErrorKind::NotPlanText,
    ),
    // PlanStabilitySuite's own `simplified.txt` format, not explain output.
    (
        "spark-4.1.1__tpcds-v1_4__q1__simplified.txt",
        ErrorKind::NoPlan,
    ),
];

#[test]
fn every_sample_parses() {
    let Some(samples) = Samples::find() else {
        return;
    };
    let names = samples.names();
    assert_eq!(names.len(), 74, "73 samples plus README.md");
    let mut plans_seen = 0;
    for name in &names {
        let text = samples.read(name);
        let result = parse_plans(&text);
        if let Some((_, kind)) = NOT_PLAN_TEXT.iter().find(|(n, _)| n == name) {
            let err = result.expect_err(name);
            assert_eq!(err.kind, *kind, "{name}: {err}");
            continue;
        }
        let plans = result.unwrap_or_else(|e| panic!("{name}: {e}"));
        let headers = text
            .lines()
            .filter(|l| l.trim() == "== Physical Plan ==")
            .count();
        assert_eq!(
            plans.len(),
            headers,
            "{name}: one plan per `== Physical Plan ==`"
        );
        for plan in &plans {
            assert!(!plan.truncated, "{name}:{}", plan.line);
            assert!(
                plan.warnings.is_empty(),
                "{name}:{} warnings: {:#?}",
                plan.line,
                plan.warnings
            );
            // Every node hangs off a root: main tree, initial plan, subquery or sub-plan tree.
            for node in &plan.nodes {
                if node.parent.is_none() {
                    let idx = plan
                        .nodes
                        .iter()
                        .position(|n| std::ptr::eq(n, node))
                        .unwrap();
                    let is_root = idx == plan.root
                        || plan.subqueries.iter().any(|s| s.root == Some(idx))
                        || plan.optimized_out.iter().any(|s| s.root == Some(idx));
                    assert!(is_root, "{name}: orphan node at line {}", node.line);
                }
            }
        }
        plans_seen += plans.len();
    }
    // 114 `EXPLAIN FORMATTED` outputs in the `.sql.out` goldens plus the other plans.
    assert_eq!(plans_seen, 188);
}

/// The detail-block headers of one plan's text, read independently of the parser:
/// `(id) Name [codegen id : k] [Reuses operator id: n]` lines that follow a blank line.
fn detail_headers(text: &str, plan: &Plan, next_plan_line: Option<usize>) -> BTreeMap<u32, String> {
    let mut headers = BTreeMap::new();
    let mut prev_blank = false;
    for (i, line) in text.lines().enumerate().skip(plan.line) {
        let no = i + 1;
        if next_plan_line.is_some_and(|next| no >= next) || line.starts_with("-- !query") {
            break;
        }
        if prev_blank
            && let Some(rest) = line.strip_prefix('(')
            && let Some((id, name)) = rest.split_once(") ")
            && let Ok(id) = id.parse::<u32>()
        {
            let name = name.split(" [codegen id : ").next().unwrap();
            let name = name.split(" [Reuses operator id: ").next().unwrap();
            assert!(
                headers.insert(id, name.to_string()).is_none(),
                "id {id} twice"
            );
        }
        prev_blank = line.trim().is_empty();
    }
    headers
}

#[test]
fn formatted_ids_agree_between_tree_and_detail_blocks() {
    let Some(samples) = Samples::find() else {
        return;
    };
    let mut checked = 0;
    for name in samples.names() {
        if NOT_PLAN_TEXT.iter().any(|(n, _)| *n == name) {
            continue;
        }
        let text = samples.read(&name);
        let plans = parse_plans(&text).unwrap();
        for (k, plan) in plans.iter().enumerate() {
            if plan.kind != PlanKind::Formatted {
                continue;
            }
            let headers = detail_headers(&text, plan, plans.get(k + 1).map(|p| p.line));
            let tree_ids: BTreeSet<u32> = plan.nodes.iter().filter_map(|n| n.id).collect();
            let block_ids: BTreeSet<u32> = headers.keys().copied().collect();
            assert_eq!(tree_ids, block_ids, "{name}:{}", plan.line);
            // No `(unknown)` ids in these samples, so every tree line has an id.
            assert!(
                plan.nodes.iter().all(|n| n.id.is_some()),
                "{name}:{}",
                plan.line
            );
            for node in &plan.nodes {
                let id = node.id.unwrap();
                assert_eq!(
                    node.name.trim_end(),
                    headers[&id].trim_end(),
                    "{name}:{} node ({id})",
                    node.line
                );
                // The tree line starts with the detail header's name (joins add type/side).
                assert!(node.tree_text.starts_with(headers[&id].trim_end()));
                if let Some(target) = node.details.reuses_operator_id {
                    assert!(tree_ids.contains(&target), "{name}: reuse of ({target})");
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 160, "only {checked} formatted plans checked");
}

/// Exchange counts of plans counted by hand in the text (see each comment for how).
#[test]
fn hand_counted_exchanges() {
    let Some(samples) = Samples::find() else {
        return;
    };
    struct Case {
        file: &'static str,
        plan: usize,
        exchanges: usize,
        broadcasts: usize,
        reused: usize,
    }
    let cases = [
        // TPC-DS q1, Spark 4.1.1, with a DPP subquery and reused exchanges. Main tree:
        // `Exchange` (8), (18), (21); `BroadcastExchange` (24), (31), (37) plus (45), the tree of
        // Subquery:1 (Subquery:2 is the reused one, no tree); `ReusedExchange` (4), (14).
        Case {
            file: "spark-4.1.1__tpcds-v1_4__q1__explain.txt",
            plan: 0,
            exchanges: 3,
            broadcasts: 4,
            reused: 2,
        },
        // TPC-DS q64 (78 KB, 191 operators), Spark 4.1.1. Main tree: `Exchange` (182), (110), (11),
        // (28), (17), (23), (178), (122); `BroadcastExchange` (4), (41), (47), (53), (62), (71),
        // (77), (86), (95), (105), (115) plus (187) and (191) in the two subquery trees;
        // 22 `ReusedExchange` lines, (35) … (173).
        Case {
            file: "spark-4.1.1__tpcds-v1_4__q64__explain.txt",
            plan: 0,
            exchanges: 8,
            broadcasts: 13,
            reused: 22,
        },
        // TPC-DS q14a, Spark 3.1.2 (`[id=#N]`, no `Join type`). Main tree: 5 `Exchange`,
        // 9 `BroadcastExchange`, 10 `ReusedExchange`; subquery trees: `Exchange` (140),
        // `BroadcastExchange` (123), `ReusedExchange` (129), (135).
        Case {
            file: "spark-3.1.2__tpcds-v1_4__q14a__explain.txt",
            plan: 0,
            exchanges: 6,
            broadcasts: 10,
            reused: 12,
        },
        // TPC-DS q9, Spark 4.1.1: the main tree has no exchange; 15 scalar subqueries, 5 with a
        // tree, each with one `Exchange`: (10), (18), (26), (34), (42).
        Case {
            file: "spark-4.1.1__tpcds-v1_4__q9__explain.txt",
            plan: 0,
            exchanges: 5,
            broadcasts: 0,
            reused: 0,
        },
        // AQE Final Plan (3.3 event log): Final tree `Exchange` (6) and (3); the Initial Plan's
        // `Exchange` (11) and (9) do not run and are not counted.
        Case {
            file: "spark-3.3.0-SNAPSHOT__eventlog-local-1642039451826__exec0__03-SparkListenerSQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
            plan: 0,
            exchanges: 2,
            broadcasts: 0,
            reused: 0,
        },
        // Databricks 13.3 Photon, AQE Final Plan (lines 4–255 of the file). 25
        // `PhotonShuffleMapStage` lines: 8 with `Arguments: ENSURE_REQUIREMENTS` (shuffles), 17
        // with `EXECUTOR_BROADCAST` (broadcasts); 14 `ReusedExchange` (7 reuse (6), 7 reuse (22)).
        Case {
            file: "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__last-SQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
            plan: 0,
            exchanges: 8,
            broadcasts: 17,
            reused: 14,
        },
        // Databricks serverless Photon, pre-execution (`== Initial Plan ==` only). Map stages
        // (6), (18), (28) `ENSURE_REQUIREMENTS` and (24) `REPARTITION_BY_NUM` are shuffles; (12)
        // `EXECUTOR_BROADCAST` is the broadcast.
        Case {
            file: "databricks-serverless-photon__github-readme-pyspark_demo__explain-formatted__top_avg_opt.txt",
            plan: 0,
            exchanges: 4,
            broadcasts: 1,
            reused: 0,
        },
        // Tree-only `EXPLAIN COST` (4.1.1): the subquery is drawn twice (under the `Filter` and
        // under the scan's pushed filter), one `Exchange SinglePartition` each; it runs once.
        Case {
            file: "spark-4.1.1__sql-tests__explain-cbo.sql.out",
            plan: 0,
            exchanges: 1,
            broadcasts: 0,
            reused: 0,
        },
        // Databricks Photon `explain(True)`, tree-only: two `PhotonShuffleMapStage
        // EXECUTOR_BROADCAST` lines, no shuffle.
        Case {
            file: "databricks-photon__github-notebook-biker_r_project__explain-extended.txt",
            plan: 0,
            exchanges: 0,
            broadcasts: 2,
            reused: 0,
        },
    ];
    for case in cases {
        let plans = samples.parse(case.file);
        let plan = &plans[case.plan];
        assert_eq!(
            (
                plan.exchanges(),
                plan.broadcast_exchanges(),
                plan.reused_exchanges()
            ),
            (case.exchanges, case.broadcasts, case.reused),
            "{}",
            case.file
        );
    }
}

#[test]
fn aqe_final_plan_is_the_one_that_runs() {
    let Some(samples) = Samples::find() else {
        return;
    };
    let plan = samples.only_plan(
        "spark-3.3.0-SNAPSHOT__eventlog-local-1642039451826__exec0__03-SparkListenerSQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
    );
    assert_eq!(plan.is_final_plan, Some(true));
    assert_eq!(plan.aqe_label, Some(AqeLabel::Final));
    let root = plan.root_node();
    assert_eq!(
        (root.id, root.operator),
        (Some(13), Operator::AdaptiveSparkPlan)
    );
    assert_eq!(plan.nodes[root.children[0]].id, Some(8));
    // The Initial Plan shares Project (2) and Range (1) with the final one.
    let initial: Vec<u32> = plan
        .initial_nodes()
        .iter()
        .filter_map(|&i| plan.nodes[i].id)
        .collect();
    assert_eq!(initial, vec![12, 11, 10, 9, 2, 1]);
    assert_eq!(
        plan.nodes[plan.initial_plan().unwrap()].section,
        Section::InitialPlan
    );
    let running: BTreeSet<u32> = plan
        .running_nodes()
        .iter()
        .filter_map(|&i| plan.nodes[i].id)
        .collect();
    assert_eq!(running, (1..=8).chain([13]).collect());
    // `repartition(10)`: round-robin, user-requested.
    let user = plan.user_requested_exchanges();
    assert_eq!(user.len(), 1);
    assert_eq!(plan.nodes[user[0].node].id, Some(3));
    let p = user[0].partitioning.unwrap();
    assert_eq!(
        (p.kind, p.num_partitions),
        (PartitioningKind::RoundRobin, Some(10))
    );
    assert_eq!(user[0].origin, Some(&ShuffleOrigin::RepartitionByNum));
    // Query stage ids.
    assert_eq!(plan.node_by_id(7).unwrap().details.stage_id, Some(1));

    // The same query before execution, and while running.
    let before = samples.only_plan(
        "spark-3.3.0-SNAPSHOT__eventlog-local-1642039451826__exec0__00-SparkListenerSQLExecutionStart__physicalPlanDescription.txt",
    );
    assert_eq!(
        (before.is_final_plan, before.aqe_label),
        (Some(false), None)
    );
    let running = samples.only_plan(
        "spark-3.3.0-SNAPSHOT__eventlog-local-1642039451826__exec0__01-SparkListenerSQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
    );
    assert_eq!(
        (running.is_final_plan, running.aqe_label),
        (Some(false), Some(AqeLabel::Current))
    );
}

#[test]
fn photon_final_plan_statistics_and_reuse() {
    let Some(samples) = Samples::find() else {
        return;
    };
    let plan = samples.only_plan(
        "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__last-SQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
    );
    assert_eq!(plan.is_final_plan, Some(true));
    assert_eq!(plan.trailers[0].title, "Photon Explanation");
    assert_eq!(
        plan.trailers[0].text,
        "The query is fully supported by Photon."
    );
    // `ShuffleQueryStage (30), Statistics(sizeInBytes=10.1 KiB, rowCount=431, …)`.
    let stage = plan.node_by_id(30).unwrap();
    let stats = stage.details.statistics.as_ref().unwrap();
    assert_eq!(
        (stats.size_in_bytes, stats.row_count),
        (Some(10342), Some(431))
    );
    assert_eq!(stage.details.stage_id, Some(24));
    // `(35) ReusedExchange [Reuses operator id: 6]`, (6) being an executor broadcast.
    let reused = plan
        .exchange_infos()
        .into_iter()
        .find(|e| plan.nodes[e.node].id == Some(35))
        .unwrap();
    assert_eq!(reused.kind, ExchangeKind::Reused);
    let target = &plan.nodes[reused.reuses.unwrap()];
    assert_eq!(
        (target.id, target.operator),
        (Some(6), Operator::BroadcastExchange)
    );
    // Path-based Photon scans keep the trailing space of their name.
    assert_eq!(plan.node_by_id(1).unwrap().name, "PhotonScan parquet ");
    // Photon shuffle: partitioning on the sink, origin on the map stage (29).
    let shuffle = plan
        .exchange_info(plan.nodes.iter().position(|n| n.id == Some(29)).unwrap())
        .unwrap();
    assert_eq!(shuffle.origin, Some(&ShuffleOrigin::EnsureRequirements));
    assert_eq!(shuffle.partitioning.unwrap().kind, PartitioningKind::Single);
}

/// A Scala UDF on Databricks: Photon ran the range, Spark's JVM engine the `Project` with the
/// UDF, on rows from `ColumnarToRow`; the trailer says which expression and which operator.
#[test]
fn photon_explanation_names_what_ran_outside_photon() {
    let Some(samples) = Samples::find() else {
        return;
    };
    let plan = samples.only_plan(
        "databricks-photon__github-notebook-dbx-demo__explain-formatted__scala-udf-fallback.txt",
    );
    let explanation = plan.photon_explanation().unwrap();
    assert!(!explanation.fully_supported);
    assert_eq!(explanation.unsupported.len(), 1);
    let udf = &explanation.unsupported[0];
    assert_eq!(
        (udf.kind, udf.what.as_str()),
        (UnsupportedKind::Expression, "UDF()")
    );
    assert!(udf.is_udf());
    assert_eq!(explanation.reference_nodes, ["Project [UDF() AS UDF()#46]"]);
    let outside: Vec<Option<u32>> = plan
        .outside_photon()
        .into_iter()
        .map(|i| plan.nodes[i].id)
        .collect();
    assert_eq!(outside, [Some(4)], "only the Project ran outside Photon");

    // Fully supported: the trailer says so, and nothing but plumbing is Spark's own (the final
    // plan's query stages, reused exchanges and result stage, the closing `ColumnarToRow`).
    for file in [
        "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__SQLExecutionStart__physicalPlanDescription.txt",
        "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__last-SQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
        "databricks-serverless-photon__github-readme-pyspark_demo__explain-formatted__top_avg_opt.txt",
        "databricks-photon__github-notebook-biker_r_project__explain-extended.txt",
    ] {
        let plan = samples.only_plan(file);
        let explanation = plan.photon_explanation().unwrap();
        assert!(
            explanation.fully_supported && explanation.unsupported.is_empty(),
            "{file}"
        );
        assert!(plan.runs_photon(), "{file}");
        assert!(plan.outside_photon().is_empty(), "{file}");
    }
    // Spark outside Databricks: no trailer, no Photon, nothing called a fallback.
    let plan = samples.only_plan("spark-4.1.1__tpcds-v1_4__q88__explain.txt");
    assert!(plan.photon_explanation().is_none() && !plan.runs_photon());
    assert!(plan.outside_photon().is_empty());
}

#[test]
fn sort_merge_join_details() {
    let Some(samples) = Samples::find() else {
        return;
    };
    // `(19) SortMergeJoin [codegen id : 11]`, tree line `SortMergeJoin LeftAnti (19)`.
    let plan = samples.only_plan("spark-4.1.1__tpcds-v1_4__q16__explain.txt");
    let smj = plan.node_by_id(19).unwrap();
    assert_eq!(smj.operator, Operator::SortMergeJoin);
    assert_eq!(smj.name, "SortMergeJoin");
    assert_eq!(smj.codegen_stage, Some(11));
    let d = &smj.details;
    assert_eq!(
        d.left_keys.as_deref(),
        Some(&["cs_order_number#5".to_string()][..])
    );
    assert_eq!(
        d.right_keys.as_deref(),
        Some(&["cr_order_number#12".to_string()][..])
    );
    assert_eq!(d.join_type.as_deref(), Some("LeftAnti"));
    assert_eq!(d.join_condition, None);

    // Two keys (q64.sf100, `(12) SortMergeJoin`).
    let plan = samples.only_plan("spark-4.1.1__tpcds-v1_4__q64.sf100__explain.txt");
    let d = &plan.node_by_id(12).unwrap().details;
    assert_eq!(
        d.left_keys.clone().unwrap(),
        vec!["ss_item_sk#1".to_string(), "ss_ticket_number#8".to_string()]
    );
    assert_eq!(d.right_keys.as_ref().unwrap().len(), 2);
    assert_eq!(d.join_type.as_deref(), Some("Inner"));

    // Spark 3.1 prints no `Join type:` line: type and build side come from the tree line
    // `BroadcastHashJoin Inner BuildRight (42)`.
    let plan = samples.only_plan("spark-3.1.2__tpcds-v1_4__q1__explain.txt");
    let bhj = plan.node_by_id(42).unwrap();
    assert_eq!(bhj.name, "BroadcastHashJoin");
    assert_eq!(bhj.details.join_type.as_deref(), Some("Inner"));
    assert_eq!(bhj.details.build_side.as_deref(), Some("BuildRight"));
    assert_eq!(
        bhj.details.right_keys.as_deref(),
        Some(&["cast(c_customer_sk#31 as bigint)".to_string()][..])
    );
}

#[test]
fn exchange_details() {
    let Some(samples) = Samples::find() else {
        return;
    };
    // `Arguments: hashpartitioning(sr_customer_sk#1, sr_store_sk#2, 5), ENSURE_REQUIREMENTS, [plan_id=1]`.
    let plan = samples.only_plan("spark-4.1.1__tpcds-v1_4__q1__explain.txt");
    let exchange = plan.node_by_id(8).unwrap();
    let d = &exchange.details;
    let p = d.partitioning.as_ref().unwrap();
    assert_eq!(p.kind, PartitioningKind::Hash);
    assert_eq!(p.expressions, vec!["sr_customer_sk#1", "sr_store_sk#2"]);
    assert_eq!(p.num_partitions, Some(5));
    assert_eq!(d.shuffle_origin, Some(ShuffleOrigin::EnsureRequirements));
    assert_eq!(d.plan_id, Some(1));
    assert!(plan.user_requested_exchanges().is_empty());
    // `(45) BroadcastExchange`, root of the DPP subquery tree, reused by (4) and (14).
    let broadcast = plan.node_by_id(45).unwrap();
    assert_eq!(broadcast.section, Section::Subquery(0));
    assert!(
        broadcast
            .details
            .broadcast_mode
            .as_deref()
            .unwrap()
            .starts_with("HashedRelationBroadcastMode(")
    );
    assert_eq!(
        plan.node_by_id(4).unwrap().details.reuses_operator_id,
        Some(45)
    );
    assert_eq!(plan.subqueries.len(), 2);
    assert_eq!(plan.subqueries[0].hosting_operator_id, Some(1));
    assert_eq!(
        plan.subqueries[0].hosting_expression,
        "sr_returned_date_sk#4 IN dynamicpruning#5"
    );
    assert_eq!(
        plan.subqueries[1].root, None,
        "Subquery:2 reuses Subquery:1's plan"
    );

    // Spark 3.1.2 TPC-DS prints `hashpartitioning(…, 5), true, [id=#10]`.
    let plan = samples.only_plan("spark-3.1.2__tpcds-v1_4__q1__explain.txt");
    let d = &plan.node_by_id(12).unwrap().details;
    assert_eq!(
        d.shuffle_origin,
        Some(ShuffleOrigin::NoUserSpecifiedNumPartition(true))
    );
    assert_eq!(d.plan_id, Some(10));

    // Range partitioning before a global sort (4.1.1 golden, normalised `plan_id=x`).
    let plans = samples.parse("spark-4.1.1__sql-tests__explain.sql.out");
    let sorted = &plans[1];
    let d = &sorted.node_by_id(7).unwrap().details;
    let p = d.partitioning.as_ref().unwrap();
    assert_eq!(
        (p.kind, p.num_partitions),
        (PartitioningKind::Range, Some(4))
    );
    assert_eq!(p.expressions, vec!["key#x ASC NULLS FIRST"]);
    assert_eq!(d.plan_id, None);
    let sort = &sorted.node_by_id(8).unwrap().details;
    assert_eq!(
        sort.sort_order.as_deref(),
        Some(&["key#x ASC NULLS FIRST".to_string()][..])
    );
    assert_eq!(sort.global_sort, Some(true));
}

#[test]
fn scan_details() {
    let Some(samples) = Samples::find() else {
        return;
    };
    let plan = samples.only_plan("spark-4.1.1__tpcds-v1_4__q1__explain.txt");
    let scan = plan.node_by_id(1).unwrap();
    assert_eq!(scan.operator, Operator::Scan);
    assert_eq!(
        scan.name,
        "Scan parquet spark_catalog.default.store_returns"
    );
    let s = scan.details.scan.as_ref().unwrap();
    assert_eq!(s.format.as_deref(), Some("parquet"));
    assert_eq!(
        s.table.as_deref(),
        Some("spark_catalog.default.store_returns")
    );
    assert_eq!(
        s.partition_filters.clone().unwrap(),
        vec![
            "isnotnull(sr_returned_date_sk#4)".to_string(),
            "dynamicpruningexpression(sr_returned_date_sk#4 IN dynamicpruning#5)".to_string()
        ]
    );
    assert_eq!(
        s.pushed_filters.clone().unwrap(),
        vec![
            "IsNotNull(sr_store_sk)".to_string(),
            "IsNotNull(sr_customer_sk)".to_string()
        ]
    );
    assert_eq!(s.location.as_deref(), Some("InMemoryFileIndex []"));
    assert_eq!(
        s.read_schema.as_deref(),
        Some("struct<sr_customer_sk:int,sr_store_sk:int,sr_return_amt:decimal(7,2)>")
    );
    assert_eq!(scan.details.output.as_ref().unwrap().len(), 4);
    assert_eq!(scan.details.field("Batched"), Some("true"));

    // A scan with no partition filter prints no `PartitionFilters` line at all.
    let s = plan.node_by_id(27).unwrap().details.scan.clone().unwrap();
    assert_eq!(s.partition_filters, None);

    // Photon scans print `RequiredDataFilters` instead of `PushedFilters`.
    let plan = samples.only_plan(
        "databricks-serverless-photon__github-readme-pyspark_demo__explain-formatted__top_avg_opt.txt",
    );
    let scan = plan.node_by_id(1).unwrap();
    assert!(scan.photon);
    assert_eq!(scan.details.scan.as_ref().unwrap().pushed_filters, None);
    assert!(
        scan.details
            .field("RequiredDataFilters")
            .unwrap()
            .contains("isnotnull(rating#12438L)")
    );
    assert_eq!(
        scan.details.scan.as_ref().unwrap().required_data_filters,
        Some(vec![
            "isnotnull(rating#12438L)".to_string(),
            "isnotnull(user_id#12434L)".to_string(),
            "(try_cast(rating#12438L as double) >= 5.0)".to_string(),
        ])
    );
    let plan = samples.only_plan(
        "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__SQLExecutionStart__physicalPlanDescription.txt",
    );
    let time_dim = plan.node_by_id(10).unwrap().details.scan.clone().unwrap();
    assert_eq!(
        time_dim.dictionary_filters,
        Some(vec![
            "(t_hour#145 = 8)".to_string(),
            "(t_minute#146 >= 30)".to_string()
        ])
    );
}

#[test]
fn tree_only_plans() {
    let Some(samples) = Samples::find() else {
        return;
    };
    // `EXPLAIN EXTENDED` in the 4.1.1 golden: `*HashAggregate(...)` trees with normalised
    // codegen markers.
    let plans = samples.parse("spark-4.1.1__sql-tests__explain.sql.out");
    let plan = &plans[0];
    assert_eq!(plan.kind, PlanKind::TreeOnly);
    assert_eq!(plan.exchanges(), 2);
    let root = plan.root_node();
    assert_eq!(
        (root.name.as_str(), root.whole_stage_codegen),
        ("HashAggregate", true)
    );
    assert_eq!(
        root.details.functions.as_deref(),
        Some(&["sum(distinct val#x)".to_string()][..])
    );
    // Ids are numbered post-order, as Spark does for formatted output: the scan is (1).
    assert_eq!(root.id, Some(plan.nodes.len() as u32));
    let scan = plan.node_by_id(1).unwrap();
    assert_eq!(
        scan.name,
        "FileScan parquet spark_catalog.default.explain_temp1"
    );
    let s = scan.details.scan.as_ref().unwrap();
    assert_eq!(
        (s.partition_filters.clone(), s.pushed_filters.clone()),
        (Some(vec![]), Some(vec![]))
    );
    // Post-order: scan (1), ColumnarToRow (2), HashAggregate (3), Exchange (4).
    let exchange = plan.node_by_id(4).unwrap();
    assert_eq!(exchange.operator, Operator::Exchange);
    let p = exchange.details.partitioning.as_ref().unwrap();
    assert_eq!(
        (p.kind, p.num_partitions),
        (PartitioningKind::Hash, Some(4))
    );

    // Databricks `explain(True)`: AQE with only an Initial Plan, Photon one-liners.
    let plan = samples
        .only_plan("databricks-photon__github-notebook-biker_r_project__explain-extended.txt");
    assert_eq!(
        (plan.kind, plan.is_final_plan, plan.aqe_label),
        (PlanKind::TreeOnly, Some(false), Some(AqeLabel::Initial))
    );
    let join = plan
        .nodes
        .iter()
        .find(|n| n.name == "PhotonBroadcastHashJoin")
        .unwrap();
    assert_eq!(
        join.details.left_keys.as_deref(),
        Some(&["product_id#16320L".to_string()][..])
    );
    assert_eq!(join.details.build_side.as_deref(), Some("BuildRight"));
    assert_eq!(plan.trailers.len(), 2);
}

#[test]
fn commands_and_recursive_ctes_keep_inner_children() {
    let Some(samples) = Samples::find() else {
        return;
    };
    let plans = samples.parse("spark-4.1.1__sql-tests__explain.sql.out");
    let view = plans
        .iter()
        .find(|p| p.root_node().name == "Execute CreateViewCommand")
        .unwrap();
    let root = view.root_node();
    assert_eq!(root.operator, Operator::Command);
    let cmd = &view.nodes[root.children[0]];
    assert!(cmd.inner);
    assert_eq!(cmd.name, "CreateViewCommand");
    let union_loop = plans
        .iter()
        .find_map(|p| p.nodes.iter().find(|n| n.name == "UnionLoop"))
        .unwrap();
    assert_eq!(union_loop.children.len(), 2);
}

#[test]
fn json_shape() {
    let Some(samples) = Samples::find() else {
        return;
    };
    #[derive(serde::Serialize)]
    struct Entry<'a> {
        #[serde(flatten)]
        plan: &'a Plan,
        findings: Vec<()>,
    }
    let plan = samples.only_plan("spark-4.1.1__tpcds-v1_4__q1__explain.txt");
    let doc = serde_json::json!({
        "schema": SCHEMA,
        "plans": [Entry { plan: &plan, findings: vec![] }],
    });
    assert_eq!(doc["schema"], "sparkdiag/plan/v1");
    let entry = &doc["plans"][0];
    assert_eq!(entry["exchanges"], 3);
    assert_eq!(entry["broadcast_exchanges"], 4);
    assert_eq!(entry["reused_exchanges"], 2);
    assert_eq!(entry["is_final_plan"], serde_json::Value::Null);
    assert_eq!(entry["findings"], serde_json::json!([]));
    let nodes = entry["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 45);
    let ids: BTreeSet<u64> = nodes.iter().map(|n| n["id"].as_u64().unwrap()).collect();
    assert_eq!(ids.len(), 45, "each id once");
    for node in nodes {
        for child in node["children"].as_array().unwrap() {
            assert!(ids.contains(&child.as_u64().unwrap()));
        }
        assert!(node["name"].is_string() && node["details"].is_object());
        assert!(node.get("codegen_stage").is_some());
    }
    let exchange = nodes.iter().find(|n| n["id"] == 8).unwrap();
    assert_eq!(exchange["name"], "Exchange");
    assert_eq!(exchange["children"], serde_json::json!([7]));
    assert_eq!(exchange["details"]["partitioning"]["num_partitions"], 5);
    assert_eq!(exchange["details"]["shuffle_origin"], "ENSURE_REQUIREMENTS");
    assert_eq!(
        exchange["details"]["fields"]["Input"],
        "[sr_customer_sk#1, sr_store_sk#2, sum#8]"
    );
    let smj_like = nodes.iter().find(|n| n["id"] == 5).unwrap();
    assert_eq!(smj_like["codegen_stage"], 2);
    assert_eq!(entry["subqueries"][0]["root"], 45);

    // AQE: the initial plan is kept aside with its own nodes.
    let plan = samples.only_plan(
        "spark-3.3.0-SNAPSHOT__eventlog-local-1642039451826__exec0__03-SparkListenerSQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
    );
    let json = serde_json::to_value(&plan).unwrap();
    assert_eq!(json["is_final_plan"], true);
    assert_eq!(json["initial_plan"]["root"], 12);
    assert_eq!(json["nodes"].as_array().unwrap().len(), 9);
    assert_eq!(json["user_requested_exchanges"], serde_json::json!([3]));
}

/// A small deterministic generator, so failures reproduce.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Parses `text` and exercises every accessor; a panic anywhere fails with the input's story.
fn must_not_panic(text: &str, what: &str) {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        if let Ok(plans) = parse_plans(text) {
            for plan in &plans {
                let _ = (
                    plan.exchanges(),
                    plan.broadcast_exchanges(),
                    plan.reused_exchanges(),
                );
                let _ = plan.user_requested_exchanges();
                let _ = plan.initial_nodes();
                serde_json::to_string(plan).expect("serialise");
            }
        }
    }));
    if outcome.is_err() {
        panic!("parse_plans panicked on {what}");
    }
}

#[test]
fn damaged_samples_never_panic() {
    let Some(samples) = Samples::find() else {
        return;
    };
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut runs = 0;
    for name in samples.names() {
        let text = samples.read(&name);
        // Big JSON files fail at line 1 whatever is cut; a few variants are enough there.
        let variants = if text.len() > 150_000 { 3 } else { 12 };

        // Truncated at evenly spaced and random points (on char boundaries).
        for k in 0..variants {
            let mut cut = if k % 2 == 0 {
                text.len() * k / variants
            } else {
                rng.below(text.len())
            };
            while !text.is_char_boundary(cut) {
                cut -= 1;
            }
            must_not_panic(&text[..cut], &format!("{name} cut at byte {cut}"));
            runs += 1;
        }

        let lines: Vec<&str> = text.lines().collect();
        for k in 0..variants {
            // Random lines deleted (1 to ~5%).
            let deletions = 1 + rng.below(lines.len() / 20 + 1);
            let mut dropped = BTreeSet::new();
            for _ in 0..deletions {
                dropped.insert(rng.below(lines.len()));
            }
            let damaged: Vec<&str> = lines
                .iter()
                .enumerate()
                .filter(|(i, _)| !dropped.contains(i))
                .map(|(_, l)| *l)
                .collect();
            must_not_panic(
                &damaged.join("\n"),
                &format!("{name} without lines {dropped:?}"),
            );

            // Lines duplicated, swapped, re-indented or cut short.
            let mut mangled: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
            for _ in 0..deletions {
                if mangled.is_empty() {
                    break;
                }
                let i = rng.below(mangled.len());
                let j = rng.below(mangled.len());
                match (k + i) % 4 {
                    0 => {
                        let copy = mangled[j].clone();
                        mangled.insert(i, copy);
                    }
                    1 => mangled.swap(i, j),
                    2 => mangled[i] = format!(" {}", mangled[i]),
                    _ => {
                        let line = &mangled[i];
                        let mut cut = rng.below(line.len() + 1);
                        while !line.is_char_boundary(cut) {
                            cut -= 1;
                        }
                        mangled[i] = line[..cut].to_string();
                    }
                }
            }
            must_not_panic(
                &mangled.join("\n"),
                &format!("{name} mangled (variant {k})"),
            );
            runs += 2;
        }
    }
    assert!(runs > 2000, "{runs} damaged inputs");
}

#[test]
fn errors_carry_the_line_and_what_was_expected() {
    let err = parse_plans("== Physical Plan ==\n* Sort (2)\n+- Exchange\n").unwrap_err();
    assert_eq!((err.line, err.kind), (3, ErrorKind::MissingOperatorId));
    assert!(
        err.to_string()
            .starts_with("line 3: expected an operator line ending in `(id)`")
    );

    let err =
        parse_plans("== Physical Plan ==\nSort (3)\n+- Exchange (2)\n         +- Range (1)\n")
            .unwrap_err();
    assert_eq!((err.line, err.kind), (4, ErrorKind::Indentation));

    let err = parse_plans("some notes\nno plan here\n").unwrap_err();
    assert_eq!((err.line, err.kind), (1, ErrorKind::NoPlan));

    let text = "== Physical Plan ==\nFilter (1)\n\n\n(1) Filter\nCondition : x\n\n===== Subqueries =====\n\nSubquery:one Hosting operator id = 1\n";
    let err = parse_plans(text).unwrap_err();
    assert_eq!((err.line, err.kind), (10, ErrorKind::MalformedSection));
}

#[test]
fn consistency_problems_are_warnings() {
    let text = "== Physical Plan ==\n* Project (2)\n+- Scan parquet t (1)\n\n\n(1) Scan parquet u\nOutput [2]: [a#1]\n\n(3) Filter\nInput [1]: [a#1]\n";
    let plan = parse_plans(text).unwrap().remove(0);
    let kinds: Vec<_> = plan.warnings.iter().map(|w| (w.line, w.kind)).collect();
    use sparkdiag_plan::WarningKind::*;
    assert_eq!(
        kinds,
        vec![
            (2, MissingDetails),
            (3, NameMismatch),
            (7, ListCountMismatch),
            (9, OrphanDetails)
        ]
    );
}
