//! The terminal view of a [`Diff`]: the headline (an output change first), correctness
//! evidence, the numbers side by side, matched work, findings.

use crate::contract::{Diff, MetricChange, OutputSide, WorkMatch};

/// `1.2 s`, `3 min 05 s`, `2 h 10 min`.
pub fn duration(ms: i64) -> String {
    let sign = if ms < 0 { "-" } else { "" };
    let ms = ms.unsigned_abs();
    if ms < 1000 {
        return format!("{sign}{ms} ms");
    }
    let s = ms as f64 / 1000.0;
    if s < 60.0 {
        return format!("{sign}{s:.1} s");
    }
    let total = (ms + 500) / 1000;
    let (h, m, sec) = (total / 3600, (total / 60) % 60, total % 60);
    if h == 0 {
        format!("{sign}{m} min {sec:02} s")
    } else {
        format!("{sign}{h} h {m:02} min")
    }
}

/// `1.5 GB`, `340 kB`, in powers of 1000 as the report's views use.
pub fn bytes(n: f64) -> String {
    let units = ["B", "kB", "MB", "GB", "TB", "PB"];
    let mut v = n.abs();
    let mut u = 0;
    while v >= 1000.0 && u + 1 < units.len() {
        v /= 1000.0;
        u += 1;
    }
    let sign = if n < 0.0 { "-" } else { "" };
    if u == 0 {
        format!("{sign}{v:.0} B")
    } else {
        format!("{sign}{v:.1} {}", units[u])
    }
}

/// A metric's value in its unit.
pub fn value(unit: &str, v: f64) -> String {
    match unit {
        "ms" => duration(v.round() as i64),
        "bytes" => bytes(v),
        "core-hours" => format!("{v:.3}"),
        "money" => format!("{v:.2}"),
        _ => format!("{}", v.round() as i64),
    }
}

/// `-54%`, `×3.1`, or `new` / `gone`.
pub fn ratio_words(m: &MetricChange) -> String {
    match m.ratio {
        None if m.after == 0.0 => "same".to_string(),
        None => "new".to_string(),
        Some(1.0) => "same".to_string(),
        Some(0.0) => "gone".to_string(),
        Some(r) if r >= 2.0 => format!("×{r:.1}"),
        Some(r) => format!("{:+.0}%", (r - 1.0) * 100.0),
    }
}

/// A change with its sign: `+1.2 s`, `-24`, `0`.
pub fn signed(unit: &str, v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let plus = if v > 0.0 { "+" } else { "" };
    format!("{plus}{}", value(unit, v))
}

pub fn output_side(s: &Option<OutputSide>) -> String {
    match s {
        None => "nothing".to_string(),
        Some(s) => format!(
            "{} rows, {} files, {}, {} partition(s), {} write(s)",
            s.rows.map_or("?".to_string(), |r| r.to_string()),
            s.files.map_or("?".to_string(), |r| r.to_string()),
            s.bytes.map_or("? B".to_string(), |b| bytes(b as f64)),
            s.partitions,
            s.writes
        ),
    }
}

fn run_line(label: &str, r: &crate::contract::RunOut) -> String {
    format!(
        "{label}: {} ({}) {:?}, {}{}, {} core(s)",
        r.name.as_deref().unwrap_or("?"),
        r.app_id.as_deref().unwrap_or("?"),
        r.status,
        r.duration_ms.map_or("?".to_string(), duration),
        if r.complete { "" } else { " (log incomplete)" },
        r.cores
    )
}

pub fn work_line(w: &WorkMatch) -> Vec<String> {
    let by = if w.matched_by == "none" {
        "no counterpart"
    } else {
        w.matched_by
    };
    let mut out = vec![format!("{} [{by}]", w.label)];
    let mut facts = w.summary.clone();
    let t = |s: &Option<crate::contract::WorkSide>| {
        s.as_ref().map_or("-".to_string(), |s| {
            format!(
                "{} summed, {} wall, {} tasks",
                duration(s.time_ms),
                duration(s.wall_ms),
                s.tasks
            )
        })
    };
    facts.push_str(&format!("; {} → {}", t(&w.before), t(&w.after)));
    out.push(format!("    {facts}"));
    for c in &w.plan_changes {
        out.push(format!("    plan: {c}"));
    }
    let g = |s: &Option<crate::contract::StageGroupOut>| {
        s.as_ref().map_or("none".to_string(), |s| {
            format!("{} ({} tasks, {})", s.count, s.tasks, duration(s.time_ms))
        })
    };
    for s in &w.stages {
        out.push(format!(
            "    stages `{}` ({}): {} → {}",
            s.name,
            s.role,
            g(&s.before),
            g(&s.after)
        ));
    }
    out
}

