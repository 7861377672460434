//! The Markdown view, for pasting into a GitHub issue or pull request, or a Jira ticket that
//! renders Markdown: the ranked findings with their fixes, the application summary, the longest
//! stages and the failed jobs.
//!
//! Text from the log goes through [`cell`] (inside tables) or [`inline`] (elsewhere): a `|`
//! would end a table cell, a newline the row, and `<` could start HTML that a renderer without
//! GitHub's sanitiser would run. Markdown punctuation (`` ` ``, `*`, `_`) is left alone: finding
//! titles quote stage names in code spans on purpose, and inside a code span a backslash escape
//! would be shown literally. The cost is that a `<` inside a code span shows as `&lt;`.

use std::fmt::Write;

use crate::Report;
/// Text from the log made safe inside a table cell: one line, `|` escaped, no HTML.
pub use crate::format::markdown_cell as cell;
use crate::format::{clip, duration, enum_name, human_bytes, truncate};

/// How many stages the Markdown lists; the JSON has all of them.
const TOP_STAGES: usize = 10;
/// Failure messages are stack traces; the first lines say what happened.
const FAILURE_CHARS: usize = 300;

/// Text from the log made safe in running Markdown text: the same rules as [`cell`], since a
/// list item must stay one line too (`\|` renders as `|` outside a table).
pub fn inline(text: &str) -> String {
    cell(text)
}

/// One report as a Markdown document.
pub fn render(report: &Report) -> String {
    render_with(report, &crate::Options::default())
}

/// [`render`] with the findings `options` shows.
pub fn render_with(report: &Report, options: &crate::Options) -> String {
    let shown = options.shown(report);
    let mut out = String::new();
    let app = &report.application;
    let s = &report.summary;
    let name = app.name.as_deref().unwrap_or("(unnamed application)");
    let _ = writeln!(out, "# sparkdiag: {}\n", inline(name));
    let _ = writeln!(
        out,
        "{} · {} · {} · {}{}\n",
        inline(app.id.as_deref().unwrap_or("no app id")),
        app.spark_version
            .as_deref()
            .map_or("Spark version unknown".into(), |v| format!(
                "Spark {}",
                inline(v)
            )),
        if app.outcome == "succeeded" {
            app.outcome.clone()
        } else {
            format!("**{}**", inline(&app.outcome))
        },
        app.duration_ms.map_or("duration unknown".into(), duration),
        if report.source.complete {
            ""
        } else {
            " · **incomplete log** (see below)"
        }
    );

    if let Some(line) = report.source.config.line() {
        let _ = writeln!(out, "{}\n", inline(&line));
    }
    if let Some(line) = super::streaming::workload_line(report) {
        let _ = writeln!(out, "{}\n", inline(&line));
    }
    if let Some(gates) = &report.gates {
        out.push_str(&crate::gates::markdown(gates));
    }
    out.push_str(&super::streaming::markdown(report));
    out.push_str("## Findings, most severe first, then most time saved\n\n");
    if report.findings.is_empty() {
        out.push_str("No findings: nothing here crossed a detector's threshold.\n\n");
    } else {
        let with_cost = shown
            .iter()
            .any(|f| f.impact_cost.is_some() || f.impact_memory_cost.is_some());
        if shown.len() < report.findings.len() {
            let _ = writeln!(
                out,
                "Showing {} of the {} findings (`{}`).\n",
                shown.len(),
                report.findings.len(),
                options.narrowed_by()
            );
        }
        out.push_str(if with_cost {
            "| # | severity | saves | cost | rule | finding |\n|--:|---|--:|--:|---|---|\n"
        } else {
            "| # | severity | saves | rule | finding |\n|--:|---|--:|---|---|\n"
        });
        for (i, f) in shown.iter().enumerate() {
            let finding = &f.finding;
            let cost = if with_cost {
                format!(" {} |", super::text::cost_label(f))
            } else {
                String::new()
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} |{cost} {} | {} |",
                i + 1,
                finding.severity.name(),
                f.impact_label(duration),
                finding.rule,
                cell(&finding.title)
            );
        }
        out.push_str("\n### How to fix them\n\n");
        for (i, f) in shown.iter().enumerate() {
            let _ = writeln!(
                out,
                "{}. **{}** {}  \n   Fix: {}",
                i + 1,
                f.finding.rule,
                inline(&f.finding.title),
                inline(&f.finding.recommendation)
            );
        }
        out.push_str("\n`sparkdiag rules CODE` explains each rule and its thresholds.\n\n");
    }

    out.push_str("## Application summary\n\n| | |\n|---|--:|\n");
    let rows = super::text::summary_rows(s);
    for (label, value) in rows {
        let _ = writeln!(out, "| {label} | {value} |");
    }
    out.push('\n');

    if let Some(w) = &report.what_if {
        out.push_str(&super::whatif::markdown(w));
    }
    if let Some(m) = &report.memory {
        out.push_str(&super::memory::markdown(m));
    }

    let stages = report.longest_stages();
    if !stages.is_empty() {
        out.push_str("## Longest stages\n\n");
        out.push_str(
            "| stage | status | tasks | duration | median task | max task | shuffle read | shuffle write | disk spill | name |\n\
             |---|---|--:|--:|--:|--:|--:|--:|--:|---|\n",
        );
        for st in stages.iter().take(TOP_STAGES) {
            let q = st.task_duration_ms.as_ref();
            let _ = writeln!(
                out,
                "| {}.{} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                st.stage_id,
                st.attempt_id,
                enum_name(st.status),
                st.num_tasks,
                st.duration_ms.map_or("-".into(), duration),
                q.map_or("-".into(), |q| duration(q.p50.into())),
                q.map_or("-".into(), |q| duration(q.max.into())),
                human_bytes(st.shuffle_read_bytes),
                human_bytes(st.shuffle_write_bytes),
                human_bytes(st.disk_spill_bytes),
                cell(&truncate(&st.name, 60))
            );
        }
        if stages.len() > TOP_STAGES {
            let _ = writeln!(
                out,
                "\n{} more stages in `--format json`.",
                stages.len() - TOP_STAGES
            );
        }
        out.push('\n');
    }

    let failed: Vec<_> = report.jobs.iter().filter(|j| j.failure.is_some()).collect();
    if !failed.is_empty() {
        out.push_str("## Failed jobs\n\n");
        for job in failed {
            let _ = writeln!(
                out,
                "- **Job {}** ({}): {}",
                job.job_id,
                inline(&truncate(&job.name, 60)),
                inline(&clip(
                    &cell(job.failure.as_deref().unwrap_or_default()),
                    FAILURE_CHARS
                ))
            );
        }
        out.push('\n');
    }

    out.push_str(&super::ledger::markdown(&report.ledger));
    if !report.source.warnings.is_empty() {
        out.push_str("## What the log is missing or could not be read\n\n");
        for w in &report.source.warnings {
            let _ = writeln!(out, "- {}", inline(w));
        }
        out.push('\n');
    }
    out
}
