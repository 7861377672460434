//! DR003 query-after-jobs: a SQL query that went on long after its last job ended, the driver
//! committing, loading partitions or listing files while the cluster waited.

use super::common::{bytes, duration};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};
use sparkdiag_model::{Application, SqlExecution};

pub const MIN_TAIL_S: Threshold = threshold(
    "min_tail_s",
    30.0,
    "s",
    "time a query went on after its last job ended worth a finding",
    "sparkdiag's own guard: a commit of seconds is the normal cost of a write",
);

pub const MIN_SHARE: Threshold = threshold(
    "min_share",
    0.02,
    "share",
    "share of the application the queries' tails must reach",
    "sparkdiag's severity band for medium",
);

declare_rule! {
    /// ## What it does
    /// Measures, for each SQL query (execution), how long it went on after its last Spark job
    /// ended, and flags queries whose tail is long. That time is the driver's alone: no task
    /// runs, so the executors wait. It names the command the query ran and what the tail
    /// usually is for that command.
    ///
    /// ## Why is this bad?
    /// A write's job only writes files into a staging place; the driver then commits them.
    /// A Hive SerDe insert into a dynamically partitioned table (`InsertIntoHiveTable`) moves
    /// every file of every partition and calls the metastore once per partition
    /// (`Hive.loadDynamicPartitions`), one after another on the driver: a 234 GB insert spent
    /// 52 minutes there after a job of 39. Renaming committers on object stores copy each file,
    /// Delta commits list and check the files they add, and a query over a table of many
    /// partitions may list them all. None of it shows as a job, stage or task, so it hides in
    /// "driver-only time".
    ///
    /// ## How to fix it
    /// - A Hive SerDe insert: write through Spark's data source writer instead: a table
    ///   created `USING parquet` (or Delta), or keep
    ///   `spark.sql.hive.convertMetastoreParquet`/`convertMetastoreOrc` and
    ///   `spark.sql.hive.convertInsertingPartitionedTable` on, so Spark's own committer writes
    ///   the partitions; and fewer partitions per commit (a coarser partition column, or the
    ///   data written in batches of partitions).
    /// - A file source write on an object store: a committer that does not rename
    ///   (the S3A magic committer, EMR's S3-optimized committer, Databricks' DBIO commit).
    /// - A Delta write: fewer, larger files (optimized writes,
    ///   `spark.databricks.delta.optimizeWrite.enabled=true`), so the commit has less to add.
    ///
    /// ## Threshold and its source
    /// A query whose tail after its last job is at least `min_tail_s` = 30 s, with all such
    /// tails together at least `min_share` = 2 % of the application. The saving is the tail:
    /// the most a faster commit recovers (a data source commit still takes some time).
    pub static QUERY_AFTER_JOBS = {
        code: "DR003",
        name: "query-after-jobs",
        category: DriverBound,
        claims: Saving,
        needs: [Jobs, SqlPlans],
        summary: "A SQL query went on long after its last job ended (commit, partition loading, listing)",
        thresholds: &[
            MIN_TAIL_S,
            MIN_SHARE,
        ] as &[Threshold],
        check: check,
    };
}

/// One query's time after its last job.
struct Tail<'a> {
    sql: &'a SqlExecution,
    last_job_end_ms: i64,
    end_ms: i64,
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    let tails: Vec<Tail> = app
        .sql
        .iter()
        .filter_map(|sql| tail_of(app, sql))
        .filter(|tail| (tail.end_ms - tail.last_job_end_ms) as f64 >= t.get(&MIN_TAIL_S) * 1000.0)
        .collect();
    let total: i64 = tails.iter().map(|t| t.end_ms - t.last_job_end_ms).sum();
    if tails.is_empty() || (total as f64) < t.get(&MIN_SHARE) * ctx.app_ms as f64 {
        return Vec::new();
    }
    tails.iter().map(|tail| finding(ctx, tail)).collect()
}

/// The query's end against the end of the last job it started; `None` for a query that has
/// not ended, started no job, or whose jobs outlasted it.
fn tail_of<'a>(app: &'a Application, sql: &'a SqlExecution) -> Option<Tail<'a>> {
    let end_ms = sql.end_ms?;
    let last_job_end_ms = app
        .jobs
        .iter()
        .filter(|j| j.sql_execution_id == Some(sql.execution_id))
        .filter_map(|j| j.completion_ms)
        .max()?;
    (end_ms > last_job_end_ms).then_some(Tail {
        sql,
        last_job_end_ms,
        end_ms,
    })
}

