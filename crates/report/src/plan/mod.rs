//! The views of plan text analysed on its own (`sparkdiag plan`): [`text`] for a terminal and
//! the `sparkdiag/plan/v1` JSON.

pub mod text;

pub use text::render;

use sparkdiag_contract::{Finding, Plan, PlanReport};

use crate::{Format, Options, RenderError, View};

/// Every plan of one plan text, with the findings the plan rules returned for them.
pub struct PlanText<'a> {
    pub plans: &'a [Plan],
    pub findings: &'a [Finding],
}

impl View for PlanText<'_> {
    fn document(&self) -> &'static str {
        "a plan report"
    }

    fn formats(&self) -> &'static [Format] {
        &[Format::Text, Format::Json, Format::Sarif]
    }

    fn render(&self, format: Format, options: &Options) -> Result<String, RenderError> {
        match format {
            Format::Text => {
                let terminal = options.terminal;
                let width = terminal.terminal.then(|| usize::from(terminal.columns()));
                Ok(text::render(self.plans, self.findings, width))
            }
            Format::Json => crate::output::json(&PlanReport::new(self.plans, self.findings)),
            // Plan text names no file of the user's program: every finding is the run's.
            Format::Sarif => {
                let findings: Vec<&Finding> = self.findings.iter().collect();
                let results = findings
                    .iter()
                    .map(|f| {
                        crate::analyze::sarif::result(
                            f,
                            &[],
                            serde_json::json!({"plan_index": f.scope.plan_index}),
                        )
                    })
                    .collect();
                crate::output::json(&crate::analyze::sarif::log(vec![
                    crate::analyze::sarif::run(&findings, results, serde_json::json!({})),
                ]))
            }
            Format::Markdown | Format::Html => Err(RenderError::unsupported(self, format)),
        }
    }
}
