//! Writes the nightly fleet tables — `applications`, `stages`, `executors`, `findings` — as
//! Parquet files that Spark, Databricks and DuckDB read as they are.
//!
//! # Brief overview
//! [`write_night`] turns one night's [`Report`]s into four tables and writes each to
//! `OUTDIR/tables/<table>/date=<YYYY-MM-DD>/part-0.parquet`: Hive-style partitions, so
//! `spark.read.parquet("OUTDIR/tables/applications")` and DuckDB's
//! `read_parquet('OUTDIR/tables/applications/*/*.parquet', hive_partitioning = true)` both add the
//! `date` column from the path (it is not repeated inside the files, which Spark would reject).
//! Each file is written under a temporary name and renamed, so a crash never leaves a
//! half-written table, and writing a date again replaces that date's partition.
//!
//! polars lives here alone so that the crates that read and model logs build fast.
//!
//! # Example
//! ```
//! let out = tempfile::tempdir()?;
//! // A night with no applications still writes every table, empty, in the same layout.
//! let files = sparkdiag_tables::write_night(out.path(), "2026-11-29", &[])?;
//! assert_eq!(files.len(), 4);
//! assert!(files[0].ends_with("tables/applications/date=2026-11-29/part-0.parquet"));
//! assert!(std::fs::read(&files[3])?.starts_with(b"PAR1"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use polars_io::prelude::*;
use sparkdiag_report::Report;

/// The tables, in the order they are written.
pub const TABLES: [&str; 4] = ["applications", "stages", "executors", "findings"];

#[derive(Debug)]
pub struct TablesError(pub String);

impl std::fmt::Display for TablesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TablesError {}

/// Writes one night's tables; returns the files written.
pub fn write_night(
    outdir: &Path,
    date: &str,
    reports: &[&Report],
) -> Result<Vec<PathBuf>, TablesError> {
    let frames = [
        applications(reports),
        stages(reports),
        executors(reports),
        findings(reports),
    ];
    let mut written = Vec::new();
    for (name, frame) in TABLES.iter().zip(frames) {
        let mut frame =
            frame.map_err(|e| TablesError(format!("cannot build the {name} table: {e}")))?;
        let dir = outdir
            .join("tables")
            .join(name)
            .join(format!("date={date}"));
        fs::create_dir_all(&dir)
            .map_err(|e| TablesError(format!("cannot create {}: {e}", dir.display())))?;
        let path = dir.join("part-0.parquet");
        let tmp = dir.join(".part-0.parquet.tmp");
        let file = fs::File::create(&tmp)
            .map_err(|e| TablesError(format!("cannot write {}: {e}", tmp.display())))?;
        ParquetWriter::new(file)
            .finish(&mut frame)
            .map_err(|e| TablesError(format!("cannot write {}: {e}", tmp.display())))?;
        fs::rename(&tmp, &path)
            .map_err(|e| TablesError(format!("cannot rename {} into place: {e}", tmp.display())))?;
        written.push(path);
    }
    Ok(written)
}

/// The serialised name of an enum value (`"succeeded"`, `"high"`).
fn name_of(value: impl serde::Serialize) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

fn text(name: &str, values: Vec<String>) -> Column {
    Column::new(name.into(), values)
}

fn int(name: &str, values: Vec<i64>) -> Column {
    Column::new(name.into(), values)
}

fn opt(name: &str, values: Vec<Option<i64>>) -> Column {
    Column::new(name.into(), values)
}

fn app_id(r: &Report) -> String {
    r.application.id.clone().unwrap_or_default()
}

