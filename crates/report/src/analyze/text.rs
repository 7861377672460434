//! The terminal view: who ran, what it cost, the longest stages, the executors, and what the
//! log is missing.

use std::fmt::Write;

use comfy_table::{
    Attribute, Cell, CellAlignment, Color, ContentArrangement, LineStyle, Table, TableStyle,
    presets,
};

use crate::format::{
    duration, enum_name, error_headline, human_bytes, percent, thousands, truncate,
};
use crate::{Report, Terminal};

/// A header underline and nothing else: calm enough to read, aligned enough to compare.
const LISTING: TableStyle =
    TableStyle::new().header_separator(LineStyle::none().fill('─').junction(' '));

/// How many stages and executors the text view lists; the JSON has all of them.
const TOP_ROWS: usize = 10;

/// The plain view, the same wherever it is written: no colour, tables as wide as their content.
pub fn render(report: &Report) -> String {
    render_with(report, &crate::Options::default())
}

/// A table in `style`, laid out for `opts`: plain unless writing to a terminal.
fn new_table(opts: Terminal, style: TableStyle) -> Table {
    let mut t = Table::new();
    t.load_style(style)
        .set_content_arrangement(ContentArrangement::Dynamic);
    // comfy-table would ask the terminal itself and take a reported width of 0 at its word;
    // the width is chosen once, in `Terminal`. Off a terminal (`-o FILE` run from a shell
    // included) tables are as wide as their content.
    t.force_no_tty();
    if opts.terminal {
        t.set_width(opts.columns());
    }
    if opts.color {
        t.enforce_styling();
    }
    t
}

/// A severity cell in its colour: critical and high red, medium yellow, low and info dim.
fn severity_cell(severity: sparkdiag_contract::Severity, opts: Terminal) -> Cell {
    use sparkdiag_contract::Severity;
    let cell = Cell::new(severity.name());
    if !opts.color {
        return cell;
    }
    match severity {
        Severity::Critical => cell.fg(Color::Red).add_attribute(Attribute::Bold),
        Severity::High => cell.fg(Color::Red),
        Severity::Medium => cell.fg(Color::Yellow),
        Severity::Low | Severity::Info => cell.add_attribute(Attribute::Dim),
    }
}

