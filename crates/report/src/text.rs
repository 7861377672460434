//! The terminal view: who ran, what it cost, the longest stages, the executors, and what the
//! log is missing.

use std::fmt::Write;

use comfy_table::{CellAlignment, ContentArrangement, LineStyle, Table, TableStyle, presets};

use crate::Report;
pub use sparkdiag_model::units::{duration, human_bytes};

/// A header underline and nothing else: calm enough to read, aligned enough to compare.
const LISTING: TableStyle =
    TableStyle::new().header_separator(LineStyle::none().fill('─').junction(' '));

/// How many stages and executors the text view lists; the JSON has all of them.
const TOP_ROWS: usize = 10;

pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let app = &report.application;
    let s = &report.summary;
    let name = app.name.as_deref().unwrap_or("(unnamed application)");
    let id = app.id.as_deref().unwrap_or("no app id");
    let version = app
        .spark_version
        .as_deref()
        .map(|v| format!("Spark {v}"))
        .unwrap_or_else(|| "Spark version unknown".into());
    let platform = if app.platform == sparkdiag_model::Platform::Databricks {
        " on Databricks"
    } else {
        ""
    };
    let status = serde_json::to_value(app.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default();
    let _ = writeln!(out, "{name}  ({id})");
    let _ = writeln!(
        out,
        "{version}{platform} · {status} · {}",
        app.duration_ms.map_or("duration unknown".into(), duration)
    );
    let files = &report.source.files;
    let bytes: u64 = files.iter().map(|f| f.bytes).sum();
    let events: u64 = files.iter().map(|f| f.events).sum();
    let codecs: Vec<&str> = {
        let mut c: Vec<&str> = files.iter().filter_map(|f| f.codec).collect();
        c.dedup();
        c
    };
    let _ = writeln!(
        out,
        "read {} file(s), {} layout, {} ({}), {} events{}",
        files.len(),
        report.source.layout,
        codecs.join("+"),
        human_bytes(bytes as i64),
        thousands(events as i64),
        if report.source.complete {
            ""
        } else {
            " · INCOMPLETE (see warnings)"
        }
    );
    out.push('\n');

    out.push_str(&findings_section(report));

    let mut table = Table::new();
    table
        .load_style(presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Dynamic);
    let gc_share = percent(s.jvm_gc_time_ms, s.executor_run_time_ms);
    let rows = [
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
        (
            "executor run time",
            format!("{} (GC {gc_share})", duration(s.executor_run_time_ms)),
        ),
        ("job time", duration(s.job_time_ms)),
        (
            "driver-only time",
            format!(
                "{} ({} of the application)",
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
    for (label, value) in rows {
        table.add_row(vec![label.to_string(), value]);
    }
    let _ = writeln!(out, "{table}\n");

    let mut stages: Vec<&crate::StageOut> = report
        .stages
        .iter()
        .filter(|s| s.duration_ms.is_some())
        .collect();
    stages.sort_by_key(|s| std::cmp::Reverse(s.duration_ms));
    if !stages.is_empty() {
        let _ = writeln!(out, "Longest stages");
        let mut t = Table::new();
        t.load_style(LISTING)
            .set_content_arrangement(ContentArrangement::Dynamic);
        t.set_header(vec![
            "stage",
            "status",
            "tasks",
            "duration",
            "median task",
            "max task",
            "shuffle read",
            "shuffle write",
            "disk spill",
            "name",
        ]);
        for st in stages.iter().take(TOP_ROWS) {
            let q = st.task_duration_ms.as_ref();
            t.add_row(vec![
                format!("{}.{}", st.stage_id, st.attempt_id),
                format!("{:?}", st.status).to_lowercase(),
                st.num_tasks.to_string(),
                st.duration_ms.map_or("-".into(), duration),
                q.map_or("-".into(), |q| duration(q.p50.into())),
                q.map_or("-".into(), |q| duration(q.max.into())),
                human_bytes(st.shuffle_read_bytes),
                human_bytes(st.shuffle_write_bytes),
                human_bytes(st.disk_spill_bytes),
                truncate(&st.name, 40),
            ]);
        }
        right_align(&mut t, &[2, 3, 4, 5, 6, 7, 8]);
        let _ = writeln!(out, "{t}");
        if stages.len() > TOP_ROWS {
            let _ = writeln!(
                out,
                "({} more stages in --format json)",
                stages.len() - TOP_ROWS
            );
        }
        out.push('\n');
    }

    let mut executors: Vec<&crate::ExecutorOut> = report
        .executors
        .iter()
        .filter(|e| e.total_tasks > 0 || e.completed_tasks > 0)
        .collect();
    executors.sort_by_key(|e| std::cmp::Reverse(e.task_time_ms));
    if !executors.is_empty() {
        let _ = writeln!(out, "Executors");
        let mut t = Table::new();
        t.load_style(LISTING)
            .set_content_arrangement(ContentArrangement::Dynamic);
        t.set_header(vec![
            "executor",
            "host",
            "cores",
            "tasks",
            "failed",
            "task time",
            "GC",
            "removed",
        ]);
        for e in executors.iter().take(TOP_ROWS) {
            t.add_row(vec![
                e.executor_id.clone(),
                e.host.clone(),
                e.cores.map_or("-".into(), |c| c.to_string()),
                thousands(e.completed_tasks + e.failed_tasks + e.killed_tasks),
                e.failed_tasks.to_string(),
                duration(e.task_time_ms),
                percent(e.jvm_gc_time_ms, e.run_time_ms),
                e.removed_reason
                    .as_deref()
                    .map_or(String::new(), |r| truncate(r, 40)),
            ]);
        }
        right_align(&mut t, &[2, 3, 4, 5, 6]);
        let _ = writeln!(out, "{t}");
        if executors.len() > TOP_ROWS {
            let _ = writeln!(
                out,
                "({} more executors in --format json)",
                executors.len() - TOP_ROWS
            );
        }
        out.push('\n');
    }

    for job in report.jobs.iter().filter(|j| j.failure.is_some()).take(3) {
        let _ = writeln!(
            out,
            "Job {} failed: {}",
            job.job_id,
            first_line(job.failure.as_deref().unwrap_or_default(), 200)
        );
    }
    if !report.source.warnings.is_empty() {
        let _ = writeln!(out, "What the log is missing or could not be read");
        for w in &report.source.warnings {
            let _ = writeln!(out, "  - {w}");
        }
    }
    out
}

/// How many findings the text view lists; the JSON has all of them.
const TOP_FINDINGS: usize = 15;

/// The findings, ranked by recoverable time, one line each, then the fix for each.
fn findings_section(report: &Report) -> String {
    let mut out = String::new();
    if report.findings.is_empty() {
        out.push_str("No findings: nothing here crossed a detector's threshold.\n\n");
        return out;
    }
    let _ = writeln!(out, "Findings, most recoverable time first");
    let mut t = Table::new();
    t.load_style(LISTING)
        .set_content_arrangement(ContentArrangement::Dynamic);
    let with_cost = report.findings.iter().any(|f| f.impact_cost.is_some());
    let mut header = vec!["#", "severity", "saves", "rule", "finding"];
    if with_cost {
        header.insert(3, "cost");
    }
    t.set_header(header);
    for (i, f) in report.findings.iter().take(TOP_FINDINGS).enumerate() {
        let finding = &f.finding;
        let mut row = vec![
            (i + 1).to_string(),
            finding.severity.name().to_string(),
            if finding.impact_ms > 0 {
                format!("~{}", duration(finding.impact_ms))
            } else {
                "-".into()
            },
            finding.rule.to_string(),
            finding.title.clone(),
        ];
        if with_cost {
            row.insert(3, f.impact_cost.map_or("-".into(), |c| format!("{c:.2}")));
        }
        t.add_row(row);
    }
    right_align(&mut t, &[0, 2]);
    let _ = writeln!(out, "{t}");
    if report.findings.len() > TOP_FINDINGS {
        let _ = writeln!(
            out,
            "({} more findings in --format json)",
            report.findings.len() - TOP_FINDINGS
        );
    }
    let _ = writeln!(
        out,
        "\nHow to fix them (sparkdiag rules CODE explains each rule)"
    );
    for (i, f) in report.findings.iter().take(TOP_FINDINGS).enumerate() {
        let _ = writeln!(
            out,
            "{:>3}. {}: {}",
            i + 1,
            f.finding.rule,
            f.finding.recommendation
        );
    }
    out.push('\n');
    out
}

fn right_align(table: &mut Table, columns: &[usize]) {
    for &c in columns {
        if let Some(col) = table.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
}

fn thousands(n: i64) -> String {
    let digits = n.abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

fn percent(part: i64, whole: i64) -> String {
    if whole <= 0 {
        "-".into()
    } else {
        format!("{:.1}%", 100.0 * part as f64 / whole as f64)
    }
}

fn truncate(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or_default();
    if line.chars().count() <= max {
        line.to_string()
    } else {
        format!("{}…", line.chars().take(max - 1).collect::<String>())
    }
}

fn first_line(s: &str, max: usize) -> String {
    truncate(s, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn human_units() {
        assert_eq!(duration(950), "950 ms");
        assert_eq!(duration(12_345), "12.3 s");
        assert_eq!(duration(125_000), "2m 05s");
        assert_eq!(duration(3_600_000 * 126), "126h 00m");
        assert_eq!(human_bytes(1536), "1.5 KiB");
        assert_eq!(human_bytes(12), "12 B");
        assert_eq!(thousands(1234567), "1,234,567");
    }
}
