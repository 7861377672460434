//! The report (`sparkdiag/report/v1`) built from the model, the reading account, the replayed
//! findings and the stages' facts: the one place the contract's documents are filled in.

use std::collections::HashMap;

use sparkdiag_contract::*;
use sparkdiag_eventlog::SourceReport;
use sparkdiag_facts::{Facts, StageStats};
use sparkdiag_model::{Application, JobStatus, SparkPlanInfo, StageAttempt, StageStatus};
use sparkdiag_whatif::Replayed;

/// `replayed` holds the rules' findings as the what-if replay left them, with that replay
/// (`sparkdiag_whatif::replayed`; the caller runs it, so building the report computes
/// nothing a rule or the replay decides). `facts` are the application's facts the rules and the
/// replay read (`Facts::of(app)`): the report reads the stages' statistics there rather than
/// every stage's tasks again, and turns recoverable wall-clock time into core-hours (and, with
/// `prices`, money) with its peak cores.
pub fn report(
    inputs: &[String],
    source: &SourceReport,
    app: &Application,
    facts: &Facts,
    replayed: Replayed,
    prices: &Prices,
) -> Report {
    let (stats, cores) = (&facts.stages, facts.peak_cores);
    debug_assert_eq!(
        stats.len(),
        app.stages.len(),
        "statistics of another application"
    );
    let Replayed {
        mut findings,
        what_if,
        recoverable_ms: replayed_ms,
    } = replayed;
    // Ranked again by the replayed savings; of two that save the same, the one whose fix also
    // removes the other's stages (`removed_by_fix_of`) comes first.
    let removed = |f: &sparkdiag_rules::Finding| f.evidence.contains_key("removed_by_fix_of");
    findings.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then(b.impact_ms.cmp(&a.impact_ms))
            .then(removed(a).cmp(&removed(b)))
            .then(a.rule.cmp(b.rule))
    });
    let estimated_beyond_replay_ms: i64 = findings
        .iter()
        .filter(|f| f.cost_core_hours.is_none() && !f.is_outcome())
        .filter(|f| !f.counterfactual.as_ref().is_some_and(|c| c.replayed))
        // A broadcast credited with the skew its fix removes: that part is in the replay.
        .map(|f| {
            let replayed = f
                .evidence
                .get("includes_replayed_ms")
                .and_then(|v| v.as_i64())
                .unwrap_or(0);
            (f.impact_ms - replayed).max(0)
        })
        .sum();
    let runtime = app.duration_ms().unwrap_or(0).max(0);
    let application = application_out(app);
    let what_if = what_if.map(|w| replay_until_it_stopped(w, application.outcome_kind));
    // Before the jobs and stages: the metrics' values (a few MB on a log of thousands of
    // queries) are let go before those are built, not held beside them.
    let sql = {
        let metrics = sparkdiag_model::SqlMetricValues::new(app);
        app.sql.iter().map(|s| sql_out(s, &metrics)).collect()
    };
    // Each job's call site once: the jobs list and the findings' code sites both name them, and
    // an internal job's is read from its query's compressed details.
    let job_calls: Vec<String> = app.jobs.iter().map(|j| app.user_call_site(j)).collect();
    let sites = Sites::index(app, &job_calls);
    Report {
        schema: SCHEMA,
        source: {
            let mut out = source_out(inputs, source);
            out.warnings.extend(app.log_warnings());
            out
        },
        application,
        summary: Summary {
            recoverable_ms: replayed_ms.min(runtime),
            estimated_beyond_replay_ms: estimated_beyond_replay_ms
                .min(runtime - replayed_ms.min(runtime)),
            peak_cores: cores,
            ..summary(app, stats)
        },
        jobs: app
            .jobs
            .iter()
            .zip(&job_calls)
            .map(|(j, call)| job_out(j, call))
            .collect(),
        stages: app
            .stages
            .iter()
            .zip(stats)
            .map(|(s, stats)| stage_out(app, s, stats))
            .collect(),
        executors: app.executors.iter().map(|e| executor_out(app, e)).collect(),
        sql,
        findings: findings
            .into_iter()
            .map(|finding| {
                let core_hours = finding
                    .cost_core_hours
                    .unwrap_or(finding.impact_ms as f64 * cores as f64 / 3_600_000.0);
                let impact_kind = if finding.cost_core_hours.is_some() {
                    "cost"
                } else if finding.impact_ms <= 0 {
                    "none"
                } else if finding.is_outcome() {
                    "lost"
                } else {
                    "saving"
                };
                let gb_hours = finding
                    .evidence
                    .get("gb_hours_saved")
                    .and_then(|v| v.as_f64());
                FindingOut {
                    code_sites: sites.code_sites(&finding.scope),
                    impact_kind,
                    impact_core_hours: (core_hours * 1000.0).round() / 1000.0,
                    impact_cost: prices.per_core_hour.map(|p| cents(core_hours * p)),
                    impact_memory_cost: prices
                        .per_gb_hour
                        .zip(gb_hours)
                        .map(|(p, gb_hours)| cents(gb_hours * p)),
                    finding,
                }
            })
            .collect(),
        what_if,
        streaming: super::streaming::streaming_out(app),
        memory: sparkdiag_facts::memory_figures::of(app),
        // Filled in by the analysis once the report is built (`crate::ledger`).
        ledger: Ledger::default(),
        gates: None,
        narrowed: None,
        prices: *prices,
    }
}

