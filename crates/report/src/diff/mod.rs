//! The views of a [`Diff`] (`sparkdiag/diff/v1`, built by `sparkdiag-diff`), one file per
//! format: [`text::render`] for a terminal, [`markdown::render`] for a pull-request comment,
//! [`html::render`] as one self-contained page with charts, and the JSON. Durations, sizes,
//! counts and escaping come from [`crate::format`], as in the report's own views.

pub mod html;
pub mod markdown;
pub mod text;

use sparkdiag_contract::diff::Diff;

use crate::{Format, Options, RenderError, View};

impl View for Diff {
    fn document(&self) -> &'static str {
        "a comparison of two runs"
    }

    fn formats(&self) -> &'static [Format] {
        &[Format::Text, Format::Json, Format::Markdown, Format::Html]
    }

    fn render(&self, format: Format, options: &Options) -> Result<String, RenderError> {
        Ok(match format {
            Format::Text => text::render_with(self, options.terminal),
            Format::Json => crate::output::json(self)?,
            Format::Markdown => markdown::render(self),
            Format::Html => html::render(self),
            // A comparison's findings carry no code site of their own: `analyze --format
            // sarif` on AFTER gives them at their lines.
            Format::Sarif => return Err(RenderError::unsupported(self, format)),
        })
    }
}
