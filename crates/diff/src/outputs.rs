//! Correctness evidence: what each run wrote (write commands' SQL metrics, per destination) and
//! read (scans' output rows, per source), and whether the two runs agree.

use std::collections::{BTreeMap, BTreeSet};

use sparkdiag_contract::units::thousands;
use sparkdiag_model::{AppStatus, Application};

pub use sparkdiag_facts::writes::{Read, STREAM_SINK, Write, collect};

use sparkdiag_contract::diff::{Correctness, InputChange, OutputChange, OutputSide};

fn sum_opt(values: impl Iterator<Item = Option<i64>>) -> Option<i64> {
    let mut total = None;
    for v in values {
        total = Some(total.unwrap_or(0) + v?);
    }
    total
}

fn by_destination(writes: &[Write]) -> BTreeMap<String, OutputSide> {
    let mut out: BTreeMap<String, (Vec<&Write>, BTreeSet<String>)> = BTreeMap::new();
    for w in writes {
        let e = out.entry(w.destination.clone()).or_default();
        e.0.push(w);
        e.1.extend(w.static_partitions.iter().map(|p| p.to_string()));
    }
    out.into_iter()
        .map(|(dest, (ws, parts))| {
            let mut ids: Vec<i64> = ws.iter().map(|w| w.sql_execution_id).collect();
            ids.dedup();
            let side = OutputSide {
                writes: ws.len(),
                rows: sum_opt(ws.iter().map(|w| w.rows)),
                rows_recorded: ws.iter().filter_map(|w| w.rows).sum(),
                writes_recorded: ws.iter().filter(|w| w.rows.is_some()).count(),
                rows_projected: None,
                files: sum_opt(ws.iter().map(|w| w.files)),
                bytes: sum_opt(ws.iter().map(|w| w.bytes)),
                partitions: parts.len() as i64
                    + ws.iter().filter_map(|w| w.dynamic_partitions).sum::<i64>(),
                sql_execution_ids: ids,
            };
            (dest, side)
        })
        .collect()
}

/// Compares what the two runs wrote and read.
pub fn compare(
    before: (&Application, &[Write], &[Read]),
    after: (&Application, &[Write], &[Read]),
) -> Correctness {
    let (app_b, writes_b, reads_b) = before;
    let (app_a, writes_a, reads_a) = after;
    let mut notes = Vec::new();
    let incomplete_b = app_b.status() == AppStatus::Incomplete;
    let incomplete_a = app_a.status() == AppStatus::Incomplete;
    if incomplete_b {
        notes.push(
            "BEFORE did not finish (no application end: killed, still running or cut): what it \
             wrote is partial, so rows written cannot prove or disprove a change."
                .to_string(),
        );
    }
    if incomplete_a {
        notes.push(
            "AFTER did not finish: what it wrote is partial, so rows written cannot prove or \
             disprove a change."
                .to_string(),
        );
    }
    let rdd_b = rdd_saves(app_b);
    let rdd_a = rdd_saves(app_a);
    for (saves, side) in [(&rdd_b, "BEFORE"), (&rdd_a, "AFTER")] {
        if let Some((jobs, records)) = saves {
            notes.push(format!(
                "{side} wrote through RDD saveAs… ({}): the log names no destination and has no \
                 SQL row metrics for these; {}",
                jobs.join(", "),
                if *records > 0 {
                    format!("their tasks' output records ({records}) are compared instead")
                } else {
                    "their tasks recorded no output records either: compare those outputs yourself"
                        .to_string()
                }
            ));
        }
    }

    let mut sides_b = by_destination(writes_b);
    let mut sides_a = by_destination(writes_a);
    let mut outputs = Vec::new();
    let keys: BTreeSet<String> = sides_b.keys().chain(sides_a.keys()).cloned().collect();
    let common: Vec<String> = keys
        .iter()
        .filter(|k| sides_b.contains_key(*k) && sides_a.contains_key(*k))
        .cloned()
        .collect();
    for dest in common {
        let b = sides_b.remove(&dest);
        let a = sides_a.remove(&dest);
        outputs.push(output_change(dest, None, b, a, incomplete_b, incomplete_a));
    }
    // Runs made in different scratch directories write the "same" table under different
    // paths: when each run has exactly one output left, they are the same output.
    if sides_b.len() == 1 && sides_a.len() == 1 {
        let (db, b) = sides_b.pop_first().expect("one");
        let (da, a) = sides_a.pop_first().expect("one");
        let mut change = output_change(db, Some(da), Some(b), Some(a), incomplete_b, incomplete_a);
        change.note = format!(
            "paired as each run's only other output (the paths differ); {}",
            change.note
        );
        outputs.push(change);
    }
    for (dest, b) in sides_b {
        outputs.push(output_change(
            dest,
            None,
            Some(b),
            None,
            incomplete_b,
            incomplete_a,
        ));
    }
    for (dest, a) in sides_a {
        outputs.push(output_change(
            dest,
            None,
            None,
            Some(a),
            incomplete_b,
            incomplete_a,
        ));
    }
    if rdd_b.is_some() || rdd_a.is_some() {
        let side = |saves: &Option<(Vec<String>, i64)>| {
            saves.as_ref().map(|(jobs, records)| OutputSide {
                writes: jobs.len(),
                rows: (*records > 0).then_some(*records),
                ..OutputSide::default()
            })
        };
        let mut change = output_change(
            "RDD saveAs… (no path in the log)".to_string(),
            None,
            side(&rdd_b),
            side(&rdd_a),
            incomplete_b,
            incomplete_a,
        );
        change.note = format!("rows are the tasks' output records; {}", change.note);
        outputs.push(change);
    }
    // What a stream writes follows how long it ran and what arrived, not only its code: two
    // runs of one query are not expected to write the same rows.
    for o in outputs
        .iter_mut()
        .filter(|o| o.destination.starts_with(STREAM_SINK))
    {
        o.status = "unknown";
        o.note = "a stream writes what arrived while it ran, so two runs' rows differ by design: \
                  compare the query's input and processed rates (the streaming queries)"
            .to_string();
    }
    let status = if outputs.is_empty() {
        notes.push(
            "Neither run wrote through a SQL write command (INSERT, saveAsTable, DataFrame \
             writes), so the logs hold no row counts to compare."
                .to_string(),
        );
        "no-output"
    } else if outputs
        .iter()
        .any(|o| matches!(o.status, "changed" | "only-before" | "only-after"))
    {
        "changed"
    } else if outputs.iter().any(|o| o.status == "unknown") {
        "unknown"
    } else {
        "equal"
    };
    Correctness {
        status,
        outputs,
        inputs: inputs(reads_b, reads_a),
        notes,
    }
}

