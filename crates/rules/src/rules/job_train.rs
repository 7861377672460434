//! DR002 job-train: the driver fires a long train of small jobs, one per item of a loop.

use std::collections::BTreeMap;

use super::common::duration;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_JOBS: Threshold = threshold(
    "min_jobs",
    20.0,
    "jobs",
    "jobs of one kind that make a train",
    "sparkdiag's own guard",
);

pub const MAX_MEDIAN_JOB_S: Threshold = threshold(
    "max_median_job_s",
    10.0,
    "s",
    "median job duration under which jobs are small",
    "sparkdiag's own guard",
);

pub const MIN_SPAN_S: Threshold = threshold(
    "min_span_s",
    10.0,
    "s",
    "wall-clock span of the train worth a finding",
    "sparkdiag's own guard",
);

pub const INTERACTIVE_GAP_S: Threshold = threshold(
    "interactive_gap_s",
    5.0,
    "s",
    "in an interactive session, a pause this long between two jobs is someone typing, not a loop",
    "sparkdiag's own guard",
);

declare_rule! {
    /// ## What it does
    /// Recognises a driver loop: many short jobs of the same kind (the same job name or call
    /// site) submitted one after another, or a few at a time from a thread pool — the shape of
    /// `for month in months: df.filter(...).write...`. It says how many jobs, how long they took
    /// from the first to the last, how much of that the executors actually worked, and how many
    /// ran at once.
    ///
    /// ## Why is this bad?
    /// Each job pays for planning, scheduling, a stage barrier and often re-reading the same
    /// input, and the executors idle between jobs while the driver prepares the next. A
    /// 24-month loop through a `ThreadPoolExecutor` ran for 126 hours where one Spark-native job
    /// took under 30 minutes. A thread pool hides the problem without solving it.
    ///
    /// ## How to fix it
    /// Express the loop as one job over all items:
    /// ```python
    /// spark.conf.set("spark.sql.sources.partitionOverwriteMode", "dynamic")
    /// (df.where(F.col("month").isin(months))
    ///    .groupBy("month", ...).agg(...)
    ///    .write.partitionBy("month").mode("overwrite").parquet(path))
    /// ```
    /// Replace per-item `count()`/`collect()` checks with one aggregation, and join against a
    /// DataFrame of the items instead of looping over them. The advice follows what the plans of
    /// the loop's queries say changes from one turn to the next (`evidence.loop_body`): only
    /// filters and destinations (`over_items`: the job above), projections or aggregations
    /// (`computations`: one pass computing them all, or the shared input cached), or nothing
    /// (`same_query`: run it once and reuse the result).
    ///
    /// ## Threshold and its source
    /// At least `min_jobs` = 20 jobs of one kind with a median job under `max_median_job_s` = 10 s,
    /// whose span from the first job's start to the last job's end is at least `min_span_s` =
    /// 10 s. The recoverable time is the span minus the time the work itself needs on all cores
    /// (total task time / cores), the Sparklens ideal-time model. In an interactive session
    /// (a shell, a notebook) the same command typed again is no loop: a pause of
    /// `interactive_gap_s` = 5 s or more between two jobs ends a train there. Jobs a library
    /// starts itself (Spark ML's tree training, Delta's commands: the first frame of their
    /// stack past Spark's own is the library's) are no loop of the user's. The jobs one SQL
    /// execution runs at once (AQE submits a job per query stage) count as one job when
    /// counting how many ran at once, so they are never read as a thread pool.
    pub static JOB_TRAIN = {
        code: "DR002",
        name: "job-train",
        category: DriverBound,
        claims: Saving,
        needs: [Jobs],
        summary: "A long train of small jobs from a driver loop or thread pool",
        thresholds: &[
            MIN_JOBS,
            MAX_MEDIAN_JOB_S,
            MIN_SPAN_S,
            INTERACTIVE_GAP_S,
        ] as &[Threshold],
        check: check,
        batch_only: true,
    };
}

