//! Writes the nightly fleet tables — `applications`, `stages`, `executors`, `findings`,
//! `streaming_batches`, `jobs`, `sql_executions` — as Parquet files that Spark, Databricks and
//! DuckDB read as they are: times as UTC timestamps, id lists as lists, and every table keyed
//! by `source` (the log) and `app_id`.
//!
//! # Brief overview
//! [`write_night`] turns one night's [`Report`]s into seven tables and writes each to
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
pub const TABLES: [&str; 7] = [
    "applications",
    "stages",
    "executors",
    "findings",
    "streaming_batches",
    "jobs",
    "sql_executions",
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
/// tables' buffers are what `batch` holds beyond the applications in flight, and they fill with the
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
            Ok(match series.dtype() {
                DataType::String => {
                    let values: Vec<Option<&str>> = series.str()?.iter().collect();
                    Column::new(c.name().clone(), values)
                }
                // A list of text (executor ids) keeps its strings' buffers the same way.
                DataType::List(inner) if **inner == DataType::String => {
                    let lists = series.list()?;
                    let mut copy = ListStringChunkedBuilder::new(c.name().clone(), lists.len(), 0);
                    for i in 0..lists.len() {
                        match lists.get_as_series(i) {
                            Some(list) => copy.append_values_iter(list.str()?.iter().flatten()),
                            None => copy.append_null(),
                        }
                    }
                    copy.finish().into_column()
                }
                _ => series.rechunk().into_column(),
            })
        })
        .collect::<PolarsResult<Vec<Column>>>()?;
    DataFrame::new_infer_height(columns)
}

/// The tables' rows for `reports`, in [`TABLES`] order.
fn frames(reports: &[&Report]) -> [PolarsResult<DataFrame>; 7] {
    [
        applications(reports),
        stages(reports),
        executors(reports),
        findings(reports),
        streaming_batches(reports),
        jobs(reports),
        sql_executions(reports),
    ]
}

// Column builders: each reads one value per row. Times are UTC timestamps and id lists are
// lists, so that Spark and DuckDB read them as such (not epoch numbers or comma-joined text).

fn text<R>(name: &str, rows: &[R], value: impl Fn(&R) -> String) -> Column {
    Column::new(name.into(), rows.iter().map(value).collect::<Vec<String>>())
}

fn int<R>(name: &str, rows: &[R], value: impl Fn(&R) -> i64) -> Column {
    Column::new(name.into(), rows.iter().map(value).collect::<Vec<i64>>())
}

fn opt<R>(name: &str, rows: &[R], value: impl Fn(&R) -> Option<i64>) -> Column {
    Column::new(
        name.into(),
        rows.iter().map(value).collect::<Vec<Option<i64>>>(),
    )
}

fn float<R>(name: &str, rows: &[R], value: impl Fn(&R) -> Option<f64>) -> Column {
    Column::new(
        name.into(),
        rows.iter().map(value).collect::<Vec<Option<f64>>>(),
    )
}

fn flag<R>(name: &str, rows: &[R], value: impl Fn(&R) -> bool) -> Column {
    Column::new(name.into(), rows.iter().map(value).collect::<Vec<bool>>())
}

/// Epoch milliseconds as a UTC timestamp (Parquet `TIMESTAMP(MILLIS, UTC)`).
fn time<R>(name: &str, rows: &[R], epoch_ms: impl Fn(&R) -> Option<i64>) -> Column {
    Int64Chunked::from_iter_options(name.into(), rows.iter().map(epoch_ms))
        .into_datetime(TimeUnit::Milliseconds, Some(TimeZone::UTC))
        .into_column()
}

/// A list of ids; an empty list where a row has none, never a null.
fn ids<R>(name: &str, rows: &[R], values: impl Fn(&R) -> Vec<i64>) -> Column {
    let mut list =
        ListPrimitiveChunkedBuilder::<Int64Type>::new(name.into(), rows.len(), 0, DataType::Int64);
    for row in rows {
        list.append_slice(&values(row));
    }
    list.finish().into_column()
}

