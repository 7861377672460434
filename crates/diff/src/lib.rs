//! Compares two analysed Spark runs — BEFORE and AFTER a fix — to show that the fix worked and
//! that it changed nothing it should not.
//!
//! # Brief overview
//! [`compare`] takes each run's model ([`sparkdiag_model::Application`]) and report
//! ([`sparkdiag_contract::Report`], as `sparkdiag_analysis::analyze` builds them) and returns a
//! [`Diff`], the `sparkdiag/diff/v1` contract ([`SCHEMA`]):
//!
//! * **metrics**: runtime, core-hours and cost, executor time, shuffle, spill, GC, tasks,
//!   driver-only time, peak memory, side by side with the change and its ratio, ranked;
//! * **findings**: per rule, resolved, new and remaining, with their impacts;
//! * **work**: ids mean nothing across runs, so SQL executions (and jobs outside SQL) are grouped
//!   by masked description and plan fingerprint (operator names and tree shape, no ids, no
//!   literals, no AQE wrappers), then paired by plan shape, output destination, description or
//!   call site; a loop of 24 small writes and the one write that replaced it are one match,
//!   "24 SQL executions (48 jobs) → 1 SQL execution (2 jobs)", with the plan differences (join
//!   strategy, Exchanges, AQE, shuffle partitions) and their stages paired by call site and role;
//! * **correctness**: rows, files and bytes each write command wrote per destination (partition
//!   directories folded into their table), rows read per source; a different row count to the
//!   same destination is flagged first in the headline. What the logs cannot show (RDD saves, a
//!   run that did not finish) is said in `notes`;
//! * **causes** and the **verdict**: why the runtime changed (data growth, a plan or
//!   configuration change, the cluster, the Spark version, new skew, spill or failures, driver
//!   time), each measured on the runs and ranked by the share of the change it explains, or
//!   "nothing material changed" within the noise band; and the answer in one sentence;
//! * **projection**: a BEFORE that did not finish (killed by hand, still running) whose work is a
//!   series of similar iterations is projected to its whole length, and compared as that.
//!
//! The `Diff` type is `sparkdiag_contract::diff`'s; `sparkdiag_report::diff` draws it for
//! people (text, Markdown, HTML).
//!
//! # Example
//! ```no_run
//! # fn run(before: &sparkdiag_analysis::Analysis, after: &sparkdiag_analysis::Analysis) {
//! let diff = sparkdiag_diff::compare(
//!     sparkdiag_diff::Run { app: &before.app, report: &before.report, facts: &before.facts },
//!     sparkdiag_diff::Run { app: &after.app, report: &after.report, facts: &after.facts },
//!     &sparkdiag_diff::Options::default(),
//! );
//! if diff.correctness.status == "changed" {
//!     eprintln!("{}", diff.headline[0]);
//! }
//! # }
//! ```

mod causes;
mod fixes;
mod outputs;
mod streaming;
mod work;

pub use causes::{NOISE_FLOOR_MS, NOISE_SHARE, noise_ms, settings_fingerprint};

use std::collections::BTreeMap;

use sparkdiag_contract::Report;
use sparkdiag_facts::Facts;
use sparkdiag_model::{AppStatus, Application, StageStatus};

pub use sparkdiag_contract::diff::*;
use sparkdiag_contract::units::duration;
pub use work::mask_numbers;

/// One analysed run.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    pub app: &'a Application,
    pub report: &'a Report,
    /// What the application and its stages were, as the analysis computed them once
    /// (`Analysis::facts`): its plans and peak cores among them.
    pub facts: &'a Facts,
}

#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Prices core-hours (peak cores × runtime) as money.
    pub price_per_core_hour: Option<f64>,
    /// The job's own noise, when its owner knows it (`--noise`); else [`noise_ms`]'s default.
    pub noise: Option<Noise>,
}

/// How far a runtime moves between identical runs of a job, as its owner states it: a share
/// of BEFORE's runtime (`--noise 25%`) or a duration (`--noise 10s`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Noise {
    Share(f64),
    Fixed(i64),
}