fn applications(reports: &[&Report]) -> PolarsResult<DataFrame> {
    let col_i =
        |name: &str, f: &dyn Fn(&Report) -> i64| int(name, reports.iter().map(|r| f(r)).collect());
    DataFrame::new_infer_height(vec![
        text("app_id", reports.iter().map(|r| app_id(r)).collect()),
        text(
            "attempt_id",
            reports
                .iter()
                .map(|r| r.application.attempt_id.clone().unwrap_or_default())
                .collect(),
        ),
        text(
            "name",
            reports
                .iter()
                .map(|r| r.application.name.clone().unwrap_or_default())
                .collect(),
        ),
        text(
            "spark_version",
            reports
                .iter()
                .map(|r| r.application.spark_version.clone().unwrap_or_default())
                .collect(),
        ),
        text(
            "platform",
            reports
                .iter()
                .map(|r| name_of(r.application.platform))
                .collect(),
        ),
        text(
            "status",
            reports
                .iter()
                .map(|r| name_of(r.application.status))
                .collect(),
        ),
        opt(
            "start_ms",
            reports.iter().map(|r| r.application.start_ms).collect(),
        ),
        opt(
            "end_ms",
            reports.iter().map(|r| r.application.end_ms).collect(),
        ),
        opt(
            "duration_ms",
            reports.iter().map(|r| r.application.duration_ms).collect(),
        ),
        col_i("jobs", &|r| r.summary.jobs as i64),
        col_i("failed_jobs", &|r| r.summary.failed_jobs as i64),
        col_i("stages", &|r| r.summary.stages as i64),
        col_i("failed_stages", &|r| r.summary.failed_stages as i64),
        col_i("tasks", &|r| r.summary.tasks as i64),
        col_i("failed_tasks", &|r| r.summary.failed_tasks as i64),
        col_i("executors", &|r| r.summary.executors as i64),
        col_i("executor_run_time_ms", &|r| r.summary.executor_run_time_ms),
        col_i("jvm_gc_time_ms", &|r| r.summary.jvm_gc_time_ms),
        col_i("shuffle_read_bytes", &|r| r.summary.shuffle_read_bytes),
        col_i("shuffle_write_bytes", &|r| r.summary.shuffle_write_bytes),
        col_i("memory_spill_bytes", &|r| r.summary.memory_spill_bytes),
        col_i("disk_spill_bytes", &|r| r.summary.disk_spill_bytes),
        col_i("input_bytes", &|r| r.summary.input_bytes),
        col_i("output_bytes", &|r| r.summary.output_bytes),
        col_i("driver_time_ms", &|r| r.summary.driver_time_ms),
        col_i("job_time_ms", &|r| r.summary.job_time_ms),
        col_i("findings", &|r| r.findings.len() as i64),
        col_i("impact_ms", &|r| {
            r.findings.iter().map(|f| f.finding.impact_ms).sum()
        }),
        Column::new(
            "complete".into(),
            reports
                .iter()
                .map(|r| r.source.complete)
                .collect::<Vec<bool>>(),
        ),
        text(
            "source",
            reports.iter().map(|r| r.source.inputs.join(" ")).collect(),
        ),
    ])
}

fn stages(reports: &[&Report]) -> PolarsResult<DataFrame> {
    let rows: Vec<(&Report, &sparkdiag_report::StageOut)> = reports
        .iter()
        .flat_map(|r| r.stages.iter().map(move |s| (*r, s)))
        .collect();
    let col_i = |name: &str, f: &dyn Fn(&sparkdiag_report::StageOut) -> i64| {
        int(name, rows.iter().map(|(_, s)| f(s)).collect())
    };
    DataFrame::new_infer_height(vec![
        text("app_id", rows.iter().map(|(r, _)| app_id(r)).collect()),
        col_i("stage_id", &|s| s.stage_id),
        col_i("attempt_id", &|s| s.attempt_id),
        text("name", rows.iter().map(|(_, s)| s.name.clone()).collect()),
        text(
            "status",
            rows.iter().map(|(_, s)| name_of(s.status)).collect(),
        ),
        col_i("num_tasks", &|s| s.num_tasks),
        col_i("failed_tasks", &|s| s.failed_tasks),
        opt(
            "duration_ms",
            rows.iter().map(|(_, s)| s.duration_ms).collect(),
        ),
        opt(
            "task_p50_ms",
            rows.iter()
                .map(|(_, s)| s.task_duration_ms.as_ref().map(|q| i64::from(q.p50)))
                .collect(),
        ),
        opt(
            "task_max_ms",
            rows.iter()
                .map(|(_, s)| s.task_duration_ms.as_ref().map(|q| i64::from(q.max)))
                .collect(),
        ),
        col_i("executor_run_time_ms", &|s| s.executor_run_time_ms),
        col_i("jvm_gc_time_ms", &|s| s.jvm_gc_time_ms),
        col_i("shuffle_read_bytes", &|s| s.shuffle_read_bytes),
        col_i("shuffle_write_bytes", &|s| s.shuffle_write_bytes),
        col_i("input_bytes", &|s| s.input_bytes),
        col_i("output_bytes", &|s| s.output_bytes),
        col_i("memory_spill_bytes", &|s| s.memory_spill_bytes),
        col_i("disk_spill_bytes", &|s| s.disk_spill_bytes),
    ])
}