fn names<R>(name: &str, rows: &[R], values: impl Fn(&R) -> Vec<String>) -> Column {
    let mut list = ListStringChunkedBuilder::new(name.into(), rows.len(), 0);
    for row in rows {
        list.append_values_iter(values(row).iter().map(String::as_str));
    }
    list.finish().into_column()
}

fn app_id(r: &Report) -> String {
    r.application.id.clone().unwrap_or_default()
}

/// The log a row comes from, as it was found: unique per log, so it joins the tables where an
/// application id can repeat (two attempts' logs, or a log copied under two folders).
fn source(r: &Report) -> String {
    r.source.inputs.join(" ")
}

/// Each item of each report, beside its report.
fn rows_of<'a, T>(
    reports: &[&'a Report],
    items: impl Fn(&'a Report) -> &'a [T],
) -> Vec<(&'a Report, &'a T)> {
    reports
        .iter()
        .flat_map(|r| items(r).iter().map(move |item| (*r, item)))
        .collect()
}

/// A row's item (its job, stage, finding...), without its report.
fn item<'a, T>(row: &(&Report, &'a T)) -> &'a T {
    row.1
}

/// The two key columns every table starts with.
fn keys<T>(rows: &[(&Report, T)]) -> [Column; 2] {
    [
        text("source", rows, |(r, _)| source(r)),
        text("app_id", rows, |(r, _)| app_id(r)),
    ]
}

fn with_keys<T>(rows: &[(&Report, T)], columns: Vec<Column>) -> PolarsResult<DataFrame> {
    DataFrame::new_infer_height(keys(rows).into_iter().chain(columns).collect())
}

fn applications(reports: &[&Report]) -> PolarsResult<DataFrame> {
    let rows: Vec<(&Report, ())> = reports.iter().map(|r| (*r, ())).collect();
    fn app<'a>(row: &(&'a Report, ())) -> &'a sparkdiag_contract::ApplicationOut {
        &row.0.application
    }
    fn summary<'a>(row: &(&'a Report, ())) -> &'a sparkdiag_contract::Summary {
        &row.0.summary
    }
    // What the run held: its runtime on its peak executor cores, the what-if's "1x".
    let core_hours = |(r, _): &(&Report, ())| {
        let cores = r.what_if.as_ref().map(|w| w.cores_today)?;
        Some(r.application.duration_ms? as f64 * cores as f64 / 3_600_000.0)
    };
    with_keys(
        &rows,
        vec![
            text("attempt_id", &rows, |r| {
                app(r).attempt_id.clone().unwrap_or_default()
            }),
            text("name", &rows, |r| app(r).name.clone().unwrap_or_default()),
            text("user", &rows, |r| app(r).user.clone().unwrap_or_default()),
            text("spark_version", &rows, |r| {
                app(r).spark_version.clone().unwrap_or_default()
            }),
            text("workload", &rows, |r| enum_name(app(r).workload)),
            text("cluster_manager", &rows, |r| {
                app(r).cluster_manager.unwrap_or_default().to_string()
            }),
            text("platform", &rows, |r| enum_name(app(r).platform)),
            text("status", &rows, |r| enum_name(app(r).status)),
            // What the fleet page counts by: the status with the jobs that failed.
            text("outcome", &rows, |r| app(r).outcome_kind.name().to_string()),
            time("start_time", &rows, |r| app(r).start_ms),
            time("end_time", &rows, |r| app(r).end_ms),
            opt("duration_ms", &rows, |r| app(r).duration_ms),
            int("jobs", &rows, |r| summary(r).jobs as i64),
            // The jobs the report calls failed: not those the program's own stop cancelled.
            int("failed_jobs", &rows, |r| {
                summary(r)
                    .failed_jobs
                    .saturating_sub(summary(r).stopped_jobs) as i64
            }),
            int("stopped_jobs", &rows, |r| summary(r).stopped_jobs as i64),
            int("stages", &rows, |r| summary(r).stages as i64),
            int("failed_stages", &rows, |r| summary(r).failed_stages as i64),
            int("tasks", &rows, |r| summary(r).tasks as i64),
            int("failed_tasks", &rows, |r| summary(r).failed_tasks as i64),
            int("executors", &rows, |r| summary(r).executors as i64),
            float("core_hours", &rows, core_hours),
            // The run's core-hours at `--price-per-core-hour`, when the night was priced.
            float("cost", &rows, |r| {
                Some(core_hours(r)? * r.0.prices.per_core_hour?)
            }),
            int("executor_run_time_ms", &rows, |r| {
                summary(r).executor_run_time_ms
            }),
            int("jvm_gc_time_ms", &rows, |r| summary(r).jvm_gc_time_ms),
            int("shuffle_read_bytes", &rows, |r| {
                summary(r).shuffle_read_bytes
            }),
            int("shuffle_write_bytes", &rows, |r| {
                summary(r).shuffle_write_bytes
            }),
            int("memory_spill_bytes", &rows, |r| {
                summary(r).memory_spill_bytes
            }),
            int("disk_spill_bytes", &rows, |r| summary(r).disk_spill_bytes),
            int("input_bytes", &rows, |r| summary(r).input_bytes),
            int("output_bytes", &rows, |r| summary(r).output_bytes),
            int("driver_time_ms", &rows, |r| summary(r).driver_time_ms),
            int("job_time_ms", &rows, |r| summary(r).job_time_ms),
            int("findings", &rows, |(r, _)| r.findings.len() as i64),
            int("impact_ms", &rows, |(r, _)| {
                r.findings.iter().map(|f| f.finding.impact_ms).sum()
            }),
            flag("complete", &rows, |(r, _)| r.source.complete),
        ],
    )
}