pub fn render(d: &Diff) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(&s);
        out.push('\n');
    };
    line("sparkdiag diff".to_string());
    line(run_line("BEFORE", &d.before));
    line(run_line("AFTER ", &d.after));
    line(String::new());
    for h in &d.headline {
        let loud = h.starts_with("OUTPUT CHANGED");
        line(if loud {
            format!("!! {h}")
        } else {
            format!("* {h}")
        });
    }
    line(String::new());

    line(format!("Outputs ({})", d.correctness.status));
    for o in &d.correctness.outputs {
        let dest = match &o.after_destination {
            Some(a) => format!("{} / {}", o.destination, a),
            None => o.destination.clone(),
        };
        line(format!("  {dest}: {}", o.status));
        line(format!("    before: {}", output_side(&o.before)));
        line(format!("    after:  {}", output_side(&o.after)));
        if !o.note.is_empty() {
            line(format!("    {}", o.note));
        }
    }
    for i in &d.correctness.inputs {
        let rows = |r: Option<i64>, n: usize| {
            r.map_or("not read".to_string(), |r| {
                format!("{r} rows in {n} read(s)")
            })
        };
        line(format!(
            "  read {}: {} → {}",
            i.source,
            rows(i.rows_before, i.reads_before),
            rows(i.rows_after, i.reads_after)
        ));
    }
    for n in &d.correctness.notes {
        line(format!("  note: {n}"));
    }
    if let Some(p) = &d.before.projection {
        line(String::new());
        line(format!("Projection of BEFORE: {}", duration(p.duration_ms)));
        line(format!("  {}.", p.method));
        line(format!(
            "  Iterations in all: {} ({}).",
            p.iterations_total, p.total_from
        ));
    }
    line(String::new());

    line("What changed".to_string());
    let width = d.metrics.iter().map(|m| m.label.len()).max().unwrap_or(10);
    line(format!(
        "  {:width$}  {:>14}  {:>14}  {:>14}  {:>8}",
        "", "before", "after", "change", "ratio"
    ));
    for m in &d.metrics {
        line(format!(
            "  {:width$}  {:>14}  {:>14}  {:>14}  {:>8}",
            m.label,
            format!(
                "{}{}",
                value(m.unit, m.before),
                if m.projected { "*" } else { "" }
            ),
            value(m.unit, m.after),
            signed(m.unit, m.change),
            ratio_words(m)
        ));
    }
    if d.metrics.iter().any(|m| m.projected) {
        line("  * projected for the whole run; the other BEFORE numbers are what it did before it stopped".to_string());
    }
    line(String::new());

    line("Matched work".to_string());
    for w in &d.work {
        for l in work_line(w) {
            line(format!("  {l}"));
        }
    }
    line(String::new());

    line("Findings".to_string());
    let f = &d.findings;
    for (what, list) in [
        ("resolved", &f.resolved),
        ("new", &f.new),
        ("remaining", &f.remaining),
    ] {
        for c in list.iter() {
            line(format!(
                "  {what:9} {} {}: impact {} → {} ({} → {} finding(s))",
                c.rule,
                c.title,
                duration(c.impact_ms_before),
                duration(c.impact_ms_after),
                c.count_before,
                c.count_after
            ));
        }
    }
    if f.resolved.is_empty() && f.new.is_empty() && f.remaining.is_empty() {
        line("  none in either run".to_string());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_read_like_a_person_writes_them() {
        assert_eq!(duration(950), "950 ms");
        assert_eq!(duration(20_367), "20.4 s");
        assert_eq!(duration(185_000), "3 min 05 s");
        assert_eq!(duration(36_000_000 * 8), "80 h 00 min");
    }
}
