//! The command-line habits of `analyze` that other tools taught its users: `--color`, `--quiet`,
//! `--top N`, `--open`, `--ui-url`, and a one-line-per-application summary for a folder of many.

use std::path::{Path, PathBuf};

use clap::ValueEnum;
use sparkdiag_report::Report;

/// When the text view is in colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// On a terminal, unless `NO_COLOR` is set.
    #[default]
    Auto,
    /// Always, even into a pipe or a file (and despite `NO_COLOR`: the flag is asked for).
    Always,
    /// Never.
    Never,
}

#[derive(clap::Args, Default)]
pub struct Habits {
    /// Colour the severities and failed stages: auto (on a terminal, unless NO_COLOR is set),
    /// always, or never.
    #[arg(long, value_enum, value_name = "WHEN")]
    pub color: Option<ColorChoice>,
    /// Print only the findings, one line each (nothing when there are none), and no warnings
    /// on standard error; the exit code still follows --fail-on.
    #[arg(short, long)]
    pub quiet: bool,
    /// Keep only the N findings that would recover the most time (in every format).
    #[arg(long, value_name = "N")]
    pub top: Option<usize>,
    /// Also write the HTML report to a temporary file and open it in the browser ($BROWSER,
    /// else xdg-open or open).
    #[arg(long)]
    pub open: bool,
    /// The Spark UI the logs belong to, to link each finding to its stage or job: a History
    /// Server (http://host:18080) or an application's own UI page, such as a Databricks
    /// cluster's Spark UI (https://.../sparkui/CLUSTER/driver-N).
    #[arg(long, value_name = "BASE")]
    pub ui_url: Option<String>,
}

impl ColorChoice {
    /// The terminal library under the tables honours `NO_COLOR` itself, and `--color always`
    /// is to win over it (no-color.org): it is taken out of this process's environment. Call
    /// before the analysis starts its threads.
    pub fn before_threads(self) {
        if self == ColorChoice::Always {
            // SAFETY: called first thing in `analyze`, before the analysis starts a thread; the
            // one thread already running, the signal watcher (`process.rs`), never touches the
            // environment, so nothing else reads or writes it at the same time.
            unsafe { std::env::remove_var("NO_COLOR") };
        }
    }

    /// The text view's layout and colour for where the text goes (`to_file` for `-o FILE`).
    pub fn text_options(self, to_file: bool) -> sparkdiag_report::analyze::text::Options {
        let mut opts = if to_file {
            sparkdiag_report::analyze::text::Options::default()
        } else {
            sparkdiag_report::analyze::text::Options::for_stdout()
        };
        match self {
            ColorChoice::Auto => {}
            ColorChoice::Always => opts.color = true,
            ColorChoice::Never => opts.color = false,
        }
        opts
    }
}

/// From this many applications on, the text view of `analyze` is one line each.
pub const MANY_APPLICATIONS: usize = 6;

/// The text view's section of Spark UI links, empty without `--ui-url`.
pub fn ui_section(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    format!("Spark UI pages of the findings\n{}\n", lines.join("\n"))
}

/// Keeps the `n` findings that recover the most (the report lists them in that order).
pub fn keep_top(report: &mut Report, n: Option<usize>) {
    if let Some(n) = n {
        report.findings.truncate(n);
    }
}

/// The page of the Spark UI that shows a finding's first stage, else its first job.
pub fn ui_link(base: &str, report: &Report, finding: &sparkdiag_rules::Finding) -> Option<String> {
    let app = app_root(base, report)?;
    if let Some(stage) = finding.scope.stage_ids.first() {
        return Some(format!("{app}/stages/stage/?id={stage}&attempt=0"));
    }
    if let Some(job) = finding.scope.job_ids.first() {
        return Some(format!("{app}/jobs/job/?id={job}"));
    }
    if let Some(sql) = finding.scope.sql_execution_ids.first() {
        return Some(format!("{app}/SQL/execution/?id={sql}"));
    }
    None
}

/// Where one application's pages start: a History Server's `/history/APP[/ATTEMPT]`, or the
/// base itself when it already names one application's UI (a live driver, Databricks).
fn app_root(base: &str, report: &Report) -> Option<String> {
    let base = base.trim_end_matches('/');
    if base.contains("/history/") || base.contains("/sparkui/") || base.contains("/proxy/") {
        return Some(base.to_string());
    }
    let app = report.application.id.as_deref()?;
    Some(match report.application.attempt_id.as_deref() {
        Some(attempt) => format!("{base}/history/{app}/{attempt}"),
        None => format!("{base}/history/{app}"),
    })
}

