//! `sparkdiag batch` over two "nights" of real logs: reports, Parquet tables, the index page,
//! regressions against the earlier night, unreadable logs listed, re-runs idempotent.

use std::io::{Read, Write};
use std::path::Path;

use crate::util::{pattern_log, sparkdiag, testdata};

/// Copies a real zstd log into `dir` under the application name `app_name`, so two nights'
/// runs of "the same job" match by name as nightly runs of one job do.
fn copy_as(log: &Path, dir: &Path, app_name: &str) {
    let mut text = String::new();
    zstd::Decoder::new(std::fs::File::open(log).unwrap())
        .unwrap()
        .read_to_string(&mut text)
        .unwrap();
    let renamed: Vec<String> = text
        .lines()
        .map(|line| {
            if line.starts_with(r#"{"Event":"SparkListenerApplicationStart""#) {
                let mut v: serde_json::Value = serde_json::from_str(line).unwrap();
                v["App Name"] = serde_json::Value::String(app_name.to_string());
                serde_json::to_string(&v).unwrap()
            } else {
                line.to_string()
            }
        })
        .collect();
    let out = dir.join(format!(
        "{}.zstd",
        log.file_stem().unwrap().to_string_lossy()
    ));
    let mut enc = zstd::Encoder::new(std::fs::File::create(out).unwrap(), 1).unwrap();
    enc.write_all((renamed.join("\n") + "\n").as_bytes())
        .unwrap();
    enc.finish().unwrap();
}

fn parquet_files(out: &Path, date: &str) -> Vec<std::path::PathBuf> {
    [
        "applications",
        "stages",
        "executors",
        "findings",
        "streaming_batches",
        "jobs",
        "sql_executions",
    ]
    .iter()
    .map(|t| out.join(format!("tables/{t}/date={date}/part-0.parquet")))
    .collect()
}

#[test]
fn two_nights_of_real_logs_give_reports_tables_and_the_regressions() {
    let tmp = tempfile::tempdir().unwrap();
    let (night1, night2, out) = (
        tmp.path().join("n1"),
        tmp.path().join("n2"),
        tmp.path().join("fleet"),
    );
    std::fs::create_dir_all(&night1).unwrap();
    std::fs::create_dir_all(&night2).unwrap();
    copy_as(&pattern_log("driver-loop-fixed"), &night1, "monthly-etl");
    copy_as(&pattern_log("skew-join-aqe"), &night1, "orders-join");
    std::fs::write(
        night1.join("broken.zstd"),
        b"\x28\xB5\x2F\xFD\xFF\xFF garbage",
    )
    .unwrap();
    let killed = std::fs::read_dir(testdata("logs/killed/single"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::copy(&killed, night1.join(killed.file_name().unwrap())).unwrap();
    copy_as(&pattern_log("driver-loop-serial"), &night2, "monthly-etl");
    copy_as(&pattern_log("skew-join"), &night2, "orders-join");
    // Night 2 also holds other layouts: a Databricks delivery folder and a tar.gz of a rolling log.
    copy_dir(&testdata("logs/databricks"), &night2.join("databricks"));
    for archive in std::fs::read_dir(testdata("logs/archives"))
        .unwrap()
        .map(|e| e.unwrap().path())
    {
        if archive.to_string_lossy().ends_with(".tar.gz") {
            std::fs::copy(&archive, night2.join(archive.file_name().unwrap())).unwrap();
        }
    }

    let run = |dir: &Path, date: &str, extra: &[&str]| {
        // These test jobs run for seconds, not hours: count a 5 s slowdown.
        let mut args = vec![
            "batch",
            dir.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--date",
            date,
            "--jobs",
            "2",
            "--min-regression-s",
            "5",
        ];
        args.extend_from_slice(extra);
        sparkdiag(&args)
    };
    // A path that is not a log at all, named on the command line, is listed and skipped.
    let notes = tmp.path().join("notes.txt");
    std::fs::write(&notes, "not a log").unwrap();
    let first = run(&night1, "2026-11-28", &[notes.to_str().unwrap()]);
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    let said = String::from_utf8_lossy(&first.stdout).to_string();
    assert!(
        said.contains("2 application(s) analysed")
            && said.contains("2 unreadable")
            && said.contains("1 in progress skipped"),
        "{said}"
    );
    assert!(
        said.contains("broken.zstd") && said.contains("notes.txt"),
        "unreadable inputs are named: {said}"
    );

    let second = run(&night2, "2026-11-29", &["--fail-on-regression"]);
    assert_eq!(
        second.status.code(),
        Some(1),
        "a regression fails the run: {}",
        String::from_utf8_lossy(&second.stdout)
    );
    let said = String::from_utf8_lossy(&second.stdout).to_string();
    assert!(said.contains("regressed: monthly-etl — runtime"), "{said}");
    assert!(
        said.contains("regressed: orders-join — new finding SK001"),
        "{said}"
    );

    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        index.contains("What got worse since the previous run") && index.contains("monthly-etl")
    );
    assert!(index.contains("<svg") && !index.contains("src=\"http"));
    for date in ["2026-11-28", "2026-11-29"] {
        for file in parquet_files(&out, date) {
            let bytes =
                std::fs::read(&file).unwrap_or_else(|_| panic!("{} missing", file.display()));
            assert!(
                bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
                "{} is not Parquet",
                file.display()
            );
        }
    }
    let apps: Vec<_> = std::fs::read_dir(out.join("apps/2026-11-29"))
        .unwrap()
        .collect();
    assert_eq!(
        apps.len(),
        8,
        "an HTML and a JSON report per application, whatever its layout"
    );

    let priced_findings = |date: &str| -> (usize, usize) {
        let mut counts = (0, 0);
        for entry in std::fs::read_dir(out.join(format!("apps/{date}"))).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                let report: serde_json::Value =
                    serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
                for f in report["findings"].as_array().unwrap() {
                    counts.0 += 1;
                    counts.1 += usize::from(f["impact_cost"].is_number());
                }
            }
        }
        counts
    };
    let (findings, priced) = priced_findings("2026-11-29");
    assert!(findings > 0 && priced == 0, "no price, no money");

    // Re-running a night replaces it: same reports, same night, no duplicates; a price given now
    // reaches every application's report.
    let again = run(&night2, "2026-11-29", &["--price-per-core-hour", "0.5"]);
    assert!(again.status.success());
    let (findings, priced) = priced_findings("2026-11-29");
    assert_eq!(priced, findings, "every finding priced");
    assert_eq!(
        std::fs::read_dir(out.join("apps/2026-11-29"))
            .unwrap()
            .count(),
        8
    );
    let night: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("nights/2026-11-29.json")).unwrap())
            .unwrap();
    assert_eq!(night["apps"].as_array().unwrap().len(), 4);
    let layouts: Vec<String> = ["databricks", "rolling"]
        .iter()
        .filter(|l| {
            std::fs::read_dir(out.join("apps/2026-11-29"))
                .unwrap()
                .any(|e| {
                    std::fs::read_to_string(e.unwrap().path())
                        .unwrap_or_default()
                        .contains(&format!("\"layout\": \"{l}\""))
                })
        })
        .map(|l| l.to_string())
        .collect();
    assert_eq!(
        layouts,
        ["databricks", "rolling"],
        "reports from every layout"
    );

    // --since keeps only recently modified logs: none of these is a year old, all are newer than 0 s.
    let none = run(&night2, "2026-11-30", &["--since", "0s"]);
    assert!(
        String::from_utf8_lossy(&none.stdout).contains("0 application(s) analysed"),
        "{}",
        String::from_utf8_lossy(&none.stdout)
    );
    let bad = run(&night2, "2026-11-30", &["--since", "3 weeks"]);
    assert_eq!(bad.status.code(), Some(2));
    let leftovers: Vec<_> = walk(&out)
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "temporary files left: {leftovers:?}");
}

