//! What each run wrote and read, from the plans that ran and the SQL metrics the log measured:
//! every write command with its destination, rows, files and bytes, and every scan with its
//! source and rows. `diff` compares them between two runs; PA003 reads the files a write made.

use sparkdiag_model::{Application, SparkPlanInfo, SqlMetricValues};

/// One write command that ran.
pub struct Write {
    pub sql_execution_id: i64,
    /// The table directory (partition directories folded in) or table name.
    pub destination: String,
    /// Static partition directories the write named (`month=07`).
    pub static_partitions: Vec<String>,
    pub rows: Option<i64>,
    pub files: Option<i64>,
    pub bytes: Option<i64>,
    pub dynamic_partitions: Option<i64>,
    /// The columns a dynamic-partition write partitioned by (`partitionBy("p")`), as its
    /// options name them (`__partition_columns=["p"]`); empty when it names none.
    pub partition_columns: Vec<String>,
}

/// One scan that ran.
pub struct Read {
    pub sql_execution_id: i64,
    pub source: String,
    pub rows: Option<i64>,
    /// `number of files read` and `size of files read` of a file scan.
    pub files: Option<i64>,
    pub bytes: Option<i64>,
    /// An `InMemoryTableScan`, or a scan of the plan under one: a read of cached data, not of
    /// the source's files (which only the job filling the cache read).
    pub cached: bool,
}

/// Row counters of write commands, as Spark, Delta and Databricks name them (Photon's writer
/// reports `written output rows` and `written output bytes`).
const ROW_METRICS: &[&str] = &[
    "number of output rows",
    "numOutputRows",
    "num_inserted_rows",
    "num output rows",
    "written output rows",
];
/// File counters: Spark's `number of written files`; Delta's `numFiles`; Databricks' `files
/// written`, which a Databricks write fills while it declares `number of written files` and
/// leaves it at 0 (one task writing 2,000 files into a Delta table showed both).
const FILE_METRICS: &[&str] = &[
    "number of written files",
    "numFiles",
    "number of files written",
    "files written",
];
const BYTE_METRICS: &[&str] = &[
    "written output",
    "numOutputBytes",
    "bytes written",
    "num bytes written",
    "written output bytes",
];
/// What a file scan read, as Spark and Photon (`PhotonScan`) name it.
const READ_ROW_METRICS: &[&str] = &["number of output rows", "num output rows", "rows output"];
const READ_FILE_METRICS: &[&str] = &["number of files read", "files read"];
const READ_BYTE_METRICS: &[&str] = &["size of files read"];

/// The value of the first of `names` measured above 0, else of the first measured at all: a
/// runtime may declare one name and count under another (Databricks leaves `number of written
/// files` at 0 beside `files written`), so a declared 0 must not hide the count.
fn pick(metrics: &sparkdiag_model::NodeMetrics, names: &[&str]) -> Option<i64> {
    let measured = || names.iter().filter_map(|n| metrics.get(*n).copied());
    measured().find(|&v| v > 0).or_else(|| measured().next())
}

/// A plan node that writes: Spark's and Delta's write commands, V1 and V2.
pub fn is_write(name: &str) -> bool {
    let name = name.strip_prefix("Execute ").unwrap_or(name);
    name.starts_with("InsertInto")
        || name.contains("TableAsSelect")
        || name.starts_with("SaveIntoDataSource")
        || name.starts_with("WriteIntoDelta")
        || name.starts_with("AppendData")
        || name.starts_with("OverwriteByExpression")
        || name.starts_with("OverwritePartitionsDynamic")
        || name.starts_with("WriteToDataSourceV2")
        || name.starts_with("MergeInto")
}

/// A plan node that reads a source.
pub fn is_scan(name: &str) -> bool {
    name.starts_with("Scan ")
        || name.starts_with("FileScan")
        || name.starts_with("BatchScan")
        || name.starts_with("PhotonScan")
        || name == "Range"
        || name == "InMemoryTableScan"
}

/// How a streaming query's sink is named as a destination: `sink of micro-batches of NAME`.
pub const STREAM_SINK: &str = "sink of ";

