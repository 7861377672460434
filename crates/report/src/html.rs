//! The HTML view: one self-contained page per run that opens offline and can be mailed or
//! attached to a ticket. Inline `<style>` and inline SVG charts ([`crate::charts`]); no script,
//! font, stylesheet or image is fetched from anywhere.
//!
//! Everything that came from the log (application name, stage and job names, SQL text, failure
//! messages, finding titles that quote them) is attacker-controlled as far as this page is
//! concerned: it is written through [`escape`] and nowhere else. The charts' SVG is escaped by
//! plotters (see `charts`).

use std::fmt::Write;

use sparkdiag_model::units::{duration, human_bytes};
use sparkdiag_model::{AppStatus, Application};

use crate::Report;
use crate::charts::{self, truncate};
use crate::markdown::longest_stages;

/// Rows of the stage and executor tables; the JSON has all of them.
const TOP_ROWS: usize = 50;
/// Failure messages are stack traces: the head says what happened.
const FAILURE_CHARS: usize = 2000;
const SQL_CHARS: usize = 300;

/// Text made safe as HTML element content and as a quoted attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Escaped text with its `backtick` spans (finding titles quote stage names so) set as
/// `<code>`. Runs after [`escape`], so only the tags added here are markup.
fn with_code_spans(escaped: &str) -> String {
    let mut out = String::with_capacity(escaped.len() + 16);
    let mut rest = escaped;
    while let Some(open) = rest.find('`') {
        let Some(len) = rest[open + 1..].find('`') else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str("<code>");
        out.push_str(&rest[open + 1..open + 1 + len]);
        out.push_str("</code>");
        rest = &rest[open + len + 2..];
    }
    out.push_str(rest);
    out
}

pub(crate) fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