/// Money rounded to cents.
fn cents(amount: f64) -> f64 {
    (amount * 100.0).round() / 100.0
}

fn source_out(inputs: &[String], s: &SourceReport) -> Source {
    Source {
        inputs: inputs.to_vec(),
        layout: s.layout.name(),
        files: s
            .files
            .iter()
            .map(|f| SourceFile {
                path: f.path.clone(),
                codec: f.codec.map(|c| c.name()),
                bytes: f.bytes,
                decoded_bytes: f.decoded_bytes,
                events: f.events,
            })
            .collect(),
        complete: s.complete(),
        in_progress: s.in_progress,
        truncated: s.truncated,
        malformed_lines: s.malformed_lines,
        unknown_events: s.unknown_events.clone(),
        warnings: s.warnings.clone(),
        // What the rules were configured with is the analysis's to say (`crate::ledger`).
        config: ConfigSource::default(),
    }
}

fn application_out(app: &Application) -> ApplicationOut {
    let (failed, stopped) = failed_and_stopped_jobs(app);
    ApplicationOut {
        id: app.id.clone(),
        name: app.name.clone(),
        attempt_id: app.attempt_id.clone(),
        user: app.user.clone(),
        spark_version: app
            .spark_version()
            .map(str::to_string)
            .or_else(|| app.databricks_runtime.clone()),
        databricks_runtime: app.databricks_runtime.clone(),
        platform: app.platform(),
        start_ms: app.start_ms,
        end_ms: app.end_ms,
        duration_ms: app.duration_ms(),
        status: app.status(),
        exit_code: app.exit_code,
        interactive: app.interactive(),
        workload: app.workload(),
        workload_evidence: app.workload_evidence(),
        api: if app.uses_sql() { "sql" } else { "rdd" },
        photon: app.photon(),
        dynamic_allocation: app.dynamic_allocation(),
        cluster_manager: app.cluster_manager(),
        outcome: {
            let text = outcome(app.status(), app.jobs.len(), failed);
            match stopped {
                0 => text,
                n => format!(
                    "{text}; {n} job{} cancelled by the program's stop",
                    if n == 1 { "" } else { "s" }
                ),
            }
        },
        outcome_kind: Outcome::of(app.status(), failed, stopped),
    }
}

/// A run that failed or never finished replays only what it did before it stopped: "more cores
/// would save 8 %" is of that time, not of the job done whole, and the what-if says so in its
/// headline, its cores advice and its assumptions.
fn replay_until_it_stopped(mut what_if: WhatIf, outcome: Outcome) -> WhatIf {
    let (what, assumption) = match outcome {
        Outcome::KilledOrIncomplete => (
            "The run never finished: this replays the time before it stopped, not the whole job",
            "The run never finished (killed, lost or cut short): the replay is of the work done before it stopped, not of the whole job.",
        ),
        Outcome::Failed | Outcome::SucceededWithFailedJobs => (
            "A job failed: this replays the time before the failure, not the job done whole",
            "A job failed: the replay is of the work done before the failure, not of the job run to its end.",
        ),
        _ => return what_if,
    };
    what_if.headline = format!("{what}. {}", what_if.headline);
    for advice in what_if.advice.iter_mut().filter(|a| a.kind == "cores") {
        advice.text = format!("{what}. {}", advice.text);
    }
    what_if.assumptions.insert(0, assumption);
    what_if
}