/// Jobs of one kind that pass the train thresholds.
struct Train<'a> {
    kinds: Vec<String>,
    /// Each kind as the user knows it: the call site in their program, and the description
    /// they set (digits as `#`, since those differ between iterations).
    labels: Vec<String>,
    jobs: Vec<&'a sparkdiag_model::Job>,
    first: i64,
    last: i64,
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    let end = app.effective_end_ms().unwrap_or(0);
    // Jobs of one kind: the same job name (the last stage's call site), or the same description.
    let mut kinds: BTreeMap<String, Vec<&sparkdiag_model::Job>> = BTreeMap::new();
    // A library's own jobs (an MLlib fit's metadata and tree-aggregation passes, Delta's
    // commands) are its algorithm, not a loop in the program: the fix is not the user's to
    // write, so they make no train.
    for job in app
        .jobs
        .iter()
        .filter(|j| j.submission_ms.is_some() && j.library.is_none())
    {
        let kind = job
            .description
            .clone()
            .filter(|d| !d.is_empty())
            .map_or_else(|| job.name.clone(), |d| format!("{} / {d}", job.name));
        kinds.entry(normalise(&kind)).or_default().push(job);
    }
    // In a session someone types at, a pause between two jobs is them thinking: the same
    // command typed again is no loop, so a pause ends a train.
    let interactive = ctx.shapes.app.interactive.is_some();
    let pause_ms = (t.get(&INTERACTIVE_GAP_S) * 1000.0) as i64;
    let mut runs: Vec<(String, Vec<&sparkdiag_model::Job>)> = Vec::new();
    for (kind, mut jobs) in kinds {
        jobs.sort_by_key(|j| j.submission_ms);
        if !interactive {
            runs.push((kind, jobs));
            continue;
        }
        let mut run: Vec<&sparkdiag_model::Job> = Vec::new();
        let mut reach = i64::MIN;
        for job in jobs {
            let start = job.submission_ms.unwrap();
            if !run.is_empty() && start - reach >= pause_ms {
                runs.push((kind.clone(), std::mem::take(&mut run)));
            }
            reach = reach.max(job.completion_ms.unwrap_or(end));
            run.push(job);
        }
        runs.push((kind, run));
    }
    let mut trains: Vec<Train> = Vec::new();
    for (kind, jobs) in runs {
        if (jobs.len() as f64) < t.get(&MIN_JOBS) {
            continue;
        }
        let mut durations: Vec<i64> = jobs
            .iter()
            .map(|j| j.completion_ms.unwrap_or(end) - j.submission_ms.unwrap())
            .collect();
        durations.sort_unstable();
        if durations[durations.len() / 2] as f64 >= t.get(&MAX_MEDIAN_JOB_S) * 1000.0 {
            continue;
        }
        let first = jobs[0].submission_ms.unwrap();
        let last = jobs
            .iter()
            .map(|j| j.completion_ms.unwrap_or(end))
            .max()
            .unwrap_or(first);
        let first_job = jobs[0];
        let site = app.user_call_site(first_job);
        // The descriptions as written (a loop's differ in their digits: `month 00`, `month 01`),
        // never with those digits masked.
        let mut descriptions: Vec<&str> = jobs
            .iter()
            .filter_map(|j| j.description.as_deref())
            .filter(|d| !d.is_empty())
            .collect();
        descriptions.sort_unstable();
        descriptions.dedup();
        let label = match first_job.description.as_deref().filter(|d| !d.is_empty()) {
            Some(d) => {
                let others = descriptions.iter().filter(|o| **o != d).count();
                let more = match others {
                    0 => String::new(),
                    1 => ", and 1 more like it".to_string(),
                    n => format!(", and {n} more like it"),
                };
                format!(
                    "`{}` ({}{more})",
                    short_site(&site),
                    short(&sparkdiag_contract::units::plain_text(d))
                )
            }
            None => format!("`{}`", short_site(&site)),
        };
        trains.push(Train {
            kinds: vec![kind],
            labels: vec![label],
            jobs,
            first,
            last,
        });
    }
    // Kinds whose spans overlap are one loop whose body runs several jobs: one finding, so its
    // time is not counted once per kind.
    trains.sort_by_key(|tr| tr.first);
    let mut merged: Vec<Train> = Vec::new();
    for train in trains {
        match merged.last_mut() {
            Some(open) if train.first < open.last => {
                open.last = open.last.max(train.last);
                open.kinds.extend(train.kinds);
                open.labels.extend(train.labels);
                open.jobs.extend(train.jobs);
            }
            _ => merged.push(train),
        }
    }
    let mut findings = Vec::new();
    for mut train in merged {
        let span = train.last - train.first;
        if (span as f64) < t.get(&MIN_SPAN_S) * 1000.0 {
            continue;
        }
        train.jobs.sort_by_key(|j| (j.submission_ms, j.job_id));
        let jobs = &train.jobs;
        let mut durations: Vec<i64> = jobs
            .iter()
            .map(|j| j.completion_ms.unwrap_or(end) - j.submission_ms.unwrap())
            .collect();
        durations.sort_unstable();
        let median = durations[durations.len() / 2];
        let job_ids: std::collections::BTreeSet<i64> = jobs.iter().map(|j| j.job_id).collect();
        let task_ms: i64 = app
            .stages
            .iter()
            .filter(|s| s.job_ids.iter().any(|id| job_ids.contains(id)))
            .map(|s| ctx.stats(s).task_time_ms)
            .sum();
        let needed = task_ms / ctx.cores;
        let impact = (span - needed).max(0);
        let concurrency = max_concurrency(&executions_of(jobs, end));
        let how = if concurrency > 1 {
            format!("from a thread pool, up to {concurrency} at once")
        } else {
            "one after another".to_string()
        };
        let kinds = if train.labels.len() == 1 {
            train.labels[0].clone()
        } else {
            format!("of {} kinds (e.g. {})", train.labels.len(), train.labels[0])
        };
        let title = format!(
            "{} small jobs {kinds} ran {how} over {} (median job {}), while their tasks needed {} of the cluster",
            jobs.len(),
            duration(span),
            duration(median),
            duration(needed)
        );
        let body = loop_body(app, jobs);
        // The loop's cost the replay can see is the driver's time between its jobs, the change
        // DR001 names too: its saving is counted once. From a thread pool the jobs overlap and
        // one job would also save their own overheads, which the replay cannot model; it then
        // gives less than the rule's estimate, never more.
        findings.push(
            Finding::new(
                &JOB_TRAIN,
                Severity::from_share(impact, ctx.app_ms),
                title,
                impact,
            )
            .during(train.first, train.last)
            .proposes(
                crate::Change::RemoveDriverGaps,
                "the driver's time between the train's jobs",
            )
            .jobs(job_ids.iter().copied())
            .evidence("jobs", jobs.len())
            .evidence("job_kinds", train.kinds.clone())
            .evidence("span_ms", span)
            .evidence("median_job_ms", median)
            .evidence("task_time_ms", task_ms)
            .evidence("max_concurrent_jobs", concurrency)
            .evidence("cores", ctx.cores)
            .evidence("loop_body", body.name())
            .recommend(body.advice(jobs.len())),
        );
    }
    findings
}

