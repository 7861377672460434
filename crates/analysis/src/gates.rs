//! CI gates: the budgets a pipeline sets on a run (`--max-runtime`, `--max-spill`, `--max-skew`,
//! `--max-failed-tasks`, `--max-idle-core-hours`, `--max-cost`, `--fail-on`) or on a change
//! (`diff`'s `--fail-on-regression`, `--fail-on-new`, `--fail-on-output-change`), each measured
//! on the report and judged passed, failed or inconclusive ([`sparkdiag_contract::Gates`]).
//!
//! A log that did not end (or was cut) holds a lower bound of each total: a gate it already
//! exceeds has failed, one it does not exceed cannot be judged and is inconclusive.

use std::time::Duration;

use sparkdiag_contract::diff::Diff;
use sparkdiag_contract::units::{duration, human_bytes};
use sparkdiag_contract::{Exit, GateCheck, Gates, Report, Severity};

/// The budgets of one run, as the command line gives them; `None` is no gate. With the `cli`
/// feature they parse as `analyze`'s gate flags, whose help is these fields' documentation
/// (`--fail-on` is `analyze`'s own flag, set beside them).
#[derive(Debug, Clone, Default, PartialEq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
#[cfg_attr(feature = "cli", command(next_help_heading = "Gates (for CI)"))]
pub struct Budgets {
    /// Exit 1 when the application ran longer than this (30m, 2h).
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "DURATION", value_parser = sparkdiag_contract::units::parse_duration)
    )]
    pub max_runtime: Option<Duration>,
    /// Exit 1 when tasks spilled more than this to disk (10GiB, 512MiB).
    #[cfg_attr(
        feature = "cli",
        arg(long = "max-spill", value_name = "SIZE", value_parser = sparkdiag_contract::units::parse_size)
    )]
    pub max_spill_bytes: Option<u64>,
    /// Exit 1 when a stage's longest task took more than RATIO times its median (stages whose
    /// longest task took 1 s or more).
    #[cfg_attr(feature = "cli", arg(long, value_name = "RATIO"))]
    pub max_skew: Option<f64>,
    /// Exit 1 when more task attempts than this failed (kills apart).
    #[cfg_attr(feature = "cli", arg(long, value_name = "N"))]
    pub max_failed_tasks: Option<u64>,
    /// Exit 1 when executors held more idle core-hours than this (cores times lifetime, less
    /// task time).
    #[cfg_attr(feature = "cli", arg(long, value_name = "CORE_HOURS"))]
    pub max_idle_core_hours: Option<f64>,
    /// Exit 1 when the run cost more than this: runtime × peak cores at --price-per-core-hour.
    #[cfg_attr(feature = "cli", arg(long, value_name = "AMOUNT"))]
    pub max_cost: Option<f64>,
    /// A finding at least this severe fails the run (`--fail-on`).
    #[cfg_attr(feature = "cli", arg(skip))]
    pub fail_on: Option<Severity>,
}

/// Stages whose longest task is shorter than this are left out of the skew gate: a 40 ms task
/// five times an 8 ms median costs nothing.
pub const SKEW_MIN_TASK_MS: u32 = 1_000;

impl Budgets {
    /// No gate asked for.
    pub fn is_empty(&self) -> bool {
        *self == Budgets::default()
    }
}

