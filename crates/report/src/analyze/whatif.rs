//! The "what bounds this run, and what would more cores change" section, in every view: one bar
//! splitting the wall clock, the predicted wall clock at ¼x to 8x today's cores and without the
//! skewed tasks or the driver's gaps, and the sizing advice. The HTML view's chart of predicted
//! wall clock by cores is drawn with the other charts ([`crate::charts::scenario_chart`]).

use std::fmt::Write;

use crate::format::cores;
use sparkdiag_contract::WhatIf;
use sparkdiag_contract::split_flags;

use crate::format::{duration, escape, share, share_change};

/// The bar's three parts: label, share of the wall clock, the character the text bar uses.
fn parts(w: &WhatIf) -> [(&'static str, i64, char); 3] {
    let b = &w.bounds;
    [
        ("driver only", b.driver_only_ms, '█'),
        ("critical path", b.critical_path_ms, '▓'),
        ("waiting for cores", b.core_wait_ms, '░'),
    ]
}

/// `ms` as a fraction of the wall clock `wall`.
fn fraction(ms: i64, wall: i64) -> f64 {
    if wall > 0 {
        ms as f64 / wall as f64
    } else {
        0.0
    }
}

fn change(c: f64) -> String {
    if c.abs() < 0.005 {
        "same".into()
    } else {
        share_change(c)
    }
}

/// Each part's width in a bar of `width` cells; the widths add up to `width`.
fn widths(w: &WhatIf, width: usize) -> [usize; 3] {
    let wall = w.bounds.wall_ms.max(1);
    let parts = parts(w);
    let mut out = [0usize; 3];
    let mut used = 0usize;
    for (i, (_, ms, _)) in parts.iter().enumerate() {
        out[i] = ((*ms as f64 / wall as f64) * width as f64).round() as usize;
        used += out[i];
    }
    // Rounding can leave the bar a cell short or long: the largest part absorbs it.
    let largest = (0..3).max_by_key(|&i| parts[i].1).unwrap_or(0);
    out[largest] = (out[largest] + width).saturating_sub(used);
    out
}

fn scenario_rows(w: &WhatIf) -> Vec<(String, String, String)> {
    w.scenarios
        .iter()
        .map(|s| {
            let what = if s.is_a_fix() {
                format!("{} ({})", s.label, cores(s.cores))
            } else if s.cores == w.cores_today {
                format!("{} (today)", cores(s.cores))
            } else {
                format!("{} ({})", cores(s.cores), s.label)
            };
            (what, duration(s.predicted_ms), change(s.change_vs_today))
        })
        .collect()
}

/// Holds a number and its unit ("9.3 s", "1.2 GiB") and a duration's two parts ("3m 05s")
/// together while a line is wrapped.
const NO_BREAK: char = '\u{a0}';

/// `text` with the space inside a number with its unit turned from `from` into `to`.
fn unit_spaces(text: &str, from: char, to: char) -> String {
    const UNITS: [&str; 9] = ["ms", "s", "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut out = String::with_capacity(text.len());
    let (mut before, mut previous): (Option<char>, Option<char>) = (None, None);
    for (i, c) in text.char_indices() {
        let next_word = || {
            let rest = &text[i + c.len_utf8()..];
            let word = rest
                .split(|ch: char| ch.is_whitespace() || ch == NO_BREAK)
                .next()
                .unwrap_or("");
            word.trim_end_matches(|ch: char| ",.;:)".contains(ch))
        };
        let digit = |ch: Option<char>| ch.is_some_and(|p| p.is_ascii_digit());
        // `3m 05s`, `2h 10m`: the minutes or seconds after an hour or minute count.
        let second_part = |word: &str| {
            word.len() == 3
                && word[..2].bytes().all(|b| b.is_ascii_digit())
                && matches!(&word[2..], "s" | "m")
        };
        let joined = c == from
            && ((digit(previous) && UNITS.contains(&next_word()))
                || (matches!(previous, Some('m' | 'h'))
                    && digit(before)
                    && second_part(next_word())));
        out.push(if joined { to } else { c });
        (before, previous) = (previous, Some(c));
    }
    out
}

/// The section for the terminal: lines fitted to `width` columns on a terminal, unwrapped when
/// piped or written to a file (`None`).
pub fn text(w: &WhatIf, width: Option<usize>) -> String {
    let mut out = String::new();
    let width = width.map(|w| w.max(24));
    let line = |out: &mut String, text: &str| match width {
        Some(width) => out.push_str(&unit_spaces(
            &super::text::wrap(&unit_spaces(text, ' ', NO_BREAK), width, 4),
            NO_BREAK,
            ' ',
        )),
        None => {
            out.push_str(text);
            out.push('\n');
        }
    };
    let bar_width = width.unwrap_or(80).clamp(24, 100).saturating_sub(4).min(60);
    let _ = writeln!(out, "What bounds this run ({})", duration(w.bounds.wall_ms));
    let mut bar = String::new();
    for ((_, _, c), n) in parts(w).iter().zip(widths(w, bar_width)) {
        bar.extend(std::iter::repeat_n(*c, n));
    }
    let _ = writeln!(out, "  {bar}");
    let legend: Vec<String> = parts(w)
        .iter()
        .map(|(label, ms, c)| format!("{c} {label} {}", share(fraction(*ms, w.bounds.wall_ms), 0)))
        .collect();
    let _ = writeln!(out, "  {}", legend.join("  "));
    line(&mut out, &format!("  {}", w.headline));
    let rows = scenario_rows(w);
    let second = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
    let change_width = rows
        .iter()
        .map(|r| r.2.chars().count())
        .chain(["vs today".len()])
        .max()
        .unwrap_or(0);
    // A scenario's name is cut rather than the row wrapped: the table stays a table at 80 columns.
    let room = width
        .unwrap_or(80)
        .saturating_sub(2 + 2 + second + 2 + change_width)
        .max(16);
    let rows: Vec<(String, String, String)> = rows
        .into_iter()
        .map(|(what, wall, change)| {
            let what = if what.chars().count() > room {
                crate::format::clip(&what, room - 1)
            } else {
                what
            };
            (what, wall, change)
        })
        .collect();
    let first = rows
        .iter()
        .map(|r| r.0.chars().count())
        .max()
        .unwrap_or(0)
        .max("predicted run".len());
    let _ = writeln!(
        out,
        "  {:first$}  {:>second$}  vs today",
        "predicted run", "wall"
    );
    for (what, wall, change) in rows {
        let _ = writeln!(out, "  {what:first$}  {wall:>second$}  {change}");
    }
    for advice in &w.advice {
        // Flags to paste are never wrapped: a line break inside them would end the command.
        match split_flags(advice, &w.settings) {
            Some((sentence, flags)) => {
                line(&mut out, &format!("  → {sentence}"));
                let _ = writeln!(out, "      {flags}");
            }
            None => line(&mut out, &format!("  → {}", advice.text)),
        }
    }
    line(
        &mut out,
        &format!(
            "  (A replay of the log's own tasks; it replays today's run in {} against {} measured. \
             Its assumptions are in --format json.)",
            duration(w.replay_today_ms),
            duration(w.bounds.wall_ms)
        ),
    );
    out.push('\n');
    out
}

/// The section as Markdown.
pub fn markdown(w: &WhatIf) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## What bounds this run\n");
    let parts: Vec<String> = parts(w)
        .iter()
        .map(|(label, ms, _)| {
            format!(
                "{label} {} ({})",
                duration(*ms),
                share(fraction(*ms, w.bounds.wall_ms), 0)
            )
        })
        .collect();
    let _ = writeln!(
        out,
        "{} of wall clock: {}.\n\n**{}**\n",
        duration(w.bounds.wall_ms),
        parts.join(" · "),
        w.headline
    );
    out.push_str("| predicted run | wall clock | vs today |\n|---|--:|--:|\n");
    for (what, wall, change) in scenario_rows(w) {
        let _ = writeln!(out, "| {what} | {wall} | {change} |");
    }
    out.push('\n');
    for advice in &w.advice {
        match split_flags(advice, &w.settings) {
            Some((sentence, flags)) => {
                let _ = writeln!(out, "- {sentence}\n\n  ```sh\n  {flags}\n  ```");
            }
            None => {
                let _ = writeln!(out, "- {}", advice.text);
            }
        }
    }
    let _ = writeln!(
        out,
        "\nA replay of the log's own tasks (today's run replays in {} against {} measured); it keeps each task's duration and the driver's time between jobs, and ignores locality and dynamic allocation.\n",
        duration(w.replay_today_ms),
        duration(w.bounds.wall_ms)
    );
    out
}

/// The section as HTML: the bar, a chart of predicted wall clock by cores, the table and advice.
pub fn html(w: &WhatIf) -> String {
    let mut out = String::new();
    out.push_str("<h2>What bounds this run</h2>\n<div class=\"bounds\">");
    let colors = ["#c0392b", "#2c3e50", "#95a5a6"];
    for (((label, ms, _), color), _) in parts(w).iter().zip(colors).zip(0..) {
        let pct = 100.0 * fraction(*ms, w.bounds.wall_ms);
        if pct <= 0.0 {
            continue;
        }
        let _ = write!(
            out,
            "<span style=\"width:{pct:.2}%;background:{color}\" title=\"{} {}\"></span>",
            escape(label),
            duration(*ms)
        );
    }
    out.push_str("</div>\n<p class=\"legend\">");
    for ((label, ms, _), color) in parts(w).iter().zip(colors) {
        let _ = write!(
            out,
            "<span class=\"key\" style=\"background:{color}\"></span>{} {} ({}) ",
            escape(label),
            duration(*ms),
            share(fraction(*ms, w.bounds.wall_ms), 0)
        );
    }
    let _ = writeln!(out, "</p>\n<p><strong>{}</strong></p>", escape(&w.headline));
    out.push_str(&super::html::figure(&crate::charts::scenario_chart(w)));
    out.push_str(
        "<div class=\"scroll\"><table>\n<thead><tr><th>predicted run</th><th class=\"n\">wall clock</th>\
         <th class=\"n\">vs today</th></tr></thead>\n<tbody>\n",
    );
    for (what, wall, change) in scenario_rows(w) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            escape(&what),
            escape(&wall),
            escape(&change)
        );
    }
    out.push_str("</tbody>\n</table></div>\n<ul>\n");
    for advice in &w.advice {
        let _ = match split_flags(advice, &w.settings) {
            Some((sentence, flags)) => writeln!(
                out,
                "<li>{} <code>{}</code></li>",
                escape(sentence),
                escape(&flags)
            ),
            None => writeln!(out, "<li>{}</li>", escape(&advice.text)),
        };
    }
    out.push_str("</ul>\n<details><summary>How the prediction is made</summary>\n<p>");
    let _ = write!(
        out,
        "A replay of the log's own tasks: today's run replays in {} against {} measured.",
        duration(w.replay_today_ms),
        duration(w.bounds.wall_ms)
    );
    out.push_str("</p>\n<ul>\n");
    for a in &w.assumptions {
        let _ = writeln!(out, "<li>{}</li>", escape(a));
    }
    out.push_str("</ul>\n</details>\n");
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_number_keeps_its_unit_when_the_line_wraps() {
        let text = "replays today's run in 9.7 s against 9.3 s measured, 2m 05s for 6%, 1.5 GiB";
        let kept = super::unit_spaces(text, ' ', super::NO_BREAK);
        let wrapped = super::super::text::wrap(&kept, 38, 4);
        let back = super::unit_spaces(&wrapped, super::NO_BREAK, ' ');
        for line in back.lines() {
            let first = line.split_whitespace().next().unwrap_or("");
            assert!(
                !["s", "05s", "GiB"].contains(&first),
                "a unit starts a line:\n{back}"
            );
        }
        assert_eq!(back.replace("\n    ", " ").trim_end(), text);
    }
}