/// What changes from one turn of the loop to the next, read from the plans of its first two
/// SQL executions: that is what the one job replacing the loop must vary over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LoopBody {
    /// Only filters, scans' pushed filters and write destinations differ: a loop over items
    /// (`for m in months: df.where(col == m)...`).
    OverItems,
    /// Projections or aggregations differ: different computations over the same input.
    Computations,
    /// The same plan every time: the same query run again.
    SameQuery,
    /// No SQL plans to compare (RDD jobs) or only one execution.
    Unknown,
}

impl LoopBody {
    fn name(self) -> &'static str {
        match self {
            LoopBody::OverItems => "over_items",
            LoopBody::Computations => "computations",
            LoopBody::SameQuery => "same_query",
            LoopBody::Unknown => "unknown",
        }
    }

    fn advice(self, jobs: usize) -> String {
        match self {
            LoopBody::OverItems | LoopBody::Unknown => "Replace the loop with one Spark job over all items: filter with isin(...) or join a DataFrame of the items, aggregate by the item column, and write once with df.write.partitionBy(item_column).mode(\"overwrite\") and spark.sql.sources.partitionOverwriteMode=dynamic.".to_string(),
            LoopBody::Computations => format!("The loop runs {jobs} different computations over the same input, one query each (their plans differ beyond filters): compute them in one pass, one select or agg holding every column or aggregate the loop asks for; where they must stay separate queries, cache the input they share (df.cache()) so each does not read it again."),
            LoopBody::SameQuery => format!("The loop runs the same query {jobs} times (the same plan each time): run it once and reuse its result (collect or cache it before the loop)."),
        }
    }
}

