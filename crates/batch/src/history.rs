//! What the index page and the regressions need of the earlier nights in `nights/`.

use std::collections::HashMap;
use std::path::Path;

use anyhow::Context;
use sparkdiag_contract::night::{NightApp, NightTotals};

use crate::nightfile::read_night;

/// Each of tonight's keys with its latest earlier run: the night it ran, and the run with only
/// what [`crate::compare::compare_app`] reads of it.
pub(crate) type LatestRuns = HashMap<String, (String, NightApp)>;

/// Each of tonight's keys with its earlier nights' runs (the first run of each night), latest
/// first, at most [`crate::compare::HISTORY_NIGHTS`] of them: what its band is made of.
pub(crate) type KeyHistory = HashMap<String, Vec<(String, crate::compare::Point)>>;

/// What the index and the comparison need of the nights in `dir`, each streamed one
/// application at a time: every night's totals (with `tonight`'s own), the latest earlier
/// run of each key `is_tonights` may hold, and each such key's recent nights. Memory follows
/// tonight's applications that ran before and the nights kept per key, not the size of a
/// night or how many nights there are.
pub(crate) fn read_history(
    dir: &Path,
    tonight: NightTotals,
    is_tonights: impl Fn(&str) -> bool,
) -> anyhow::Result<(Vec<NightTotals>, LatestRuns, KeyHistory)> {
    let own = format!("{}.json", tonight.date);
    let tonight_date = tonight.date.clone();
    let mut totals = vec![tonight];
    let mut latest: LatestRuns = HashMap::new();
    let mut history: KeyHistory = HashMap::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "json")
            || path.file_name().is_some_and(|n| *n == *own)
        {
            continue;
        }
        let (mut runtime_ms, mut findings) = (0, 0);
        // Within a night the first run of a key is the one compared with, as before.
        let mut firsts: LatestRuns = HashMap::new();
        let night = read_night(&path, |app| {
            runtime_ms += app.duration_ms;
            findings += app.findings.len();
            if is_tonights(&app.key) && !firsts.contains_key(&app.key) {
                firsts.insert(app.key.clone(), (String::new(), compared_part(app)));
            }
            Ok(())
        })?;
        totals.push(NightTotals {
            date: night.date.clone(),
            runtime_ms,
            findings,
        });
        if night.date >= tonight_date {
            continue;
        }
        for (key, (_, app)) in firsts {
            let runs = history.entry(key.clone()).or_default();
            runs.push((night.date.clone(), crate::compare::Point::of(&app)));
            // Latest first; only the nights a band is made of are kept.
            runs.sort_by(|a, b| b.0.cmp(&a.0));
            runs.truncate(crate::compare::HISTORY_NIGHTS);
            let newer = latest.get(&key).is_none_or(|(date, _)| *date < night.date);
            if newer {
                latest.insert(key, (night.date.clone(), app));
            }
        }
    }
    Ok((totals, latest, history))
}

/// `app` with only what a comparison reads: its key, runtimes, findings, status and jobs, and
/// what a regression's likely cause is read from (its input, version, executors and the log it
/// came from, which the `sparkdiag diff` it suggests names).
fn compared_part(app: NightApp) -> NightApp {
    NightApp {
        app_id: String::new(),
        name: String::new(),
        worst_severity: None,
        top_finding: None,
        report: String::new(),
        ..app
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::write_atomic;
    use sparkdiag_contract::night::Night;

    /// A run as an earlier night's file holds it (the fields later versions added left out).
    fn run_of(key: &str, duration_ms: i64) -> NightApp {
        serde_json::from_value(serde_json::json!({
            "key": key, "app_id": key, "name": key, "status": "succeeded",
            "duration_ms": duration_ms, "impact_ms": 0, "findings": ["SK001"], "report": "",
        }))
        .unwrap()
    }

    fn night_of(date: &str, apps: Vec<NightApp>) -> Night {
        Night {
            apps,
            ..Night::new(date)
        }
    }

    #[test]
    fn history_keeps_each_apps_latest_earlier_run_and_every_nights_totals() {
        let dir = tempfile::tempdir().unwrap();
        for night in [
            night_of("2026-11-27", vec![run_of("etl", 1), run_of("report", 2)]),
            night_of(
                "2026-11-28",
                vec![run_of("etl", 3), run_of("etl", 4), run_of("gone", 5)],
            ),
            // A later night (a re-run of an older date) is drawn but never compared with.
            night_of("2026-11-30", vec![run_of("etl", 6)]),
            // Tonight's own file is not read: its totals are given.
            night_of("2026-11-29", vec![run_of("stale", 7)]),
        ] {
            let path = dir.path().join(format!("{}.json", night.date));
            write_atomic(&path, &serde_json::to_string(&night).unwrap()).unwrap();
        }
        let tonight = NightTotals {
            date: "2026-11-29".into(),
            runtime_ms: 18,
            findings: 2,
        };
        let (mut totals, latest, history) =
            read_history(dir.path(), tonight, |key| ["etl", "report"].contains(&key)).unwrap();
        let etl: Vec<(&str, i64)> = history["etl"]
            .iter()
            .map(|(date, p)| (date.as_str(), p.duration_ms))
            .collect();
        assert_eq!(
            etl,
            [("2026-11-28", 3), ("2026-11-27", 1)],
            "latest first, earlier only"
        );
        totals.sort_by(|a, b| a.date.cmp(&b.date));
        let runtimes: Vec<(&str, i64, usize)> = totals
            .iter()
            .map(|t| (t.date.as_str(), t.runtime_ms, t.findings))
            .collect();
        assert_eq!(
            runtimes,
            [
                ("2026-11-27", 3, 2),
                ("2026-11-28", 12, 3),
                ("2026-11-29", 18, 2),
                ("2026-11-30", 6, 1)
            ]
        );
        let mut kept: Vec<(&str, &str, i64)> = latest
            .iter()
            .map(|(key, (date, a))| (date.as_str(), key.as_str(), a.duration_ms))
            .collect();
        kept.sort();
        assert_eq!(
            kept,
            [("2026-11-27", "report", 2), ("2026-11-28", "etl", 3)]
        );
        // Only what a comparison reads is kept of a run.
        assert!(
            latest
                .values()
                .all(|(_, a)| a.name.is_empty() && a.report.is_empty())
        );
    }
}
