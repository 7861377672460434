//! Helpers several rules share.

use sparkdiag_model::{Application, StageAttempt, Task, TaskOutcome};

pub use sparkdiag_model::units::{duration, human_bytes as bytes};

/// How much sooner a stage would end if no task ran longer than `cap_ms`: its last finish
/// today, minus its last finish with every task cut to the cap.
pub fn stage_end_saving(app: &Application, stage: &StageAttempt, cap_ms: u32) -> i64 {
    let tasks = app.stage_tasks(stage);
    let end = |t: &Task, d: u32| t.launch_ms + i64::from(d);
    let now = tasks
        .iter()
        .map(|t| end(t, t.duration_ms))
        .max()
        .unwrap_or(0);
    let capped = tasks
        .iter()
        .map(|t| end(t, t.duration_ms.min(cap_ms)))
        .max()
        .unwrap_or(0);
    (now - capped).max(0)
}

/// Successful tasks with metrics: the population the History Server's quantiles use.
pub fn successful(tasks: &[Task]) -> impl Iterator<Item = &Task> {
    tasks
        .iter()
        .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics)
}

/// `a / b` as a ratio, 0 when `b` is 0.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { 0.0 }
}

/// "Stage 3 (attempt 1)" or "Stage 3", with the stage's name.
pub fn stage_label(stage: &StageAttempt) -> String {
    let name = stage.name.lines().next().unwrap_or_default();
    let id = if stage.attempt_id > 0 {
        format!("Stage {} (attempt {})", stage.stage_id, stage.attempt_id)
    } else {
        format!("Stage {}", stage.stage_id)
    };
    if name.is_empty() {
        id
    } else {
        format!("{id} `{name}`")
    }
}

pub fn property<'a>(ctx: &'a crate::Context, key: &str) -> Option<&'a str> {
    ctx.app.spark_properties.get(key).map(|v| v.trim())
}

/// Whether AQE was on: the setting, or Spark's default for the version that wrote the log.
pub fn aqe_enabled(ctx: &crate::Context) -> bool {
    match property(ctx, "spark.sql.adaptive.enabled") {
        Some(value) => value.eq_ignore_ascii_case("true"),
        // Unknown versions (Databricks runtimes without their metadata event) have AQE on.
        None => ctx.app.spark_version_number().is_none_or(|v| v >= (3, 2)),
    }
}

/// AQE exists (Spark 3.0 and later, or a Databricks runtime) and applies: the application ran
/// SQL / DataFrame queries. Advice to turn it on fits only then.
pub fn aqe_applies(ctx: &crate::Context) -> bool {
    ctx.app.uses_sql()
        && match ctx.app.spark_version_number() {
            Some(v) => v >= (3, 0),
            None => ctx.app.platform() == sparkdiag_model::Platform::Databricks,
        }
}

/// How to get `n` partitions in this application: the SQL setting for DataFrame work (with AQE
/// where it exists), the RDD API's own knobs for an RDD-only application.
pub fn partitions_advice(ctx: &crate::Context, n: i64) -> String {
    if !ctx.app.uses_sql() {
        format!(
            "this application uses RDDs only, so spark.sql.shuffle.partitions does not apply: pass numPartitions={n} to the shuffle (reduceByKey, groupByKey, join, repartition({n})) or set spark.default.parallelism={n}"
        )
    } else if aqe_applies(ctx) {
        format!(
            "spark.sql.shuffle.partitions={n}, or let AQE size them (spark.sql.adaptive.enabled=true with spark.sql.adaptive.advisoryPartitionSizeInBytes), or df.repartition({n}, key) before this step"
        )
    } else {
        format!(
            "spark.sql.shuffle.partitions={n} (this Spark version has no adaptive execution to size them), or df.repartition({n}, key) before this step"
        )
    }
}

pub fn shuffle_stages<'a>(
    ctx: &'a crate::Context,
) -> impl Iterator<Item = (&'a sparkdiag_model::StageAttempt, &'a crate::StageStats)> {
    ctx.stage_stats()
        .filter(|(s, _)| s.totals.shuffle_read_bytes() > 0 || s.totals.shuffle_read_records > 0)
}