/// A plan node's text without what differs between runs of one query: attribute ids (`#12`,
/// `#12L`) and plan ids (`[plan_id=119]`).
fn plan_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        let plan_id = c == '=' && out.ends_with("plan_id");
        if (c == '#' || plan_id) && chars.peek().is_some_and(char::is_ascii_digit) {
            while chars
                .peek()
                .is_some_and(|d| d.is_ascii_digit() || *d == 'L')
            {
                chars.next();
            }
            out.push(c);
        } else {
            out.push(c);
        }
    }
    out
}

fn nodes(plan: &sparkdiag_model::SparkPlanInfo, out: &mut Vec<(String, String)>) {
    out.push((plan.node_name.to_string(), plan_text(&plan.simple_string)));
    for child in &plan.children {
        nodes(child, out);
    }
}

fn loop_body(app: &sparkdiag_model::Application, jobs: &[&sparkdiag_model::Job]) -> LoopBody {
    let mut ids: Vec<i64> = jobs.iter().filter_map(|j| j.sql_execution_id).collect();
    ids.dedup();
    // Each execution's nodes, grouped by the plan's shape (its operators in order): a turn of
    // the loop may run several queries, and each kind is compared with itself.
    let mut shapes: Vec<(Vec<String>, Vec<Vec<String>>)> = Vec::new();
    for id in ids.iter().take(64) {
        let Some(sql) = app.sql.iter().find(|s| s.execution_id == *id) else {
            continue;
        };
        let Some(plan) = sql.plan.as_ref().or(sql.final_plan.as_ref()) else {
            continue;
        };
        let mut flat = Vec::new();
        nodes(plan, &mut flat);
        let (names, texts): (Vec<String>, Vec<String>) = flat.into_iter().unzip();
        match shapes.iter_mut().find(|(shape, _)| *shape == names) {
            Some((_, runs)) => runs.push(texts),
            None => shapes.push((names, vec![texts])),
        }
    }
    // What a loop over items changes: its filter, the scan that pushes it, the destination.
    let item_node = |name: &str| {
        name == "Filter"
            || sparkdiag_facts::writes::is_scan(name)
            || sparkdiag_facts::writes::is_write(name)
    };
    let kinds: Vec<LoopBody> = shapes
        .iter()
        .filter(|(_, runs)| runs.len() >= 2)
        .map(|(names, runs)| {
            let differing: Vec<&str> = (0..names.len())
                .filter(|&i| runs[0][i] != runs[1][i])
                .map(|i| names[i].as_str())
                .collect();
            if differing.is_empty() {
                LoopBody::SameQuery
            } else if differing.iter().all(|n| item_node(n)) {
                LoopBody::OverItems
            } else {
                LoopBody::Computations
            }
        })
        .collect();
    if kinds.contains(&LoopBody::OverItems) {
        LoopBody::OverItems
    } else if kinds.contains(&LoopBody::Computations) {
        LoopBody::Computations
    } else if !kinds.is_empty() && shapes.len() == 1 {
        LoopBody::SameQuery
    } else if shapes.len() >= 2 {
        LoopBody::Computations
    } else {
        LoopBody::Unknown
    }
}

