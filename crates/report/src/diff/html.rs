//! A [`Diff`] as one self-contained HTML page with inline SVG charts: runtime bars, the two
//! runs' stage timelines on one time axis, and time per matched query.

use sparkdiag_contract::diff::{Diff, RunOut, StageSpan};

use super::text::{cause_line, fact_line, output_side, ratio_words, rows_read, signed, value};
use crate::format::{duration, escape as esc};

const BEFORE: &str = "#c0504d";
const AFTER: &str = "#4f81bd";
const PALETTE: &[&str] = &[
    "#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#76b7b2", "#edc948", "#ff9da7", "#9c755f",
];

/// Horizontal bars, one per (label, value, colour, hatched); values in ms.
fn bars(rows: &[(String, f64, &str, bool)], title: &str) -> String {
    let width = 760.0;
    let label_w = 260.0;
    let row_h = 26.0;
    let max = rows.iter().map(|r| r.1).fold(0.0, f64::max).max(1.0);
    let height = rows.len() as f64 * row_h + 30.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"{}\">\
         <defs><pattern id=\"hatch\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">\
         <rect width=\"3\" height=\"6\" fill=\"{BEFORE}\" opacity=\"0.5\"/></pattern></defs>",
        esc(title)
    );
    for (i, (label, v, colour, hatched)) in rows.iter().enumerate() {
        let y = 10.0 + i as f64 * row_h;
        let w = (width - label_w - 90.0) * v / max;
        let fill = if *hatched {
            "url(#hatch)".to_string()
        } else {
            colour.to_string()
        };
        svg.push_str(&format!(
            "<text x=\"{}\" y=\"{}\" font-size=\"12\" text-anchor=\"end\">{}</text>\
             <rect x=\"{label_w}\" y=\"{y}\" width=\"{w:.1}\" height=\"{}\" fill=\"{fill}\" stroke=\"{colour}\"/>\
             <text x=\"{:.1}\" y=\"{}\" font-size=\"12\">{}</text>",
            label_w - 6.0,
            y + 15.0,
            esc(label),
            row_h - 8.0,
            label_w + w + 4.0,
            y + 15.0,
            esc(&duration(*v as i64))
        ));
    }
    svg.push_str("</svg>");
    svg
}

/// Both runs' stages on one time axis (from each application's start), coloured by the matched
/// work they belong to.
fn timelines(d: &Diff) -> String {
    let end = |r: &RunOut| {
        r.timeline
            .iter()
            .map(|s| s.end_ms)
            .max()
            .unwrap_or(0)
            .max(r.duration_ms.unwrap_or(0))
    };
    let axis = end(&d.before).max(end(&d.after)).max(1) as f64;
    let width = 760.0;
    let left = 70.0;
    let plot = width - left - 10.0;
    let lanes = |spans: &[&StageSpan]| -> Vec<usize> {
        // Overlapping stages go to separate lanes, so a thread pool's parallel jobs show.
        let mut lane_end: Vec<i64> = Vec::new();
        spans
            .iter()
            .map(|s| match lane_end.iter().position(|&e| e <= s.start_ms) {
                Some(l) => {
                    lane_end[l] = s.end_ms;
                    l
                }
                None => {
                    lane_end.push(s.end_ms);
                    lane_end.len() - 1
                }
            })
            .collect()
    };
    let mut sorted_b: Vec<&StageSpan> = d.before.timeline.iter().collect();
    sorted_b.sort_by_key(|s| s.start_ms);
    let mut sorted_a: Vec<&StageSpan> = d.after.timeline.iter().collect();
    sorted_a.sort_by_key(|s| s.start_ms);
    let lb = lanes(&sorted_b);
    let la = lanes(&sorted_a);
    let nb = lb.iter().max().map_or(1, |m| m + 1);
    let na = la.iter().max().map_or(1, |m| m + 1);
    let lane_h = 10.0;
    let top_b = 20.0;
    let top_a = top_b + nb as f64 * lane_h + 30.0;
    let height = top_a + na as f64 * lane_h + 40.0;
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" role=\"img\" aria-label=\"stage timelines\">"
    );
    let x = |ms: i64| left + plot * ms as f64 / axis;
    for (name, spans, lanes, top, run) in [
        ("BEFORE", &sorted_b, &lb, top_b, &d.before),
        ("AFTER", &sorted_a, &la, top_a, &d.after),
    ] {
        svg.push_str(&format!(
            "<text x=\"0\" y=\"{}\" font-size=\"12\" font-weight=\"bold\">{name}</text>",
            top + 10.0
        ));
        if let Some(total) = run.duration_ms {
            svg.push_str(&format!(
                "<line x1=\"{left}\" x2=\"{:.1}\" y1=\"{}\" y2=\"{}\" stroke=\"#999\"/>",
                x(total),
                top - 4.0,
                top - 4.0
            ));
        }
        for (s, lane) in spans.iter().zip(lanes.iter()) {
            let colour = s.work.map_or("#bbb", |w| PALETTE[w % PALETTE.len()]);
            svg.push_str(&format!(
                "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{}\" fill=\"{colour}\"><title>stage {}.{}: {} tasks, {}</title></rect>",
                x(s.start_ms),
                top + *lane as f64 * lane_h,
                (x(s.end_ms) - x(s.start_ms)).max(1.0),
                lane_h - 2.0,
                s.stage_id,
                s.attempt_id,
                s.tasks,
                esc(&duration(s.end_ms - s.start_ms))
            ));
        }
    }
    let y = height - 20.0;
    svg.push_str(&format!(
        "<line x1=\"{left}\" x2=\"{}\" y1=\"{y}\" y2=\"{y}\" stroke=\"#333\"/>",
        left + plot
    ));
    for i in 0..=4 {
        let ms = (axis * i as f64 / 4.0) as i64;
        svg.push_str(&format!(
            "<text x=\"{:.1}\" y=\"{}\" font-size=\"11\" text-anchor=\"middle\">{}</text>",
            x(ms),
            y + 14.0,
            esc(&duration(ms))
        ));
    }
    svg.push_str("</svg>");
    svg
}

