//! PL008 input-read-again: the same input files read by several jobs, parsed again each time.

use super::common::{bytes, duration};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};
use sparkdiag_model::StageAttempt;

pub const MIN_READS: Threshold = threshold(
    "min_reads",
    3.0,
    "reads",
    "times the same input is read before it is a finding",
    "sparkdiag's own guard: two reads (a count, then the work) are common and cheap to leave",
);

pub const MIN_READ_MB: Threshold = threshold(
    "min_read_mb",
    128.0,
    "MB",
    "an input smaller than this is not worth caching for",
    "one default file split (spark.sql.files.maxPartitionBytes)",
);

pub const MIN_AGAIN_GB: Threshold = threshold(
    "min_again_gb",
    1.0,
    "GiB",
    "bytes read again, over all the repeated reads, worth a finding",
    "sparkdiag's own guard",
);

declare_rule! {
    /// ## What it does
    /// Finds input read again and again: stages of different jobs that read the same bytes from
    /// the same number of splits (a DataFrame over files, used by several actions without being
    /// cached). It counts the reads, the bytes read again and the stage time they took, and
    /// says whether the files can be split.
    ///
    /// ## Why is this bad?
    /// Every action on an uncached DataFrame starts from the files: it lists them, reads them,
    /// decompresses and parses them again. Machine-learning fits are iterative (`fit` runs many
    /// jobs), and `inferSchema=true` reads all the data once more just to guess the types. On
    /// gzip files it is worse: a gzip file cannot be split, so each is read by one task from
    /// its first byte, however many partitions are asked for, and `textFile(path, n)` or more
    /// shuffle partitions change nothing.
    ///
    /// ## How to fix it
    /// - Cache the parsed DataFrame once and use it for every action: `df.cache()` (or
    ///   `persist(StorageLevel.MEMORY_AND_DISK)`) right after reading, before the fit or the
    ///   loop, and `unpersist()` when done.
    /// - Give the schema instead of `inferSchema=true`, which reads the data once more.
    /// - Unsplittable files (gzip): convert them once to Parquet or Delta (columnar, splittable,
    ///   compressed) and read that; or at least repartition the cached DataFrame so every core
    ///   has a share.
    ///
    /// ## Threshold and its source
    /// The same input (the same bytes, within 1 %, in the same number of splits, or a multiple of
    /// both where one stage read it twice) read at least `min_reads` = 3 times, each read at
    /// least `min_read_mb` = 128 MB (one default split: smaller inputs are cheap to read), and at
    /// least `min_again_gb` = 1 GiB read again in all. The saving claimed is the reading share of
    /// every read after the first: its task time per byte taken from the group's cheapest read
    /// (the stage that did least besides reading), so a stage that reads and then computes much
    /// keeps its computing; reading a cache is not free, so it is the most caching saves.
    pub static INPUT_READ_AGAIN = {
        code: "PL008",
        name: "input-read-again",
        category: Plan,
        claims: Saving,
        needs: [TaskMetrics, Jobs],
        summary: "The same input files were read by several jobs: cache the parsed data or convert it once",
        thresholds: &[
            MIN_READS,
            MIN_READ_MB,
            MIN_AGAIN_GB,
        ] as &[Threshold],
        check: check,
    };
}

/// Stages reading one input: the bytes and splits of one read, and each stage with how many
/// reads it made.
struct Input<'a> {
    read_bytes: i64,
    read_splits: i64,
    stages: Vec<(&'a StageAttempt, i64, i64)>,
}

