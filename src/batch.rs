//! `sparkdiag batch`: every application under some directories, analysed in parallel, with
//! per-application reports, the fleet's index page, Parquet tables and trends against earlier
//! nights. The work itself lives in the library crates; this wires it together and writes files.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::Context;
use sparkdiag_report::Report;
use sparkdiag_report::fleet::{self, Night, NightApp, NightError, NightFinding, NightTotals};
use sparkdiag_rules::{Config, Severity};

mod merge;

#[derive(clap::Args)]
pub struct BatchArgs {
    /// Directories holding event logs (any mix of layouts, codecs and archives).
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<String>,
    /// Where the reports, the index page, the tables and the night's history go.
    #[arg(short, long, value_name = "OUTDIR")]
    pub output: PathBuf,
    /// The night these logs belong to (YYYY-MM-DD); default: today (UTC). Re-running a date
    /// replaces that date's reports and table partitions.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub date: Option<String>,
    /// How many applications to analyse at once; default: the number of cores.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Also analyse logs still being written (.inprogress); they are skipped by default.
    #[arg(long)]
    pub include_in_progress: bool,
    /// Only logs modified within this long before now: `36h`, `2d`, `90m`.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub since: Option<std::time::Duration>,
    /// Exit with code 1 when an application regressed against its previous run.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// How much runtime or recoverable time must grow to count as a regression (0.2 = 20 %).
    #[arg(long, value_name = "SHARE", default_value_t = 0.2)]
    pub regression_threshold: f64,
    /// ...and by at least this many seconds, so a 3 s job taking 4 s is not a regression.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub min_regression_s: f64,
    /// Match applications across nights by this instead of the application name:
    /// `name` or `spark-property:<key>` (e.g. spark-property:spark.databricks.clusterUsageTags.clusterName).
    #[arg(long, value_name = "KEY", default_value = "name")]
    pub key: String,
    /// Analyse only slice K of N (`K/N`, K from 0): the applications found at positions K,
    /// K+N, K+2N, ... One slice of a night spread over machines (examples/distributed_batch.py):
    /// it writes its reports, tables and night, but no index page; `--merge` joins the slices.
    #[arg(long, value_name = "K/N", value_parser = parse_slice, conflicts_with = "merge")]
    pub slice: Option<Slice>,
    /// The DIRs are the OUTDIRs of every `--slice K/N` of one night (same DIRs, same --date):
    /// writes OUTDIR as one `batch` over all the logs would have, and moves the slices' reports
    /// into it.
    #[arg(long)]
    pub merge: bool,
}

/// One slice of a night: the applications at positions `index`, `index + of`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Slice {
    pub index: usize,
    pub of: usize,
}

impl Slice {
    /// Whether the item at `position` of everything found belongs to this slice.
    fn holds(self, position: usize) -> bool {
        position % self.of == self.index
    }
}

/// What one worker returns: the report, or the input with why it could not be read.
type Outcome = Result<(Report, NightApp), NightError>;

