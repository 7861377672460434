//! How tonight's applications changed since their earlier runs: what `sparkdiag batch` flags as
//! a regression or an improvement on the index page. The nights themselves are
//! `sparkdiag_contract::night` types; nothing here renders.

use sparkdiag_contract::GROWTH_FACTOR;
#[cfg(test)]
use sparkdiag_contract::night::Night;
use sparkdiag_contract::night::{Change, NightApp};
use sparkdiag_contract::units::{duration, human_bytes, thousands};

/// How many of a key's latest earlier nights make its band.
pub const HISTORY_NIGHTS: usize = 14;
/// With fewer earlier nights than this there is no band yet: the fixed threshold applies.
pub const MIN_HISTORY: usize = 5;
/// How many (scaled) median absolute deviations above the median a night must be.
pub const BAND_K: f64 = 3.0;
/// 1.4826 × MAD estimates the standard deviation of normal noise.
const MAD_SCALE: f64 = 1.4826;
/// The MAD is taken as at least this share of the median: identical nights have no spread, and
/// one second more is not a regression.
const MIN_SPREAD: f64 = 0.05;

/// What a key's band is made of, of one earlier night's run.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub duration_ms: i64,
    pub core_ms: i64,
    pub impact_ms: i64,
    pub findings: Vec<String>,
}

impl Point {
    pub fn of(app: &NightApp) -> Point {
        Point {
            duration_ms: app.duration_ms,
            core_ms: app.core_ms,
            impact_ms: app.impact_ms,
            findings: app.findings.clone(),
        }
    }
}

/// The median of `values` (not empty).
fn median(values: &mut [i64]) -> f64 {
    values.sort_unstable();
    let n = values.len();
    if n % 2 == 1 {
        values[n / 2] as f64
    } else {
        (values[n / 2 - 1] as f64 + values[n / 2] as f64) / 2.0
    }
}

/// A key's usual value and how far above it a night may go: median and
/// `BAND_K × 1.4826 × MAD` (the MAD at least [`MIN_SPREAD`] of the median).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    pub median: f64,
    pub width: f64,
    pub nights: usize,
}

impl Band {
    /// The band of `values`, or `None` with fewer than [`MIN_HISTORY`] of them.
    pub fn of(values: &[i64]) -> Option<Band> {
        if values.len() < MIN_HISTORY {
            return None;
        }
        let mut v = values.to_vec();
        let median = median(&mut v);
        let mut deviations: Vec<i64> = values
            .iter()
            .map(|x| (*x as f64 - median).abs().round() as i64)
            .collect();
        let mad = crate::compare::median(&mut deviations).max(MIN_SPREAD * median);
        Some(Band {
            median,
            width: BAND_K * MAD_SCALE * mad,
            nights: values.len(),
        })
    }

    /// `value` is above the band, and by at least `min_ms` above the median.
    pub fn exceeded_by(&self, value: i64, min_ms: i64) -> bool {
        value as f64 > self.median + self.width && value as f64 - self.median >= min_ms as f64
    }
}

/// Compares `night` with the earlier nights `earlier` (any order): each application with its
/// latest earlier run, and with its band over the last [`HISTORY_NIGHTS`] nights (see
/// [`compare_app`]). The batch itself streams the history key by key
/// ([`crate::history`]) rather than holding every night, so only the tests compare whole nights.
#[cfg(test)]
pub fn compare(night: &Night, earlier: &[Night], threshold: f64, min_ms: i64) -> Vec<Change> {
    let mut nights: Vec<&Night> = earlier.iter().filter(|n| n.date < night.date).collect();
    nights.sort_by(|a, b| b.date.cmp(&a.date));
    let mut changes = Vec::new();
    for app in &night.apps {
        let runs: Vec<(&str, &NightApp)> = nights
            .iter()
            .filter_map(|n| {
                n.apps
                    .iter()
                    .find(|a| a.key == app.key)
                    .map(|a| (n.date.as_str(), a))
            })
            .take(HISTORY_NIGHTS)
            .collect();
        if let Some(&before) = runs.first() {
            let band: Vec<Point> = runs.iter().map(|(_, a)| Point::of(a)).collect();
            compare_app(app, before, &band, threshold, min_ms, &mut changes);
        }
    }
    changes
}

