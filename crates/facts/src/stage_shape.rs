//! What each stage *is*, and what the application ran on, computed once for every rule's advice.
//!
//! The same symptom has different fixes depending on the stage it shows in: one slow task with
//! more data is a hot join key (AQE splits it), a hot grouping key (AQE does not: salt it) or a
//! few big input files (rewrite them); few partitions come from `spark.sql.shuffle.partitions` or
//! from an explicit `repartition(2)` in the code. These facts come from the stage's metrics,
//! the plan operators whose SQL metrics its tasks updated, its jobs' descriptions and the
//! application's settings and executors — not from its tasks, so they cost no unfolding. The
//! rules read them to choose their advice; which finding to make stays in each rule.

use std::collections::HashMap;

use sparkdiag_model::{Application, SparkPlanInfo, StageAttempt};

/// The facts of every stage attempt (indexed like `app.stages`) and of the application.
#[derive(Debug, Clone, Default)]
pub struct Shapes {
    pub stages: Vec<StageShape>,
    pub app: AppShape,
}

/// What one stage attempt is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StageShape {
    /// It read shuffle output (bytes or records).
    pub reads_shuffle: bool,
    /// It read files or tables and no shuffle: its partitions are input splits.
    pub input: bool,
    /// Where its partition count came from.
    pub partitions: Partitions,
    /// It belongs to Spark's parallel file listing ("Listing leaf files and directories for N
    /// paths"), a job Spark starts itself when a read names more paths than
    /// `spark.sql.sources.parallelPartitionDiscovery.threshold`.
    pub listing: bool,
    /// The formats of the scans it ran, lower case (`parquet`, `csv`, `text`), in plan order.
    pub source_formats: Vec<String>,
    /// What consumed the shuffle it read.
    pub behind_shuffle: ShuffleConsumer,
}

/// Where a stage's partition count came from.
#[derive(Debug, Clone, Default, PartialEq)]
pub enum Partitions {
    /// Nothing in the log says.
    #[default]
    Unknown,
    /// An explicit call in the program: `repartition(n)` (an Exchange with origin
    /// `REPARTITION_BY_NUM`) or `coalesce(n)` (a `Coalesce n` operator).
    Explicit {
        call: ExplicitCall,
        n: i64,
        /// Where the program made the call's job: the job's call site in the user's program.
        call_site: String,
    },
    /// A shuffle sized by `spark.sql.shuffle.partitions` (its value, or Spark's 200).
    ShuffleDefault { n: i64 },
    /// A DataFrame shuffle the log holds no plan for (Spark before 2.0 logs none) into `n`
    /// partitions, not the `setting` of `spark.sql.shuffle.partitions`, with no AQE to have
    /// changed the count: an explicit `repartition(n)` in the code, or the setting changed at
    /// run time; without the plan the log cannot say which.
    UnplannedSqlShuffle { n: i64, setting: i64 },
    /// Input splits: file sizes and `spark.sql.files.maxPartitionBytes` decided.
    InputSplits,
    /// RDD work outside any SQL query: the RDD call (`parallelize(data, n)`, `textFile(path, n)`,
    /// a shuffle's `numPartitions`) or `spark.default.parallelism` decided.
    RddApi,
}

