//! Two analysed runs compared (`sparkdiag diff`, `sparkdiag mcp`'s `compare_runs`): the
//! `sparkdiag/diff/v1` document from each run's model, report and plans.

use sparkdiag_contract::Severity;
use sparkdiag_contract::diff::Diff;
pub use sparkdiag_diff::{Noise, Options as CompareOptions};
use sparkdiag_eventlog::{LogInput, ReadError};

use crate::{Analysis, Options, SideError, analyze_side};

/// BEFORE against AFTER.
pub fn compare(before: &Analysis, after: &Analysis, options: &CompareOptions) -> Diff {
    fn run(a: &Analysis) -> sparkdiag_diff::Run<'_> {
        sparkdiag_diff::Run {
            app: &a.app,
            report: &a.report,
            facts: &a.facts,
        }
    }
    sparkdiag_diff::compare(run(before), run(after), options)
}

/// What `sparkdiag diff BEFORE AFTER` asks: the two paths, which application to take from a
/// path that holds several, the runtime's noise, and the gates for CI.
#[derive(Debug, Clone, Default)]
pub struct DiffRequest<'a> {
    pub before: &'a str,
    pub after: &'a str,
    /// Among several applications in a path, the latest with this name.
    pub app_name: Option<&'a str>,
    pub noise: Option<Noise>,
    /// Fails when runtime or core-hours went up by more than this many percent.
    pub fail_on_regression: Option<f64>,
    /// Fails when AFTER has a finding BEFORE did not, at least this severe.
    pub fail_on_new: Option<Severity>,
    /// Fails when the rows written to a destination differ.
    pub fail_on_output_change: bool,
}

/// Reads BEFORE, then AFTER (one analysis at a time), compares them at `options`' price and
/// judges the gates asked for. A log passed over in a path of several is handed to `skipped`
/// with its side.
pub fn diff_runs(
    request: &DiffRequest,
    options: &Options,
    mut skipped: impl FnMut(&'static str, &LogInput, &ReadError),
) -> Result<Diff, SideError> {
    let app_name = request.app_name;
    let before = analyze_side("BEFORE", request.before, options, app_name, &mut skipped)?;
    let after = analyze_side("AFTER", request.after, options, app_name, &mut skipped)?;
    let compare_options = CompareOptions {
        price_per_core_hour: options.prices.per_core_hour,
        noise: request.noise,
    };
    let mut diff = compare(&before, &after, &compare_options);
    diff.gates = crate::gates::check_diff(
        &diff,
        request.fail_on_regression,
        request.fail_on_new,
        request.fail_on_output_change,
    );
    Ok(diff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_runs_are_compared_and_only_the_gates_asked_for_are_judged() {
        let log = |path: &str| format!("{}/../../testdata/{path}", env!("CARGO_MANIFEST_DIR"));
        let (before, after) = (
            log("logs/failed"),
            log("logs/multi/local-1796049570994.zstd"),
        );
        let config = crate::Config::default();
        let options = Options::new(&config);
        let mut request = DiffRequest {
            before: &before,
            after: &after,
            ..DiffRequest::default()
        };
        let diff = diff_runs(&request, &options, |_, _, _| {}).unwrap();
        assert!(diff.gates.is_none(), "no gate asked for");
        request.fail_on_output_change = true;
        let gates = diff_runs(&request, &options, |_, _, _| {})
            .unwrap()
            .gates
            .expect("the output gate");
        assert_eq!(gates.checks.len(), 1);
        assert!(gates.checks[0].line.starts_with("fail-on-output-change: "));
        request.after = "no/such/log";
        let err = diff_runs(&request, &options, |_, _, _| {}).unwrap_err();
        assert_eq!(err.side, "AFTER");
    }
}
