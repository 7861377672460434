//! A night spread over Spark executors (`examples/distributed_batch.py`, PySpark in local mode)
//! against one `sparkdiag batch` over the same real logs: the same tables row for row, the same
//! reports under the same names, the same night.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use polars::prelude::*;
use polars_io::prelude::*;

use crate::util::{repo, sparkdiag, testdata};

const DATE: &str = "2026-11-29";
const TABLES: [&str; 4] = ["applications", "stages", "executors", "findings"];

/// Whether `python3` can import pyspark. Without it the test says so in one line and passes,
/// except under CI (`CI` set), where its absence is a failure.
fn pyspark_or_skip() -> bool {
    let found = Command::new("python3")
        .args(["-c", "import pyspark"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but `python3 -c 'import pyspark'` fails (.ci/run installs it)"
        );
        let _ = writeln!(
            std::io::stderr(),
            "skipped: the distributed batch test needs PySpark (`python3 -m pip install pyspark`) and Java 17"
        );
    }
    found
}

/// Every row of a Parquet file as text, sorted: row order is the one thing a merge of slices
/// may change.
fn sorted_rows(path: &Path) -> (Schema, Vec<String>) {
    let frame = ParquetReader::new(std::fs::File::open(path).unwrap())
        .finish()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let columns = frame.columns();
    let mut rows: Vec<String> = (0..frame.height())
        .map(|i| {
            columns
                .iter()
                .map(|c| format!("{:?}", c.get(i).unwrap()))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect();
    rows.sort();
    (frame.schema().as_ref().clone(), rows)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    files
}

/// The night file's lists, each sorted, as JSON text: the merge keeps every entry but lists
/// them slice by slice.
fn night_lists(out: &Path) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(out.join(format!("nights/{DATE}.json"))).unwrap();
    let night: serde_json::Value = serde_json::from_str(&text).unwrap();
    ["apps", "errors", "in_progress", "worst_findings"]
        .iter()
        .map(|list| {
            let mut items: Vec<String> = night[list]
                .as_array()
                .unwrap_or_else(|| panic!("no {list} in the night"))
                .iter()
                .map(|v| v.to_string())
                .collect();
            items.sort();
            items
        })
        .collect()
}

#[test]
fn spark_spreads_a_night_over_executors_into_the_tables_one_batch_writes() {
    if !pyspark_or_skip() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (single, spread) = (tmp.path().join("single"), tmp.path().join("spread"));
    // Several layouts and codecs, a failed job, a Databricks delivery folder, logs still being
    // written, and a file that is no log at all. Absolute paths: the tables' `source` column is
    // the directory as given, and the executors are given absolute ones.
    // The logs still being written are copied, so that they are as fresh as a night's: a clone
    // older than `--stale-after` (6 h) would otherwise count them as killed applications.
    let killed = tmp.path().join("killed");
    crate::batch::copy_dir(&testdata("logs/killed"), &killed);
    let mut dirs: Vec<String> = [
        "logs/failed",
        "logs/databricks",
        "logs/multi",
        "logs/single",
        "logs/MANIFEST.tsv",
    ]
    .iter()
    .map(|d| testdata(d).to_str().unwrap().to_string())
    .collect();
    dirs.insert(3, killed.to_str().unwrap().to_string());
    let dir_args: Vec<&str> = dirs.iter().map(String::as_str).collect();

    let mut args = vec!["batch"];
    args.extend(&dir_args);
    args.extend(["-o", single.to_str().unwrap(), "--date", DATE]);
    let one = sparkdiag(&args);
    assert!(
        one.status.success(),
        "{}",
        String::from_utf8_lossy(&one.stderr)
    );

    let script = repo().join("examples/distributed_batch.py");
    let spread_run = Command::new("python3")
        .arg(&script)
        .args([spread.to_str().unwrap(), DATE])
        .args(&dir_args)
        .args(["--slices", "3", "--sparkdiag", env!("CARGO_BIN_EXE_sparkdiag")])
        // Two local cores, no web UI: a small Spark that starts in seconds.
        .env(
            "PYSPARK_SUBMIT_ARGS",
            "--master local[2] --conf spark.ui.enabled=false --conf spark.sql.shuffle.partitions=2 pyspark-shell",
        )
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&spread_run.stdout);
    assert!(
        spread_run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&spread_run.stderr)
    );
    for k in 0..3 {
        assert!(
            stdout.contains(&format!("slice {k}/3: ")),
            "slice {k} did not run: {stdout}"
        );
    }
    assert!(
        !spread.join("slices").exists(),
        "the slices are removed once merged"
    );

    let mut apps = 0;
    for table in TABLES {
        let file = |out: &Path| out.join(format!("tables/{table}/date={DATE}/part-0.parquet"));
        let (schema, rows) = sorted_rows(&file(&single));
        let (spread_schema, spread_rows) = sorted_rows(&file(&spread));
        assert_eq!(spread_schema, schema, "{table}: columns or types differ");
        assert!(!rows.is_empty(), "{table} is empty");
        assert_eq!(spread_rows, rows, "{table}: rows differ");
        if table == "applications" {
            apps = rows.len();
        }
    }
    // 9 logs analysed (one with a failed job, one from Databricks); 3 still being written and
    // MANIFEST.tsv are not in the tables.
    assert_eq!(apps, 9);

    // Every report, under the same name and with the same bytes.
    let (reports, spread_reports) = (
        files_under(&single.join(format!("apps/{DATE}"))),
        files_under(&spread.join(format!("apps/{DATE}"))),
    );
    assert_eq!(reports.len(), 2 * apps);
    for (a, b) in reports.iter().zip(&spread_reports) {
        assert_eq!(a.file_name(), b.file_name());
        assert!(
            std::fs::read(a).unwrap() == std::fs::read(b).unwrap(),
            "{} differs from one batch's",
            b.display()
        );
    }
    let (night, spread_night) = (night_lists(&single), night_lists(&spread));
    assert_eq!(spread_night, night);
    assert_eq!(night[1].len(), 1, "MANIFEST.tsv is listed as unreadable");
    assert_eq!(night[2].len(), 3, "three logs still being written");
    let index = std::fs::read_to_string(spread.join("index.html")).unwrap();
    assert!(index.contains("9 application(s)"), "{index}");
}
