//! The command-line habits of `analyze` that other tools taught its users: `--color`, `--quiet`,
//! `--top N`, `--open`, `--ui-url`. The views they choose are `sparkdiag-report`'s (`--quiet`'s
//! one line a finding, a folder of many as one line an application); what is left here is the
//! process's part: the terminal's colour, and the browser.

use std::path::{Path, PathBuf};

use clap::ValueEnum;

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
    pub fn terminal(self, to_file: bool) -> sparkdiag_report::Terminal {
        let mut opts = if to_file {
            sparkdiag_report::Terminal::default()
        } else {
            sparkdiag_report::Terminal::for_stdout()
        };
        match self {
            ColorChoice::Auto => {}
            ColorChoice::Always => opts.color = true,
            ColorChoice::Never => opts.color = false,
        }
        opts
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