fn finding(ctx: &Context, tail: &Tail) -> Finding {
    let tail_ms = tail.end_ms - tail.last_job_end_ms;
    let command = command_of(tail.sql);
    let writes: Vec<&sparkdiag_facts::writes::Write> = ctx
        .facts
        .writes
        .iter()
        .filter(|w| w.sql_execution_id == tail.sql.execution_id)
        .collect();
    let what = match writes.first() {
        Some(w) => {
            let mut said = format!("{} into `{}`", command.name, w.destination);
            let mut figures: Vec<String> = Vec::new();
            if let Some(b) = w.bytes.filter(|b| *b > 0) {
                figures.push(bytes(b));
            }
            if let Some(f) = w.files.filter(|f| *f > 0) {
                figures.push(format!("{f} files"));
            }
            if let Some(p) = w.dynamic_partitions.filter(|p| *p > 0) {
                figures.push(format!("{p} dynamic partitions"));
            }
            if !figures.is_empty() {
                said.push_str(&format!(" ({})", figures.join(", ")));
            }
            said
        }
        None => command.name.to_string(),
    };
    let title = format!(
        "SQL execution {}: {what} went on {} after its last job ended ({}), the driver {} while the executors waited",
        tail.sql.execution_id,
        duration(tail_ms),
        ctx.percent_of_app(tail_ms),
        command.doing
    );
    let severity = Severity::from_saving(tail_ms, ctx.app_ms);
    let mut finding = Finding::new(&QUERY_AFTER_JOBS, severity, title, tail_ms)
        .during(tail.last_job_end_ms, tail.end_ms)
        .evidence("sql_execution_id", tail.sql.execution_id)
        .evidence("command", command.name)
        .evidence("tail_ms", tail_ms)
        .evidence("last_job_end_ms", tail.last_job_end_ms)
        .evidence("query_end_ms", tail.end_ms)
        .proposes(
            crate::Change::FasterCommit {
                sql_executions: vec![tail.sql.execution_id],
            },
            command.bound,
        )
        .recommend(command.fix);
    finding.scope.sql_execution_ids.push(tail.sql.execution_id);
    if let Some(w) = writes.first() {
        finding = finding.evidence("destination", w.destination.clone());
        if let Some(p) = w.dynamic_partitions {
            finding = finding.evidence("dynamic_partitions", p);
        }
        if let Some(f) = w.files {
            finding = finding.evidence("files_written", f);
        }
    }
    finding
}

/// What a query's command is, what its driver does after the jobs, and the fix that fits it.
struct Command {
    name: &'static str,
    doing: &'static str,
    fix: &'static str,
    /// What the saving (the whole tail) assumes of the fix, and why it is a bound.
    bound: &'static str,
}

/// The command the plan that ran executed (`Execute InsertIntoHiveTable`, a Delta write, a file
/// source insert), by the names Spark, Hive and Delta give their write commands: the first write
/// command from the root down (AQE wraps it in `AdaptiveSparkPlan` and, from Spark 4, in a
/// `ResultQueryStage`), else the root.
fn command_of(sql: &SqlExecution) -> Command {
    let root = sql
        .plan_that_ran()
        .map(|p| {
            let mut stack = vec![p];
            while let Some(node) = stack.pop() {
                if sparkdiag_facts::writes::is_write(&node.node_name) {
                    return node.node_name.as_str();
                }
                stack.extend(node.children.iter().rev());
            }
            p.node_name.as_str()
        })
        .unwrap_or_default();
    let name = root.strip_prefix("Execute ").unwrap_or(root);
    let submitted = sql.plan_description.text();
    let hive_partitions = submitted.contains("InsertIntoHiveTable") && submitted.contains("=None");
    if name.starts_with("InsertIntoHiveTable") || name.starts_with("CreateHiveTableAsSelect") {
        Command {
            name: "a Hive SerDe insert (InsertIntoHiveTable)",
            doing: if hive_partitions {
                "moving each dynamic partition's files and loading it into the metastore one by one"
            } else {
                "moving the files into the table and updating the metastore"
            },
            fix: "Write through Spark's data source writer instead of a Hive SerDe insert: create the table USING parquet (or Delta), or keep spark.sql.hive.convertMetastoreParquet and spark.sql.hive.convertInsertingPartitionedTable on so Spark's own committer writes it (a Hive text or SerDe table cannot be converted); and commit fewer partitions at a time (a coarser partition column, or the data written in batches of partitions). The trade-off: a data source table is read by Spark and engines that read its format, not by Hive SerDe readers.",
            bound: "not replayed: the whole tail after the last job, the most the fix recovers; a data source writer's commit does not move each file and adds the partitions in one metastore call, but it still takes time (seconds for a few files, minutes for thousands on an object store whose rename is a copy)",
        }
    } else if name.contains("Delta") || name.starts_with("MergeInto") {
        Command {
            name: "a Delta write",
            doing: "committing to the Delta log",
            fix: "Write fewer, larger files so the commit has less to add and check (spark.databricks.delta.optimizeWrite.enabled=true, or repartition by the table's partition columns before the write), and compact the table (OPTIMIZE) so later commits list fewer files.",
            bound: "not replayed: the whole tail after the last job, the most the fix recovers; a Delta commit of fewer, larger files is shorter, not free",
        }
    } else if name.starts_with("InsertIntoHadoopFsRelation")
        || name.contains("TableAsSelect")
        || name.starts_with("SaveIntoDataSource")
    {
        Command {
            name: "a file source write",
            doing: "committing the written files (renaming them into place)",
            fix: "Use a committer that does not rename files on an object store (the S3A magic committer, EMR's S3-optimized committer, Databricks' DBIO commit), write fewer, larger files, and with dynamic partition overwrite commit fewer partitions at a time.",
            bound: "not replayed: the whole tail after the last job, the most the fix recovers; a committer that does not rename still records each file it commits",
        }
    } else {
        Command {
            name: "the query",
            doing: "working with no job running (a commit, metastore calls or file listing)",
            fix: "The driver log around the query's end names what the driver did: a commit of many files, metastore calls for many partitions, or listing a table's files. Write fewer, larger files and partitions, and read tables through a catalog that caches their file lists.",
            bound: "not replayed: the whole tail after the last job, the most a fix recovers; what the driver did then is not in the event log",
        }
    }
}

