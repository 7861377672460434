//! What the index page and the regressions need of the earlier nights in `nights/`.

use std::path::Path;

use anyhow::Context;
use sparkdiag_report::fleet::{Night, NightApp, NightTotals};

/// What the index and the comparison need of the nights in `dir`, read one night at a time:
/// every night's totals (with `tonight`'s own), and for each of tonight's applications only its
/// latest earlier run, as nights holding just those runs (what [`sparkdiag_report::fleet::compare`] looks in).
/// Memory follows tonight's applications and the largest night, not how many nights there are.
pub(crate) fn read_history(
    dir: &Path,
    tonight: &Night,
) -> anyhow::Result<(Vec<NightTotals>, Vec<Night>)> {
    use std::collections::{BTreeMap, HashMap, HashSet};
    let keys: HashSet<&str> = tonight.apps.iter().map(|a| a.key.as_str()).collect();
    let own = format!("{}.json", tonight.date);
    let mut totals = vec![NightTotals::of(tonight)];
    let mut latest: HashMap<String, (String, NightApp)> = HashMap::new();
    for entry in std::fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_none_or(|e| e != "json")
            || path.file_name().is_some_and(|n| *n == *own)
        {
            continue;
        }
        let file = std::fs::File::open(&path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let night: Night =
            serde_json::from_reader(std::io::BufReader::new(file)).with_context(|| {
                format!("{}: not a night written by sparkdiag batch", path.display())
            })?;
        totals.push(NightTotals::of(&night));
        if night.date >= tonight.date {
            continue;
        }
        for app in night.apps {
            // Within a night the first run of a key is the one compared with, as before.
            let newer = latest
                .get(&app.key)
                .is_none_or(|(date, _)| *date < night.date);
            if keys.contains(app.key.as_str()) && newer {
                latest.insert(app.key.clone(), (night.date.clone(), app));
            }
        }
    }
    let mut by_date: BTreeMap<String, Vec<NightApp>> = BTreeMap::new();
    for (date, app) in latest.into_values() {
        by_date.entry(date).or_default().push(app);
    }
    let earlier = by_date
        .into_iter()
        .map(|(date, apps)| Night {
            apps,
            ..Night::new(&date)
        })
        .collect();
    Ok((totals, earlier))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::files::write_atomic;

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
        let tonight = night_of("2026-11-29", vec![run_of("etl", 9), run_of("report", 9)]);
        for night in [
            night_of("2026-11-27", vec![run_of("etl", 1), run_of("report", 2)]),
            night_of(
                "2026-11-28",
                vec![run_of("etl", 3), run_of("etl", 4), run_of("gone", 5)],
            ),
            // A later night (a re-run of an older date) is drawn but never compared with.
            night_of("2026-11-30", vec![run_of("etl", 6)]),
            // Tonight's own file is read from memory, not from this stale copy.
            night_of("2026-11-29", vec![run_of("stale", 7)]),
        ] {
            let path = dir.path().join(format!("{}.json", night.date));
            write_atomic(&path, &serde_json::to_string(&night).unwrap()).unwrap();
        }
        let (mut totals, earlier) = read_history(dir.path(), &tonight).unwrap();
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
        let kept: Vec<(&str, &str, i64)> = earlier
            .iter()
            .flat_map(|n| {
                n.apps
                    .iter()
                    .map(|a| (n.date.as_str(), a.key.as_str(), a.duration_ms))
            })
            .collect();
        assert_eq!(
            kept,
            [("2026-11-27", "report", 2), ("2026-11-28", "etl", 3)]
        );
    }
}