/// The view laid out for `options.terminal`, with the findings `options` shows.
pub fn render_with(report: &Report, options: &crate::Options) -> String {
    // comfy-table pads every cell, the last column too: drop the trailing blanks it leaves.
    let mut out = String::new();
    for line in view(report, options).lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn view(report: &Report, options: &crate::Options) -> String {
    let opts = options.terminal;
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
    let platform = if app.platform == sparkdiag_contract::Platform::Databricks {
        " on Databricks"
    } else {
        ""
    };
    let status = &app.outcome;
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
    // On a terminal the header's long lines (the workload's evidence, a config trace) wrap at
    // its width; elsewhere one line each, as scripts read them.
    let header_line = |out: &mut String, line: &str| match opts.terminal {
        true => out.push_str(&wrap(line, usize::from(opts.columns()), 2)),
        false => {
            out.push_str(line);
            out.push('\n');
        }
    };
    let source_line = format!(
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
    header_line(&mut out, &source_line);
    if let Some(line) = report.source.config.line() {
        header_line(&mut out, &line);
    }
    if let Some(line) = super::streaming::workload_line(report) {
        header_line(&mut out, &line);
    }
    out.push('\n');

    if let Some(gates) = &report.gates {
        out.push_str(&crate::gates::text(gates));
    }
    out.push_str(&findings_section(report, options));
    out.push_str(&super::streaming::text(report));

    let mut table = new_table(opts, presets::NOTHING);
    let rows = summary_rows(s);
    for (label, value) in rows {
        table.add_row(vec![label.to_string(), value]);
    }
    let _ = writeln!(out, "{table}\n");
    if let Some(w) = &report.what_if {
        let width = opts.terminal.then(|| usize::from(opts.columns()));
        out.push_str(&super::whatif::text(w, width));
    }
    if let Some(m) = &report.memory {
        let width = opts.terminal.then(|| usize::from(opts.columns()));
        out.push_str(&super::memory::text(
            m,
            new_table(opts, presets::NOTHING),
            width,
        ));
    }

    let stages = report.longest_stages();
    if !stages.is_empty() {
        let _ = writeln!(out, "Longest stages");
        out.push_str(&stage_table(&stages[..stages.len().min(TOP_ROWS)], opts));
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
        let mut t = new_table(opts, LISTING);
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

    // On a terminal these lines wrap at its width under their text; elsewhere one line each.
    let lines = |text: String, indent: usize| -> String {
        if opts.terminal {
            wrap(&text, usize::from(opts.columns()), indent)
        } else {
            text + "\n"
        }
    };
    for job in report.jobs.iter().filter(|j| j.failure.is_some()).take(3) {
        out.push_str(&lines(
            format!(
                "Job {} failed: {}",
                job.job_id,
                truncate(
                    &error_headline(job.failure.as_deref().unwrap_or_default()).announced(),
                    200
                )
            ),
            2,
        ));
    }
    out.push_str(&super::ledger::text(&report.ledger, lines));
    if !report.source.warnings.is_empty() {
        let _ = writeln!(out, "What the log is missing or could not be read");
        for w in &report.source.warnings {
            out.push_str(&lines(format!("  - {w}"), 4));
        }
    }
    out
}

/// From this many applications on, the text view of `analyze` is one line each.
pub const MANY_APPLICATIONS: usize = 6;

/// `--quiet`: one line a finding shown, `APP: SEVERITY CODE saves T: title`; nothing for an
/// application without findings.
pub fn quiet(report: &Report, options: &crate::Options) -> String {
    let app = app_label(report);
    let mut out = String::new();
    for f in options.shown(report) {
        let finding = &f.finding;
        let _ = writeln!(
            out,
            "{app}: {} {} saves {}: {}",
            finding.severity.name(),
            finding.rule,
            duration(finding.impact_ms.max(0)),
            finding.title
        );
    }
    out
}

/// One line per application of a folder of many, in the order they were found: its runtime,
/// findings, worst severity, top finding and what it saves, and its log.
pub fn one_line_each(reports: &[&Report]) -> String {
    let mut out = format!(
        "{} applications: one line each (sparkdiag analyze PATH shows one in full)\n",
        reports.len()
    );
    for report in reports {
        let worst = report.findings.iter().map(|f| f.finding.severity).min();
        let top = report.findings.first().map_or(String::new(), |f| {
            format!(
                ", top {} saves {}",
                f.finding.rule,
                duration(f.finding.impact_ms.max(0))
            )
        });
        let _ = writeln!(
            out,
            "{}  {}  {} finding(s){}{top}  {}",
            app_label(report),
            report
                .application
                .duration_ms
                .map_or("-".to_string(), |ms| duration(ms.max(0))),
            report.findings.len(),
            worst.map_or(String::new(), |s| format!(", worst {}", s.name())),
            log_label(report),
        );
    }
    out
}

/// The application as a line names it: its name, else its id, else its log.
fn app_label(report: &Report) -> String {
    report
        .application
        .name
        .clone()
        .or_else(|| report.application.id.clone())
        .unwrap_or_else(|| log_label(report))
}

/// The log's first file, as shown to the user.
fn log_label(report: &Report) -> String {
    report
        .source
        .files
        .first()
        .map(|f| f.path.clone())
        .unwrap_or_else(|| report.source.inputs.join(" "))
}

/// The application's totals as (label, value) rows, shared by the text and Markdown views.
pub fn summary_rows(s: &crate::Summary) -> Vec<(&'static str, String)> {
    [
        ("jobs", format!("{} ({} failed)", s.jobs, s.failed_jobs)),
        (
            "stages",
            // Skipped stages never ran, so they are not among the stages that ran.
            if s.skipped_stages == 0 {
                format!("{} run ({} failed)", s.stages, s.failed_stages)
            } else {
                format!(
                    "{} run ({} failed), plus {} skipped: their shuffle output was reused",
                    s.stages, s.failed_stages, s.skipped_stages
                )
            },
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
            format!(
                "{} (GC {})",
                duration(s.executor_run_time_ms),
                percent(s.jvm_gc_time_ms, s.executor_run_time_ms)
            ),
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
    ]
    .into()
}

/// How many findings the text view lists; the JSON has all of them.
const TOP_FINDINGS: usize = 15;

/// The findings, ranked by recoverable time, one line each, then the fix for each.
fn findings_section(report: &Report, options: &crate::Options) -> String {
    let opts = options.terminal;
    let shown = options.shown(report);
    let mut out = String::new();
    if report.findings.is_empty() {
        out.push_str("No findings: nothing here crossed a detector's threshold.\n\n");
        return out;
    }
    let _ = writeln!(out, "Findings, most severe first, then most time saved");
    let mut t = new_table(opts, LISTING);
    let with_cost = shown
        .iter()
        .any(|f| f.impact_cost.is_some() || f.impact_memory_cost.is_some());
    let mut header = vec!["#", "severity", "saves", "rule", "finding"];
    if with_cost {
        header.insert(3, "cost");
    }
    t.set_header(header);
    for (i, f) in shown.iter().take(TOP_FINDINGS).enumerate() {
        let finding = &f.finding;
        let mut row = vec![
            Cell::new(i + 1),
            severity_cell(finding.severity, opts),
            Cell::new(f.impact_label(duration)),
            Cell::new(finding.rule),
            Cell::new(&finding.title),
        ];
        if with_cost {
            row.insert(3, Cell::new(cost_label(f)));
        }
        t.add_row(row);
    }
    right_align(&mut t, &[0, 2]);
    let _ = writeln!(out, "{t}");
    if shown.len() > TOP_FINDINGS {
        let _ = writeln!(
            out,
            "({} more findings in --format json)",
            shown.len() - TOP_FINDINGS
        );
    }
    if shown.len() < report.findings.len() {
        let _ = writeln!(
            out,
            "(showing {} of the {} findings: {})",
            shown.len(),
            report.findings.len(),
            options.narrowed_by()
        );
    }
    let _ = writeln!(
        out,
        "\nHow to fix them (sparkdiag rules CODE explains each rule)"
    );
    // On a terminal the fixes wrap at its width, under their text; elsewhere one line each.
    let width = opts.terminal.then(|| usize::from(opts.columns()));
    for (i, f) in shown.iter().take(TOP_FINDINGS).enumerate() {
        let line = format!(
            "{:>3}. {}: {}",
            i + 1,
            f.finding.rule,
            f.finding.recommendation
        );
        match width {
            Some(width) => out.push_str(&wrap(&line, width, 7)),
            None => {
                out.push_str(&line);
                out.push('\n');
            }
        }
    }
    out.push('\n');
    out.push_str(&ui_links(&shown));
    out
}

/// The Spark UI page of each finding that has one (`evidence.spark_ui_url`, from `--ui-url`),
/// numbered as the findings are.
fn ui_links(shown: &[&crate::FindingOut]) -> String {
    let lines: Vec<String> = shown
        .iter()
        .enumerate()
        .filter_map(|(i, f)| {
            let url = f.finding.evidence.get("spark_ui_url")?.as_str()?;
            Some(format!("{:>3}. {}: {url}", i + 1, f.finding.rule))
        })
        .collect();
    if lines.is_empty() {
        return String::new();
    }
    format!("Spark UI pages of the findings\n{}\n\n", lines.join("\n"))
}

/// `text` broken at spaces into lines of at most `width` characters (a longer word gets a line
/// of its own), the lines after the first indented by `indent`.
pub(crate) fn wrap(text: &str, width: usize, indent: usize) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let mut len = 0;
    // Nothing on `line` yet but the indent.
    let mut fresh = true;
    for word in text.split(' ') {
        let w = word.chars().count();
        if !fresh && len + 1 + w > width {
            out.push_str(&line);
            out.push('\n');
            line = " ".repeat(indent);
            len = indent;
            fresh = true;
        }
        if !fresh {
            line.push(' ');
            len += 1;
        }
        line.push_str(word);
        len += w;
        fresh = false;
    }
    out.push_str(&line);
    out.push('\n');
    out
}

/// The "cost" column: core-hour money, and the memory GB-hour money marked as such (money, never
/// time: the "saves" column stays the replayed wall clock).
pub(crate) fn cost_label(f: &crate::FindingOut) -> String {
    match (f.impact_cost, f.impact_memory_cost) {
        (Some(c), Some(m)) => format!("{c:.2} + {m:.2} mem"),
        (None, Some(m)) => format!("{m:.2} mem"),
        (Some(c), None) => format!("{c:.2}"),
        (None, None) => "-".into(),
    }
}

fn right_align(table: &mut Table, columns: &[usize]) {
    for &c in columns {
        if let Some(col) = table.column_mut(c) {
            col.set_cell_alignment(CellAlignment::Right);
        }
    }
}

/// The longest stages' table. Off a terminal it is as wide as its content. On a terminal the
/// numbers never wrap (a size split into `23.1` / `MiB` misreads) and names are shortened
/// first, keeping their `file:line`; a column of nothing but zeros makes room; when even the
/// shortest names do not fit, the names move under the table, keyed by stage.
fn stage_table(shown: &[&crate::StageOut], opts: Terminal) -> String {
    let header = [
        "stage",
        "status",
        "tasks",
        "duration",
        "median task",
        "max task",
        "shuffle read",
        "shuffle write",
        "disk spill",
    ];
    let mut rows: Vec<Vec<String>> = shown
        .iter()
        .map(|st| {
            let q = st.task_duration_ms.as_ref();
            vec![
                format!("{}.{}", st.stage_id, st.attempt_id),
                enum_name(st.status),
                st.num_tasks.to_string(),
                st.duration_ms.map_or("-".into(), duration),
                q.map_or("-".into(), |q| duration(q.p50.into())),
                q.map_or("-".into(), |q| duration(q.max.into())),
                human_bytes(st.shuffle_read_bytes),
                human_bytes(st.shuffle_write_bytes),
                human_bytes(st.disk_spill_bytes),
            ]
        })
        .collect();
    let mut header: Vec<&str> = header.to_vec();
    if opts.terminal && shown.iter().all(|st| st.disk_spill_bytes == 0) {
        header.pop();
        for row in &mut rows {
            row.pop();
        }
    }
    // `color: false` measures a table: colour codes take bytes but no columns.
    let table = |name_max: Option<usize>, color: bool| -> Table {
        let opts = Terminal { color, ..opts };
        let mut t = new_table(opts, LISTING);
        if opts.terminal {
            // Fitting is done here, by shortening names; comfy-table would split words.
            t.set_content_arrangement(ContentArrangement::Disabled);
        }
        let mut head: Vec<String> = header.iter().map(|h| h.to_string()).collect();
        if name_max.is_some() {
            head.push("name".into());
        }
        if opts.terminal {
            // Two-word headers on two lines: the values, not the headers, set the widths.
            head = head.iter().map(|h| h.replace(' ', "\n")).collect();
        }
        t.set_header(head);
        for (st, row) in shown.iter().zip(&rows) {
            let mut cells: Vec<Cell> = row.iter().map(Cell::new).collect();
            if opts.color && st.status == sparkdiag_contract::StageStatus::Failed {
                cells[1] = Cell::new("failed").fg(Color::Red);
            }
            if let Some(max) = name_max {
                cells.push(Cell::new(stage_name(&st.name, max)));
            }
            t.add_row(cells);
        }
        right_align(&mut t, &(2..header.len()).collect::<Vec<_>>());
        if opts.terminal {
            // Two blanks between columns instead of three: room for one more word of a name.
            for c in 0..t.column_count() {
                if let Some(col) = t.column_mut(c) {
                    col.set_padding((1, 0));
                }
            }
        }
        t
    };
    if !opts.terminal {
        return format!("{}\n", table(Some(STAGE_NAME_MAX), opts.color));
    }
    let width = usize::from(opts.columns());
    let fits = |t: &Table| {
        t.to_string()
            .lines()
            .all(|l| l.trim_end().chars().count() <= width)
    };
    let names: Vec<&str> = shown.iter().map(|st| st.name.as_str()).collect();
    for max in (min_stage_name(&names)..=STAGE_NAME_MAX).rev() {
        if fits(&table(Some(max), false)) {
            return format!("{}\n", table(Some(max), opts.color));
        }
    }
    let mut out = format!("{}\n", table(None, opts.color));
    for st in shown {
        let id = format!("{}.{}", st.stage_id, st.attempt_id);
        let name = stage_name(&st.name, width.saturating_sub(id.len() + 3).max(12));
        let _ = writeln!(out, " {id}  {name}");
    }
    out
}

/// The widest a stage name gets in the text view.
const STAGE_NAME_MAX: usize = 40;

/// The narrowest the stage names may get on a narrow terminal: enough for each name's call
/// site (`… at job.py:107`), which says where in the user's code the stage comes from.
fn min_stage_name(names: &[&str]) -> usize {
    names
        .iter()
        .filter_map(|n| n.lines().next()?.rsplit_once(" at "))
        .map(|(_, site)| site.rsplit('/').next().unwrap_or(site).chars().count() + 5)
        .max()
        .unwrap_or(12)
        .clamp(12, STAGE_NAME_MAX)
}

/// A stage name in `max` characters. Spark names stages after their call site
/// (`collect at /path/to/job.py:107`): the file name and line say more than the directories,
/// so the path is cut to its file name, and a name still too long loses the head rather than
/// the call site.
fn stage_name(name: &str, max: usize) -> String {
    let line = name.lines().next().unwrap_or_default();
    let Some((head, site)) = line.rsplit_once(" at ") else {
        return truncate(line, max);
    };
    let site = site.rsplit('/').next().unwrap_or(site);
    let short = format!("{head} at {site}");
    let count = |s: &str| s.chars().count();
    if count(&short) <= max {
        return short;
    }
    let tail = format!("… at {site}");
    if count(&tail) > max {
        return truncate(&short, max);
    }
    let keep = max - count(&tail);
    format!("{}{tail}", head.chars().take(keep).collect::<String>())
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

    #[test]
    fn colour_only_when_asked_for() {
        let app = sparkdiag_model::Application::default();
        let mut report = crate::charts::report_of(&app);
        let rule = sparkdiag_rules::find_rule("FA001").unwrap();
        let finding = sparkdiag_rules::Finding::new(
            rule,
            sparkdiag_contract::Severity::High,
            "Job 2 failed".into(),
            1200,
        );
        report.findings.push(crate::FindingOut {
            finding,
            impact_core_hours: 0.0,
            impact_cost: None,
            impact_memory_cost: None,
            impact_kind: "lost",
            code_sites: Vec::new(),
        });
        let plain = render(&report);
        assert!(!plain.contains('\u{1b}'), "{plain}");
        assert!(plain.contains(" high "));
        assert!(
            plain.lines().all(|l| l == l.trim_end()),
            "no trailing blanks"
        );
        let coloured = render_with(
            &report,
            &crate::Options {
                terminal: Terminal {
                    terminal: true,
                    color: true,
                    width: Some(100),
                },
                ..Default::default()
            },
        );
        assert!(
            coloured.contains("\u{1b}[38;5;9m"),
            "high is red: {coloured:?}"
        );
    }

    #[test]
    fn a_terminal_of_zero_columns_falls_back_to_columns_then_80() {
        use crate::terminal_width;
        assert_eq!(terminal_width(Some(132), Some("100")), 132);
        assert_eq!(terminal_width(Some(0), Some("100")), 100);
        assert_eq!(terminal_width(None, Some(" 120 ")), 120);
        assert_eq!(terminal_width(Some(0), None), 80);
        assert_eq!(terminal_width(Some(0), Some("0")), 80);
        assert_eq!(terminal_width(None, Some("wide")), 80);
    }

    #[test]
    fn fixes_wrap_under_their_text() {
        assert_eq!(
            wrap("  1. EX003: aaa bbb cccc dddddddddddddd e", 20, 7),
            "  1. EX003: aaa bbb\n       cccc\n       dddddddddddddd\n       e\n"
        );
        assert_eq!(wrap("short", 20, 7), "short\n");
    }

    #[test]
    fn stage_names_keep_their_call_site() {
        assert_eq!(
            stage_name("collect at /work/main/testdata/gen/workload.py:107", 40),
            "collect at workload.py:107"
        );
        assert_eq!(
            stage_name(
                "$anonfun$withThreadLocalCaptured$1 at CompletableFuture.java:1768",
                40
            ),
            "$anonfun… at CompletableFuture.java:1768"
        );
        assert_eq!(stage_name("plain name", 40), "plain name");
        assert!(stage_name(&"x".repeat(80), 40).chars().count() <= 40);
    }

    #[test]
    fn a_python_traceback_is_named_by_its_exception() {
        let message = "[PYTHON_EXCEPTION] From the worker: Traceback (most recent call last):\n  \
                       File \"job.py\", line 9, in f\n    raise ValueError(x)\n\
                       ValueError: bad row 1\n\nSQLSTATE: 38000";
        assert_eq!(
            error_headline(message).announced(),
            "[PYTHON_EXCEPTION] From the worker: ValueError: bad row 1"
        );
        assert_eq!(
            error_headline("Stage cancelled\nmore").announced(),
            "Stage cancelled"
        );
    }
}