#[cfg(test)]
mod loop_body_tests {
    use super::plan_text;

    #[test]
    fn ids_that_differ_between_runs_of_one_query_are_left_out() {
        assert_eq!(
            plan_text("Exchange hashpartitioning(k#12L, 8), ENSURE_REQUIREMENTS, [plan_id=119]"),
            plan_text("Exchange hashpartitioning(k#40L, 8), ENSURE_REQUIREMENTS, [plan_id=188]")
        );
        assert_ne!(
            plan_text("Filter ((id#3L % 24) = 1)"),
            plan_text("Filter ((id#9L % 24) = 2)")
        );
    }
}

/// Job names carry line numbers and ids that differ between loop iterations only in digits
/// inside descriptions (`month=2024-01`); the call site itself is what identifies the loop.
fn normalise(kind: &str) -> String {
    kind.chars()
        .map(|c| if c.is_ascii_digit() { '#' } else { c })
        .collect()
}

fn short(kind: &str) -> String {
    let line = kind.lines().next().unwrap_or_default();
    if line.chars().count() > 60 {
        format!("{}…", line.chars().take(59).collect::<String>())
    } else {
        line.to_string()
    }
}

/// A call site short enough for a title: a long path is cut to its file name, which with the
/// line number is what locates the loop (`collect at workload.py:107`).
fn short_site(site: &str) -> String {
    let line = site.lines().next().unwrap_or_default();
    if line.chars().count() <= 60 {
        return line.to_string();
    }
    match line.rsplit_once(" at ") {
        Some((method, path)) => short(&format!(
            "{method} at {}",
            path.rsplit('/').next().unwrap_or(path)
        )),
        None => short(line),
    }
}

/// Each job's `[submission, completion)`, the jobs of one SQL execution merged into one span:
/// AQE submits a job per query stage, several at once, from the one thread of the query.
fn executions_of(jobs: &[&sparkdiag_model::Job], end: i64) -> Vec<(i64, i64)> {
    let mut by_execution: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    let mut spans = Vec::new();
    for j in jobs {
        let span = (j.submission_ms.unwrap(), j.completion_ms.unwrap_or(end));
        match j.sql_execution_id {
            Some(id) => {
                let at = by_execution.entry(id).or_insert(span);
                *at = (at.0.min(span.0), at.1.max(span.1));
            }
            None => spans.push(span),
        }
    }
    spans.extend(by_execution.into_values());
    spans
}