/// Every write and scan of the run, from the plans that ran and the metrics the log measured.
pub fn collect(app: &Application) -> (Vec<Write>, Vec<Read>) {
    let values = SqlMetricValues::new(app);
    let mut writes = Vec::new();
    let mut reads = Vec::new();
    for sql in &app.sql {
        let Some(plan) = sql.plan_that_ran() else {
            continue;
        };
        let mut nodes = Vec::new();
        preorder(plan, false, &mut nodes);
        for (node, under_cache) in nodes {
            let name = node.node_name.as_str();
            // Spark 4 wraps saveAsTable in SaveAsV1TableCommand and
            // CreateDataSourceTableAsSelectCommand executions without metrics around the nested
            // InsertIntoHadoopFsRelationCommand that counts: only a writer with metrics wrote.
            if is_write(name) && !node.metrics.is_empty() {
                let metrics = write_metrics(node, sql, &values);
                let pick = |names: &[&str]| pick(&metrics, names);
                let target = write_target(node);
                // A micro-batch write names its epoch (`MicroBatchWrite[epoch: 16, writer: …]`):
                // every batch of one query writes to the query's one sink.
                let (destination, static_partitions) = if target.starts_with("MicroBatchWrite[") {
                    let query = micro_batches_of(&sql.description)
                        .unwrap_or_else(|| "micro-batches of a streaming query".to_string());
                    (format!("{STREAM_SINK}{query}"), Vec::new())
                } else {
                    fold_destination(&target)
                };
                writes.push(Write {
                    sql_execution_id: sql.execution_id,
                    destination,
                    static_partitions,
                    rows: pick(ROW_METRICS),
                    files: pick(FILE_METRICS),
                    bytes: pick(BYTE_METRICS),
                    dynamic_partitions: metrics.get("number of dynamic part").copied(),
                    partition_columns: partition_columns(node),
                });
            } else if is_scan(name) {
                let metrics = values.of_node(node, sql);
                reads.push(Read {
                    sql_execution_id: sql.execution_id,
                    source: scan_source(node),
                    rows: pick(&metrics, READ_ROW_METRICS),
                    files: pick(&metrics, READ_FILE_METRICS),
                    bytes: pick(&metrics, READ_BYTE_METRICS),
                    cached: under_cache || name.contains("InMemoryTableScan"),
                });
            }
        }
    }
    (writes, reads)
}

/// A write command's measured metrics, with those of the writer operators under it (a name with
/// `Write` in it that is not itself a write command: `WriteFiles`, Photon's write stage), which
/// count the files and bytes where the command's own counters stay at 0. The command's own
/// value comes first for a name both have.
fn write_metrics(
    node: &SparkPlanInfo,
    sql: &sparkdiag_model::SqlExecution,
    values: &SqlMetricValues,
) -> sparkdiag_model::NodeMetrics {
    let mut metrics = values.of_node(node, sql);
    let mut below = Vec::new();
    for child in &node.children {
        preorder(child, false, &mut below);
    }
    for (writer, _) in below
        .into_iter()
        .filter(|(n, _)| n.node_name.contains("Write") && !is_write(&n.node_name))
    {
        for (name, value) in values.of_node(writer, sql) {
            let entry = metrics.entry(name).or_insert(value);
            if *entry == 0 {
                *entry = value;
            }
        }
    }
    metrics
}

/// `partitionBy`'s columns, from the write's options: `[__partition_columns=["p","q"], ...]`.
fn partition_columns(node: &SparkPlanInfo) -> Vec<String> {
    const KEY: &str = "__partition_columns=";
    let Some(at) = node.simple_string.find(KEY) else {
        return Vec::new();
    };
    let rest = &node.simple_string[at + KEY.len()..];
    let Some(list) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) else {
        return Vec::new();
    };
    list.0
        .split(',')
        .map(|c| c.trim().trim_matches('"').to_string())
        .filter(|c| !c.is_empty())
        .collect()
}

/// Each node with whether it sits under an `InMemoryTableScan`: the plan that built the cache,
/// whose scans ran only when the cache was first filled.
fn preorder<'a>(
    node: &'a SparkPlanInfo,
    under_cache: bool,
    out: &mut Vec<(&'a SparkPlanInfo, bool)>,
) {
    out.push((node, under_cache));
    let cached = under_cache || node.node_name.contains("InMemoryTableScan");
    for child in &node.children {
        preorder(child, cached, out);
    }
}

/// The first argument of a write command: `file:/x/y, false, …` or `` `db`.`t`, … ``.
fn write_target(node: &SparkPlanInfo) -> String {
    let rest = node
        .simple_string
        .strip_prefix(node.node_name.as_str())
        .unwrap_or(&node.simple_string)
        .trim_start();
    let first = rest.split(", ").next().unwrap_or("").trim();
    // A V2 table prints as an object (`Foo@1a2b3c`): the hash differs between runs.
    let first = match first.rsplit_once('@') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name,
        _ => first,
    };
    if first.is_empty() {
        node.node_name.to_string()
    } else {
        first.replace('`', "")
    }
}

