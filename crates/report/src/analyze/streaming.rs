//! The streaming views: the workload line of the header, and one section per Structured
//! Streaming query, for DStreams batches and for Spark Connect sessions, in text, Markdown and
//! HTML. Each view calls these once; nothing here is drawn for a batch application.

use std::fmt::Write;

use crate::Report;
use crate::format::{duration, escape, human_bytes, thousands};
use sparkdiag_contract::Workload;
use sparkdiag_contract::streaming::{BatchOut, QueryOut, StreamingOut};

/// `workload: Structured Streaming (1 query with 18 progress events)`, for the header: what
/// the application was and which evidence decided it. `None` for a plain batch program with
/// nothing to say about it.
pub fn workload_line(report: &Report) -> Option<String> {
    let app = &report.application;
    let kind = match app.workload {
        Workload::StructuredStreaming => "Structured Streaming",
        Workload::Dstreams => "DStreams",
        Workload::SparkConnect => "Spark Connect",
        Workload::Interactive => "interactive",
        Workload::Batch => "batch",
    };
    match (&app.workload_evidence, app.workload) {
        (Some(why), _) => Some(format!("workload: {kind} ({why})")),
        (None, Workload::Batch | Workload::Interactive) => None,
        (None, _) => Some(format!("workload: {kind}")),
    }
}

/// One row of figures per query: what its batches did.
struct QuerySummary {
    label: String,
    status: String,
    batches: String,
    rows: String,
    median_ms: Option<i64>,
    max_ms: Option<i64>,
    trigger: Option<i64>,
    input_rate: Option<f64>,
    processed_rate: Option<f64>,
    state_rows: i64,
}

fn summarise(q: &QueryOut) -> QuerySummary {
    let mut durations: Vec<i64> = q.batches.iter().filter_map(|b| b.duration_ms).collect();
    durations.sort_unstable();
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied()
    };
    let working: Vec<&BatchOut> = q.batches.iter().filter(|b| b.input_rows > 0).collect();
    let mut input: Vec<f64> = working
        .iter()
        .filter_map(|b| b.input_rows_per_second)
        .collect();
    let mut processed: Vec<f64> = working
        .iter()
        .filter_map(|b| b.processed_rows_per_second)
        .collect();
    QuerySummary {
        label: q
            .name
            .clone()
            .filter(|n| !n.is_empty())
            .unwrap_or_else(|| q.id.clone()),
        status: match (&q.status, q.exception_cause()) {
            (&"failed", Some(cause)) => format!("failed: {}", first_line(cause)),
            (s, _) => s.to_string(),
        },
        batches: if q.batches_dropped > 0 {
            format!(
                "{} ({} kept)",
                thousands(q.progress_events as i64),
                q.batches.len()
            )
        } else {
            thousands(q.progress_events as i64)
        },
        rows: thousands(q.input_rows),
        median_ms: durations.get(durations.len() / 2).copied(),
        max_ms: durations.last().copied(),
        trigger: q.trigger_interval_ms,
        input_rate: median(&mut input),
        processed_rate: median(&mut processed),
        state_rows: q.max_state_rows,
    }
}

fn first_line(text: &str) -> String {
    let line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    crate::format::truncate(line.trim(), 160)
}

fn opt_ms(v: Option<i64>) -> String {
    v.map_or("—".into(), duration)
}

fn opt_rate(v: Option<f64>) -> String {
    v.map_or("—".into(), |r| format!("{r:.1}/s"))
}

/// The text view's section.
pub fn text(report: &Report) -> String {
    let Some(s) = &report.streaming else {
        return String::new();
    };
    let mut out = String::new();
    if !s.queries.is_empty() {
        out.push_str("Streaming queries\n");
        for q in &s.queries {
            let m = summarise(q);
            let _ = writeln!(
                out,
                "  {}: {} · {} batches · {} rows · batch median {} (max {}) · trigger {} · input {} vs processed {} · state rows up to {}",
                m.label,
                m.status,
                m.batches,
                m.rows,
                opt_ms(m.median_ms),
                opt_ms(m.max_ms),
                opt_ms(m.trigger),
                opt_rate(m.input_rate),
                opt_rate(m.processed_rate),
                thousands(m.state_rows)
            );
            if let Some(source) = q.sources.first() {
                let _ = writeln!(
                    out,
                    "    source {} → sink {}",
                    crate::format::truncate(source, 80),
                    crate::format::truncate(q.sink.as_deref().unwrap_or("?"), 60)
                );
            }
        }
        out.push('\n');
    }
    dstreams_text(&mut out, s);
    connect_text(&mut out, s);
    out
}

fn dstreams_text(out: &mut String, s: &StreamingOut) {
    let Some(d) = &s.dstreams else { return };
    let delays: Vec<i64> = d
        .batches
        .iter()
        .filter_map(|b| b.scheduling_delay_ms)
        .collect();
    let mut processing: Vec<i64> = d.batches.iter().filter_map(|b| b.processing_ms).collect();
    processing.sort_unstable();
    let _ = writeln!(
        out,
        "DStreams: {} batches every {} · processing median {} · scheduling delay {} → {}\n",
        d.batches.len(),
        opt_ms(d.batch_interval_ms),
        opt_ms(processing.get(processing.len() / 2).copied()),
        opt_ms(delays.first().copied()),
        opt_ms(delays.last().copied()),
    );
}

