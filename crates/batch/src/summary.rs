//! What `sparkdiag batch` prints when the night is written: one line of counts, then each
//! application that failed, each log that could not be read or was skipped, each regression,
//! and where the index page is.

use std::fmt::Write;
use std::time::Duration;

use crate::{Outcome, Published};

impl Outcome {
    /// The summary for standard output, `elapsed` being the batch's wall-clock time.
    pub fn summary(&self, elapsed: Duration) -> String {
        let seconds = elapsed.as_secs_f64();
        match self {
            Outcome::Slice { slice, night } => format!(
                "slice {}/{}: {} application(s) analysed in {seconds:.1} s, {} unreadable, {} in progress skipped\n",
                slice.index,
                slice.of,
                night.totals.apps,
                night.errors.len(),
                night.in_progress.len(),
            ),
            Outcome::Published(published) => published.summary(seconds),
        }
    }

    /// The exit code: 1 when `fail_on_regression` and an application regressed since earlier
    /// nights (a slice compares nothing), else 0.
    pub fn exit_code(&self, fail_on_regression: bool) -> u8 {
        match self {
            Outcome::Published(published) => {
                u8::from(fail_on_regression && published.regressions() > 0)
            }
            Outcome::Slice { .. } => 0,
        }
    }
}

impl Published {
    /// Says what failed and what regressed.
    fn summary(&self, seconds: f64) -> String {
        let Published {
            night,
            failed,
            changes,
            index,
        } = self;
        let mut out = format!(
            "{} application(s) analysed in {seconds:.1} s: {} failed or with failed jobs, {} unreadable, {} in progress skipped; {} regression(s) since earlier nights\n",
            night.totals.apps,
            failed.len(),
            night.errors.len(),
            night.in_progress.len(),
            self.regressions()
        );
        for a in failed {
            let _ = writeln!(out, "  {}: {} ({})", a.name, a.outcome(), a.input);
        }
        for e in &night.errors {
            let _ = writeln!(out, "  could not read {}: {}", e.input, e.error);
        }
        for input in &night.in_progress {
            let _ = writeln!(out, "  skipped, still being written: {input}");
        }
        for c in changes.iter().filter(|c| c.regression) {
            let cause = c
                .cause
                .as_deref()
                .map(|cause| format!("; likely: {cause}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "  regressed: {} — {} (since {}){cause}",
                c.key, c.what, c.since
            );
        }
        let _ = writeln!(out, "wrote {}", index.display());
        out
    }
}

#[cfg(test)]
mod tests {
    use sparkdiag_contract::night::testing::app;
    use sparkdiag_contract::night::{AppTotals, Change, NightError};

    use crate::{NightSummary, Outcome, Published, Slice};

    fn night(apps: usize) -> NightSummary {
        NightSummary {
            date: "2026-11-30".into(),
            file: "out/nights/2026-11-30.json".into(),
            totals: AppTotals {
                apps,
                ..AppTotals::default()
            },
            errors: vec![NightError {
                input: "logs/bad.zstd".into(),
                error: "cut short".into(),
            }],
            in_progress: vec!["logs/live.inprogress".into()],
        }
    }

    fn change(key: &str, regression: bool, cause: Option<&str>) -> Change {
        Change {
            key: key.into(),
            app_id: format!("id-{key}"),
            regression,
            what: "runtime 1m → 2m".into(),
            since: "2026-11-29".into(),
            report: String::new(),
            cause: cause.map(str::to_string),
            fixes: Vec::new(),
        }
    }

    #[test]
    fn the_summary_names_failures_unreadable_logs_and_regressions_only() {
        let mut failed = app("etl", 1000, &[]);
        failed.status = "failed".into();
        failed.failed_jobs = 1;
        let published = Outcome::Published(Published {
            night: night(3),
            failed: vec![failed],
            changes: vec![
                change("etl", true, Some("a plan changed")),
                change("report", false, None),
            ],
            index: "out/index.html".into(),
        });
        let summary = published.summary(std::time::Duration::from_millis(2_340));
        let lines: Vec<&str> = summary.lines().collect();
        assert_eq!(
            lines[0],
            "3 application(s) analysed in 2.3 s: 1 failed or with failed jobs, 1 unreadable, 1 in progress skipped; 1 regression(s) since earlier nights"
        );
        assert!(lines[1].starts_with("  etl: failed"), "{summary}");
        assert!(lines[1].ends_with(" (logs/etl)"), "{summary}");
        assert_eq!(lines[2], "  could not read logs/bad.zstd: cut short");
        assert_eq!(
            lines[3],
            "  skipped, still being written: logs/live.inprogress"
        );
        assert_eq!(
            lines[4],
            "  regressed: etl — runtime 1m → 2m (since 2026-11-29); likely: a plan changed"
        );
        assert_eq!(lines[5], "wrote out/index.html");
        assert_eq!(
            lines.len(),
            6,
            "the change that is no regression is not named"
        );
        assert_eq!(published.exit_code(true), 1);
        assert_eq!(published.exit_code(false), 0);
    }

    #[test]
    fn a_slice_says_what_it_analysed_and_never_fails_on_regression() {
        let slice = Outcome::Slice {
            slice: "1/4".parse::<Slice>().unwrap(),
            night: night(2),
        };
        assert_eq!(
            slice.summary(std::time::Duration::from_secs(5)),
            "slice 1/4: 2 application(s) analysed in 5.0 s, 1 unreadable, 1 in progress skipped\n"
        );
        assert_eq!(slice.exit_code(true), 0);
    }
}
