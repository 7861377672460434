//! The HTML view: one self-contained page per run that opens offline and can be mailed or
//! attached to a ticket. Inline `<style>` and inline SVG charts ([`crate::charts`]); no script,
//! font, stylesheet or image is fetched from anywhere.
//!
//! Everything that came from the log (application name, stage and job names, SQL text, failure
//! messages, finding titles that quote them) is attacker-controlled as far as this page is
//! concerned: it is written through [`escape`] and nowhere else. The charts' SVG is escaped by
//! plotters (see `charts`).
//!
//! Each SQL execution's plan is drawn as a nested list from Spark's structured plan
//! (`sparkPlanInfo`, the same pre-order as the report's `plan_nodes`), with each operator's key
//! metrics and stages. Findings name operators by their `(n)` id in the plan *text*; the text's
//! operators are paired with the structured nodes in pre-order by name (the structured plan
//! also holds `WholeStageCodegen` and `InputAdapter` wrappers, which the tree draws through),
//! and only when every text operator pairs, so a node is highlighted only when it is the one
//! the finding means. Ids that pair with no node are listed under the tree instead.

use std::fmt::Write;

use sparkdiag_contract::AppStatus;

use crate::charts;
use crate::format::{
    clip, duration, enum_name, error_headline, escape, human_bytes, percent, thousands, truncate,
};
use crate::{PlanTree, Report, ViewData};

/// Rows of the stage and executor tables; the JSON has all of them.
const TOP_ROWS: usize = 50;
/// Failure messages are stack traces: the head says what happened.
const FAILURE_CHARS: usize = 2000;
const SQL_CHARS: usize = 300;

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

/// Escaped text with a line-break opportunity after each `/`, so a call site's path wraps
/// between folders ("…/testdata/" | "gen/workload.py:107") instead of inside a word.
fn with_path_breaks(escaped: &str) -> String {
    escaped.replace('/', "/<wbr>")
}