/// One row per job: what ran, for how long, and how it ended.
fn jobs(reports: &[&Report]) -> PolarsResult<DataFrame> {
    use sparkdiag_contract::JobOut;
    let rows = rows_of(reports, |r| &r.jobs);
    let job = item::<JobOut>;
    with_keys(
        &rows,
        vec![
            int("job_id", &rows, |r| job(r).job_id),
            text("name", &rows, |r| job(r).name.clone()),
            text("description", &rows, |r| {
                job(r).description.clone().unwrap_or_default()
            }),
            text("job_group", &rows, |r| {
                job(r).job_group.clone().unwrap_or_default()
            }),
            opt("sql_execution_id", &rows, |r| job(r).sql_execution_id),
            text("status", &rows, |r| enum_name(job(r).status)),
            time("submission_time", &rows, |r| job(r).submission_ms),
            time("completion_time", &rows, |r| job(r).completion_ms),
            opt("duration_ms", &rows, |r| job(r).duration_ms),
            ids("stage_ids", &rows, |r| job(r).stage_ids.clone()),
            int("num_tasks", &rows, |r| job(r).num_tasks),
            int("failed_tasks", &rows, |r| job(r).failed_tasks),
            int("killed_tasks", &rows, |r| job(r).killed_tasks),
            int("skipped_tasks", &rows, |r| job(r).skipped_tasks),
            int("failed_stages", &rows, |r| job(r).failed_stages),
            text("failure", &rows, |r| {
                job(r).failure.clone().unwrap_or_default()
            }),
        ],
    )
}

/// One row per SQL / DataFrame query execution.
fn sql_executions(reports: &[&Report]) -> PolarsResult<DataFrame> {
    use sparkdiag_contract::SqlOut;
    let rows = rows_of(reports, |r| &r.sql);
    let sql = item::<SqlOut>;
    with_keys(
        &rows,
        vec![
            int("execution_id", &rows, |r| sql(r).execution_id),
            text("description", &rows, |r| sql(r).description.clone()),
            time("start_time", &rows, |r| sql(r).start_ms),
            time("end_time", &rows, |r| sql(r).end_ms),
            opt("duration_ms", &rows, |r| {
                Some(sql(r).end_ms? - sql(r).start_ms?)
            }),
            text("error", &rows, |r| sql(r).error.clone().unwrap_or_default()),
            int("exchanges", &rows, |r| sql(r).exchanges as i64),
            int("operators", &rows, |r| sql(r).plan_nodes.len() as i64),
            ids("job_ids", &rows, |r| sql(r).job_ids.clone()),
        ],
    )
}