#[cfg(test)]
mod real_logs {
    use super::*;
    use crate::rules::testing::{assert_fires, on_log};

    /// A Hive SerDe insert of 600 dynamic partitions into a text table (Derby metastore): the
    /// execution ends about two minutes after its last job, the driver loading partitions.
    #[test]
    fn names_a_hive_dynamic_partition_insert() {
        let found = on_log(&QUERY_AFTER_JOBS, "operations/late-commit", &[]);
        assert_fires(&found, "DR003");
        let f = &found[0];
        assert!(f.title.contains("InsertIntoHiveTable"), "{}", f.title);
        assert!(f.title.contains("600 dynamic partitions"), "{}", f.title);
        assert!(f.evidence["tail_ms"].as_i64().unwrap() > 60_000, "{f:?}");
        assert!(f.recommendation.contains("data source writer"));
    }

    /// The healthy logs' writes commit in well under a second, and the same 600 partitions
    /// written with partitionBy to a folder commit within seconds of the job.
    #[test]
    fn is_quiet_where_queries_end_with_their_jobs() {
        for log in [
            "patterns/healthy",
            "single/zstd",
            "shapes/small-files",
            "operations/late-commit-fixed",
        ] {
            assert!(on_log(&QUERY_AFTER_JOBS, log, &[]).is_empty(), "{log}");
        }
    }

    /// The Databricks 9.1 job run of `../shared/real-world`: a 234 GB Hive SerDe insert into a
    /// table partitioned by year, month and day, whose execution ended 52 minutes after its
    /// only job.
    #[test]
    fn names_the_hive_insert_that_committed_for_52_minutes() {
        let Some(apps) = crate::rules::testing::shared_apps(
            "real-world/spark_log_parser/tests/logs/databricks-rollover.zip",
        ) else {
            return;
        };
        let found: Vec<Finding> = apps
            .iter()
            .flat_map(|app| crate::rules::testing::run(&QUERY_AFTER_JOBS, app, &[]))
            .collect();
        assert_fires(&found, "DR003");
        let f = &found[0];
        assert_eq!(f.evidence["sql_execution_id"], 5);
        assert!(
            f.evidence["tail_ms"].as_i64().unwrap() > 50 * 60_000,
            "{f:?}"
        );
        assert!(f.title.contains("InsertIntoHiveTable") && f.title.contains("dec_tbl_a"));
        assert!(f.recommendation.contains("data source writer"));
        assert!(matches!(f.severity, Severity::Critical), "{:?}", f.severity);
        // The tail is the most a faster commit saves, and the finding says it is a bound.
        let counterfactual = f.counterfactual.as_ref().expect("DR003 proposes a change");
        assert!(!counterfactual.replayed);
        assert!(
            counterfactual
                .assumption
                .contains("the most the fix recovers")
        );
    }
}
