//! The night's analysis: the logs found under every directory, sliced and filtered, analysed on
//! a bounded pool in the order they were found, each application's rows written to the tables
//! and its line to the night file as soon as it is its turn.

use sparkdiag_contract::night::NightFinding;
use sparkdiag_eventlog::ReadErrorKind;
use sparkdiag_rules::{Config, Severity};

use crate::app::{analyse, night_error, night_input};
use crate::files::{fresh_apps_dir, put_apps_dir_in_place};
use crate::nightfile::{NightFile, NightFileWriter, Style};
use crate::ordered::{ordered_bounded, window};
use crate::writing::{last_written, still_being_written};
use crate::{NightDate, Options, Progress};

/// Analyses every log `options` selects into its reports, the tables and the night file (in
/// `style`), and returns the night file (without the index page: a slice has none, a whole
/// night gets it from `publish`).
pub(crate) fn analyse_night(
    options: &Options,
    config: &Config,
    progress: &mut dyn Progress,
    style: Style,
) -> anyhow::Result<NightFile> {
    let date = options.date.as_str();
    // The logs found stay until the last is analysed: each directory's list kept compactly,
    // and of each log chosen only its position (4 bytes).
    let mut lists: Vec<Found> = Vec::new();
    let mut chosen: Vec<u32> = Vec::new();
    let mut unreadable = Vec::new();
    let mut in_progress = Vec::new();
    // Every log found has a position, before any is filtered out: it picks the log's slice, so
    // slices that list the same directories never share or miss a log, and it names the
    // log's report the same in a slice as in one batch over everything.
    let mut position: usize = 0;
    // One moment for the whole search, so two logs written at the same time are judged alike.
    let now = std::time::SystemTime::now();
    for dir in options.dirs.iter().map(String::as_str) {
        // A path that is not a log is listed like any unreadable log; it does not stop the night.
        let logs = match sparkdiag_eventlog::discover_list(dir) {
            Ok(logs) => logs,
            // A store that cannot be read (no credentials, access refused, no such bucket, no
            // connection) is a mistake in the command, as a missing folder is.
            Err(e)
                if sparkdiag_eventlog::store::scheme(dir).is_some()
                    && !matches!(e.kind, ReadErrorKind::NoLog | ReadErrorKind::NotALog) =>
            {
                anyhow::bail!("{e}; nothing was written");
            }
            Err(e) => {
                // Said once, by the first slice.
                if options.slice.is_none_or(|s| s.index == 0) {
                    unreadable.push(night_error(options, dir, &e.to_string()));
                }
                continue;
            }
        };
        let first = position;
        for index in 0..logs.len() {
            position += 1;
            if options.slice.is_some_and(|s| !s.holds(position - 1)) {
                continue;
            }
            let input = logs.get(index);
            if options.since.is_some_and(|since| older_than(&input, since)) {
                continue;
            }
            if let Some(day) = &options.modified_on
                && last_written(&input).map(NightDate::of).as_ref() != Some(day)
            {
                continue;
            }
            // A log not written to for `stale_after` is not being written, whatever its name:
            // a driver killed or lost, analysed as far as it goes and counted, not skipped.
            if !options.include_in_progress && still_being_written(&input, options.stale_after, now)
            {
                in_progress.push(night_input(options, input.display));
            } else {
                chosen
                    .push(u32::try_from(position - 1).map_err(|_| {
                        anyhow::anyhow!("more than {} logs in one night", u32::MAX)
                    })?);
            }
        }
        lists.push(Found { first, logs });
    }
    // The list stays for the whole night; its spare capacity need not.
    chosen.shrink_to_fit();
    let inputs = chosen.iter().map(|&position| {
        let position = position as usize;
        let found = &lists[lists.partition_point(|f| f.first <= position) - 1];
        (position, found.logs.get(position - found.first))
    });
    let out = &options.output;
    let (apps_rel, apps_dir) = fresh_apps_dir(out, date)?;

    let jobs = match options.jobs {
        Some(n) if n > 0 => n,
        _ => std::thread::available_parallelism().map_or(1, |n| n.get()),
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(jobs).build()?;
    let mut tables = sparkdiag_tables::NightWriter::create(out, date)?;
    let mut night = NightFileWriter::create(out, date, style)?;
    night.night.errors = unreadable;
    night.night.in_progress = in_progress;
    let mut worst: Vec<NightFinding> = Vec::new();
    night.expect(inputs.len());
    progress.started(inputs.len());
    // Each application's rows go to the tables and its line to the night file as soon as it is
    // its turn, and its report is dropped: only where its line is, what it ranks by, and the
    // night's 20 worst findings stay for the index.
    let mut write_error: Option<anyhow::Error> = None;
    ordered_bounded(
        &pool,
        inputs,
        window(jobs),
        |_, (position, input)| {
            let outcome = analyse(position, &input, config, options, &apps_dir, &apps_rel);
            (input.display, outcome)
        },
        |(input, outcome)| {
            match outcome {
                Ok((report, app)) => {
                    if write_error.is_none() {
                        write_error = tables
                            .add(&report)
                            .map_err(anyhow::Error::from)
                            .and_then(|()| night.add(&app))
                            .err();
                    }
                    worst.extend(
                        report
                            .findings
                            .iter()
                            .filter(|f| f.finding.severity <= Severity::Medium)
                            .map(|f| NightFinding {
                                app: app.name.clone(),
                                rule: f.finding.rule.to_string(),
                                severity: f.finding.severity.name().to_string(),
                                title: f.finding.title.clone(),
                                impact_ms: f.finding.impact_ms,
                                report: app.report.clone(),
                                saves: f.impact_label(sparkdiag_contract::units::duration),
                            }),
                    );
                    keep_worst(&mut worst);
                }
                Err(e) => night.night.errors.push(e),
            }
            progress.analysed(&input);
        },
    );
    if let Some(e) = write_error {
        return Err(e);
    }
    tables.finish()?;
    put_apps_dir_in_place(out, date)?;
    night.night.worst_findings = worst;
    night.finish()
}

/// One directory's logs, and the position of its first among every log of the night.
struct Found {
    first: usize,
    logs: sparkdiag_eventlog::LogList,
}

/// How many of the night's worst findings the index shows.
const WORST_FINDINGS: usize = 20;

/// Keeps the `WORST_FINDINGS` largest by impact; among equals, the earlier application first,
/// as the stable sort over the whole night did.
pub(crate) fn keep_worst(worst: &mut Vec<NightFinding>) {
    worst.sort_by_key(|f| std::cmp::Reverse(f.impact_ms));
    worst.truncate(WORST_FINDINGS);
}

/// Whether every file of a log was last modified (a file's time, an object's Last-Modified) more
/// than `since` ago.
fn older_than(input: &sparkdiag_eventlog::LogInput, since: std::time::Duration) -> bool {
    let Some(cutoff) = std::time::SystemTime::now().checked_sub(since) else {
        return false;
    };
    last_written(input).is_none_or(|written| written < cutoff)
}

/// A directory that is not there is a mistake in the command (a typo, an unmounted volume), not
/// a bad log: refused before the output folder is touched (even its lock), so that nothing is
/// written and no night looks complete.
pub(crate) fn refuse_missing_dirs(options: &Options) -> anyhow::Result<()> {
    let missing: Vec<&String> = options
        .dirs
        .iter()
        .filter(|d| sparkdiag_eventlog::store::scheme(d).is_none() && std::fs::metadata(d).is_err())
        .collect();
    if !missing.is_empty() {
        anyhow::bail!(
            "no such file or directory: {}; nothing was written",
            missing
                .iter()
                .map(|d| d.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worst_findings_keep_the_earlier_app_among_equals() {
        let finding = |app: &str, impact_ms| NightFinding {
            app: app.into(),
            rule: "R".into(),
            severity: "high".into(),
            title: String::new(),
            impact_ms,
            report: String::new(),
            saves: String::new(),
        };
        let mut worst: Vec<NightFinding> = (0..WORST_FINDINGS).map(|_| finding("a", 5)).collect();
        worst.extend([finding("b", 5), finding("c", 9)]);
        keep_worst(&mut worst);
        assert_eq!(worst.len(), WORST_FINDINGS);
        assert_eq!(worst[0].app, "c");
        assert!(worst[1..].iter().all(|f| f.app == "a"));
    }
}
