//! The terminal view of a [`Diff`], for a manager first: the verdict in words, the causes
//! ranked by the share of the change each explains, then the evidence (outputs, the numbers
//! side by side with their change in percent, matched work, findings). On a terminal it fits
//! the width and colours the verdict ([`render_with`]); into a file or a pipe it is plain.

use sparkdiag_contract::diff::{
    Cause, Diff, Fact, MetricChange, OutputSide, RunOut, StageGroupOut, WorkMatch, WorkSide,
};

use crate::Terminal as Options;
use crate::format::{duration, human_bytes, share, share_change, thousands};

/// A metric's value in its unit.
pub fn value(unit: &str, v: f64) -> String {
    match unit {
        "ms" => duration(v.round() as i64),
        "bytes" => human_bytes(v.round() as i64),
        "core-hours" => format!("{v:.3}"),
        "money" => format!("{v:.2}"),
        _ => thousands(v.round() as i64),
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
        Some(r) => crate::format::share_change(r - 1.0),
    }
}

/// A change with its sign: `+1.2 s`, `-24`, `0`.
pub fn signed(unit: &str, v: f64) -> String {
    if v == 0.0 {
        return "0".to_string();
    }
    let sign = if v > 0.0 { "+" } else { "-" };
    format!("{sign}{}", value(unit, v.abs()))
}

/// `before → after (+12%)` in the fact's unit.
pub fn fact_line(f: &Fact) -> String {
    format!(
        "{}: {} → {} ({})",
        f.what,
        value(f.unit, f.before),
        value(f.unit, f.after),
        change_percent(f.before, f.after)
    )
}

/// The change from `before` to `after` in percent, `+300%`, `-3%`; `new` from nothing.
pub fn change_percent(before: f64, after: f64) -> String {
    if before == 0.0 {
        if after == 0.0 { "same" } else { "new" }.to_string()
    } else {
        share_change(after / before - 1.0)
    }
}

/// The rows of an output side: all of them, or, for a run that did not finish, what its
/// finished writes recorded and their projection to the whole run.
fn rows_of(s: &OutputSide) -> String {
    match s.rows {
        Some(r) => format!("{} rows", thousands(r)),
        None if s.writes_recorded > 0 => {
            let projected = s
                .rows_projected
                .map(|p| format!(", {} projected for the whole run", thousands(p)))
                .unwrap_or_default();
            format!(
                "{} rows in its {} finished write(s){projected}",
                thousands(s.rows_recorded),
                s.writes_recorded
            )
        }
        None => "? rows".to_string(),
    }
}

pub fn output_side(s: &Option<OutputSide>) -> String {
    match s {
        None => "nothing".to_string(),
        Some(s) => format!(
            "{}, {} files, {}, {} partition(s), {} write(s)",
            rows_of(s),
            s.files.map_or("?".to_string(), thousands),
            s.bytes.map_or("? B".to_string(), human_bytes),
            s.partitions,
            s.writes
        ),
    }
}

/// The rows one side read from an input, with how many reads: "1,200 (2 reads)",
/// "300,000 (1 read)", or "-".
pub fn rows_read(rows: Option<i64>, reads: usize) -> String {
    let reads = match reads {
        1 => "1 read".to_string(),
        n => format!("{n} reads"),
    };
    rows.map_or("-".to_string(), |v| format!("{} ({reads})", thousands(v)))
}

