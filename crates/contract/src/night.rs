//! What `sparkdiag batch` keeps of each night (`OUTDIR/nights/<date>.json`): enough to rank the
//! night's applications and to compare a later night with it. `sparkdiag-batch` writes and
//! compares nights; `sparkdiag-report` draws the fleet's index page from them.

use serde::{Deserialize, Serialize};

use crate::{AppStatus, Outcome};

/// One application of a night.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NightApp {
    /// What matches runs across nights (the application name unless configured).
    pub key: String,
    pub app_id: String,
    pub name: String,
    pub status: String,
    pub duration_ms: i64,
    /// Executor time the tasks used: what the run cost in compute.
    #[serde(default)]
    pub core_ms: i64,
    /// Sum of the findings' recoverable time.
    pub impact_ms: i64,
    /// Codes of findings at medium severity or above.
    pub findings: Vec<String>,
    pub worst_severity: Option<String>,
    pub top_finding: Option<String>,
    /// The per-application HTML report, relative to the output folder.
    pub report: String,
    /// Jobs started, and how many of them failed. A driver that catches a failed job still
    /// exits 0, so `status` alone can say `succeeded` about a run that lost work.
    #[serde(default)]
    pub jobs: usize,
    #[serde(default)]
    pub failed_jobs: usize,
    /// The log it was read from, as found under the batch's directories: what tells apart
    /// applications that share a name.
    #[serde(default)]
    pub input: String,
    /// Added in v1: what a regression's likely cause is read from. Rows the input stages read
    /// (the basis `diff` grows data by) and their bytes.
    #[serde(default)]
    pub input_rows: i64,
    #[serde(default)]
    pub input_bytes: i64,
    /// Spark's version (or the Databricks runtime's), when the log says.
    #[serde(default)]
    pub spark_version: Option<String>,
    /// Executors that ran, and the time no job was running.
    #[serde(default)]
    pub executors: usize,
    #[serde(default)]
    pub driver_ms: i64,
    /// Added in v1: how it ended ([`crate::Outcome::name`]); empty in nights written before,
    /// where [`NightApp::kind`] reads it from `status` and `failed_jobs`.
    #[serde(default)]
    pub outcome: String,
    /// Added in v1: jobs its own program's stop cancelled (not in `failed_jobs`).
    #[serde(default)]
    pub stopped_jobs: usize,
    /// Added in v1: a fingerprint of the settings that can change how it runs
    /// (`sparkdiag_diff::settings_fingerprint`): when it differs from the previous run's, the
    /// night checks the fixes the change applied.
    #[serde(default)]
    pub settings: String,
}

impl NightApp {
    /// How it ended: `outcome`, or for a night written before it was kept, what `status` and
    /// `failed_jobs` say.
    pub fn kind(&self) -> Outcome {
        Outcome::parse(&self.outcome).unwrap_or_else(|| {
            let status = match self.status.as_str() {
                "succeeded" => AppStatus::Succeeded,
                "failed" => AppStatus::Failed,
                _ => AppStatus::Incomplete,
            };
            Outcome::of(status, self.failed_jobs, self.stopped_jobs)
        })
    }

    /// The application itself failed or did not finish, or one of its jobs failed.
    pub fn failed(&self) -> bool {
        self.kind().is_failure()
    }

    /// How it ended, with the jobs that failed: "succeeded, 1 of 5 jobs failed", "killed or
    /// incomplete", "stopped by the program (1 job cancelled by its stop)".
    pub fn outcome(&self) -> String {
        let jobs = |n: usize, what: &str| {
            format!(
                "{n} of {} job{} {what}",
                self.jobs,
                if self.jobs == 1 { "" } else { "s" }
            )
        };
        match self.kind() {
            Outcome::StoppedByProgram => format!(
                "stopped by the program ({})",
                jobs(self.stopped_jobs, "cancelled by its stop")
            ),
            Outcome::KilledOrIncomplete if self.failed_jobs > 0 => {
                format!("killed or incomplete, {}", jobs(self.failed_jobs, "failed"))
            }
            Outcome::KilledOrIncomplete => "killed or incomplete".to_string(),
            _ if self.failed_jobs > 0 => {
                format!("{}, {}", self.status, jobs(self.failed_jobs, "failed"))
            }
            _ => self.status.clone(),
        }
    }
}

/// Where an application stands in the index's order: those that failed or lost a job first (a
/// failure is the first thing to look at, however little time it cost), then by recoverable
/// time, then by runtime; smallest first. A few bytes, so a night too large to hold can rank
/// its applications by this and read their rows back in that order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    succeeded: bool,
    recoverable_ms: std::cmp::Reverse<i64>,
    runtime_ms: std::cmp::Reverse<i64>,
}

impl NightApp {
    /// Where this application stands in the index's order (`sparkdiag_report::fleet::ranked_apps`).
    pub fn rank(&self) -> Rank {
        Rank {
            succeeded: !self.failed(),
            recoverable_ms: std::cmp::Reverse(self.impact_ms),
            runtime_ms: std::cmp::Reverse(self.duration_ms),
        }
    }
}