/// Puts each finding's Spark UI page in its evidence (`spark_ui_url`), where every format
/// shows it, and returns the text view's lines for them.
pub fn add_ui_links(base: Option<&str>, report: &mut Report) -> Vec<String> {
    let Some(base) = base else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    for i in 0..report.findings.len() {
        let Some(url) = ui_link(base, report, &report.findings[i].finding) else {
            continue;
        };
        let finding = &mut report.findings[i].finding;
        lines.push(format!("{:>3}. {}: {url}", i + 1, finding.rule));
        finding
            .evidence
            .insert("spark_ui_url".into(), serde_json::Value::String(url));
    }
    lines
}

/// `--quiet`: one line a finding, `APP  SEVERITY  CODE  saves ~T  title`.
pub fn quiet_lines(report: &Report) -> String {
    let app = app_label(report);
    let mut out = String::new();
    for f in &report.findings {
        let finding = &f.finding;
        out.push_str(&format!(
            "{app}: {} {} saves {}: {}\n",
            finding.severity.name(),
            finding.rule,
            seconds(finding.impact_ms),
            finding.title
        ));
    }
    out
}

/// The one-line summary of each application in a folder of many, worst first as found.
pub fn summary_lines(reports: &[Report]) -> String {
    let mut out = format!(
        "{} applications: one line each (sparkdiag analyze PATH shows one in full)\n",
        reports.len()
    );
    for report in reports {
        let worst = report.findings.iter().map(|f| f.finding.severity).min();
        let saves: i64 = report
            .findings
            .first()
            .map_or(0, |f| f.finding.impact_ms.max(0));
        out.push_str(&format!(
            "{}  {}  {} finding(s){}{}  {}\n",
            app_label(report),
            report
                .application
                .duration_ms
                .map_or("-".to_string(), seconds),
            report.findings.len(),
            worst.map_or(String::new(), |s| format!(", worst {}", s.name())),
            report.findings.first().map_or(String::new(), |f| format!(
                ", top {} saves {}",
                f.finding.rule,
                seconds(saves)
            )),
            log_label(report),
        ));
    }
    out
}

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

fn seconds(ms: i64) -> String {
    let s = ms.max(0) as f64 / 1000.0;
    if s >= 3600.0 {
        format!("{:.1} h", s / 3600.0)
    } else if s >= 60.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{s:.1} s")
    }
}

/// `--open`: the HTML page in a file of its own, then the browser: `$BROWSER` (a command, which
/// gets the file's path), else the system's opener. The file is kept: the browser reads it
/// after this process has ended.
pub fn open_in_browser(html: &str) -> anyhow::Result<PathBuf> {
    let dir = std::env::temp_dir().join("sparkdiag-reports");
    std::fs::create_dir_all(&dir)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let file = dir.join(format!("report-{}-{stamp}.html", std::process::id()));
    std::fs::write(&file, html)?;
    launch(&file)?;
    Ok(file)
}

fn launch(file: &Path) -> anyhow::Result<()> {
    let candidates: Vec<String> = match std::env::var("BROWSER") {
        // $BROWSER may list several commands separated by ':' (the convention xdg-utils read).
        Ok(list) if !list.trim().is_empty() => list.split(':').map(str::to_string).collect(),
        _ if cfg!(target_os = "macos") => vec!["open".into()],
        _ if cfg!(windows) => vec!["explorer".into()],
        _ => vec!["xdg-open".into()],
    };
    let mut tried = Vec::new();
    for command in &candidates {
        let mut words = command.split_whitespace();
        let Some(program) = words.next() else {
            continue;
        };
        let args: Vec<String> = words
            .map(|w| w.replace("%s", &file.display().to_string()))
            .collect();
        let mut cmd = std::process::Command::new(program);
        cmd.args(&args);
        if !command.contains("%s") {
            cmd.arg(file);
        }
        cmd.stdin(std::process::Stdio::null());
        match cmd.status() {
            Ok(status) if status.success() => return Ok(()),
            Ok(status) => tried.push(format!("{program} ({status})")),
            Err(e) => tried.push(format!("{program} ({e})")),
        }
    }
    anyhow::bail!(
        "could not open a browser (tried {}); the report is in {} (set BROWSER to choose one)",
        tried.join(", "),
        file.display()
    )
}