fn executors(reports: &[&Report]) -> PolarsResult<DataFrame> {
    let rows: Vec<(&Report, &sparkdiag_report::ExecutorOut)> = reports
        .iter()
        .flat_map(|r| r.executors.iter().map(move |e| (*r, e)))
        .collect();
    let col_i = |name: &str, f: &dyn Fn(&sparkdiag_report::ExecutorOut) -> i64| {
        int(name, rows.iter().map(|(_, e)| f(e)).collect())
    };
    DataFrame::new_infer_height(vec![
        text("app_id", rows.iter().map(|(r, _)| app_id(r)).collect()),
        text(
            "executor_id",
            rows.iter().map(|(_, e)| e.executor_id.clone()).collect(),
        ),
        text("host", rows.iter().map(|(_, e)| e.host.clone()).collect()),
        opt("cores", rows.iter().map(|(_, e)| e.cores).collect()),
        opt("added_ms", rows.iter().map(|(_, e)| e.added_ms).collect()),
        opt(
            "removed_ms",
            rows.iter().map(|(_, e)| e.removed_ms).collect(),
        ),
        text(
            "removed_reason",
            rows.iter()
                .map(|(_, e)| e.removed_reason.clone().unwrap_or_default())
                .collect(),
        ),
        col_i("total_tasks", &|e| e.total_tasks),
        col_i("failed_tasks", &|e| e.failed_tasks),
        col_i("task_time_ms", &|e| e.task_time_ms),
        col_i("jvm_gc_time_ms", &|e| e.jvm_gc_time_ms),
        col_i("shuffle_read_bytes", &|e| e.shuffle_read_bytes),
        col_i("shuffle_write_bytes", &|e| e.shuffle_write_bytes),
    ])
}

fn findings(reports: &[&Report]) -> PolarsResult<DataFrame> {
    let rows: Vec<(&Report, &sparkdiag_report::FindingOut)> = reports
        .iter()
        .flat_map(|r| r.findings.iter().map(move |f| (*r, f)))
        .collect();
    let join = |ids: Vec<String>| ids.join(",");
    DataFrame::new_infer_height(vec![
        text("app_id", rows.iter().map(|(r, _)| app_id(r)).collect()),
        text(
            "app_name",
            rows.iter()
                .map(|(r, _)| r.application.name.clone().unwrap_or_default())
                .collect(),
        ),
        text(
            "rule",
            rows.iter()
                .map(|(_, f)| f.finding.rule.to_string())
                .collect(),
        ),
        text(
            "category",
            rows.iter()
                .map(|(_, f)| name_of(f.finding.category))
                .collect(),
        ),
        text(
            "severity",
            rows.iter()
                .map(|(_, f)| name_of(f.finding.severity))
                .collect(),
        ),
        text(
            "title",
            rows.iter().map(|(_, f)| f.finding.title.clone()).collect(),
        ),
        int(
            "impact_ms",
            rows.iter().map(|(_, f)| f.finding.impact_ms).collect(),
        ),
        text(
            "stage_ids",
            rows.iter()
                .map(|(_, f)| {
                    join(
                        f.finding
                            .scope
                            .stage_ids
                            .iter()
                            .map(|i| i.to_string())
                            .collect(),
                    )
                })
                .collect(),
        ),
        text(
            "executor_ids",
            rows.iter()
                .map(|(_, f)| join(f.finding.scope.executor_ids.clone()))
                .collect(),
        ),
        text(
            "recommendation",
            rows.iter()
                .map(|(_, f)| f.finding.recommendation.clone())
                .collect(),
        ),
    ])
}