/// The jobs that failed for a reason of their own, and those the program's own stop cancelled
/// (streaming workloads), which are no failure.
fn failed_and_stopped_jobs(app: &Application) -> (usize, usize) {
    let stopped = app.jobs_stopped_by_program().len();
    let failed = app
        .jobs
        .iter()
        .filter(|j| j.status == JobStatus::Failed)
        .count();
    (failed.saturating_sub(stopped), stopped)
}

/// A stage attempt that started running (not one only named by a job).
fn started(stage: &StageAttempt) -> bool {
    !matches!(stage.status, StageStatus::Pending | StageStatus::Skipped)
        || stage.submission_ms.is_some()
}

fn summary(app: &Application, stats: &[StageStats]) -> Summary {
    let (job_time_ms, driver_time_ms) = app.job_and_driver_time_ms();
    let totals = |f: fn(&sparkdiag_model::MetricTotals) -> i64| {
        app.stages.iter().map(|s| f(&s.totals)).sum::<i64>()
    };
    // In local mode the driver runs the tasks; elsewhere it only schedules them.
    let executors = app
        .executors
        .iter()
        .filter(|e| e.id != "driver" || e.total_tasks > 0 || e.completed_tasks > 0)
        .count();
    Summary {
        jobs: app.jobs.len(),
        failed_jobs: app
            .jobs
            .iter()
            .filter(|j| j.status == JobStatus::Failed)
            .count(),
        stopped_jobs: failed_and_stopped_jobs(app).1,
        stages: app.stages.iter().filter(|s| started(s)).count(),
        failed_stages: app
            .stages
            .iter()
            .filter(|s| s.status == StageStatus::Failed)
            .count(),
        skipped_stages: app
            .stages
            .iter()
            .filter(|s| s.status == StageStatus::Skipped)
            .count(),
        tasks: app.tasks.len(),
        failed_tasks: stats
            .iter()
            .flat_map(|s| &s.facts.failed_by_executor)
            .map(|failed| failed.tasks)
            .sum(),
        killed_tasks: stats.iter().map(|s| s.facts.killed).sum(),
        executors,
        executor_run_time_ms: totals(|t| t.executor_run_time),
        executor_cpu_time_ms: totals(|t| t.executor_cpu_time) / 1_000_000,
        jvm_gc_time_ms: totals(|t| t.jvm_gc_time),
        shuffle_read_bytes: totals(|t| t.shuffle_read_bytes()),
        shuffle_write_bytes: totals(|t| t.shuffle_write_bytes),
        memory_spill_bytes: totals(|t| t.memory_bytes_spilled),
        disk_spill_bytes: totals(|t| t.disk_bytes_spilled),
        input_bytes: totals(|t| t.input_bytes),
        output_bytes: totals(|t| t.output_bytes),
        driver_time_ms,
        job_time_ms,
        recoverable_ms: 0,
        estimated_beyond_replay_ms: 0,
        peak_cores: 0,
        idle_core_hours: idle_core_ms(app) as f64 / 3_600_000.0,
    }
}

/// Executor core time held but running no task: each executor's cores times its lifetime (to
/// the end of the log when it stayed), less its tasks' time; the driver counts only in local
/// mode, where it runs the tasks. UT001 (idle cores) measures the same.
fn idle_core_ms(app: &Application) -> i64 {
    app.executor_core_ms().map_or(0, |time| time.idle())
}

