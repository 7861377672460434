//! `--format`: the one list of formats every command shares, as clap parses, lists and
//! completes it. The other values with units (sizes, durations, prices) are parsed where they
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
