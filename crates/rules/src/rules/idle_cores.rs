//! UT001 idle-cores: executor cores allocated but not running tasks.

use super::common::{duration, ratio};
use crate::{Change, Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};

pub const MIN_IDLE_SHARE: Threshold = threshold(
    "min_idle_share",
    0.5,
    "share",
    "idle share of allocated core time worth a finding",
    "DataFlint's and SparkForensics' idle-cores alert",
);

pub const MIN_CORE_H: Threshold = threshold(
    "min_core_h",
    0.1,
    "core-hours",
    "idle core time under which a short run is not worth a finding",
    "sparkdiag's own guard",
);

pub const MEDIUM_CORE_H: Threshold = threshold(
    "medium_core_h",
    1.0,
    "core-hours",
    "idle core-hours that make it medium severity",
    "sparkdiag's severity band",
);

pub const HIGH_CORE_H: Threshold = threshold(
    "high_core_h",
    10.0,
    "core-hours",
    "idle core-hours that make it high severity",
    "sparkdiag's severity band",
);

declare_rule! {
    /// ## What it does
    /// Adds up the core time executors were alive (cores x lifetime) and the time their cores
    /// ran tasks, and flags applications that kept most of their cores idle.
    ///
    /// ## Why is this bad?
    /// Idle cores cost the same as busy ones. Idleness comes from the driver working alone
    /// (DR001), too few tasks for the cores (PA002), stages waiting on one long task (SK001), or
    /// simply too many executors for the job.
    ///
    /// ## How to fix it
    /// Fix the cause named by the other findings first; then size the cluster to the work:
    /// `spark.dynamicAllocation.enabled=true` with `spark.dynamicAllocation.executorIdleTimeout=60s`,
    /// or fewer or smaller executors.
    ///
    /// ## Threshold and its source
    /// Idle share over `min_idle_share` = 50 % (DataFlint's and SparkForensics' idle-cores alert),
    /// and at least `min_core_h` = 0.1 idle core-hours, so a short test run is not a finding.
    /// Idleness costs money rather than wall-clock time: the finding claims no wall-clock time
    /// (`impact_ms` 0) and carries the idle core-hours, and its severity comes from them:
    /// `medium_core_h` = 1 core-hour is medium, `high_core_h` = 10 high, less is low, and never
    /// above the core-hours scale of the README's impact model.
    pub static IDLE_CORES = {
        code: "UT001",
        name: "idle-cores",
        category: Utilization,
        claims: Symptom,
        needs: [Executors, Tasks],
        summary: "Most of the executor core time the application held was idle",
        thresholds: &[
            MIN_IDLE_SHARE,
            MIN_CORE_H,
            MEDIUM_CORE_H,
            HIGH_CORE_H,
        ] as &[Threshold],
        check: check,
        batch_only: true,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let app = ctx.app;
    let Some(core_time) = app.executor_core_ms() else {
        return Vec::new();
    };
    let (allocated, busy, idle) = (core_time.held, core_time.busy, core_time.idle());
    let share = ratio(idle as f64, allocated as f64);
    if allocated == 0
        || share < t.get(&MIN_IDLE_SHARE)
        || (idle as f64 / 3_600_000.0) < t.get(&MIN_CORE_H)
    {
        return Vec::new();
    }
    let core_hours = idle as f64 / 3_600_000.0;
    let severity = if core_hours >= t.get(&HIGH_CORE_H) {
        Severity::High
    } else if core_hours >= t.get(&MEDIUM_CORE_H) {
        Severity::Medium
    } else {
        Severity::Low
    };
    let impact = idle / ctx.cores;
    if let Some(why) = app.interactive() {
        // Idle cores in a session people type into cost money, not wall-clock time.
        let title = format!(
            "{:.0}% of the executor core time was idle ({:.1} core-hours of {:.1}): {why}, so executors waited for the next command",
            100.0 * share,
            core_hours,
            allocated as f64 / 3_600_000.0,
        );
        return vec![
            Finding::new(&IDLE_CORES, severity.at_most(Severity::Medium), title, 0)
                .costs_core_hours(core_hours)
                .proposes(
                    Change::ReleaseIdleExecutors,
                    "the idle core time would not be paid for; the run takes as long",
                )
                .evidence("interactive", why)
                .evidence("allocated_core_ms", allocated)
                .evidence("busy_core_ms", busy)
                .evidence("idle_core_ms", idle)
                .evidence("idle_share", (share * 1000.0).round() / 1000.0)
                .recommend(format!(
                    "Release executors while nobody is typing: {}.",
                    super::common::release_idle_executors(ctx)
                )),
        ];
    }
    // Idle cores cost money, not wall-clock time: releasing them leaves the run as long.
    let title = format!(
        "{:.0}% of the executor core time was idle: {:.1} core-hours of {:.1} held (paid for, about {} on all cores)",
        100.0 * share,
        core_hours,
        allocated as f64 / 3_600_000.0,
        duration(impact)
    );
    vec![
        Finding::new(&IDLE_CORES, severity, title, 0)
            .costs_core_hours(core_hours)
            .proposes(Change::ReleaseIdleExecutors, "the idle core time would not be paid for; the run takes as long")
            .evidence("allocated_core_ms", allocated)
            .evidence("busy_core_ms", busy)
            .evidence("idle_core_ms", idle)
            .evidence("idle_share", (share * 1000.0).round() / 1000.0)
            .recommend(format!("Fix the causes the other findings name (driver-only time, too few tasks, skew), then size the cluster to the work with fewer executors, or let them go when idle: {}.", super::common::release_idle_executors(ctx))),
    ]
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::IDLE_CORES;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_serial_loop_with_no_core_hour_floor() {
        assert_fires(
            &on_log(
                &IDLE_CORES,
                "patterns/driver-loop-serial",
                &["UT001.min_core_h=0"],
            ),
            IDLE_CORES.code,
        );
    }

    #[test]
    fn is_quiet_on_the_same_short_run_at_its_defaults() {
        assert_quiet(&on_log(&IDLE_CORES, "patterns/driver-loop-serial", &[]));
    }
}
