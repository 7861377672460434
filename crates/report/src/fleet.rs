//! The nightly fleet: one night's applications, how they compare with earlier nights, and the
//! fleet's `index.html`.
//!
//! A [`Night`] is what `sparkdiag batch` keeps of each night (`OUTDIR/nights/<date>.json`): enough
//! to rank the applications and to compare the next night with it. [`compare`] matches each
//! application with its latest earlier run by key (the application name unless configured) and
//! says what got worse: runtime or wasted time up by more than a threshold, new findings.

use serde::{Deserialize, Serialize};

use crate::format::{duration, escape};

/// One application of a night.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NightApp {
    /// What matches runs across nights (the application name unless configured).
    pub key: String,
    pub app_id: String,
    pub name: String,
    pub status: String,
    pub duration_ms: i64,
    /// Executor time the tasks used: what the run cost in compute.
    #[serde(default)]
    pub core_ms: i64,
    /// Sum of the findings' recoverable time.
    pub impact_ms: i64,
    /// Codes of findings at medium severity or above.
    pub findings: Vec<String>,
    pub worst_severity: Option<String>,
    pub top_finding: Option<String>,
    /// The per-application HTML report, relative to the output folder.
    pub report: String,
    /// Jobs started, and how many of them failed. A driver that catches a failed job still
    /// exits 0, so `status` alone can say `succeeded` about a run that lost work.
    #[serde(default)]
    pub jobs: usize,
    #[serde(default)]
    pub failed_jobs: usize,
    /// The log it was read from, as found under the batch's directories: what tells apart
    /// applications that share a name.
    #[serde(default)]
    pub input: String,
}

impl NightApp {
    /// The application itself failed or did not finish, or one of its jobs failed.
    pub fn failed(&self) -> bool {
        self.failed_jobs > 0 || self.status != "succeeded"
    }

    /// `status` with the jobs that failed: "succeeded, 1 of 5 jobs failed".
    pub fn outcome(&self) -> String {
        if self.failed_jobs == 0 {
            return self.status.clone();
        }
        format!(
            "{}, {} of {} job{} failed",
            self.status,
            self.failed_jobs,
            self.jobs,
            if self.jobs == 1 { "" } else { "s" }
        )
    }
}

/// Where an application stands in the index's order: those that failed or lost a job first (a
/// failure is the first thing to look at, however little time it cost), then by recoverable
/// time, then by runtime; smallest first. A few bytes, so a night too large to hold can rank
/// its applications by this and read their rows back in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    succeeded: bool,
    recoverable_ms: std::cmp::Reverse<i64>,
    runtime_ms: std::cmp::Reverse<i64>,
}

impl NightApp {
    /// Where this application stands in the index's order ([`ranked_apps`]).
    pub fn rank(&self) -> Rank {
        Rank {
            succeeded: !self.failed(),
            recoverable_ms: std::cmp::Reverse(self.impact_ms),
            runtime_ms: std::cmp::Reverse(self.duration_ms),
        }
    }
}

/// What the index's summary line and the chart over the nights need of a night's
/// applications, added up one application at a time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppTotals {
    pub apps: usize,
    /// Applications that failed or lost a job ([`NightApp::failed`]).
    pub failed: usize,
    pub runtime_ms: i64,
    pub recoverable_ms: i64,
    /// Findings at medium severity or above, over every application.
    pub findings: usize,
}

impl AppTotals {
    pub fn of(apps: &[NightApp]) -> Self {
        let mut totals = AppTotals::default();
        apps.iter().for_each(|app| totals.add(app));
        totals
    }

    pub fn add(&mut self, app: &NightApp) {
        self.apps += 1;
        self.failed += usize::from(app.failed());
        self.runtime_ms += app.duration_ms;
        self.recoverable_ms += app.impact_ms;
        self.findings += app.findings.len();
    }
}

/// A log that could not be read, with why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NightError {
    pub input: String,
    pub error: String,
}

/// One of the night's worst findings, across applications.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NightFinding {
    pub app: String,
    pub rule: String,
    pub severity: String,
    pub title: String,
    pub impact_ms: i64,
    pub report: String,
}