pub fn render(d: &Diff) -> String {
    let mut body = String::new();
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

    let mut runtime = vec![(
        "BEFORE (observed)".to_string(),
        d.before.duration_ms.unwrap_or(0) as f64,
        BEFORE,
        false,
    )];
    if let Some(p) = &d.before.projection {
        runtime.push((
            "BEFORE (projected)".to_string(),
            p.duration_ms as f64,
            BEFORE,
            true,
        ));
    }
    runtime.push((
        "AFTER".to_string(),
        d.after.duration_ms.unwrap_or(0) as f64,
        AFTER,
        false,
    ));
    body.push_str("<h2>Runtime</h2>");
    body.push_str(&bars(&runtime, "runtime"));
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
    body.push_str(&timelines(d));

    body.push_str("<h2>Time per matched query</h2>");
    let mut rows = Vec::new();
    for w in d.work.iter().take(12) {
        // The bar labels have about 250 px: a long description is cut, the table has it whole.
        let mut label: String = w.label.chars().take(26).collect();
        if w.label.chars().count() > 26 {
            label.push('…');
        }
        if let Some(b) = &w.before {
            rows.push((
                format!("{} · before", label),
                b.time_ms as f64,
                BEFORE,
                false,
            ));
        }
        if let Some(a) = &w.after {
            rows.push((format!("{} · after", label), a.time_ms as f64, AFTER, false));
        }
    }
    body.push_str(&bars(&rows, "time per matched query"));
    body.push_str("<table><tr><th>work</th><th>matched by</th><th>count</th><th>plan</th></tr>");
    for (i, w) in d.work.iter().enumerate() {
        body.push_str(&format!(
            "<tr><td><span class=\"sw\" style=\"background:{}\"></span>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            PALETTE[i % PALETTE.len()],
            esc(&w.label),
            esc(w.matched_by),
            esc(&w.summary),
            esc(&w.plan_changes.join("; "))
        ));
    }
    body.push_str("</table>");

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
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>\
         body{{font-family:system-ui,sans-serif;max-width:820px;margin:2em auto;color:#222}}\
         table{{border-collapse:collapse;margin:.5em 0 1em}}td,th{{border:1px solid #ddd;padding:3px 6px;font-size:13px;text-align:left}}\
         td.n{{text-align:right}}.alarm{{background:#fde2e1;border:2px solid #c0392b;padding:.6em;font-weight:bold}}\
         tr.changed td,tr.only-before td,tr.only-after td{{background:#fde2e1}}.note{{color:#555}}\
         .sw{{display:inline-block;width:10px;height:10px;margin-right:4px}}.verdict{{font-size:1.1em;padding:.5em;border-left:4px solid #888}}.verdict.slower{{border-color:#c0392b}}.verdict.faster{{border-color:#2e7d32}}</style></head>\
         <body><h1>{t}</h1>{body}</body></html>\n",
        t = esc(&title)
    )
}
