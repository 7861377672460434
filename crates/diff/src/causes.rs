//! Why the runtime changed: each candidate cause measured on the two runs, ranked by the share
//! of the change it explains, and the verdict in words. `docs/diff-causes.md` says how each
//! cause is measured and why the noise band is what it is.

use std::collections::BTreeSet;

use sparkdiag_contract::diff::{
    Cause, Correctness, Fact, FindingsDiff, MetricChange, PropertyChange, QueryDiff, Verdict,
    WorkMatch,
};
use sparkdiag_contract::units::{duration, human_bytes, share_change};
use sparkdiag_contract::{GROWTH_FACTOR, Report};
use sparkdiag_model::{Application, Removal};
use sparkdiag_whatif::replay::{Graph, ReplayOptions};

use crate::Run;

/// A runtime change smaller than this share of BEFORE's runtime is noise...
pub const NOISE_SHARE: f64 = 0.15;
/// ...or smaller than this, whichever is larger: a small job's runtime moves by seconds from
/// JVM start-up and scheduling alone.
pub const NOISE_FLOOR_MS: i64 = 3_000;

/// Properties that change plans, parallelism or memory: listed first when they differ.
const KNOWN_TO_MATTER: &[&str] = &[
    "spark.sql.shuffle.partitions",
    "spark.sql.autoBroadcastJoinThreshold",
    "spark.sql.adaptive.enabled",
    "spark.sql.adaptive.coalescePartitions.enabled",
    "spark.sql.adaptive.autoBroadcastJoinThreshold",
    "spark.sql.adaptive.skewJoin.enabled",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes",
    "spark.sql.adaptive.coalescePartitions.minPartitionSize",
    "spark.sql.join.preferSortMergeJoin",
    "spark.sql.files.maxPartitionBytes",
    "spark.sql.files.openCostInBytes",
    "spark.sql.codegen.wholeStage",
    "spark.sql.cbo.enabled",
    "spark.sql.optimizer.excludedRules",
    "spark.default.parallelism",
    "spark.memory.fraction",
    "spark.memory.storageFraction",
    "spark.memory.offHeap.enabled",
    "spark.memory.offHeap.size",
    "spark.serializer",
    "spark.speculation",
    "spark.shuffle.compress",
    "spark.io.compression.codec",
    "spark.sql.parquet.compression.codec",
    "spark.locality.wait",
    "spark.task.cpus",
    "spark.databricks.photon.enabled",
];

/// Properties that change the plan itself: a change in one of them explains a plan change.
const PLAN_KEYS: &[&str] = &[
    "spark.sql.shuffle.partitions",
    "spark.sql.autoBroadcastJoinThreshold",
    "spark.sql.adaptive.",
    "spark.sql.join.",
    "spark.sql.files.",
    "spark.sql.cbo.",
    "spark.sql.optimizer.",
    "spark.sql.codegen.",
    "spark.default.parallelism",
];

/// Properties that describe the cluster: a cluster change, not a configuration change.
const CLUSTER_KEYS: &[&str] = &[
    "spark.master",
    "spark.executor.instances",
    "spark.executor.cores",
    "spark.executor.memory",
    "spark.executor.memoryOverhead",
    "spark.executor.pyspark.memory",
    "spark.driver.memory",
    "spark.driver.cores",
    "spark.cores.max",
    "spark.dynamicAllocation.",
    "spark.kubernetes.executor.request.cores",
    "spark.kubernetes.executor.limit.cores",
    "spark.databricks.clusterUsageTags.clusterNodeType",
    "spark.databricks.clusterUsageTags.driverNodeType",
    "spark.databricks.clusterUsageTags.clusterWorkers",
    "spark.databricks.clusterUsageTags.clusterMinWorkers",
    "spark.databricks.clusterUsageTags.clusterMaxWorkers",
];

/// Properties that name the run or only change what it shows, not how it ran: ids, ports and
/// paths that differ between any two runs, and the cosmetic ones (the application's name,
/// the UI, logging), which are never a cause.
const IDENTITY_KEYS: &[&str] = &[
    "spark.app.name",
    "spark.log.",
    "spark.logConf",
    "spark.sql.ui.",
    "spark.sql.streaming.ui.",
    "spark.driver.log.",
    "spark.executor.logs.",
    "spark.app.id",
    "spark.app.startTime",
    "spark.app.submitTime",
    "spark.app.initial.",
    "spark.driver.port",
    "spark.driver.host",
    "spark.driver.appUIAddress",
    "spark.driver.extraJavaOptions",
    "spark.executor.extraJavaOptions",
    "spark.executor.id",
    "spark.blockManager.port",
    "spark.ui.",
    "spark.repl.",
    "spark.eventLog.",
    "spark.history.",
    "spark.sql.warehouse.dir",
    "spark.files",
    "spark.jars",
    "spark.submit.pyFiles",
    "spark.yarn.",
    "spark.kubernetes.driver.pod.name",
    "spark.databricks.clusterUsageTags.",
    "spark.databricks.driverNfs.",
    "spark.hadoop.",
];