impl Input<'_> {
    fn reads(&self) -> i64 {
        self.stages.iter().map(|(_, reads, _)| reads).sum()
    }
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut reading: Vec<(&StageAttempt, i64)> = ctx
        .stage_stats()
        .filter(|(s, _)| s.attempt_id == 0 && s.totals.input_bytes > 0 && s.num_tasks > 0)
        .filter(|(s, _)| s.totals.input_bytes as f64 >= t.get(&MIN_READ_MB) * 1e6)
        // Spark counts a read of cached blocks as input too: that is the fix, not the problem.
        .filter(|(s, _)| !reads_only_cache(ctx, s))
        .map(|(s, stats)| (s, stats.duration_ms))
        .collect();
    // The smallest reads first: a stage that read the input twice joins the group of one read.
    reading.sort_by_key(|(s, _)| (s.totals.input_bytes, s.num_tasks));
    let mut inputs: Vec<Input> = Vec::new();
    for (stage, ms) in reading {
        let (bytes_read, splits) = (stage.totals.input_bytes, stage.num_tasks);
        let same = inputs.iter_mut().find_map(|input| {
            let reads = splits / input.read_splits;
            (reads >= 1
                && splits == reads * input.read_splits
                && within_a_percent(bytes_read, reads * input.read_bytes))
            .then_some((input, reads))
        });
        match same {
            Some((input, reads)) => input.stages.push((stage, reads, ms)),
            None => inputs.push(Input {
                read_bytes: bytes_read,
                read_splits: splits,
                stages: vec![(stage, 1, ms)],
            }),
        }
    }
    inputs
        .iter()
        .filter(|input| input.reads() as f64 >= t.get(&MIN_READS))
        .filter(|input| {
            ((input.reads() - 1) * input.read_bytes) as f64 >= t.get(&MIN_AGAIN_GB) * GIB
        })
        .map(|input| finding(ctx, input))
        .collect()
}

const GIB: f64 = (1u64 << 30) as f64;

fn within_a_percent(a: i64, b: i64) -> bool {
    (a - b).abs() as f64 <= 0.01 * b.max(1) as f64
}

fn finding(ctx: &Context, input: &Input) -> Finding {
    let reads = input.reads();
    let again_bytes = (reads - 1) * input.read_bytes;
    // Every stage after the first read the input again; only its reading is what a cache saves.
    let mut stages = input.stages.clone();
    stages.sort_by_key(|(s, _, _)| s.submission_ms);
    let first = stages.first().map(|(s, _, _)| s.stage_id);
    let again: Vec<&(&StageAttempt, i64, i64)> = stages.iter().skip(1).collect();
    let stage_ms_again: i64 = again.iter().map(|(_, _, ms)| ms).sum();
    let read_ms_per_byte = reading_pace(&stages);
    let again_ms: i64 = again
        .iter()
        .map(|(s, _, ms)| (*ms as f64 * read_share(s, read_ms_per_byte)).round() as i64)
        .sum();
    let jobs: std::collections::BTreeSet<i64> = stages
        .iter()
        .flat_map(|(s, _, _)| s.job_ids.iter().copied())
        .collect();
    let source = source_of(ctx, &stages);
    let unsplittable = source.as_ref().is_some_and(|s| s.unsplittable);
    let named = match &source {
        Some(s) => format!(
            " (`{}`{})",
            s.location,
            if s.unsplittable { ", gzip" } else { "" }
        ),
        None => String::new(),
    };
    let reading = if again_ms < stage_ms_again {
        format!(
            "reading it took about {} of those stages' {}",
            duration(again_ms),
            duration(stage_ms_again)
        )
    } else {
        format!("{} of stage time", duration(again_ms))
    };
    let title = format!(
        "The same input{named} of {} in {} split(s) was read {reads} times by {} jobs: {} read again, {reading}",
        bytes(input.read_bytes),
        input.read_splits,
        jobs.len(),
        bytes(again_bytes),
    );
    let mut advice = "Cache the parsed DataFrame once and use it for every action: df.cache() (or persist(StorageLevel.MEMORY_AND_DISK)) right after reading, before the fit or the loop, and unpersist() when done; give the schema instead of inferSchema=true, which reads all the data once more just to guess the types.".to_string();
    let storage: i64 = ctx
        .app
        .executors
        .iter()
        .filter(|e| e.id != "driver")
        .filter_map(|e| e.max_memory)
        .sum();
    if storage > 0 && input.read_bytes > storage {
        advice.push_str(&format!(
            " The input ({}) is more than the executors' storage memory ({}): persist it with MEMORY_AND_DISK (serialized, so it is smaller) and most of it is read back from local disk, still cheaper than reading and parsing the files again; or write it once as Parquet.",
            bytes(input.read_bytes),
            bytes(storage)
        ));
    }
    if unsplittable {
        advice.push_str(&format!(
            " The files are gzip: each is read by one task from its first byte ({} splits for {}), and no partition count (textFile(path, n), spark.sql.files.maxPartitionBytes, shuffle partitions) splits them. Convert them once to Parquet or Delta and read that, and repartition the cached DataFrame so every core has a share.",
            input.read_splits,
            bytes(input.read_bytes)
        ));
    } else {
        advice.push_str(" Where other applications read the same files too, write them once as Parquet or Delta.");
    }
    let severity = Severity::from_saving(again_ms, ctx.app_ms);
    let mut finding = Finding::new(&INPUT_READ_AGAIN, severity, title, again_ms)
        .stages(stages.iter().map(|(s, _, _)| s.stage_id))
        .jobs(jobs.iter().copied())
        .proposes(
            crate::Change::ScanOnce {
                stages: again.iter().map(|(s, _, _)| s.stage_id).collect(),
            },
            "every read after the first taken from a cache instead of the files: each of those stages saves the share of its task time that reading and parsing the input takes, at the pace of the group's cheapest read per byte (the stage that did least besides reading), the rest of its work stays; reading a cache is not free, so this is the most caching saves",
        )
        .evidence("reads", reads)
        .evidence("read_bytes", input.read_bytes)
        .evidence("read_splits", input.read_splits)
        .evidence("bytes_read_again", again_bytes)
        .evidence("stage_ms_reading_again", stage_ms_again)
        .evidence("read_ms_estimate", again_ms)
        .evidence("unsplittable", unsplittable)
        .recommend(advice);
    if let Some(first) = first {
        finding = finding.evidence("first_read_stage", first);
    }
    if let Some(s) = &source {
        finding = finding.evidence("source", s.location.clone());
    }
    for (s, _, _) in &again {
        if let (Some(start), Some(end)) = (s.submission_ms, s.completion_ms) {
            finding = finding.during(start, end);
        }
    }
    finding
}

