//! A [`Diff`] as a pull-request comment: the verdict first, then tables.

use sparkdiag_contract::diff::{Diff, RunOut, WorkSide};

use super::text::{
    cause_line, fact_line, output_side, query_rows, ratio_words, rows_read, signed, value,
};
use crate::format::{duration, markdown_cell as cell};

pub fn render(d: &Diff) -> String {
    let mut out = String::new();
    let name = |r: &RunOut| {
        format!(
            "{} (`{}`)",
            r.name.as_deref().unwrap_or("?"),
            r.app_id.as_deref().unwrap_or("?")
        )
    };
    out.push_str(&format!(
        "## sparkdiag diff: {} → {}\n\n",
        name(&d.before),
        name(&d.after)
    ));
    if let Some(gates) = &d.gates {
        out.push_str(&crate::gates::markdown(gates));
    }
    out.push_str(&format!("**Verdict:** {}\n\n", cell(&d.verdict.sentence)));
    for h in &d.headline {
        if h.starts_with("OUTPUT CHANGED") {
            out.push_str(&format!("> [!CAUTION]\n> **{}**\n\n", cell(h)));
        }
    }
    out.push_str("### Why, ranked by the share of the change each explains\n\n");
    for (i, c) in d.causes.iter().enumerate() {
        out.push_str(&format!("{}\n", cell(&cause_line(i + 1, c))));
        for f in &c.facts {
            out.push_str(&format!("   - {}\n", cell(&fact_line(f))));
        }
        for e in &c.evidence {
            out.push_str(&format!("   - {}\n", cell(e)));
        }
    }
    out.push('\n');
    for h in d
        .headline
        .iter()
        .filter(|h| !h.starts_with("OUTPUT CHANGED"))
    {
        out.push_str(&format!("- {h}\n"));
    }
    out.push('\n');

    out.push_str(&format!("### Outputs: {}\n\n", d.correctness.status));
    if !d.correctness.outputs.is_empty() {
        out.push_str("| destination | status | before | after | note |\n|---|---|---|---|---|\n");
        for o in &d.correctness.outputs {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} | {} |\n",
                cell(&o.destination),
                o.status,
                cell(&output_side(&o.before)),
                cell(&output_side(&o.after)),
                cell(&o.note)
            ));
        }
        out.push('\n');
    }
    if !d.correctness.inputs.is_empty() {
        out.push_str("| read from | rows before | rows after |\n|---|---:|---:|\n");
        for i in &d.correctness.inputs {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                cell(&i.source),
                rows_read(i.rows_before, i.reads_before),
                rows_read(i.rows_after, i.reads_after)
            ));
        }
        out.push('\n');
    }
    for n in &d.correctness.notes {
        out.push_str(&format!("- {}\n", cell(n)));
    }
    if let Some(p) = &d.before.projection {
        out.push_str(&format!(
            "\n**BEFORE projected to {}**: {}. Iterations in all: {} ({}).\n",
            duration(p.duration_ms),
            p.method,
            p.iterations_total,
            p.total_from
        ));
    }
    out.push_str(
        "\n### What changed\n\n| | before | after | change | ratio |\n|---|---:|---:|---:|---:|\n",
    );
    for m in &d.metrics {
        out.push_str(&format!(
            "| {} | {}{} | {} | {} | {} |\n",
            m.label,
            value(m.unit, m.before),
            if m.projected { " (projected)" } else { "" },
            value(m.unit, m.after),
            signed(m.unit, m.change),
            ratio_words(m)
        ));
    }
    out.push_str("\n### Matched work\n\n| work | matched by | count | summed time | plan |\n|---|---|---|---|---|\n");
    for w in &d.work {
        let t = |s: &Option<WorkSide>| s.as_ref().map_or("-".to_string(), |s| duration(s.time_ms));
        out.push_str(&format!(
            "| {} | {} | {} | {} → {} | {} |\n",
            cell(&w.label),
            w.matched_by,
            cell(&w.summary),
            t(&w.before),
            t(&w.after),
            cell(&w.plan_changes.join("; "))
        ));
    }
    for q in &d.queries {
        out.push_str(&format!(
            "\n### Streaming query `{}`\n\n| | before | after |\n|---|---:|---:|\n",
            q.query.replace('`', "'")
        ));
        for (what, b, a) in query_rows(q) {
            out.push_str(&format!("| {what} | {} | {} |\n", cell(&b), cell(&a)));
        }
    }
    out.push_str("\n### Findings\n\n");
    if d.findings.is_empty() {
        out.push_str("None in either run.\n");
    } else {
        out.push_str(
            "| | rule | title | impact before | impact after |\n|---|---|---|---:|---:|\n",
        );
        for (what, c) in d.findings.each() {
            out.push_str(&format!(
                "| {what} | {} | {} | {} | {} |\n",
                c.rule,
                cell(&c.title),
                duration(c.impact_ms_before),
                duration(c.impact_ms_after)
            ));
        }
    }
    out
}