pub fn run(args: BatchArgs, config: Config) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let date = match &args.date {
        Some(d) if is_date(d) => d.clone(),
        Some(d) => anyhow::bail!(
            "--date {d}: expected a calendar date as YYYY-MM-DD, e.g. {}",
            today()
        ),
        None => today(),
    };
    if args.merge {
        let night = merge::merge(&args.dirs, &args.output, &date)?;
        return publish(&args, night, started);
    }
    // A directory that is not there is a mistake in the command (a typo, an unmounted volume),
    // not a bad log: stop before writing a night that would look complete.
    let missing: Vec<&String> = args
        .dirs
        .iter()
        .filter(|d| std::fs::metadata(d).is_err())
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "no such file or directory: {}; nothing was written",
            missing
                .iter()
                .map(|d| d.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let mut inputs = Vec::new();
    let mut unreadable = Vec::new();
    let mut in_progress = Vec::new();
    // Every log found has a position, before any is filtered out: it picks the log's slice, so
    // slices that list the same directories never share or miss a log, and it names the
    // log's report the same in a slice as in one batch over everything.
    let mut position = 0;
    for dir in &args.dirs {
        // A path that is not a log is listed like any unreadable log; it does not stop the night.
        let found = match sparkdiag_eventlog::discover(dir) {
            Ok(found) => found,
            Err(e) => {
                // Said once, by the first slice.
                if args.slice.is_none_or(|s| s.index == 0) {
                    unreadable.push(night_error(dir, &e.to_string()));
                }
                continue;
            }
        };
        for input in found {
            position += 1;
            if args.slice.is_some_and(|s| !s.holds(position - 1)) {
                continue;
            }
            if args.since.is_some_and(|since| older_than(&input, since)) {
                continue;
            }
            if input.in_progress && !args.include_in_progress {
                in_progress.push(input.display.clone());
            } else {
                inputs.push((position - 1, dir.clone(), input));
            }
        }
    }
    let out = &args.output;
    let (apps_rel, apps_dir) = fresh_apps_dir(out, &date)?;

    let jobs = match args.jobs {
        Some(n) if n > 0 => n,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build()?;
    let mut tables = sparkdiag_tables::NightWriter::create(out, &date)?;
    let mut night = Night {
        errors: unreadable,
        in_progress,
        ..Night::new(&date)
    };
    let mut worst: Vec<NightFinding> = Vec::new();
    // Each application's rows go to the tables as soon as it is its turn, and its report is
    // dropped: only the small `NightApp` and the night's 20 worst findings stay for the index.
    let mut write_error = None;
    ordered_bounded(
        &pool,
        inputs.len(),
        window(jobs),
        |i| {
            let (position, dir, input) = &inputs[i];
            analyse(
                *position, dir, input, &config, &args.key, &apps_dir, &apps_rel,
            )
        },
        |outcome| match outcome {
            Ok((report, app)) => {
                if write_error.is_none() {
                    write_error = tables.add(&report).err();
                }
                worst.extend(
                    report
                        .findings
                        .iter()
                        .filter(|f| f.finding.severity <= Severity::Medium)
                        .map(|f| NightFinding {
                            app: app.name.clone(),
                            rule: f.finding.rule.to_string(),
                            severity: f.finding.severity.name().to_string(),
                            title: f.finding.title.clone(),
                            impact_ms: f.finding.impact_ms,
                            report: app.report.clone(),
                        }),
                );
                keep_worst(&mut worst);
                night.apps.push(app);
            }
            Err(e) => night.errors.push(e),
        },
    );
    if let Some(e) = write_error {
        return Err(e.into());
    }
    tables.finish()?;
    night.worst_findings = worst;
    // The list of logs found is as long as the night; the index is drawn without it.
    drop(inputs);
    match args.slice {
        Some(slice) => {
            merge::write_slice(out, &night, slice)?;
            println!(
                "slice {}/{}: {} application(s) analysed in {:.1} s, {} unreadable, {} in progress skipped",
                slice.index,
                slice.of,
                night.apps.len(),
                started.elapsed().as_secs_f64(),
                night.errors.len(),
                night.in_progress.len(),
            );
            Ok(ExitCode::SUCCESS)
        }
        None => publish(&args, night, started),
    }
}

/// The night's report folder under `out`, relative and full, emptied: the night is written
/// afresh, so a re-run replaces it instead of adding to it.
fn fresh_apps_dir(out: &Path, date: &str) -> anyhow::Result<(String, PathBuf)> {
    let apps_rel = format!("apps/{date}");
    let apps_dir = out.join(&apps_rel);
    if apps_dir.exists() {
        std::fs::remove_dir_all(&apps_dir)
            .with_context(|| format!("cannot clear {}", apps_dir.display()))?;
    }
    std::fs::create_dir_all(&apps_dir)
        .with_context(|| format!("cannot create {}", apps_dir.display()))?;
    Ok((apps_rel, apps_dir))
}

/// Writes the night, compares it with the earlier ones and writes the index page; says what
/// failed and what regressed.
fn publish(args: &BatchArgs, night: Night, started: Instant) -> anyhow::Result<ExitCode> {
    let out = &args.output;
    let date = &night.date;
    // Straight to the file: the night's text would be another copy of every application.
    write_atomic_with(&out.join("nights").join(format!("{date}.json")), |file| {
        Ok(serde_json::to_writer_pretty(file, &night)?)
    })?;
    let (history, earlier) = read_history(&out.join("nights"), &night)?;
    let changes = fleet::compare(
        &night,
        &earlier,
        args.regression_threshold,
        (args.min_regression_s * 1000.0) as i64,
    );
    write_atomic(
        &out.join("index.html"),
        &fleet::render_index(&night, &history, &changes),
    )?;

    let regressions = changes.iter().filter(|c| c.regression).count();
    let failed: Vec<&NightApp> = fleet::ranked_apps(&night)
        .into_iter()
        .filter(|a| a.failed())
        .collect();
    // A reader that stops early (`| head`) is not an error: main treats the broken pipe as done.
    let mut stdout = std::io::stdout().lock();
    writeln!(
        stdout,
        "{} application(s) analysed in {:.1} s: {} failed or with failed jobs, {} unreadable, {} in progress skipped; {} regression(s) since earlier nights",
        night.apps.len(),
        started.elapsed().as_secs_f64(),
        failed.len(),
        night.errors.len(),
        night.in_progress.len(),
        regressions
    )?;
    for a in &failed {
        writeln!(stdout, "  {}: {} ({})", a.name, a.outcome(), a.input)?;
    }
    for e in &night.errors {
        writeln!(stdout, "  could not read {}: {}", e.input, e.error)?;
    }
    for input in &night.in_progress {
        writeln!(stdout, "  skipped, still being written: {input}")?;
    }
    for c in changes.iter().filter(|c| c.regression) {
        writeln!(
            stdout,
            "  regressed: {} — {} (since {})",
            c.key, c.what, c.since
        )?;
    }
    writeln!(stdout, "wrote {}", out.join("index.html").display())?;
    Ok(if args.fail_on_regression && regressions > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `K/N` with K < N, e.g. `0/8`.
fn parse_slice(text: &str) -> Result<Slice, String> {
    let parsed = text.split_once('/').and_then(|(k, n)| {
        Some(Slice {
            index: k.trim().parse().ok()?,
            of: n.trim().parse().ok()?,
        })
    });
    match parsed {
        Some(slice) if slice.index < slice.of => Ok(slice),
        _ => Err(format!(
            "`{text}`: expected K/N with 0 <= K < N, e.g. 0/8 for the first of 8 slices"
        )),
    }
}

/// How many of the night's worst findings the index shows.
const WORST_FINDINGS: usize = 20;

/// Keeps the `WORST_FINDINGS` largest by impact; among equals, the earlier application first,
/// as the stable sort over the whole night did.
fn keep_worst(worst: &mut Vec<NightFinding>) {
    worst.sort_by_key(|f| std::cmp::Reverse(f.impact_ms));
    worst.truncate(WORST_FINDINGS);
}

/// How many applications may be in flight or finished-but-not-yet-written at once: enough that
/// a slow application does not idle the other workers for long, few enough that memory does not
/// grow with the night.
fn window(jobs: usize) -> usize {
    jobs * 4
}

/// Runs `work(0..n)` on `pool` and hands each result to `sink` on this thread in index order,
/// with at most `window` items taken but not yet handed over, so the results alive at once are
/// bounded whatever `n` is. A worker that would run ahead of the window waits; the item the
/// sink waits for is always inside it, so the pipeline never stalls. A panic in `work` is
/// re-raised here once the workers have stopped.
fn ordered_bounded<T: Send>(
    pool: &rayon::ThreadPool,
    n: usize,
    window: usize,
    work: impl Fn(usize) -> T + Sync,
    mut sink: impl FnMut(T),
) {
    use std::collections::BTreeMap;
    use std::sync::{Condvar, Mutex};

    struct State<T> {
        next_take: usize,
        next_give: usize,
        done: BTreeMap<usize, std::thread::Result<T>>,
        stop: bool,
    }
    let window = window.max(1);
    let state = Mutex::new(State {
        next_take: 0,
        next_give: 0,
        done: BTreeMap::new(),
        stop: false,
    });
    let changed = Condvar::new();
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    let worker = || {
        loop {
            let i = {
                let mut s = lock();
                while !s.stop && s.next_take < n && s.next_take >= s.next_give + window {
                    s = changed.wait(s).unwrap_or_else(|e| e.into_inner());
                }
                if s.stop || s.next_take >= n {
                    return;
                }
                s.next_take += 1;
                s.next_take - 1
            };
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(i)));
            lock().done.insert(i, result);
            changed.notify_all();
        }
    };
    let workers = pool.current_num_threads().min(n);
    let mut panic = None;
    std::thread::scope(|scope| {
        scope.spawn(|| pool.scope(|s| (0..workers).for_each(|_| s.spawn(|_| worker()))));
        for i in 0..n {
            let result = {
                let mut s = lock();
                loop {
                    if let Some(result) = s.done.remove(&i) {
                        s.next_give = i + 1;
                        break result;
                    }
                    s = changed.wait(s).unwrap_or_else(|e| e.into_inner());
                }
            };
            changed.notify_all();
            // A sink that panics must also stop the workers, or they would wait on the window
            // forever and the scope would never end.
            let given = result.and_then(|value| {
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(value)))
            });
            match given {
                Ok(()) => {}
                Err(payload) => {
                    // Let the workers finish what they hold and stop taking more.
                    lock().stop = true;
                    changed.notify_all();
                    panic = Some(payload);
                    break;
                }
            }
        }
    });
    if let Some(payload) = panic {
        std::panic::resume_unwind(payload);
    }
}

