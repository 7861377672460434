//! Values of the command line's flags that clap has no parser for: sizes and durations with
//! their units.

// Sizes and durations are parsed for `serve` and `batch` only; a build without them has no use
// for some of these.
#![cfg_attr(not(all(feature = "tables", feature = "serve")), allow(dead_code))]

use std::time::Duration;

/// A size as `--max-upload` takes it: bytes, or a number with K, M, G, T (powers of 1024,
/// with or without `iB`/`B`).
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (number, unit) = number_and_unit(text, "a size such as 2GiB, 500MiB or 1048576")?;
    let shift = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 0,
        "k" | "kb" | "kib" => 10,
        "m" | "mb" | "mib" => 20,
        "g" | "gb" | "gib" => 30,
        "t" | "tb" | "tib" => 40,
        other => {
            return Err(format!(
                "`{text}`: unknown unit `{other}` (use KiB, MiB, GiB)"
            ));
        }
    };
    let bytes = number * (1u64 << shift) as f64;
    if !(bytes >= 1.0 && bytes < u64::MAX as f64) {
        return Err(format!("`{text}`: the size must be at least one byte"));
    }
    Ok(bytes as u64)
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

/// A duration as `--since` takes it: a number with s, m, h or d; `0s` keeps nothing.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let (number, unit) = number_and_unit(text, "a duration such as 24h, 30m, 7d or 90s")?;
    let seconds = match unit {
        "s" => 1.0,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        "d" => 86400.0,
        _ => {
            return Err(format!(
                "`{text}`: expected a duration with its unit: s, m, h or d (e.g. 24h)"
            ));
        }
    };
    let total = number * seconds;
    if total.is_nan() || total < 0.0 {
        return Err(format!("`{text}`: the duration cannot be negative"));
    }
    // Past about 300 years no clock comparison means anything, and seconds would overflow.
    if total >= 1e10 {
        return Err(format!("`{text}`: the duration must be under 300 years"));
    }
    Ok(Duration::from_secs_f64(total))
}

/// `12.5GiB` as (12.5, "GiB"); `expected` says what was wanted when there is no number.
fn number_and_unit<'a>(text: &'a str, expected: &str) -> Result<(f64, &'a str), String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let number = number
        .parse()
        .map_err(|_| format!("`{text}`: expected {expected}"))?;
    Ok((number, unit.trim()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_and_durations_parse_as_the_flags_document() {
        assert_eq!(parse_size("2GiB"), Ok(2 << 30));
        assert_eq!(parse_size("500MiB"), Ok(500 << 20));
        assert_eq!(parse_size("1.5k"), Ok(1536));
        assert_eq!(parse_size("1048576"), Ok(1 << 20));
        assert!(
            parse_size("2 parsecs")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(parse_size("0").is_err());
        assert_eq!(parse_duration("24h"), Ok(Duration::from_secs(86400)));
        assert_eq!(parse_duration("90s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("0.5s"), Ok(Duration::from_millis(500)));
        assert!(parse_duration("24").unwrap_err().contains("unit"));
        assert!(parse_positive_duration("0h").is_err());
        assert_eq!(parse_duration("0s"), Ok(Duration::ZERO));
        // More seconds than a u64 holds is refused, not wrapped or a panic.
        assert!(parse_duration("999999999999999999d").is_err());
    }
}