/// Splits trailing `key=value` partition directories off a path, so a loop that writes
/// `t/month=07` and a fix that writes `t` partitioned by month name the same destination.
pub fn fold_destination(target: &str) -> (String, Vec<String>) {
    let mut base = target.trim_end_matches('/').to_string();
    let mut parts = Vec::new();
    while let Some((head, last)) = base.rsplit_once('/') {
        if head.is_empty() || !last.contains('=') || last.starts_with('=') {
            break;
        }
        parts.push(last.to_string());
        base = head.to_string();
    }
    parts.reverse();
    (base, parts)
}

/// The table of a catalog scan (`Scan parquet spark_catalog.db.t`), the location of a path-based
/// one (`Location: InMemoryFileIndex(1 paths)[file:/x]`), or the operator (`Range`).
fn scan_source(node: &SparkPlanInfo) -> String {
    let s = &node.simple_string;
    if let Some(at) = s.find("Location: ") {
        let rest = &s[at + "Location: ".len()..];
        if let Some(open) = rest.find('[') {
            let inner = &rest[open + 1..];
            let end = inner.find([']', ',']).unwrap_or(inner.len());
            return inner[..end].trim().to_string();
        }
    }
    let name = node.node_name.trim();
    if let Some(table) = name
        .strip_prefix("Scan ")
        .and_then(|r| r.split_once(' ').map(|(_, t)| t.trim()))
        .filter(|t| !t.is_empty())
    {
        return table.to_string();
    }
    name.to_string()
}

/// What a Structured Streaming micro-batch's description (`NAME\nid = …\nrunId = …\nbatch =
/// N`, as Spark's `StreamExecution` writes it) stands for: the query's batches, one work
/// whatever the ids and batch numbers, `None` for any other description.
pub fn micro_batches_of(description: &str) -> Option<String> {
    let mut lines = description.lines();
    let name = lines.next()?.trim();
    let ids = [lines.next()?, lines.next()?, lines.next()?];
    let spark_wrote = ids[0].starts_with("id = ")
        && ids[1].starts_with("runId = ")
        && ids[2].starts_with("batch = ");
    spark_wrote.then(|| match name {
        "" => "micro-batches of an unnamed query".to_string(),
        name => format!("micro-batches of {name}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_partitioned_writes_columns_come_from_its_options() {
        let node = |simple: &str| SparkPlanInfo {
            simple_string: simple.to_string(),
            ..Default::default()
        };
        assert_eq!(
            partition_columns(&node(
                "Execute InsertIntoHadoopFsRelationCommand file:/t, false, [p#1L], Parquet, \
                 [__partition_columns=[\"p\",\"q\"], path=/t], Overwrite, [id, p, v]"
            )),
            ["p", "q"]
        );
        assert!(
            partition_columns(&node("Execute InsertIntoHadoopFsRelationCommand file:/t"))
                .is_empty()
        );
    }

    /// Databricks declares Spark's `number of written files` on a write and leaves it at 0,
    /// counting the files under `files written`: the count is the non-zero one, whichever name
    /// comes first; a write that made no files still reads 0.
    #[test]
    fn a_declared_zero_does_not_hide_the_count_under_another_name() {
        let metrics = |pairs: &[(&str, i64)]| -> sparkdiag_model::NodeMetrics {
            pairs.iter().map(|(k, v)| ((*k).into(), *v)).collect()
        };
        let databricks = metrics(&[("number of written files", 0), ("files written", 2000)]);
        assert_eq!(pick(&databricks, FILE_METRICS), Some(2000));
        let spark = metrics(&[("number of written files", 320)]);
        assert_eq!(pick(&spark, FILE_METRICS), Some(320));
        let empty = metrics(&[("number of written files", 0)]);
        assert_eq!(pick(&empty, FILE_METRICS), Some(0));
        assert_eq!(pick(&metrics(&[]), FILE_METRICS), None);
    }

    #[test]
    fn partition_directories_fold_into_their_table() {
        assert_eq!(
            fold_destination("file:/out/t/month=07"),
            ("file:/out/t".to_string(), vec!["month=07".to_string()])
        );
        assert_eq!(
            fold_destination("file:/out/t/y=2026/m=01/"),
            (
                "file:/out/t".to_string(),
                vec!["y=2026".to_string(), "m=01".to_string()]
            )
        );
        assert_eq!(fold_destination("db.t"), ("db.t".to_string(), vec![]));
    }
}
