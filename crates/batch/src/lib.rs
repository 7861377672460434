//! A night's batch over many Spark event logs (`sparkdiag batch`): every application under some
//! directories, analysed in parallel, written out as per-application reports (HTML and JSON),
//! the night's Parquet tables, the night's summary (`nights/DATE.json`) and the fleet's index
//! page with regressions against earlier nights; or one slice of such a night, and the merge of
//! every slice into the night one batch would have written. The analysis itself, the views and
//! the tables live in their own crates; this crate orchestrates them and writes the files.
//!
//! ```no_run
//! use sparkdiag_batch::{NightDate, Options, Outcome};
//!
//! let mut options = Options::new(vec!["spark-events/".into()], "fleet/".into(), NightDate::today());
//! options.jobs = Some(4);
//! let config = sparkdiag_rules::Config::default();
//! if let Outcome::Published(night) = sparkdiag_batch::run(&options, &config, &mut ())? {
//!     println!("{} applications, index at {}", night.night.totals.apps, night.index.display());
//! }
//! # Ok::<(), anyhow::Error>(())
//! ```

use std::path::PathBuf;
use std::time::Duration;

use sparkdiag_analysis::redact::Redactor;
use sparkdiag_contract::night::{AppTotals, Change, NightApp, NightError};
use sparkdiag_rules::Config;

mod app;
mod compare;
mod dates;
mod files;
mod history;
mod lock;
mod measured;
mod merge;
mod night;
mod nightfile;
mod ordered;
mod publish;
mod summary;
mod writing;

pub use dates::NightDate;
pub use merge::Slice;
use nightfile::Style;

/// How long a log named in progress may go unwritten before it counts as killed or lost: six
/// hours. Spark writes the log through a buffer it flushes only at job and stage boundaries
/// (or when 100 KiB fill it), so a stage of a few long tasks leaves a live log untouched for
/// tens of minutes; a driver that has written nothing for six hours is gone.
pub const DEFAULT_STALE_AFTER: Duration = Duration::from_secs(6 * 3600);

/// What a batch reads, where it writes and how it compares; the command line's flags, typed.
#[derive(Debug, Clone)]
pub struct Options {
    /// Directories holding event logs (any mix of layouts, codecs and archives); with `merge`,
    /// the OUTDIRs of every slice of one night.
    pub dirs: Vec<String>,
    /// Where the reports, the index page, the tables and the night's history go.
    pub output: PathBuf,
    /// The night these logs belong to; re-running a date replaces its reports and partitions.
    pub date: NightDate,
    /// How many applications to analyse at once; `None` or 0: the number of cores.
    pub jobs: Option<usize>,
    /// Also analyse logs still being written.
    pub include_in_progress: bool,
    /// A log still being written (named in progress; a Databricks folder without its
    /// application's end) whose files were all last modified longer ago than this is no longer
    /// being written: its driver was killed or lost. It is analysed and counted as killed or
    /// incomplete instead of being skipped.
    pub stale_after: Duration,
    /// Only logs modified within this long before now.
    pub since: Option<Duration>,
    /// Only logs last written on this UTC date: the newest last-modified time of a log's files
    /// (a file's time, an object's Last-Modified) falls on it. The night over a folder or a
    /// prefix that keeps every earlier night's logs too, as cluster-log delivery does.
    pub modified_on: Option<NightDate>,
    /// How much runtime or recoverable time must grow to count as a regression (0.2 = 20 %).
    pub regression_threshold: f64,
    /// ...and by at least this many seconds.
    pub min_regression_s: f64,
    /// Matches applications across nights: `name`, or `spark-property:<key>`.
    pub key: String,
    /// Analyse only this slice of the logs found; it writes no index page.
    pub slice: Option<Slice>,
    /// `dirs` are the OUTDIRs of every slice of one night: join them into `output`.
    pub merge: bool,
    /// Put money beside each application's savings in its reports.
    pub prices: sparkdiag_analysis::Prices,
    /// `--redact`: every file the night writes pseudonymised, keyed by this secret.
    pub redact: Option<RedactKey>,
}

/// The secret `batch --redact` keys its pseudonyms with ([`Redactor::keyed`]): the same secret
/// every night gives a job, a host or a path the same pseudonym every night, so the nights
/// still compare; kept out of the output, it keeps a guess from being checked against one.
#[derive(Clone)]
pub struct RedactKey(Vec<u8>);

impl RedactKey {
    /// `None` for an empty secret, which would key nothing.
    pub fn new(secret: impl Into<Vec<u8>>) -> Option<RedactKey> {
        let secret = secret.into();
        (!secret.is_empty()).then_some(RedactKey(secret))
    }

