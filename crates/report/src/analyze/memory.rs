//! The memory section of every view: each executor's and the driver's peaks against the memory
//! configured, and what the log does not hold.

use std::fmt::Write;

use crate::format::human_bytes;
use sparkdiag_contract::{ExecutorMemory, MemoryFigures};

use crate::format::escape;

/// The rows shown: the driver and at most this many executors (highest heap peak first), then
/// the peak over all executors.
const MAX_ROWS: usize = 12;

fn b(v: Option<i64>) -> String {
    v.map_or("-".into(), human_bytes)
}

fn share(v: Option<f64>) -> String {
    v.map_or("-".into(), |s| crate::format::share(s, 0))
}

fn limits_line(m: &MemoryFigures) -> String {
    let l = &m.limits;
    if m.local_mode {
        return format!(
            "local mode, the driver's JVM runs the tasks: spark.driver.memory {} (maxResultSize {}) · unified pool {} (spark.memory.fraction {})",
            human_bytes(l.driver_memory_bytes as i64),
            human_bytes(l.driver_max_result_bytes as i64),
            human_bytes(
                (l.driver_memory_bytes.saturating_sub(300 << 20) as f64 * l.memory_fraction) as i64
            ),
            l.memory_fraction
        );
    }
    let mut parts = vec![
        format!(
            "spark.executor.memory {}{}",
            human_bytes(l.executor_memory_bytes as i64),
            if l.executor_memory_set {
                ""
            } else {
                " (default)"
            }
        ),
        format!(
            "overhead {}{}",
            human_bytes(l.executor_overhead_bytes as i64),
            if l.executor_overhead_set {
                String::new()
            } else {
                format!(" (max(384 MiB, {:.0}%))", l.overhead_factor * 100.0)
            }
        ),
        format!("{} core(s) per executor", l.executor_cores),
        format!(
            "unified pool {} (spark.memory.fraction {})",
            human_bytes(l.unified_pool_bytes() as i64),
            l.memory_fraction
        ),
    ];
    if let Some(off) = l.off_heap_bytes {
        parts.push(format!("off-heap {}", human_bytes(off as i64)));
    }
    if let Some(py) = l.pyspark_memory_bytes {
        parts.push(format!("pyspark.memory {}", human_bytes(py as i64)));
    }
    parts.push(format!(
        "container {}",
        human_bytes(l.container_bytes() as i64)
    ));
    parts.push(format!(
        "driver {} (maxResultSize {})",
        human_bytes(l.driver_memory_bytes as i64),
        human_bytes(l.driver_max_result_bytes as i64)
    ));
    parts.join(" · ")
}

fn rows(m: &MemoryFigures) -> Vec<&ExecutorMemory> {
    let mut executors: Vec<&ExecutorMemory> = m
        .executors
        .iter()
        .filter(|e| e.executor_id != "driver")
        .collect();
    executors.sort_by_key(|e| std::cmp::Reverse(e.jvm_heap_bytes));
    executors.truncate(MAX_ROWS);
    let mut out: Vec<&ExecutorMemory> = m
        .executors
        .iter()
        .filter(|e| e.executor_id == "driver")
        .collect();
    out.extend(executors);
    if m.executors.len() > 2 {
        out.extend(m.executor_peak.as_ref());
    }
    out
}

fn cells(e: &ExecutorMemory) -> [String; 9] {
    [
        e.executor_id.clone(),
        format!(
            "{} of {} ({})",
            b(e.jvm_heap_bytes),
            human_bytes(e.heap_limit_bytes as i64),
            share(e.heap_used_share)
        ),
        b(e.on_heap_execution_bytes),
        b(e.on_heap_storage_bytes),
        b(e.jvm_off_heap_bytes),
        b(e.direct_pool_bytes),
        format!(
            "{} / {} / {}",
            b(e.process_tree_jvm_rss_bytes),
            b(e.process_tree_python_rss_bytes),
            b(e.process_tree_other_rss_bytes)
        ),
        match (e.major_gc_count, e.major_gc_time_ms) {
            (Some(n), Some(ms)) => format!("{n} ({ms} ms)"),
            (Some(n), None) => n.to_string(),
            _ => "-".into(),
        },
        match (e.minor_gc_count, e.minor_gc_time_ms) {
            (Some(n), Some(ms)) => format!("{n} ({ms} ms)"),
            (Some(n), None) => n.to_string(),
            _ => "-".into(),
        },
    ]
}