/// Each session's operations, the time their jobs took and their task time.
fn connect_rows(s: &StreamingOut) -> Vec<(String, usize, i64, usize, i64)> {
    let Some(c) = &s.connect else {
        return Vec::new();
    };
    c.sessions
        .iter()
        .map(|x| {
            (
                // A server many people use is read by who sent what.
                match &x.user {
                    Some(user) => format!("{} (user {user})", x.session_id),
                    None => x.session_id.clone(),
                },
                x.operations.len(),
                x.operations.iter().filter_map(|o| o.duration_ms).sum(),
                x.operations.iter().map(|o| o.failed_jobs).sum(),
                x.operations.iter().map(|o| o.executor_run_time_ms).sum(),
            )
        })
        .collect()
}

fn connect_text(out: &mut String, s: &StreamingOut) {
    let Some(c) = &s.connect else { return };
    let _ = writeln!(out, "Spark Connect sessions");
    for (session, ops, ms, failed, task) in connect_rows(s) {
        let _ = writeln!(
            out,
            "  session {session}: {ops} operation(s), {} in jobs, {} of task time{}",
            duration(ms),
            duration(task),
            if failed > 0 {
                format!(", {failed} failed job(s)")
            } else {
                String::new()
            }
        );
    }
    let mut ops: Vec<_> = c
        .sessions
        .iter()
        .flat_map(|x| x.operations.iter().map(move |o| (x, o)))
        .collect();
    ops.sort_by_key(|(_, o)| std::cmp::Reverse(o.duration_ms));
    for (x, o) in ops.iter().take(3) {
        let _ = writeln!(
            out,
            "  slowest: operation {} (session {}): {}, jobs {:?}",
            o.operation_id,
            x.session_id,
            opt_ms(o.duration_ms),
            o.job_ids
        );
    }
    out.push('\n');
}

/// The Markdown view's section.
pub fn markdown(report: &Report) -> String {
    let Some(s) = &report.streaming else {
        return String::new();
    };
    let mut out = String::new();
    if !s.queries.is_empty() {
        out.push_str("## Streaming queries\n\n| query | status | batches | input rows | batch median | max | trigger | input rate | processed rate | state rows |\n|---|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
        for q in &s.queries {
            let m = summarise(q);
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                crate::format::markdown_cell(&m.label),
                crate::format::markdown_cell(&m.status),
                m.batches,
                m.rows,
                opt_ms(m.median_ms),
                opt_ms(m.max_ms),
                opt_ms(m.trigger),
                opt_rate(m.input_rate),
                opt_rate(m.processed_rate),
                thousands(m.state_rows)
            );
        }
        out.push('\n');
    }
    if s.dstreams.is_some() {
        out.push_str("## DStreams\n\n");
        dstreams_text(&mut out, s);
    }
    if s.connect.is_some() {
        out.push_str("## Spark Connect sessions\n\n| session | operations | time in jobs | task time | failed jobs |\n|---|--:|--:|--:|--:|\n");
        for (session, ops, ms, failed, task) in connect_rows(s) {
            let _ = writeln!(
                out,
                "| `{session}` | {ops} | {} | {} | {failed} |",
                duration(ms),
                duration(task)
            );
        }
        out.push('\n');
    }
    out
}

/// The HTML view's section: per query a table of its batches' figures (the first 200).
pub fn html(report: &Report) -> String {
    let Some(s) = &report.streaming else {
        return String::new();
    };
    let mut out = String::new();
    for q in &s.queries {
        let m = summarise(q);
        let _ = writeln!(
            out,
            "<h2>Streaming query {}</h2>\n<p class=\"meta\">{} · {} batches · {} rows · batch median {} · trigger {} · input {} vs processed {} · state rows up to {}</p>",
            escape(&m.label),
            escape(&m.status),
            escape(&m.batches),
            m.rows,
            opt_ms(m.median_ms),
            opt_ms(m.trigger),
            opt_rate(m.input_rate),
            opt_rate(m.processed_rate),
            thousands(m.state_rows)
        );
        if let Some(chart) = crate::charts::query_chart(q)
            && let Some(svg) = &chart.svg
        {
            let _ = writeln!(
                out,
                "<figure class=\"chart\">{svg}<figcaption>{}</figcaption></figure>",
                escape(&chart.caption)
            );
        }
        out.push_str("<div class=\"scroll\"><table><thead><tr><th>batch</th><th>duration</th><th>addBatch</th><th>planning</th><th>offsets</th><th>commit</th><th>input rows</th><th>input/s</th><th>processed/s</th><th>state rows</th><th>state memory</th><th>jobs</th></tr></thead><tbody>\n");
        for b in q.batches.iter().take(200) {
            let part = |k: &str| b.duration_parts_ms.get(k).copied();
            let offsets = [part("latestOffset"), part("getOffset"), part("getBatch")]
                .iter()
                .flatten()
                .sum::<i64>();
            let commit = [part("walCommit"), part("commitOffsets")]
                .iter()
                .flatten()
                .sum::<i64>();
            let _ = writeln!(
                out,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                b.batch_id,
                opt_ms(b.duration_ms),
                opt_ms(part("addBatch")),
                opt_ms(part("queryPlanning")),
                duration(offsets),
                duration(commit),
                thousands(b.input_rows),
                opt_rate(b.input_rows_per_second),
                opt_rate(b.processed_rows_per_second),
                thousands(b.state_operators.iter().map(|s| s.rows_total).sum()),
                human_bytes(b.state_operators.iter().map(|s| s.memory_used_bytes).sum()),
                b.job_ids
                    .iter()
                    .map(|j| j.to_string())
                    .collect::<Vec<_>>()
                    .join(" ")
            );
        }
        out.push_str("</tbody></table></div>\n");
    }
    if s.dstreams.is_some() || s.connect.is_some() {
        let mut text = String::new();
        dstreams_text(&mut text, s);
        connect_text(&mut text, s);
        let _ = writeln!(out, "<h2>Streaming</h2>\n<pre>{}</pre>", escape(&text));
    }
    out
}