impl Noise {
    /// `25%` (a share), or a duration as Spark reads one: `10s`, `1500ms`, `2min`, or bare
    /// seconds. `0.25` is refused: it could be either.
    pub fn parse(text: &str) -> Result<Noise, String> {
        let text = text.trim();
        if let Some(pct) = text.strip_suffix('%') {
            return match pct.trim().parse::<f64>() {
                Ok(p) if p.is_finite() && p > 0.0 && p <= 1000.0 => Ok(Noise::Share(p / 100.0)),
                _ => Err(format!(
                    "a share of BEFORE's runtime wants a percentage above 0, like 25%; got {text}"
                )),
            };
        }
        match sparkdiag_facts::settings::spark_seconds_setting_ms(text) {
            Some(ms) if ms > 0 => Ok(Noise::Fixed(ms)),
            _ => Err(format!(
                "wants a percentage of BEFORE's runtime (25%) or a duration (10s, 1500ms, 2min); got {text}"
            )),
        }
    }

    /// The band for a BEFORE run of `runtime_before_ms`.
    pub fn ms(self, runtime_before_ms: i64) -> i64 {
        match self {
            Noise::Share(share) => (runtime_before_ms as f64 * share).round() as i64,
            Noise::Fixed(ms) => ms,
        }
    }
}

/// Compares BEFORE with AFTER.
pub fn compare(before: Run, after: Run, options: &Options) -> Diff {
    let (writes_b, reads_b) = outputs::collect(before.app);
    let (writes_a, reads_a) = outputs::collect(after.app);
    let correctness = outputs::compare(
        (before.app, &writes_b, &reads_b),
        (after.app, &writes_a, &reads_a),
    );
    // The analysis holds no parsed plans (its rules parse them a batch at a time): parsed here,
    // one run at a time.
    let mut groups_b = work::groups(
        before.app,
        &sparkdiag_facts::sql_plans(before.app, &before.facts.stages),
        &writes_b,
    );
    // Two outputs the correctness check paired although their paths differ are one destination
    // for matching work and projecting a loop too.
    for o in &correctness.outputs {
        if let Some(after_dest) = &o.after_destination {
            for g in groups_b.iter_mut() {
                if g.destinations.contains(&o.destination) {
                    g.destinations.insert(after_dest.clone());
                }
            }
        }
    }
    let groups_a = work::groups(
        after.app,
        &sparkdiag_facts::sql_plans(after.app, &after.facts.stages),
        &writes_a,
    );
    let mut pairs = work::pair(&groups_b, &groups_a);
    // Matched work first, then what has no counterpart; the most time first within each.
    let times_b: Vec<i64> = groups_b.iter().map(|g| g.time_ms(before.app)).collect();
    let times_a: Vec<i64> = groups_a.iter().map(|g| g.time_ms(after.app)).collect();
    pairs.sort_by_key(|&(b, a, by)| {
        let t = |g: Option<usize>, times: &[i64]| g.map_or(0, |i| times[i]);
        (by == "none", -(t(b, &times_b).max(t(a, &times_a))))
    });
    let work: Vec<WorkMatch> = pairs
        .iter()
        .map(|&(b, a, by)| {
            work::matched(
                b.map(|i| (before.app, &groups_b[i])),
                a.map(|j| (after.app, &groups_a[j])),
                by,
            )
        })
        .collect();

    // AFTER's series says how long BEFORE's would have been only if AFTER finished: two runs
    // cut short (or one log against itself) are compared as far as each went.
    let projection = if before.app.status() == AppStatus::Incomplete
        && after.app.status() == AppStatus::Incomplete
    {
        Err(
            "Neither run finished, so neither is projected: both are compared as observed."
                .to_string(),
        )
    } else if before.app.status() == AppStatus::Incomplete {
        project(
            before.app,
            &groups_b,
            &groups_a,
            &pairs,
            (&writes_b, &writes_a),
        )
    } else {
        Ok(None)
    };
    let (projection, projection_note) = match projection {
        Ok(p) => (p, None),
        Err(why) => (None, Some(why)),
    };
    let mut correctness = correctness;
    if let Some(p) = &projection {
        project_rows(p, &groups_b, &mut correctness);
    }
    let run_out = |run: Run,
                   projection: Option<Projection>,
                   groups_pairs: &dyn Fn(i64) -> Option<usize>| RunOut {
        inputs: run.report.source.inputs.clone(),
        app_id: run.app.id.clone(),
        name: run.app.name.clone(),
        spark_version: run.report.application.spark_version.clone(),
        status: run.app.status(),
        outcome: run.report.application.outcome_kind,
        complete: run.report.source.complete,
        duration_ms: run.app.duration_ms(),
        cores: run.facts.peak_cores,
        projection,
        timeline: timeline(run.app, groups_pairs),
        clock_breaks: clock_breaks(run.app),
    };
    let work_of_job = |groups: &[work::Group], is_before: bool| {
        let mut map: BTreeMap<i64, usize> = BTreeMap::new();
        for (w, &(b, a, _)) in pairs.iter().enumerate() {
            if let Some(g) = if is_before { b } else { a } {
                for job in groups[g].job_ids() {
                    map.insert(job, w);
                }
            }
        }
        map
    };
    let jobs_b = work_of_job(&groups_b, true);
    let jobs_a = work_of_job(&groups_a, false);
    let before_out = run_out(before, projection, &|job| jobs_b.get(&job).copied());
    let after_out = run_out(after, None, &|job| jobs_a.get(&job).copied());
    let metrics = metrics(before, after, &before_out, &after_out, options);
    let findings = findings(before.report, after.report);
    let queries = streaming::compare(before.report, after.report);
    let (verdict, causes) = causes::explain(
        before,
        after,
        causes::Compared {
            metrics: &metrics,
            work: &work,
            findings: &findings,
            correctness: &correctness,
            queries: &queries,
        },
        options,
    );
    let fixes = fixes::check(
        before,
        after,
        &fixes::Paired {
            groups_b: &groups_b,
            groups_a: &groups_a,
            pairs: &pairs,
            work: &work,
        },
    );
    let same_job = same_job(before, after, &work, &correctness);
    let mut verdict = verdict;
    verdict.comparable = same_job.same;
    verdict.new_failure = new_failure(&before_out, &after_out, after.report);
    if let Some(failure) = &verdict.new_failure {
        verdict.sentence = format!(
            "AFTER failed where BEFORE did not ({failure}): its runtime measures a run that did not do all its work, not a speed-up."
        );
    } else if !same_job.same {
        verdict.sentence = format!(
            "These runs do not look like the same job ({}): their numbers are set side by side below, but no verdict or cause is given.",
            same_job.evidence.join("; ")
        );
    }
    // Two different jobs have no causes: what differs between them is listed, not ranked.
    let causes = if same_job.same {
        causes
    } else {
        vec![Cause {
            kind: "not_comparable",
            title: "the runs do not look like the same job, so nothing is called a cause"
                .to_string(),
            explained_ms: 0,
            share: None,
            measured_by: "not measured",
            facts: Vec::new(),
            evidence: same_job.evidence.clone(),
            properties: Vec::new(),
        }]
    };
    let mut diff = Diff {
        schema: SCHEMA,
        before: before_out,
        after: after_out,
        verdict,
        causes,
        headline: Vec::new(),
        correctness,
        metrics,
        findings,
        work,
        queries,
        // The gates are the command's, asked for on the comparison (`sparkdiag_analysis::gates`).
        gates: None,
        same_job,
        fixes,
    };
    if let Some(note) = projection_note {
        diff.correctness.notes.push(note);
    }
    diff.headline = headline(&diff);
    diff
}