/// What `sparkdiag batch` keeps of one night.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Night {
    /// `YYYY-MM-DD`.
    pub date: String,
    pub apps: Vec<NightApp>,
    pub errors: Vec<NightError>,
    pub worst_findings: Vec<NightFinding>,
    /// Logs still being written, skipped (batch's `--include-in-progress` reads them).
    #[serde(default)]
    pub in_progress: Vec<String>,
}

impl Night {
    /// A night of `date` with nothing in it yet.
    pub fn new(date: &str) -> Self {
        Night {
            date: date.to_string(),
            apps: Vec::new(),
            errors: Vec::new(),
            worst_findings: Vec::new(),
            in_progress: Vec::new(),
        }
    }
}

/// What the index's chart over the nights shows of one night: kept instead of the night, so
/// that drawing 30 nights needs 30 of these, not 30 nights of applications.
#[derive(Debug, Clone, PartialEq)]
pub struct NightTotals {
    pub date: String,
    /// The applications' runtimes, summed.
    pub runtime_ms: i64,
    /// Findings at medium severity or above, over every application.
    pub findings: usize,
}

impl NightTotals {
    pub fn of(night: &Night) -> Self {
        NightTotals::from_totals(&night.date, &AppTotals::of(&night.apps))
    }

    /// The totals of the night of `date` whose applications add up to `totals`.
    pub fn from_totals(date: &str, totals: &AppTotals) -> Self {
        NightTotals {
            date: date.to_string(),
            runtime_ms: totals.runtime_ms,
            findings: totals.findings,
        }
    }
}

/// How an application changed since its latest earlier run.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub key: String,
    pub app_id: String,
    pub regression: bool,
    pub what: String,
    /// The earlier night compared with.
    pub since: String,
    pub report: String,
}

/// Compares `night` with the latest earlier run of each application in `earlier` (any order).
/// A regression is runtime, executor time (what the run cost) or recoverable time up by more
/// than `threshold` (0.2 = 20 %) and at least `min_ms`, or a new finding at medium severity or above; findings that went away are reported
/// as improvements.
pub fn compare(night: &Night, earlier: &[Night], threshold: f64, min_ms: i64) -> Vec<Change> {
    let mut nights: Vec<&Night> = earlier.iter().filter(|n| n.date < night.date).collect();
    nights.sort_by(|a, b| b.date.cmp(&a.date));
    let mut changes = Vec::new();
    for app in &night.apps {
        let before = nights.iter().find_map(|n| {
            n.apps
                .iter()
                .find(|a| a.key == app.key)
                .map(|a| (n.date.as_str(), a))
        });
        if let Some(before) = before {
            compare_app(app, before, threshold, min_ms, &mut changes);
        }
    }
    changes
}