/// `sparkdiag batch LOGS -o OUT --date DATE EXTRA...`, which must succeed: what it said.
fn night(logs: &Path, out: &Path, date: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "batch",
        logs.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--date",
        date,
    ];
    args.extend_from_slice(extra);
    let run = sparkdiag(&args);
    assert!(
        run.status.success(),
        "{date}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8_lossy(&run.stdout).into_owned()
}

pub(crate) fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let target = to.join(path.file_name().unwrap());
        if path.is_dir() {
            copy_dir(&path, &target);
        } else {
            std::fs::copy(&path, &target).unwrap();
        }
    }
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(walk(&path));
        } else {
            out.push(path);
        }
    }
    out
}

/// A night slower because of a setting (`spark.sql.shuffle.partitions` 8 → 2000, the planted
/// `causes/partitions` run after `causes/base`): the night summaries cannot tell it, the two
/// logs can, so the regression names the setting and the plan it changed, measured as
/// `sparkdiag diff` does. Once the earlier log is gone, the night says what its summaries
/// can and gives the diff command instead.
#[test]
fn a_night_regression_names_the_setting_measured_on_the_two_logs() {
    let tmp = tempfile::tempdir().unwrap();
    let runtime_line = |said: &str| {
        said.lines()
            .find(|l| l.contains("regressed: orders-nightly — runtime"))
            .unwrap_or_else(|| panic!("no runtime regression: {said}"))
            .to_string()
    };
    let out = tmp.path().join("fleet");
    night(&testdata("logs/causes/base"), &out, "2026-11-01", &[]);
    let said = night(&testdata("logs/causes/partitions"), &out, "2026-11-02", &[]);
    let line = runtime_line(&said);
    assert!(
        line.contains("likely: the configuration changed")
            && line.contains("spark.sql.shuffle.partitions")
            && line.contains("planned shuffle partitions: 8 → 2000")
            && line.contains("measured on the two logs"),
        "{line}"
    );

    // The earlier night's log moved away (rotated): the summaries' cause and the command.
    let moved = tmp.path().join("base");
    copy_dir(&testdata("logs/causes/base"), &moved);
    let out = tmp.path().join("rotated");
    night(&moved, &out, "2026-11-01", &[]);
    std::fs::remove_dir_all(&moved).unwrap();
    let line = runtime_line(&night(
        &testdata("logs/causes/partitions"),
        &out,
        "2026-11-02",
        &[],
    ));
    assert!(
        line.contains("not the input, Spark version or executors")
            && line.contains("sparkdiag diff")
            && !line.contains("measured on the two logs"),
        "{line}"
    );
}