/// [`compare`] for one application, its latest earlier run `before` on the night `since`, and
/// its earlier nights `history` (latest first): pushes what changed onto `changes`.
///
/// With [`MIN_HISTORY`] earlier nights or more, runtime, executor time and recoverable time
/// are a regression only above the key's band (median + 3 × 1.4826 × MAD of those nights) and
/// by at least `min_ms`; a finding is new only when none of those nights had it. With fewer,
/// a regression is up by more than `threshold` (0.2 = 20 %) and at least `min_ms` on the
/// latest earlier run, or a finding that run did not have. Findings that went away since the
/// latest run are improvements.
pub fn compare_app(
    app: &NightApp,
    (since, before): (&str, &NightApp),
    history: &[Point],
    threshold: f64,
    min_ms: i64,
    changes: &mut Vec<Change>,
) {
    let mut push_with = |regression: bool, what: String, cause: Option<String>| {
        changes.push(Change {
            key: app.key.clone(),
            app_id: app.app_id.clone(),
            regression,
            what,
            since: since.to_string(),
            report: app.report.clone(),
            cause,
            fixes: Vec::new(),
        })
    };
    // A slower or costlier night says why it most likely is, from what the two summaries hold.
    let mut slower =
        |metric: &str, what: String| push_with(true, what, Some(likely_cause(before, app, metric)));
    let grew =
        |b: i64, a: i64| a - b >= min_ms && (b <= 0 || (a - b) as f64 / b as f64 > threshold);
    let banded = history.len() >= MIN_HISTORY;
    for (what, was, now, of) in [
        (
            "runtime",
            before.duration_ms,
            app.duration_ms,
            (|p: &Point| p.duration_ms) as fn(&Point) -> i64,
        ),
        ("executor time", before.core_ms, app.core_ms, |p: &Point| {
            p.core_ms
        }),
        (
            "recoverable time",
            before.impact_ms,
            app.impact_ms,
            |p: &Point| p.impact_ms,
        ),
    ] {
        let values: Vec<i64> = history.iter().map(of).collect();
        match Band::of(&values).filter(|_| banded) {
            Some(band) => {
                if band.exceeded_by(now, min_ms) {
                    slower(
                        what,
                        format!(
                            "{what} {} against its usual {} ± {} over {} nights ({} on the median)",
                            duration(now),
                            duration(band.median.round() as i64),
                            duration(band.width.round() as i64),
                            band.nights,
                            percent(band.median.round() as i64, now)
                        ),
                    );
                }
            }
            None => {
                if grew(was, now) {
                    slower(
                        what,
                        format!(
                            "{what} {} → {} ({})",
                            duration(was),
                            duration(now),
                            percent(was, now)
                        ),
                    );
                }
            }
        }
    }
    let seen = |code: &String| {
        if banded {
            history.iter().any(|p| p.findings.contains(code))
        } else {
            before.findings.contains(code)
        }
    };
    let mut push = |regression: bool, what: String| push_with(regression, what, None);
    for code in app.findings.iter().filter(|c| !seen(c)) {
        push(true, format!("new finding {code}"));
    }
    for code in before.findings.iter().filter(|c| !app.findings.contains(c)) {
        push(false, format!("{code} went away"));
    }
    if app.status != before.status && app.status != "succeeded" {
        push(true, format!("status {} → {}", before.status, app.status));
    } else if app.failed_jobs > before.failed_jobs {
        push(
            true,
            format!("failed jobs {} → {}", before.failed_jobs, app.failed_jobs),
        );
    }
}

