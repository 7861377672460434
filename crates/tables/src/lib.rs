//! Writes the nightly fleet tables — `applications`, `stages`, `executors`, `findings`,
//! `streaming_batches` — as Parquet files that Spark, Databricks and DuckDB read as they are.
//!
//! # Brief overview
//! [`write_night`] turns one night's [`Report`]s into five tables and writes each to
//! `OUTDIR/tables/<table>/date=<YYYY-MM-DD>/part-0.parquet`: Hive-style partitions, so
//! `spark.read.parquet("OUTDIR/tables/applications")` and DuckDB's
//! `read_parquet('OUTDIR/tables/applications/*/*.parquet', hive_partitioning = true)` both add the
//! `date` column from the path (it is not repeated inside the files, which Spark would reject).
//! Each file is written under a temporary name and renamed, so a crash never leaves a
//! half-written table, and writing a date again replaces that date's partition.
//! [`NightWriter`] writes the same tables one report at a time, so a night of any size needs
//! only a few reports in memory; `write_night` is it fed from a slice.
//! [`NightWriter::append_night`] adds another folder's tables of the same date, a row group at a
//! time: how `sparkdiag batch --merge` joins the slices of a night analysed on many machines.
//!
//! polars lives here alone so that the crates that read and model logs build fast.
//!
//! # Example
//! ```
//! let out = tempfile::tempdir()?;
//! // A night with no applications still writes every table, empty, in the same layout.
//! let files = sparkdiag_tables::write_night(out.path(), "2026-11-29", &[])?;
//! assert_eq!(files.len(), sparkdiag_tables::TABLES.len());
//! assert!(files[0].ends_with("tables/applications/date=2026-11-29/part-0.parquet"));
//! assert!(std::fs::read(&files[3])?.starts_with(b"PAR1"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fs;
use std::path::{Path, PathBuf};

use polars::prelude::*;
use polars_io::prelude::*;
use sparkdiag_contract::{Report, enum_name};

/// The tables, in the order they are written.
pub const TABLES: [&str; 5] = [
    "applications",
    "stages",
    "executors",
    "findings",
    "streaming_batches",
];

#[derive(Debug)]
pub struct TablesError(pub String);

impl std::fmt::Display for TablesError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for TablesError {}

/// Writes one night's tables from reports already in memory; returns the files written.
/// The same as feeding each report to a [`NightWriter`] in order, which is what `batch` does so
/// that a night of any size never holds more than a few reports at once.
pub fn write_night(
    outdir: &Path,
    date: &str,
    reports: &[&Report],
) -> Result<Vec<PathBuf>, TablesError> {
    let mut writer = NightWriter::create(outdir, date)?;
    for report in reports {
        writer.add(report)?;
    }
    writer.finish()
}

/// How many rows a table buffers before writing them as one Parquet row group: big enough that
/// readers see few, well-compressed groups; small enough (a few MB) that memory stays flat.
const ROW_GROUP_ROWS: usize = 16_384;

/// ...or this many bytes (as polars estimates the buffered columns), whichever comes first. The
/// four buffers are what `batch` holds beyond the applications in flight, and they fill with the
/// night until a bound stops them: the `applications` table has one row per application, so
/// 16,384 rows was the whole of a 10,000-application night in memory. With 4 MiB the buffers
/// still grew up to about 10,000 applications (heaptrack, debug build: 4.8 MB at 1,000
/// applications, 14.9 MB at 10,000); with 1 MiB the `stages` table (about ten rows per
/// application) reaches its bound after a few hundred, so the buffers stop growing early.
const ROW_GROUP_BYTES: usize = 1 << 20;

/// How many applications' chunks a table's buffer gathers before they are merged into one.
const MAX_CHUNKS: usize = 32;

/// One table being written: its open file and the rows not yet written.
struct TableWriter {
    writer: BatchedWriter<fs::File>,
    pending: DataFrame,
    /// The table with no rows, as built from no reports: what `pending` starts again from.
    /// (Polars' own `clear` makes its empty columns from a shared 8 MiB block of zeroes that it
    /// allocates on first use and keeps: 8.4 MB of a 30.7 MB peak, heaptrack.)
    empty: DataFrame,
    tmp: PathBuf,
    path: PathBuf,
}