/// [`compare`] for one application and its latest earlier run `before`, on the night `since`:
/// pushes what changed onto `changes`.
pub fn compare_app(
    app: &NightApp,
    (since, before): (&str, &NightApp),
    threshold: f64,
    min_ms: i64,
    changes: &mut Vec<Change>,
) {
    let mut push = |regression: bool, what: String| {
        changes.push(Change {
            key: app.key.clone(),
            app_id: app.app_id.clone(),
            regression,
            what,
            since: since.to_string(),
            report: app.report.clone(),
        })
    };
    let grew =
        |b: i64, a: i64| a - b >= min_ms && (b <= 0 || (a - b) as f64 / b as f64 > threshold);
    for (what, was, now) in [
        ("runtime", before.duration_ms, app.duration_ms),
        ("executor time", before.core_ms, app.core_ms),
        ("recoverable time", before.impact_ms, app.impact_ms),
    ] {
        if grew(was, now) {
            push(
                true,
                format!(
                    "{what} {} → {} ({})",
                    duration(was),
                    duration(now),
                    percent(was, now)
                ),
            );
        }
    }
    for code in app.findings.iter().filter(|c| !before.findings.contains(c)) {
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

fn percent(before: i64, after: i64) -> String {
    if before <= 0 {
        "new".into()
    } else {
        format!("{:+.0}%", 100.0 * (after - before) as f64 / before as f64)
    }
}

const STYLE: &str = "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #eee;vertical-align:top}
th{color:#555;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums}.muted{color:#777}
.reg{color:#b3261e}.imp{color:#1e7b34}.sev{font-size:.8em;font-weight:700;padding:.1em .45em;border-radius:3px;color:#fff}
.critical,.high{background:#c4452d}.medium{background:#c99a0e}.low,.info{background:#5b7db1}figure{margin:1em 0}figure svg{display:block;max-width:100%;height:auto}";

/// The fleet's index page: regressions first, applications ranked by recoverable time, the
/// worst findings across the fleet, unreadable logs, and runtime and findings over the nights
/// in `history` (any order; the latest 30 are drawn).
pub fn render_index(night: &Night, history: &[NightTotals], changes: &[Change]) -> String {
    let mut out = Vec::new();
    let ranked = ranked_apps(night).into_iter().map(Ok);
    write_index(
        &mut out,
        night,
        &AppTotals::of(&night.apps),
        ranked,
        history,
        changes,
    )
    .expect("writing to memory does not fail");
    String::from_utf8(out).expect("the page is built from strings")
}

/// [`render_index`] written to `out` as it goes, for a night too large to hold: its
/// applications are added up in `totals` and come one at a time from `ranked`, in the order
/// [`NightApp::rank`] gives (a row that cannot be read stops the page with its error);
/// `night.apps` is not read, only its date, errors, skipped logs and worst findings.
pub fn write_index<A: std::borrow::Borrow<NightApp>>(
    out: &mut impl std::io::Write,
    night: &Night,
    totals: &AppTotals,
    ranked: impl IntoIterator<Item = std::io::Result<A>>,
    history: &[NightTotals],
    changes: &[Change],
) -> std::io::Result<()> {
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>sparkdiag fleet report {date}</title><style>{STYLE}</style></head><body>\n\
         <h1>sparkdiag fleet report — {date}</h1>\n<p class=\"summary\">{apps} application(s): <span class=\"{failed_class}\">{failed} failed or with failed jobs</span>; {errors} unreadable log(s); {skipped} still being written, skipped.</p>\n\
         <p class=\"muted\">{total} of runtime, about {wasted} of it recoverable.</p>\n",
        date = escape(&night.date),
        apps = totals.apps,
        failed = totals.failed,
        failed_class = if totals.failed > 0 { "reg" } else { "muted" },
        errors = night.errors.len(),
        skipped = night.in_progress.len(),
        total = duration(totals.runtime_ms),
        wasted = duration(totals.recoverable_ms),
    )?;
    let regressions: Vec<&Change> = changes.iter().filter(|c| c.regression).collect();
    let improvements: Vec<&Change> = changes.iter().filter(|c| !c.regression).collect();
    writeln!(out, "<h2>What got worse since the previous run</h2>")?;
    if regressions.is_empty() {
        writeln!(out, "<p>Nothing regressed.</p>")?;
    } else {
        writeln!(
            out,
            "<table><tr><th>application</th><th>change</th><th>since</th></tr>"
        )?;
        for c in &regressions {
            writeln!(
                out,
                "<tr><td><a href=\"{}\">{}</a></td><td class=\"reg\">{}</td><td>{}</td></tr>",
                escape(&c.report),
                escape(&c.key),
                escape(&c.what),
                escape(&c.since)
            )?;
        }
        writeln!(out, "</table>")?;
    }
    if !improvements.is_empty() {
        writeln!(
            out,
            "<p class=\"imp\">Better: {}</p>",
            improvements
                .iter()
                .map(|c| escape(&format!("{}: {}", c.key, c.what)))
                .collect::<Vec<_>>()
                .join("; ")
        )?;
    }

    writeln!(
        out,
        "<h2>Applications, failed first, then most recoverable time first</h2>\n<table><tr><th>application</th><th>status</th><th>runtime</th><th>recoverable</th><th>worst</th><th>top finding</th></tr>"
    )?;
    for a in ranked {
        let a = a?;
        let a = a.borrow();
        let worst = a
            .worst_severity
            .as_deref()
            .map(|s| format!("<span class=\"sev {s}\">{}</span>", escape(s)))
            .unwrap_or_default();
        // The id and the log's path tell apart applications that share a name.
        let source = if a.input.is_empty() {
            escape(&a.app_id)
        } else {
            format!("{} · {}", escape(&a.app_id), escape(&a.input))
        };
        let status = if a.failed() {
            format!("<span class=\"reg\">{}</span>", escape(&a.outcome()))
        } else {
            escape(&a.outcome())
        };
        writeln!(
            out,
            "<tr><td><a href=\"{}\">{}</a><br><span class=\"muted\">{source}</span></td><td>{status}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td>{worst}</td><td>{}</td></tr>",
            escape(&a.report),
            escape(&a.name),
            duration(a.duration_ms),
            duration(a.impact_ms),
            escape(a.top_finding.as_deref().unwrap_or(""))
        )?;
    }
    writeln!(out, "</table>")?;

    if !night.worst_findings.is_empty() {
        writeln!(
            out,
            "<h2>The worst findings across the fleet</h2>\n<table><tr><th>saves</th><th>severity</th><th>rule</th><th>application</th><th>finding</th></tr>"
        )?;
        for f in &night.worst_findings {
            writeln!(
                out,
                "<tr><td class=\"n\">{}</td><td><span class=\"sev {sev}\">{sev}</span></td><td>{}</td><td><a href=\"{}\">{}</a></td><td>{}</td></tr>",
                duration(f.impact_ms),
                escape(&f.rule),
                escape(&f.report),
                escape(&f.app),
                escape(&f.title),
                sev = escape(&f.severity),
            )?;
        }
        writeln!(out, "</table>")?;
    }
    if !night.errors.is_empty() {
        writeln!(
            out,
            "<h2>Logs that could not be read</h2>\n<table><tr><th>input</th><th>error</th></tr>"
        )?;
        for e in &night.errors {
            writeln!(
                out,
                "<tr><td>{}</td><td>{}</td></tr>",
                escape(&e.input),
                escape(&e.error)
            )?;
        }
        writeln!(out, "</table>")?;
    }

    if !night.in_progress.is_empty() {
        writeln!(
            out,
            "<h2>Logs still being written, skipped</h2>\n<p class=\"muted\">Run with --include-in-progress to analyse them as far as they go.</p>\n<ul>"
        )?;
        for input in &night.in_progress {
            writeln!(out, "<li>{}</li>", escape(input))?;
        }
        writeln!(out, "</ul>")?;
    }

    let mut nights: Vec<&NightTotals> = history.iter().collect();
    nights.sort_by(|a, b| a.date.cmp(&b.date));
    let nights: Vec<&NightTotals> = nights.into_iter().rev().take(30).rev().collect();
    writeln!(out, "<h2>Over the nights</h2>")?;
    // The axis counts in the unit the nights' runtimes are read in: seconds for a test
    // fleet, minutes or hours for a real one.
    let longest = nights.iter().map(|n| n.runtime_ms).max().unwrap_or(0);
    let (unit_ms, unit) = match longest {
        ..120_000 => (1_000.0, "seconds"),
        120_000..7_200_000 => (60_000.0, "minutes"),
        _ => (3_600_000.0, "hours"),
    };
    let runtime: Vec<(String, f64)> = nights
        .iter()
        .map(|n| (n.date.clone(), n.runtime_ms as f64 / unit_ms))
        .collect();
    let findings: Vec<(String, f64)> = nights
        .iter()
        .map(|n| (n.date.clone(), n.findings as f64))
        .collect();
    out.write_all(
        bars("Total runtime per night", unit, &runtime, false, &|v| {
            duration((v * unit_ms).round() as i64)
        })
        .as_bytes(),
    )?;
    out.write_all(
        bars(
            "Findings at medium severity or above per night",
            "findings",
            &findings,
            true,
            &|n| format!("{n:.0}"),
        )
        .as_bytes(),
    )?;
    out.write_all(b"</body></html>\n")
}

/// The night's applications in the order the index lists them: those that failed or lost a job
/// first (a failure is the first thing to look at, however little time it cost), then by
/// recoverable time, then by runtime.
pub fn ranked_apps(night: &Night) -> Vec<&NightApp> {
    let mut apps: Vec<&NightApp> = night.apps.iter().collect();
    // Stable: among equals, the order the logs were found.
    apps.sort_by_key(|a| a.rank());
    apps
}

/// A chart of one value per night, drawn as the report's charts are ([`crate::charts`]).
fn bars(
    title: &'static str,
    unit: &str,
    values: &[(String, f64)],
    whole: bool,
    value: &dyn Fn(f64) -> String,
) -> String {
    let chart = crate::charts::night_bars(title, unit, values, whole, value);
    match chart.svg {
        Some(svg) => format!("<figure>{svg}</figure>\n"),
        None => format!("<p class=\"muted\">{}</p>\n", escape(&chart.caption)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(key: &str, duration_ms: i64, findings: &[&str]) -> NightApp {
        NightApp {
            key: key.into(),
            app_id: format!("id-{key}"),
            name: key.into(),
            status: "succeeded".into(),
            duration_ms,
            core_ms: 0,
            impact_ms: 0,
            findings: findings.iter().map(|s| s.to_string()).collect(),
            worst_severity: None,
            top_finding: None,
            report: format!("apps/{key}.html"),
            jobs: 1,
            failed_jobs: 0,
            input: format!("logs/{key}"),
        }
    }

    fn night(date: &str, apps: Vec<NightApp>) -> Night {
        Night {
            apps,
            ..Night::new(date)
        }
    }

    #[test]
    fn failed_applications_come_first_and_are_counted() {
        let mut failed = app("lost-a-job", 10_000, &["FA001"]);
        failed.jobs = 2;
        failed.failed_jobs = 1;
        let mut costly = app("costly", 900_000, &["SK001"]);
        costly.impact_ms = 600_000;
        let mut crashed = app("crashed", 5_000, &[]);
        crashed.status = "failed".into();
        let now = night("2026-11-29", vec![costly, failed, app("fine", 1_000, &[])]);
        let order: Vec<&str> = ranked_apps(&now).iter().map(|a| a.key.as_str()).collect();
        assert_eq!(order, ["lost-a-job", "costly", "fine"]);
        assert_eq!(now.apps[1].outcome(), "succeeded, 1 of 2 jobs failed");
        assert_eq!(crashed.outcome(), "failed");
        assert!(crashed.failed());

        let html = render_index(&now, &[NightTotals::of(&now)], &[]);
        assert!(
            html.contains(
                "3 application(s): <span class=\"reg\">1 failed or with failed jobs</span>"
            ),
            "{html}"
        );
        assert!(html.contains("<span class=\"reg\">succeeded, 1 of 2 jobs failed</span>"));

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
        let html = render_index(&now, &[NightTotals::of(&now)], &changes);
        assert!(html.contains("class=\"reg\">runtime 10m 00s → 15m 00s (+50%)"));
    }

    /// The text of each `<text>` of an SVG, as plotters writes them (on lines of their own).
    fn texts(svg: &str) -> Vec<String> {
        svg.split("<text")
            .skip(1)
            .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim().to_string()))
            .collect()
    }

    #[test]
    fn one_night_is_a_short_labelled_bar_on_a_round_axis() {
        let now = night("2026-11-29", vec![app("etl", 754_000, &["DR002"])]);
        let html = render_index(&now, &[NightTotals::of(&now)], &[]);
        let chart = &html[html.find("aria-label=\"Total runtime per night\"").unwrap()..];
        let chart = &chart[..chart.find("</svg>").unwrap()];
        // The bar is the one rectangle in the bars' blue (plotters writes colours in upper case).
        let bar = chart
            .split("<rect")
            .find(|r| r.contains("fill=\"#4673B4\""))
            .expect("one bar");
        let width: f64 = bar
            .split("width=\"")
            .nth(1)
            .and_then(|w| w.split('"').next())
            .and_then(|w| w.parse().ok())
            .expect("its width");
        assert!(
            width <= crate::charts::MAX_NIGHT_BAR,
            "one night is not one giant bar: {width}"
        );
        let labels = texts(chart);
        assert!(
            labels.iter().any(|t| t == "12m 34s"),
            "the bar says its value: {labels:?}"
        );
        // 12.6 minutes on an axis of round steps, its top labelled.
        for tick in ["0", "5", "10", "15"] {
            assert!(labels.iter().any(|t| t == tick), "{tick}: {labels:?}");
        }
        assert!(labels.iter().any(|t| t == "11-29"), "{labels:?}");
        // One finding is counted on whole ticks, not 0.0 0.5 1.0.
        let findings = &html[html.find("aria-label=\"Findings at").unwrap()..];
        let findings = texts(&findings[..findings.find("</svg>").unwrap()]);
        assert!(
            findings.iter().any(|t| t == "1") && findings.iter().any(|t| t == "2"),
            "{findings:?}"
        );
        assert!(!findings.iter().any(|t| t == "0.5"), "{findings:?}");
    }
}
