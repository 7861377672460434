//! `sparkdiag batch`: the command line's flags mapped onto [`sparkdiag_batch::Options`], a
//! progress bar while the night is analysed, and the night's summary on standard output. The
//! night itself is done by `sparkdiag-batch`.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use sparkdiag_batch::{NightDate, RedactKey, Slice};

#[derive(clap::Args)]
pub struct BatchArgs {
    /// Directories holding event logs (any mix of layouts, codecs and archives); with the
    /// `remote` feature also s3://, gs://, abfss:// and az:// prefixes.
    #[cfg_attr(
        feature = "remote",
        arg(required_unless_present = "history_server", value_name = "DIR")
    )]
    #[cfg_attr(not(feature = "remote"), arg(required = true, value_name = "DIR"))]
    pub dirs: Vec<String>,
    /// Also every application this Spark History Server lists (http://host:18080), through its
    /// REST API; --since keeps those updated within that long.
    #[cfg(feature = "remote")]
    #[arg(long, value_name = "URL")]
    pub history_server: Option<String>,
    #[cfg(feature = "remote")]
    #[command(flatten)]
    pub storage: sparkdiag_remote::StorageOptions,
    /// Where the reports, the index page, the tables and the night's history go.
    #[arg(short, long, value_name = "OUTDIR")]
    pub output: PathBuf,
    /// The night these logs belong to (YYYY-MM-DD); default: today (UTC). Re-running a date
    /// replaces that date's reports and table partitions.
    #[arg(long, value_name = "YYYY-MM-DD")]
    pub date: Option<String>,
    /// How many applications to analyse at once; default: the number of cores.
    #[arg(long, value_name = "N")]
    pub jobs: Option<usize>,
    /// Only logs last written on this UTC date (YYYY-MM-DD): the newest last-modified time of
    /// a log's files or objects falls on it. For a folder or prefix that keeps every night's
    /// logs, as cluster-log delivery does; it also names the night unless --date does.
    #[arg(long, value_name = "YYYY-MM-DD", conflicts_with = "merge")]
    pub modified_on: Option<String>,
    /// Also analyse logs still being written (an .inprogress name, a Databricks folder without
    /// its application's end); they are skipped by default.
    #[arg(long)]
    pub include_in_progress: bool,
    /// A log still being written but not written to for this long is a killed or lost
    /// application: analysed and counted as such, not skipped. Default 6h.
    #[arg(long, value_name = "DURATION", value_parser = sparkdiag_report::format::parse_duration)]
    pub stale_after: Option<std::time::Duration>,
    /// Only logs modified within this long before now: `36h`, `2d`, `90m`.
    #[arg(long, value_name = "DURATION", value_parser = sparkdiag_report::format::parse_duration)]
    pub since: Option<std::time::Duration>,
    /// Exit with code 1 when an application regressed against its previous run.
    #[arg(long)]
    pub fail_on_regression: bool,
    /// How much runtime or recoverable time must grow to count as a regression (0.2 = 20 %).
    #[arg(long, value_name = "SHARE", default_value_t = 0.2)]
    pub regression_threshold: f64,
    /// ...and by at least this many seconds, so a 3 s job taking 4 s is not a regression.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub min_regression_s: f64,
    /// Match applications across nights by this instead of the application name:
    /// `name` or `spark-property:<key>` (e.g. spark-property:spark.databricks.clusterUsageTags.clusterName).
    #[arg(long, value_name = "KEY", default_value = "name")]
    pub key: String,
    /// Analyse only slice K of N (`K/N`, K from 0): the applications found at positions K,
    /// K+N, K+2N, ... One slice of a night spread over machines (examples/distributed_batch.py):
    /// it writes its reports, tables and night, but no index page; `--merge` joins the slices.
    #[arg(long, value_name = "K/N", value_parser = clap::value_parser!(Slice), conflicts_with = "merge")]
    pub slice: Option<Slice>,
    /// The DIRs are the OUTDIRs of every `--slice K/N` of one night (same DIRs, same --date):
    /// writes OUTDIR as one `batch` over all the logs would have, and moves the slices' reports
    /// into it.
    #[arg(long)]
    pub merge: bool,
    /// Pseudonymise every file the night writes (reports, index page, night file, tables) as
    /// `analyze --redact` does, keyed by the secret in SPARKDIAG_REDACT_KEY: the same secret
    /// gives a job the same pseudonym every night, so nights still compare.
    #[arg(long)]
    pub redact: bool,
    #[command(flatten)]
    pub settings: sparkdiag_analysis::settings::Settings,
}

pub fn run(args: BatchArgs) -> anyhow::Result<ExitCode> {
    let started = Instant::now();
    let (config, prices) = args.settings.read()?;
    let (date, modified_on) =
        NightDate::for_night(args.date.as_deref(), args.modified_on.as_deref())
            .map_err(anyhow::Error::msg)?;
    #[cfg(feature = "remote")]
    let dirs = {
        sparkdiag_remote::install(args.storage)?;
        let mut dirs = args.dirs;
        if let Some(server) = &args.history_server {
            dirs.extend(sparkdiag_remote::history_server_paths(server, &[]));
        }
        dirs
    };
    #[cfg(not(feature = "remote"))]
    let dirs = args.dirs;
    let options = sparkdiag_batch::Options {
        jobs: args.jobs,
        include_in_progress: args.include_in_progress,
        stale_after: args
            .stale_after
            .unwrap_or(sparkdiag_batch::DEFAULT_STALE_AFTER),
        since: args.since,
        modified_on,
        regression_threshold: args.regression_threshold,
        min_regression_s: args.min_regression_s,
        key: args.key,
        slice: args.slice,
        merge: args.merge,
        prices,
        redact: args.redact.then(RedactKey::from_environment).transpose()?,
        ..sparkdiag_batch::Options::new(dirs, args.output, date)
    };
    let mut progress = sparkdiag_report::progress::Bar::default();
    let outcome = sparkdiag_batch::run(&options, &config, &mut progress);
    progress.finish();
    let outcome = outcome?;
    // A reader that stops early (`| head`) is not an error: main treats the broken pipe as done.
    let summary = outcome.summary(started.elapsed());
    std::io::stdout().lock().write_all(summary.as_bytes())?;
    Ok(ExitCode::from(outcome.exit_code(args.fail_on_regression)))
}