fn matches(key: &str, list: &[&str]) -> bool {
    list.iter().any(|k| {
        if k.ends_with('.') {
            key.starts_with(k)
        } else {
            key == *k
        }
    })
}

/// What the rest of the diff found, that the causes and the verdict are read from.
pub(crate) struct Compared<'a> {
    pub metrics: &'a [MetricChange],
    pub work: &'a [WorkMatch],
    pub findings: &'a FindingsDiff,
    pub correctness: &'a Correctness,
    pub queries: &'a [QueryDiff],
}

/// The verdict and the ranked causes of the change from BEFORE to AFTER.
pub(crate) fn explain(
    before: Run,
    after: Run,
    compared: Compared,
    options: &crate::Options,
) -> (Verdict, Vec<Cause>) {
    let Compared {
        metrics,
        work,
        findings,
        correctness,
        queries,
    } = compared;
    let runtime = metrics.iter().find(|m| m.metric == "runtime_ms");
    let (runtime_b, runtime_a) = runtime.map_or((0, 0), |m| (m.before as i64, m.after as i64));
    let change = runtime_a - runtime_b;
    let noise = options
        .noise
        .map_or_else(|| noise_ms(runtime_b), |n| n.ms(runtime_b));
    let mut causes = Vec::new();
    let facts = Replays::of(before, after);

    if let Some(c) = data_growth(before, after, &facts) {
        causes.push(c);
    }
    let (config, plan) = configuration_and_plan(before, after, work);
    causes.extend(config);
    causes.extend(plan);
    if let Some(c) = cluster_change(before, after, &facts) {
        causes.push(c);
    }
    if let Some(c) = version_change(before.report, after.report) {
        causes.push(c);
    }
    if let Some(c) = skew_spill_failures(before, after, findings, &facts) {
        causes.push(c);
    }
    if let Some(c) = driver_time(before.report, after.report, noise) {
        causes.push(c);
    }

    // A cause that pushes against the change does not explain it: a slower run is not slower
    // because its input shrank.
    let beyond_noise = change.abs() > noise;
    // What changed but moved the runtime less than its noise is not a cause; it is still said,
    // so that "nothing material changed" never claims the plan or the settings are the same.
    let (kept, too_small): (Vec<Cause>, Vec<Cause>) = causes.into_iter().partition(|c| {
        c.measured_by == "not measured"
            || (c.explained_ms.signum() == change.signum() && beyond_noise)
            || c.explained_ms.abs() > noise
    });
    let mut causes = kept;
    // What no measured cause accounts for goes to the unmeasured ones (a version or a setting
    // nothing measures), shared evenly: said, not hidden.
    let measured: i64 = causes
        .iter()
        .filter(|c| c.measured_by != "not measured" && c.explained_ms.signum() == change.signum())
        .map(|c| c.explained_ms)
        .sum();
    let unmeasured = causes
        .iter()
        .filter(|c| c.measured_by == "not measured")
        .count() as i64;
    if unmeasured > 0 {
        let rest = if beyond_noise && measured.abs() < change.abs() {
            (change - measured) / unmeasured
        } else {
            0
        };
        for c in causes
            .iter_mut()
            .filter(|c| c.measured_by == "not measured")
        {
            c.explained_ms = rest;
        }
        // An unmeasured difference that nothing needs to explain is not a cause.
        causes.retain(|c| c.measured_by != "not measured" || c.explained_ms != 0);
    }
    let total: i64 = causes
        .iter()
        .filter(|c| c.explained_ms.signum() == change.signum())
        .map(|c| c.explained_ms.abs())
        .sum();
    let whole = total.max(change.abs());
    for c in &mut causes {
        c.share = (beyond_noise && c.explained_ms.signum() == change.signum() && whole > 0)
            .then(|| c.explained_ms.abs() as f64 / whole as f64);
    }
    // Driver-only time is what a loaded machine or a slow executor start-up inflates first: it
    // leads only when nothing structural changed. Among causes that explain as much, settings
    // none of which is known to matter come after the rest: beside a new Spark version they are
    // usually its own defaults (PySpark 3.5 sets spark.rdd.compress, 4.x does not).
    let incidental = |c: &Cause| {
        c.kind == "configuration_change"
            && c.measured_by == "not measured"
            && c.properties.iter().all(|p| !p.known_to_matter)
    };
    causes.sort_by_key(|c| {
        (
            c.explained_ms.signum() != change.signum(),
            c.kind == "driver_time",
            std::cmp::Reverse(c.explained_ms.abs()),
            incidental(c),
        )
    });
    if causes.is_empty() {
        let structural: Vec<Cause> = too_small
            .into_iter()
            .filter(|c| c.kind != "driver_time")
            .collect();
        causes.push(nothing_material(
            change,
            noise,
            runtime_b,
            beyond_noise,
            structural,
        ));
    }
    // Two runs of a stream: how long each ran is how long it was left to; its batches say how
    // it did.
    let streams = [before, after]
        .iter()
        .all(|r| r.report.application.workload == sparkdiag_model::Workload::StructuredStreaming);
    let batches = if streams { batch_speed(queries) } else { None };
    let verdict = verdict(change, runtime_b, noise, correctness, &causes, batches);
    (verdict, causes)
}