/// One row per Structured Streaming micro-batch, as the query's progress events gave it: what an
/// analyst charts to see a query fall behind (duration against the trigger, input against
/// processed rate) or its state grow. Empty on a night without streaming applications.
fn streaming_batches(reports: &[&Report]) -> PolarsResult<DataFrame> {
    use sparkdiag_contract::streaming::{BatchOut, QueryOut};
    let rows: Vec<(&Report, (&QueryOut, &BatchOut))> = reports
        .iter()
        .flat_map(|r| {
            r.streaming
                .iter()
                .flat_map(|s| s.queries.iter())
                .flat_map(move |q| q.batches.iter().map(move |b| (*r, (q, b))))
        })
        .collect();
    fn query<'a>(row: &(&Report, (&'a QueryOut, &BatchOut))) -> &'a QueryOut {
        row.1.0
    }
    fn batch<'a>(row: &(&Report, (&QueryOut, &'a BatchOut))) -> &'a BatchOut {
        row.1.1
    }
    with_keys(
        &rows,
        vec![
            text("query_id", &rows, |r| query(r).id.clone()),
            text("run_id", &rows, |r| query(r).run_id.clone()),
            text("query_name", &rows, |r| {
                query(r).name.clone().unwrap_or_default()
            }),
            int("batch_id", &rows, |r| batch(r).batch_id),
            time("timestamp", &rows, |r| batch(r).timestamp_ms),
            opt("duration_ms", &rows, |r| batch(r).duration_ms),
            opt("trigger_interval_ms", &rows, |r| {
                query(r).trigger_interval_ms
            }),
            int("input_rows", &rows, |r| batch(r).input_rows),
            float("input_rows_per_second", &rows, |r| {
                batch(r).input_rows_per_second
            }),
            float("processed_rows_per_second", &rows, |r| {
                batch(r).processed_rows_per_second
            }),
            opt("sink_output_rows", &rows, |r| batch(r).sink_output_rows),
            time("watermark", &rows, |r| batch(r).watermark_ms),
            int("state_rows", &rows, |r| {
                batch(r).state_operators.iter().map(|s| s.rows_total).sum()
            }),
            int("state_memory_bytes", &rows, |r| {
                batch(r)
                    .state_operators
                    .iter()
                    .map(|s| s.memory_used_bytes)
                    .sum()
            }),
            ids("job_ids", &rows, |r| batch(r).job_ids.clone()),
        ],
    )
}

fn stages(reports: &[&Report]) -> PolarsResult<DataFrame> {
    use sparkdiag_contract::StageOut;
    let rows = rows_of(reports, |r| &r.stages);
    let stage = item::<StageOut>;
    let quantile = |r: &(&Report, &StageOut), q: fn(&sparkdiag_contract::Quantiles) -> u32| {
        stage(r).task_duration_ms.as_ref().map(|t| i64::from(q(t)))
    };
    with_keys(
        &rows,
        vec![
            int("stage_id", &rows, |r| stage(r).stage_id),
            int("attempt_id", &rows, |r| stage(r).attempt_id),
            text("name", &rows, |r| stage(r).name.clone()),
            text("status", &rows, |r| enum_name(stage(r).status)),
            int("num_tasks", &rows, |r| stage(r).num_tasks),
            int("failed_tasks", &rows, |r| stage(r).failed_tasks),
            time("submission_time", &rows, |r| stage(r).submission_ms),
            time("completion_time", &rows, |r| stage(r).completion_ms),
            opt("duration_ms", &rows, |r| stage(r).duration_ms),
            opt("task_p50_ms", &rows, |r| quantile(r, |q| q.p50)),
            opt("task_max_ms", &rows, |r| quantile(r, |q| q.max)),
            int("executor_run_time_ms", &rows, |r| {
                stage(r).executor_run_time_ms
            }),
            int("jvm_gc_time_ms", &rows, |r| stage(r).jvm_gc_time_ms),
            int("shuffle_read_bytes", &rows, |r| stage(r).shuffle_read_bytes),
            int("shuffle_write_bytes", &rows, |r| {
                stage(r).shuffle_write_bytes
            }),
            int("input_bytes", &rows, |r| stage(r).input_bytes),
            int("output_bytes", &rows, |r| stage(r).output_bytes),
            int("memory_spill_bytes", &rows, |r| stage(r).memory_spill_bytes),
            int("disk_spill_bytes", &rows, |r| stage(r).disk_spill_bytes),
            ids("job_ids", &rows, |r| stage(r).job_ids.clone()),
        ],
    )
}