/// A streaming query's rows for every view: what, BEFORE, AFTER ("-" where a run has no value
/// or did not run the query).
pub fn query_rows(q: &sparkdiag_contract::diff::QueryDiff) -> Vec<(&'static str, String, String)> {
    use sparkdiag_contract::diff::QuerySide;
    type Cell = fn(&QuerySide) -> Option<String>;
    let rows: [(&'static str, Cell); 11] = [
        ("status", |s| Some(s.status.to_string())),
        ("micro-batches", |s| Some(thousands(s.batches as i64))),
        ("trigger interval", |s| s.trigger_interval_ms.map(duration)),
        ("median batch", |s| s.median_batch_ms.map(duration)),
        ("p95 batch", |s| s.p95_batch_ms.map(duration)),
        ("batches longer than the trigger", |s| {
            s.trigger_interval_ms
                .map(|_| thousands(s.batches_over_trigger as i64))
        }),
        ("tasks per batch (median)", |s| {
            s.median_tasks_per_batch.map(thousands)
        }),
        ("input rows", |s| Some(thousands(s.input_rows))),
        ("input rows/s (median)", |s| {
            s.median_input_rows_per_second.map(|r| format!("{r:.1}"))
        }),
        ("processed rows/s (median)", |s| {
            s.median_processed_rows_per_second
                .map(|r| format!("{r:.1}"))
        }),
        ("state rows (max)", |s| Some(thousands(s.max_state_rows))),
    ];
    rows.iter()
        .map(|(what, cell)| {
            let side = |s: &Option<QuerySide>| {
                s.as_ref().and_then(cell).unwrap_or_else(|| "-".to_string())
            };
            (*what, side(&q.before), side(&q.after))
        })
        .collect()
}

pub fn work_line(w: &WorkMatch) -> Vec<String> {
    let by = if w.matched_by == "none" {
        "no counterpart"
    } else {
        w.matched_by
    };
    let mut out = vec![format!("{} [{by}]", w.label)];
    let mut facts = w.summary.clone();
    let t = |s: &Option<WorkSide>| {
        s.as_ref().map_or("-".to_string(), |s| {
            format!(
                "{} summed, {} wall, {} tasks",
                duration(s.time_ms),
                duration(s.wall_ms),
                thousands(s.tasks as i64)
            )
        })
    };
    facts.push_str(&format!("; {} → {}", t(&w.before), t(&w.after)));
    out.push(format!("    {facts}"));
    for c in &w.plan_changes {
        out.push(format!("    plan: {c}"));
    }
    let g = |s: &Option<StageGroupOut>| {
        s.as_ref().map_or("none".to_string(), |s| {
            format!(
                "{} ({} tasks, {})",
                s.count,
                thousands(s.tasks as i64),
                duration(s.time_ms)
            )
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

fn run_line(label: &str, r: &RunOut) -> String {
    format!(
        "{label}: {} ({}) {}, {}{}, {} core(s)",
        r.name.as_deref().unwrap_or("?"),
        r.app_id.as_deref().unwrap_or("?"),
        crate::format::enum_name(r.status),
        r.duration_ms.map_or("?".to_string(), duration),
        if r.complete { "" } else { " (log incomplete)" },
        r.cores
    )
}

/// A cause's first line: its rank, its share of the change and how it was measured.
pub fn cause_line(rank: usize, c: &Cause) -> String {
    let share = c
        .share
        .map(|s| format!("{} of the change", share(s, 0)))
        .unwrap_or_else(|| "not a share".to_string());
    if matches!(c.kind, "nothing_material" | "unexplained") {
        return format!("{rank}. {}", c.title);
    }
    let signed = if c.explained_ms < 0 { "-" } else { "+" };
    format!(
        "{rank}. {} ({signed}{}, {share}; {})",
        c.title,
        duration(c.explained_ms.abs()),
        c.measured_by
    )
}

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const BOLD: &str = "\x1b[1m";
const RESET: &str = "\x1b[0m";

/// Lines longer than `width` broken at spaces, continued under their own indent plus four.
fn wrap(line: &str, width: usize) -> Vec<String> {
    if line.chars().count() <= width || width < 20 {
        return vec![line.to_string()];
    }
    let indent = line.len() - line.trim_start().len();
    let cont = " ".repeat(indent + 4);
    let mut out = Vec::new();
    let mut current = line[..indent].to_string();
    let mut fresh = true;
    for word in line[indent..].split(' ') {
        let len = current.chars().count();
        if !fresh && len + 1 + word.chars().count() > width {
            out.push(std::mem::replace(&mut current, cont.clone()));
            fresh = true;
        }
        if !fresh {
            current.push(' ');
        }
        current.push_str(word);
        fresh = false;
    }
    out.push(current);
    out
}

/// The plain view, for a file or a pipe.
pub fn render(d: &Diff) -> String {
    render_with(d, Options::default())
}

/// The view for where it goes: on a terminal (`opts.terminal`) it fits `opts.width` and, with
/// `opts.color`, colours the verdict, an output change and the causes' signs.
pub fn render_with(d: &Diff, opts: Options) -> String {
    let width = if opts.terminal {
        opts.width.map(usize::from)
    } else {
        None
    };
    let color = opts.color;
    let mut out = d.gates.as_ref().map(crate::gates::text).unwrap_or_default();
    let mut emit = |s: String, paint: Option<&str>| {
        let lines = match width {
            Some(w) => wrap(&s, w),
            None => vec![s],
        };
        for l in lines {
            match paint {
                Some(p) if color => {
                    out.push_str(p);
                    out.push_str(&l);
                    out.push_str(RESET);
                }
                _ => out.push_str(&l),
            }
            out.push('\n');
        }
    };
    let verdict_paint = match (d.verdict.runtime, d.verdict.output) {
        (_, "changed") | ("slower", _) => Some(RED),
        ("faster", _) => Some(GREEN),
        _ => Some(BOLD),
    };
    emit(format!("Verdict: {}", d.verdict.sentence), verdict_paint);
    emit(String::new(), None);
    emit(
        "Why, ranked by the share of the runtime change each explains".to_string(),
        Some(BOLD),
    );
    for (i, c) in d.causes.iter().enumerate() {
        let paint = match c.explained_ms.signum() {
            1 => Some(RED),
            -1 => Some(GREEN),
            _ => None,
        };
        emit(format!("  {}", cause_line(i + 1, c)), paint);
        for f in &c.facts {
            emit(format!("       {}", fact_line(f)), None);
        }
        for e in &c.evidence {
            emit(format!("       {e}"), None);
        }
    }
    emit(String::new(), None);
    emit(run_line("BEFORE", &d.before), None);
    emit(run_line("AFTER ", &d.after), None);
    emit(String::new(), None);
    for h in &d.headline {
        if h.starts_with("OUTPUT CHANGED") {
            emit(format!("!! {h}"), Some(RED));
        } else {
            emit(format!("* {h}"), None);
        }
    }
    emit(String::new(), None);

    emit(format!("Outputs ({})", d.correctness.status), Some(BOLD));
    for o in &d.correctness.outputs {
        let dest = match &o.after_destination {
            Some(a) => format!("{} / {}", o.destination, a),
            None => o.destination.clone(),
        };
        let paint = matches!(o.status, "changed" | "only-before" | "only-after").then_some(RED);
        emit(format!("  {dest}: {}", o.status), paint);
        emit(format!("    before: {}", output_side(&o.before)), None);
        emit(format!("    after:  {}", output_side(&o.after)), None);
        if !o.note.is_empty() {
            emit(format!("    {}", o.note), None);
        }
    }
    for i in &d.correctness.inputs {
        let rows = |r: Option<i64>, n: usize| {
            r.map_or("not read".to_string(), |r| {
                format!("{} rows in {n} read(s)", thousands(r))
            })
        };
        let pct = match (i.rows_before, i.rows_after) {
            (Some(b), Some(a)) if b != a => format!(" ({})", change_percent(b as f64, a as f64)),
            _ => String::new(),
        };
        emit(
            format!(
                "  read {}: {} → {}{pct}",
                i.source,
                rows(i.rows_before, i.reads_before),
                rows(i.rows_after, i.reads_after)
            ),
            None,
        );
    }
    for n in &d.correctness.notes {
        emit(format!("  note: {n}"), None);
    }
    if let Some(p) = &d.before.projection {
        emit(String::new(), None);
        emit(
            format!("Projection of BEFORE: {}", duration(p.duration_ms)),
            Some(BOLD),
        );
        emit(format!("  {}.", p.method), None);
        emit(
            format!(
                "  Iterations in all: {} ({}).",
                p.iterations_total, p.total_from
            ),
            None,
        );
    }
    emit(String::new(), None);

    emit("What changed".to_string(), Some(BOLD));
    let label_w = d
        .metrics
        .iter()
        .map(|m| m.label.chars().count())
        .max()
        .unwrap_or(10);
    // A narrow terminal drops the signed change; the ratio says it in percent.
    let narrow = width.is_some_and(|w| w < label_w + 2 + 3 * 14 + 8 + 8);
    let row = |label: &str, b: &str, a: &str, c: &str, r: &str| {
        if narrow {
            format!("  {label:label_w$}  {b:>12}  {a:>12}  {r:>8}")
        } else {
            format!("  {label:label_w$}  {b:>14}  {a:>14}  {c:>14}  {r:>8}")
        }
    };
    emit(row("", "before", "after", "change", "ratio"), None);
    for m in &d.metrics {
        emit(
            row(
                m.label,
                &format!(
                    "{}{}",
                    value(m.unit, m.before),
                    if m.projected { "*" } else { "" }
                ),
                &value(m.unit, m.after),
                &signed(m.unit, m.change),
                &ratio_words(m),
            ),
            None,
        );
    }
    if d.metrics.iter().any(|m| m.projected) {
        emit("  * projected for the whole run; the other BEFORE numbers are what it did before it stopped".to_string(), None);
    }
    emit(String::new(), None);

    emit("Matched work".to_string(), Some(BOLD));
    for w in &d.work {
        for l in work_line(w) {
            emit(format!("  {l}"), None);
        }
    }
    emit(String::new(), None);

    if !d.queries.is_empty() {
        emit("Streaming queries".to_string(), Some(BOLD));
        for q in &d.queries {
            emit(format!("  {}", q.query), None);
            for (what, b, a) in query_rows(q) {
                emit(format!("    {what:32} {b:>12} → {a}"), None);
            }
        }
        emit(String::new(), None);
    }

    emit("Findings".to_string(), Some(BOLD));
    for (what, c) in d.findings.each() {
        emit(
            format!(
                "  {what:9} {} {}: impact {} → {} ({} → {} finding(s))",
                c.rule,
                c.title,
                duration(c.impact_ms_before),
                duration(c.impact_ms_after),
                c.count_before,
                c.count_after
            ),
            None,
        );
    }
    if d.findings.is_empty() {
        emit("  none in either run".to_string(), None);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_lines_wrap_under_their_indent() {
        let line = format!("  {}", "word ".repeat(30).trim_end());
        let lines = wrap(&line, 40);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|l| l.chars().count() <= 40), "{lines:?}");
        assert!(lines[1].starts_with("      word"), "{lines:?}");
        assert_eq!(lines.join(" ").split_whitespace().count(), 30);
    }

    #[test]
    fn percentages_say_new_and_same() {
        assert_eq!(change_percent(0.0, 5.0), "new");
        assert_eq!(change_percent(0.0, 0.0), "same");
        assert_eq!(change_percent(1_584_235.0, 1_536_019.0), "-3%");
        assert_eq!(change_percent(100.0, 400.0), "+300%");
    }
}