/// Why `now`'s `metric` (`runtime`, `executor time`, `recoverable time`) most likely went up
/// since `before`, from what a night keeps of each: the input (rows, else bytes), Spark's
/// version, the executors, and for the runtime the driver-only time. With none of these, the
/// `sparkdiag diff` of the two logs, which measures every cause (plans, settings, skew).
pub fn likely_cause(before: &NightApp, now: &NightApp, metric: &str) -> String {
    let mut causes = Vec::new();
    let (basis, was, is) = if before.input_rows > 0 && now.input_rows > 0 {
        ("rows read", before.input_rows, now.input_rows)
    } else {
        ("bytes read", before.input_bytes, now.input_bytes)
    };
    if was > 0 && is > 0 {
        let factor = is as f64 / was as f64;
        let shown = |v: i64| {
            if basis == "rows read" {
                thousands(v)
            } else {
                human_bytes(v)
            }
        };
        if factor > GROWTH_FACTOR {
            causes.push(format!(
                "the input grew {factor:.1}× ({} → {} {basis})",
                shown(was),
                shown(is)
            ));
        } else if factor < 1.0 / GROWTH_FACTOR {
            causes.push(format!(
                "the input shrank {:.1}× ({} → {} {basis}), so the time went elsewhere",
                1.0 / factor,
                shown(was),
                shown(is)
            ));
        }
    }
    if let (Some(b), Some(a)) = (&before.spark_version, &now.spark_version)
        && b != a
    {
        causes.push(format!("Spark {b} → {a}"));
    }
    if before.executors > 0 && now.executors > 0 && before.executors != now.executors {
        causes.push(format!(
            "{} → {} executors",
            before.executors, now.executors
        ));
    }
    let more_driver = now.driver_ms - before.driver_ms;
    let slower_by = now.duration_ms - before.duration_ms;
    if metric == "runtime" && more_driver > 0 && slower_by > 0 && more_driver * 2 >= slower_by {
        causes.push(format!(
            "more driver-only time (no job running): {} → {}",
            duration(before.driver_ms),
            duration(now.driver_ms)
        ));
    }
    if causes.is_empty() {
        return format!(
            "not the input, Spark version or executors (all the same); `sparkdiag diff {} {}` compares the \
             plans, settings and skew",
            shell_word(&before.input),
            shell_word(&now.input)
        );
    }
    causes.join("; ")
}

/// `path` as one word of a shell command to paste: as it is when it holds nothing a shell
/// reads specially, else in single quotes (log folders on shared storage often hold spaces).
fn shell_word(path: &str) -> String {
    let plain = !path.is_empty()
        && path
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:=@%+,-".contains(c));
    if plain {
        path.to_string()
    } else {
        format!("'{}'", path.replace('\'', r"'\''"))
    }
}