    /// The secret in `SPARKDIAG_REDACT_KEY` ([`sparkdiag_analysis::redact::KEY_VARIABLE`]);
    /// refused when unset or empty, since without one a pseudonym could be checked against a
    /// guess and could not match the same job every night.
    pub fn from_environment() -> anyhow::Result<RedactKey> {
        let variable = sparkdiag_analysis::redact::KEY_VARIABLE;
        sparkdiag_analysis::redact::key_from_environment()
            .and_then(RedactKey::new)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "--redact needs a secret in {variable} (any string, e.g. from `openssl rand \
                     -hex 16`, the same every night and kept out of the output): it keys the \
                     pseudonyms, so that a job keeps its pseudonym from night to night and \
                     nobody can check a guessed host or name against one"
                )
            })
    }

    /// A fresh redactor for one application (or one unreadable log): keyed, it names every
    /// value as every other application's redactor does, so none need be shared.
    pub(crate) fn redactor(&self) -> Redactor {
        Redactor::keyed(&self.0)
    }
}

impl std::fmt::Debug for RedactKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RedactKey(..)")
    }
}

impl Options {
    /// A whole night over `dirs` into `output`, with the command line's defaults.
    pub fn new(dirs: Vec<String>, output: PathBuf, date: NightDate) -> Self {
        Options {
            dirs,
            output,
            date,
            jobs: None,
            include_in_progress: false,
            stale_after: DEFAULT_STALE_AFTER,
            since: None,
            modified_on: None,
            regression_threshold: 0.2,
            min_regression_s: 60.0,
            key: "name".to_string(),
            slice: None,
            merge: false,
            prices: Default::default(),
            redact: None,
        }
    }
}

/// Told how the night goes, on the thread that called [`run`], so a caller can draw progress.
/// Every method does nothing unless implemented; `()` is the caller that wants nothing.
pub trait Progress {
    /// `logs` logs are to be analysed (after slicing and filtering).
    fn started(&mut self, logs: usize) {
        let _ = logs;
    }
    /// One more log was analysed (or found unreadable), in the order the logs were found.
    fn analysed(&mut self, input: &str) {
        let _ = input;
    }
}

impl Progress for () {}

/// The command line's bar on standard error (drawn only on a terminal).
impl Progress for sparkdiag_report::progress::Bar {
    fn started(&mut self, logs: usize) {
        self.start(logs);
    }
    fn analysed(&mut self, input: &str) {
        self.advance(input);
    }
}

/// What a batch ended with.
#[derive(Debug)]
pub enum Outcome {
    /// One slice was written (reports, tables, its night and marker); no index page.
    Slice { slice: Slice, night: NightSummary },
    /// A whole night (or a merge of slices) was written, with its index page.
    Published(Published),
}

/// What a batch tells of the night it wrote. Each application's line is in the night file,
/// not here: a night of any size is never held whole.
#[derive(Debug)]
pub struct NightSummary {
    pub date: String,
    /// The night file written (`OUTDIR/nights/DATE.json`), every application's line in it.
    pub file: PathBuf,
    /// The applications analysed, added up.
    pub totals: AppTotals,
    /// Logs that could not be read, with why.
    pub errors: Vec<NightError>,
    /// Logs still being written, skipped.
    pub in_progress: Vec<String>,
}

/// A night written in full: the night, how it compares with earlier nights, and its index page.
#[derive(Debug)]
pub struct Published {
    pub night: NightSummary,
    /// The applications that failed or lost a job, in the index's order.
    pub failed: Vec<NightApp>,
    /// Every application compared with its previous run; `regression` marks the regressions.
    pub changes: Vec<Change>,
    /// The index page written.
    pub index: PathBuf,
}

impl Published {
    pub fn regressions(&self) -> usize {
        self.changes.iter().filter(|c| c.regression).count()
    }
}

/// Runs the batch `options` describe with the rules' `config`, telling `progress` as it goes.
/// A log that cannot be read is listed in the night and does not stop it; a missing directory,
/// an output that cannot be written or an incomplete set of slices does, naming the path.
pub fn run(
    options: &Options,
    config: &Config,
    progress: &mut dyn Progress,
) -> anyhow::Result<Outcome> {
    let date = options.date.as_str();
    if !options.merge {
        night::refuse_missing_dirs(options)?;
    }
    let _lock = lock::lock_output(&options.output, date)?;
    if options.merge {
        let night = merge::merge(&options.dirs, &options.output, date)?;
        return publish::publish(options, config, night).map(Outcome::Published);
    }
    match options.slice {
        Some(slice) => {
            let night = night::analyse_night(options, config, progress, Style::Compact)?;
            merge::write_slice_marker(&options.output, date, slice)?;
            Ok(Outcome::Slice {
                slice,
                night: night.summary(),
            })
        }
        None => {
            let night = night::analyse_night(options, config, progress, Style::Pretty)?;
            publish::publish(options, config, night).map(Outcome::Published)
        }
    }
}
