//! A regression's cause measured as `sparkdiag diff` measures it: both nights' logs read again
//! and compared, and the top cause kept. The night's summaries can tell a grown input or a new
//! Spark version; only the logs tell a changed plan, a setting, new skew or spill.

use sparkdiag_analysis::{Analysis, Prices};
use sparkdiag_rules::Config;

/// Most regressions a night measures: each reads two logs again, and a bad night (a cluster
/// change that slowed every job) should not take as long again as the night itself.
pub(crate) const MAX_MEASURED: usize = 10;

/// `sparkdiag diff` of the two logs, `before_log` (an earlier night's) and `after_log`
/// (tonight's), as they were found; `None` when either is gone or unreadable.
pub(crate) fn diff_logs(
    before_log: &str,
    after_log: &str,
    config: &Config,
    prices: Prices,
) -> Option<sparkdiag_diff::Diff> {
    let read = |log: &str| -> Option<Analysis> {
        let options = sparkdiag_analysis::Options {
            config,
            prices,
            inputs: vec![log.to_string()],
            redact: None,
            report_only: false,
        };
        sparkdiag_analysis::analyze_one(log, &options, None, |_, _| {}).ok()
    };
    let (before, after) = (read(before_log)?, read(after_log)?);
    fn run(a: &Analysis) -> sparkdiag_diff::Run<'_> {
        sparkdiag_diff::Run {
            app: &a.app,
            report: &a.report,
            facts: &a.facts,
        }
    }
    Some(sparkdiag_diff::compare(
        run(&before),
        run(&after),
        &sparkdiag_diff::Options::default(),
    ))
}

/// A slower night's most likely cause as the diff of its two logs measured it; `None` when the
/// diff finds no cause beyond the noise, and the summaries' likely cause stands.
pub(crate) fn measured_cause(diff: &sparkdiag_diff::Diff) -> Option<String> {
    // Two logs that do not look like one job (a key that matched two different programs)
    // have no cause to give; nor has a cause that made the run faster or cheaper (a shrunk
    // input), whatever its size: the night is slower or costlier.
    if !diff.same_job.same {
        return None;
    }
    let top = diff
        .causes
        .iter()
        .find(|c| !matches!(c.kind, "nothing_material" | "unexplained") && c.explained_ms > 0)?;
    let share = top
        .share
        .map(|s| {
            format!(
                ", {} of the runtime change",
                sparkdiag_contract::units::share(s, 0)
            )
        })
        .unwrap_or_default();
    Some(format!(
        "{} (measured on the two logs{share}, as `sparkdiag diff` does)",
        top.title
    ))
}