pub(crate) fn percent(part: i64, whole: i64) -> String {
    if whole <= 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

/// A status enum as the JSON spells it ("succeeded", "failed", ...).
pub(crate) fn status_name(status: impl serde::Serialize) -> String {
    serde_json::to_value(status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}

const STYLE: &str = r#"
:root { --ink: #222; --muted: #666; --rule: #e2e2e2; --bg: #fff; --panel: #f7f7f5;
  --critical: #b3261e; --high: #d9622b; --medium: #c99a06; --low: #4a7ab5; --info: #888; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; word-break: break-word; }
h2 { font-size: 19px; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--rule); }
h3 { font-size: 16px; margin: 0 0 4px; }
.meta { color: var(--muted); margin: 0; }
.warn { background: #fff6e0; border-left: 4px solid var(--medium); padding: 8px 12px; margin: 12px 0; }
.finding { display: grid; grid-template-columns: 36px 1fr; gap: 4px 12px; padding: 12px 14px;
  margin: 10px 0; background: var(--panel); border-left: 5px solid var(--info); border-radius: 3px; }
.finding .rank { font-size: 20px; color: var(--muted); text-align: right; }
.finding p { margin: 2px 0; }
.sev { display: inline-block; min-width: 64px; padding: 0 6px; margin-right: 6px; border-radius: 3px;
  color: #fff; font-size: 12px; text-align: center; text-transform: uppercase; vertical-align: 2px; }
.rule { color: var(--muted); font-weight: normal; font-size: 13px; }
.impact { color: var(--muted); font-size: 14px; }
.sev-critical { border-left-color: var(--critical); } .sev-critical .sev { background: var(--critical); }
.sev-high { border-left-color: var(--high); } .sev-high .sev { background: var(--high); }
.sev-medium { border-left-color: var(--medium); } .sev-medium .sev { background: var(--medium); }
.sev-low { border-left-color: var(--low); } .sev-low .sev { background: var(--low); }
.sev-info .sev { background: var(--info); }
.numbers { display: grid; grid-template-columns: repeat(auto-fill, minmax(190px, 1fr)); gap: 10px; margin: 0; }
.numbers div { background: var(--panel); padding: 8px 12px; border-radius: 3px; }
.numbers dt { color: var(--muted); font-size: 13px; }
.numbers dd { margin: 0; font-size: 17px; }
figure { margin: 18px 0 28px; }
figcaption { color: var(--muted); font-size: 14px; margin-bottom: 6px; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid var(--rule); }
.empty { color: var(--muted); font-style: italic; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 8px 0; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
th { font-weight: 600; border-bottom: 2px solid #ccc; }
code { font: 0.92em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #ececea; padding: 0 3px; border-radius: 2px; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.failed td { color: var(--critical); }
.name { word-break: break-word; }
pre { background: var(--panel); padding: 8px 12px; overflow-x: auto; font-size: 12px; white-space: pre-wrap; word-break: break-word; }
footer { margin-top: 48px; color: var(--muted); font-size: 12px; }
"#;

/// One page for one or more applications (one section each), in the order given.
pub fn render(apps: &[(&Report, &Application)]) -> String {
    let title = match apps {
        [(report, _)] => format!(
            "sparkdiag: {}",
            report
                .application
                .name
                .as_deref()
                .unwrap_or("(unnamed application)")
        ),
        _ => format!("sparkdiag: {} applications", apps.len()),
    };
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n",
        escape(&title)
    );
    for (i, (report, app)) in apps.iter().enumerate() {
        if i > 0 {
            out.push_str("<hr>\n");
        }
        application(&mut out, report, app);
    }
    let _ = write!(
        out,
        "<footer>Generated by sparkdiag {} from the event log alone. \
         <code>sparkdiag rules CODE</code> explains each rule and its thresholds.</footer>\n\
         </main>\n</body>\n</html>\n",
        env!("CARGO_PKG_VERSION")
    );
    out
}

fn application(out: &mut String, report: &Report, app: &Application) {
    let a = &report.application;
    let _ = write!(
        out,
        "<section>\n<header>\n<h1>{}</h1>\n<p class=\"meta\">{} · {} · {} · {}</p>\n",
        escape(a.name.as_deref().unwrap_or("(unnamed application)")),
        escape(a.id.as_deref().unwrap_or("no app id")),
        a.spark_version
            .as_deref()
            .map_or("Spark version unknown".into(), |v| format!(
                "Spark {}",
                escape(v)
            )),
        match a.status {
            AppStatus::Succeeded => "succeeded",
            AppStatus::Failed => "<strong>failed</strong>",
            AppStatus::Incomplete => "<strong>incomplete</strong>",
        },
        a.duration_ms.map_or("duration unknown".into(), |d| format!(
            "ran {}",
            duration(d)
        )),
    );
    let files = &report.source.files;
    let _ = writeln!(
        out,
        "<p class=\"meta\">Read {} file(s), {} layout, {} events.</p>\n</header>",
        files.len(),
        escape(report.source.layout),
        thousands(files.iter().map(|f| f.events as i64).sum()),
    );
    if !report.source.complete {
        out.push_str(
            "<p class=\"warn\">This log is incomplete: the numbers cover what it holds. \
             The last section says what is missing.</p>\n",
        );
    }
    findings(out, report);
    summary(out, report);
    out.push_str("<h2>Charts</h2>\n");
    for chart in charts::render_all(report, app) {
        match &chart.svg {
            // The SVG carries its own title; the caption says how to read it.
            Some(svg) => {
                let _ = writeln!(
                    out,
                    "<figure>\n<figcaption>{}</figcaption>\n{svg}</figure>",
                    escape(&chart.caption)
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "<figure>\n<figcaption><strong>{}</strong></figcaption>\n\
                     <p class=\"empty\">{}</p>\n</figure>",
                    escape(chart.title),
                    escape(&chart.caption)
                );
            }
        }
    }
    stages(out, report);
    executors(out, report);
    failures(out, report);
    sql(out, report);
    if !report.source.warnings.is_empty() {
        out.push_str("<h2>What the log is missing or could not be read</h2>\n<ul>\n");
        for w in &report.source.warnings {
            let _ = writeln!(out, "<li>{}</li>", escape(w));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

fn findings(out: &mut String, report: &Report) {
    out.push_str("<h2>Findings, most recoverable time first</h2>\n");
    if report.findings.is_empty() {
        out.push_str("<p>No findings: nothing here crossed a detector's threshold.</p>\n");
        return;
    }
    for (i, f) in report.findings.iter().enumerate() {
        let finding = &f.finding;
        let severity = finding.severity.name();
        let impact = if finding.impact_ms > 0 {
            format!(
                "Fixing it saves about {} of wall-clock time ({} core-hours{}).",
                duration(finding.impact_ms),
                f.impact_core_hours,
                f.impact_cost
                    .map_or(String::new(), |c| format!(", {c:.2} at the given price"))
            )
        } else {
            "No wall-clock time is attributed to it.".to_string()
        };
        let _ = writeln!(
            out,
            "<article class=\"finding sev-{severity}\">\n<div class=\"rank\">{}</div>\n<div>\n\
             <h3><span class=\"sev\">{severity}</span>{} <span class=\"rule\">{} · {}</span></h3>\n\
             <p class=\"impact\">{}</p>\n<p><strong>Fix:</strong> {}</p>\n</div>\n</article>",
            i + 1,
            with_code_spans(&escape(&finding.title)),
            escape(finding.rule),
            escape(finding.category.name()),
            impact,
            with_code_spans(&escape(&finding.recommendation)),
        );
    }
}

fn summary(out: &mut String, report: &Report) {
    let s = &report.summary;
    let tiles = [
        ("jobs", format!("{} ({} failed)", s.jobs, s.failed_jobs)),
        (
            "stages",
            format!(
                "{} ({} failed, {} skipped)",
                s.stages, s.failed_stages, s.skipped_stages
            ),
        ),
        (
            "tasks",
            format!(
                "{} ({} failed, {} killed)",
                thousands(s.tasks as i64),
                s.failed_tasks,
                s.killed_tasks
            ),
        ),
        ("executors", s.executors.to_string()),
        ("executor run time", duration(s.executor_run_time_ms)),
        (
            "GC share of run time",
            percent(s.jvm_gc_time_ms, s.executor_run_time_ms),
        ),
        ("job time", duration(s.job_time_ms)),
        (
            "driver-only time",
            format!(
                "{} ({})",
                duration(s.driver_time_ms),
                percent(s.driver_time_ms, s.driver_time_ms + s.job_time_ms)
            ),
        ),
        (
            "input / output",
            format!(
                "{} / {}",
                human_bytes(s.input_bytes),
                human_bytes(s.output_bytes)
            ),
        ),
        (
            "shuffle read / write",
            format!(
                "{} / {}",
                human_bytes(s.shuffle_read_bytes),
                human_bytes(s.shuffle_write_bytes)
            ),
        ),
        (
            "spill memory / disk",
            format!(
                "{} / {}",
                human_bytes(s.memory_spill_bytes),
                human_bytes(s.disk_spill_bytes)
            ),
        ),
    ];
    out.push_str("<h2>Summary</h2>\n<dl class=\"numbers\">\n");
    for (label, value) in tiles {
        let _ = writeln!(
            out,
            "<div><dt>{}</dt><dd>{}</dd></div>",
            escape(label),
            escape(&value)
        );
    }
    out.push_str("</dl>\n");
}

fn stages(out: &mut String, report: &Report) {
    let stages = longest_stages(report);
    if stages.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Longest stages</h2>\n<table>\n<thead><tr><th>stage</th><th>status</th>\
         <th class=\"n\">tasks</th><th class=\"n\">duration</th><th class=\"n\">median task</th>\
         <th class=\"n\">max task</th><th class=\"n\">shuffle read</th>\
         <th class=\"n\">shuffle write</th><th class=\"n\">spill (disk)</th><th class=\"n\">GC</th>\
         <th>name</th></tr></thead>\n<tbody>\n",
    );
    for st in stages.iter().take(TOP_ROWS) {
        let q = st.task_duration_ms.as_ref();
        let status = status_name(st.status);
        let _ = writeln!(
            out,
            "<tr{}><td>{}.{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"name\" title=\"{}\">{}</td></tr>",
            if status == "failed" {
                " class=\"failed\""
            } else {
                ""
            },
            st.stage_id,
            st.attempt_id,
            escape(&status),
            thousands(st.num_tasks),
            st.duration_ms.map_or("-".into(), duration),
            q.map_or("-".into(), |q| duration(q.p50.into())),
            q.map_or("-".into(), |q| duration(q.max.into())),
            human_bytes(st.shuffle_read_bytes),
            human_bytes(st.shuffle_write_bytes),
            human_bytes(st.disk_spill_bytes),
            percent(st.jvm_gc_time_ms, st.executor_run_time_ms),
            escape(&st.name),
            escape(&truncate(&st.name, 60)),
        );
    }
    out.push_str("</tbody>\n</table>\n");
    more(out, stages.len(), "stages");
}

fn executors(out: &mut String, report: &Report) {
    let mut executors: Vec<&crate::ExecutorOut> = report
        .executors
        .iter()
        .filter(|e| e.total_tasks > 0 || e.completed_tasks > 0)
        .collect();
    if executors.is_empty() {
        return;
    }
    executors.sort_by_key(|e| std::cmp::Reverse(e.task_time_ms));
    out.push_str(
        "<h2>Executors</h2>\n<table>\n<thead><tr><th>executor</th><th>host</th>\
         <th class=\"n\">cores</th><th class=\"n\">tasks</th><th class=\"n\">failed</th>\
         <th class=\"n\">task time</th><th class=\"n\">GC</th><th class=\"n\">spill (disk)</th>\
         <th>removed</th></tr></thead>\n<tbody>\n",
    );
    for e in executors.iter().take(TOP_ROWS) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"name\">{}</td></tr>",
            escape(&e.executor_id),
            escape(&e.host),
            e.cores.map_or("-".into(), |c| c.to_string()),
            thousands(e.completed_tasks + e.failed_tasks + e.killed_tasks),
            e.failed_tasks,
            duration(e.task_time_ms),
            percent(e.jvm_gc_time_ms, e.run_time_ms),
            human_bytes(e.disk_spill_bytes),
            escape(&truncate(
                e.removed_reason.as_deref().unwrap_or_default(),
                80
            )),
        );
    }
    out.push_str("</tbody>\n</table>\n");
    more(out, executors.len(), "executors");
}

fn failures(out: &mut String, report: &Report) {
    let failed: Vec<_> = report.jobs.iter().filter(|j| j.failure.is_some()).collect();
    if failed.is_empty() {
        return;
    }
    out.push_str("<h2>Failed jobs</h2>\n");
    for job in failed.iter().take(TOP_ROWS) {
        let _ = writeln!(
            out,
            "<h3>Job {}: {}</h3>\n<pre>{}</pre>",
            job.job_id,
            escape(&truncate(&job.name, 80)),
            escape(&clip(
                job.failure.as_deref().unwrap_or_default(),
                FAILURE_CHARS
            )),
        );
    }
    more(out, failed.len(), "failed jobs");
}

fn sql(out: &mut String, report: &Report) {
    if report.sql.is_empty() {
        return;
    }
    out.push_str(
        "<h2>SQL executions</h2>\n<table>\n<thead><tr><th class=\"n\">id</th>\
         <th class=\"n\">duration</th><th class=\"n\">jobs</th><th class=\"n\">exchanges</th>\
         <th>description</th><th>error</th></tr></thead>\n<tbody>\n",
    );
    for q in report.sql.iter().take(TOP_ROWS) {
        let took = q.start_ms.zip(q.end_ms).map(|(s, e)| (e - s).max(0));
        let _ = writeln!(
            out,
            "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"name\">{}</td><td class=\"name\">{}</td></tr>",
            q.execution_id,
            took.map_or("-".into(), duration),
            q.job_ids.len(),
            q.exchanges,
            escape(&clip(&q.description, SQL_CHARS)),
            escape(&truncate(q.error.as_deref().unwrap_or_default(), 120)),
        );
    }
    out.push_str("</tbody>\n</table>\n");
    more(out, report.sql.len(), "SQL executions");
}

fn more(out: &mut String, total: usize, what: &str) {
    if total > TOP_ROWS {
        let _ = writeln!(
            out,
            "<p class=\"meta\">{} more {what} in <code>--format json</code>.</p>",
            total - TOP_ROWS
        );
    }
}

/// The first `max` characters, with an ellipsis when cut.
fn clip(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(max).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_and_both_quotes() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn backtick_spans_become_code_and_a_lone_backtick_stays() {
        assert_eq!(
            with_code_spans(&escape("Stage 2 `a<b>` and `c` `d")),
            "Stage 2 <code>a&lt;b&gt;</code> and <code>c</code> `d"
        );
    }

    #[test]
    fn an_empty_application_renders() {
        let app = Application::default();
        let report = crate::charts::report_of(&app);
        let page = render(&[(&report, &app)]);
        assert!(page.contains("(unnamed application)"));
        assert!(page.ends_with("</html>\n"));
    }
}