impl TableWriter {
    fn flush(&mut self) -> Result<(), TablesError> {
        if self.pending.height() == 0 {
            return Ok(());
        }
        // The batched writer turns each chunk into a row group; one chunk, one group.
        self.pending.rechunk_mut();
        self.writer
            .write_batch(&self.pending)
            .map_err(|e| TablesError(format!("cannot write {}: {e}", self.tmp.display())))?;
        self.pending = self.empty.clone();
        Ok(())
    }
}

/// Writes one night's tables an application at a time: [`NightWriter::add`] appends a report's
/// rows and the report can be dropped; only up to 16,384 rows or 1 MiB per table wait in memory. Each table is still one file,
/// `date=<DATE>/part-0.parquet` (one row group per 16,384 rows or 1 MiB),
/// written under a temporary name and renamed into place by
/// [`NightWriter::finish`], so readers never see a night half-written and the layout is the
/// one Spark and DuckDB already read. Dropping the writer unfinished leaves the previous
/// partition as it was.
pub struct NightWriter {
    tables: Vec<TableWriter>,
    row_group_rows: usize,
}

impl NightWriter {
    pub fn create(outdir: &Path, date: &str) -> Result<Self, TablesError> {
        let mut tables = Vec::new();
        for (name, frame) in TABLES.iter().zip(frames(&[])) {
            let frame =
                frame.map_err(|e| TablesError(format!("cannot build the {name} table: {e}")))?;
            let path = partition_file(outdir, name, date);
            let dir = path.parent().expect("a partition file has a folder");
            fs::create_dir_all(dir)
                .map_err(|e| TablesError(format!("cannot create {}: {e}", dir.display())))?;
            let tmp = dir.join(".part-0.parquet.tmp");
            let file = fs::File::create(&tmp)
                .map_err(|e| TablesError(format!("cannot write {}: {e}", tmp.display())))?;
            let writer = ParquetWriter::new(file)
                .batched(frame.schema())
                .map_err(|e| TablesError(format!("cannot write {}: {e}", tmp.display())))?;
            tables.push(TableWriter {
                writer,
                empty: frame.clone(),
                pending: frame,
                tmp,
                path,
            });
        }
        Ok(NightWriter {
            tables,
            row_group_rows: ROW_GROUP_ROWS,
        })
    }

    /// Appends one application's rows to every table.
    pub fn add(&mut self, report: &Report) -> Result<(), TablesError> {
        for ((index, name), frame) in TABLES.iter().enumerate().zip(frames(&[report])) {
            let frame =
                frame.map_err(|e| TablesError(format!("cannot build the {name} table: {e}")))?;
            self.append(index, frame)?;
        }
        Ok(())
    }

    /// Appends every row of another night's tables for `date` under `outdir` (one slice of a
    /// night, written by `sparkdiag batch --slice`), a row group's worth at a time, so merging
    /// slices needs no more memory than writing them. Their columns and types must be these
    /// tables' own.
    pub fn append_night(&mut self, outdir: &Path, date: &str) -> Result<(), TablesError> {
        for (index, name) in TABLES.iter().enumerate() {
            let path = partition_file(outdir, name, date);
            let open = || {
                fs::File::open(&path)
                    .map_err(|e| TablesError(format!("cannot read {}: {e}", path.display())))
            };
            let unreadable = |e: PolarsError| {
                TablesError(format!(
                    "{}: not a readable Parquet file: {e}",
                    path.display()
                ))
            };
            let rows = ParquetReader::new(open()?).num_rows().map_err(unreadable)?;
            let mut offset = 0;
            while offset < rows {
                let frame = ParquetReader::new(open()?)
                    .with_slice(Some((offset, self.row_group_rows)))
                    .finish()
                    .map_err(unreadable)?;
                if frame.schema() != self.tables[index].pending.schema() {
                    return Err(TablesError(format!(
                        "{}: its columns are not those of the {name} table this sparkdiag writes (written by another version?)",
                        path.display()
                    )));
                }
                // An empty read would loop forever on a file that reports more rows than it has.
                if frame.height() == 0 {
                    return Err(TablesError(format!(
                        "{}: says it holds {rows} rows but has none from row {offset}",
                        path.display()
                    )));
                }
                offset += frame.height();
                self.append(index, frame)?;
            }
        }
        Ok(())
    }

