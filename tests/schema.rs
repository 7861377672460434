//! The JSON contract `sparkdiag/report/v1` against its JSON Schema, `docs/schema/report-v1.json`
//! (draft 2020-12): every report the binary writes for the committed logs, for the logs that
//! sit beside the repository, and for the golden logs, validates; and every field the schema
//! names is one some report really has, so the schema can drift neither way unseen.
//!
//! The schema is written by hand from the contract types (`crates/contract`, with the types
//! they hold from `rules`, `whatif`, `model` and `eventlog`). Objects the contract closes have
//! `additionalProperties: false` and list their fields as required (a field only written when
//! it applies, `#[serde(skip_serializing_if)]`, is the exception), so a field added, renamed
//! or dropped in the code fails here until the schema says so too.

use std::collections::BTreeSet;
use std::process::Command;

use serde_json::Value;

use crate::util::{repo, shared_opt, shared_opt_for};

fn schema() -> Value {
    let path = repo().join("docs/schema/report-v1.json");
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn validator() -> jsonschema::Validator {
    jsonschema::draft202012::new(&schema()).expect("the schema is a valid draft 2020-12 schema")
}

/// `sparkdiag analyze ARGS --format json`, from the repository root: every report it wrote.
fn reports(args: &[&str]) -> Vec<Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
        .current_dir(repo())
        .arg("analyze")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("run sparkdiag");
    assert!(
        out.status.code() == Some(0),
        "sparkdiag analyze {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    match serde_json::from_slice(&out.stdout).expect("JSON output") {
        Value::Array(reports) => reports,
        report => vec![report],
    }
}

/// Every report of the committed logs (one run over all of testdata/logs, so each layout,
/// codec and planted problem is in it), and one with a price, which adds `impact_cost`.
fn committed_reports() -> Vec<Value> {
    let mut all = reports(&["testdata/logs"]);
    all.extend(reports(&[
        "testdata/logs/patterns/driver-loop-threadpool",
        "--price-per-core-hour",
        "0.5",
    ]));
    // Gates that pass, settings off their defaults and the findings narrowed: `gates`,
    // `source.config` and `narrowed` filled in.
    all.extend(reports(&[
        "testdata/logs/patterns/skew-join",
        "--max-runtime",
        "10h",
        "--max-spill",
        "100GiB",
        "--set",
        "SK001.ratio=4",
        "--disable",
        "CF003",
        "--only",
        "skew",
        "--top",
        "1",
    ]));
    all
}

/// The first ten places where `doc` does not fit the schema, one line each.
fn misfits(validator: &jsonschema::Validator, doc: &Value) -> Vec<String> {
    validator
        .iter_errors(doc)
        .take(10)
        .map(|e| format!("  at {}: {e}", e.instance_path()))
        .collect()
}

fn check(validator: &jsonschema::Validator, reports: &[Value], what: &str) {
    assert!(!reports.is_empty(), "{what}: no reports");
    for report in reports {
        let errors = misfits(validator, report);
        assert!(
            errors.is_empty(),
            "{what}: the report of {} does not fit docs/schema/report-v1.json:\n{}",
            report["source"]["inputs"],
            errors.join("\n")
        );
    }
}

#[test]
fn every_report_of_the_committed_logs_fits_the_schema() {
    let reports = committed_reports();
    assert!(reports.len() > 60, "{} reports", reports.len());
    check(&validator(), &reports, "testdata/logs");
}

/// The logs of the golden files (tests/golden/), named as tests/golden.rs names them.
#[test]
fn the_golden_logs_reports_fit_the_schema() {
    let validator = validator();
    for log in [
        "testdata/logs/failed/",
        "testdata/logs/patterns/skew-join",
        "testdata/logs/patterns/driver-loop-serial",
    ] {
        check(&validator, &reports(&[log]), log);
    }
}

/// Other tools' real logs and Spark's own History Server suite: Spark versions from 1.x on,
/// Databricks, shapes nobody here wrote.
#[test]
fn every_report_of_the_shared_logs_fits_the_schema() {
    let validator = validator();
    for rel in [
        "real-world",
        "spark-conformance/spark-events",
        "spark-conformance/sql-spark-events",
    ] {
        let Some(dir) = shared_opt(rel) else { continue };
        check(&validator, &reports(&[dir.to_str().unwrap()]), rel);
    }
}