fn job_out(j: &sparkdiag_model::Job, call: &str) -> JobOut {
    JobOut {
        job_id: j.job_id,
        name: j.name.clone(),
        description: j.description.clone(),
        job_group: j.job_group.clone(),
        sql_execution_id: j.sql_execution_id,
        status: j.status,
        submission_ms: j.submission_ms,
        completion_ms: j.completion_ms,
        duration_ms: j
            .submission_ms
            .zip(j.completion_ms)
            .map(|(s, e)| (e - s).max(0)),
        stage_ids: j.stage_ids.clone(),
        num_tasks: j.num_tasks,
        completed_tasks: j.completed_tasks,
        failed_tasks: j.failed_tasks,
        killed_tasks: j.killed_tasks,
        skipped_tasks: j.skipped_tasks,
        completed_stages: j.completed_stages.len(),
        skipped_stages: j.skipped_stages.len(),
        failed_stages: j.failed_stages,
        failure: j.failure.clone(),
        call_site: call.to_string(),
    }
}

/// The most code sites a finding names.
const MAX_CODE_SITES: usize = 5;

/// Each of `ids` found in `by_id`, with its call and `what` it is.
fn named<'s>(
    ids: &'s [i64],
    by_id: &'s HashMap<i64, &'s str>,
    what: &'static str,
) -> impl Iterator<Item = (&'static str, i64, &'s str)> + 's {
    ids.iter()
        .filter_map(move |id| by_id.get(id).map(|call| (what, *id, *call)))
}

/// Where each job, stage and SQL execution was called, by its id: the first of each id, as
/// a walk of the application's lists finds it.
struct Sites<'a> {
    jobs: HashMap<i64, &'a str>,
    stages: HashMap<i64, &'a str>,
    sql_jobs: HashMap<i64, &'a str>,
}

impl<'a> Sites<'a> {
    /// `job_calls`: each of `app.jobs`' call sites.
    fn index(app: &'a Application, job_calls: &'a [String]) -> Sites<'a> {
        let mut sites = Sites {
            jobs: HashMap::new(),
            stages: HashMap::new(),
            sql_jobs: HashMap::new(),
        };
        for (job, call) in app.jobs.iter().zip(job_calls) {
            sites.jobs.entry(job.job_id).or_insert(call);
            if let Some(id) = job.sql_execution_id {
                sites.sql_jobs.entry(id).or_insert(call);
            }
        }
        for stage in &app.stages {
            sites.stages.entry(stage.stage_id).or_insert(&stage.name);
        }
        sites
    }

    /// Where in the user's program the finding's jobs, stages and SQL executions were called
    /// (`job 2: collect at job.py:107`), as the log names them: at most [`MAX_CODE_SITES`],
    /// each call once.
    fn code_sites(&self, scope: &Scope) -> Vec<CodeSite> {
        let mut sites: Vec<CodeSite> = Vec::new();
        for (what, id, call) in named(&scope.job_ids, &self.jobs, "job")
            .chain(named(&scope.stage_ids, &self.stages, "stage"))
            .chain(named(
                &scope.sql_execution_ids,
                &self.sql_jobs,
                "SQL execution",
            ))
        {
            if sites.len() == MAX_CODE_SITES {
                break;
            }
            let site = CodeSite::new(format!("{what} {id}"), call);
            if !site.call.is_empty()
                && !sites
                    .iter()
                    .any(|s| s.call == site.call && s.work == site.work)
            {
                sites.push(site);
            }
        }
        sites
    }
}

/// History Server quantiles of the successful tasks' durations, as the rules took them.
fn task_duration_quantiles(stats: &StageStats) -> Option<Quantiles> {
    let q = stats.facts.duration_quantiles?;
    Some(Quantiles {
        min: q[0],
        p25: q[1],
        p50: q[2],
        p75: q[3],
        p95: q[4],
        max: q[5],
    })
}

fn stage_out(app: &Application, s: &StageAttempt, stats: &StageStats) -> StageOut {
    let t = &s.totals;
    StageOut {
        stage_id: s.stage_id,
        attempt_id: s.attempt_id,
        name: s.name.clone(),
        status: s.status,
        num_tasks: s.num_tasks,
        completed_tasks: s.completed_tasks,
        failed_tasks: s.failed_tasks,
        killed_tasks: s.killed_tasks,
        submission_ms: s.submission_ms,
        completion_ms: s.completion_ms,
        duration_ms: s.duration_ms(app.effective_end_ms()),
        task_duration_ms: task_duration_quantiles(stats),
        executor_run_time_ms: t.executor_run_time,
        executor_cpu_time_ms: t.executor_cpu_time / 1_000_000,
        jvm_gc_time_ms: t.jvm_gc_time,
        shuffle_read_bytes: t.shuffle_read_bytes(),
        shuffle_read_records: t.shuffle_read_records,
        shuffle_write_bytes: t.shuffle_write_bytes,
        shuffle_write_records: t.shuffle_write_records,
        input_bytes: t.input_bytes,
        input_records: t.input_records,
        output_bytes: t.output_bytes,
        output_records: t.output_records,
        memory_spill_bytes: t.memory_bytes_spilled,
        disk_spill_bytes: t.disk_bytes_spilled,
        peak_execution_memory_bytes: t.peak_execution_memory,
        job_ids: s.job_ids.clone(),
        failure_reason: s.failure_reason.clone(),
    }
}

