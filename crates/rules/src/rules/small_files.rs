//! PA003 small-files: a write that made many small files, or a scan that read many.

use super::common::bytes;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};
use sparkdiag_contract::units::thousands;
use sparkdiag_facts::writes::{Read, Write};

pub const MIN_FILES: Threshold = threshold(
    "min_files",
    100.0,
    "files",
    "a write or scan of fewer files is never a small-files problem",
    "DataFlint's small files (more than 100 files)",
);

pub const MAX_AVG_MIB: Threshold = threshold(
    "max_avg_mib",
    3.0,
    "MiB",
    "average file size under which files are small",
    "DataFlint's small files (under 3 MiB on average)",
);

pub const MEDIUM_FILES: Threshold = threshold(
    "medium_files",
    1000.0,
    "files",
    "small files from which the finding is medium rather than low",
    "sparkdiag's own guard",
);

declare_rule! {
    /// ## What it does
    /// Reads each write command's SQL metrics (`number of written files`, `written output`;
    /// on Databricks `files written`, the count where it leaves `number of written files` at 0,
    /// and Delta's `numFiles`, `numOutputBytes`) and each file scan's (`number of files read`,
    /// `size of files read`; Photon's `files read`), and names the
    /// writes and scans of `min_files` or more files averaging under `max_avg_mib`.
    ///
    /// ## Why is this bad?
    /// Every file costs a listing entry, an open, a footer read and a task's share of
    /// scheduling, whatever its size: a table of thousands of kilobyte files reads many times
    /// slower than the same rows in a few files of 128 MB to 1 GB, and the cost falls on every
    /// job that reads it. A dynamic-partition write (`partitionBy`) straight from many tasks is
    /// the usual cause: each task writes a file into every partition directory it has rows
    /// for, so the files are the tasks times the partitions.
    ///
    /// ## How to fix it
    /// - A partitioned write: shuffle by the partition columns first,
    ///   `df.repartition("p").write.partitionBy("p")`, so each directory gets its rows from one
    ///   task (a `REBALANCE` hint with AQE on Spark 3.2+ splits a large directory evenly).
    /// - An unpartitioned write: fewer, larger partitions before it (`coalesce(n)` for about
    ///   128 MB each).
    /// - On Databricks, Delta's optimized writes and auto compaction
    ///   (`delta.autoOptimize.optimizeWrite`, `delta.autoOptimize.autoCompact`) or `OPTIMIZE`.
    /// - A table that already has small files: rewrite (compact) it once; its readers then
    ///   list and open a fraction of the files.
    ///
    /// ## Threshold and its source
    /// `min_files` = 100 files averaging under `max_avg_mib` = 3 MiB (DataFlint's small files):
    /// low, and medium from `medium_files` = 1000 files. The time it costs falls mostly on the
    /// table's later readers, so it claims no time of this run.
    pub static SMALL_FILES = {
        code: "PA003",
        name: "small-files",
        category: Partitions,
        claims: Saving,
        needs: [SqlPlans],
        summary: "A write made, or a scan read, many small files",
        thresholds: &[MIN_FILES, MAX_AVG_MIB, MEDIUM_FILES] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let (writes, reads) = (&ctx.facts.writes, &ctx.facts.reads);
    let small = |files: Option<i64>, size: Option<i64>| match (files, size) {
        (Some(files), Some(size)) if files as f64 >= t.get(&MIN_FILES) => {
            let average = size / files.max(1);
            ((average as f64) < t.get(&MAX_AVG_MIB) * f64::from(1u32 << 20))
                .then_some((files, size, average))
        }
        _ => None,
    };
    let severity = |files: i64| {
        if files as f64 >= t.get(&MEDIUM_FILES) {
            Severity::Medium
        } else {
            Severity::Low
        }
    };
    let mut findings = Vec::new();
    for w in writes {
        if let Some((files, size, average)) = small(w.files, w.bytes) {
            findings.push(of_write(ctx, w, files, size, average, severity(files)));
        }
    }
    // A table read back in the run it was written in is the write's finding already.
    let written: Vec<&str> = writes.iter().map(|w| w.destination.as_str()).collect();
    for r in reads
        .iter()
        .filter(|r| !written.contains(&r.source.as_str()))
    {
        if let Some((files, size, average)) = small(r.files, r.bytes) {
            findings.push(of_read(ctx, r, files, size, average, severity(files)));
        }
    }
    findings
}

/// The jobs SQL execution `id` ran.
fn jobs_of(ctx: &Context, id: i64) -> Vec<i64> {
    ctx.app
        .jobs
        .iter()
        .filter(|j| j.sql_execution_id == Some(id))
        .map(|j| j.job_id)
        .collect()
}

fn scoped(ctx: &Context, mut finding: Finding, sql_execution_id: i64) -> Finding {
    finding.scope.sql_execution_ids.push(sql_execution_id);
    finding.jobs(jobs_of(ctx, sql_execution_id))
}

fn of_write(
    ctx: &Context,
    w: &Write,
    files: i64,
    size: i64,
    average: i64,
    severity: Severity,
) -> Finding {
    let partitions = w.dynamic_partitions.filter(|&p| p > 0);
    let title = format!(
        "SQL execution {} wrote {} files of {} on average ({} in all) to {}{}",
        w.sql_execution_id,
        thousands(files),
        bytes(average),
        bytes(size),
        w.destination,
        partitions
            .map(|p| format!(" across {} partition directories", thousands(p)))
            .unwrap_or_default()
    );
    let wanted = sparkdiag_facts::partition_count::by_size(
        size,
        sparkdiag_facts::partition_count::DEFAULT_TARGET_MB,
    );
    let mut advice = match (partitions, w.partition_columns.as_slice()) {
        (Some(p), columns) if files > p => {
            let by = if columns.is_empty() {
                "the partition columns".to_string()
            } else {
                columns
                    .iter()
                    .map(|c| format!("\"{c}\""))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            format!(
                "Each write task wrote a file into every partition directory it had rows for ({} files for {} directories, {:.0} a directory): shuffle by the partition columns before the write, df.repartition({by}).write.partitionBy({by}), so each directory's rows come from one task (with AQE on Spark 3.2+, a REBALANCE({by}) hint also splits a large directory evenly).",
                thousands(files),
                thousands(p),
                files as f64 / p as f64
            )
        }
        (Some(p), _) => format!(
            "The write has {} partition directories for {} of data: partition by fewer or coarser columns (a date rather than a timestamp), so each directory holds files of 128 MB or more.",
            thousands(p),
            bytes(size)
        ),
        (None, _) => {
            let fewer = if wanted == 1 {
                format!("one file of {}", bytes(size))
            } else {
                format!("{wanted} files of about 128 MB")
            };
            match write_stage(ctx, w.sql_execution_id) {
                Some(stage) if stage.num_tasks >= files => {
                    let shuffle = if stage.totals.shuffle_read_bytes() > 0 {
                        ", or fewer shuffle partitions before it (spark.sql.shuffle.partitions, or AQE's coalescing: see PA001 if it names this stage)"
                    } else {
                        ""
                    };
                    format!(
                        "The write stage (stage {}) ran {} tasks and each with rows wrote a file of its own: coalesce({wanted}) before the write gives {fewer}{shuffle}.",
                        stage.stage_id,
                        thousands(stage.num_tasks)
                    )
                }
                _ => format!(
                    "Write fewer, larger files: coalesce({wanted}) before the write gives {fewer}."
                ),
            }
        }
    };
    if ctx.app.platform() == sparkdiag_model::Platform::Databricks {
        advice += " On Delta, optimized writes and auto compaction (delta.autoOptimize.optimizeWrite=true, delta.autoOptimize.autoCompact=true) size the files for you; OPTIMIZE compacts what is there.";
    }
    let finding = Finding::new(&SMALL_FILES, severity, title, 0)
        .evidence("destination", w.destination.clone())
        .evidence("files", files)
        .evidence("bytes", size)
        .evidence("average_file_bytes", average)
        .evidence("dynamic_partitions", w.dynamic_partitions)
        .evidence("partition_columns", w.partition_columns.clone())
        .recommend(advice);
    scoped(ctx, finding, w.sql_execution_id)
}

/// The last stage of the write's execution: the one whose tasks wrote the files.
fn write_stage<'a>(
    ctx: &Context<'a>,
    sql_execution_id: i64,
) -> Option<&'a sparkdiag_model::StageAttempt> {
    let jobs = jobs_of(ctx, sql_execution_id);
    ctx.app
        .stages
        .iter()
        .filter(|s| s.job_ids.iter().any(|j| jobs.contains(j)))
        .max_by_key(|s| (s.stage_id, s.attempt_id))
}