/// Drift that validation alone cannot see: a field the code no longer writes. Each property
/// the schema names (by its path of object keys, `[]` for array items) appears in at least
/// one committed report, except the few listed here, which no committed log has.
#[test]
fn every_field_the_schema_names_is_in_some_report() {
    let schema = schema();
    let mut named = BTreeSet::new();
    properties(&schema, &schema, "", &mut Vec::new(), &mut named);
    let mut seen = BTreeSet::new();
    for report in committed_reports() {
        paths(&report, "", &mut seen);
    }
    // Changes no committed log's findings propose (`add_cores` is the what-if's own, and no
    // scenario replays an Exchange dropped or slow executors avoided).
    let unseen_by_design = [
        "findings[].counterfactual.change.cores",
        "what_if.scenarios[].change.cores",
        "what_if.scenarios[].change.exchanges",
        "what_if.scenarios[].change.executors",
        // GC002's heap size is memory, not time: never a replayed scenario.
        "what_if.scenarios[].change.from_bytes",
        "what_if.scenarios[].change.peak_bytes",
        "what_if.scenarios[].change.to_bytes",
        // DR003's faster commit is the rule's own bound, never a replayed scenario.
        "what_if.scenarios[].change.sql_executions",
        // Only with `--price-per-gb-hour`, which no golden is run with; tests/rules.rs checks
        // its value on the over-provisioned log.
        "findings[].impact_memory_cost",
    ];
    let missing: Vec<&String> = named
        .iter()
        .filter(|p| !seen.contains(*p) && !unseen_by_design.contains(&p.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "docs/schema/report-v1.json names fields no committed report has (dropped from the \
         contract, or renamed?): {missing:#?}"
    );
    assert!(named.len() > 300, "{} properties named", named.len());
}

/// The paths of the properties a schema names, following `$ref`s into `$defs` (each once on
/// a path, so a recursive definition ends) and every combinator.
fn properties(
    root: &Value,
    node: &Value,
    at: &str,
    refs: &mut Vec<String>,
    out: &mut BTreeSet<String>,
) {
    let Some(map) = node.as_object() else { return };
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        let name = reference.trim_start_matches("#/$defs/").to_string();
        if !refs.contains(&name) {
            refs.push(name.clone());
            properties(root, &root["$defs"][&name], at, refs, out);
            refs.pop();
        }
    }
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        for (key, value) in props {
            let path = if at.is_empty() {
                key.clone()
            } else {
                format!("{at}.{key}")
            };
            out.insert(path.clone());
            properties(root, value, &path, refs, out);
        }
    }
    if let Some(items) = map.get("items") {
        properties(root, items, &format!("{at}[]"), refs, out);
    }
    for combinator in ["anyOf", "oneOf", "allOf"] {
        for option in map
            .get(combinator)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            properties(root, option, at, refs, out);
        }
    }
}

/// The paths of the keys of a JSON value, as [`properties`] writes them.
fn paths(value: &Value, at: &str, out: &mut BTreeSet<String>) {
    match value {
        Value::Object(map) => {
            for (key, value) in map {
                let path = if at.is_empty() {
                    key.clone()
                } else {
                    format!("{at}.{key}")
                };
                out.insert(path.clone());
                paths(value, &path, out);
            }
        }
        Value::Array(items) => {
            for item in items {
                paths(item, &format!("{at}[]"), out);
            }
        }
        _ => {}
    }
}

/// The schema is strict where the contract is closed: a report with a field the contract does
/// not have, without one it has, or with a category it does not know, is refused.
#[test]
fn the_schema_refuses_a_report_that_drifted() {
    let validator = validator();
    let report = reports(&["testdata/logs/patterns/skew-join"]).remove(0);
    assert!(validator.is_valid(&report));

    let mut added = report.clone();
    added["summary"]["new_total_ms"] = 1.into();
    assert!(
        !validator.is_valid(&added),
        "a field the schema does not name"
    );

    let mut dropped = report.clone();
    dropped["application"]
        .as_object_mut()
        .unwrap()
        .remove("outcome");
    assert!(!validator.is_valid(&dropped), "a required field missing");

    let mut category = report.clone();
    category["findings"][0]["category"] = "exchange".into();
    assert!(
        !validator.is_valid(&category),
        "a category the contract has not"
    );

    let mut evidence = report;
    evidence["findings"][0]["evidence"]["anything"] = "goes".into();
    assert!(
        validator.is_valid(&evidence),
        "evidence is open: each rule's own numbers"
    );
}