/// The rows a killed BEFORE's series would have written over its whole length, on each
/// destination the series wrote to: the rows its finished writes recorded, per write, times the
/// iterations in all.
fn project_rows(p: &Projection, groups_b: &[work::Group], correctness: &mut Correctness) {
    let Some(series) = groups_b.iter().find(|g| series_label(g) == p.work) else {
        return;
    };
    for o in &mut correctness.outputs {
        if !series.destinations.contains(&o.destination) {
            continue;
        }
        if let Some(side) = o.before.as_mut()
            && side.writes_recorded > 0
        {
            let per_write = side.rows_recorded as f64 / side.writes_recorded as f64;
            side.rows_projected = Some((per_write * p.iterations_total as f64).round() as i64);
        }
    }
}

/// Projects an unfinished run from its largest series of similar work: the iterations that
/// finished, at the pace they finished, continued to the whole series.
fn project(
    app: &Application,
    groups_b: &[work::Group],
    groups_a: &[work::Group],
    pairs: &[(Option<usize>, Option<usize>, &'static str)],
    writes: (&[outputs::Write], &[outputs::Write]),
) -> Result<Option<Projection>, String> {
    // The series: the group with the most finished iterations; a loop's writes beat the small
    // jobs each iteration also ran (listing files, inferring a schema), which repeat as often.
    let mut candidates: Vec<(usize, &work::Group)> = groups_b
        .iter()
        .enumerate()
        .filter(|(_, g)| g.completed() >= 2)
        .collect();
    candidates.sort_by_key(|(_, g)| {
        (
            std::cmp::Reverse(g.completed()),
            g.destinations.is_empty(),
            g.kind != "sql",
        )
    });
    let Some(&(_, top)) = candidates.first() else {
        return Err(
            "BEFORE did not finish and has no series of similar work with 2 or more finished \
             iterations, so its whole runtime cannot be projected; it is compared as observed."
                .to_string(),
        );
    };
    let mut found = None;
    for &(index, series) in &candidates {
        if let Some(total) = series_total(index, series, groups_a, pairs, writes) {
            found = Some((series, total));
            break;
        }
    }
    let Some((series, (total, total_from))) = found else {
        return Err(format!(
            "BEFORE did not finish: {} iterations of `{}` finished, but nothing in either log \
             says how many there were to do, so its whole runtime is not projected; it is \
             compared as observed.",
            top.completed(),
            series_label(top)
        ));
    };
    let done = series.completed();
    let (Some(app_start), Some((first, last_end))) = (app.start_ms, series.span_of_completed())
    else {
        return Ok(None);
    };
    // The log's own time, its clock jumps left out, as every duration is.
    let (series_ms, before_first_ms) = (
        app.span_without_jumps_ms(first, last_end),
        app.span_without_jumps_ms(app_start, first),
    );
    let pace = series_ms as f64 / done as f64;
    let projected = before_first_ms + (pace * total as f64).round() as i64;
    Ok(Some(Projection {
        duration_ms: projected,
        iterations_done: done,
        iterations_total: total,
        total_from,
        work: series_label(series),
        method: format!(
            "{done} of {total} iterations of `{}` finished in {} (from the first one's start to \
             the last finished one's end, {} each); {total} at that pace, plus the {} before the \
             first, is {}",
            series_label(series),
            duration(series_ms),
            duration(pace.round() as i64),
            duration(before_first_ms),
            duration(projected)
        ),
    }))
}

/// How long the series is: AFTER's counterpart, when it is the same loop run to the end; or
/// the partitions AFTER wrote to the destination the loop wrote one partition at a time.
fn series_total(
    index: usize,
    series: &work::Group,
    groups_a: &[work::Group],
    pairs: &[(Option<usize>, Option<usize>, &'static str)],
    (writes_b, writes_a): (&[outputs::Write], &[outputs::Write]),
) -> Option<(usize, String)> {
    let done = series.completed();
    let counterpart = pairs
        .iter()
        .find(|(b, _, _)| *b == Some(index))
        .and_then(|(_, a, _)| *a)
        .map(|j| &groups_a[j]);
    // Only what AFTER finished counts: an unfinished AFTER's started iterations prove nothing.
    if let Some(c) = counterpart
        && c.completed() > done
    {
        return Some((
            c.completed(),
            "AFTER finished the same work that many times".to_string(),
        ));
    }
    let to_dest: Vec<&outputs::Write> = writes_a
        .iter()
        .filter(|w| series.destinations.contains(&w.destination))
        .collect();
    let partitions: i64 = to_dest
        .iter()
        .map(|w| w.dynamic_partitions.unwrap_or(0) + w.static_partitions.len() as i64)
        .sum();
    if partitions > done as i64 {
        return Some((
            partitions as usize,
            format!(
                "AFTER wrote {partitions} partitions to the destination BEFORE wrote one \
                 partition per iteration"
            ),
        ));
    }
    // Last resort, and said so: AFTER's rows at the rows each finished iteration wrote. It
    // assumes AFTER wrote what the whole loop would have, which the output check cannot confirm
    // for an unfinished BEFORE.
    let ids = series.ids();
    let rows_b: Option<i64> = writes_b
        .iter()
        .filter(|w| ids.contains(&w.sql_execution_id))
        .map(|w| w.rows)
        .sum();
    let rows_a: Option<i64> = to_dest.iter().map(|w| w.rows).sum();
    let (Some(rows_b), Some(rows_a)) = (rows_b, rows_a) else {
        return None;
    };
    if rows_b <= 0 || to_dest.is_empty() {
        return None;
    }
    let per_iteration = rows_b as f64 / done as f64;
    let total = (rows_a as f64 / per_iteration).round() as usize;
    (total > done).then(|| {
        (
            total,
            format!(
                "AFTER wrote {rows_a} rows to the destination where each finished iteration \
                 wrote {per_iteration:.0}; this assumes AFTER wrote what the whole loop would have"
            ),
        )
    })
}

fn series_label(g: &work::Group) -> String {
    work::side_label(g)
}

fn timeline(app: &Application, work_of_job: &dyn Fn(i64) -> Option<usize>) -> Vec<StageSpan> {
    let (Some(start), Some(end)) = (app.start_ms, app.effective_end_ms()) else {
        return Vec::new();
    };
    // Since the start with the clock jumps left out, as the run's duration is.
    let since_start = |t: i64| work::lived_ms(app, t) - work::lived_ms(app, start);
    app.stages
        .iter()
        .filter(|s| s.status != StageStatus::Skipped)
        .filter_map(|s| {
            let from = s.submission_ms?;
            Some(StageSpan {
                stage_id: s.stage_id,
                attempt_id: s.attempt_id,
                start_ms: since_start(from),
                end_ms: since_start(s.completion_ms.unwrap_or(end)),
                tasks: s.tasks.len(),
                work: s.job_ids.iter().find_map(|j| work_of_job(*j)),
            })
        })
        .collect()
}

/// The clock jumps inside the run, where its timeline's lanes are cut.
fn clock_breaks(app: &Application) -> Vec<sparkdiag_contract::ClockBreak> {
    let (Some(start), Some(end)) = (app.start_ms, app.effective_end_ms()) else {
        return Vec::new();
    };
    let view = sparkdiag_contract::ViewData {
        origin_ms: Some(start),
        horizon_ms: Some(end),
        clock_jumps: app.clock_jumps.clone(),
        ..Default::default()
    };
    view.chart_breaks()
}

fn metrics(
    before: Run,
    after: Run,
    b: &RunOut,
    a: &RunOut,
    options: &Options,
) -> Vec<MetricChange> {
    let change = |metric, label, unit, before: f64, after: f64, projected| MetricChange {
        metric,
        label,
        unit,
        before,
        after,
        change: after - before,
        ratio: (before != 0.0).then(|| after / before),
        projected,
    };
    let runtime_b = b
        .projection
        .as_ref()
        .map(|p| p.duration_ms)
        .or(b.duration_ms)
        .unwrap_or(0) as f64;
    let projected = b.projection.is_some();
    let runtime_a = a.duration_ms.unwrap_or(0) as f64;
    let core_hours = |ms: f64, cores: i64| ms * cores as f64 / 3_600_000.0;
    let ch_b = core_hours(runtime_b, b.cores);
    let ch_a = core_hours(runtime_a, a.cores);
    let mut head = vec![
        change(
            "runtime_ms",
            "runtime",
            "ms",
            runtime_b,
            runtime_a,
            projected,
        ),
        change(
            "core_hours",
            "core-hours (runtime × peak cores)",
            "core-hours",
            ch_b,
            ch_a,
            projected,
        ),
    ];
    if let Some(price) = options.price_per_core_hour {
        head.push(change(
            "cost",
            "cost",
            "money",
            ch_b * price,
            ch_a * price,
            projected,
        ));
    }
    let (sb, sa) = (&before.report.summary, &after.report.summary);
    let peak_heap = |r: &Report| {
        r.executors
            .iter()
            .filter_map(|e| e.peak_jvm_heap_bytes)
            .filter(|&v| v > 0)
            .max()
    };
    let mut rest = vec![
        change(
            "executor_run_time_ms",
            "executor run time",
            "ms",
            sb.executor_run_time_ms as f64,
            sa.executor_run_time_ms as f64,
            false,
        ),
        change(
            "executor_cpu_time_ms",
            "executor CPU time",
            "ms",
            sb.executor_cpu_time_ms as f64,
            sa.executor_cpu_time_ms as f64,
            false,
        ),
        change(
            "jvm_gc_time_ms",
            "JVM GC time",
            "ms",
            sb.jvm_gc_time_ms as f64,
            sa.jvm_gc_time_ms as f64,
            false,
        ),
        change(
            "driver_time_ms",
            "driver-only time (no job running)",
            "ms",
            sb.driver_time_ms as f64,
            sa.driver_time_ms as f64,
            false,
        ),
        change(
            "shuffle_read_bytes",
            "shuffle read",
            "bytes",
            sb.shuffle_read_bytes as f64,
            sa.shuffle_read_bytes as f64,
            false,
        ),
        change(
            "shuffle_write_bytes",
            "shuffle write",
            "bytes",
            sb.shuffle_write_bytes as f64,
            sa.shuffle_write_bytes as f64,
            false,
        ),
        change(
            "memory_spill_bytes",
            "spill (memory)",
            "bytes",
            sb.memory_spill_bytes as f64,
            sa.memory_spill_bytes as f64,
            false,
        ),
        change(
            "disk_spill_bytes",
            "spill (disk)",
            "bytes",
            sb.disk_spill_bytes as f64,
            sa.disk_spill_bytes as f64,
            false,
        ),
        change(
            "input_bytes",
            "input read",
            "bytes",
            sb.input_bytes as f64,
            sa.input_bytes as f64,
            false,
        ),
        change(
            "output_bytes",
            "output written",
            "bytes",
            sb.output_bytes as f64,
            sa.output_bytes as f64,
            false,
        ),
        change(
            "jobs",
            "jobs",
            "count",
            sb.jobs as f64,
            sa.jobs as f64,
            false,
        ),
        change(
            "stages",
            "stages",
            "count",
            sb.stages as f64,
            sa.stages as f64,
            false,
        ),
        change(
            "tasks",
            "tasks",
            "count",
            sb.tasks as f64,
            sa.tasks as f64,
            false,
        ),
        change(
            "failed_tasks",
            "failed tasks",
            "count",
            sb.failed_tasks as f64,
            sa.failed_tasks as f64,
            false,
        ),
    ];
    // A run killed before Spark reported executor memory has no peak: leave it out, not 0.
    if let (Some(pb), Some(pa)) = (peak_heap(before.report), peak_heap(after.report)) {
        rest.push(change(
            "peak_jvm_heap_bytes",
            "peak JVM heap (any executor)",
            "bytes",
            pb as f64,
            pa as f64,
            false,
        ));
    }
    // How much a number moved, 0 (same) to 1 (from or to nothing).
    let moved = |m: &MetricChange| {
        let top = m.before.abs().max(m.after.abs());
        if top == 0.0 {
            0.0
        } else {
            m.change.abs() / top
        }
    };
    rest.sort_by(|x, y| moved(y).total_cmp(&moved(x)));
    head.extend(rest);
    head
}

fn findings(before: &Report, after: &Report) -> FindingsDiff {
    #[derive(Default)]
    struct Acc {
        title: String,
        top: i64,
        severity: Option<sparkdiag_contract::Severity>,
        count: usize,
        impact: i64,
    }
    let per_rule = |r: &Report| {
        let mut map: BTreeMap<&'static str, Acc> = BTreeMap::new();
        for f in &r.findings {
            let f = &f.finding;
            let acc = map.entry(f.rule).or_default();
            if acc.count == 0 || f.impact_ms > acc.top {
                acc.title = f.title.clone();
                acc.top = f.impact_ms;
            }
            acc.severity = Some(acc.severity.map_or(f.severity, |s| s.min(f.severity)));
            acc.count += 1;
            acc.impact += f.impact_ms;
        }
        map
    };
    let mut b = per_rule(before);
    let a = per_rule(after);
    let mut out = FindingsDiff {
        resolved: Vec::new(),
        new: Vec::new(),
        remaining: Vec::new(),
    };
    for (rule, fa) in a {
        let fb = b.remove(rule);
        let change = FindingChange {
            rule,
            title: fa.title,
            severity_before: fb.as_ref().and_then(|f| f.severity),
            severity_after: fa.severity,
            count_before: fb.as_ref().map_or(0, |f| f.count),
            count_after: fa.count,
            impact_ms_before: fb.as_ref().map_or(0, |f| f.impact),
            impact_ms_after: fa.impact,
        };
        if fb.is_some() {
            out.remaining.push(change);
        } else {
            out.new.push(change);
        }
    }
    for (rule, fb) in b {
        out.resolved.push(FindingChange {
            rule,
            title: fb.title,
            severity_before: fb.severity,
            severity_after: None,
            count_before: fb.count,
            count_after: 0,
            impact_ms_before: fb.impact,
            impact_ms_after: 0,
        });
    }
    for list in [&mut out.resolved, &mut out.new, &mut out.remaining] {
        list.sort_by_key(|f| -(f.impact_ms_before.max(f.impact_ms_after)));
    }
    out
}

/// What AFTER failed of where BEFORE did not fail: "job 3 failed: ValueError: ...", or that it
/// never finished.
fn new_failure(before: &RunOut, after: &RunOut, after_report: &Report) -> Option<String> {
    if !after.outcome.is_failure() || before.outcome.is_failure() {
        return None;
    }
    let failed: Vec<&sparkdiag_contract::JobOut> = after_report
        .jobs
        .iter()
        .filter(|j| j.status == sparkdiag_model::JobStatus::Failed)
        .collect();
    let first = failed.first().map(|j| {
        let why: String = j
            .failure
            .as_deref()
            .unwrap_or("no reason recorded")
            .lines()
            .next()
            .unwrap_or_default()
            .chars()
            .take(160)
            .collect();
        format!("job {} failed: {why}", j.job_id)
    });
    Some(match (after.outcome, first) {
        (sparkdiag_contract::Outcome::KilledOrIncomplete, _) => {
            "AFTER never finished: killed, lost or cut short".to_string()
        }
        (_, Some(first)) if failed.len() > 1 => format!("{first}, and {} more", failed.len() - 1),
        (_, Some(first)) => first,
        (_, None) => format!("AFTER {}", after_report.application.outcome),
    })
}

/// The kinds of pairing that say two pieces of work are the same work: a plan's shape, a
/// description or an output destination. A call site (`collect at
/// NativeMethodAccessorImpl.java:0` in any PySpark program) and "the only SQL left" do not.
const STRONG_MATCHES: &[&str] = &[
    "plan shape and description",
    "plan shape",
    "output destination",
    "description",
];

/// Whether the two runs look like the same job: their names, how much of each run's work has
/// a counterpart by plan, description or destination, and what they read and wrote. Two runs
/// differ when less than half of either's work time is matched and their names or their
/// inputs and outputs differ too.
fn same_job(before: Run, after: Run, work: &[WorkMatch], correctness: &Correctness) -> SameJob {
    let mut evidence = Vec::new();
    let name = |r: Run| r.app.name.as_deref().map(mask_numbers).unwrap_or_default();
    let names_differ = name(before) != name(after);
    if names_differ {
        evidence.push(format!(
            "names differ: `{}` → `{}`",
            before.app.name.as_deref().unwrap_or("?"),
            after.app.name.as_deref().unwrap_or("?")
        ));
    }
    let share = |side: fn(&WorkMatch) -> Option<&WorkSide>| {
        let total: i64 = work.iter().filter_map(side).map(|s| s.time_ms).sum();
        let matched: i64 = work
            .iter()
            .filter(|w| STRONG_MATCHES.contains(&w.matched_by))
            .filter_map(side)
            .map(|s| s.time_ms)
            .sum();
        (total > 0).then(|| matched as f64 / total as f64)
    };
    let (sb, sa) = (share(|w| w.before.as_ref()), share(|w| w.after.as_ref()));
    let shapes_differ = matches!((sb, sa), (Some(b), Some(a)) if b < 0.5 && a < 0.5);
    if let (Some(b), Some(a)) = (sb, sa) {
        evidence.push(format!(
            "{} of BEFORE's work time and {} of AFTER's matched by plan shape, description or output",
            sparkdiag_contract::units::share(b, 0),
            sparkdiag_contract::units::share(a, 0)
        ));
    }
    let read = |before: bool| {
        correctness
            .inputs
            .iter()
            .filter(|i| {
                if before {
                    i.reads_before > 0
                } else {
                    i.reads_after > 0
                }
            })
            .count()
    };
    let read_both = correctness
        .inputs
        .iter()
        .filter(|i| i.reads_before > 0 && i.reads_after > 0)
        .count();
    let wrote_both = correctness
        .outputs
        .iter()
        .filter(|o| o.before.is_some() && o.after.is_some())
        .count();
    let io_differ = read(true) > 0 && read(false) > 0 && read_both == 0 && wrote_both == 0;
    if io_differ {
        evidence.push("no input or output in common".to_string());
    }
    let same = !(shapes_differ && (names_differ || io_differ));
    if same {
        evidence.clear();
    }
    SameJob { same, evidence }
}

fn headline(d: &Diff) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(failure) = &d.verdict.new_failure {
        out.push(format!("NEW FAILURE: {failure}."));
    }
    if !d.same_job.same {
        out.push(format!(
            "NOT THE SAME JOB, it seems: {}; no verdict is given.",
            d.same_job.evidence.join("; ")
        ));
    }
    for o in &d.correctness.outputs {
        if matches!(o.status, "changed" | "only-before" | "only-after") {
            out.push(format!("OUTPUT CHANGED at {}: {}", o.destination, o.note));
        }
    }
    // A stream runs as long as it is left to: its batches, not its runtime, say how it did.
    for q in &d.queries {
        let (Some(b), Some(a)) = (&q.before, &q.after) else {
            continue;
        };
        let mut said = Vec::new();
        if let (Some(mb), Some(ma)) = (b.median_batch_ms, a.median_batch_ms) {
            said.push(format!("median batch {} → {}", duration(mb), duration(ma)));
        }
        if let (Some(tb), Some(ta)) = (b.median_tasks_per_batch, a.median_tasks_per_batch) {
            said.push(format!("{tb} → {ta} tasks per batch"));
        }
        if a.batches_over_trigger != b.batches_over_trigger {
            said.push(format!(
                "batches longer than the trigger {} → {}",
                b.batches_over_trigger, a.batches_over_trigger
            ));
        }
        if !said.is_empty() {
            out.push(format!(
                "Streaming query `{}`: {}.",
                q.query,
                said.join(", ")
            ));
        }
    }
    if let Some(rt) = d.metrics.first() {
        let what = if rt.projected {
            " (BEFORE projected)"
        } else {
            ""
        };
        let how = match rt.ratio {
            Some(r) if (0.95..=1.05).contains(&r) => {
                format!(
                    "about the same ({})",
                    sparkdiag_contract::units::share_change(r - 1.0)
                )
            }
            Some(r) if r > 0.0 && r < 1.0 => format!("{:.1}× faster", 1.0 / r),
            Some(r) if r > 1.0 => format!("{:.1}× slower", r),
            Some(_) => "no AFTER runtime".to_string(),
            None => "no BEFORE runtime".to_string(),
        };
        out.push(format!(
            "Runtime {} → {}: {how}{what}.",
            duration(rt.before as i64),
            duration(rt.after as i64)
        ));
    }
    if let Some(p) = &d.before.projection {
        out.push(format!(
            "BEFORE did not finish ({} of {} iterations of `{}`); projected: {}.",
            p.iterations_done,
            p.iterations_total,
            p.work,
            duration(p.duration_ms)
        ));
    } else if d.before.status == AppStatus::Incomplete {
        out.push("BEFORE did not finish and is compared as observed.".to_string());
    }
    for w in d.work.iter().filter(|w| w.matched_by != "none") {
        let (Some(b), Some(a)) = (&w.before, &w.after) else {
            continue;
        };
        if b.count != a.count || !w.plan_changes.is_empty() {
            out.push(format!(
                "Work `{}`: {} ({} → {} summed), matched by {}.",
                w.label,
                w.summary,
                duration(b.time_ms),
                duration(a.time_ms),
                w.matched_by
            ));
        }
    }
    let alone = |before: bool| {
        let sides: Vec<&WorkSide> = d
            .work
            .iter()
            .filter(|w| w.matched_by == "none")
            .filter_map(|w| {
                if before {
                    w.before.as_ref()
                } else {
                    w.after.as_ref()
                }
            })
            .collect();
        (sides.len(), sides.iter().map(|s| s.time_ms).sum::<i64>())
    };
    let ((nb, tb), (na, ta)) = (alone(true), alone(false));
    if nb + na > 0 {
        out.push(format!(
            "No counterpart: {nb} kind(s) of work only in BEFORE ({} summed), {na} only in AFTER \
             ({} summed).",
            duration(tb),
            duration(ta)
        ));
    }
    let f = &d.findings;
    let rules = |list: &[FindingChange]| {
        if list.is_empty() {
            "none".to_string()
        } else {
            list.iter().map(|c| c.rule).collect::<Vec<_>>().join(", ")
        }
    };
    for fix in &d.fixes {
        out.push(format!(
            "Fix for {} applied ({}): predicted to save {}, its work took {} less (error {}).",
            fix.rule,
            fix.applied.join("; "),
            duration(fix.predicted_ms),
            signed_duration(fix.measured_ms),
            signed_duration(fix.error_ms)
        ));
    }
    out.push(format!(
        "Findings: resolved {}; new {}; remaining {}.",
        rules(&f.resolved),
        rules(&f.new),
        rules(&f.remaining)
    ));
    out.push(match d.correctness.status {
        "equal"
            if d.correctness
                .outputs
                .iter()
                .any(|o| o.after_destination.is_some()) =>
        {
            "Outputs: the same rows written; one destination has a different path in AFTER \
             (paired as each run's only other output)."
                .to_string()
        }
        "equal" => "Outputs: the same rows written to the same destinations.".to_string(),
        "changed" => "Outputs: DIFFERENT (see above).".to_string(),
        "unknown" => "Outputs: cannot be compared from these logs (see notes).".to_string(),
        _ => "Outputs: neither run wrote through a SQL write command.".to_string(),
    });
    out
}

/// A duration that may be negative: "-1.2 s".
fn signed_duration(ms: i64) -> String {
    if ms < 0 {
        format!("-{}", duration(-ms))
    } else {
        duration(ms)
    }
}
