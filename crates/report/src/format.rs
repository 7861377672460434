//! How every view writes numbers, durations, sizes, enum names and cut text, and how it escapes
//! text from the log for HTML and Markdown: one definition each, so the terminal, Markdown and
//! HTML views, the charts' labels, `diff`, `serve` and `mcp` print the same value the same way.
//!
//! | what | function | looks like |
//! | --- | --- | --- |
//! | a duration in ms | [`duration`] | `950 ms`, `20.4 s`, `3m 05s`, `2h 10m`, `-3m 05s` |
//! | a size in bytes, binary units | [`human_bytes`] | `512 B`, `1.5 KiB`, `2.0 GiB` |
//! | a count | [`thousands`] | `1,234,567` |
//! | a count of cores | [`cores`] | `1 core`, `8 cores` |
//! | a share | [`percent`] (of a whole), [`share`] (of a fraction) | `12.5%`, `-` without a whole, `69%` |
//! | a relative change | [`share_change`] | `+12%`, `-54%` |
//! | text cut to a length | [`clip`], [`truncate`] (first line only) | `Caused by: …` |
//! | HTML text or attribute | [`escape`] | `&lt;b&gt; &amp; &quot;` |
//! | a Markdown table cell | [`markdown_cell`] | `a \| b` |
//!
//! [`duration`], [`human_bytes`], [`thousands`], [`cores`], [`share`], [`share_change`],
//! [`clip`] and [`plain_text`] are implemented in `sparkdiag_contract::units` and re-exported here
//! through the contract: the rules and the what-if write durations, sizes and quoted log text
//! into findings, and a rule may not depend on a view, so the one implementation sits below the
//! contract where both can reach it. Everything only views need is implemented here.

pub use sparkdiag_contract::enum_name;
pub use sparkdiag_contract::units::{
    clip, cores, duration, human_bytes, parse_duration, parse_positive_duration, parse_size,
    plain_text, share, share_change, thousands,
};

/// `part` of `whole` as `12.5%`; `-` when there is no whole.
pub fn percent(part: i64, whole: i64) -> String {
    if whole <= 0 {
        "-".into()
    } else {
        share(part as f64 / whole as f64, 1)
    }
}

/// The first line of `s`, trimmed and cut to `max` characters (the ellipsis included).
pub fn truncate(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= max {
        line.to_string()
    } else {
        clip(line, max.saturating_sub(1))
    }
}

/// Text made safe as HTML element content and as a quoted attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(c),
        }
    }
    out
}

/// Text made safe for a Markdown table cell or inline text: on one line, pipes escaped, and no
/// raw HTML (GitHub renders some tags).
pub fn markdown_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut space = false;
    for c in text.chars() {
        match c {
            '\n' | '\r' | '\t' => {
                // Runs of line breaks become one space, so the row stays one line.
                if !space {
                    out.push(' ');
                }
                space = true;
                continue;
            }
            '|' => out.push_str("\\|"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            _ => out.push(c),
        }
        space = false;
    }
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_groups_digits_and_survives_the_extremes() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(-1_000), "-1,000");
        assert_eq!(thousands(i64::MIN), "-9,223,372,036,854,775,808");
        assert_eq!(thousands(i64::MAX), "9,223,372,036,854,775,807");
    }

    #[test]
    fn escape_covers_markup_and_both_quotes() {
        assert_eq!(
            escape(r#"<a href="x">'&'</a>"#),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
        );
    }

    #[test]
    fn cells_stay_on_one_line_and_keep_their_pipes() {
        assert_eq!(markdown_cell("a | b\n\n  c"), "a \\| b   c");
        assert_eq!(markdown_cell("<script>"), "&lt;script&gt;");
        assert_eq!(markdown_cell("`x_y*z`"), "`x_y*z`");
    }

    #[test]
    fn truncate_cuts_at_characters_not_bytes() {
        assert_eq!(truncate("ééééé", 3), "éé…");
        assert_eq!(truncate("short\nsecond line", 10), "short");
        assert_eq!(truncate("anything", 0), "…");
    }
}

/// What a failure message is about. A Python failure (Spark's "An exception was thrown from
/// the Python worker: Traceback ...") ends with its exception, `ValueError: bad row 1234`,
/// which says more than the "Traceback (most recent call last):" that starts it; any other
/// message leads with its point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ErrorHeadline<'a> {
    /// The message's first non-empty line, trimmed.
    pub first_line: &'a str,
    /// The exception the message's Python traceback ends with, when it holds one.
    pub exception: Option<&'a str>,
}

const TRACEBACK: &str = "Traceback (most recent call last):";

pub fn error_headline(message: &str) -> ErrorHeadline<'_> {
    let first_line = message
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or_default();
    // The exception line is the last unindented `Name: message` (or a bare `SomeError`) of the
    // traceback; frames are indented, and Java's `\tat` lines follow it. `SQLSTATE: 38000`,
    // which Spark appends, is shaped like one but has no lower-case letter.
    let is_exception = |line: &&str| {
        let name = line.split(':').next().unwrap_or_default();
        !line.starts_with(char::is_whitespace)
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            && (name.ends_with("Error")
                || name.ends_with("Exception")
                || (line.contains(':') && name.chars().any(|c| c.is_ascii_lowercase())))
    };
    let exception = message.find(TRACEBACK).and_then(|at| {
        message[at + TRACEBACK.len()..]
            .lines()
            .rev()
            .find(is_exception)
            .map(str::trim_end)
    });
    ErrorHeadline {
        first_line,
        exception,
    }
}

impl<'a> ErrorHeadline<'a> {
    /// The exception, else the first line: the point alone.
    pub fn point(&self) -> &'a str {
        self.exception.unwrap_or(self.first_line)
    }

    /// The first line, with a traceback it announces at its end replaced by the exception, so
    /// that where it was thrown stays: `[PYTHON_EXCEPTION] From the worker: ValueError: ...`.
    pub fn announced(&self) -> String {
        match (self.first_line.strip_suffix(TRACEBACK), self.exception) {
            (Some(head), Some(exception)) => format!("{head}{exception}"),
            _ => self.first_line.to_string(),
        }
    }
}