/// `sparkdiag/plan/v1`, `docs/schema/plan-v1.json`: what `sparkdiag plan FILE --format json`
/// prints, for every committed plan text and every shared plan sample.
fn plan_schema() -> Value {
    let path = repo().join("docs/schema/plan-v1.json");
    let text = std::fs::read_to_string(&path).unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The plan documents of every plan text in `dir` (files `sparkdiag plan` refuses, such as a
/// README or an event log, are passed over: they are not plan text).
fn plan_documents(dir: &std::path::Path) -> Vec<(String, Value)> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
        .into_iter()
        .filter_map(|file| {
            let out = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
                .args(["plan", file.to_str().unwrap(), "--format", "json"])
                .output()
                .expect("run sparkdiag plan");
            out.status.success().then(|| {
                let doc = serde_json::from_slice(&out.stdout)
                    .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
                (file.display().to_string(), doc)
            })
        })
        .collect()
}

/// The committed plan texts' documents, and the shared samples' when `shared` names them.
fn all_plan_documents(shared: Option<std::path::PathBuf>) -> Vec<(String, Value)> {
    let mut docs = plan_documents(&repo().join("testdata/plans"));
    assert!(docs.len() >= 15, "{} committed plan texts", docs.len());
    if let Some(dir) = shared {
        let before = docs.len();
        docs.extend(plan_documents(&dir));
        assert!(
            docs.len() - before >= 60,
            "{} shared plan samples",
            docs.len() - before
        );
    }
    docs
}

#[test]
fn every_plan_document_fits_the_plan_schema() {
    let validator = jsonschema::draft202012::new(&plan_schema())
        .expect("the plan schema is a valid draft 2020-12 schema");
    let docs = all_plan_documents(shared_opt_for("plan-samples", "the shared samples' check"));
    for (file, doc) in &docs {
        let errors = misfits(&validator, doc);
        assert!(
            errors.is_empty(),
            "{file} does not fit docs/schema/plan-v1.json:\n{}",
            errors.join("\n")
        );
    }
    // Closed where the contract is: an unknown key in a node is refused.
    let (_, mut doc) = docs[0].clone();
    doc["plans"][0]["nodes"][0]["cost"] = 1.into();
    assert!(
        !validator.is_valid(&doc),
        "a node field the schema does not name"
    );
}

/// Drift the other way: each field the plan schema's objects name is written for some plan,
/// except the few no plan text here has. Photon, runtime statistics and other fields appear
/// only in the shared samples, so this needs them.
#[test]
fn every_field_the_plan_schema_names_is_in_some_plan() {
    let Some(shared) = shared_opt("plan-samples") else {
        return;
    };
    let schema = plan_schema();
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    for (_, doc) in all_plan_documents(Some(shared)) {
        for plan in doc["plans"].as_array().unwrap() {
            let mut note = |def: &str, value: &Value| {
                for key in value.as_object().into_iter().flat_map(|m| m.keys()) {
                    seen.insert((def.to_string(), key.clone()));
                }
            };
            note("plan", plan);
            let initial = plan["initial_plan"]["nodes"].as_array().cloned();
            for node in plan["nodes"]
                .as_array()
                .unwrap()
                .iter()
                .chain(initial.iter().flatten())
            {
                note("node", node);
                note("details", &node["details"]);
                note("scan", &node["details"]["scan"]);
                note("statistics", &node["details"]["statistics"]);
                note("partitioning", &node["details"]["partitioning"]);
            }
        }
    }
    // A subplan optimised away, a rebalance's advisory size and a parser warning: no plan text
    // here has one (the parser's own tests do).
    let unseen_by_design = [
        ("plan", "optimized_out"),
        ("details", "advisory_partition_size"),
    ];
    let mut missing = Vec::new();
    for def in [
        "plan",
        "node",
        "details",
        "scan",
        "statistics",
        "partitioning",
    ] {
        for key in schema["$defs"][def]["properties"]
            .as_object()
            .unwrap()
            .keys()
        {
            let pair = (def.to_string(), key.clone());
            if !seen.contains(&pair) && !unseen_by_design.contains(&(def, key.as_str())) {
                missing.push(pair);
            }
        }
    }
    assert!(
        missing.is_empty(),
        "docs/schema/plan-v1.json names fields no plan has: {missing:?}"
    );
}