/// Task time per input byte of the group's cheapest read: the stage that did least besides
/// reading (often a `count` or a schema inference, which only read and parse). The log has no
/// read time of its own, so this bounds what reading costs in the stages that also compute.
fn reading_pace(stages: &[(&StageAttempt, i64, i64)]) -> f64 {
    stages
        .iter()
        .filter(|(s, _, _)| s.totals.input_bytes > 0 && s.totals.executor_run_time > 0)
        .map(|(s, _, _)| s.totals.executor_run_time as f64 / s.totals.input_bytes as f64)
        .fold(f64::INFINITY, f64::min)
}

/// The share of a stage's task time spent reading its input, at `ms_per_byte`: at most all of
/// it (a stage with no measured task time is taken as all reading).
fn read_share(stage: &StageAttempt, ms_per_byte: f64) -> f64 {
    if stage.totals.executor_run_time <= 0 || !ms_per_byte.is_finite() {
        return 1.0;
    }
    (ms_per_byte * stage.totals.input_bytes as f64 / stage.totals.executor_run_time as f64).min(1.0)
}

/// Every scan of the stage's queries reads cached data (`InMemoryTableScan`).
fn reads_only_cache(ctx: &Context, stage: &StageAttempt) -> bool {
    let executions: std::collections::BTreeSet<i64> = stage
        .job_ids
        .iter()
        .filter_map(|j| ctx.app.jobs.iter().find(|job| job.job_id == *j))
        .filter_map(|job| job.sql_execution_id)
        .collect();
    let mut scans = ctx
        .facts
        .reads
        .iter()
        .filter(|r| executions.contains(&r.sql_execution_id))
        .peekable();
    scans.peek().is_some() && scans.all(|r| r.cached)
}

/// Where the input is, as the queries' scans name it.
struct Source {
    location: String,
    /// Its files are gzip: a scan of it, or of a folder inside it, names `.gz` files.
    unsplittable: bool,
}

/// The scan location the stages' queries read (a DataFrame's stages carry their query; the
/// stages an RDD conversion of it ran carry none, so any of the stages' queries names it).
fn source_of(ctx: &Context, stages: &[(&StageAttempt, i64, i64)]) -> Option<Source> {
    let executions: std::collections::BTreeSet<i64> = stages
        .iter()
        .flat_map(|(s, _, _)| s.job_ids.iter())
        .filter_map(|j| ctx.app.jobs.iter().find(|job| job.job_id == *j))
        .filter_map(|job| job.sql_execution_id)
        .collect();
    let location = ctx
        .facts
        .reads
        .iter()
        .filter(|r| executions.contains(&r.sql_execution_id) && !r.cached)
        .map(|r| r.source.clone())
        .find(|s| !s.is_empty())?;
    let gzip_file = |path: &str| {
        let lower = path.to_ascii_lowercase();
        lower.ends_with(".gz") || lower.ends_with(".gzip")
    };
    let unsplittable = location.split([',', ' ', '[', ']']).any(gzip_file)
        || ctx.facts.reads.iter().any(|r| {
            r.source
                .split([',', ' ', '[', ']'])
                .any(|p| gzip_file(p) && p.starts_with(location.as_str()))
        });
    Some(Source {
        location,
        unsplittable,
    })
}