/// RDD `saveAs…` jobs outside any SQL execution, and the output records their tasks counted.
fn rdd_saves(app: &Application) -> Option<(Vec<String>, i64)> {
    let jobs: Vec<&sparkdiag_model::Job> = app
        .jobs
        .iter()
        .filter(|j| j.sql_execution_id.is_none() && j.name.starts_with("saveAs"))
        .collect();
    if jobs.is_empty() {
        return None;
    }
    let ids: BTreeSet<i64> = jobs.iter().map(|j| j.job_id).collect();
    let records = app
        .stages
        .iter()
        .filter(|s| s.job_ids.iter().any(|id| ids.contains(id)))
        .map(|s| s.totals.output_records)
        .sum();
    Some((
        jobs.iter()
            .map(|j| format!("job {} ({})", j.job_id, j.name))
            .collect(),
        records,
    ))
}

fn output_change(
    destination: String,
    after_destination: Option<String>,
    b: Option<OutputSide>,
    a: Option<OutputSide>,
    incomplete_b: bool,
    incomplete_a: bool,
) -> OutputChange {
    let partial = incomplete_b || incomplete_a;
    let (status, note) = match (&b, &a) {
        (Some(b), Some(a)) => match (b.rows, a.rows) {
            (Some(rb), Some(ra)) if rb == ra => {
                ("equal", format!("{} rows written by both", thousands(rb)))
            }
            (Some(rb), Some(ra)) if partial => {
                let per_partition = (b.partitions > 0 && a.partitions > 0).then(|| {
                    (
                        rb as f64 / b.partitions as f64,
                        ra as f64 / a.partitions as f64,
                    )
                });
                let mut note = format!(
                    "{} rows before, {} after; a run did not finish, so the difference \
                     proves nothing",
                    thousands(rb),
                    thousands(ra)
                );
                if let Some((pb, pa)) = per_partition {
                    note.push_str(&format!(
                        "; per partition written: {pb:.1} before ({} partitions), {pa:.1} after \
                         ({} partitions){}",
                        b.partitions,
                        a.partitions,
                        if (pb - pa).abs() < 1e-9 {
                            ", the same"
                        } else {
                            ", DIFFERENT"
                        }
                    ));
                }
                ("unknown", note)
            }
            (Some(rb), Some(ra)) => (
                "changed",
                format!(
                    "POSSIBLE CORRECTNESS CHANGE: {} rows written before, {} after ({:+})",
                    thousands(rb),
                    thousands(ra),
                    ra - rb
                ),
            ),
            _ => (
                "unknown",
                "a write command recorded no row count, so rows cannot be compared".to_string(),
            ),
        },
        (Some(b), None) if incomplete_a => (
            "unknown",
            format!(
                "written by BEFORE ({} rows) only; AFTER did not finish",
                fmt_opt(b.rows)
            ),
        ),
        (Some(b), None) => (
            "only-before",
            format!(
                "POSSIBLE CORRECTNESS CHANGE: BEFORE wrote {} rows here, AFTER wrote nothing",
                fmt_opt(b.rows)
            ),
        ),
        (None, Some(a)) if incomplete_b => (
            "unknown",
            format!(
                "written by AFTER ({} rows) only; BEFORE did not finish",
                fmt_opt(a.rows)
            ),
        ),
        (None, Some(a)) => (
            "only-after",
            format!(
                "POSSIBLE CORRECTNESS CHANGE: AFTER wrote {} rows here, BEFORE wrote nothing",
                fmt_opt(a.rows)
            ),
        ),
        (None, None) => ("unknown", String::new()),
    };
    OutputChange {
        destination,
        after_destination,
        before: b,
        after: a,
        status,
        note,
    }
}

fn fmt_opt(v: Option<i64>) -> String {
    v.map_or("?".to_string(), |v| v.to_string())
}

fn inputs(before: &[Read], after: &[Read]) -> Vec<InputChange> {
    let mut out: BTreeMap<&str, InputChange> = BTreeMap::new();
    for (reads, is_before) in [(before, true), (after, false)] {
        for r in reads {
            let e = out.entry(&r.source).or_insert_with(|| InputChange {
                source: r.source.clone(),
                rows_before: None,
                rows_after: None,
                reads_before: 0,
                reads_after: 0,
            });
            let (rows, reads) = if is_before {
                (&mut e.rows_before, &mut e.reads_before)
            } else {
                (&mut e.rows_after, &mut e.reads_after)
            };
            *reads += 1;
            *rows = Some(rows.unwrap_or(0) + r.rows.unwrap_or(0));
        }
    }
    out.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_row_count_makes_the_sum_unknown() {
        assert_eq!(sum_opt([Some(1), Some(2)].into_iter()), Some(3));
        assert_eq!(sum_opt([Some(1), None].into_iter()), None);
    }
}
