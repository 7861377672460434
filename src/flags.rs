//! Values of the command line's flags that clap has no parser for: the formats, prices, and
//! sizes and durations with their units (read as `sparkdiag_contract::units` writes them).

// Sizes and durations are parsed for `serve` and `batch` only; a build without them has no use
// for some of these.
#![cfg_attr(not(all(feature = "tables", feature = "serve")), allow(dead_code))]

use std::time::Duration;

use sparkdiag_report::format::parse_duration;

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

/// A duration as `--keep` takes it: a number with s, m, h or d, more than zero (uploads kept for
/// no time would be gone before their report is read).
pub fn parse_positive_duration(text: &str) -> Result<Duration, String> {
    let duration = parse_duration(text)?;
    if duration.is_zero() {
        return Err(format!("`{text}`: the duration must be more than zero"));
    }
    Ok(duration)
}

/// A price as `--price-per-core-hour` and `--price-per-gb-hour` take it: an amount of 0 or more,
/// in whatever currency the user thinks in (the reports print no currency sign).
pub fn parse_price(text: &str) -> Result<f64, String> {
    // clap's message already quotes the value and names the flag.
    let price: f64 = text
        .trim()
        .parse()
        .map_err(|_| "expected an amount such as 0.45".to_string())?;
    sparkdiag_analysis::Prices::check(price)
        .map_err(|_| "a price is an amount of 0 or more".to_string())
}

/// Where `batch --redact` and `serve --redact` read the secret that keys their pseudonyms.
pub const REDACT_KEY_VARIABLE: &str = "SPARKDIAG_REDACT_KEY";

/// The secret in [`REDACT_KEY_VARIABLE`], when it is set and not empty.
pub fn redact_secret() -> Option<Vec<u8>> {
    let secret = std::env::var_os(REDACT_KEY_VARIABLE)?;
    let bytes = secret.as_encoded_bytes().to_vec();
    (!bytes.is_empty()).then_some(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_duration_of_no_time_is_refused_where_it_must_be_some() {
        assert!(parse_positive_duration("0h").is_err());
        assert_eq!(parse_positive_duration("2h"), Ok(Duration::from_secs(7200)));
    }
}