#[cfg(test)]
mod real_logs {
    use super::*;
    use crate::rules::testing::{assert_fires, on_log, run, shared_apps};

    /// Ten gzip CSV files read by six steps, each with inferSchema; and four CSV files read by
    /// four jobs without a cache.
    #[test]
    fn fires_on_inputs_read_by_several_jobs() {
        // Test-sized inputs (47 MB of gzip, 130 MB of CSV): the floors lowered to fit them.
        let small = ["PL008.min_read_mb=16", "PL008.min_again_gb=0.1"];
        let found = on_log(&INPUT_READ_AGAIN, "operations/gzip-reread", &small);
        assert_fires(&found, "PL008");
        assert_eq!(found[0].evidence["unsplittable"], true, "{:?}", found[0]);
        let found = on_log(&INPUT_READ_AGAIN, "operations/same-input-many-jobs", &small);
        assert_fires(&found, "PL008");
        assert_eq!(found[0].evidence["unsplittable"], false);
        assert!(
            found[0].evidence["reads"].as_i64().unwrap() >= 4,
            "{:?}",
            found[0]
        );
    }

    #[test]
    fn is_quiet_where_each_input_is_read_once() {
        for log in [
            "patterns/healthy",
            "single/zstd",
            "shapes/small-files-read",
            "operations/gzip-reread-fixed",
            "operations/same-input-cached",
        ] {
            let small = ["PL008.min_read_mb=16", "PL008.min_again_gb=0.1"];
            assert!(on_log(&INPUT_READ_AGAIN, log, &small).is_empty(), "{log}");
        }
    }

    /// The Databricks 9.1 job run fits a LinearRegression over ten gzip CSV files (1.9 GB):
    /// the files are read again by every job of the fit.
    #[test]
    fn names_the_gzip_csv_that_a_fit_read_again_and_again() {
        let Some(apps) = shared_apps("real-world/spark_log_parser/tests/logs/databricks.zip")
        else {
            return;
        };
        let found: Vec<Finding> = apps
            .iter()
            .flat_map(|app| run(&INPUT_READ_AGAIN, app, &[]))
            .collect();
        assert_fires(&found, "PL008");
        let f = &found[0];
        assert!(f.evidence["reads"].as_i64().unwrap() >= 15, "{f:?}");
        assert_eq!(f.evidence["read_splits"], 10);
        assert_eq!(f.evidence["unsplittable"], true, "{f:?}");
        assert!(f.recommendation.contains("gzip") && f.recommendation.contains("cache"));
        assert!(!f.recommendation.contains("textFile(path, 64)"));
    }

    /// The EMR run's TF-IDF reads about 80 GB of CSV again for IDF's fit.
    #[test]
    fn names_the_csv_that_idf_read_again() {
        let Some(apps) = shared_apps("real-world/spark_log_parser/tests/logs/emr.zip") else {
            return;
        };
        let found: Vec<Finding> = apps
            .iter()
            .flat_map(|app| run(&INPUT_READ_AGAIN, app, &[]))
            .collect();
        assert_fires(&found, "PL008");
        let f = &found[0];
        assert!(f.evidence["reads"].as_i64().unwrap() >= 3, "{f:?}");
        assert!(
            f.evidence["read_bytes"].as_i64().unwrap() > 50_000_000_000,
            "{f:?}"
        );
        assert_eq!(f.evidence["unsplittable"], false);
        // IDF's stages read the CSV and compute TF-IDF over it: the first read (a `csv` stage
        // that only parses) took 6,590 s of task time for the bytes IDF's stages take 43,514 s
        // over, so caching saves about 15 % of their 45 minutes, not all of it.
        let stage_ms = f.evidence["stage_ms_reading_again"].as_i64().unwrap();
        let read_ms = f.evidence["read_ms_estimate"].as_i64().unwrap();
        assert_eq!(f.impact_ms, read_ms, "{f:?}");
        assert!(stage_ms > 40 * 60_000, "{f:?}");
        assert!(
            read_ms > 5 * 60_000 && read_ms < 9 * 60_000,
            "reading share {read_ms} ms of {stage_ms} ms"
        );
        assert!(f.title.contains("reading it took about"), "{}", f.title);
    }
}
