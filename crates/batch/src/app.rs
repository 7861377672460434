//! One application of the night: analysed, its HTML and JSON reports written, and its line in
//! the night's summary; or why its log could not be read.

use std::path::Path;

use sparkdiag_contract::Report;
use sparkdiag_contract::night::{NightApp, NightError};
use sparkdiag_report::{Format, View};
use sparkdiag_rules::{Config, Severity};

use crate::files::write_atomic;

/// What one worker returns: the report, or the input with why it could not be read.
type Outcome = Result<(Report, NightApp), NightError>;

/// Analyses one log and writes its reports; `i` is where it was found among every log of the
/// night (in a slice too), which keeps apart the reports of two logs with one id. `options`
/// gives the prices and the key that matches runs across nights. The report's `source.inputs`
/// is the log itself, as found under the folder named: unique per log, the key of the
/// night's tables.
pub(crate) fn analyse(
    i: usize,
    input: &sparkdiag_eventlog::LogInput,
    config: &Config,
    options: &crate::Options,
    apps_dir: &Path,
    apps_rel: &str,
) -> Outcome {
    let failed = |error: String| night_error(options, &input.display, &error);
    // Each application its own redactor: keyed, they all give one value one pseudonym.
    let redactor = options
        .redact
        .as_ref()
        .map(|key| std::sync::Mutex::new(key.redactor()));
    let analysing = sparkdiag_analysis::Options {
        config,
        prices: options.prices,
        inputs: vec![input.display.clone()],
        redact: redactor.as_ref(),
        // Only the report and the charts are read (`diff` of two nights analyses them again).
        report_only: true,
    };
    let analysis =
        sparkdiag_analysis::analyze(input, &analysing).map_err(|e| failed(e.to_string()))?;
    let view = analysis.view_data();
    let sparkdiag_analysis::Analysis { app, report, .. } = analysis;
    let id = report
        .application
        .id
        .clone()
        .unwrap_or_else(|| format!("app-{i}"));
    // Ids are unique per attempt; the index keeps two logs of one id apart.
    let file = format!("{}-{i}", safe_name(&id));
    let page = [sparkdiag_report::analyze::App {
        report: &report,
        view: Some(&view),
    }];
    for format in [Format::Html, Format::Json] {
        let text = sparkdiag_report::analyze::Applications(&page)
            .render(format, &sparkdiag_report::Options::default())
            .map_err(|e| failed(e.to_string()))?;
        write_atomic(
            &apps_dir.join(format!("{file}.{}", format.extension())),
            &text,
        )
        .map_err(|e| failed(e.to_string()))?;
    }
    let medium: Vec<&sparkdiag_contract::FindingOut> = report
        .findings
        .iter()
        .filter(|f| f.finding.severity <= Severity::Medium)
        .collect();
    let mut codes: Vec<String> = medium.iter().map(|f| f.finding.rule.to_string()).collect();
    codes.sort();
    codes.dedup();
    let name = report
        .application
        .name
        .clone()
        .unwrap_or_else(|| id.clone());
    let key = match options.key.strip_prefix("spark-property:") {
        Some(property) => app
            .spark_properties
            .get(property)
            .cloned()
            .unwrap_or_else(|| name.clone()),
        None => name.clone(),
    };
    let night_app = NightApp {
        key,
        app_id: id,
        name,
        status: sparkdiag_contract::enum_name(report.application.status),
        duration_ms: report.application.duration_ms.unwrap_or(0),
        core_ms: report.summary.executor_run_time_ms,
        // A broadcast credited with the skew its fix removes holds that skew finding's
        // saving too: counted once.
        impact_ms: report
            .findings
            .iter()
            .map(|f| {
                let shared = f
                    .finding
                    .evidence
                    .get("includes_replayed_ms")
                    .and_then(|v| v.as_i64())
                    .unwrap_or(0);
                (f.finding.impact_ms - shared).max(0)
            })
            .sum(),
        findings: codes,
        worst_severity: report
            .findings
            .iter()
            .map(|f| f.finding.severity)
            .min()
            .map(|s| s.name().to_string()),
        top_finding: report
            .findings
            .first()
            .map(|f| format!("{}: {}", f.finding.rule, f.finding.title)),
        report: format!("{apps_rel}/{file}.html"),
        jobs: report.summary.jobs,
        // A streaming query's in-flight batch job, cancelled by the program's own stop, is no
        // failure: the night would list the application first as failed and flag it.
        failed_jobs: report
            .summary
            .failed_jobs
            .saturating_sub(report.summary.stopped_jobs),
        stopped_jobs: report.summary.stopped_jobs,
        outcome: report.application.outcome_kind.name().to_string(),
        settings: sparkdiag_diff::settings_fingerprint(&app),
        // Redacted, the report's own pseudonym of the log.
        input: report
            .source
            .inputs
            .first()
            .cloned()
            .unwrap_or_else(|| input.display.clone()),
        input_rows: report.input_rows(),
        input_bytes: report.summary.input_bytes,
        spark_version: report.application.spark_version.clone(),
        executors: report.summary.executors,
        driver_ms: report.summary.driver_time_ms,
    };
    Ok((report, night_app))
}

/// Why `input` could not be read, as the night lists it: [`plain_error`], or with `--redact`
/// the log's pseudonym and the error's paths, hosts and names pseudonymised.
pub(crate) fn night_error(options: &crate::Options, input: &str, error: &str) -> NightError {
    let plain = plain_error(input, error);
    match &options.redact {
        None => plain,
        Some(key) => {
            let mut redactor = key.redactor();
            let input = redactor.input_path(&plain.input);
            let error = redactor.text(&plain.error.replace(&plain.input, &input));
            NightError { input, error }
        }
    }
}

/// A log's path as the night lists it: with `--redact`, its pseudonym (the one its report has).
pub(crate) fn night_input(options: &crate::Options, input: String) -> String {
    match &options.redact {
        None => input,
        Some(key) => key.redactor().input_path(&input),
    }
}

/// Why `input` could not be read. The reader's errors already start with the path; the index
/// and the summary show it once, in its own column.
fn plain_error(input: &str, error: &str) -> NightError {
    NightError {
        input: input.to_string(),
        error: error
            .strip_prefix(input)
            .and_then(|rest| rest.strip_prefix(": "))
            .unwrap_or(error)
            .to_string(),
    }
}

fn safe_name(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_error_names_its_input_once() {
        let e = plain_error("logs/x.zstd", "logs/x.zstd: byte 0: not a Spark event log");
        assert_eq!(
            (e.input.as_str(), e.error.as_str()),
            ("logs/x.zstd", "byte 0: not a Spark event log")
        );
        let e = plain_error("logs/x.zstd", "cannot decode");
        assert_eq!(e.error, "cannot decode");
    }
}