/// `report` judged against `budgets`; `None` when no gate was asked for.
pub fn check(report: &Report, budgets: &Budgets) -> Option<Gates> {
    if budgets.is_empty() {
        return None;
    }
    // A cut or unfinished log: its totals are lower bounds.
    let partial = (!report.source.complete).then(|| {
        if report.application.end_ms.is_none() {
            "the log has no application end"
        } else {
            "the log is cut or damaged"
        }
    });
    let s = &report.summary;
    let runtime = report.application.duration_ms;
    let mut checks = Vec::new();
    if let Some(limit) = budgets.max_runtime {
        checks.push(judge(
            "max-runtime",
            runtime.map(|ms| ms as f64),
            limit.as_millis() as f64,
            "ms",
            partial.or(runtime
                .is_none()
                .then_some("the log has no application start")),
            |v| duration(v as i64),
        ));
    }
    if let Some(limit) = budgets.max_spill_bytes {
        checks.push(judge(
            "max-spill",
            Some(s.disk_spill_bytes as f64),
            limit as f64,
            "bytes",
            partial,
            |v| human_bytes(v as i64),
        ));
    }
    if let Some(limit) = budgets.max_skew {
        checks.push(judge(
            "max-skew",
            Some(skew(report)),
            limit,
            "ratio",
            partial,
            |v| format!("{v:.1}x"),
        ));
    }
    if let Some(limit) = budgets.max_failed_tasks {
        checks.push(judge(
            "max-failed-tasks",
            Some(s.failed_tasks as f64),
            limit as f64,
            "tasks",
            partial,
            |v| format!("{v:.0} failed task(s)"),
        ));
    }
    if let Some(limit) = budgets.max_idle_core_hours {
        checks.push(judge(
            "max-idle-core-hours",
            Some(s.idle_core_hours),
            limit,
            "core-hours",
            partial,
            |v| format!("{v:.2} idle core-hours"),
        ));
    }
    if let Some(limit) = budgets.max_cost {
        let cost = runtime
            .zip(report.prices.per_core_hour)
            .map(|(ms, price)| ms as f64 * s.peak_cores as f64 / 3_600_000.0 * price);
        let unknown = report
            .prices
            .per_core_hour
            .is_none()
            .then_some("no --price-per-core-hour to price the core-hours with");
        checks.push(judge(
            "max-cost",
            cost,
            limit,
            "money",
            unknown.or(partial),
            |v| format!("{v:.2}"),
        ));
    }
    if let Some(floor) = budgets.fail_on {
        let at_least = report
            .findings
            .iter()
            .filter(|f| f.finding.severity <= floor)
            .count();
        // Findings are what the log shows: a cut log's findings still stand.
        checks.push(judge(
            fail_on_gate(floor),
            Some(at_least as f64),
            0.0,
            "findings",
            None,
            |v| format!("{v:.0} finding(s) at {} or above", floor.name()),
        ));
    }
    Some(Gates::of(checks))
}

/// `fail-on high`: the gate's name says its severity.
fn fail_on_gate(floor: Severity) -> &'static str {
    match floor {
        Severity::Critical => "fail-on critical",
        Severity::High => "fail-on high",
        Severity::Medium => "fail-on medium",
        Severity::Low => "fail-on low",
        Severity::Info => "fail-on info",
    }
}

/// The diff's gates: runtime or core-hours up by more than `regression_pct` percent, a new
/// finding at least `new_at_least` severe, the outputs changed.
pub fn check_diff(
    diff: &Diff,
    regression_pct: Option<f64>,
    new_at_least: Option<Severity>,
    output_change: bool,
) -> Option<Gates> {
    if regression_pct.is_none() && new_at_least.is_none() && !output_change {
        return None;
    }
    // An unfinished run's numbers are what it reached: a lower bound, unless its work was
    // projected to its whole length.
    let whole = |r: &sparkdiag_contract::diff::RunOut| r.complete || r.projection.is_some();
    let partial =
        (!(whole(&diff.before) && whole(&diff.after))).then_some("a run did not finish in its log");
    let mut checks = Vec::new();
    if let Some(pct) = regression_pct {
        let worst = diff
            .metrics
            .iter()
            .filter(|m| matches!(m.metric, "runtime_ms" | "core_hours"))
            .filter_map(|m| Some((m.ratio? - 1.0) * 100.0))
            .fold(None, |worst: Option<f64>, up| {
                Some(worst.map_or(up, |w| w.max(up)))
            });
        checks.push(judge(
            "fail-on-regression",
            worst,
            pct,
            "percent",
            partial.or(worst
                .is_none()
                .then_some("neither runtime nor core-hours can be compared")),
            |v| format!("{v:+.0}% runtime or core-hours"),
        ));
    }
    if let Some(floor) = new_at_least {
        let new = diff
            .findings
            .new
            .iter()
            .filter(|f| f.severity_after.is_some_and(|s| s <= floor))
            .count();
        checks.push(judge(
            match floor {
                Severity::Critical => "fail-on-new critical",
                Severity::High => "fail-on-new high",
                Severity::Medium => "fail-on-new medium",
                Severity::Low => "fail-on-new low",
                Severity::Info => "fail-on-new info",
            },
            Some(new as f64),
            0.0,
            "findings",
            None,
            |v| format!("{v:.0} new finding(s) at {} or above", floor.name()),
        ));
    }
    if output_change {
        checks.push(judge(
            "fail-on-output-change",
            Some(f64::from(u8::from(diff.outputs_changed()))),
            0.0,
            "outputs",
            None,
            |v| {
                if v > 0.0 {
                    "the outputs differ".into()
                } else {
                    "the outputs agree".into()
                }
            },
        ));
    }
    Some(Gates::of(checks))
}