/// Eight real nights of one job (`python3 testdata/gen/causes.py nights`): natural noise, its
/// runtime between 13.8 s and 17.7 s, and one real regression on 2026-11-07, which read 4x the
/// orders. Run night after night, `batch` flags that night alone, judged against the job's own
/// band once it has five earlier nights; the nights before that fall back on the fixed
/// threshold, which `--min-regression-s` keeps off second-sized noise.
#[test]
fn a_noisy_history_flags_only_the_real_regression() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("fleet");
    let nights = testdata("logs/nights");
    let mut dates: Vec<String> = std::fs::read_dir(&nights)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    dates.sort();
    assert_eq!(dates.len(), 8, "{dates:?}");
    let mut flagged = Vec::new();
    let mut index_of_the_regression = String::new();
    for date in &dates {
        let said = night(&nights.join(date), &out, date, &["--min-regression-s", "2"]);
        for line in said.lines().filter(|l| l.contains("regressed:")) {
            flagged.push((date.clone(), line.trim().to_string()));
        }
        if date == "2026-11-07" {
            index_of_the_regression = std::fs::read_to_string(out.join("index.html")).unwrap();
        }
    }
    assert_eq!(flagged.len(), 1, "{flagged:#?}");
    let (date, line) = &flagged[0];
    assert_eq!(date, "2026-11-07", "{line}");
    assert!(
        line.contains("executor time") && line.contains("against its usual"),
        "judged by the job's own band: {line}"
    );
    // Its likely cause, measured on the two nights' logs: the 4x input, in rows read.
    assert!(
        line.contains("likely: the input grew 4.0× (602,000 → 2,402,000 rows read)")
            && line.contains("measured on the two logs"),
        "{line}"
    );
    assert!(
        index_of_the_regression.contains("<th>likely cause</th>")
            && index_of_the_regression.contains("the input grew 4.0×"),
        "{index_of_the_regression}"
    );
    // The last night's index draws the job's runtime over all eight nights beside it, from
    // the first night's 13.8 s to tonight's 16.1 s.
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        index.contains(
            "aria-label=\"runtime over 8 nights: 13.8 s to 16.1 s tonight (lowest 13.8 s, highest 17.7 s)\""
        ),
        "{index}"
    );
    assert_eq!(index.matches("<svg class=\"spark\"").count(), 1);
}

/// A streaming query stopped by its own program leaves its in-flight batch's job cancelled:
/// the night does not count that as a failed job (the application's outcome already says
/// "cancelled by the program's stop"), while a query that died of an exception still is one.
/// Their micro-batches are the night's `streaming_batches` table, row for row.
#[test]
fn a_query_stopped_by_its_program_is_not_a_failed_application_of_the_night() {
    let tmp = tempfile::tempdir().unwrap();
    let nights = tmp.path().join("logs");
    copy_dir(&testdata("logs/streaming/stopped"), &nights.join("stopped"));
    copy_dir(
        &testdata("logs/streaming/failed_udf"),
        &nights.join("failed_udf"),
    );
    let out = tmp.path().join("fleet");
    let said = night(&nights, &out, "2026-12-01", &[]);
    let night: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("nights/2026-12-01.json")).unwrap())
            .unwrap();
    let failed_jobs = |name: &str| {
        night["apps"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {night}"))["failed_jobs"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(failed_jobs("streaming-stopped"), 0, "{night}");
    assert!(failed_jobs("streaming-failed-udf") >= 1, "{night}");
    assert!(said.contains("1 failed or with failed jobs"), "{said}");

    // The streaming_batches table holds every micro-batch of the two reports, one row each,
    // with the query's name and the batch's duration as the report has them.
    let mut batches: Vec<(String, i64, Option<i64>)> = Vec::new();
    for entry in std::fs::read_dir(out.join("apps/2026-12-01")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let report: serde_json::Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            for q in report["streaming"]["queries"].as_array().unwrap() {
                for b in q["batches"].as_array().unwrap() {
                    batches.push((
                        q["name"].as_str().unwrap_or_default().to_string(),
                        b["batch_id"].as_i64().unwrap(),
                        b["duration_ms"].as_i64(),
                    ));
                }
            }
        }
    }
    assert!(!batches.is_empty());
    use polars_io::prelude::*;
    let file = out.join("tables/streaming_batches/date=2026-12-01/part-0.parquet");
    let frame = ParquetReader::new(std::fs::File::open(&file).unwrap())
        .finish()
        .unwrap();
    assert_eq!(frame.height(), batches.len(), "{frame}");
    let names = frame.column("query_name").unwrap().str().unwrap().clone();
    let ids = frame.column("batch_id").unwrap().i64().unwrap().clone();
    let durations = frame.column("duration_ms").unwrap().i64().unwrap().clone();
    let mut table: Vec<(String, i64, Option<i64>)> = (0..frame.height())
        .map(|i| {
            (
                names.get(i).unwrap_or_default().to_string(),
                ids.get(i).unwrap(),
                durations.get(i),
            )
        })
        .collect();
    table.sort();
    batches.sort();
    assert_eq!(table, batches);

    // The applications table says who ran them, what kind of workload and on what, and the
    // core-hours the runs held, as the reports do.
    let file = out.join("tables/applications/date=2026-12-01/part-0.parquet");
    let apps = ParquetReader::new(std::fs::File::open(&file).unwrap())
        .finish()
        .unwrap();
    let column = |name: &str| -> Vec<String> {
        let c = apps.column(name).unwrap().str().unwrap().clone();
        (0..apps.height())
            .map(|i| c.get(i).unwrap_or_default().to_string())
            .collect()
    };
    assert_eq!(
        column("workload"),
        vec!["structured_streaming"; 2],
        "{apps}"
    );
    assert_eq!(column("cluster_manager"), vec!["local"; 2], "{apps}");
    assert!(column("user").iter().all(|u| !u.is_empty()), "{apps}");
    let core_hours = apps.column("core_hours").unwrap().f64().unwrap().clone();
    assert!(
        (0..apps.height()).all(|i| core_hours.get(i).is_some_and(|h| h > 0.0)),
        "{apps}"
    );
}

