//! The views of the rules catalogue (`sparkdiag rules`): [`text`] for a terminal and the
//! registry as JSON.

pub mod text;

pub use text::{explain, table};

use sparkdiag_contract::{Registry, RuleDoc};

use crate::{Format, Options, RenderError, View};

/// The rules `sparkdiag rules` lists: every one, or the one asked for in full.
pub struct Catalogue<'a> {
    pub rules: &'a [RuleDoc],
    /// One rule asked for by its code: its whole documentation rather than a table row.
    pub explain: bool,
}

impl View for Catalogue<'_> {
    fn document(&self) -> &'static str {
        "the rules catalogue"
    }

    fn formats(&self) -> &'static [Format] {
        &[Format::Text, Format::Json]
    }

    fn render(&self, format: Format, _: &Options) -> Result<String, RenderError> {
        match format {
            Format::Text => Ok(match self.rules {
                [one] if self.explain => explain(one),
                rules => table(rules),
            }),
            Format::Json => crate::output::json(&Registry {
                rules: self.rules.iter().map(RuleDoc::registry_entry).collect(),
            }),
            Format::Markdown | Format::Html | Format::Sarif => {
                Err(RenderError::unsupported(self, format))
            }
        }
    }
}
