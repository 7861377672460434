//! The "what this report could check" section of every view: the evidence the log held and
//! lacked, each rule that could not run and why, and the rules that ran and found nothing with
//! the thresholds they ran with, so that no findings never reads as healthy when the log lacked
//! what the rules read.

use std::fmt::Write;

use sparkdiag_contract::Ledger;
use sparkdiag_contract::ledger::{RuleNotRun, RuleQuiet};

use crate::format::{escape, markdown_cell, thousands};

/// A threshold's value as the rules write it: `5`, `0.005`, `30`.
fn number(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

/// `SK001 (ratio 5, min_task_s 30)`, a threshold off its default marked with `*`.
fn quiet(q: &RuleQuiet) -> String {
    if q.thresholds.is_empty() {
        return q.rule.to_string();
    }
    let values: Vec<String> = q
        .thresholds
        .iter()
        .map(|t| {
            let mark = if t.value == t.default { "" } else { "*" };
            format!("{} {}{mark}", t.key, number(t.value))
        })
        .collect();
    format!("{} ({})", q.rule, values.join(", "))
}

/// Rules that could not run, grouped by why: `GC002 (the log has no executor memory metrics)`,
/// `ST001, ST002 (...)`.
fn not_run(rules: &[RuleNotRun]) -> Vec<String> {
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for r in rules {
        match groups.iter_mut().find(|(detail, _)| *detail == r.detail) {
            Some((_, codes)) => codes.push(r.rule),
            None => groups.push((&r.detail, vec![r.rule])),
        }
    }
    groups
        .into_iter()
        .map(|(detail, codes)| format!("{} ({detail})", codes.join(", ")))
        .collect()
}

/// The evidence the log held, with counts: `13 task ends · 5 jobs`.
fn held(ledger: &Ledger) -> String {
    let held: Vec<String> = ledger
        .evidence
        .iter()
        .filter(|e| e.present)
        .map(|e| format!("{} {}", e.about, thousands(e.count as i64)))
        .collect();
    if held.is_empty() {
        "none".into()
    } else {
        held.join(" · ")
    }
}

/// The text view's section: each line wrapped by `wrap` (the terminal's width, or not at all).
pub fn text(ledger: &Ledger, wrap: impl Fn(String, usize) -> String) -> String {
    let mut out = String::from("What this report could check\n");
    out.push_str(&wrap(format!("  in the log: {}", held(ledger)), 4));
    let absent: Vec<&str> = ledger.absent().map(|e| e.kind.absent()).collect();
    if !absent.is_empty() {
        out.push_str(&wrap(format!("  {}", absent.join(", ")), 4));
    }
    if !ledger.not_run.is_empty() {
        out.push_str(&wrap(
            format!("  could not run: {}", not_run(&ledger.not_run).join("; ")),
            4,
        ));
    }
    if !ledger.found_nothing.is_empty() {
        let rules: Vec<String> = ledger.found_nothing.iter().map(quiet).collect();
        out.push_str(&wrap(
            format!(
                "  ran and found nothing (thresholds used, * where not the default): {}",
                rules.join("; ")
            ),
            4,
        ));
    }
    out.push('\n');
    out
}

pub fn markdown(ledger: &Ledger) -> String {
    let mut out =
        String::from("## What this report could check\n\n| evidence | in the log |\n|---|--:|\n");
    for e in &ledger.evidence {
        let _ = writeln!(
            out,
            "| {} | {} |",
            markdown_cell(e.about),
            if e.present {
                thousands(e.count as i64)
            } else {
                "**none**".into()
            }
        );
    }
    out.push('\n');
    if !ledger.not_run.is_empty() {
        out.push_str("Could not run:\n\n");
        for line in not_run(&ledger.not_run) {
            let _ = writeln!(out, "- {}", markdown_cell(&line));
        }
        out.push('\n');
    }
    if !ledger.found_nothing.is_empty() {
        let rules: Vec<String> = ledger.found_nothing.iter().map(quiet).collect();
        let _ = writeln!(
            out,
            "Ran and found nothing (thresholds used, `*` where not the default): {}\n",
            markdown_cell(&rules.join("; "))
        );
    }
    out
}

pub fn html(ledger: &Ledger) -> String {
    let mut out = String::from(
        "<h2>What this report could check</h2>\n<div class=\"scroll\"><table>\n<thead><tr><th>evidence</th><th class=\"n\">in the log</th></tr></thead>\n<tbody>\n",
    );
    for e in &ledger.evidence {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=\"n\">{}</td></tr>",
            escape(e.about),
            if e.present {
                thousands(e.count as i64)
            } else {
                "<strong>none</strong>".into()
            }
        );
    }
    out.push_str("</tbody>\n</table></div>\n");
    if !ledger.not_run.is_empty() {
        out.push_str("<p>Could not run:</p>\n<ul>\n");
        for line in not_run(&ledger.not_run) {
            let _ = writeln!(out, "<li>{}</li>", escape(&line));
        }
        out.push_str("</ul>\n");
    }
    if !ledger.found_nothing.is_empty() {
        let rules: Vec<String> = ledger.found_nothing.iter().map(quiet).collect();
        let _ = writeln!(
            out,
            "<p class=\"meta\">Ran and found nothing (thresholds used, * where not the default): {}</p>",
            escape(&rules.join("; "))
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use sparkdiag_contract::ledger::ThresholdUsed;

    #[test]
    fn a_threshold_off_its_default_is_marked() {
        let q = RuleQuiet {
            rule: "SK001",
            name: "data-skew",
            thresholds: vec![
                ThresholdUsed {
                    key: "ratio",
                    value: 4.0,
                    default: 5.0,
                    unit: "x",
                },
                ThresholdUsed {
                    key: "min_share",
                    value: 0.005,
                    default: 0.005,
                    unit: "share",
                },
            ],
        };
        assert_eq!(quiet(&q), "SK001 (ratio 4*, min_share 0.005)");
    }
}
