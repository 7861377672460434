//! The nightly fleet: one night's applications, how they compare with earlier nights, and the
//! fleet's `index.html`.
//!
//! A [`Night`] (`sparkdiag_contract::night`) is what `sparkdiag batch` keeps of each night; batch
//! compares it with the earlier nights and hands the [`Change`]s here to be drawn.

use sparkdiag_contract::night::{AppTotals, Change, Night, NightApp, NightTotals};

use crate::format::{duration, escape};

/// The page fits the window at any width down to a phone's: long names and paths break
/// anywhere rather than widen a table, and below 760 px each table row becomes a card whose
/// cells are labelled with their column (`data-label`), as a table cannot fit 420 px.
const STYLE: &str = "body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em auto;max-width:1100px;color:#222;padding:0 1em}
h1{font-size:1.5em;margin-bottom:.2em;overflow-wrap:anywhere}h2{font-size:1.15em;margin-top:1.8em;border-bottom:1px solid #ddd;padding-bottom:.2em}
table{border-collapse:collapse;width:100%}th,td{text-align:left;padding:.35em .6em;border-bottom:1px solid #eee;vertical-align:top;overflow-wrap:anywhere}
th{color:#555;font-weight:600}td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}.muted{color:#777}
p,li{overflow-wrap:anywhere}
.reg{color:#b3261e}.imp{color:#1e7b34}.sev{font-size:.8em;font-weight:700;padding:.1em .45em;border-radius:3px;color:#fff}
.critical,.high{background:#c4452d}.medium{background:#c99a0e}.low,.info{background:#5b7db1}figure{margin:1em 0}figure svg{display:block;max-width:100%;height:auto}
@media (max-width:760px){body{margin:1em auto}table,tbody,tr,td{display:block;width:auto}tr.head{display:none}
tr{border-bottom:1px solid #ddd;padding:.4em 0}td{border:0;padding:.1em 0}td.n{text-align:left}
td[data-label]::before{content:attr(data-label) \": \";color:#777}}";

/// A finding's or an application's recoverable time: "–" when nothing was estimated, never a
/// "0 ms" that reads as a measured zero.
fn saving(ms: i64) -> String {
    if ms > 0 {
        duration(ms)
    } else {
        "–".to_string()
    }
}

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
        &Trends::new(),
        changes,
    )
    .expect("writing to memory does not fail");
    String::from_utf8(out).expect("the page is built from strings")
}

/// Each key's runtimes over its recent nights, oldest first and tonight's last: the small chart
/// beside each application of the index.
pub type Trends = std::collections::HashMap<String, Vec<i64>>;

/// Tonight's and the recent nights' runtimes as a sparkline, its label the first, the last and
/// how many nights.
fn sparkline(values: &[i64]) -> String {
    let (Some(&low), Some(&high), Some(&first), Some(&last)) = (
        values.iter().min(),
        values.iter().max(),
        values.first(),
        values.last(),
    ) else {
        return String::new();
    };
    crate::charts::sparkline(
        values,
        &format!(
            "runtime over {} nights: {} to {} tonight (lowest {}, highest {})",
            values.len(),
            duration(first),
            duration(last),
            duration(low),
            duration(high)
        ),
    )
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
    trends: &Trends,
    changes: &[Change],
) -> std::io::Result<()> {
    write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width,initial-scale=1\"><title>sparkdiag fleet report {date}</title><style>{STYLE}</style></head><body>\n\
         <h1>sparkdiag fleet report — {date}</h1>\n<p class=\"summary\">{apps} application(s): <span class=\"{failed_class}\">{failed} failed or with failed jobs</span>{breakdown}; {stopped} stopped by the program; {errors} unreadable log(s); {skipped} still being written, skipped.</p>\n\
         <p class=\"muted\">{total} of runtime, about {wasted} of it recoverable.</p>\n",
        date = escape(&night.date),
        apps = totals.apps,
        failed = totals.failed,
        breakdown = failure_breakdown(totals),
        stopped = totals.stopped,
        failed_class = if totals.failed > 0 { "reg" } else { "muted" },
        errors = night.errors.len(),
        skipped = night.in_progress.len(),
        total = duration(totals.runtime_ms),
        wasted = saving(totals.recoverable_ms),
    )?;
    let regressions: Vec<&Change> = changes.iter().filter(|c| c.regression).collect();
    let improvements: Vec<&Change> = changes.iter().filter(|c| !c.regression).collect();
    writeln!(out, "<h2>What got worse since the previous run</h2>")?;
    if regressions.is_empty() {
        writeln!(out, "<p>Nothing regressed.</p>")?;
    } else {
        writeln!(
            out,
            "<table><tr class=\"head\"><th>application</th><th>change</th><th>likely cause</th><th>since</th></tr>"
        )?;
        for c in &regressions {
            writeln!(
                out,
                "<tr><td><a href=\"{}\">{}</a></td><td class=\"reg\" data-label=\"change\">{}</td><td data-label=\"likely cause\">{}</td><td data-label=\"since\">{}</td></tr>",
                escape(&c.report),
                escape(&c.key),
                escape(&c.what),
                escape(c.cause.as_deref().unwrap_or("-")),
                escape(&c.since)
            )?;
        }
        writeln!(out, "</table>")?;
    }
    let checked: Vec<&Change> = changes.iter().filter(|c| !c.fixes.is_empty()).collect();
    if !checked.is_empty() {
        writeln!(
            out,
            "<h2>Fixes checked since the previous run</h2>\n<p class=\"muted\">A job whose settings changed since its previous run, compared with it as <code>sparkdiag diff</code> compares two runs: each finding whose fix it applied, the saving predicted for it, and the time the work it was about actually saved.</p>\n<table><tr class=\"head\"><th>application</th><th>finding</th><th>fix applied</th><th>predicted</th><th>measured</th><th>error</th></tr>"
        )?;
        for c in &checked {
            for f in &c.fixes {
                writeln!(
                    out,
                    "<tr><td><a href=\"{}\">{}</a> <span class=\"muted\">since {}</span></td><td data-label=\"finding\">{}: {}</td><td data-label=\"fix applied\">{}</td><td class=\"n\" data-label=\"predicted\">{}</td><td class=\"n\" data-label=\"measured\">{}</td><td class=\"n\" data-label=\"error\">{}</td></tr>",
                    escape(&c.report),
                    escape(&c.key),
                    escape(&c.since),
                    escape(f.rule),
                    escape(&f.title),
                    escape(&f.applied.join("; ")),
                    saving(f.predicted_ms),
                    signed(f.measured_ms),
                    signed(f.error_ms),
                )?;
            }
        }
        writeln!(out, "</table>")?;
    }
    let improvements: Vec<&Change> = improvements
        .into_iter()
        .filter(|c| c.fixes.is_empty())
        .collect();
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
        "<h2>Applications, failed first, then most recoverable time first</h2>\n<table><tr class=\"head\"><th>application</th><th>outcome</th><th>runtime</th><th>over the nights</th><th>recoverable</th><th>worst</th><th>top finding</th></tr>"
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
            "<tr><td><a href=\"{}\">{}</a><br><span class=\"muted\">{source}</span></td><td data-label=\"outcome\">{status}</td><td class=\"n\" data-label=\"runtime\">{}</td><td data-label=\"over the nights\">{}</td><td class=\"n\" data-label=\"recoverable\">{}</td><td data-label=\"worst\">{worst}</td><td data-label=\"top finding\">{}</td></tr>",
            escape(&a.report),
            escape(&a.name),
            duration(a.duration_ms),
            trends.get(&a.key).map_or(String::new(), |t| sparkline(t)),
            saving(a.impact_ms),
            escape(a.top_finding.as_deref().unwrap_or(""))
        )?;
    }
    writeln!(out, "</table>")?;

    if !night.worst_findings.is_empty() {
        writeln!(
            out,
            "<h2>The worst findings across the fleet</h2>\n<table><tr class=\"head\"><th>saves</th><th>severity</th><th>rule</th><th>application</th><th>finding</th></tr>"
        )?;
        for f in &night.worst_findings {
            // The report's own label ("lost ~5m", "~2.1 core-h", "in DR002"); "–" when
            // nothing was estimated.
            let saves = match f.saves.as_str() {
                "" => saving(f.impact_ms),
                "-" => "–".to_string(),
                label => label.to_string(),
            };
            writeln!(
                out,
                "<tr><td class=\"n\" data-label=\"saves\">{}</td><td data-label=\"severity\"><span class=\"sev {sev}\">{sev}</span></td><td data-label=\"rule\">{}</td><td data-label=\"application\"><a href=\"{}\">{}</a></td><td>{}</td></tr>",
                escape(&saves),
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
            "<h2>Logs that could not be read</h2>\n<table><tr class=\"head\"><th>input</th><th>error</th></tr>"
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
            "<h2>Logs still being written, skipped</h2>\n<p class=\"muted\">Written to within the last --stale-after (6 h unless set); a log not written to for longer is analysed as killed or incomplete. Run with --include-in-progress to analyse them as far as they go.</p>\n<ul>"
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

/// A measured difference, negative too: "-1.2 s".
fn signed(ms: i64) -> String {
    if ms < 0 {
        format!("-{}", duration(-ms))
    } else {
        duration(ms)
    }
}

/// What the failures were, when there were any: " (2 failed, 1 succeeded with failed jobs,
/// 1 killed or incomplete)".
fn failure_breakdown(totals: &AppTotals) -> String {
    let parts: Vec<String> = [
        (totals.failed_apps, "failed"),
        (totals.with_failed_jobs, "succeeded with failed jobs"),
        (totals.killed, "killed or incomplete"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" ({})", parts.join(", "))
    }
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
    use sparkdiag_contract::night::NightFinding;
    use sparkdiag_contract::night::testing::{app, night};

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
    }

    #[test]
    fn regressions_come_first_and_improvements_after() {
        let now = night("2026-11-29", vec![app("etl", 900_000, &["DR002", "SK001"])]);
        let change = |regression: bool, what: &str| Change {
            key: "etl".into(),
            app_id: "id-etl".into(),
            regression,
            what: what.into(),
            since: "2026-11-28".into(),
            report: "apps/etl.html".into(),
            cause: regression.then(|| "the input grew 4.0×".to_string()),
            fixes: Vec::new(),
        };
        let changes = [
            change(true, "runtime 10m 00s → 15m 00s (+50%)"),
            change(false, "SK002 went away"),
        ];
        let html = render_index(&now, &[NightTotals::of(&now)], &changes);
        let worse = html
            .find("class=\"reg\" data-label=\"change\">runtime 10m 00s → 15m 00s (+50%)")
            .unwrap();
        let better = html.find("Better: etl: SK002 went away").unwrap();
        assert!(worse < better, "{html}");
        assert!(
            html.contains("<td data-label=\"likely cause\">the input grew 4.0×</td>"),
            "{html}"
        );
    }

    #[test]
    fn what_nothing_estimated_reads_as_a_dash_not_zero() {
        let mut night = night("2026-11-29", vec![app("etl", 90_000, &["CF001"])]);
        let finding = |rule: &str, impact_ms, saves: &str| NightFinding {
            app: "etl".into(),
            rule: rule.into(),
            severity: "medium".into(),
            title: "t".into(),
            impact_ms,
            report: "apps/etl.html".into(),
            saves: saves.into(),
        };
        night.worst_findings = vec![
            finding("PA001", 7_000, "~7.0 s"),
            finding("CF001", 0, "-"),
            finding("CF003", 0, ""),
        ];
        let html = render_index(&night, &[NightTotals::of(&night)], &[]);
        assert!(!html.contains(">0 ms<"), "{html}");
        assert_eq!(
            html.matches("data-label=\"saves\">–</td>").count(),
            2,
            "{html}"
        );
        assert!(html.contains("data-label=\"saves\">~7.0 s</td>"), "{html}");
        // The application's recoverable time, nothing estimated: a dash too.
        assert!(html.contains("data-label=\"recoverable\">–</td>"), "{html}");
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