    /// Buffers `frame`'s rows for table `index`, writing a row group once enough are waiting.
    fn append(&mut self, index: usize, frame: DataFrame) -> Result<(), TablesError> {
        let name = TABLES[index];
        let table = &mut self.tables[index];
        table
            .pending
            .vstack_mut_owned(frame)
            .map_err(|e| TablesError(format!("cannot build the {name} table: {e}")))?;
        if table.pending.height() >= self.row_group_rows
            || table.pending.estimated_size() >= ROW_GROUP_BYTES
        {
            table.flush()?;
        } else if table.pending.first_col_n_chunks() >= MAX_CHUNKS {
            table.pending = compact(&table.pending)
                .map_err(|e| TablesError(format!("cannot build the {name} table: {e}")))?;
        }
        Ok(())
    }

    /// Writes the rows still buffered, closes the files and moves them into place; returns the
    /// files written.
    pub fn finish(mut self) -> Result<Vec<PathBuf>, TablesError> {
        let mut written = Vec::new();
        for table in &mut self.tables {
            table.flush()?;
            table
                .writer
                .finish()
                .map_err(|e| TablesError(format!("cannot write {}: {e}", table.tmp.display())))?;
        }
        for table in &self.tables {
            fs::rename(&table.tmp, &table.path).map_err(|e| {
                TablesError(format!(
                    "cannot rename {} into place: {e}",
                    table.tmp.display()
                ))
            })?;
            written.push(table.path.clone());
        }
        Ok(written)
    }
}

/// Where table `name`'s rows for `date` live under `outdir`.
pub fn partition_file(outdir: &Path, name: &str, date: &str) -> PathBuf {
    outdir
        .join("tables")
        .join(name)
        .join(format!("date={date}"))
        .join("part-0.parquet")
}

/// `frame` in one chunk whose text is copied into fresh buffers. Each application's rows arrive
/// as their own small chunk, and a text column's chunk keeps its whole data buffer alive even
/// after a plain rechunk (the merged strings still point into it): measured, ~37 KB per
/// application, so the buffer grew with the night (1,000 applications: 104 MB peak, against
/// 44 MB with no tables at all). Copying the text drops those buffers.
fn compact(frame: &DataFrame) -> PolarsResult<DataFrame> {
    let columns = frame
        .columns()
        .iter()
        .map(|c| {
            let series = c.as_materialized_series();
            Ok(if series.dtype() == &DataType::String {
                let values: Vec<Option<&str>> = series.str()?.iter().collect();
                Column::new(c.name().clone(), values)
            } else {
                series.rechunk().into_column()
            })
        })
        .collect::<PolarsResult<Vec<Column>>>()?;
    DataFrame::new_infer_height(columns)
}