fn executor_out(app: &Application, e: &sparkdiag_model::Executor) -> ExecutorOut {
    let exit_code = e
        .removed_reason
        .as_deref()
        .and_then(sparkdiag_model::exit_code_of);
    ExecutorOut {
        executor_id: e.id.clone(),
        host: e.host.clone(),
        cores: e.cores,
        added_ms: e.added_ms,
        removed_ms: e.removed_ms,
        removed_reason: e.removed_reason.clone(),
        removal: app.removal(e),
        exit_code,
        exit_code_means: exit_code
            .and_then(|code| sparkdiag_model::explain_exit_code_on(code, app.cluster_manager()))
            .map(str::to_string),
        task_time_ms: e.task_time_ms,
        run_time_ms: e.run_time_ms,
        jvm_gc_time_ms: e.jvm_gc_time_ms,
        total_tasks: e.total_tasks,
        completed_tasks: e.completed_tasks,
        failed_tasks: e.failed_tasks,
        killed_tasks: e.killed_tasks,
        input_bytes: e.input_bytes,
        shuffle_read_bytes: e.shuffle_read_bytes,
        shuffle_write_bytes: e.shuffle_write_bytes,
        memory_spill_bytes: e.memory_spill_bytes,
        disk_spill_bytes: e.disk_spill_bytes,
        max_memory_bytes: e.max_memory,
        peak_jvm_heap_bytes: e.peak_metrics.map(|p| p.jvm_heap_memory),
    }
}

/// Exchange metrics updated by the tasks that write the shuffle, and by those that read it.
const SHUFFLE_WRITE_METRICS: &[&str] = &[
    "shuffle bytes written",
    "shuffle records written",
    "shuffle write time",
];
const SHUFFLE_READ_METRICS: &[&str] = &[
    "records read",
    "local bytes read",
    "remote bytes read",
    "fetch wait time",
    "local blocks read",
    "remote blocks read",
];

fn sql_out(s: &sparkdiag_model::SqlExecution, values: &sparkdiag_model::SqlMetricValues) -> SqlOut {
    let plan = s.plan_that_ran();
    // Spark's own node ids (its UI, the History Server's /sql API): wrappers have none.
    let nodes: Vec<(usize, &SparkPlanInfo)> = plan
        .map(|root| sparkdiag_model::PlanGraph::new(root).nodes())
        .unwrap_or_default();
    let plan_nodes: Vec<PlanNodeOut> = nodes
        .iter()
        .map(|&(index, node)| {
            let mut stage_ids: Vec<i64> = node
                .metrics
                .iter()
                .filter_map(|m| values.values.get(&m.accumulator_id))
                .flat_map(|(_, stages)| stages.iter().copied())
                .collect();
            stage_ids.sort_unstable();
            stage_ids.dedup();
            PlanNodeOut {
                index,
                name: node.node_name.clone(),
                metrics: values.of_node(node, s),
                stage_ids,
            }
        })
        .collect();
    let stages_of = |node: &SparkPlanInfo, names: &[&str]| -> Vec<i64> {
        let mut ids: Vec<i64> = node
            .metrics
            .iter()
            .filter(|m| names.contains(&m.name.as_str()))
            .filter_map(|m| values.values.get(&m.accumulator_id))
            .flat_map(|(_, stages)| stages.iter().copied())
            .collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    };
    let exchange_stages = nodes
        .iter()
        .zip(&plan_nodes)
        .filter(|((_, n), _)| n.node_name == "Exchange")
        .map(|(&(index, n), out)| ExchangeStagesOut {
            node: index,
            writer_stage_ids: stages_of(n, SHUFFLE_WRITE_METRICS),
            reader_stage_ids: stages_of(n, SHUFFLE_READ_METRICS),
            shuffle_bytes_written: out.metrics.get("shuffle bytes written").copied(),
            shuffle_records_written: out.metrics.get("shuffle records written").copied(),
        })
        .collect();
    SqlOut {
        execution_id: s.execution_id,
        description: s.description.clone(),
        start_ms: s.start_ms,
        end_ms: s.end_ms,
        error: s.error.clone(),
        exchanges: plan.map_or(0, |p| count_nodes(p, &|n| n == "Exchange")),
        plan_nodes,
        exchange_stages,
        job_ids: s.job_ids.clone(),
    }
}