fn max_concurrency(spans: &[(i64, i64)]) -> usize {
    let mut edges: Vec<(i64, i32)> = Vec::new();
    for &(start, finish) in spans {
        edges.push((start, 1));
        edges.push((finish, -1));
    }
    edges.sort_unstable();
    let (mut live, mut peak) = (0i32, 0i32);
    for (_, d) in edges {
        live += d;
        peak = peak.max(live);
    }
    peak.max(0) as usize
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::JOB_TRAIN;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    /// The EMR run of `../shared/real-world` fits a RandomForest: its 873 small jobs
    /// (`take at DecisionTreeMetadata.scala:119`, `collectAsMap at RandomForest.scala`, …) are
    /// Spark ML's own, no loop the program's owner wrote.
    #[test]
    fn is_quiet_on_the_jobs_a_library_starts_itself() {
        let Some(apps) =
            crate::rules::testing::shared_apps("real-world/spark_log_parser/tests/logs/emr.zip")
        else {
            return;
        };
        let library = apps[0].jobs.iter().filter(|j| j.library.is_some()).count();
        assert!(library > 800, "{library} jobs named a library");
        assert_quiet(&crate::rules::testing::run(&JOB_TRAIN, &apps[0], &[]));
    }

    /// A RandomForest, a DecisionTree and a LinearRegression fitted in PySpark: Spark ML's jobs.
    #[test]
    fn is_quiet_on_an_mllib_fit() {
        assert_quiet(&on_log(&JOB_TRAIN, "operations/mllib-fit", &[]));
    }

    /// A Python loop of 100 `spark.sql(...).collect()`: the loop is named, and the one query
    /// that replaced it is quiet.
    #[test]
    fn fires_on_a_loop_of_collects() {
        assert_fires(
            &on_log(&JOB_TRAIN, "operations/driver-loop-collect", &[]),
            JOB_TRAIN.code,
        );
        assert_quiet(&on_log(
            &JOB_TRAIN,
            "operations/driver-loop-collect-fixed",
            &[],
        ));
    }

    #[test]
    fn fires_on_the_thread_pool_of_small_jobs() {
        assert_fires(
            &on_log(&JOB_TRAIN, "patterns/driver-loop-threadpool", &[]),
            JOB_TRAIN.code,
        );
    }

    /// A shell session running the same join 22 times, 6 s apart: someone typing, not a loop.
    /// Without the pause guard the same jobs would make a train, and AQE's two map-stage jobs
    /// of each join still count as one job running, not a thread pool of two.
    #[test]
    fn is_quiet_on_a_command_typed_again_in_a_shell() {
        assert_quiet(&on_log(&JOB_TRAIN, "shapes/interactive-retyped", &[]));
        let unguarded = on_log(
            &JOB_TRAIN,
            "shapes/interactive-retyped",
            &["DR002.interactive_gap_s=100000"],
        );
        assert_fires(&unguarded, JOB_TRAIN.code);
        for f in &unguarded {
            assert_eq!(f.evidence["max_concurrent_jobs"], 1, "{}", f.title);
            assert!(!f.title.contains("thread pool"), "{}", f.title);
            // The same join each time: run it once, not "one job over all items".
            assert_eq!(f.evidence["loop_body"], "same_query", "{}", f.title);
            assert!(
                f.recommendation.contains("the same query"),
                "{}",
                f.recommendation
            );
        }
    }

    /// The advice follows what changes from one turn to the next: a month loop's filter and
    /// destination (one job over all items), or forty different computations over one input
    /// (one pass), each read from the plans of the loop's queries.
    #[test]
    fn the_advice_fits_what_the_loop_varies() {
        for log in [
            "patterns/driver-loop-serial",
            "patterns/driver-loop-threadpool",
        ] {
            let found = on_log(&JOB_TRAIN, log, &[]);
            assert_fires(&found, JOB_TRAIN.code);
            assert_eq!(found[0].evidence["loop_body"], "over_items", "{log}");
            assert!(found[0].recommendation.contains("isin"), "{log}");
        }
        let found = on_log(&JOB_TRAIN, "memory/metaspace", &[]);
        assert_fires(&found, JOB_TRAIN.code);
        assert_eq!(found[0].evidence["loop_body"], "computations");
        let advice = &found[0].recommendation;
        assert!(advice.contains("in one pass"), "{advice}");
        assert!(!advice.contains("isin"), "{advice}");
    }

    /// Titles show a loop's description as the job's owner wrote it, not with its digits
    /// masked (`month ##`).
    #[test]
    fn titles_hold_no_masked_digits() {
        let found = on_log(&JOB_TRAIN, "patterns/driver-loop-serial", &[]);
        assert_fires(&found, JOB_TRAIN.code);
        for f in &found {
            assert!(!f.title.contains('#'), "{}", f.title);
        }
    }

    #[test]
    fn is_quiet_on_the_loop_rewritten_as_one_job() {
        assert_quiet(&on_log(&JOB_TRAIN, "patterns/driver-loop-fixed", &[]));
    }
}