/// The largest ratio of a stage's longest successful task to its median, over the stages whose
/// longest task took at least [`SKEW_MIN_TASK_MS`]; 1 when none did.
pub fn skew(report: &Report) -> f64 {
    report
        .stages
        .iter()
        .filter_map(|s| s.task_duration_ms.as_ref())
        .filter(|q| q.max >= SKEW_MIN_TASK_MS && q.p50 > 0)
        .map(|q| f64::from(q.max) / f64::from(q.p50))
        .fold(1.0, f64::max)
}

/// One gate: `measured` against `limit`; `partial` says why a value within the limit cannot be
/// trusted (a lower bound), and without a value the gate cannot be judged at all.
fn judge(
    gate: &'static str,
    measured: Option<f64>,
    limit: f64,
    unit: &'static str,
    partial: Option<&str>,
    show: impl Fn(f64) -> String,
) -> GateCheck {
    // The limit in the measure's own terms, without its words: `1m 00s`, `10.0 GiB`, `2`.
    let limit_shown = match unit {
        "ms" => duration(limit as i64),
        "bytes" => human_bytes(limit as i64),
        "ratio" => format!("{limit:.1}x"),
        "percent" => format!("{limit:+.0}%"),
        "money" | "core-hours" => format!("{limit:.2}"),
        _ => format!("{limit}"),
    };
    let status = match measured {
        Some(v) if v > limit => Exit::Failed,
        Some(_) if partial.is_none() => Exit::Passed,
        _ => Exit::Inconclusive,
    };
    let value = match (measured, status) {
        (None, _) => "not measured".to_string(),
        (Some(v), Exit::Inconclusive) => format!("{} so far", show(v)),
        (Some(v), _) => show(v),
    };
    let verdict = match (status, partial) {
        (Exit::Inconclusive, Some(why)) => format!("inconclusive, {why}"),
        (Exit::Inconclusive, None) => "inconclusive".to_string(),
        (Exit::Failed, _) => "FAILED".to_string(),
        _ => "passed".to_string(),
    };
    GateCheck {
        gate,
        measured,
        limit,
        unit,
        status,
        line: format!("{gate}: {value}, limit {limit_shown}: {verdict}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lower_bound_within_its_limit_cannot_be_judged_but_one_beyond_it_fails() {
        let partial = Some("the log has no application end");
        let show = |v: f64| format!("{v} ms");
        let over = judge("max-runtime", Some(10.0), 5.0, "ms", partial, show);
        assert_eq!(over.status, Exit::Failed);
        assert_eq!(over.line, "max-runtime: 10 ms, limit 5 ms: FAILED");
        let under = judge("max-runtime", Some(3.0), 5.0, "ms", partial, show);
        assert_eq!(under.status, Exit::Inconclusive);
        assert_eq!(
            under.line,
            "max-runtime: 3 ms so far, limit 5 ms: inconclusive, the log has no application end"
        );
        let whole = judge("max-runtime", Some(5.0), 5.0, "ms", None, show);
        assert_eq!(whole.status, Exit::Passed, "the limit itself passes");
        assert_eq!(
            judge("max-cost", None, 5.0, "money", Some("no price"), show).status,
            Exit::Inconclusive
        );
    }
}