impl StageShape {
    /// Where the stage's partition count came from, in a few words: `repartition(1)`,
    /// `coalesce(4)`, `input splits`, `RDD work`, `shuffle`, `file listing`; what a grouped
    /// finding's advice is chosen and labelled by.
    pub fn partition_origin(&self) -> String {
        if self.listing {
            return "file listing".to_string();
        }
        match &self.partitions {
            Partitions::Explicit { call, n, .. } => format!("{}({n})", call.name()),
            Partitions::ShuffleDefault { .. } | Partitions::UnplannedSqlShuffle { .. } => {
                "shuffle".to_string()
            }
            Partitions::InputSplits => "input splits".to_string(),
            Partitions::RddApi => "RDD work".to_string(),
            Partitions::Unknown if self.reads_shuffle => "shuffle".to_string(),
            Partitions::Unknown => "unknown".to_string(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExplicitCall {
    Repartition,
    Coalesce,
}

impl ExplicitCall {
    pub fn name(self) -> &'static str {
        match self {
            ExplicitCall::Repartition => "repartition",
            ExplicitCall::Coalesce => "coalesce",
        }
    }
}

/// The operator that consumed a stage's shuffle read: what a skewed partition of it feeds.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ShuffleConsumer {
    /// The stage read no shuffle, or the log does not say what used it.
    #[default]
    Unknown,
    /// A shuffled join (sort-merge or shuffled hash): AQE's skew join can split its partitions.
    Join,
    /// An aggregation (groupBy, distinct, reduceByKey): AQE's skew join does not apply.
    Aggregation,
    /// The program's own `repartition(n, cols)` or `repartition(cols)` (an Exchange hashing on
    /// columns, origin `REPARTITION_BY_NUM` or `REPARTITION_BY_COL`) and no join or aggregation
    /// after it: a hot key lands in one partition because the program asked for it.
    Repartition,
}

/// What the application ran on.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppShape {
    /// Why its executors have GPUs (a setting that says so), if they do.
    pub gpu: Option<String>,
    /// Executors that ran or could run tasks (the driver in local mode).
    pub executors: usize,
    /// The most cores one of them had.
    pub cores_per_executor: i64,
    /// The most cores all executors offered at once.
    pub total_cores: i64,
    /// Why it is an interactive session, if it is one.
    pub interactive: Option<String>,
}

impl AppShape {
    /// One core in all: no task ever ran beside another, and no speculative copy can run.
    pub fn single_core(&self) -> bool {
        self.total_cores <= 1
    }
}

impl StageShape {
    /// The explicit call that set this stage's partition count, if one did.
    pub fn explicit_call(&self) -> Option<(ExplicitCall, i64, &str)> {
        match &self.partitions {
            Partitions::Explicit { call, n, call_site } => Some((*call, *n, call_site.as_str())),
            _ => None,
        }
    }
}

/// Text-like sources that evaluate no filter while reading, whatever its form.
const SOURCES_WITHOUT_PUSHDOWN: &[&str] = &["text", "binaryfile", "image", "libsvm", "wholetext"];

/// Whether a scan of `format` can apply a filter while reading (Parquet and ORC skip row groups,
/// CSV and JSON skip rows since Spark 3.0/3.1, JDBC sends it to the database); a text source
/// returns every line whatever the filter.
pub fn source_pushes_filters(format: &str) -> bool {
    let format = format.trim().to_ascii_lowercase();
    !SOURCES_WITHOUT_PUSHDOWN.contains(&format.as_str())
}

/// The job description Spark gives its own parallel file listing.
const LISTING_JOB: &str = "Listing leaf files and directories";

/// Shuffle-read metrics of an Exchange: a stage that updated one read that Exchange.
const SHUFFLE_READ_METRICS: &[&str] = &[
    "records read",
    "local bytes read",
    "remote bytes read",
    "local blocks read",
    "remote blocks read",
    "fetch wait time",
];

/// The partitioning of an Exchange the program asked for (`repartition(n)`, `repartition(n,
/// cols)`, `repartition(cols)`, `DISTRIBUTE BY`), and whether it named a number: Spark 3.2 on
/// writes the origin as `REPARTITION_BY_NUM` or `REPARTITION_BY_COL`, Spark 3.0 and 3.1 as
/// `REPARTITION_WITH_NUM` or `REPARTITION` (`ShuffleExchangeExec`'s `ShuffleOrigin`).
fn user_repartition(simple_string: &str) -> Option<(&str, bool)> {
    for (origin, by_number) in [
        (", REPARTITION_BY_NUM", true),
        (", REPARTITION_WITH_NUM", true),
        (", REPARTITION_BY_COL", false),
    ] {
        if let Some((partitioning, _)) = simple_string.split_once(origin) {
            return Some((partitioning, by_number));
        }
    }
    // The 3.1 name of REPARTITION_BY_COL is a prefix of the others: only whole.
    simple_string
        .split_once(", REPARTITION,")
        .or_else(|| simple_string.strip_suffix(", REPARTITION").map(|p| (p, "")))
        .map(|(partitioning, _)| (partitioning, false))
}

/// Every stage's facts and the application's, in one pass over the stages.
pub fn of_application(app: &Application) -> Shapes {
    let jobs: HashMap<i64, &sparkdiag_model::Job> =
        app.jobs.iter().map(|j| (j.job_id, j)).collect();
    let executions: HashMap<i64, &sparkdiag_model::SqlExecution> =
        app.sql.iter().map(|s| (s.execution_id, s)).collect();
    // The plan nodes of the execution the last stage ran for, by the accumulator ids of their
    // metrics: an execution's stages come one after another, and every execution's index held
    // to the end was 18 MB on a log of 2,210 queries.
    let mut by_accumulator: Option<(i64, HashMap<i64, Vec<&SparkPlanInfo>>)> = None;
    let shuffle_partitions = app
        .spark_properties
        .get("spark.sql.shuffle.partitions")
        .and_then(|v| v.trim().parse::<i64>().ok())
        .unwrap_or(200);
    let names: HashMap<i64, &str> = app
        .stages
        .iter()
        .map(|s| (s.stage_id, s.name.as_str()))
        .collect();
    let stages = app
        .stages
        .iter()
        .map(|stage| {
            let stage_jobs: Vec<&sparkdiag_model::Job> = stage
                .job_ids
                .iter()
                .filter_map(|id| jobs.get(id).copied())
                .collect();
            let execution = stage_jobs
                .iter()
                .find_map(|j| j.sql_execution_id)
                .and_then(|id| executions.get(&id).copied());
            let nodes = match execution {
                Some(sql) => {
                    let index = match &mut by_accumulator {
                        Some((id, index)) if *id == sql.execution_id => index,
                        cached => &cached.insert((sql.execution_id, accumulator_index(sql))).1,
                    };
                    nodes_of_stage(stage, index)
                }
                None => Vec::new(),
            };
            shape_of(app, stage, &stage_jobs, &nodes, shuffle_partitions, &names)
        })
        .collect();
    Shapes {
        stages,
        app: app_shape(app),
    }
}

fn shape_of(
    app: &Application,
    stage: &StageAttempt,
    jobs: &[&sparkdiag_model::Job],
    nodes: &[(&SparkPlanInfo, Vec<&str>)],
    shuffle_partitions: i64,
    stage_names: &HashMap<i64, &str>,
) -> StageShape {
    let reads_shuffle =
        stage.totals.shuffle_read_bytes() > 0 || stage.totals.shuffle_read_records > 0;
    let listing = jobs.iter().any(|j| {
        j.description
            .as_deref()
            .is_some_and(|d| d.trim_start().starts_with(LISTING_JOB))
    });
    let mut source_formats: Vec<String> = Vec::new();
    for (node, _) in nodes {
        if let Some(format) = scan_format(node)
            && !source_formats.contains(&format)
        {
            source_formats.push(format);
        }
    }
    let input =
        !reads_shuffle && !listing && (stage.totals.input_bytes > 0 || !source_formats.is_empty());
    let named = |prefixes: &[&str]| {
        nodes
            .iter()
            .any(|(n, _)| prefixes.iter().any(|p| n.node_name.starts_with(p)))
    };
    let behind_shuffle = if !reads_shuffle {
        ShuffleConsumer::Unknown
    } else if named(&[
        "SortMergeJoin",
        "ShuffledHashJoin",
        "PhotonShuffledHashJoin",
    ]) {
        ShuffleConsumer::Join
    } else if named(&[
        "HashAggregate",
        "ObjectHashAggregate",
        "SortAggregate",
        "PhotonGroupingAgg",
        "PhotonAgg",
    ]) {
        ShuffleConsumer::Aggregation
    } else if nodes.iter().any(|(n, updated)| {
        n.node_name.contains("Exchange")
            && n.simple_string.contains("hashpartitioning(")
            && user_repartition(&n.simple_string).is_some()
            && updated.iter().any(|m| SHUFFLE_READ_METRICS.contains(m))
    }) {
        ShuffleConsumer::Repartition
    } else if nodes.is_empty() {
        rdd_consumer(stage, stage_names)
    } else {
        ShuffleConsumer::Unknown
    };
    let call_site = || {
        jobs.first()
            .map(|j| app.user_call_site(j))
            .unwrap_or_default()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let coalesce = nodes
        .iter()
        .find(|(n, _)| n.node_name == "Coalesce")
        .and_then(|(n, _)| last_number(&n.simple_string));
    let repartition = nodes
        .iter()
        .filter(|(n, updated)| {
            n.node_name.contains("Exchange")
                && updated.iter().any(|m| SHUFFLE_READ_METRICS.contains(m))
        })
        .find_map(|(n, _)| {
            let (partitioning, by_number) = user_repartition(&n.simple_string)?;
            by_number.then(|| last_number(partitioning)).flatten()
        });
    let partitions = if let Some(n) = coalesce {
        Partitions::Explicit {
            call: ExplicitCall::Coalesce,
            n,
            call_site: call_site(),
        }
    } else if let Some(n) = repartition {
        Partitions::Explicit {
            call: ExplicitCall::Repartition,
            n,
            call_site: call_site(),
        }
    } else if reads_shuffle && !nodes.is_empty() {
        Partitions::ShuffleDefault {
            n: shuffle_partitions,
        }
    } else if reads_shuffle && jobs.iter().any(|j| j.sql_execution_id.is_some()) {
        if stage.num_tasks == shuffle_partitions {
            Partitions::ShuffleDefault {
                n: shuffle_partitions,
            }
        } else if !crate::settings::aqe_enabled(app) {
            // No adaptive execution coalesced or split it: the count is what was asked for.
            Partitions::UnplannedSqlShuffle {
                n: stage.num_tasks,
                setting: shuffle_partitions,
            }
        } else {
            Partitions::Unknown
        }
    } else if input && !nodes.is_empty() {
        Partitions::InputSplits
    } else if jobs.iter().all(|j| j.sql_execution_id.is_none()) && !jobs.is_empty() {
        Partitions::RddApi
    } else if input {
        Partitions::InputSplits
    } else {
        Partitions::Unknown
    };
    StageShape {
        reads_shuffle,
        input,
        partitions,
        listing,
        source_formats,
        behind_shuffle,
    }
}

/// For an RDD stage (no SQL plan): the operation whose shuffle it read, from its parents'
/// names (`join at`, `reduceByKey at`: Spark names a map stage after the call that shuffled).
fn rdd_consumer(stage: &StageAttempt, names: &HashMap<i64, &str>) -> ShuffleConsumer {
    let parents: Vec<&str> = stage
        .parent_ids
        .iter()
        .filter_map(|id| names.get(id).copied())
        .chain([stage.name.as_str()])
        .collect();
    let any = |words: &[&str]| {
        parents
            .iter()
            .any(|n| words.iter().any(|w| n.starts_with(w)))
    };
    if any(&[
        "join at",
        "leftOuterJoin at",
        "rightOuterJoin at",
        "fullOuterJoin at",
        "cogroup at",
    ]) {
        ShuffleConsumer::Join
    } else if any(&[
        "reduceByKey at",
        "groupByKey at",
        "aggregateByKey at",
        "combineByKey at",
        "foldByKey at",
        "countByKey at",
        "distinct at",
    ]) {
        ShuffleConsumer::Aggregation
    } else {
        ShuffleConsumer::Unknown
    }
}

/// The last run of digits in `text` as a number: `RoundRobinPartitioning(2)` is 2,
/// `hashpartitioning(k#3, 10)` is 10, `Coalesce 4` is 4.
fn last_number(text: &str) -> Option<i64> {
    let end = text.rfind(|c: char| c.is_ascii_digit())? + 1;
    // Counted in bytes back from the end: the digits are ASCII, the character before them may
    // be any width.
    let start = end
        - text[..end]
            .bytes()
            .rev()
            .take_while(u8::is_ascii_digit)
            .count();
    // `k#3` is an attribute id, not a count.
    if text[..start].ends_with('#') {
        return None;
    }
    text[start..end].parse().ok()
}

/// A scan node's source format, lower case: its `Format` metadata (`Parquet`, `Text`), else the
/// word after `Scan`/`FileScan` in its name or description.
fn scan_format(node: &SparkPlanInfo) -> Option<String> {
    let name = node.node_name.as_str();
    let is_scan = name.starts_with("Scan ")
        || name.starts_with("FileScan")
        || name.starts_with("BatchScan")
        || name.starts_with("PhotonScan");
    if !is_scan {
        return None;
    }
    if let Some(format) = node.metadata.get("Format") {
        return Some(format.trim().to_ascii_lowercase());
    }
    let words: Vec<&str> = node.simple_string.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| ["Scan", "FileScan", "PhotonScan"].contains(w))?;
    words.get(at + 1).map(|w| w.to_ascii_lowercase())
}

/// Every node of the execution's plans (as submitted and as AQE last re-planned it) by the
/// accumulator ids of its metrics.
fn accumulator_index(sql: &sparkdiag_model::SqlExecution) -> HashMap<i64, Vec<&SparkPlanInfo>> {
    let mut index: HashMap<i64, Vec<&SparkPlanInfo>> = HashMap::new();
    let mut stack: Vec<&SparkPlanInfo> = sql.plan.iter().chain(sql.final_plan.iter()).collect();
    while let Some(node) = stack.pop() {
        for metric in &node.metrics {
            let nodes = index.entry(metric.accumulator_id).or_default();
            if !nodes.iter().any(|n| std::ptr::eq(*n, node)) {
                nodes.push(node);
            }
        }
        stack.extend(node.children.iter());
    }
    index
}

/// The plan nodes whose SQL metrics the stage's tasks updated (the operators that ran in it),
/// each with the names of the metrics it updated.
fn nodes_of_stage<'a>(
    stage: &StageAttempt,
    index: &HashMap<i64, Vec<&'a SparkPlanInfo>>,
) -> Vec<(&'a SparkPlanInfo, Vec<&'a str>)> {
    let mut out: Vec<(&SparkPlanInfo, Vec<&str>)> = Vec::new();
    for &(id, _) in &stage.sql_metrics {
        for &node in index.get(&id).into_iter().flatten() {
            let metric = node
                .metrics
                .iter()
                .find(|m| m.accumulator_id == id)
                .map_or("", |m| m.name.as_str());
            // The submitted and the re-planned tree hold equal nodes: one is enough.
            match out.iter_mut().find(|(n, _)| {
                std::ptr::eq(*n, node)
                    || (n.node_name == node.node_name && n.simple_string == node.simple_string)
            }) {
                Some((_, metrics)) => metrics.push(metric),
                None => out.push((node, vec![metric])),
            }
        }
    }
    out
}