/// The band within which BEFORE's runtime moves between identical runs, when the job's owner
/// does not say (`--noise`).
pub fn noise_ms(runtime_before_ms: i64) -> i64 {
    ((runtime_before_ms as f64 * NOISE_SHARE).round() as i64).max(NOISE_FLOOR_MS)
}

/// What several causes read of each run.
struct Replays {
    /// Executor cores at the peak.
    cores: (i64, i64),
    /// The what-if replay of each run (`None` without tasks).
    graphs: (Option<Graph>, Option<Graph>),
}

impl Replays {
    fn of(before: Run, after: Run) -> Replays {
        Replays {
            cores: (before.facts.peak_cores, after.facts.peak_cores),
            graphs: (
                Graph::with_stage_stats(before.app, &before.facts.stages),
                Graph::with_stage_stats(after.app, &after.facts.stages),
            ),
        }
    }
}

fn replay(graph: &Graph, cores: i64, cut_skew: bool) -> i64 {
    graph.replay(ReplayOptions {
        slots: Some(cores.max(1) as usize),
        cut_skew,
        remove_driver_gaps: false,
    })
}

fn pct(before: f64, after: f64) -> String {
    if before == 0.0 {
        return "new".to_string();
    }
    share_change(after / before - 1.0)
}

fn fact(what: &str, unit: &'static str, before: impl Into<f64>, after: impl Into<f64>) -> Fact {
    Fact {
        what: what.to_string(),
        unit,
        before: before.into(),
        after: after.into(),
    }
}

fn executor_bound_ms(r: &Report) -> i64 {
    let total = r.application.duration_ms.unwrap_or(0);
    (total - r.summary.driver_time_ms).max(0)
}

fn data_growth(before: Run, after: Run, _facts: &Replays) -> Option<Cause> {
    let (sb, sa) = (&before.report.summary, &after.report.summary);
    let (rows_b, rows_a) = (before.report.input_rows(), after.report.input_rows());
    // Rows say how much work there was; a Parquet scan's input bytes count only part of what it
    // read (footers, the columns' pages it decoded), so bytes only when no rows are reported.
    let (b, a) = if rows_b > 0 && rows_a > 0 {
        (rows_b as f64, rows_a as f64)
    } else if sb.input_bytes > 0 && sa.input_bytes > 0 {
        (sb.input_bytes as f64, sa.input_bytes as f64)
    } else {
        return None;
    };
    let growth = a / b;
    if (1.0 / GROWTH_FACTOR..=GROWTH_FACTOR).contains(&growth) {
        return None;
    }
    let explained = (executor_bound_ms(before.report) as f64 * (growth - 1.0)).round() as i64;
    let mut facts = vec![fact(
        "input read",
        "bytes",
        sb.input_bytes as f64,
        sa.input_bytes as f64,
    )];
    let mut evidence = Vec::new();
    if rows_b > 0 || rows_a > 0 {
        facts.push(fact("rows read", "count", rows_b as f64, rows_a as f64));
    }
    // The work per unit of input, on the basis the growth was measured on: per GiB only when
    // bytes are that basis, since a Parquet scan that reports a few KiB makes "per GiB" huge and
    // meaningless while its rows say how much it read.
    let by_rows = rows_b > 0 && rows_a > 0;
    let (label, unit_size) = if by_rows {
        ("executor time per million rows read", 1e6)
    } else {
        ("executor time per GiB read", (1u64 << 30) as f64)
    };
    let per_unit = |run_ms: i64, amount: f64| run_ms as f64 / (amount.max(1.0) / unit_size);
    let (tb, ta) = (
        per_unit(sb.executor_run_time_ms, b),
        per_unit(sa.executor_run_time_ms, a),
    );
    facts.push(fact(label, "ms", tb.round(), ta.round()));
    if (0.67..=1.5).contains(&(ta / tb.max(1.0))) {
        evidence.push(format!(
            "{label} is about flat: the work grew with the data"
        ));
    }
    // A shrink is said as a factor too ("shrank 330×"), never as "0.0×".
    let (word, factor) = if growth > 1.0 {
        ("grew", growth)
    } else {
        ("shrank", 1.0 / growth)
    };
    // The figures the factor was measured on: rows when both runs report them.
    let read = if rows_b > 0 && rows_a > 0 {
        format!(
            "{} → {} rows read",
            sparkdiag_contract::units::thousands(rows_b),
            sparkdiag_contract::units::thousands(rows_a)
        )
    } else {
        format!(
            "{} → {} read",
            human_bytes(sb.input_bytes),
            human_bytes(sa.input_bytes)
        )
    };
    Some(Cause {
        kind: "data_growth",
        title: format!("the input {word} {factor:.1}× ({read})"),
        explained_ms: explained,
        share: None,
        measured_by: "scaled",
        facts,
        evidence,
        properties: Vec::new(),
    })
}