const STYLE: &str = r#"
:root { --ink: #222; --muted: #666; --rule: #e2e2e2; --bg: #fff; --panel: #f7f7f5;
  --critical: #b3261e; --high: #d9622b; --medium: #c99a06; --low: #4a7ab5; --info: #888; }
* { box-sizing: border-box; }
.bounds { display: flex; height: 18px; max-width: 620px; border: 1px solid var(--rule); }
.bounds span { display: block; height: 100%; }
.legend .key { display: inline-block; width: 10px; height: 10px; margin: 0 4px 0 8px; }
body { margin: 0; background: var(--bg); color: var(--ink);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 1040px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; word-break: break-word; }
h2 { font-size: 19px; margin: 40px 0 12px; padding-bottom: 4px; border-bottom: 1px solid var(--rule); }
h3 { font-size: 16px; margin: 0 0 4px; }
.meta { color: var(--muted); margin: 0; }
.meta .bad { color: var(--critical); }
.warn { background: #fff6e0; border-left: 4px solid var(--medium); padding: 8px 12px; margin: 12px 0; }
.finding { display: grid; grid-template-columns: 36px minmax(0, 1fr); gap: 4px 12px; padding: 12px 14px;
  margin: 10px 0; background: var(--panel); border-left: 5px solid var(--info); border-radius: 3px; }
.finding .rank { font-size: 20px; color: var(--muted); text-align: right; }
.finding p { margin: 2px 0; }
.finding h3, .finding p { overflow-wrap: anywhere; }
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
.chart.narrow { display: none; }
.scroll { max-width: 100%; overflow-x: auto; margin: 8px 0; }
.scroll > table { margin: 0; }
.empty { color: var(--muted); font-style: italic; }
table { border-collapse: collapse; width: 100%; font-size: 13px; margin: 8px 0; }
th, td { padding: 4px 8px; border-bottom: 1px solid var(--rule); text-align: left; vertical-align: top; }
th { font-weight: 600; border-bottom: 2px solid #ccc; }
code { font: 0.92em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #ececea; padding: 0 3px; border-radius: 2px; }
td.n, th.n { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.failed td { color: var(--critical); }
.name { word-break: break-word; }
pre { background: var(--panel); padding: 8px 12px; overflow-x: auto; font-size: 12px; white-space: pre-wrap; word-break: break-word; }
details.plan { margin: 6px 0; border: 1px solid var(--rule); border-radius: 3px; padding: 4px 10px;
  overflow-x: auto; }
details.plan > summary { cursor: pointer; }
details.plan .qfail { color: var(--critical); }
details.plan > summary .sev, .node .sev { min-width: 0; margin: 0 0 0 6px; }
ul.tree, ul.tree ul { list-style: none; margin: 0; padding: 0 0 0 16px; }
ul.tree { padding: 4px 0; font-size: 13px; }
ul.tree li { border-left: 1px solid var(--rule); padding: 1px 0 1px 8px; }
.node { display: inline-block; padding: 0 4px; border-left: 4px solid transparent; }
.node .op { font-weight: 600; }
.node .oid, .node .cg, .node .st { color: var(--muted); }
.node .m { font-variant-numeric: tabular-nums; }
.node.hot { background: #fdeee8; }
.node.sev-medium.hot { background: #fdf6dc; }
.node.sev-low.hot, .node.sev-info.hot { background: #eaf1f9; }
footer { margin-top: 48px; color: var(--muted); font-size: 12px; }
/* A phone: the page's own margins give way to the content, cards keep their text inside,
   wide tables scroll in their box (.scroll) and each chart's narrow drawing replaces the wide
   one, whose labels would shrink past reading. */
@media (max-width: 640px) {
  main { padding: 16px 12px 48px; }
  h1 { font-size: 22px; }
  h2 { margin-top: 32px; }
  .finding { grid-template-columns: 22px minmax(0, 1fr); gap: 4px 8px; padding: 10px; }
  .finding .rank { font-size: 16px; }
  .numbers { grid-template-columns: repeat(auto-fill, minmax(140px, 1fr)); }
  .chart.wide { display: none; }
  .chart.narrow { display: block; }
}
"#;

/// One page for one or more applications (one section each), in the order given.
pub fn render(apps: &[(&Report, &ViewData)]) -> String {
    render_with(apps, &crate::Options::default())
}

/// [`render`] with the findings `options` shows.
pub fn render_with(apps: &[(&Report, &ViewData)], options: &crate::Options) -> String {
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
    for (i, (report, view)) in apps.iter().enumerate() {
        if i > 0 {
            out.push_str("<hr>\n");
        }
        application(&mut out, report, view, options);
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

fn application(out: &mut String, report: &Report, view: &ViewData, options: &crate::Options) {
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
        if a.status == AppStatus::Succeeded && a.outcome == "succeeded" {
            "succeeded".to_string()
        } else {
            format!("<strong class=\"bad\">{}</strong>", escape(&a.outcome))
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
    if let Some(line) = report.source.config.line() {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", escape(&line));
    }
    if let Some(line) = super::streaming::workload_line(report) {
        let _ = writeln!(out, "<p class=\"meta\">{}</p>", escape(&line));
    }
    if let Some(gates) = &report.gates {
        out.push_str(&crate::gates::html(gates));
    }
    findings(out, report, options);
    out.push_str(&super::streaming::html(report));
    summary(out, report);
    if let Some(w) = &report.what_if {
        out.push_str(&super::whatif::html(w));
    }
    if let Some(m) = &report.memory {
        out.push_str(&super::memory::html(m));
    }
    out.push_str("<h2>Charts</h2>\n");
    for chart in charts::render_all(report, view) {
        match &chart.svg {
            Some(_) => out.push_str(&figure(&chart)),
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
    plans(out, report, view, options);
    out.push_str(&super::ledger::html(&report.ledger));
    if !report.source.warnings.is_empty() {
        out.push_str("<h2>What the log is missing or could not be read</h2>\n<ul>\n");
        for w in &report.source.warnings {
            let _ = writeln!(out, "<li>{}</li>", escape(w));
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
}

/// A drawn chart as a figure: its caption (how to read it; the SVG carries its own title),
/// the chart drawn for a wide page, and, where there is one, the same chart drawn
/// [`charts::NARROW_WIDTH`] wide, which the style shows instead on a phone.
pub(crate) fn figure(chart: &charts::Chart) -> String {
    let Some(svg) = &chart.svg else {
        return String::new();
    };
    let mut out = format!(
        "<figure>\n<figcaption>{}</figcaption>\n",
        escape(&chart.caption)
    );
    match chart.narrow_svg() {
        Some(narrow) => {
            let _ = write!(
                out,
                "<div class=\"chart wide\">{svg}</div>\n<div class=\"chart narrow\">{narrow}</div>\n"
            );
        }
        None => out.push_str(svg),
    }
    out.push_str("</figure>\n");
    out
}

fn findings(out: &mut String, report: &Report, options: &crate::Options) {
    out.push_str("<h2>Findings, most severe first, then most time saved</h2>\n");
    if report.findings.is_empty() {
        out.push_str("<p>No findings: nothing here crossed a detector's threshold.</p>\n");
        return;
    }
    let shown = options.shown(report);
    if shown.len() < report.findings.len() {
        let _ = writeln!(
            out,
            "<p class=\"meta\">Showing {} of the {} findings ({}).</p>",
            shown.len(),
            report.findings.len(),
            escape(&options.narrowed_by())
        );
    }
    for (i, f) in shown.iter().enumerate() {
        let finding = &f.finding;
        let severity = finding.severity.name();
        let impact = if f.impact_kind == "cost" {
            format!(
                "It costs about {} core-hours of idle cores{}, not wall-clock time.",
                f.impact_core_hours,
                f.impact_cost
                    .map_or(String::new(), |c| format!(" ({c:.2} at the given price)"))
            )
        } else if f.impact_kind == "lost" {
            format!(
                "The run lost about {} of wall-clock time to it.",
                duration(finding.impact_ms)
            )
        } else if finding.impact_ms > 0 {
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
        let impact = match f.impact_memory_cost {
            Some(m) => format!(
                "{impact} The memory it gives back is worth {m:.2} at the given GB-hour price."
            ),
            None => impact,
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
    // The same rows as the text and Markdown views, as tiles.
    let tiles = super::text::summary_rows(&report.summary);
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
    let stages = report.longest_stages();
    if stages.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Longest stages</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>stage</th><th>status</th>\
         <th class=\"n\">tasks</th><th class=\"n\">duration</th><th class=\"n\">median task</th>\
         <th class=\"n\">max task</th><th class=\"n\">shuffle read</th>\
         <th class=\"n\">shuffle write</th><th class=\"n\">spill (disk)</th><th class=\"n\">GC</th>\
         <th>name</th></tr></thead>\n<tbody>\n",
    );
    for st in stages.iter().take(TOP_ROWS) {
        let q = st.task_duration_ms.as_ref();
        let status = enum_name(st.status);
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
            with_path_breaks(&escape(&charts::short_name(&st.name, 60))),
        );
    }
    out.push_str("</tbody>\n</table></div>\n");
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
        "<h2>Executors</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>executor</th><th>host</th>\
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
    out.push_str("</tbody>\n</table></div>\n");
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
        "<h2>SQL executions</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th class=\"n\">id</th>\
         <th class=\"n\">duration</th><th class=\"n\">jobs</th><th class=\"n\">exchanges</th>\
         <th>description</th><th>error</th></tr></thead>\n<tbody>\n",
    );
    for q in report.sql.iter().take(TOP_ROWS) {
        let took = q.start_ms.zip(q.end_ms).map(|(s, e)| (e - s).max(0));
        let _ = writeln!(
            out,
            "<tr><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"name\">{}</td><td class=\"name\" title=\"{}\">{}</td></tr>",
            q.execution_id,
            took.map_or("-".into(), duration),
            q.job_ids.len(),
            q.exchanges,
            escape(&clip(&q.description, SQL_CHARS)),
            escape(&clip(q.error.as_deref().unwrap_or_default(), FAILURE_CHARS)),
            escape(&truncate(
                error_headline(q.error.as_deref().unwrap_or_default()).point(),
                120
            )),
        );
    }
    out.push_str("</tbody>\n</table></div>\n");
    more(out, report.sql.len(), "SQL executions");
}

/// Plans with more operators than this start collapsed.
const OPEN_PLAN_NODES: usize = 60;
/// With more SQL executions than this, only the plans findings point at start open.
const OPEN_PLANS: usize = 10;

/// Nodes of Spark's structured plan that only wrap others: drawn through, not as operators.
fn is_wrapper(name: &str) -> bool {
    name.starts_with("WholeStageCodegen") || name == "InputAdapter"
}

/// The SQL metrics a plan node line shows, in this order: (metric, label, kind).
const NODE_METRICS: &[(&str, &str, Kind)] = &[
    ("number of output rows", "rows", Kind::Count),
    ("data size", "size", Kind::Bytes),
    ("shuffle bytes written", "shuffle write", Kind::Bytes),
    ("size of files read", "read", Kind::Bytes),
    ("written output", "written", Kind::Bytes),
    ("spill size", "spill", Kind::Bytes),
    ("time in aggregation build", "aggregate", Kind::Millis),
    ("sort time", "sort", Kind::Millis),
    ("time to build", "build", Kind::Millis),
    ("time to broadcast", "broadcast", Kind::Millis),
    ("time to execute Python code", "Python", Kind::Millis),
    ("fetch wait time", "fetch wait", Kind::Millis),
];

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Count,
    Bytes,
    Millis,
}

/// One `<details>` per SQL execution with its plan tree: each operator with its key metrics and
/// the stages it ran in. The operators a finding names (`scope.plan_node_ids`, Spark's node
/// ids) are highlighted in the finding's severity colour; when the text plan and the
/// structured plan cannot be paired, the finding is shown on the execution's line instead.
fn plans(out: &mut String, report: &Report, view: &ViewData, options: &crate::Options) {
    let runs: Vec<(&crate::SqlOut, &PlanTree)> = report
        .sql
        .iter()
        .filter(|q| !q.plan_nodes.is_empty())
        .filter_map(|q| Some((q, view.plan(q.execution_id)?)))
        .collect();
    if runs.is_empty() {
        return;
    }
    out.push_str(
        "<h2>Query plans</h2>\n<p class=\"meta\">The plan that ran, per SQL execution, with what \
         each operator measured and the stages it ran in. Operators a finding points at are \
         highlighted.</p>\n",
    );
    for &(q, tree) in runs.iter().take(TOP_ROWS) {
        // `plan_nodes` holds Spark's graph nodes by Spark id; wrappers have no entry.
        let measured: Vec<Option<&crate::PlanNodeOut>> = tree
            .nodes
            .iter()
            .map(|n| {
                n.spark_id
                    .and_then(|id| q.plan_nodes.iter().find(|m| m.index == id))
            })
            .collect();
        // Findings name operators by Spark's node ids, which `plan_nodes` carries.
        let ids: Option<Vec<Option<u32>>> =
            Some(measured.iter().map(|m| m.map(|m| m.index as u32)).collect());
        let findings: Vec<&crate::FindingOut> = options
            .shown(report)
            .into_iter()
            .filter(|f| f.finding.scope.sql_execution_ids.contains(&q.execution_id))
            .collect();
        let operators = tree.nodes.iter().filter(|n| !is_wrapper(&n.name)).count();
        let open =
            operators <= OPEN_PLAN_NODES && (!findings.is_empty() || runs.len() <= OPEN_PLANS);
        let took = q.start_ms.zip(q.end_ms).map(|(s, e)| (e - s).max(0));
        let _ = write!(
            out,
            "<details class=\"plan\"{}>\n<summary><strong>SQL execution {}</strong> · {} operators · \
             {} · {}",
            if open { " open" } else { "" },
            q.execution_id,
            operators,
            took.map_or("-".into(), duration),
            escape(&truncate(&q.description, 80)),
        );
        if q.error.is_some() {
            out.push_str(" · <strong class=\"qfail\">failed</strong>");
        }
        for f in &findings {
            let _ = write!(
                out,
                "<span class=\"sev-{}\"><span class=\"sev\" title=\"{}\">{}</span></span>",
                f.finding.severity.name(),
                escape(&f.finding.title),
                escape(f.finding.rule)
            );
        }
        out.push_str("</summary>\n<ul class=\"tree\">\n");
        let ctx = PlanCtx {
            tree,
            measured: &measured,
            ids: ids.as_deref(),
            findings: &findings,
        };
        ctx.node(out, 0, None);
        out.push_str("</ul>\n");
        // Operator ids a finding names that no node of the tree carries (the plan text and
        // the tree could not be paired, or the operator sits in a subquery).
        let shown: Vec<u32> = ids.iter().flatten().flatten().copied().collect();
        let named: Vec<String> = findings
            .iter()
            .filter_map(|f| {
                let ops: Vec<String> = f
                    .finding
                    .scope
                    .plan_node_ids
                    .iter()
                    .filter(|id| !shown.contains(id))
                    .map(|id| format!("({id})"))
                    .collect();
                (!ops.is_empty())
                    .then(|| format!("{} at {}", escape(f.finding.rule), ops.join(", ")))
            })
            .collect();
        {
            if !named.is_empty() {
                let _ = writeln!(
                    out,
                    "<p class=\"meta\">Findings name operators ({}) that are not in this tree \
                     (a subquery); see the finding titles.</p>",
                    named.join("; ")
                );
            }
        }
        out.push_str("</details>\n");
    }
    more(out, runs.len(), "SQL plans");
}

struct PlanCtx<'a> {
    tree: &'a PlanTree,
    /// What the report measured for each tree node, by pre-order position.
    measured: &'a [Option<&'a crate::PlanNodeOut>],
    ids: Option<&'a [Option<u32>]>,
    findings: &'a [&'a crate::FindingOut],
}

impl PlanCtx<'_> {
    /// Writes node `i` as `<li>` (wrappers are drawn through: their children take their place,
    /// and the first of them carries the codegen stage and its duration).
    fn node(&self, out: &mut String, i: usize, codegen: Option<String>) {
        let info = &self.tree.nodes[i];
        let none = crate::PlanNodeOut {
            index: 0,
            name: Default::default(),
            metrics: Default::default(),
            stage_ids: Vec::new(),
        };
        let measured = self.measured[i].unwrap_or(&none);
        if is_wrapper(&info.name) {
            let label = info.name.strip_prefix("WholeStageCodegen").map(|rest| {
                let stage = rest.trim().trim_start_matches('(').trim_end_matches(')');
                match measured.metrics.get("duration") {
                    Some(&ms) => format!("codegen {stage} · {}", duration(ms)),
                    None => format!("codegen {stage}"),
                }
            });
            let mut label = label.or(codegen);
            for &c in &info.children {
                self.node(out, c, label.take());
            }
            return;
        }
        let id = self.ids.and_then(|ids| ids[i]);
        let hits: Vec<&crate::FindingOut> = match id {
            Some(id) => self
                .findings
                .iter()
                .filter(|f| f.finding.scope.plan_node_ids.contains(&id))
                .copied()
                .collect(),
            None => Vec::new(),
        };
        let class = match hits.first() {
            Some(f) => format!("node hot sev-{}", f.finding.severity.name()),
            None => "node".into(),
        };
        let _ = write!(
            out,
            "<li><span class=\"{class}\"><span class=\"op\">{}</span>",
            escape(&info.name)
        );
        if let Some(id) = id {
            let _ = write!(out, " <span class=\"oid\">({id})</span>");
        }
        let metrics: Vec<String> = NODE_METRICS
            .iter()
            .filter_map(|&(name, label, kind)| {
                let &v = measured.metrics.get(name)?;
                if v <= 0 && !(kind == Kind::Count && name == "number of output rows") {
                    return None;
                }
                Some(match kind {
                    Kind::Count => format!("{label} {}", thousands(v)),
                    Kind::Bytes => format!("{label} {}", human_bytes(v)),
                    Kind::Millis => format!("{label} {}", duration(v)),
                })
            })
            .collect();
        if !metrics.is_empty() {
            let _ = write!(out, " <span class=\"m\">{}</span>", metrics.join(" · "));
        }
        if let Some(cg) = codegen {
            let _ = write!(out, " <span class=\"cg\">[{}]</span>", escape(&cg));
        }
        if !measured.stage_ids.is_empty() {
            let stages: Vec<String> = measured.stage_ids.iter().map(i64::to_string).collect();
            let _ = write!(
                out,
                " <span class=\"st\">in stage{} {}</span>",
                if stages.len() > 1 { "s" } else { "" },
                stages.join(", ")
            );
        }
        for f in &hits {
            let _ = write!(
                out,
                "<span class=\"sev\" title=\"{}\">{}</span>",
                escape(&f.finding.title),
                escape(f.finding.rule)
            );
        }
        out.push_str("</span>");
        let children = &info.children;
        if children.is_empty() {
            out.push_str("</li>\n");
        } else {
            out.push_str("\n<ul>\n");
            for &c in children {
                self.node(out, c, None);
            }
            out.push_str("</ul></li>\n");
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use sparkdiag_model::{Application, SparkPlanInfo, SqlExecution};

    #[test]
    fn backtick_spans_become_code_and_a_lone_backtick_stays() {
        assert_eq!(
            with_code_spans(&escape("Stage 2 `a<b>` and `c` `d")),
            "Stage 2 <code>a&lt;b&gt;</code> and <code>c</code> `d"
        );
    }

    fn node(name: &str, children: Vec<SparkPlanInfo>) -> SparkPlanInfo {
        SparkPlanInfo {
            node_name: name.into(),
            simple_string: name.into(),
            children,
            ..Default::default()
        }
    }

    fn execution(id: i64, plan: SparkPlanInfo) -> SqlExecution {
        SqlExecution {
            execution_id: id,
            root_execution_id: None,
            description: format!("query {id}"),
            details: Default::default(),
            start_ms: Some(0),
            end_ms: Some(1000),
            error: None,
            plan_description: Default::default(),
            plan: Some(plan),
            final_plan_description: None,
            final_plan: None,
            job_ids: Vec::new(),
            driver_metrics: Vec::new(),
        }
    }

    #[test]
    fn plans_are_trees_with_wrappers_drawn_through_and_long_ones_collapsed() {
        // Sort <- WholeStageCodegen (1) <- InputAdapter <- Scan: the wrappers are not operators.
        let short = node(
            "WholeStageCodegen (1)",
            vec![node(
                "Sort",
                vec![node("InputAdapter", vec![node("Scan <evil>", vec![])])],
            )],
        );
        let mut long = node("Scan", vec![]);
        for _ in 0..OPEN_PLAN_NODES {
            long = node("Project", vec![long]);
        }
        let mut app = Application::default();
        app.sql.push(execution(0, short));
        app.sql.push(execution(1, long));
        let report = crate::charts::report_of(&app);
        let page = render(&[(&report, &sparkdiag_analysis::assemble::view_data(&app))]);
        let plans = &page[page.find("<h2>Query plans</h2>").expect("a plans section")..];
        assert!(plans.contains("<summary><strong>SQL execution 0</strong> · 2 operators"));
        assert!(!plans.contains("WholeStageCodegen") && !plans.contains("InputAdapter"));
        assert!(
            plans.contains("[codegen 1]"),
            "the codegen stage goes on its operator"
        );
        assert!(
            plans.contains("Scan &lt;evil&gt;"),
            "node names are escaped"
        );
        // Sort's child is nested one level down.
        let sort = plans.find(">Sort<").unwrap();
        assert!(
            plans[sort..].contains(
                "</span>\n<ul>\n<li><span class=\"node\"><span class=\"op\">Scan &lt;evil&gt;"
            ),
            "{plans}"
        );
        assert!(plans.contains("<details class=\"plan\" open>\n<summary><strong>SQL execution 0"));
        assert!(plans.contains(&format!(
            "<details class=\"plan\">\n<summary><strong>SQL execution 1</strong> · {} operators",
            OPEN_PLAN_NODES + 1
        )));
    }

    #[test]
    fn stage_names_wrap_between_folders_and_keep_their_file_and_line() {
        let name = "collect at /home/someone/projects/nightly/etl/jobs/orders/daily_orders.py:123";
        let cell = with_path_breaks(&escape(&charts::short_name(name, 60)));
        assert_eq!(
            cell,
            "collect at …/<wbr>nightly/<wbr>etl/<wbr>jobs/<wbr>orders/<wbr>daily_orders.py:123"
        );
        assert_eq!(
            with_path_breaks("collect at /a/b.py:1"),
            "collect at /<wbr>a/<wbr>b.py:1"
        );
    }

    #[test]
    fn an_error_is_headed_by_its_exception_not_its_traceback() {
        // As Spark 4.3 wrote it in testdata/logs/failed (SQLExecutionEnd errorMessage).
        let python = "[PYTHON_EXCEPTION] An exception was thrown from the Python worker: \
            Traceback (most recent call last):\n  File \"/w/workload.py\", line 90, in checked_double\n    \
            raise ValueError(f\"bad row {x}: refusing to double it\")\nValueError: bad row 1234: \
            refusing to double it\n SQLSTATE: 38000";
        assert_eq!(
            error_headline(python).point(),
            "ValueError: bad row 1234: refusing to double it"
        );
        // A chained traceback: the last exception is the one that ended the query.
        let chained = "Traceback (most recent call last):\n  File \"a.py\", line 1\nKeyError: 'k'\n\n\
            During handling of the above exception, another exception occurred:\n\n\
            Traceback (most recent call last):\n  File \"a.py\", line 3\nRuntimeError: lookup failed\n\
            \tat org.apache.spark.api.python.BasePythonRunner.handlePythonException(PythonRunner.scala:572)";
        assert_eq!(
            error_headline(chained).point(),
            "RuntimeError: lookup failed"
        );
        let java =
            "Job aborted due to stage failure: Task 0 in stage 1.0 failed\n\tat org.apache.X";
        assert_eq!(
            error_headline(java).point(),
            "Job aborted due to stage failure: Task 0 in stage 1.0 failed"
        );
        assert_eq!(error_headline("").point(), "");
    }

    #[test]
    fn an_empty_application_renders() {
        let app = Application::default();
        let report = crate::charts::report_of(&app);
        let page = render(&[(&report, &sparkdiag_analysis::assemble::view_data(&app))]);
        assert!(page.contains("(unnamed application)"));
        assert!(page.ends_with("</html>\n"));
    }
}
