//! The evidence ledger of a report (`sparkdiag_contract::Ledger`): what the log held of each
//! kind of evidence the rules read, which rules could not run on it and why, and which ran and
//! found nothing, with the thresholds they ran with.

use sparkdiag_contract::ledger::{EvidenceCount, RuleNotRun, RuleQuiet, ThresholdUsed};
use sparkdiag_contract::{Evidence, Ledger, Report};
use sparkdiag_model::Application;
use sparkdiag_rules::{Config, Rule};

/// The ledger of `report`, made from `app` and its `facts` under `config`.
pub fn ledger(app: &Application, config: &Config, report: &Report) -> Ledger {
    let evidence: Vec<EvidenceCount> = Evidence::ALL
        .iter()
        .map(|&kind| {
            let count = count(kind, app, report);
            EvidenceCount {
                kind,
                present: count > 0,
                count,
                about: kind.about(),
            }
        })
        .collect();
    let absent: Vec<Evidence> = evidence
        .iter()
        .filter(|e| !e.present)
        .map(|e| e.kind)
        .collect();
    let source = config.source();
    let mut not_run = Vec::new();
    let mut found_nothing = Vec::new();
    for rule in sparkdiag_rules::all_rules() {
        let stood_down =
            |reason: &'static str, detail: String, missing: Vec<Evidence>| RuleNotRun {
                rule: rule.code,
                name: rule.name,
                reason,
                detail,
                missing,
            };
        let missing: Vec<Evidence> = rule
            .needs
            .iter()
            .copied()
            .filter(|n| absent.contains(n))
            .collect();
        if app.start_ms.is_none() {
            not_run.push(stood_down(
                "no-application",
                "the log has no application start: no rule ran".into(),
                Vec::new(),
            ));
        } else if !config.enabled(rule) {
            let from = source
                .disabled
                .iter()
                .find(|d| d.rule == rule.code)
                .map_or("the configuration", |d| d.from.as_str());
            not_run.push(stood_down(
                "disabled",
                format!("switched off by {from}"),
                Vec::new(),
            ));
        } else if !rule.applies_to(report.application.workload) {
            not_run.push(stood_down(
                "workload",
                format!(
                    "it describes a batch program's shape, and this is a {} application",
                    report.application.workload.name()
                ),
                Vec::new(),
            ));
        } else if !missing.is_empty() {
            let what: Vec<&str> = missing.iter().map(|m| m.absent()).collect();
            not_run.push(stood_down(
                "missing-evidence",
                format!("the log has {}", what.join(", ")),
                missing,
            ));
        } else if !report.findings.iter().any(|f| f.finding.rule == rule.code) {
            found_nothing.push(RuleQuiet {
                rule: rule.code,
                name: rule.name,
                thresholds: thresholds(rule, config),
            });
        }
    }
    Ledger {
        evidence,
        not_run,
        found_nothing,
    }
}

/// How much of `kind` the log holds.
fn count(kind: Evidence, app: &Application, report: &Report) -> u64 {
    let n = match kind {
        Evidence::Tasks => app.tasks.len(),
        // The task ends of the stage attempts whose tasks carried metrics, failed attempts
        // too (a run whose every task died of OOM still measured its GC), counted without
        // unfolding a folded stage.
        Evidence::TaskMetrics => app
            .stages
            .iter()
            .enumerate()
            .filter(|(_, s)| s.totals.executor_run_time > 0 || s.totals.jvm_gc_time > 0)
            .map(|(i, _)| app.tasks.count_of_stage(i))
            .sum(),
        Evidence::Jobs => app.jobs.len(),
        Evidence::Executors => app.executors.len(),
        Evidence::ExecutorMetrics => report.memory.as_ref().map_or(0, |m| m.executors.len()),
        Evidence::SqlPlans => app
            .sql
            .iter()
            .filter(|s| s.plan_that_ran().is_some())
            .count(),
        Evidence::Environment => app.spark_properties.len(),
        Evidence::StreamingQueries => {
            let queries = &app.streaming.queries;
            return queries
                .iter()
                .map(|q| 1 + q.totals.progress_events + u64::from(q.terminated.is_some()))
                .sum();
        }
    };
    n as u64
}

/// The thresholds `rule` ran with.
fn thresholds(rule: &Rule, config: &Config) -> Vec<ThresholdUsed> {
    rule.thresholds
        .iter()
        .map(|t| ThresholdUsed {
            key: t.key,
            value: config.value(rule, t),
            default: t.default,
            unit: t.unit,
        })
        .collect()
}