/// What the application ran on, without the stages' facts.
pub fn app_shape(app: &Application) -> AppShape {
    let executors: Vec<&sparkdiag_model::Executor> = crate::task_executors(app).collect();
    AppShape {
        gpu: gpu_setting(app),
        executors: executors.len(),
        cores_per_executor: executors.iter().filter_map(|e| e.cores).max().unwrap_or(1),
        total_cores: crate::peak_cores(app),
        interactive: app.interactive(),
    }
}

/// The setting that gives the executors GPUs, as `key=value`.
fn gpu_setting(app: &Application) -> Option<String> {
    let props = &app.spark_properties;
    for key in [
        "spark.executor.resource.gpu.amount",
        "spark.task.resource.gpu.amount",
    ] {
        if let Some(v) = props.get(key)
            && v.trim().parse::<f64>().is_ok_and(|n| n > 0.0)
        {
            return Some(format!("{key}={}", v.trim()));
        }
    }
    if let Some(v) = props.get("spark.plugins")
        && v.contains("com.nvidia.spark.SQLPlugin")
    {
        return Some(format!("spark.plugins={}", v.trim()));
    }
    props
        .get("spark.rapids.sql.enabled")
        .filter(|v| v.trim().eq_ignore_ascii_case("true"))
        .map(|_| "spark.rapids.sql.enabled=true".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partition_counts_read_from_partitioning_text() {
        assert_eq!(last_number("RoundRobinPartitioning(2)"), Some(2));
        assert_eq!(last_number("Exchange hashpartitioning(k#3, 10)"), Some(10));
        assert_eq!(last_number("Coalesce 4"), Some(4));
        assert_eq!(last_number("hashpartitioning(k#3"), None);
        assert_eq!(last_number("SinglePartition"), None);
        // A wide character right before the digits (the old scan from it cut it in two).
        assert_eq!(last_number("Coalesce é5"), Some(5));
        assert_eq!(last_number("é5"), Some(5));
    }

    #[test]
    fn only_text_like_sources_push_no_filter() {
        assert!(!source_pushes_filters("text"));
        assert!(!source_pushes_filters("Text"));
        assert!(source_pushes_filters("parquet"));
        assert!(source_pushes_filters("csv"));
    }

    use crate::testing::apps;

    /// Each stage of a real log with its shape: (stage id, tasks, shape).
    fn shapes(rel: &str) -> Vec<(i64, i64, StageShape, AppShape)> {
        let mut out = Vec::new();
        for app in apps(&format!("logs/{rel}")) {
            let shapes = of_application(&app);
            for (stage, shape) in app.stages.iter().zip(shapes.stages) {
                out.push((stage.stage_id, stage.num_tasks, shape, shapes.app.clone()));
            }
        }
        assert!(!out.is_empty(), "{rel}: no stage");
        out
    }

    #[test]
    fn a_read_of_uneven_csv_files_is_an_input_stage_of_csv_splits() {
        let all = shapes("shapes/input-split-skew");
        let read = all
            .iter()
            .find(|(_, tasks, s, _)| s.input && *tasks > 1)
            .expect("an input stage");
        assert_eq!(read.2.source_formats, vec!["csv".to_string()]);
        assert_eq!(read.2.partitions, Partitions::InputSplits);
        assert!(!read.2.reads_shuffle && !read.2.listing);
        // The listing job of the folder's 44 files is Spark's, not an input stage.
        assert!(all.iter().any(|(_, _, s, _)| s.listing && !s.input));
    }

    #[test]
    fn a_repartition_before_a_write_is_an_explicit_count_with_its_call_site() {
        let all = shapes("shapes/repartition-write");
        let written = all
            .iter()
            .find(|(_, tasks, s, _)| *tasks == 2 && s.reads_shuffle)
            .expect("the 2-task stage after repartition(2)");
        let (call, n, site) = written.2.explicit_call().expect("an explicit call");
        assert_eq!((call, n), (ExplicitCall::Repartition, 2));
        assert!(!site.is_empty());
        // The 17-task read above it keeps its own count.
        assert!(
            all.iter()
                .any(|(_, tasks, s, _)| *tasks == 17 && !s.reads_shuffle)
        );
    }

    #[test]
    fn a_groupby_skew_is_behind_an_aggregation_and_a_join_skew_behind_a_join() {
        let all = shapes("shapes/groupby-and-join-skew");
        let consumers: Vec<ShuffleConsumer> =
            all.iter().map(|(_, _, s, _)| s.behind_shuffle).collect();
        assert!(consumers.contains(&ShuffleConsumer::Join), "{consumers:?}");
        assert!(
            consumers.contains(&ShuffleConsumer::Aggregation),
            "{consumers:?}"
        );
        for (id, _, s, _) in &all {
            assert_eq!(
                s.behind_shuffle == ShuffleConsumer::Unknown,
                !s.reads_shuffle,
                "stage {id}: {s:?}"
            );
        }
    }

    #[test]
    fn a_partitioned_folder_read_runs_the_listing_job_and_a_text_read_is_text() {
        let all = shapes("shapes/partition-discovery");
        assert!(
            all.iter()
                .any(|(_, tasks, s, _)| s.listing && *tasks == 150),
            "no listing stage of 150 paths"
        );
        let text = shapes("shapes/text-filter");
        assert!(
            text.iter()
                .any(|(_, _, s, _)| s.source_formats == vec!["text".to_string()])
        );
    }

    #[test]
    fn local_1_is_one_executor_with_one_core_and_a_shell_is_interactive() {
        let (_, _, _, app) = &shapes("shapes/one-core")[0];
        assert!(app.single_core());
        assert_eq!((app.executors, app.cores_per_executor), (1, 1));
        assert!(app.gpu.is_none() && app.interactive.is_none());
        let (_, _, _, shell) = &shapes("trust/interactive")[0];
        assert!(shell.interactive.is_some() && !shell.single_core());
    }
}