fn executors(reports: &[&Report]) -> PolarsResult<DataFrame> {
    use sparkdiag_contract::ExecutorOut;
    let rows = rows_of(reports, |r| &r.executors);
    let executor = item::<ExecutorOut>;
    with_keys(
        &rows,
        vec![
            text("executor_id", &rows, |r| executor(r).executor_id.clone()),
            text("host", &rows, |r| executor(r).host.clone()),
            opt("cores", &rows, |r| executor(r).cores),
            time("added_time", &rows, |r| executor(r).added_ms),
            time("removed_time", &rows, |r| executor(r).removed_ms),
            text("removed_reason", &rows, |r| {
                executor(r).removed_reason.clone().unwrap_or_default()
            }),
            int("total_tasks", &rows, |r| executor(r).total_tasks),
            int("failed_tasks", &rows, |r| executor(r).failed_tasks),
            int("task_time_ms", &rows, |r| executor(r).task_time_ms),
            int("jvm_gc_time_ms", &rows, |r| executor(r).jvm_gc_time_ms),
            int("shuffle_read_bytes", &rows, |r| {
                executor(r).shuffle_read_bytes
            }),
            int("shuffle_write_bytes", &rows, |r| {
                executor(r).shuffle_write_bytes
            }),
        ],
    )
}