fn count_nodes(node: &SparkPlanInfo, keep: &dyn Fn(&str) -> bool) -> usize {
    usize::from(keep(&node.node_name))
        + node
            .children
            .iter()
            .map(|c| count_nodes(c, keep))
            .sum::<usize>()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code sites as they were first found: each id looked up by a walk of the lists and
    /// each job's call site read afresh, every id of the scope tried.
    fn code_sites_walked(app: &Application, scope: &Scope) -> Vec<CodeSite> {
        let mut sites: Vec<CodeSite> = Vec::new();
        let mut add = |work: String, call: &str| {
            let site = CodeSite::new(work, call);
            if !site.call.is_empty()
                && sites.len() < MAX_CODE_SITES
                && !sites
                    .iter()
                    .any(|s| s.call == site.call && s.work == site.work)
            {
                sites.push(site);
            }
        };
        for &id in &scope.job_ids {
            if let Some(job) = app.jobs.iter().find(|j| j.job_id == id) {
                add(format!("job {id}"), &app.user_call_site(job));
            }
        }
        for &id in &scope.stage_ids {
            if let Some(stage) = app.stages.iter().find(|s| s.stage_id == id) {
                add(format!("stage {id}"), &stage.name);
            }
        }
        for &id in &scope.sql_execution_ids {
            if let Some(job) = app.jobs.iter().find(|j| j.sql_execution_id == Some(id)) {
                add(format!("SQL execution {id}"), &app.user_call_site(job));
            }
        }
        sites
    }

    /// Each finding's code sites, from the index made once, are the ones a walk of the lists
    /// finds, on real logs whose findings name hundreds of jobs and stages (a driver loop) and
    /// queries; and a scope naming every job, stage and query gets the most sites.
    #[test]
    fn code_sites_from_the_index_are_the_walks() {
        let config = sparkdiag_rules::Config::default();
        let mut compared = 0;
        for log in [
            "logs/patterns/driver-loop-serial",
            "logs/patterns/driver-loop-threadpool",
            "logs/patterns/skew-join-aqe",
            "logs/patterns/executor-lost",
        ] {
            let path = format!("{}/../../testdata/{log}", env!("CARGO_MANIFEST_DIR"));
            let input = &sparkdiag_eventlog::discover(&path).unwrap()[0];
            let analysis = crate::analyze(input, &crate::Options::new(&config)).unwrap();
            let app = &analysis.app;
            let job_calls: Vec<String> = app.jobs.iter().map(|j| app.user_call_site(j)).collect();
            let sites = Sites::index(app, &job_calls);
            let everything = Scope {
                job_ids: app.jobs.iter().map(|j| j.job_id).collect(),
                stage_ids: app.stages.iter().map(|s| s.stage_id).collect(),
                sql_execution_ids: app.sql.iter().map(|s| s.execution_id).collect(),
                ..Scope::default()
            };
            let scopes = analysis
                .report
                .findings
                .iter()
                .map(|f| &f.finding.scope)
                .chain([&everything]);
            for scope in scopes {
                let walked = code_sites_walked(app, scope);
                let indexed = sites.code_sites(scope);
                assert_eq!(
                    format!("{indexed:?}"),
                    format!("{walked:?}"),
                    "{log}: {scope:?}"
                );
                compared += 1;
            }
            assert!(!sites.code_sites(&everything).is_empty(), "{log}");
        }
        assert!(compared >= 8, "{compared} scopes compared");
    }
}