/// Analyses one log and writes its reports; `i` is where it was found among every log of the
/// night (in a slice too), which keeps apart the reports of two logs with one id.
fn analyse(
    i: usize,
    dir: &str,
    input: &sparkdiag_eventlog::LogInput,
    config: &Config,
    key: &str,
    apps_dir: &Path,
    apps_rel: &str,
) -> Outcome {
    let failed = |error: String| night_error(&input.display, &error);
    let options = sparkdiag_analysis::Options {
        config,
        price_per_core_hour: None,
        inputs: vec![dir.to_string()],
    };
    let analysis =
        sparkdiag_analysis::analyze(input, &options).map_err(|e| failed(e.to_string()))?;
    let view = analysis.view_data();
    let sparkdiag_analysis::Analysis { app, report, .. } = analysis;
    let id = report
        .application
        .id
        .clone()
        .unwrap_or_else(|| format!("app-{i}"));
    // Ids are unique per attempt; the index keeps two logs of one id apart.
    let file = format!("{}-{i}", safe_name(&id));
    let html = sparkdiag_report::html::render(&[(&report, &view)]);
    write_atomic(&apps_dir.join(format!("{file}.html")), &html)
        .map_err(|e| failed(e.to_string()))?;
    write_atomic(
        &apps_dir.join(format!("{file}.json")),
        &serde_json::to_string_pretty(&report).unwrap_or_default(),
    )
    .map_err(|e| failed(e.to_string()))?;
    let medium: Vec<&sparkdiag_report::FindingOut> = report
        .findings
        .iter()
        .filter(|f| f.finding.severity <= Severity::Medium)
        .collect();
    let mut codes: Vec<String> = medium.iter().map(|f| f.finding.rule.to_string()).collect();
    codes.sort();
    codes.dedup();
    let name = report
        .application
        .name
        .clone()
        .unwrap_or_else(|| id.clone());
    let key = match key.strip_prefix("spark-property:") {
        Some(property) => app
            .spark_properties
            .get(property)
            .cloned()
            .unwrap_or_else(|| name.clone()),
        None => name.clone(),
    };
    let night_app = NightApp {
        key,
        app_id: id,
        name,
        status: sparkdiag_report::enum_name(report.application.status),
        duration_ms: report.application.duration_ms.unwrap_or(0),
        core_ms: report.summary.executor_run_time_ms,
        impact_ms: report.findings.iter().map(|f| f.finding.impact_ms).sum(),
        findings: codes,
        worst_severity: report
            .findings
            .iter()
            .map(|f| f.finding.severity)
            .min()
            .map(|s| s.name().to_string()),
        top_finding: report
            .findings
            .first()
            .map(|f| format!("{}: {}", f.finding.rule, f.finding.title)),
        report: format!("{apps_rel}/{file}.html"),
        jobs: report.summary.jobs,
        failed_jobs: report.summary.failed_jobs,
        input: input.display.clone(),
    };
    Ok((report, night_app))
}

