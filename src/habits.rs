//! The command-line habits of `analyze` that other tools taught its users: `--color`, `--quiet`,
//! `--top N`, `--open`, `--ui-url`. The views they choose are `sparkdiag-report`'s (`--quiet`'s
//! one line a finding, a folder of many as one line an application), and so are the colour
//! choice and the browser; what is left here is the process's part: `NO_COLOR` taken out of
//! the environment for `--color always`.

use sparkdiag_report::ColorChoice;

#[derive(clap::Args, Default)]
pub struct Habits {
    /// Colour the severities and failed stages: auto (on a terminal, unless NO_COLOR is set),
    /// always, or never.
    #[arg(long, value_name = "WHEN", value_parser = crate::flags::color())]
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

/// The terminal library under the tables honours `NO_COLOR` itself, and `--color always` is
/// to win over it (no-color.org): it is taken out of this process's environment. Call before
/// the analysis starts its threads.
pub fn before_threads(color: ColorChoice) {
    if color == ColorChoice::Always {
        // SAFETY: called first thing in `analyze` and `diff`, before the analysis starts a
        // thread; the one thread already running, the signal watcher (`process.rs`), never
        // touches the environment, so nothing else reads or writes it at the same time.
        unsafe { std::env::remove_var("NO_COLOR") };
    }
}
