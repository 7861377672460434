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
        &[Format::Text, Format::Json]
    }

    fn render(&self, format: Format, _: &Options) -> Result<String, RenderError> {
        match format {
            Format::Text => Ok(text::render(self.plans, self.findings)),
            Format::Json => crate::output::json(&PlanReport::new(self.plans, self.findings)),
            Format::Markdown | Format::Html => Err(RenderError::unsupported(self, format)),
        }
    }
}