/// Why `input` could not be read. The reader's errors already start with the path; the index
/// and the summary show it once, in its own column.
fn night_error(input: &str, error: &str) -> NightError {
    NightError {
        input: input.to_string(),
        error: error
            .strip_prefix(input)
            .and_then(|rest| rest.strip_prefix(": "))
            .unwrap_or(error)
            .to_string(),
    }
}

/// Writes under a temporary name and renames, so a crash never leaves a half-written file.
fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
    write_atomic_with(path, |file| Ok(file.write_all(contents.as_bytes())?))
}

/// [`write_atomic`] for contents that `write` streams into the file.
fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let dir = path.parent().context("a file needs a folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("out")
    ));
    let cannot_write = || format!("cannot write {}", tmp.display());
    let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp).with_context(cannot_write)?);
    write(&mut file).with_context(cannot_write)?;
    file.into_inner()
        .map_err(|e| e.into_error())
        .with_context(cannot_write)?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} into place", tmp.display()))?;
    Ok(())
}

/// What the index and the comparison need of the nights in `dir`, read one night at a time:
/// every night's totals (with `tonight`'s own), and for each of tonight's applications only its
/// latest earlier run, as nights holding just those runs (what [`fleet::compare`] looks in).
/// Memory follows tonight's applications and the largest night, not how many nights there are.
fn read_history(dir: &Path, tonight: &Night) -> anyhow::Result<(Vec<NightTotals>, Vec<Night>)> {
    use std::collections::{BTreeMap, HashMap, HashSet};
    let keys: HashSet<&str> = tonight.apps.iter().map(|a| a.key.as_str()).collect();
    let own = format!("{}.json", tonight.date);
    let mut totals = vec![NightTotals::of(tonight)];
    let mut latest: HashMap<String, (String, NightApp)> = HashMap::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "json")
            || path.file_name().is_some_and(|n| *n == *own)
        {
            continue;
        }
        let file = std::fs::File::open(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let night: Night =
            serde_json::from_reader(std::io::BufReader::new(file)).with_context(|| {
                format!("{}: not a night written by sparkdiag batch", path.display())
            })?;
        totals.push(NightTotals::of(&night));
        if night.date >= tonight.date {
            continue;
        }
        for app in night.apps {
            // Within a night the first run of a key is the one compared with, as before.
            let newer = latest
                .get(&app.key)
                .is_none_or(|(date, _)| *date < night.date);
            if keys.contains(app.key.as_str()) && newer {
                latest.insert(app.key.clone(), (night.date.clone(), app));
            }
        }
    }
    let mut by_date: BTreeMap<String, Vec<NightApp>> = BTreeMap::new();
    for (date, app) in latest.into_values() {
        by_date.entry(date).or_default().push(app);
    }
    let earlier = by_date
        .into_iter()
        .map(|(date, apps)| Night {
            apps,
            ..Night::new(&date)
        })
        .collect();
    Ok((totals, earlier))
}