const HEADERS: [&str; 9] = [
    "executor",
    "peak heap",
    "execution",
    "storage",
    "JVM off-heap",
    "direct buffers",
    "RSS JVM / Python / other",
    "major GC",
    "minor GC",
];

/// The text view: prose wrapped to `width` (a terminal's), the table laid out by `table` (the
/// text view's own, which knows the width).
pub fn text(m: &MemoryFigures, mut table: comfy_table::Table, width: Option<usize>) -> String {
    let mut out = String::from("Memory peaks (Spark's executor metrics)\n");
    out.push_str(&wrap(&format!("configured: {}", limits_line(m)), width));
    if width.is_some_and(|w| w < WIDE_TABLE) {
        // Nine columns do not fit: one wrapped line per JVM, each figure kept on one line
        // with its unit (a no-break space joins them).
        for r in rows(m).into_iter().map(cells) {
            let figures: Vec<String> = HEADERS[1..]
                .iter()
                .zip(&r[1..])
                .map(|(h, v)| format!("{h} {}", v.replace(' ', "\u{a0}")))
                .collect();
            out.push_str(&wrap(&format!("{}: {}", r[0], figures.join(" · ")), width));
        }
    } else {
        table.set_header(HEADERS.to_vec());
        for r in rows(m).into_iter().map(cells) {
            table.add_row(r.to_vec());
        }
        let _ = writeln!(out, "{table}");
    }
    for note in &m.missing {
        out.push_str(&wrap(&format!("not in the log: {note}"), width));
    }
    out.push('\n');
    out
}

/// Below this many columns the text view lists each JVM on its own lines instead of a table.
const WIDE_TABLE: usize = 150;

/// `text` indented by two spaces and wrapped at spaces (not no-break spaces) to `width` (unwrapped without).
fn wrap(text: &str, width: Option<usize>) -> String {
    let Some(width) = width else {
        return format!("  {text}\n");
    };
    let room = width.saturating_sub(4).max(20);
    let mut out = String::new();
    let mut line = String::new();
    for word in text.split(' ').filter(|w| !w.is_empty()) {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > room {
            let _ = writeln!(out, "  {line}");
            line.clear();
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        let _ = writeln!(out, "  {line}");
    }
    out
}

pub fn markdown(m: &MemoryFigures) -> String {
    let mut out = String::from("## Memory peaks\n\n");
    let _ = writeln!(out, "Configured: {}.\n", limits_line(m));
    let _ = writeln!(out, "| {} |", HEADERS.join(" | "));
    let _ = writeln!(out, "|---|{}", "--:|".repeat(8));
    for r in rows(m).into_iter().map(cells) {
        let _ = writeln!(out, "| {} |", r.join(" | "));
    }
    out.push('\n');
    for note in &m.missing {
        let _ = writeln!(out, "- Not in the log: {note}");
    }
    if !m.missing.is_empty() {
        out.push('\n');
    }
    out
}

pub fn html(m: &MemoryFigures) -> String {
    let mut out = String::from("<h2>Memory peaks</h2>\n");
    let _ = writeln!(
        out,
        "<p class=\"meta\">Configured: {}.</p>\n<div class=\"scroll\"><table>\n<thead><tr>{}</tr></thead>\n<tbody>",
        escape(&limits_line(m)),
        HEADERS
            .iter()
            .enumerate()
            .map(|(i, h)| if i == 0 {
                format!("<th>{h}</th>")
            } else {
                format!("<th class=\"n\">{h}</th>")
            })
            .collect::<String>()
    );
    for r in rows(m).into_iter().map(cells) {
        let _ = writeln!(
            out,
            "<tr>{}</tr>",
            r.iter()
                .enumerate()
                .map(|(i, c)| if i == 0 {
                    format!("<td>{}</td>", escape(c))
                } else {
                    format!("<td class=\"n\">{}</td>", escape(c))
                })
                .collect::<String>()
        );
    }
    out.push_str("</tbody>\n</table></div>\n");
    if !m.missing.is_empty() {
        out.push_str("<ul>\n");
        for note in &m.missing {
            let _ = writeln!(out, "<li>Not in the log: {}</li>", escape(note));
        }
        out.push_str("</ul>\n");
    }
    out
}
