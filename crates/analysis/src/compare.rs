//! Two analysed runs compared (`sparkdiag diff`, `sparkdiag mcp`'s `compare_runs`): the
//! `sparkdiag/diff/v1` document from each run's model, report and plans.

use sparkdiag_contract::diff::Diff;
pub use sparkdiag_diff::{Noise, Options as CompareOptions};

use crate::Analysis;

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