/// The `source` column of a night's `applications` partition, one entry per row, sorted; and
/// every other table's rows keyed as the table is (no key twice). Panics on a file that is
/// not a whole Parquet file.
fn night_rows(out: &Path, date: &str) -> Vec<String> {
    use polars::prelude::*;
    use polars_io::prelude::*;
    let read = |table: &str| {
        let path = out.join(format!("tables/{table}/date={date}/part-0.parquet"));
        ParquetReader::new(std::fs::File::open(&path).unwrap())
            .finish()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    };
    let text = |frame: &DataFrame, columns: &[&str]| -> Vec<String> {
        (0..frame.height())
            .map(|i| {
                columns
                    .iter()
                    .map(|c| format!("{:?}", frame.column(c).unwrap().get(i).unwrap()))
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .collect()
    };
    for (table, key) in [
        ("stages", &["source", "stage_id", "attempt_id"][..]),
        ("jobs", &["source", "job_id"][..]),
        ("executors", &["source", "executor_id"][..]),
    ] {
        let mut rows = text(&read(table), key);
        let all = rows.len();
        rows.sort();
        rows.dedup();
        assert_eq!(rows.len(), all, "{table}: a row twice");
    }
    let mut sources = text(&read("applications"), &["source"]);
    sources.sort();
    sources
}

/// Every visible Parquet file under `out/tables` (not hidden, as Spark and DuckDB list them),
/// each read whole: a half-written one fails to read.
fn check_visible_parquet(out: &Path) -> usize {
    let Ok(tables) = std::fs::read_dir(out.join("tables")) else {
        return 0;
    };
    let mut checked = 0;
    for partition in tables
        .flatten()
        .flat_map(|t| std::fs::read_dir(t.path()).unwrap())
    {
        let Ok(files) = std::fs::read_dir(partition.unwrap().path()) else {
            continue;
        };
        for file in files.flatten().map(|f| f.path()) {
            let name = file.file_name().unwrap().to_string_lossy().into_owned();
            if name.starts_with('.') || name.starts_with('_') || !name.ends_with(".parquet") {
                continue;
            }
            // Renamed into place while listing: read the one it names now, whole.
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            assert!(
                bytes.starts_with(b"PAR1") && bytes.ends_with(b"PAR1"),
                "{} is visible half-written ({} bytes)",
                file.display(),
                bytes.len()
            );
            use polars_io::prelude::{ParquetReader, SerReader};
            ParquetReader::new(std::io::Cursor::new(bytes))
                .finish()
                .unwrap_or_else(|e| panic!("{}: visible but unreadable: {e}", file.display()));
            checked += 1;
        }
    }
    checked
}

/// A nightly run killed with `kill -9` half way: at every moment the date's visible tables,
/// reports and night are the last complete run's; a second batch on the folder meanwhile is
/// refused, not interleaved; run again, the date holds exactly the new night, each row once.
#[test]
fn a_night_killed_half_way_leaves_the_last_whole_night_and_a_rerun_replaces_it() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("fleet");
    let date = "2026-12-01";
    let (first_logs, patterns) = (testdata("logs/failed"), testdata("logs/patterns"));
    night(&first_logs, &out, date, &[]);
    let first_night = night_rows(&out, date);
    assert!(!first_night.is_empty());
    let first_reports = std::fs::read_dir(out.join(format!("apps/{date}")))
        .unwrap()
        .count();
    let first_summary = std::fs::read(out.join(format!("nights/{date}.json"))).unwrap();

    let mut killed = std::process::Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
        .args(["batch", patterns.to_str().unwrap(), "-o"])
        .arg(&out)
        .args(["--date", date, "--jobs", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let partial = out.join(format!("apps/.{date}.partial"));
    let logs = std::fs::read_dir(&patterns)
        .unwrap()
        .filter(|e| e.as_ref().unwrap().path().is_dir())
        .count();
    let start = std::time::Instant::now();
    let mut looks = 0;
    loop {
        looks += 1;
        assert!(check_visible_parquet(&out) >= 7);
        assert_eq!(night_rows(&out, date), first_night);
        let written = std::fs::read_dir(&partial).map_or(0, |d| d.count());
        // Two files (HTML and JSON) a report: kill once half the night's reports are written.
        if written >= logs {
            break;
        }
        assert!(
            killed.try_wait().unwrap().is_none(),
            "the batch ended before half its logs were analysed; nothing was killed"
        );
        assert!(
            start.elapsed() < std::time::Duration::from_secs(300),
            "the batch wrote {written} files in 300 s"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Meanwhile a second run on the same folder is refused, and says why.
    let refused = sparkdiag(&[
        "batch",
        first_logs.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--date",
        "2026-12-02",
    ]);
    let said = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(2), "{said}");
    assert!(
        said.contains("is being written by another sparkdiag batch (pid ")
            && said.contains(&format!("night {date}")),
        "{said}"
    );
    assert!(!out.join("nights/2026-12-02.json").exists());
    killed.kill().unwrap(); // SIGKILL on Unix: nothing of the run's own code runs after it
    killed.wait().unwrap();
    // What was visible before is still there, whole: tables, reports and the night.
    assert!(check_visible_parquet(&out) >= 7);
    assert_eq!(night_rows(&out, date), first_night);
    assert_eq!(
        std::fs::read_dir(out.join(format!("apps/{date}")))
            .unwrap()
            .count(),
        first_reports
    );
    assert_eq!(
        std::fs::read(out.join(format!("nights/{date}.json"))).unwrap(),
        first_summary
    );
    eprintln!("batch killed after {looks} looks at its tables");

    // Run again (the killed run's lock went with it): the date is the new night alone.
    night(&patterns, &out, date, &[]);
    let rows = night_rows(&out, date);
    assert_eq!(rows.len(), logs, "{rows:?}");
    assert!(
        rows.iter().all(|source| source.contains("logs/patterns/")),
        "{rows:?}"
    );
    assert_eq!(
        std::fs::read_dir(out.join(format!("apps/{date}")))
            .unwrap()
            .count(),
        2 * logs
    );
    let leftovers: Vec<_> = walk(&out)
        .into_iter()
        .filter(|p| {
            let name = p.to_string_lossy();
            name.ends_with(".tmp") || name.contains(".partial") || name.contains(".replaced")
        })
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

/// A Python with DuckDB: `target/duckdb-venv` (made by .ci/run), else `python3` when it has it.
/// Without one the test says so in one line, except under CI.
fn python_with_duckdb() -> Option<std::path::PathBuf> {
    let venv = crate::util::repo().join("target/duckdb-venv/bin/python");
    let found = [venv, std::path::PathBuf::from("python3")]
        .into_iter()
        .find(|python| {
            std::process::Command::new(python)
                .args(["-c", "import duckdb"])
                .output()
                .is_ok_and(|o| o.status.success())
        });
    if found.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but no Python has DuckDB (.ci/run installs it into target/duckdb-venv)"
        );
        let _ = writeln!(
            std::io::stderr(),
            "skipped: the tables' DuckDB test needs DuckDB (python3 -m venv target/duckdb-venv && target/duckdb-venv/bin/pip install duckdb)"
        );
    }
    found
}

/// Sets every file under `dir` as last written `age` ago: a driver killed that long ago.
fn last_written_ago(dir: &Path, age: std::time::Duration) {
    let when = std::time::SystemTime::now() - age;
    for file in walk(dir) {
        std::fs::File::options()
            .write(true)
            .open(&file)
            .and_then(|f| f.set_modified(when))
            .unwrap();
    }
}

/// The number before `what` in `text` ("3 killed or incomplete" → 3), 0 when absent.
fn count_before(text: &str, what: &str) -> i64 {
    text.find(what).map_or(0, |at| {
        let digits: String = text[..at]
            .trim_end()
            .chars()
            .rev()
            .take_while(char::is_ascii_digit)
            .collect();
        digits.chars().rev().collect::<String>().parse().unwrap()
    })
}

/// The night's failures counted three ways agree: the index page, the summary on standard
/// output, and DuckDB over the Parquet tables (`applications.outcome`, `failed_jobs`). Real
/// logs: two drivers killed hours ago (their `.inprogress` logs not written to since: killed,
/// not "still being written"), one killed minutes ago (still being written, skipped), a run
/// that caught a failed job, a UDF that killed a streaming query, a query its program stopped
/// mid-batch (no failure), and a healthy run.
#[test]
fn duckdb_counts_the_nights_failures_as_the_page_does() {
    let Some(python) = python_with_duckdb() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    for (from, to) in [
        ("logs/killed/single", "killed-hours-ago"),
        ("logs/killed/rolling", "killed-rolling-hours-ago"),
        ("logs/killed/lz4", "killed-just-now"),
        ("logs/failed", "failed-job"),
        ("logs/streaming/failed_udf", "failed-udf"),
        ("logs/streaming/stopped", "stopped"),
        ("logs/patterns/healthy", "healthy"),
    ] {
        copy_dir(&testdata(from), &logs.join(to));
    }
    let hour = std::time::Duration::from_secs(3600);
    last_written_ago(&logs.join("killed-hours-ago"), 7 * hour);
    last_written_ago(&logs.join("killed-rolling-hours-ago"), 7 * hour);
    last_written_ago(
        &logs.join("killed-just-now"),
        std::time::Duration::from_secs(60),
    );
    let out = tmp.path().join("fleet");
    let said = night(&logs, &out, "2026-12-02", &[]);
    assert!(said.contains("1 in progress skipped"), "{said}");
    assert!(
        said.contains("killed-just-now") && said.contains("skipped, still being written"),
        "{said}"
    );
    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    let summary = &index[index.find("class=\"summary\"").unwrap()..];
    let summary = &summary[..summary.find("</p>").unwrap()];
    let page: serde_json::Value = serde_json::json!({
        "failures": count_before(summary, "failed or with failed jobs"),
        "killed_or_incomplete": count_before(summary, "killed or incomplete"),
        "succeeded_with_failed_jobs": count_before(summary, "succeeded with failed jobs"),
        "stopped_by_program": count_before(summary, "stopped by the program"),
    });
    assert_eq!(
        page,
        serde_json::json!({"failures": 4, "killed_or_incomplete": 2,
            "succeeded_with_failed_jobs": 2, "stopped_by_program": 1}),
        "{summary}"
    );
    let query = r#"
import duckdb, json, sys
apps = f"read_parquet('{sys.argv[1]}/tables/applications/*/*.parquet', hive_partitioning = true)"
db = duckdb.connect()
one = lambda sql: db.execute(sql).fetchone()[0]
print(json.dumps({
  "failures": one(f"SELECT count(*) FROM {apps} WHERE outcome IN ('failed', 'succeeded_with_failed_jobs', 'killed_or_incomplete')"),
  "killed_or_incomplete": one(f"SELECT count(*) FROM {apps} WHERE outcome = 'killed_or_incomplete'"),
  "succeeded_with_failed_jobs": one(f"SELECT count(*) FROM {apps} WHERE outcome = 'succeeded_with_failed_jobs'"),
  "stopped_by_program": one(f"SELECT count(*) FROM {apps} WHERE outcome = 'stopped_by_program'"),
  "failed_jobs_of_the_stopped": one(f"SELECT sum(failed_jobs) FROM {apps} WHERE outcome = 'stopped_by_program'"),
  "stopped_jobs": one(f"SELECT sum(stopped_jobs) FROM {apps}"),
  "with_failed_jobs_but_not_failures": one(f"SELECT count(*) FROM {apps} WHERE failed_jobs > 0 AND outcome NOT IN ('failed', 'succeeded_with_failed_jobs', 'killed_or_incomplete')"),
}))
"#;
    let run = std::process::Command::new(python)
        .args(["-c", query, out.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let tables: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    for key in [
        "failures",
        "killed_or_incomplete",
        "succeeded_with_failed_jobs",
        "stopped_by_program",
    ] {
        assert_eq!(
            tables[key], page[key],
            "{key}: tables {tables}, page {page}"
        );
    }
    assert_eq!(tables["failed_jobs_of_the_stopped"], 0, "{tables}");
    assert_eq!(tables["stopped_jobs"], 1, "{tables}");
    assert_eq!(tables["with_failed_jobs_but_not_failures"], 0, "{tables}");
}

/// What the fleet probe measures of the index page as Chromium lays it out at one width.
const FLEET_PROBE: &str = r#"<script>
const vw = document.documentElement.clientWidth;
const report = { innerWidth: window.innerWidth, viewport: vw,
  scrollWidth: document.documentElement.scrollWidth, overflowing: [], tables: 0, rows: 0 };
for (const e of document.body.querySelectorAll("*")) {
  if (e.getClientRects().length === 0 || e.closest("svg") && e.tagName !== "svg") continue;
  const r = e.getBoundingClientRect();
  if (r.right > vw + 0.5 || r.left < -0.5) {
    report.overflowing.push(e.tagName + "." + e.className + ": " + (e.textContent || "").trim().slice(0, 60));
  }
}
report.tables = document.querySelectorAll("table").length;
report.rows = document.querySelectorAll("tr:not(.head)").length;
const pre = document.createElement("pre");
pre.id = "fleet-probe";
pre.textContent = JSON.stringify(report);
(window.frameElement ? window.parent.document : document).body.appendChild(pre);
</script>"#;

/// The index page at `width` CSS pixels in headless Chromium, measured by [`FLEET_PROBE`]
/// (appended to a copy; the page itself has no script). Below 500 px, which headless
/// Chromium will not open a window at, the page is a frame of that width.
fn fleet_layout_at(browser: &Path, index: &Path, width: u32) -> serde_json::Value {
    let html = std::fs::read_to_string(index).unwrap();
    let probed = html.replace("</body>", &format!("{FLEET_PROBE}\n</body>"));
    let written = if width < 500 {
        let escaped = probed.replace('&', "&amp;").replace('"', "&quot;");
        format!(
            "<!doctype html><html><body style=\"margin:0\"><iframe style=\"border:0;width:{width}px;height:900px\" srcdoc=\"{escaped}\"></iframe></body></html>"
        )
    } else {
        probed
    };
    let probe = index.with_file_name(format!("probe-{width}.html"));
    std::fs::write(&probe, written).unwrap();
    let mut cmd = std::process::Command::new(browser);
    cmd.args(crate::html::CHROMIUM_QUIET);
    cmd.args([
        &format!(
            "--user-data-dir={}",
            index.with_file_name(format!("profile-{width}")).display()
        ),
        &format!("--window-size={},900", width.max(500)),
        "--hide-scrollbars",
        "--virtual-time-budget=2000",
        "--dump-dom",
        &format!("file://{}", probe.display()),
    ]);
    let out = crate::html::output_within(cmd, std::time::Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8(out.stdout).unwrap();
    let start = dom
        .find("<pre id=\"fleet-probe\">")
        .unwrap_or_else(|| panic!("the probe did not run at {width} px"))
        + "<pre id=\"fleet-probe\">".len();
    let json = dom[start..start + dom[start..].find("</pre>").unwrap()]
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// The fleet page fits a desktop's 1280 px and a phone's 420 px without scrolling sideways: a
/// night of every planted pattern under a long Databricks-like path, with a regression, a
/// runtime trend and the fleet's worst findings. Findings with no estimate say "–", never
/// "0 ms".
#[test]
fn the_fleet_page_fits_1280_and_420_px_in_headless_chromium() {
    let Some(browser) = crate::html::chromium() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let (night1, night2, out) = (
        tmp.path().join("n1"),
        tmp.path().join("n2"),
        tmp.path().join("fleet"),
    );
    std::fs::create_dir_all(&night1).unwrap();
    std::fs::create_dir_all(&night2).unwrap();
    copy_as(
        &pattern_log("driver-loop-fixed"),
        &night1,
        "monthly-etl-with-a-long-name",
    );
    copy_as(
        &pattern_log("driver-loop-serial"),
        &night2,
        "monthly-etl-with-a-long-name",
    );
    copy_dir(
        &testdata("logs/patterns"),
        &night2.join("dbfs-cluster-logs-delivered-by-databricks/0101-123456-abcdefgh/eventlog"),
    );
    night(&night1, &out, "2026-11-28", &["--min-regression-s", "5"]);
    night(&night2, &out, "2026-11-29", &["--min-regression-s", "5"]);
    let index = out.join("index.html");
    let html = std::fs::read_to_string(&index).unwrap();
    assert!(html.contains("What got worse") && html.contains("class=\"spark\""));
    let worst = &html[html.find("The worst findings across the fleet").unwrap()..];
    let worst = &worst[..worst.find("</table>").unwrap()];
    assert!(!worst.contains(">0 ms<"), "{worst}");
    assert!(!html.contains("saves 0.0"), "{html}");
    for width in [1280, 420] {
        let at = fleet_layout_at(&browser, &index, width);
        let num = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
        assert_eq!(num(&at["innerWidth"]), f64::from(width), "{at}");
        assert!(
            num(&at["scrollWidth"]) <= num(&at["viewport"]),
            "{width} px: the page scrolls sideways: {at}"
        );
        assert_eq!(
            at["overflowing"],
            serde_json::json!([]),
            "{width} px: elements past the edge"
        );
        assert!(num(&at["rows"]) >= 15.0, "{width} px: {at}");
    }
}

/// The committed Databricks delivery folder copied to `to` as a driver that died before its
/// stop leaves it: the live `eventlog` holds the lines Spark wrote up to its application's
/// end, and not the end.
pub(crate) fn databricks_without_its_end(to: &Path) {
    copy_dir(&testdata("logs/databricks"), to);
    let live = walk(to)
        .into_iter()
        .find(|p| p.file_name().is_some_and(|n| n == "eventlog"))
        .unwrap();
    let text = std::fs::read_to_string(&live).unwrap();
    let end = text
        .find(r#"{"Event":"SparkListenerApplicationEnd""#)
        .unwrap();
    std::fs::write(&live, &text[..end]).unwrap();
}

/// Sets `file` as last written at `when`.
fn written_at(file: &Path, when: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(file)
        .and_then(|f| f.set_modified(when))
        .unwrap();
}

/// What the night of `date` in `out` analysed (the folder or file under `logs` each came from,
/// with its outcome) and what it skipped as still being written, from its night file.
pub(crate) fn night_logs(
    out: &Path,
    date: &str,
    logs: &str,
) -> (Vec<(String, String)>, Vec<String>) {
    let text = std::fs::read_to_string(out.join(format!("nights/{date}.json"))).unwrap();
    let night: serde_json::Value = serde_json::from_str(&text).unwrap();
    let top = |input: &str| -> String {
        let rest = input
            .strip_prefix(logs)
            .unwrap_or_else(|| panic!("{input} is not under {logs}"));
        let rest = rest.trim_start_matches('/');
        rest.split('/').next().unwrap().to_string()
    };
    let mut analysed: Vec<(String, String)> = night["apps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                top(a["input"].as_str().unwrap()),
                a["outcome"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    analysed.sort();
    let mut skipped: Vec<String> = night["in_progress"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| top(s.as_str().unwrap()))
        .collect();
    skipped.sort();
    (analysed, skipped)
}

/// A Databricks delivery folder has no `.inprogress` name: while its cluster runs, its live
/// file is the plain `eventlog`, named as after the cluster stops. Written 10 minutes ago
/// without its application's end, it is live and skipped; with its end, it is analysed; not
/// written for 7 hours without its end, its driver is gone and it is counted killed or
/// incomplete. A rolling folder (its `appstatus_*.inprogress` marker) likewise, by its newest
/// part. `--stale-after` sets where live ends.
#[test]
fn a_log_is_live_until_stale_after_from_its_newest_part_whatever_its_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    databricks_without_its_end(&logs.join("databricks-killed"));
    databricks_without_its_end(&logs.join("databricks-live"));
    copy_dir(
        &testdata("logs/databricks"),
        &logs.join("databricks-ended-recently"),
    );
    copy_dir(
        &testdata("logs/killed/rolling"),
        &logs.join("rolling-killed"),
    );
    copy_dir(&testdata("logs/killed/rolling"), &logs.join("rolling-live"));
    let minute = std::time::Duration::from_secs(60);
    for (dir, ago) in [
        ("databricks-killed", 7 * 60 * minute),
        ("rolling-killed", 7 * 60 * minute),
        ("databricks-live", 10 * minute),
        ("rolling-live", 10 * minute),
        ("databricks-ended-recently", 10 * minute),
    ] {
        last_written_ago(&logs.join(dir), ago);
    }
    // One old roll file of the live folder: its newest part, not its oldest, says it is live.
    let old_roll = walk(&logs.join("databricks-live"))
        .into_iter()
        .find(|p| p.to_string_lossy().ends_with("--10-00.gz"))
        .unwrap();
    written_at(
        &old_roll,
        std::time::SystemTime::now() - 2 * 24 * 60 * minute,
    );
    let out = tmp.path().join("fleet");
    let root = logs.to_str().unwrap();

    let said = night(&logs, &out, "2026-12-03", &[]);
    assert!(
        said.starts_with("3 application(s) analysed") && said.contains("2 in progress skipped"),
        "{said}"
    );
    let (analysed, skipped) = night_logs(&out, "2026-12-03", root);
    let pair = |dir: &str, outcome: &str| (dir.to_string(), outcome.to_string());
    assert_eq!(
        analysed,
        [
            pair("databricks-ended-recently", "succeeded"),
            pair("databricks-killed", "killed_or_incomplete"),
            pair("rolling-killed", "killed_or_incomplete"),
        ]
    );
    assert_eq!(skipped, ["databricks-live", "rolling-live"]);
    assert!(
        said.contains("skipped, still being written") && said.contains("databricks-live"),
        "{said}"
    );

    // Ten minutes without a write is past a 5-minute --stale-after: nothing is live.
    night(&logs, &out, "2026-12-04", &["--stale-after", "5m"]);
    let (analysed, skipped) = night_logs(&out, "2026-12-04", root);
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(analysed.len(), 5, "{analysed:?}");
    for dir in ["databricks-live", "rolling-live"] {
        assert!(
            analysed.contains(&pair(dir, "killed_or_incomplete")),
            "{dir}: {analysed:?}"
        );
    }
}

/// `batch --modified-on DATE` over a folder that keeps every night's logs, as cluster-log
/// delivery does: the night is the logs last written on that UTC date, each by its newest
/// part (a rolling folder's last events file, a Databricks folder's live `eventlog`), however
/// late in the day, and an older date picks its own logs again when run later. Without it,
/// every log is read, as before.
#[test]
fn modified_on_picks_the_logs_last_written_on_that_utc_date() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    let at = |secs: u64| std::time::UNIX_EPOCH + std::time::Duration::from_secs(secs);
    // 2026-11-28T12:00Z, 2026-11-28T10:00Z, 2026-11-29T23:59:30Z, 2026-11-29T10:00Z,
    // 2026-11-30T00:00:30Z.
    let (nov28_noon, nov28_ten, nov29_last_minute, nov29_ten, nov30_first_minute) = (
        at(1_795_867_200),
        at(1_795_860_000),
        at(1_795_996_770),
        at(1_795_946_400),
        at(1_795_996_830),
    );
    std::fs::create_dir_all(logs.join("single-nov28")).unwrap();
    let single = logs.join("single-nov28/local-1796049570994.zstd");
    std::fs::copy(testdata("logs/multi/local-1796049570994.zstd"), &single).unwrap();
    written_at(&single, nov28_noon);
    copy_dir(&testdata("logs/failed"), &logs.join("single-nov29"));
    for file in walk(&logs.join("single-nov29")) {
        written_at(&file, nov29_last_minute);
    }
    // Its first events on the 28th, its last on the 29th; its marker, no part, on the 30th.
    copy_dir(&testdata("logs/rolling/zstd"), &logs.join("rolling-nov29"));
    for file in walk(&logs.join("rolling-nov29")) {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let when = if name.starts_with("appstatus_") {
            nov30_first_minute
        } else if name.starts_with("events_3_") {
            nov29_last_minute
        } else {
            nov28_ten
        };
        written_at(&file, when);
    }
    // Rolled on the 29th; its live `eventlog` last written just after midnight.
    copy_dir(&testdata("logs/databricks"), &logs.join("databricks-nov30"));
    for file in walk(&logs.join("databricks-nov30")) {
        let live = file.file_name().is_some_and(|n| n == "eventlog");
        written_at(&file, if live { nov30_first_minute } else { nov29_ten });
    }
    let out = tmp.path().join("fleet");
    let root = logs.to_str().unwrap();
    let modified_on = |date: &str| -> Vec<String> {
        let run = sparkdiag(&[
            "batch",
            root,
            "-o",
            out.to_str().unwrap(),
            "--modified-on",
            date,
        ]);
        assert!(
            run.status.success(),
            "{date}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        // The night is named by the date.
        let (analysed, skipped) = night_logs(&out, date, root);
        assert!(skipped.is_empty(), "{date}: {skipped:?}");
        analysed.into_iter().map(|(dir, _)| dir).collect()
    };
    assert_eq!(modified_on("2026-11-29"), ["rolling-nov29", "single-nov29"]);
    assert_eq!(modified_on("2026-11-30"), ["databricks-nov30"]);
    // An older date, run after later ones, still picks its own logs.
    assert_eq!(modified_on("2026-11-28"), ["single-nov28"]);
    assert_eq!(modified_on("2026-11-29"), ["rolling-nov29", "single-nov29"]);
    assert!(modified_on("2026-12-01").is_empty());

    // Without --modified-on, --date only names the night: every log is read.
    night(&logs, &out, "2026-12-02", &[]);
    assert_eq!(night_logs(&out, "2026-12-02", root).0.len(), 4);
    // A date that is no calendar date is refused before anything is written.
    let refused = sparkdiag(&[
        "batch",
        root,
        "-o",
        out.to_str().unwrap(),
        "--modified-on",
        "2026-11-31",
    ]);
    assert_eq!(refused.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&refused.stderr).contains("--modified-on 2026-11-31"),
        "{}",
        String::from_utf8_lossy(&refused.stderr)
    );
}