/// What the index's summary line and the chart over the nights need of a night's
/// applications, added up one application at a time.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct AppTotals {
    pub apps: usize,
    /// Applications that failed or lost a job ([`NightApp::failed`]): the next three added.
    pub failed: usize,
    /// Of `failed`: those that failed themselves, those that exited cleanly with a failed job,
    /// and those killed or lost (no application end: a log cut short or not written to since).
    pub failed_apps: usize,
    pub with_failed_jobs: usize,
    pub killed: usize,
    /// Applications whose only unfinished jobs their own program's stop cancelled: no failure.
    pub stopped: usize,
    pub runtime_ms: i64,
    pub recoverable_ms: i64,
    /// Findings at medium severity or above, over every application.
    pub findings: usize,
}

impl AppTotals {
    pub fn of(apps: &[NightApp]) -> Self {
        let mut totals = AppTotals::default();
        apps.iter().for_each(|app| totals.add(app));
        totals
    }

    pub fn add(&mut self, app: &NightApp) {
        self.apps += 1;
        let kind = app.kind();
        self.failed += usize::from(kind.is_failure());
        self.failed_apps += usize::from(kind == Outcome::Failed);
        self.with_failed_jobs += usize::from(kind == Outcome::SucceededWithFailedJobs);
        self.killed += usize::from(kind == Outcome::KilledOrIncomplete);
        self.stopped += usize::from(kind == Outcome::StoppedByProgram);
        self.runtime_ms += app.duration_ms;
        self.recoverable_ms += app.impact_ms;
        self.findings += app.findings.len();
    }
}

/// A log that could not be read, with why.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NightError {
    pub input: String,
    pub error: String,
}

/// One of the night's worst findings, across applications.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct NightFinding {
    pub app: String,
    pub rule: String,
    pub severity: String,
    pub title: String,
    pub impact_ms: i64,
    pub report: String,
    /// Added in v1: what its report's "saves" column says (`~1m 3s`, `lost ~5m`,
    /// `~2.1 core-h`, `in DR002`, or `-` when nothing was estimated); empty in nights written
    /// before, where `impact_ms` is all there is.
    #[serde(default)]
    pub saves: String,
}

/// What `sparkdiag batch` keeps of one night.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Night {
    /// `YYYY-MM-DD`.
    pub date: String,
    pub apps: Vec<NightApp>,
    pub errors: Vec<NightError>,
    pub worst_findings: Vec<NightFinding>,
    /// Logs still being written, skipped (batch's `--include-in-progress` reads them).
    #[serde(default)]
    pub in_progress: Vec<String>,
}

impl Night {
    /// A night of `date` with nothing in it yet.
    pub fn new(date: &str) -> Self {
        Night {
            date: date.to_string(),
            apps: Vec::new(),
            errors: Vec::new(),
            worst_findings: Vec::new(),
            in_progress: Vec::new(),
        }
    }
}

/// What the index's chart over the nights shows of one night: kept instead of the night, so
/// that drawing 30 nights needs 30 of these, not 30 nights of applications.
#[derive(Debug, Clone, PartialEq)]
pub struct NightTotals {
    pub date: String,
    /// The applications' runtimes, summed.
    pub runtime_ms: i64,
    /// Findings at medium severity or above, over every application.
    pub findings: usize,
}

impl NightTotals {
    pub fn of(night: &Night) -> Self {
        NightTotals::from_totals(&night.date, &AppTotals::of(&night.apps))
    }

    /// The totals of the night of `date` whose applications add up to `totals`.
    pub fn from_totals(date: &str, totals: &AppTotals) -> Self {
        NightTotals {
            date: date.to_string(),
            runtime_ms: totals.runtime_ms,
            findings: totals.findings,
        }
    }
}

/// How an application changed since its latest earlier run.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub key: String,
    pub app_id: String,
    pub regression: bool,
    pub what: String,
    /// The earlier night compared with.
    pub since: String,
    pub report: String,
    /// A slower or costlier night's likely cause: measured on the two runs' logs as
    /// `sparkdiag diff` measures it (a plan, a setting, the input, the cluster, skew...) while
    /// both logs are where they were found; else read from the two night summaries (the input
    /// grew, Spark or the executors changed, more driver-only time), or the `sparkdiag diff`
    /// command that compares the two runs in full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
    /// The settings changed since the earlier night and applied the fix of some of its
    /// findings: each, with the saving predicted and the time its work saved (as `sparkdiag
    /// diff` checks a fix).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub fixes: Vec<crate::diff::FixCheck>,
}

/// Small nights for the tests of what reads them (the batch's comparison, the fleet page).
#[cfg(any(test, feature = "testing"))]
pub mod testing {
    use super::{Night, NightApp};

    /// A succeeded application of one job under `key`, with `findings` at medium or above.
    pub fn app(key: &str, duration_ms: i64, findings: &[&str]) -> NightApp {
        NightApp {
            key: key.into(),
            app_id: format!("id-{key}"),
            name: key.into(),
            status: "succeeded".into(),
            duration_ms,
            core_ms: 0,
            impact_ms: 0,
            findings: findings.iter().map(|s| s.to_string()).collect(),
            worst_severity: None,
            top_finding: None,
            report: format!("apps/{key}.html"),
            jobs: 1,
            failed_jobs: 0,
            input: format!("logs/{key}"),
            input_rows: 0,
            input_bytes: 0,
            spark_version: None,
            executors: 2,
            driver_ms: 0,
            outcome: String::new(),
            stopped_jobs: 0,
            settings: String::new(),
        }
    }

    /// The night of `date` with `apps` and nothing else.
    pub fn night(date: &str, apps: Vec<NightApp>) -> Night {
        Night {
            apps,
            ..Night::new(date)
        }
    }
}
