//! The error returned for text that holds no plan or a plan whose shape cannot be read.

use std::fmt;

/// Why a text could not be parsed, with the 1-based line where it went wrong and what was
/// expected there.
///
/// The location is kept in fields, so callers can point at the line themselves; `Display` reads
/// `line 12: expected …, found "…"`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: expected {expected}, found {found:?}")]
pub struct PlanError {
    /// 1-based line number in the text given to [`crate::parse_plans`].
    pub line: usize,
    /// What kind of problem this is.
    pub kind: ErrorKind,
    /// What the parser expected at that line, in words.
    pub expected: String,
    /// The start of the offending line (at most 80 characters), or `end of text`.
    pub found: String,
}

/// The class of a [`PlanError`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// No `== Physical Plan ==` section and no formatted plan tree anywhere in the text.
    NoPlan,
    /// The text looks like JSON (an event log or `sparkPlanInfo`), not plan text.
    NotPlanText,
    /// A `== Physical Plan ==` header with no operator line after it.
    EmptyTree,
    /// A tree line whose indentation or branch marker does not fit the tree above it.
    Indentation,
    /// A line of an `EXPLAIN FORMATTED` tree without its `(id)`.
    MissingOperatorId,
    /// A `Subquery:` / `Subplan:` header that does not follow Spark's grammar.
    MalformedSection,
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ErrorKind::NoPlan => "no plan",
            ErrorKind::NotPlanText => "not plan text",
            ErrorKind::EmptyTree => "empty tree",
            ErrorKind::Indentation => "bad indentation",
            ErrorKind::MissingOperatorId => "missing operator id",
            ErrorKind::MalformedSection => "malformed section header",
        };
        f.write_str(text)
    }
}

impl PlanError {
    pub(crate) fn new(
        line: usize,
        kind: ErrorKind,
        expected: impl Into<String>,
        found: &str,
    ) -> Self {
        PlanError {
            line: line.max(1),
            kind,
            expected: expected.into(),
            found: snippet(found),
        }
    }
}

/// The first 80 characters of a line, cut on a character boundary.
fn snippet(text: &str) -> String {
    const MAX: usize = 80;
    match text.char_indices().nth(MAX) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_line_expectation_and_snippet() {
        let err = PlanError::new(
            7,
            ErrorKind::MissingOperatorId,
            "an operator line ending in `(id)`",
            "Foo",
        );
        assert_eq!(
            err.to_string(),
            "line 7: expected an operator line ending in `(id)`, found \"Foo\""
        );
    }

    #[test]
    fn snippet_cuts_on_char_boundary() {
        let long = "é".repeat(100);
        let cut = snippet(&long);
        assert_eq!(cut.chars().count(), 81);
    }
}
