//! Durations, sizes and cut text written for people, and sizes and durations read back from
//! them: the one implementation of each.
//!
//! They live here, below the contract, rather than in the rendering crate's `format`, because
//! the rules write durations, sizes and quoted log text into a finding's message and evidence,
//! and the rules may not depend on a view. `sparkdiag_report::format` re-exports them beside
//! the formatters only views need (thousands, percentages, HTML and Markdown escapes), so a view
//! imports every formatter from one place and a rule's message prints a number exactly as the
//! page around it does.

/// A duration for people: milliseconds under a second, then seconds, minutes, hours. A
/// negative one (a change, a clock that went back) keeps its sign.
///
/// ```
/// use sparkdiag_contract::units::duration;
/// assert_eq!(duration(950), "950 ms");
/// assert_eq!(duration(125_000), "2m 05s");
/// assert_eq!(duration(126 * 3_600_000), "126h 00m");
/// assert_eq!(duration(-125_000), "-2m 05s");
/// ```
pub fn duration(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    if ms < 1000 {
        return format!("{sign}{ms} ms");
    }
    let secs = ms / 1000;
    match secs {
        0..60 => format!("{sign}{:.1} s", ms as f64 / 1000.0),
        60..3600 => format!("{sign}{}m {:02}s", secs / 60, secs % 60),
        _ => format!("{sign}{}h {:02}m", secs / 3600, (secs % 3600) / 60),
    }
}

/// Bytes in binary units, as Spark's UI shows them; a negative size (a change) keeps its sign.
///
/// ```
/// use sparkdiag_contract::units::human_bytes;
/// assert_eq!(human_bytes(1536), "1.5 KiB");
/// assert_eq!(human_bytes(-(3 << 30)), "-3.0 GiB");
/// assert_eq!(human_bytes(i64::MIN), "-8.0 EiB");
/// ```
pub fn human_bytes(bytes: i64) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let sign = if bytes < 0 { "-" } else { "" };
    let mut value = bytes.unsigned_abs() as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{bytes} B")
    } else {
        format!("{sign}{value:.1} {}", UNITS[unit])
    }
}

/// A fraction as a percentage with `decimals` places: `0.687` as `69%` or `68.7%`.
///
/// ```
/// use sparkdiag_contract::units::share;
/// assert_eq!(share(0.687, 0), "69%");
/// assert_eq!(share(0.687, 1), "68.7%");
/// ```
pub fn share(fraction: f64, decimals: usize) -> String {
    format!("{:.decimals$}%", fraction * 100.0)
}

/// A relative change as a signed whole percentage: `0.12` as `+12%`, `-0.54` as `-54%`.
///
/// ```
/// use sparkdiag_contract::units::share_change;
/// assert_eq!(share_change(0.12), "+12%");
/// assert_eq!(share_change(-0.54), "-54%");
/// ```
pub fn share_change(fraction: f64) -> String {
    format!("{:+.0}%", fraction * 100.0)
}

/// The first `max` characters of `text`, every line of it, with an ellipsis when cut: how a
/// message quotes a log's text without letting a 40-line stack trace through.
///
/// ```
/// use sparkdiag_contract::units::clip;
/// assert_eq!(clip("ab\ncd", 10), "ab\ncd");
/// assert_eq!(clip("ééé", 2), "éé…");
/// ```
pub fn clip(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_string(),
    }
}

