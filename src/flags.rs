//! The flags whose values are one of a fixed list the report's contract owns: `--format`,
//! `--color` and the severities, as clap parses, lists and completes them. The other values
//! with units (sizes, durations, prices) are parsed where they are written
//! (`sparkdiag_contract::units`, `Prices::parse`).

use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use sparkdiag_report::{ColorChoice, Format, Severity};

/// A value of `values` (what `--help` and the completions list), read by `parse` once clap has
/// checked it is one of them.
pub fn one_of<T: Clone + Send + Sync + 'static>(
    values: impl IntoIterator<Item = impl Into<PossibleValue>>,
    parse: fn(&str) -> Option<T>,
) -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(values)
        .try_map(move |name: String| parse(&name).ok_or_else(|| format!("no value `{name}`")))
}

/// `--format`: a format of the one list every command shares.
pub fn format() -> impl TypedValueParser<Value = Format> {
    one_of(format_names(), Format::parse)
}

/// Every format's name, in `--help`'s order.
pub fn format_names() -> Vec<&'static str> {
    Format::ALL.iter().map(|f| f.name()).collect()
}

/// `--color`: auto, always or never, each with its line in `--help`.
pub fn color() -> impl TypedValueParser<Value = ColorChoice> {
    let choices = ColorChoice::ALL.map(|c| PossibleValue::new(c.name()).help(c.about()));
    one_of(choices, ColorChoice::parse)
}

/// `--fail-on`, `--min-severity`, `--fail-on-new`: a severity, the most severe first.
pub fn severity() -> impl TypedValueParser<Value = Severity> {
    one_of(
        ["critical", "high", "medium", "low", "info"],
        Severity::parse,
    )
}
