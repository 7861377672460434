//! Bracket-aware splitting of the values Spark prints inside plans.
//!
//! Spark joins list elements and constructor arguments with `", "`. Elements contain commas of
//! their own inside `()`, `[]` and `{}`, never at nesting depth 0, so splitting at depth 0 is
//! enough. `<>` is not counted: it occurs as a comparison operator. String literals are printed
//! unquoted, so a bracket inside a literal can still mislead the splitter; callers cross-check
//! with the `[n]` counts and fail soft.

/// Splits `s` at every `", "` that is at bracket depth 0.
///
/// With `keep_subquery_ids`, a `", [id=#"` does not split: a subquery expression prints as
/// `Subquery scalar-subquery#2, [id=#1]`, one element with a comma at depth 0.
pub(crate) fn split_top_level(s: &str, keep_subquery_ids: bool) -> Vec<&str> {
    let mut parts = Vec::new();
    for_each_top_level(s, keep_subquery_ids, |part| parts.push(part));
    parts
}

const BRACKET_OR_COMMA: [bool; 256] = {
    let mut table = [false; 256];
    let mut i = 0;
    let special = b"()[]{},";
    while i < special.len() {
        table[special[i] as usize] = true;
        i += 1;
    }
    table
};

/// The walk behind [`split_top_level`], handing each element to `f`, so that callers that only
/// count or copy the elements need no vector of slices.
fn for_each_top_level<'a>(s: &'a str, keep_subquery_ids: bool, mut f: impl FnMut(&'a str)) {
    let bytes = s.as_bytes();
    let mut depth: usize = 0;
    let mut start = 0;
    let mut any = false;
    let mut i = 0;
    while i < bytes.len() {
        // Most bytes are none of these; one table look-up passes them.
        if !BRACKET_OR_COMMA[usize::from(bytes[i])] {
            i += 1;
            continue;
        }
        match bytes[i] {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 && bytes.get(i + 1) == Some(&b' ') => {
                let rest = &bytes[i + 2..];
                if !(keep_subquery_ids && rest.starts_with(b"[id=#")) {
                    // `i` and `i + 2` sit next to ASCII bytes, so both are char boundaries.
                    f(&s[start..i]);
                    any = true;
                    start = i + 2;
                    i += 2;
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    if start < s.len() || any {
        f(&s[start..]);
    }
}

/// Where the two-byte `pair` first occurs in `bytes`. Called for every line of a plan, where a
/// `str` substring search spent more time setting up its searcher than searching.
pub(crate) fn find_pair(bytes: &[u8], pair: &[u8; 2]) -> Option<usize> {
    bytes.windows(2).position(|w| w == pair)
}

/// Where the two-byte `pair` last occurs in `bytes` ([`find_pair`] from the end).
pub(crate) fn rfind_pair(bytes: &[u8], pair: &[u8; 2]) -> Option<usize> {
    bytes.windows(2).rposition(|w| w == pair)
}

/// Parses a printed list `[a, b, c]` into its elements; `[]` is an empty list.
/// Returns `None` when `value` is not bracketed.
pub(crate) fn parse_list(value: &str) -> Option<Vec<String>> {
    let inner = list_inner(value)?;
    let mut list = Vec::with_capacity(count_top_level(inner));
    for_each_top_level(inner, true, |part| list.push(part.to_string()));
    Some(list)
}

/// [`parse_list`] for a field whose printed `[n]` count is known: the count sizes the vector
/// instead of a counting pass over the text. A wrong count costs only a resize.
pub(crate) fn parse_counted_list(value: &str, count: Option<usize>) -> Option<Vec<String>> {
    let Some(count) = count else {
        return parse_list(value);
    };
    let inner = list_inner(value)?;
    // An element takes at least its `", "`: a count beyond that is a damaged text, and must not
    // reserve memory for it.
    let mut list = Vec::with_capacity(count.min(inner.len() / 2 + 1));
    for_each_top_level(inner, true, |part| list.push(part.to_string()));
    list.shrink_to_fit();
    Some(list)
}

/// The number of elements [`parse_list`] would return, without building them: the `[n]`
/// cross-check of every detail field needs only the count.
pub(crate) fn count_list(value: &str) -> Option<usize> {
    list_inner(value).map(count_top_level)
}

/// The text between a list's brackets, empty for a blank list.
fn list_inner(value: &str) -> Option<&str> {
    let inner = value.trim().strip_prefix('[')?.strip_suffix(']')?;
    Some(if inner.trim().is_empty() { "" } else { inner })
}

fn count_top_level(inner: &str) -> usize {
    let mut n = 0;
    for_each_top_level(inner, true, |_| n += 1);
    n
}

/// Splits an argument string (`Arguments:` value or a one-line operator's arguments) into its
/// top-level elements.
pub(crate) fn split_args(value: &str) -> Vec<&str> {
    split_top_level(value.trim(), false)
}

/// Finds the byte index of the bracket that closes the one opening at `open`.
pub(crate) fn matching_close(s: &str, open: usize) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut depth: usize = 0;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// Parses a plan id token: `[plan_id=42]` (3.2.2+/3.3+) or `[id=#42]` (3.0–3.2). The
/// normalised goldens print `x`, which yields `None`.
pub(crate) fn parse_plan_id(token: &str) -> Option<u64> {
    let token = token.trim();
    let inner = token
        .strip_prefix("[plan_id=")
        .or_else(|| token.strip_prefix("[id=#"))?
        .strip_suffix(']')?;
    inner.parse().ok()
}

/// True for a plan id token, whether or not its number was normalised away.
pub(crate) fn is_plan_id_token(token: &str) -> bool {
    let token = token.trim();
    (token.starts_with("[plan_id=") || token.starts_with("[id=#")) && token.ends_with(']')
}

/// Strips the `... <n> more characters` marker Spark appends when `spark.sql.maxPlanStringLength`
/// cut the text. Returns the line without the marker, or `None` when there is no marker.
pub(crate) fn strip_truncation_marker(line: &str) -> Option<&str> {
    let trimmed = line.trim_end();
    let head = trimmed.strip_suffix(" more characters")?;
    // The count's digits are ASCII, so their byte length is their number; the character before
    // them may be any width (a byte offset past `rfind`'s match can land inside it).
    let digits = head.bytes().rev().take_while(u8::is_ascii_digit).count();
    let digits_start = head.len() - digits;
    if digits == 0 || digits_start == 0 {
        return None;
    }
    let before = head[..digits_start].strip_suffix(' ')?;
    let before = before.strip_suffix("...")?;
    Some(before)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_truncation_marker_after_a_wide_character_is_read_or_refused_whole() {
        // Found by the `plan` fuzz target: a two-byte character right before " more characters"
        // made the digits' start land inside it.
        assert_eq!(
            strip_truncation_marker("(\u{fffd}\u{7ff} more characters"),
            None
        );
        assert_eq!(
            strip_truncation_marker("Project [prénom#1] ... 42 more characters"),
            Some("Project [prénom#1] ")
        );
        assert_eq!(
            strip_truncation_marker("Project [a#1]... 42 more characters"),
            Some("Project [a#1]")
        );
        assert_eq!(strip_truncation_marker("42 more characters"), None);
    }

    #[test]
    fn splits_only_at_depth_zero() {
        assert_eq!(
            split_top_level(
                "hashpartitioning(a#1, b#2, 200), ENSURE_REQUIREMENTS, [plan_id=5]",
                false
            ),
            vec![
                "hashpartitioning(a#1, b#2, 200)",
                "ENSURE_REQUIREMENTS",
                "[plan_id=5]"
            ]
        );
    }

    #[test]
    fn keeps_subquery_expression_together_in_lists() {
        assert_eq!(
            parse_list("[a#1, Subquery scalar-subquery#2, [id=#1], b#3]").unwrap(),
            vec!["a#1", "Subquery scalar-subquery#2, [id=#1]", "b#3"]
        );
        assert_eq!(parse_list("[]").unwrap(), Vec::<String>::new());
        assert!(parse_list("None").is_none());
        for list in [
            "[a#1, Subquery scalar-subquery#2, [id=#1], b#3]",
            "[]",
            "[ ]",
            " [a] ",
            "x",
        ] {
            assert_eq!(
                count_list(list),
                parse_list(list).map(|l| l.len()),
                "{list}"
            );
            for count in [None, Some(0), Some(2), Some(usize::MAX)] {
                let counted = parse_counted_list(list, count);
                assert_eq!(counted, parse_list(list), "{list} {count:?}");
                if let Some(counted) = counted {
                    assert_eq!(counted.capacity(), counted.len(), "{list} {count:?}");
                }
            }
        }
    }

    #[test]
    fn unbalanced_brackets_do_not_underflow() {
        let parts = split_top_level("Location [x]/{y}/t], PartitionFilters: []", false);
        assert_eq!(parts, vec!["Location [x]/{y}/t]", "PartitionFilters: []"]);
    }

    #[test]
    fn plan_ids_in_both_styles() {
        assert_eq!(parse_plan_id("[plan_id=42]"), Some(42));
        assert_eq!(parse_plan_id("[id=#7]"), Some(7));
        assert_eq!(parse_plan_id("[plan_id=x]"), None);
        assert!(is_plan_id_token("[plan_id=x]"));
    }

    #[test]
    fn truncation_marker() {
        assert_eq!(
            strip_truncation_marker("+- Scan parq... 1234 more characters"),
            Some("+- Scan parq")
        );
        assert_eq!(strip_truncation_marker("+- Scan parquet"), None);
    }

    #[test]
    fn matching_close_finds_the_partner() {
        assert_eq!(matching_close("f(a(b), c) d", 1), Some(9));
        assert_eq!(matching_close("f(a", 1), None);
    }
}