fn of_read(
    ctx: &Context,
    r: &Read,
    files: i64,
    size: i64,
    average: i64,
    severity: Severity,
) -> Finding {
    let title = format!(
        "SQL execution {} read {} files of {} on average ({} in all) from {}",
        r.sql_execution_id,
        thousands(files),
        bytes(average),
        bytes(size),
        r.source
    );
    let finding = Finding::new(&SMALL_FILES, severity, title, 0)
        .evidence("source", r.source.clone())
        .evidence("files", files)
        .evidence("bytes", size)
        .evidence("average_file_bytes", average)
        .recommend("The table was written as many small files: compact it once (rewrite it with fewer, larger files, or OPTIMIZE on Delta) and fix the job that writes it (see PA003 on that job: a partitioned write wants a repartition by its partition columns first). Spark packs small files into read tasks (spark.sql.files.maxPartitionBytes, spark.sql.files.openCostInBytes), but still lists and opens each one.");
    scoped(ctx, finding, r.sql_execution_id)
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::SMALL_FILES;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    /// 8 write tasks into 40 partition directories: 320 files of 87 KiB, and the advice is
    /// the repartition by `p` that the fixed run made.
    #[test]
    fn fires_on_a_partitioned_write_from_many_tasks() {
        let found = on_log(&SMALL_FILES, "shapes/small-files", &[]);
        assert_fires(&found, SMALL_FILES.code);
        assert_eq!(
            found.len(),
            1,
            "the read of the same table is the write's finding"
        );
        let f = &found[0];
        assert_eq!(f.evidence["files"], 320);
        assert_eq!(f.evidence["dynamic_partitions"], 40);
        assert!(f.title.contains("320 files"), "{}", f.title);
        assert!(
            f.recommendation
                .contains("df.repartition(\"p\").write.partitionBy(\"p\")"),
            "{}",
            f.recommendation
        );
        assert_eq!(f.impact_ms, 0);
    }

    /// 2,000 shuffle partitions written out unpartitioned: one file per task with rows, so the
    /// fix is fewer partitions before the write, down to one file for 1.9 MiB.
    #[test]
    fn an_unpartitioned_write_of_many_tasks_is_told_to_coalesce() {
        let found = on_log(&SMALL_FILES, "causes/partitions", &[]);
        assert_fires(&found, SMALL_FILES.code);
        let advice = &found[0].recommendation;
        assert!(advice.contains("ran 2,000 tasks"), "{advice}");
        assert!(
            advice.contains("coalesce(1) before the write gives one file of"),
            "{advice}"
        );
        assert!(advice.contains("fewer shuffle partitions"), "{advice}");
    }

    /// Another application reading that table: its reader is told to compact it and fix the
    /// job that writes it.
    #[test]
    fn fires_on_a_read_of_a_table_of_small_files() {
        let found = on_log(&SMALL_FILES, "shapes/small-files-read", &[]);
        assert_fires(&found, SMALL_FILES.code);
        let f = &found[0];
        assert!(f.title.contains("read 320 files"), "{}", f.title);
        assert!(
            f.recommendation.contains("compact it"),
            "{}",
            f.recommendation
        );
        assert!(!f.scope.sql_execution_ids.is_empty());
    }

    /// The same write after `repartition("p")`: 40 files, one a directory.
    #[test]
    fn is_quiet_on_the_write_shuffled_by_its_partition_column() {
        assert_quiet(&on_log(&SMALL_FILES, "shapes/small-files-fixed", &[]));
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&SMALL_FILES, "patterns/healthy", &[]));
    }
}