fn percent(before: i64, after: i64) -> String {
    if before <= 0 {
        "new".into()
    } else {
        sparkdiag_contract::units::share_change((after - before) as f64 / before as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparkdiag_contract::night::testing::{app, night};

    #[test]
    fn compares_with_each_apps_latest_earlier_run() {
        let older = night(
            "2026-11-27",
            vec![app("etl", 100_000, &[]), app("report", 50_000, &["SK001"])],
        );
        let previous = night("2026-11-28", vec![app("etl", 600_000, &["DR002"])]);
        let now = night(
            "2026-11-29",
            vec![
                app("etl", 900_000, &["DR002", "SK001"]),
                app("report", 52_000, &[]),
            ],
        );
        let changes = compare(&now, &[previous, older], 0.2, 60_000);
        let text: Vec<String> = changes
            .iter()
            .map(|c| format!("{} {} {} {}", c.key, c.regression, c.what, c.since))
            .collect();
        assert!(
            text.iter()
                .any(|t| t.starts_with("etl true runtime 10m 00s → 15m 00s (+50%) 2026-11-28")),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|t| t == "etl true new finding SK001 2026-11-28"),
            "{text:?}"
        );
        assert!(
            text.iter()
                .any(|t| t == "report false SK001 went away 2026-11-27"),
            "{text:?}"
        );
        assert!(
            !text.iter().any(|t| t.starts_with("report true")),
            "52 s vs 50 s is noise: {text:?}"
        );
    }

    #[test]
    fn the_band_is_the_median_and_three_scaled_mads() {
        assert_eq!(Band::of(&[1, 2, 3, 4]), None, "four nights make no band");
        let band = Band::of(&[100_000, 104_000, 96_000, 101_000, 99_000]).unwrap();
        assert_eq!(band.median, 100_000.0);
        // MAD 1 s, below 5 % of the median: the spread is 5 s.
        assert!(
            (band.width - 3.0 * 1.4826 * 5_000.0).abs() < 1e-6,
            "{band:?}"
        );
        assert!(!band.exceeded_by(120_000, 1_000), "inside the band");
        assert!(band.exceeded_by(125_000, 1_000));
        assert!(!band.exceeded_by(125_000, 60_000), "and at least min_ms");
        // One wild night does not widen the band much.
        let band = Band::of(&[100_000, 101_000, 99_000, 100_000, 400_000]).unwrap();
        assert!(band.width < 30_000.0, "{band:?}");
    }

    #[test]
    fn with_a_history_only_a_night_outside_its_band_regresses() {
        let nights: Vec<Night> = [100_000, 130_000, 95_000, 120_000, 105_000, 98_000]
            .iter()
            .enumerate()
            .map(|(i, ms)| night(&format!("2026-11-0{}", i + 1), vec![app("etl", *ms, &[])]))
            .collect();
        // +30 % on the latest night, but inside the noise this job has.
        let noisy = night("2026-11-07", vec![app("etl", 128_000, &[])]);
        let changes = compare(&noisy, &nights, 0.2, 1_000);
        assert!(!changes.iter().any(|c| c.regression), "{changes:?}");
        let slow = night("2026-11-07", vec![app("etl", 300_000, &[])]);
        let changes = compare(&slow, &nights, 0.2, 1_000);
        let what: Vec<&str> = changes
            .iter()
            .filter(|c| c.regression)
            .map(|c| c.what.as_str())
            .collect();
        assert_eq!(what.len(), 1, "{what:?}");
        assert!(
            what[0].starts_with("runtime 5m 00s against its usual 1m 42s"),
            "{what:?}"
        );
    }

    #[test]
    fn a_job_lost_since_the_last_run_is_a_regression() {
        let mut failed = app("lost-a-job", 10_000, &["FA001"]);
        failed.jobs = 2;
        failed.failed_jobs = 1;
        let now = night("2026-11-29", vec![failed]);
        let before = night("2026-11-28", vec![app("lost-a-job", 10_000, &["FA001"])]);
        let changes = compare(&now, &[before], 0.2, 60_000);
        assert!(
            changes
                .iter()
                .any(|c| c.regression && c.what == "failed jobs 0 → 1"),
            "{changes:?}"
        );
    }

    #[test]
    fn a_regression_names_what_the_summaries_show_changed() {
        let mut before = app("etl", 100_000, &[]);
        before.input = "logs/mon.zstd".into();
        before.input_rows = 1_000_000;
        before.spark_version = Some("3.5.1".into());
        before.driver_ms = 10_000;
        let mut now = app("etl", 200_000, &[]);
        now.input = "logs/tue.zstd".into();
        now.input_rows = 1_050_000;
        now.spark_version = Some("4.0.0".into());
        now.executors = 1;
        now.driver_ms = 70_000;
        let cause = likely_cause(&before, &now, "runtime");
        assert_eq!(
            cause,
            "Spark 3.5.1 → 4.0.0; 2 → 1 executors; more driver-only time (no job running): \
             10.0 s → 1m 10s",
            "5 % more rows is not growth"
        );
        // The driver's time explains the runtime, not the executors' time.
        assert_eq!(
            likely_cause(&before, &now, "executor time"),
            "Spark 3.5.1 → 4.0.0; 2 → 1 executors"
        );
        // Nothing the summaries hold changed: the diff of the two logs to run.
        let same = app("etl", 200_000, &[]);
        let said = likely_cause(&app("etl", 100_000, &[]), &same, "runtime");
        assert!(
            said.contains("`sparkdiag diff logs/etl logs/etl`"),
            "{said}"
        );
        // A path a shell would split is quoted, so the command pastes as it is.
        let mut spaced = app("etl", 200_000, &[]);
        spaced.input = "/mnt/team logs/it's/app.zstd".into();
        let said = likely_cause(&app("etl", 100_000, &[]), &spaced, "runtime");
        assert!(
            said.contains(r"`sparkdiag diff logs/etl '/mnt/team logs/it'\''s/app.zstd'`"),
            "{said}"
        );
        // The regression carries it.
        let changes = compare(
            &night("2026-11-29", vec![now]),
            &[night("2026-11-28", vec![before])],
            0.2,
            60_000,
        );
        let runtime = changes
            .iter()
            .find(|c| c.what.starts_with("runtime"))
            .unwrap();
        assert!(runtime.cause.as_deref().unwrap().starts_with("Spark 3.5.1"));
    }
}
