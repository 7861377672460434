//! The gates section every view of a run or a comparison opens with when gates were asked for:
//! one line per gate (its name, the value measured, the limit, the verdict) and the exit code
//! they give.

use std::fmt::Write;

use sparkdiag_contract::{Exit, Gates};

use crate::format::{escape, markdown_cell};

/// `Gates: failed (exit 1)`.
fn heading(gates: &Gates) -> String {
    let verdict = match gates.verdict {
        Exit::Passed => "passed",
        Exit::Failed => "FAILED",
        Exit::Unusable => "unusable input",
        Exit::Inconclusive => "inconclusive",
    };
    format!(
        "Gates: {verdict} (exit {}: {})",
        gates.exit_code, gates.means
    )
}

pub fn text(gates: &Gates) -> String {
    let mut out = heading(gates) + "\n";
    for check in &gates.checks {
        let _ = writeln!(out, "  {}", check.line);
    }
    out.push('\n');
    out
}

pub fn markdown(gates: &Gates) -> String {
    let mut out = format!("## {}\n\n", markdown_cell(&heading(gates)));
    for check in &gates.checks {
        let _ = writeln!(out, "- {}", markdown_cell(&check.line));
    }
    out.push('\n');
    out
}

pub fn html(gates: &Gates) -> String {
    let class = if gates.verdict == Exit::Passed {
        "meta"
    } else {
        "warn"
    };
    let mut out = format!(
        "<h2>{}</h2>\n<ul class=\"{class}\">\n",
        escape(&heading(gates))
    );
    for check in &gates.checks {
        let _ = writeln!(out, "<li>{}</li>", escape(&check.line));
    }
    out.push_str("</ul>\n");
    out
}
