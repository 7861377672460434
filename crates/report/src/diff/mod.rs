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

/// `sparkdiag diff`'s document: `diff` drawn in `format` and written to `output`, else to
/// standard output. Gives whether it showed the gates, one line each: the text view on standard
/// output does; otherwise the caller says them where a pipeline's log shows them.
pub fn deliver(
    diff: &Diff,
    format: Format,
    options: &Options,
    output: Option<&std::path::Path>,
) -> std::io::Result<bool> {
    let rendered = diff
        .render(format, options)
        .map_err(std::io::Error::other)?;
    crate::write_out(&rendered, output)?;
    Ok(format == Format::Text && output.is_none())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_is_written_to_its_file_and_refused_in_a_format_it_has_no_view_in() {
        let log = |path: &str| format!("{}/../../testdata/{path}", env!("CARGO_MANIFEST_DIR"));
        let (before, after) = (
            log("logs/failed"),
            log("logs/multi/local-1796049570994.zstd"),
        );
        let config = sparkdiag_analysis::Config::default();
        let request = sparkdiag_analysis::DiffRequest {
            before: &before,
            after: &after,
            ..Default::default()
        };
        let options = sparkdiag_analysis::Options::new(&config);
        let before = sparkdiag_analysis::diff_runs(&request, &options, |_, _, _| {}).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("diff.json");
        let shown = deliver(&before, Format::Json, &Options::default(), Some(&file)).unwrap();
        assert!(!shown, "a file shows no gate lines");
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(written["schema"], "sparkdiag/diff/v1");
        let err = deliver(&before, Format::Sarif, &Options::default(), Some(&file)).unwrap_err();
        assert!(err.to_string().starts_with("--format sarif: "), "{err}");
    }
}