/// The tables' rows for `reports`, in [`TABLES`] order.
fn frames(reports: &[&Report]) -> [PolarsResult<DataFrame>; 5] {
    [
        applications(reports),
        stages(reports),
        executors(reports),
        findings(reports),
        streaming_batches(reports),
    ]
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
            "user",
            reports
                .iter()
                .map(|r| r.application.user.clone().unwrap_or_default())
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
            "workload",
            reports
                .iter()
                .map(|r| enum_name(r.application.workload))
                .collect(),
        ),
        text(
            "cluster_manager",
            reports
                .iter()
                .map(|r| {
                    r.application
                        .cluster_manager
                        .unwrap_or_default()
                        .to_string()
                })
                .collect(),
        ),
        text(
            "platform",
            reports
                .iter()
                .map(|r| enum_name(r.application.platform))
                .collect(),
        ),
        text(
            "status",
            reports
                .iter()
                .map(|r| enum_name(r.application.status))
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
        // What the run held: its runtime on its peak executor cores, the what-if's "1x".
        Column::new(
            "core_hours".into(),
            reports
                .iter()
                .map(|r| {
                    let cores = r.what_if.as_ref().map(|w| w.cores_today)?;
                    Some(r.application.duration_ms? as f64 * cores as f64 / 3_600_000.0)
                })
                .collect::<Vec<Option<f64>>>(),
        ),
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

/// One row per Structured Streaming micro-batch, as the query's progress events gave it: what an
/// analyst charts to see a query fall behind (duration against the trigger, input against
/// processed rate) or its state grow. Empty on a night without streaming applications.
fn streaming_batches(reports: &[&Report]) -> PolarsResult<DataFrame> {
    use sparkdiag_contract::streaming::{BatchOut, QueryOut};
    let rows: Vec<(&Report, &QueryOut, &BatchOut)> = reports
        .iter()
        .flat_map(|r| {
            r.streaming
                .iter()
                .flat_map(|s| s.queries.iter())
                .flat_map(move |q| q.batches.iter().map(move |b| (*r, q, b)))
        })
        .collect();
    let float = |name: &str, f: &dyn Fn(&BatchOut) -> Option<f64>| {
        Column::new(
            name.into(),
            rows.iter()
                .map(|(_, _, b)| f(b))
                .collect::<Vec<Option<f64>>>(),
        )
    };
    DataFrame::new_infer_height(vec![
        text("app_id", rows.iter().map(|(r, _, _)| app_id(r)).collect()),
        text(
            "query_id",
            rows.iter().map(|(_, q, _)| q.id.clone()).collect(),
        ),
        text(
            "run_id",
            rows.iter().map(|(_, q, _)| q.run_id.clone()).collect(),
        ),
        text(
            "query_name",
            rows.iter()
                .map(|(_, q, _)| q.name.clone().unwrap_or_default())
                .collect(),
        ),
        int(
            "batch_id",
            rows.iter().map(|(_, _, b)| b.batch_id).collect(),
        ),
        opt(
            "timestamp_ms",
            rows.iter().map(|(_, _, b)| b.timestamp_ms).collect(),
        ),
        opt(
            "duration_ms",
            rows.iter().map(|(_, _, b)| b.duration_ms).collect(),
        ),
        opt(
            "trigger_interval_ms",
            rows.iter().map(|(_, q, _)| q.trigger_interval_ms).collect(),
        ),
        int(
            "input_rows",
            rows.iter().map(|(_, _, b)| b.input_rows).collect(),
        ),
        float("input_rows_per_second", &|b| b.input_rows_per_second),
        float("processed_rows_per_second", &|b| {
            b.processed_rows_per_second
        }),
        opt(
            "sink_output_rows",
            rows.iter().map(|(_, _, b)| b.sink_output_rows).collect(),
        ),
        opt(
            "watermark_ms",
            rows.iter().map(|(_, _, b)| b.watermark_ms).collect(),
        ),
        int(
            "state_rows",
            rows.iter()
                .map(|(_, _, b)| b.state_operators.iter().map(|s| s.rows_total).sum())
                .collect(),
        ),
        int(
            "state_memory_bytes",
            rows.iter()
                .map(|(_, _, b)| b.state_operators.iter().map(|s| s.memory_used_bytes).sum())
                .collect(),
        ),
        int(
            "jobs",
            rows.iter()
                .map(|(_, _, b)| b.job_ids.len() as i64)
                .collect(),
        ),
    ])
}

fn stages(reports: &[&Report]) -> PolarsResult<DataFrame> {
    let rows: Vec<(&Report, &sparkdiag_contract::StageOut)> = reports
        .iter()
        .flat_map(|r| r.stages.iter().map(move |s| (*r, s)))
        .collect();
    let col_i = |name: &str, f: &dyn Fn(&sparkdiag_contract::StageOut) -> i64| {
        int(name, rows.iter().map(|(_, s)| f(s)).collect())
    };
    DataFrame::new_infer_height(vec![
        text("app_id", rows.iter().map(|(r, _)| app_id(r)).collect()),
        col_i("stage_id", &|s| s.stage_id),
        col_i("attempt_id", &|s| s.attempt_id),
        text("name", rows.iter().map(|(_, s)| s.name.clone()).collect()),
        text(
            "status",
            rows.iter().map(|(_, s)| enum_name(s.status)).collect(),
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
    let rows: Vec<(&Report, &sparkdiag_contract::ExecutorOut)> = reports
        .iter()
        .flat_map(|r| r.executors.iter().map(move |e| (*r, e)))
        .collect();
    let col_i = |name: &str, f: &dyn Fn(&sparkdiag_contract::ExecutorOut) -> i64| {
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
    let rows: Vec<(&Report, &sparkdiag_contract::FindingOut)> = reports
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
                .map(|(_, f)| enum_name(f.finding.category))
                .collect(),
        ),
        text(
            "severity",
            rows.iter()
                .map(|(_, f)| enum_name(f.finding.severity))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Reports of every committed pattern log, and of the streaming logs (whose micro-batches
    /// fill the streaming_batches table).
    fn real_reports() -> Vec<Report> {
        reports_of(&["patterns", "streaming"])
    }

    /// Reports of every log folder under `testdata/logs/{group}` for each group.
    fn reports_of(groups: &[&str]) -> Vec<Report> {
        let logs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/logs");
        let config = sparkdiag_rules::Config::default();
        let mut dirs: Vec<PathBuf> = groups
            .iter()
            .flat_map(|group| fs::read_dir(logs.join(group)).unwrap())
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        let mut reports = Vec::new();
        for dir in &dirs {
            for input in sparkdiag_eventlog::discover(dir.to_str().unwrap()).unwrap() {
                let options = sparkdiag_analysis::Options {
                    config: &config,
                    prices: Default::default(),
                    inputs: vec![dir.display().to_string()],
                };
                reports.push(
                    sparkdiag_analysis::analyze(&input, &options)
                        .unwrap()
                        .report,
                );
            }
        }
        assert!(reports.len() >= 10, "{} pattern logs", reports.len());
        reports
    }

    fn read(path: &Path) -> DataFrame {
        ParquetReader::new(fs::File::open(path).unwrap())
            .finish()
            .unwrap()
    }

    /// What `write_night` did before it streamed: every report's rows built at once and written
    /// as one frame. The streaming writer must give the same tables, row for row.
    #[test]
    fn streamed_tables_equal_the_all_at_once_tables() {
        let reports = real_reports();
        let refs: Vec<&Report> = (0..40).flat_map(|_| &reports).collect();
        let out = tempfile::tempdir().unwrap();
        let mut writer = NightWriter::create(out.path(), "2026-11-29").unwrap();
        // Small row groups, so every table is written in several flushes and a row lost or
        // doubled at a boundary would show.
        writer.row_group_rows = 100;
        for report in &refs {
            writer.add(report).unwrap();
        }
        let writer_rows = writer.row_group_rows;
        let files = writer.finish().unwrap();
        let mut crossed = false;
        for ((name, file), expected) in TABLES.iter().zip(&files).zip(frames(&refs)) {
            let mut expected = expected.unwrap();
            let reference = out.path().join(format!("{name}-reference.parquet"));
            ParquetWriter::new(fs::File::create(&reference).unwrap())
                .finish(&mut expected)
                .unwrap();
            assert!(file.ends_with(format!("tables/{name}/date=2026-11-29/part-0.parquet")));
            let (streamed, all_at_once) = (read(file), read(&reference));
            assert!(streamed.height() > 0, "{name} is empty");
            assert_eq!(streamed.schema(), all_at_once.schema(), "{name}");
            assert!(
                streamed.equals_missing(&all_at_once),
                "{name}: streamed rows differ from the all-at-once rows"
            );
            crossed |= streamed.height() > 2 * writer_rows;
        }
        assert!(crossed, "no table was big enough to need three row groups");
        // Nothing but the finished files is left in the partitions.
        for file in &files {
            let names: Vec<String> = fs::read_dir(file.parent().unwrap())
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            assert_eq!(names, ["part-0.parquet"]);
        }
    }

    /// The buffers do not grow with the night: after every application no table holds its
    /// byte bound, however many came before, and the `stages` table, which reaches it first,
    /// was written in several row groups before reaching the row bound.
    #[test]
    fn a_table_never_buffers_more_than_its_byte_bound() {
        // The pattern logs alone: 60 nights of them stay under the row bound.
        let reports = reports_of(&["patterns"]);
        let out = tempfile::tempdir().unwrap();
        let mut writer = NightWriter::create(out.path(), "2026-11-29").unwrap();
        let mut largest = [0usize; TABLES.len()];
        for report in (0..60).flat_map(|_| &reports) {
            writer.add(report).unwrap();
            for (table, largest) in writer.tables.iter().zip(&mut largest) {
                let size = table.pending.estimated_size();
                assert!(size < ROW_GROUP_BYTES, "{size} bytes buffered");
                *largest = (*largest).max(size);
            }
        }
        let files = writer.finish().unwrap();
        let stages = TABLES.iter().position(|t| *t == "stages").unwrap();
        assert!(largest[stages] > ROW_GROUP_BYTES / 2, "{largest:?}");
        let mut reader = ParquetReader::new(fs::File::open(&files[stages]).unwrap());
        let groups = reader.get_metadata().unwrap().row_groups.len();
        let rows = read(&files[stages]).height();
        assert!(
            rows < ROW_GROUP_ROWS && groups >= 2,
            "{rows} rows in {groups} row groups"
        );
    }

    /// A night written in two slices and merged is the night written at once, row for row,
    /// with row groups crossed on both the reading and the writing side.
    #[test]
    fn merged_slices_equal_the_night_written_at_once() {
        let reports = real_reports();
        let refs: Vec<&Report> = (0..10).flat_map(|_| &reports).collect();
        let (first, second) = refs.split_at(refs.len() / 3);
        let out = tempfile::tempdir().unwrap();
        let (a, b, merged, whole) = (
            out.path().join("a"),
            out.path().join("b"),
            out.path().join("merged"),
            out.path().join("whole"),
        );
        for (dir, part) in [(&a, first), (&b, second)] {
            let mut writer = NightWriter::create(dir, "2026-11-29").unwrap();
            writer.row_group_rows = 70;
            for report in part {
                writer.add(report).unwrap();
            }
            writer.finish().unwrap();
        }
        let mut writer = NightWriter::create(&merged, "2026-11-29").unwrap();
        writer.row_group_rows = 100;
        writer.append_night(&a, "2026-11-29").unwrap();
        writer.append_night(&b, "2026-11-29").unwrap();
        let files = writer.finish().unwrap();
        let expected = write_night(&whole, "2026-11-29", &refs).unwrap();
        let mut crossed = false;
        for ((name, file), expected) in TABLES.iter().zip(&files).zip(&expected) {
            let (merged, whole) = (read(file), read(expected));
            assert!(whole.height() > 0, "{name} is empty");
            assert_eq!(merged.schema(), whole.schema(), "{name}");
            assert!(merged.equals_missing(&whole), "{name}: merged rows differ");
            crossed |= whole.height() > 200;
        }
        assert!(crossed, "no table was big enough to cross row groups");
    }

    #[test]
    fn a_slice_with_other_columns_is_refused_by_name() {
        let out = tempfile::tempdir().unwrap();
        let slice = out.path().join("slice");
        write_night(&slice, "2026-11-29", &[]).unwrap();
        let stages = partition_file(&slice, "stages", "2026-11-29");
        let mut other = DataFrame::new_infer_height(vec![int("stage_id", vec![1, 2])]).unwrap();
        ParquetWriter::new(fs::File::create(&stages).unwrap())
            .finish(&mut other)
            .unwrap();
        let mut writer = NightWriter::create(&out.path().join("merged"), "2026-11-29").unwrap();
        let error = writer.append_night(&slice, "2026-11-29").unwrap_err().0;
        assert!(
            error.starts_with(&stages.display().to_string())
                && error.contains("not those of the stages table"),
            "{error}"
        );
    }

    #[test]
    fn an_empty_night_still_has_every_column() {
        let out = tempfile::tempdir().unwrap();
        let files = write_night(out.path(), "2026-11-29", &[]).unwrap();
        let apps = read(&files[0]);
        assert_eq!(apps.height(), 0);
        assert!(apps.schema().contains("executor_run_time_ms"));
        assert_eq!(read(&files[3]).schema().len(), 10);
    }
}
