//! A [`Diff`] as one self-contained HTML page with inline SVG charts (drawn by
//! [`crate::charts`], as `analyze`'s are): runtime bars, the two runs' stage timelines on one
//! time axis, and time per matched query.

use sparkdiag_contract::diff::Diff;

use super::text::{
    cause_line, fact_line, output_side, query_rows, ratio_words, rows_read, signed, value,
};
use crate::analyze::html::figure;
use crate::charts::{DiffBar, diff_bars, diff_timelines, work_colour};
use crate::format::{duration, escape as esc};

pub fn render(d: &Diff) -> String {
    let mut body = d.gates.as_ref().map(crate::gates::html).unwrap_or_default();
    body.push_str(&format!(
        "<p class=\"verdict {}\"><b>Verdict:</b> {}</p><h2>Why, ranked by the share of the change each explains</h2><ol class=\"causes\">",
        esc(d.verdict.runtime),
        esc(&d.verdict.sentence)
    ));
    for (i, c) in d.causes.iter().enumerate() {
        let line = cause_line(i + 1, c);
        let line = line
            .split_once(". ")
            .map_or(line.as_str(), |(_, rest)| rest);
        body.push_str(&format!("<li>{}<ul>", esc(line)));
        for f in &c.facts {
            body.push_str(&format!("<li>{}</li>", esc(&fact_line(f))));
        }
        for e in &c.evidence {
            body.push_str(&format!("<li>{}</li>", esc(e)));
        }
        body.push_str("</ul></li>");
    }
    body.push_str("</ol>");
    for h in &d.headline {
        if h.starts_with("OUTPUT CHANGED") {
            body.push_str(&format!("<p class=\"alarm\">{}</p>", esc(h)));
        }
    }
    body.push_str("<ul>");
    for h in d
        .headline
        .iter()
        .filter(|h| !h.starts_with("OUTPUT CHANGED"))
    {
        body.push_str(&format!("<li>{}</li>", esc(h)));
    }
    body.push_str("</ul>");

    let mut runtime = vec![DiffBar {
        label: "BEFORE (observed)".into(),
        ms: d.before.duration_ms.unwrap_or(0),
        after: false,
        projected: false,
    }];
    if let Some(p) = &d.before.projection {
        runtime.push(DiffBar {
            label: "BEFORE (projected)".into(),
            ms: p.duration_ms,
            after: false,
            projected: true,
        });
    }
    runtime.push(DiffBar {
        label: "AFTER".into(),
        ms: d.after.duration_ms.unwrap_or(0),
        after: true,
        projected: false,
    });
    body.push_str("<h2>Runtime</h2>");
    body.push_str(&figure(&diff_bars(
        "diff-runtime",
        "Runtime",
        "Each run's runtime: BEFORE in red, AFTER in blue; a pale bar is a killed run's projection to its full length.",
        runtime,
    )));
    if let Some(p) = &d.before.projection {
        body.push_str(&format!("<p>Projection: {}.</p>", esc(&p.method)));
    }

    body.push_str(&format!("<h2>Outputs: {}</h2><table><tr><th>destination</th><th>status</th><th>before</th><th>after</th><th>note</th></tr>", esc(d.correctness.status)));
    for o in &d.correctness.outputs {
        body.push_str(&format!(
            "<tr class=\"{}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(o.status),
            esc(&o.destination),
            esc(o.status),
            esc(&output_side(&o.before)),
            esc(&output_side(&o.after)),
            esc(&o.note)
        ));
    }
    body.push_str("</table>");
    if !d.correctness.inputs.is_empty() {
        body.push_str("<table><tr><th>read from</th><th>rows before</th><th>rows after</th></tr>");
        for i in &d.correctness.inputs {
            body.push_str(&format!(
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                esc(&i.source),
                rows_read(i.rows_before, i.reads_before),
                rows_read(i.rows_after, i.reads_after)
            ));
        }
        body.push_str("</table>");
    }
    for n in &d.correctness.notes {
        body.push_str(&format!("<p class=\"note\">{}</p>", esc(n)));
    }

    body.push_str("<h2>What changed</h2><table><tr><th></th><th>before</th><th>after</th><th>change</th><th>ratio</th></tr>");
    for m in &d.metrics {
        body.push_str(&format!(
            "<tr><td>{}</td><td class=\"n\">{}{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            esc(m.label),
            esc(&value(m.unit, m.before)),
            if m.projected { " (projected)" } else { "" },
            esc(&value(m.unit, m.after)),
            esc(&signed(m.unit, m.change)),
            esc(&ratio_words(m))
        ));
    }
    body.push_str("</table>");

    body.push_str("<h2>Stage timelines (one time axis, from each application's start)</h2>");
    body.push_str(&figure(&diff_timelines(d)));

    body.push_str("<h2>Time per matched query</h2>");
    let mut rows = Vec::new();
    for w in d.work.iter().take(12) {
        // The chart shortens long labels itself; the table below has them whole.
        for (side, time, after) in [
            ("before", w.before.as_ref().map(|b| b.time_ms), false),
            ("after", w.after.as_ref().map(|a| a.time_ms), true),
        ] {
            if let Some(ms) = time {
                rows.push(DiffBar {
                    label: format!("{} · {side}", w.label),
                    ms,
                    after,
                    projected: false,
                });
            }
        }
    }
    body.push_str(&figure(&diff_bars(
        "diff-work",
        "Time per matched query",
        "Each matched query's (or job's) time, summed over its runs: before in red, after in blue; the first 12 matched.",
        rows,
    )));
    body.push_str("<table><tr><th>work</th><th>matched by</th><th>count</th><th>plan</th></tr>");
    for (i, w) in d.work.iter().enumerate() {
        body.push_str(&format!(
            "<tr><td><span class=\"sw\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            work_colour(i),
            esc(&w.label),
            esc(w.matched_by),
            esc(&w.summary),
            esc(&w.plan_changes.join("; "))
        ));
    }
    body.push_str("</table>");

    for q in &d.queries {
        body.push_str(&format!(
            "<h2>Streaming query <code>{}</code></h2><table><tr><th></th><th>before</th><th>after</th></tr>",
            esc(&q.query)
        ));
        for (what, b, a) in query_rows(q) {
            body.push_str(&format!(
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
                esc(what),
                esc(&b),
                esc(&a)
            ));
        }
        body.push_str("</table>");
    }
    body.push_str("<h2>Findings</h2><table><tr><th></th><th>rule</th><th>title</th><th>impact before</th><th>impact after</th></tr>");
    for (what, c) in d.findings.each() {
        body.push_str(&format!(
            "<tr><td>{what}</td><td>{}</td><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>",
            c.rule,
            esc(&c.title),
            esc(&duration(c.impact_ms_before)),
            esc(&duration(c.impact_ms_after))
        ));
    }
    body.push_str("</table>");

    let title = format!(
        "sparkdiag diff: {} → {}",
        d.before.app_id.as_deref().unwrap_or("?"),
        d.after.app_id.as_deref().unwrap_or("?")
    );
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"><title>{t}</title><style>\
         body{{font-family:system-ui,sans-serif;max-width:820px;margin:2em auto;color:#222}}\
         table{{border-collapse:collapse;margin:.5em 0 1em}}td,th{{border:1px solid #ddd;padding:3px 6px;font-size:13px;text-align:left}}\
         td.n{{text-align:right}}.alarm{{background:#fde2e1;border:2px solid #c0392b;padding:.6em;font-weight:bold}}\
         tr.changed td,tr.only-before td,tr.only-after td{{background:#fde2e1}}.note{{color:#555}}\
         .sw{{display:inline-block;width:10px;height:10px;margin-right:4px}}.verdict{{font-size:1.1em;padding:.5em;border-left:4px solid #888}}.verdict.slower{{border-color:#c0392b}}.verdict.faster{{border-color:#2e7d32}}\
         figure{{margin:12px 0 24px}}figcaption{{color:#555;font-size:14px;margin-bottom:6px}}\
         figure svg{{display:block;max-width:100%;height:auto;border:1px solid #ddd}}.chart.narrow{{display:none}}\
         @media (max-width:640px){{body{{margin:1em .6em}}h1{{font-size:22px;word-break:break-all}}\
         table{{display:block;overflow-x:auto}}.chart.wide{{display:none}}.chart.narrow{{display:block}}}}</style></head>\
         <body><h1>{t}</h1>{body}</body></html>\n",
        t = esc(&title)
    )
}
