//! `--format` and `--color`: the report's lists of formats and colour choices, as clap parses,
//! lists and completes them. The other values with units (sizes, durations, prices) are parsed where they
//! are written (`sparkdiag_contract::units`, `Prices::parse`).

/// `--format`: a format of the one list every command shares (`sparkdiag_report::Format`);
/// `--help` and the completions list them.
pub fn format() -> impl clap::builder::TypedValueParser<Value = sparkdiag_report::Format> {
    use clap::builder::TypedValueParser;
    clap::builder::PossibleValuesParser::new(format_names()).try_map(|name: String| {
        sparkdiag_report::Format::parse(&name).ok_or_else(|| format!("no format `{name}`"))
    })
}

/// Every format's name, in `--help`'s order.
pub fn format_names() -> Vec<&'static str> {
    sparkdiag_report::Format::ALL
        .iter()
        .map(|f| f.name())
        .collect()
}

/// `--color`: auto, always or never (`sparkdiag_report::ColorChoice`), each with its line in
/// `--help`.
pub fn color() -> impl clap::builder::TypedValueParser<Value = sparkdiag_report::ColorChoice> {
    use clap::builder::{PossibleValue, TypedValueParser};
    let choices =
        sparkdiag_report::ColorChoice::ALL.map(|c| PossibleValue::new(c.name()).help(c.about()));
    clap::builder::PossibleValuesParser::new(choices).try_map(|name: String| {
        sparkdiag_report::ColorChoice::parse(&name).ok_or_else(|| format!("no colour `{name}`"))
    })
}
