//! A whole night made public: the comparison with earlier nights and the index page, both read
//! from the night file one application at a time.

use sparkdiag_contract::night::NightTotals;
// The index page is the one view batch draws itself; its data comes from the contract.
use sparkdiag_report::fleet;

use crate::files::write_atomic_with;
use crate::history::read_history;
use crate::measured::{MAX_MEASURED, diff_logs, measured_cause};
use crate::nightfile::NightFile;
use crate::{Options, Published};

/// Compares the night in `night` (already written) with the earlier ones and writes the index
/// page. A runtime, executor-time or recoverable-time regression's cause is measured on the
/// two logs (up to [`MAX_MEASURED`] applications a night) when both are still where they were
/// found, and the night is not redacted.
pub(crate) fn publish(
    options: &Options,
    config: &sparkdiag_rules::Config,
    mut night: NightFile,
) -> anyhow::Result<Published> {
    let out = &options.output;
    let tonight = NightTotals::from_totals(&night.night.date, &night.totals);
    let (history, latest, runs) = read_history(&out.join("nights"), tonight, night.key_filter())?;
    let min_ms = (options.min_regression_s * 1000.0) as i64;
    let mut changes = Vec::new();
    let mut measured = 0;
    let mut trends = fleet::Trends::new();
    // Tonight's applications in the order found, as `compare::compare` goes through them.
    for app in night.apps()? {
        let app = app?;
        // The key's first run of each earlier night (latest first in `runs`), then tonight's.
        let mut trend: Vec<i64> = runs
            .get(&app.key)
            .map(|r| r.iter().rev().map(|(_, p)| p.duration_ms).collect())
            .unwrap_or_default();
        trend.push(app.duration_ms);
        trends.entry(app.key.clone()).or_insert(trend);
        if let Some((since, before)) = latest.get(&app.key) {
            let band: Vec<crate::compare::Point> = runs
                .get(&app.key)
                .map(|r| r.iter().map(|(_, p)| p.clone()).collect())
                .unwrap_or_default();
            let first = changes.len();
            crate::compare::compare_app(
                &app,
                (since, before),
                &band,
                options.regression_threshold,
                min_ms,
                &mut changes,
            );
            // The slower and costlier nights: runtime, executor or recoverable time.
            let slower = |c: &sparkdiag_contract::night::Change| c.regression && c.cause.is_some();
            // A job run with other settings than last time: did they apply a fix it was given?
            let settings_changed = !app.settings.is_empty()
                && !before.settings.is_empty()
                && app.settings != before.settings;
            if options.redact.is_some() {
                for change in &mut changes[first..] {
                    if let Some(cause) = &mut change.cause {
                        *cause = redacted_diff_command(cause, &before.input, &app.input);
                    }
                }
            }
            // Redacted, a night names its logs by pseudonym: the earlier log cannot be found
            // to read again, and the summaries' likely cause stands.
            if options.redact.is_none()
                && measured < MAX_MEASURED
                && (settings_changed || changes[first..].iter().any(slower))
            {
                measured += 1;
                if let Some(diff) = diff_logs(&before.input, &app.input, config, options.prices) {
                    if let Some(cause) = measured_cause(&diff) {
                        for change in changes[first..].iter_mut().filter(|c| slower(c)) {
                            change.cause = Some(cause.clone());
                        }
                    }
                    if settings_changed && diff.same_job.same && !diff.fixes.is_empty() {
                        changes.push(fixes_checked(&app, since, diff.fixes));
                    }
                }
            }
        }
    }
    drop(latest);
    drop(runs);
    let index = out.join("index.html");
    let mut failed = Vec::new();
    night.rank();
    let ranked = night.apps()?.map(|app| {
        let app = app.map_err(std::io::Error::other)?;
        // Failed applications rank first: this list is done after the first that did not fail.
        if app.failed() {
            failed.push(app.clone());
        }
        Ok(app)
    });
    write_atomic_with(&index, |file| {
        Ok(fleet::write_index(
            file,
            &night.night,
            &night.totals,
            ranked,
            &history,
            &trends,
            &changes,
        )?)
    })?;
    Ok(Published {
        night: night.summary(),
        failed,
        changes,
        index,
    })
}

/// `cause` with the `sparkdiag diff` it suggests made runnable: a redacted night names the two
/// logs by pseudonyms, which no command can open, so it says which logs to give instead.
fn redacted_diff_command(cause: &str, before: &str, now: &str) -> String {
    cause.replace(
        &format!("`sparkdiag diff {before} {now}`"),
        &format!("`sparkdiag diff --redact` of the two logs ({before}, {now})"),
    )
}

/// The fixes tonight's run of `app` applied since its run of `since`, as the index's "Fixes
/// checked" lists them.
fn fixes_checked(
    app: &sparkdiag_contract::night::NightApp,
    since: &str,
    fixes: Vec<sparkdiag_contract::diff::FixCheck>,
) -> sparkdiag_contract::night::Change {
    use sparkdiag_contract::units::duration;
    let what = fixes
        .iter()
        .map(|f| {
            format!(
                "fix for {} applied: predicted {}, its work took {} less",
                f.rule,
                duration(f.predicted_ms),
                if f.measured_ms < 0 {
                    format!("-{}", duration(-f.measured_ms))
                } else {
                    duration(f.measured_ms)
                }
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    sparkdiag_contract::night::Change {
        key: app.key.clone(),
        app_id: app.app_id.clone(),
        regression: false,
        what,
        since: since.to_string(),
        report: app.report.clone(),
        cause: None,
        fixes,
    }
}