/// Text for people from a job description, which Spark's UI renders as HTML: tags removed
/// (`<br/>` and block tags become a space), the common entities decoded, runs of white space
/// made one space. Streaming jobs describe themselves as `<a href="/streaming/batch/?id=…">`
/// links; the listing job puts `<br/>` between its paths.
///
/// ```
/// use sparkdiag_contract::units::plain_text;
/// assert_eq!(
///     plain_text("Streaming job from <a href=\"/streaming/batch/?id=1\">[output operation 0, batch time 10:00:05]</a>"),
///     "Streaming job from [output operation 0, batch time 10:00:05]"
/// );
/// assert_eq!(plain_text("a &amp; b<br/>c &lt;d&gt;"), "a & b c <d>");
/// ```
pub fn plain_text(html: &str) -> String {
    let mut out = String::with_capacity(html.len());
    let mut rest = html;
    while let Some(c) = rest.chars().next() {
        if c == '<'
            && let Some(close) = rest.find('>')
            && rest[1..].starts_with(|n: char| n.is_ascii_alphabetic() || n == '/' || n == '!')
        {
            let tag = rest[1..close].trim_start_matches('/').to_ascii_lowercase();
            let name: String = tag
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric())
                .collect();
            if matches!(
                name.as_str(),
                "br" | "p" | "div" | "li" | "tr" | "td" | "hr"
            ) {
                out.push(' ');
            }
            rest = &rest[close + 1..];
            continue;
        }
        if c == '&'
            && let Some(semi) = rest[..rest.len().min(12)].find(';')
            && let Some(decoded) = entity(&rest[1..semi])
        {
            out.push(decoded);
            rest = &rest[semi + 1..];
            continue;
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn entity(name: &str) -> Option<char> {
    Some(match name {
        "amp" => '&',
        "lt" => '<',
        "gt" => '>',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        _ => {
            let code = name.strip_prefix('#')?;
            let value = match code.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => code.parse().ok()?,
            };
            char::from_u32(value)?
        }
    })
}

/// The UTC calendar date `(year, month, day)` of a day counted from 1970-01-01 (Howard
/// Hinnant's days-to-civil), so dates need no calendar crate.
pub fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// "1 core", "8 cores": a count of cores, as the what-if's text and its views write it.
pub fn cores(n: i64) -> String {
    if n == 1 {
        "1 core".into()
    } else {
        format!("{n} cores")
    }
}

/// `1234567` as `1,234,567`; `i64::MIN` too.
pub fn thousands(n: i64) -> String {
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

/// A size as a flag or a config file gives it (`--max-upload 2GiB`, `--max-spill 10GiB`): bytes,
/// or a number with K, M, G, T (powers of 1024, with or without `iB`/`B`).
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

/// A duration as a flag gives it (`--since 36h`, `--max-runtime 30m`): a number with s, m, h or
/// d; `0s` is none.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
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
    Ok(std::time::Duration::from_secs_f64(total))
}

/// A duration that must be some time (`serve --keep 24h`, `--client-timeout 60s`): as
/// [`parse_duration`], but more than zero; uploads kept for no time would be gone before their
/// report is read.
pub fn parse_positive_duration(text: &str) -> Result<std::time::Duration, String> {
    let duration = parse_duration(text)?;
    if duration.is_zero() {
        return Err(format!("`{text}`: the duration must be more than zero"));
    }
    Ok(duration)
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
    fn days_are_utc_calendar_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(-1), (1969, 12, 31));
        assert_eq!(civil_from_days(11_016), (2000, 2, 29));
        assert_eq!(civil_from_days(20_789), (2026, 12, 2));
    }

    #[test]
    fn cores_are_counted_in_words() {
        assert_eq!(cores(1), "1 core");
        assert_eq!(cores(8), "8 cores");
    }

    #[test]
    fn a_duration_of_no_time_is_refused_where_it_must_be_some() {
        assert!(parse_positive_duration("0h").is_err());
        assert_eq!(
            parse_positive_duration("2h"),
            Ok(std::time::Duration::from_secs(7200))
        );
    }

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
        assert_eq!(
            parse_duration("24h"),
            Ok(std::time::Duration::from_secs(86400))
        );
        assert_eq!(
            parse_duration("90s"),
            Ok(std::time::Duration::from_secs(90))
        );
        assert_eq!(
            parse_duration("0.5s"),
            Ok(std::time::Duration::from_millis(500))
        );
        assert!(parse_duration("24").unwrap_err().contains("unit"));
        assert_eq!(parse_duration("0s"), Ok(std::time::Duration::ZERO));
        // More seconds than a u64 holds is refused, not wrapped or a panic.
        assert!(parse_duration("999999999999999999d").is_err());
    }
}