fn findings(reports: &[&Report]) -> PolarsResult<DataFrame> {
    use sparkdiag_contract::FindingOut;
    let rows = rows_of(reports, |r| &r.findings);
    let finding = item::<FindingOut>;
    with_keys(
        &rows,
        vec![
            text("app_name", &rows, |(r, _)| {
                r.application.name.clone().unwrap_or_default()
            }),
            text("rule", &rows, |r| finding(r).finding.rule.to_string()),
            text("category", &rows, |r| {
                enum_name(finding(r).finding.category)
            }),
            text("severity", &rows, |r| {
                enum_name(finding(r).finding.severity)
            }),
            text("title", &rows, |r| finding(r).finding.title.clone()),
            text("impact_kind", &rows, |r| finding(r).impact_kind.to_string()),
            int("impact_ms", &rows, |r| finding(r).finding.impact_ms),
            float("impact_core_hours", &rows, |r| {
                Some(finding(r).impact_core_hours)
            }),
            float("impact_cost", &rows, |r| finding(r).impact_cost),
            float("impact_memory_cost", &rows, |r| {
                finding(r).impact_memory_cost
            }),
            ids("stage_ids", &rows, |r| {
                finding(r).finding.scope.stage_ids.clone()
            }),
            names("executor_ids", &rows, |r| {
                finding(r).finding.scope.executor_ids.clone()
            }),
            text("recommendation", &rows, |r| {
                finding(r).finding.recommendation.clone()
            }),
        ],
    )
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
                // As `batch` does: the log itself is the report's input, its `source`.
                let options = sparkdiag_analysis::Options {
                    config: &config,
                    prices: sparkdiag_contract::Prices {
                        per_core_hour: Some(0.5),
                        per_gb_hour: None,
                    },
                    inputs: vec![input.display.clone()],
                    redact: None,
                    report_only: false,
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
        let mut other =
            DataFrame::new_infer_height(vec![int("stage_id", &[1, 2], |id| *id)]).unwrap();
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

    fn strings(frame: &DataFrame, name: &str) -> Vec<String> {
        let column = frame.column(name).unwrap().str().unwrap().clone();
        column
            .iter()
            .map(|v| v.unwrap_or_default().to_string())
            .collect()
    }

    /// Every table starts with the log and the application; `source` is one value per log, so
    /// the tables join on it; times are UTC timestamps and id lists are lists, with the
    /// reports' own values; the jobs and SQL tables hold every job and query of every report.
    #[test]
    fn every_table_is_keyed_by_its_log_and_typed() {
        let reports = reports_of(&["patterns", "streaming", "causes"]);
        let refs: Vec<&Report> = reports.iter().collect();
        let out = tempfile::tempdir().unwrap();
        let files = write_night(out.path(), "2026-11-29", &refs).unwrap();
        let tables: Vec<DataFrame> = files.iter().map(|f| read(f)).collect();
        let table = |name: &str| &tables[TABLES.iter().position(|t| *t == name).unwrap()];

        let apps = table("applications");
        let sources = strings(apps, "source");
        let unique: std::collections::BTreeSet<&String> = sources.iter().collect();
        assert_eq!(unique.len(), reports.len(), "{sources:?}");
        // The causes runs share one application name; their logs keep them apart.
        assert!(
            sources.iter().all(|s| s.contains("testdata/logs/")),
            "{sources:?}"
        );
        for (name, frame) in TABLES.iter().zip(&tables) {
            let columns: Vec<&str> = frame
                .get_column_names()
                .into_iter()
                .map(|n| n.as_str())
                .collect();
            assert_eq!(columns[..2], ["source", "app_id"], "{name}");
            for source in strings(frame, "source") {
                assert!(unique.contains(&source), "{name}: {source} is no log's");
            }
        }

        let utc = DataType::Datetime(TimeUnit::Milliseconds, Some(TimeZone::UTC));
        let start = apps.column("start_time").unwrap();
        assert_eq!(start.dtype(), &utc);
        let starts = start.datetime().unwrap().physical().clone();
        for (i, r) in reports.iter().enumerate() {
            assert_eq!(starts.get(i), r.application.start_ms, "{}", sources[i]);
        }
        let costs = apps.column("cost").unwrap().f64().unwrap().clone();
        let hours = apps.column("core_hours").unwrap().f64().unwrap().clone();
        assert!(
            (0..apps.height()).all(|i| match (costs.get(i), hours.get(i)) {
                (Some(cost), Some(hours)) => (cost - 0.5 * hours).abs() < 1e-9,
                (cost, hours) => cost.is_none() && hours.is_none(),
            })
        );

        let jobs = table("jobs");
        let job_count: usize = reports.iter().map(|r| r.jobs.len()).sum();
        assert_eq!(jobs.height(), job_count);
        assert!(job_count > 50, "{job_count} jobs");
        assert_eq!(jobs.column("submission_time").unwrap().dtype(), &utc);
        let stage_ids = jobs.column("stage_ids").unwrap();
        assert_eq!(
            stage_ids.dtype(),
            &DataType::List(Box::new(DataType::Int64))
        );
        let all_jobs: Vec<&sparkdiag_contract::JobOut> =
            reports.iter().flat_map(|r| &r.jobs).collect();
        let lists = stage_ids.list().unwrap();
        for (i, job) in all_jobs.iter().enumerate() {
            let list = lists.get_as_series(i).unwrap();
            let ids: Vec<i64> = list.i64().unwrap().iter().flatten().collect();
            assert_eq!(ids, job.stage_ids, "job row {i}");
        }

        let sql = table("sql_executions");
        let sql_count: usize = reports.iter().map(|r| r.sql.len()).sum();
        assert_eq!(sql.height(), sql_count);
        assert!(sql_count > 10, "{sql_count} queries");
        let durations = sql.column("duration_ms").unwrap().i64().unwrap().clone();
        let all_sql: Vec<&sparkdiag_contract::SqlOut> =
            reports.iter().flat_map(|r| &r.sql).collect();
        for (i, q) in all_sql.iter().enumerate() {
            let expected = q.end_ms.zip(q.start_ms).map(|(e, s)| e - s);
            assert_eq!(durations.get(i), expected, "query row {i}");
        }

        let findings = table("findings");
        assert_eq!(
            findings.column("executor_ids").unwrap().dtype(),
            &DataType::List(Box::new(DataType::String))
        );
        let kinds = strings(findings, "impact_kind");
        assert!(kinds.iter().any(|k| k == "saving"), "{kinds:?}");
    }

    #[test]
    fn an_empty_night_still_has_every_column() {
        let out = tempfile::tempdir().unwrap();
        let files = write_night(out.path(), "2026-11-29", &[]).unwrap();
        let apps = read(&files[0]);
        assert_eq!(apps.height(), 0);
        assert!(apps.schema().contains("executor_run_time_ms"));
        assert_eq!(read(&files[3]).schema().len(), 15);
    }
}