/// The settings that can change how a run goes, as one fingerprint: every `spark.*` property
/// but those that name the run or only change what it shows (the ones a diff never calls a
/// cause). Two runs of a job with the same fingerprint ran with the same settings; the
/// nightly batch checks the fixes of a job whose fingerprint changed since its last run.
/// FNV-1a, so that a fingerprint kept in a night file means the same to a later binary.
pub fn settings_fingerprint(app: &Application) -> String {
    let id = app.id.as_deref().filter(|id| !id.is_empty());
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |bytes: &[u8]| {
        for &b in bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    let mut keys: Vec<(&String, &String)> = app
        .spark_properties
        .iter()
        .filter(|(k, v)| {
            k.starts_with("spark.")
                && !matches(k, IDENTITY_KEYS)
                && !id.is_some_and(|id| v.contains(id))
        })
        .collect();
    keys.sort();
    for (k, v) in keys {
        eat(k.as_bytes());
        eat(b"=");
        eat(v.as_bytes());
        eat(b"\n");
    }
    format!("{hash:016x}")
}

fn property_changes(before: &Application, after: &Application) -> Vec<PropertyChange> {
    let (pb, pa) = (&before.spark_properties, &after.spark_properties);
    let keys: BTreeSet<&String> = pb.keys().chain(pa.keys()).collect();
    let ids = [before.id.as_deref(), after.id.as_deref()];
    let names_the_run = |v: Option<&String>| {
        v.is_some_and(|v| {
            ids.iter()
                .flatten()
                .any(|id| !id.is_empty() && v.contains(id))
        })
    };
    let mut out: Vec<PropertyChange> = keys
        .into_iter()
        .filter(|k| k.starts_with("spark.") && !matches(k, IDENTITY_KEYS))
        .filter(|k| pb.get(*k) != pa.get(*k))
        .filter(|k| !names_the_run(pb.get(*k)) && !names_the_run(pa.get(*k)))
        .map(|k| PropertyChange {
            key: k.clone(),
            before: pb.get(k).cloned(),
            after: pa.get(k).cloned(),
            known_to_matter: KNOWN_TO_MATTER.contains(&k.as_str()) || matches(k, CLUSTER_KEYS),
        })
        .collect();
    out.sort_by_key(|p| (!p.known_to_matter, p.key.clone()));
    out
}

fn property_line(p: &PropertyChange) -> String {
    let v = |s: &Option<String>| s.clone().unwrap_or_else(|| "(not set)".to_string());
    format!("{}: {} → {}", p.key, v(&p.before), v(&p.after))
}

/// The configuration change (the `spark.*` properties that differ, the cluster's aside) and the
/// plan change; a plan change that a changed plan property explains is that property's
/// evidence, not a cause of its own.
fn configuration_and_plan(
    before: Run,
    after: Run,
    work: &[WorkMatch],
) -> (Option<Cause>, Option<Cause>) {
    let properties: Vec<PropertyChange> = property_changes(before.app, after.app)
        .into_iter()
        .filter(|p| !matches(&p.key, CLUSTER_KEYS))
        .collect();
    let changed: Vec<&WorkMatch> = work
        .iter()
        .filter(|w| !w.plan_changes.is_empty() && w.before.is_some() && w.after.is_some())
        .collect();
    let plan_ms: i64 = changed
        .iter()
        .map(|w| {
            let (b, a) = (w.before.as_ref().unwrap(), w.after.as_ref().unwrap());
            a.wall_ms - b.wall_ms
        })
        .sum();
    let plan_evidence: Vec<String> = changed
        .iter()
        .flat_map(|w| {
            let (b, a) = (w.before.as_ref().unwrap(), w.after.as_ref().unwrap());
            w.plan_changes
                .iter()
                .map(|c| format!("`{}`: {c}", w.label))
                .chain(std::iter::once(format!(
                    "`{}`: {} → {} wall",
                    w.label,
                    duration(b.wall_ms),
                    duration(a.wall_ms)
                )))
                .collect::<Vec<_>>()
        })
        .collect();
    let plan_properties = properties.iter().any(|p| matches(&p.key, PLAN_KEYS));
    let config = (!properties.is_empty()).then(|| {
        let named: Vec<&str> = properties.iter().take(3).map(|p| p.key.as_str()).collect();
        let more = properties.len().saturating_sub(3);
        let mut title = format!(
            "the configuration changed: {}{}",
            named.join(", "),
            if more > 0 {
                format!(" and {more} more")
            } else {
                String::new()
            }
        );
        let mut evidence: Vec<String> = properties.iter().map(property_line).collect();
        let (explained, measured_by) = if plan_properties && !changed.is_empty() {
            title.push_str(&format!(
                ", which changed the plan ({})",
                changed[0].plan_changes[0]
            ));
            evidence.extend(plan_evidence.iter().cloned());
            (plan_ms, "matched work")
        } else {
            (0, "not measured")
        };
        Cause {
            kind: "configuration_change",
            title,
            explained_ms: explained,
            share: None,
            measured_by,
            facts: Vec::new(),
            evidence,
            properties: properties.clone(),
        }
    });
    let explained_by_config = plan_properties && config.is_some();
    let plan = (!changed.is_empty() && !explained_by_config).then(|| Cause {
        kind: "plan_change",
        title: format!(
            "the plan changed with no plan setting changed ({})",
            changed[0].plan_changes[0]
        ),
        explained_ms: plan_ms,
        share: None,
        measured_by: "matched work",
        facts: Vec::new(),
        evidence: plan_evidence,
        properties: Vec::new(),
    });
    (config, plan)
}

fn executors_that_ran(app: &Application) -> usize {
    app.executors.iter().filter(|e| e.id != "driver").count()
}

fn cluster_change(before: Run, after: Run, run_facts: &Replays) -> Option<Cause> {
    let properties: Vec<PropertyChange> = property_changes(before.app, after.app)
        .into_iter()
        .filter(|p| matches(&p.key, CLUSTER_KEYS))
        .collect();
    let (cb, ca) = run_facts.cores;
    let (eb, ea) = (
        executors_that_ran(before.app),
        executors_that_ran(after.app),
    );
    let (db, da) = (
        before.report.application.dynamic_allocation,
        after.report.application.dynamic_allocation,
    );
    if properties.is_empty() && cb == ca && eb == ea && db == da {
        return None;
    }
    let mut evidence = Vec::new();
    let mut facts = Vec::new();
    if eb != ea {
        facts.push(fact("executors", "count", eb as f64, ea as f64));
    }
    if cb != ca {
        facts.push(fact("peak executor cores", "count", cb as f64, ca as f64));
    }
    if db != da {
        let w = |on: bool| if on { "on" } else { "off" };
        evidence.push(format!("dynamic allocation {} → {}", w(db), w(da)));
    }
    evidence.extend(properties.iter().map(property_line));
    // BEFORE's own tasks replayed on AFTER's cores against BEFORE's cores: the time the cluster
    // alone accounts for (the replay's own error is in both and cancels).
    let (explained, measured_by) = match &run_facts.graphs.0 {
        Some(g) if cb != ca && cb > 0 && ca > 0 => {
            let own = replay(g, cb, false);
            let theirs = replay(g, ca, false);
            facts.push(fact(
                &format!("BEFORE's tasks replayed on {cb} core(s), then on {ca}"),
                "ms",
                own as f64,
                theirs as f64,
            ));
            (theirs - own, "replay")
        }
        _ => (0, "not measured"),
    };
    let title = if cb != ca || eb != ea {
        format!("the cluster changed: {eb} → {ea} executor(s), {cb} → {ca} core(s)")
    } else {
        format!(
            "the cluster changed: {}",
            properties
                .iter()
                .map(|p| p.key.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    Some(Cause {
        kind: "cluster_change",
        title,
        explained_ms: explained,
        share: None,
        measured_by,
        facts,
        evidence,
        properties,
    })
}

fn version_change(before: &Report, after: &Report) -> Option<Cause> {
    let (ab, aa) = (&before.application, &after.application);
    let mut evidence = Vec::new();
    let v = |s: &Option<String>| s.clone().unwrap_or_else(|| "?".to_string());
    if ab.spark_version != aa.spark_version {
        evidence.push(format!(
            "Spark {} → {}",
            v(&ab.spark_version),
            v(&ab.spark_version.as_ref().and(aa.spark_version.clone()))
        ));
    }
    if ab.databricks_runtime != aa.databricks_runtime {
        evidence.push(format!(
            "Databricks runtime {} → {}",
            v(&ab.databricks_runtime),
            v(&aa.databricks_runtime)
        ));
    }
    if evidence.is_empty() {
        return None;
    }
    Some(Cause {
        kind: "version_change",
        title: format!("the runtime version changed ({})", evidence.join("; ")),
        explained_ms: 0,
        share: None,
        measured_by: "not measured",
        facts: Vec::new(),
        evidence,
        properties: Vec::new(),
    })
}

fn lost_executors(r: &Report) -> usize {
    r.executors
        .iter()
        .filter(|e| matches!(e.removal, Removal::Lost | Removal::KilledByClusterManager))
        .count()
}

/// New skew, spill, failed or retried tasks, lost executors: what AFTER's tasks suffered that
/// BEFORE's did not.
fn skew_spill_failures(
    before: Run,
    after: Run,
    findings: &FindingsDiff,
    run_facts: &Replays,
) -> Option<Cause> {
    let (sb, sa) = (&before.report.summary, &after.report.summary);
    let mut evidence = Vec::new();
    let mut facts = Vec::new();
    let mut what = Vec::new();
    // The replay with every task over 5× its stage's median cut to the median, on each run: the
    // time skew costs there. Its growth is what new skew costs.
    let skew_cost = |g: &Option<Graph>, cores: i64| {
        g.as_ref()
            .map_or(0, |g| replay(g, cores, false) - replay(g, cores, true))
    };
    let skew = skew_cost(&run_facts.graphs.1, run_facts.cores.1)
        - skew_cost(&run_facts.graphs.0, run_facts.cores.0);
    if skew.abs() > 0 {
        facts.push(fact(
            "time skewed tasks cost (replay)",
            "ms",
            skew_cost(&run_facts.graphs.0, run_facts.cores.0) as f64,
            skew_cost(&run_facts.graphs.1, run_facts.cores.1) as f64,
        ));
    }
    let relevant = |rule: &str| ["SK", "SP", "FA", "GC"].iter().any(|p| rule.starts_with(p));
    let mut findings_ms = 0;
    for f in findings.new.iter().filter(|f| relevant(f.rule)) {
        evidence.push(format!(
            "new {}: {} ({} recoverable)",
            f.rule,
            f.title,
            duration(f.impact_ms_after)
        ));
        findings_ms += f.impact_ms_after;
        what.push(f.rule);
    }
    for f in findings.resolved.iter().filter(|f| relevant(f.rule)) {
        evidence.push(format!("gone {}: {}", f.rule, f.title));
        findings_ms -= f.impact_ms_before;
    }
    if sb.disk_spill_bytes != sa.disk_spill_bytes {
        facts.push(fact(
            "disk spill",
            "bytes",
            sb.disk_spill_bytes as f64,
            sa.disk_spill_bytes as f64,
        ));
    }
    if sb.failed_tasks != sa.failed_tasks {
        facts.push(fact(
            "failed tasks",
            "count",
            sb.failed_tasks as f64,
            sa.failed_tasks as f64,
        ));
    }
    let (lb, la) = (lost_executors(before.report), lost_executors(after.report));
    if lb != la {
        facts.push(fact("executors lost", "count", lb as f64, la as f64));
    }
    let explained = if skew.abs() >= findings_ms.abs() {
        skew
    } else {
        findings_ms
    };
    if explained == 0 {
        return None;
    }
    let mut words = Vec::new();
    let has = |p: &str| what.iter().any(|r| r.starts_with(p));
    if has("SK") || skew > 0 {
        words.push("skew");
    }
    if has("SP") || sa.disk_spill_bytes > sb.disk_spill_bytes {
        words.push("spill");
    }
    if has("FA") || sa.failed_tasks > sb.failed_tasks || la > lb {
        words.push("failures");
    }
    if has("GC") {
        words.push("GC pressure");
    }
    let title = if explained > 0 {
        format!(
            "new {} in AFTER",
            if words.is_empty() {
                "task trouble".to_string()
            } else {
                words.join(", ")
            }
        )
    } else {
        format!(
            "less {} in AFTER",
            if words.is_empty() {
                "task trouble".to_string()
            } else {
                words.join(", ")
            }
        )
    };
    Some(Cause {
        kind: "skew_spill_failures",
        title,
        explained_ms: explained,
        share: None,
        measured_by: if explained == skew {
            "replay"
        } else {
            "findings"
        },
        facts,
        evidence,
        properties: Vec::new(),
    })
}

fn driver_time(before: &Report, after: &Report, noise: i64) -> Option<Cause> {
    let (b, a) = (before.summary.driver_time_ms, after.summary.driver_time_ms);
    let change = a - b;
    if change.abs() <= noise / 2 {
        return None;
    }
    Some(Cause {
        kind: "driver_time",
        title: format!(
            "{} driver-only time (no job running): {} → {}",
            if change > 0 { "more" } else { "less" },
            duration(b),
            duration(a)
        ),
        explained_ms: change,
        share: None,
        measured_by: "measured",
        facts: vec![fact("time with no job running", "ms", b as f64, a as f64)],
        evidence: Vec::new(),
        properties: Vec::new(),
    })
}

/// The cause when nothing explains the change; `too_small` are the differences that moved the
/// runtime less than its noise (a plan or a setting that changed to no effect), said rather
/// than called the same.
fn nothing_material(
    change: i64,
    noise: i64,
    runtime_b: i64,
    beyond_noise: bool,
    too_small: Vec<Cause>,
) -> Cause {
    let moved = format!(
        "{}{} ({})",
        if change < 0 { "-" } else { "+" },
        duration(change.abs()),
        pct(runtime_b as f64, (runtime_b + change) as f64)
    );
    let same = if too_small.is_empty() {
        "the same input (within 10 %), plan, configuration, cluster and Spark version, \
         and no new skew, spill or failures"
            .to_string()
    } else {
        let what: Vec<&str> = too_small.iter().map(|c| c.title.as_str()).collect();
        format!(
            "what changed moved the runtime by less than its noise of ±{}: {}",
            duration(noise),
            what.join("; ")
        )
    };
    let mut cause = if beyond_noise {
        Cause {
            kind: "unexplained",
            title: format!(
                "nothing in the logs explains the change ({moved}): {same}; look at the machine, \
                 the storage or other jobs sharing them"
            ),
            explained_ms: 0,
            share: None,
            measured_by: "not measured",
            facts: Vec::new(),
            evidence: vec![format!(
                "runtime moved {moved}, beyond the noise band of ±{}",
                duration(noise)
            )],
            properties: Vec::new(),
        }
    } else {
        Cause {
            kind: "nothing_material",
            title: format!("nothing material changed: {same}"),
            explained_ms: 0,
            share: None,
            measured_by: "measured",
            facts: Vec::new(),
            evidence: vec![format!(
                "runtime moved {moved}, within the noise band of ±{}",
                duration(noise)
            )],
            properties: Vec::new(),
        }
    };
    for small in too_small {
        cause.facts.extend(small.facts);
        cause.evidence.extend(small.evidence);
        cause.properties.extend(small.properties);
    }
    cause
}

/// The query with the most batches in AFTER of those both runs ran, with its median batch
/// before and after.
fn batch_speed(queries: &[QueryDiff]) -> Option<(&str, i64, i64)> {
    queries
        .iter()
        .filter_map(|q| {
            let (b, a) = (q.before.as_ref()?, q.after.as_ref()?);
            Some((
                q.query.as_str(),
                b.median_batch_ms?,
                a.median_batch_ms?,
                a.batches,
            ))
        })
        .max_by_key(|&(_, _, _, n)| n)
        .map(|(q, b, a, _)| (q, b, a))
}

fn verdict(
    change: i64,
    runtime_b: i64,
    noise: i64,
    correctness: &Correctness,
    causes: &[Cause],
    batches: Option<(&str, i64, i64)>,
) -> Verdict {
    let runtime = match batches {
        // A median batch that moved by less than a run's noise share is "about as fast".
        Some((_, b, a)) if ((a - b) as f64).abs() <= b as f64 * NOISE_SHARE => "same",
        Some((_, b, a)) if a < b => "faster",
        Some(_) => "slower",
        None if change.abs() <= noise => "same",
        None if change < 0 => "faster",
        None => "slower",
    };
    let output = match correctness.status {
        "equal" => "same",
        "changed" => "changed",
        _ => "unknown",
    };
    let percent = pct(runtime_b as f64, (runtime_b + change) as f64);
    let speed = match (batches, runtime) {
        (Some((query, b, a)), _) => {
            let how = match runtime {
                "same" => "Batches about as fast".to_string(),
                "faster" => format!("Batches {:.1}× faster", b as f64 / a.max(1) as f64),
                _ => format!("Batches {:.1}× slower", a as f64 / b.max(1) as f64),
            };
            format!(
                "{how} (query `{query}`: median batch {} → {}; a stream runs as long as it is left to, so its runtime is no measure)",
                duration(b),
                duration(a)
            )
        }
        (None, runtime) => match runtime {
            "same" => format!(
                "About as fast ({percent}, within the noise of ±{})",
                duration(noise)
            ),
            "faster" => format!("Faster ({percent})"),
            _ => format!("Slower ({percent})"),
        },
    };
    let out = match (runtime, output) {
        (_, "same") => "the same output",
        ("faster", "changed") => "but the output changed",
        (_, "changed") => "and the output changed",
        _ => "the output cannot be compared from the logs",
    };
    let top = &causes[0];
    // A cause is named only when it explains the change's direction and about its size: not a
    // grown input on a faster run, nor a setting credited with a tenth of a speed-up.
    let accounts = top.explained_ms.signum() == change.signum()
        && (0.5..=2.0).contains(&(top.explained_ms as f64 / change as f64));
    let why = match top.kind {
        "nothing_material" => ": nothing material changed".to_string(),
        "unexplained" => ": nothing in the logs explains it".to_string(),
        _ if runtime == "same" => format!("; but {}", top.title),
        _ if batches.is_none() && !accounts => format!(
            ": no change the logs show accounts for its direction and size (the largest: {})",
            top.title
        ),
        _ => {
            let share = top
                .share
                .map(|s| format!(" (explains {})", sparkdiag_contract::units::share(s, 0)))
                .unwrap_or_default();
            format!(", because {}{share}", top.title)
        }
    };
    Verdict {
        runtime,
        output,
        sentence: format!("{speed}, {out}{why}."),
        noise_ms: noise,
        comparable: true,
        new_failure: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_matched_whole_or_by_prefix() {
        assert!(matches("spark.sql.adaptive.enabled", PLAN_KEYS));
        assert!(matches("spark.sql.shuffle.partitions", PLAN_KEYS));
        assert!(!matches("spark.sql.shuffle.partitionsX", PLAN_KEYS));
        assert!(matches(
            "spark.dynamicAllocation.maxExecutors",
            CLUSTER_KEYS
        ));
        assert!(matches("spark.app.startTime", IDENTITY_KEYS));
        // Cosmetic: a renamed job or a quieter log never explains a runtime.
        for key in [
            "spark.app.name",
            "spark.ui.showConsoleProgress",
            "spark.log.level",
        ] {
            assert!(matches(key, IDENTITY_KEYS), "{key}");
        }
        assert!(!matches("spark.app.nameX", IDENTITY_KEYS));
    }

    fn cause(kind: &'static str, explained_ms: i64) -> Cause {
        Cause {
            kind,
            title: format!("{kind} title"),
            explained_ms,
            share: None,
            measured_by: "scaled",
            facts: Vec::new(),
            evidence: Vec::new(),
            properties: Vec::new(),
        }
    }

    #[test]
    fn a_cause_is_named_only_when_it_explains_the_direction_and_size() {
        let equal = Correctness {
            status: "equal",
            outputs: Vec::new(),
            inputs: Vec::new(),
            notes: Vec::new(),
        };
        let said = |change: i64, explained: i64| {
            verdict(
                change,
                100_000,
                3_000,
                &equal,
                &[cause("data_growth", explained)],
                None,
            )
            .sentence
        };
        // The input grew, the run got faster: the growth explains nothing of it.
        let against = said(-60_000, 170_000);
        assert!(!against.contains("because"), "{against}");
        assert!(
            against.contains("no change the logs show accounts"),
            "{against}"
        );
        // A tenth of a speed-up is not its cause either.
        assert!(!said(-60_000, -6_000).contains("because"));
        // Most of it, in its direction, is.
        let named = said(-60_000, -50_000);
        assert!(named.contains("because data_growth title"), "{named}");
    }

    #[test]
    fn the_noise_band_has_a_floor() {
        assert_eq!(noise_ms(1_000), NOISE_FLOOR_MS);
        assert_eq!(noise_ms(100_000), 15_000);
    }

    #[test]
    fn a_property_line_says_unset() {
        let p = PropertyChange {
            key: "spark.sql.autoBroadcastJoinThreshold".into(),
            before: None,
            after: Some("-1".into()),
            known_to_matter: true,
        };
        assert_eq!(
            property_line(&p),
            "spark.sql.autoBroadcastJoinThreshold: (not set) → -1"
        );
    }
}