/// `36h`, `2d`, `90m`, `45s`.
fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let (number, unit) = text.split_at(
        text.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(text.len()),
    );
    let n: u64 = number
        .parse()
        .map_err(|_| format!("`{text}`: expected a number and a unit, e.g. 36h, 2d, 90m"))?;
    let secs = match unit {
        "s" => n,
        "m" => n * 60,
        "h" => n * 3600,
        "d" => n * 86_400,
        _ => return Err(format!("`{text}`: the unit must be s, m, h or d")),
    };
    Ok(std::time::Duration::from_secs(secs))
}

/// Whether every file of a log was last modified more than `since` ago.
fn older_than(input: &sparkdiag_eventlog::LogInput, since: std::time::Duration) -> bool {
    let Some(cutoff) = std::time::SystemTime::now().checked_sub(since) else {
        return false;
    };
    input
        .parts
        .iter()
        .filter_map(|p| p.path.as_ref())
        .filter_map(|p| std::fs::metadata(p).and_then(|m| m.modified()).ok())
        .all(|modified| modified < cutoff)
}

fn safe_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// A real calendar date as `YYYY-MM-DD`: it names the night's partitions (`date=...`), which
/// Spark and DuckDB read back as a date.
fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return false;
    }
    let num = |r: std::ops::Range<usize>| s[r].parse::<u32>().unwrap_or(0);
    let (year, month, day) = (num(0..4), num(5..7), num(8..10));
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// Today's date in UTC, from the system clock (civil-from-days).
fn today() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_calendar_dates() {
        for good in ["2026-11-29", "2024-02-29", "2000-02-29", "1999-12-31"] {
            assert!(is_date(good), "{good}");
        }
        for bad in [
            "2026-13-45",
            "2026-00-10",
            "2026-02-29",
            "1900-02-29",
            "2026-04-31",
            "2026-11-00",
            "2026-1-29",
            "26-11-29xx",
            "today",
        ] {
            assert!(!is_date(bad), "{bad}");
        }
        assert!(is_date(&today()));
    }

    /// Counts the values alive at once, as reports would be.
    struct Tracked<'a>(usize, &'a std::sync::atomic::AtomicUsize);

    impl Drop for Tracked<'_> {
        fn drop(&mut self) {
            self.1.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
        }
    }

    #[test]
    fn results_come_in_order_and_few_are_alive_at_once() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let (alive, peak) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let mut seen = Vec::new();
        let window = 6;
        ordered_bounded(
            &pool,
            2_000,
            window,
            |i| {
                // The first item is slow, so unbounded workers would race far ahead of it.
                if i == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                }
                let now = alive.fetch_add(1, Ordering::SeqCst) + 1;
                peak.fetch_max(now, Ordering::SeqCst);
                Tracked(i, &alive)
            },
            |t| seen.push(t.0),
        );
        assert_eq!(seen, (0..2_000).collect::<Vec<_>>());
        assert_eq!(alive.load(Ordering::SeqCst), 0);
        // The window, plus the one the sink holds.
        let peak = peak.load(Ordering::SeqCst);
        assert!(peak <= window + 1, "{peak} results alive at once");
    }

    #[test]
    fn a_panicking_worker_stops_the_night_instead_of_hanging_it() {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let mut seen = Vec::new();
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ordered_bounded(
                &pool,
                100,
                3,
                |i| {
                    assert!(i != 7, "boom");
                    i
                },
                |i| seen.push(i),
            )
        }));
        assert!(outcome.is_err());
        assert_eq!(seen, (0..7).collect::<Vec<_>>());
        assert!(ordered_bounded_is_empty_safe(&pool));
    }

    /// No items: nothing is handed over and nothing waits.
    fn ordered_bounded_is_empty_safe(pool: &rayon::ThreadPool) -> bool {
        let mut calls = 0;
        ordered_bounded(pool, 0, 4, |i| i, |_| calls += 1);
        calls == 0
    }

    #[test]
    fn worst_findings_keep_the_earlier_app_among_equals() {
        let finding = |app: &str, impact_ms| NightFinding {
            app: app.into(),
            rule: "R".into(),
            severity: "high".into(),
            title: String::new(),
            impact_ms,
            report: String::new(),
        };
        let mut worst: Vec<NightFinding> = (0..WORST_FINDINGS).map(|_| finding("a", 5)).collect();
        worst.extend([finding("b", 5), finding("c", 9)]);
        keep_worst(&mut worst);
        assert_eq!(worst.len(), WORST_FINDINGS);
        assert_eq!(worst[0].app, "c");
        assert!(worst[1..].iter().all(|f| f.app == "a"));
    }

    /// A run as an earlier night's file holds it (the fields later versions added left out).
    fn run_of(key: &str, duration_ms: i64) -> NightApp {
        serde_json::from_value(serde_json::json!({
            "key": key, "app_id": key, "name": key, "status": "succeeded",
            "duration_ms": duration_ms, "impact_ms": 0, "findings": ["SK001"], "report": "",
        }))
        .unwrap()
    }

    fn night_of(date: &str, apps: Vec<NightApp>) -> Night {
        Night {
            apps,
            ..Night::new(date)
        }
    }

    #[test]
    fn history_keeps_each_apps_latest_earlier_run_and_every_nights_totals() {
        let dir = tempfile::tempdir().unwrap();
        let tonight = night_of("2026-11-29", vec![run_of("etl", 9), run_of("report", 9)]);
        for night in [
            night_of("2026-11-27", vec![run_of("etl", 1), run_of("report", 2)]),
            night_of(
                "2026-11-28",
                vec![run_of("etl", 3), run_of("etl", 4), run_of("gone", 5)],
            ),
            // A later night (a re-run of an older date) is drawn but never compared with.
            night_of("2026-11-30", vec![run_of("etl", 6)]),
            // Tonight's own file is read from memory, not from this stale copy.
            night_of("2026-11-29", vec![run_of("stale", 7)]),
        ] {
            let path = dir.path().join(format!("{}.json", night.date));
            write_atomic(&path, &serde_json::to_string(&night).unwrap()).unwrap();
        }
        let (mut totals, earlier) = read_history(dir.path(), &tonight).unwrap();
        totals.sort_by(|a, b| a.date.cmp(&b.date));
        let runtimes: Vec<(&str, i64, usize)> = totals
            .iter()
            .map(|t| (t.date.as_str(), t.runtime_ms, t.findings))
            .collect();
        assert_eq!(
            runtimes,
            [
                ("2026-11-27", 3, 2),
                ("2026-11-28", 12, 3),
                ("2026-11-29", 18, 2),
                ("2026-11-30", 6, 1)
            ]
        );
        let kept: Vec<(&str, &str, i64)> = earlier
            .iter()
            .flat_map(|n| {
                n.apps
                    .iter()
                    .map(|a| (n.date.as_str(), a.key.as_str(), a.duration_ms))
            })
            .collect();
        assert_eq!(
            kept,
            [("2026-11-27", "report", 2), ("2026-11-28", "etl", 3)]
        );
    }

    #[test]
    fn an_error_names_its_input_once() {
        let e = night_error("logs/x.zstd", "logs/x.zstd: byte 0: not a Spark event log");
        assert_eq!(
            (e.input.as_str(), e.error.as_str()),
            ("logs/x.zstd", "byte 0: not a Spark event log")
        );
        let e = night_error("logs/x.zstd", "cannot decode");
        assert_eq!(e.error, "cannot decode");
    }
}
