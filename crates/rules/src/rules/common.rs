//! Helpers several rules share.

use sparkdiag_model::StageAttempt;

pub use sparkdiag_contract::units::{clip, duration, human_bytes as bytes};
use sparkdiag_facts::settings::spark_seconds_setting_ms;

/// How much sooner a stage would end if no task ran longer than its successful tasks' median:
/// its last finish today, minus its last finish with every task cut to the median.
pub fn stage_end_saving_at_median(stats: &crate::StageStats) -> i64 {
    (stats.facts.last_end_ms - stats.facts.last_end_at_median_ms).max(0)
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
    sparkdiag_facts::settings::aqe_enabled(ctx.app)
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
    } else if aqe_applies(ctx) && aqe_enabled(ctx) {
        format!(
            "spark.sql.shuffle.partitions={n} (AQE is on, and it merges small partitions but never makes more than this setting; spark.sql.adaptive.coalescePartitions.initialPartitionNum={n} raises only its starting count), or df.repartition({n}, key) before this step"
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

/// The one setting that gives `stage` `n` partitions where [`partitions_advice`] applies (no
/// explicit call decided them): the SQL setting for DataFrame work, the RDD default otherwise.
/// None for a stage that reads input, whose splits neither setting sizes.
pub fn partitions_setting(ctx: &crate::Context, stage: &StageAttempt, n: i64) -> Option<String> {
    let shape = ctx.shape(stage);
    if shape.input || shape.listing {
        return None;
    }
    Some(if ctx.app.uses_sql() {
        format!("spark.sql.shuffle.partitions={n}")
    } else {
        format!("spark.default.parallelism={n}")
    })
}

/// What turns on AQE's coalescing of small shuffle partitions where it is off: AQE itself, and
/// `coalescePartitions` where the application switched it off (Spark's default is on). `None`
/// when both are on already.
pub fn aqe_coalescing_settings(ctx: &crate::Context) -> Option<Vec<String>> {
    let mut conf = Vec::new();
    if !aqe_enabled(ctx) {
        conf.push("spark.sql.adaptive.enabled=true".to_string());
    }
    if property(ctx, "spark.sql.adaptive.coalescePartitions.enabled")
        .is_some_and(|v| v.eq_ignore_ascii_case("false"))
    {
        conf.push("spark.sql.adaptive.coalescePartitions.enabled=true".to_string());
    }
    (!conf.is_empty()).then_some(conf)
}

/// Which way a stage's partition count should move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resize {
    Fewer,
    More,
}

/// The whole advice for giving `stage` about `n` partitions when its count does not come from
/// `spark.sql.shuffle.partitions`: an explicit `repartition`/`coalesce` in the code (which the
/// setting and AQE leave alone), Spark's own file listing, or input splits. `None` when the
/// setting sized it, and the caller's shuffle-partition advice fits.
pub fn stage_partitions_advice(
    ctx: &crate::Context,
    stage: &StageAttempt,
    n: i64,
    resize: Resize,
) -> Option<String> {
    use crate::stage_shape::{ExplicitCall, Partitions};
    let shape = ctx.shape(stage);
    if shape.listing {
        return Some("This is Spark's own parallel listing of the input's files and directories, not a shuffle: spark.sql.shuffle.partitions and AQE do not size it. Spark starts it when a read names more paths than spark.sql.sources.parallelPartitionDiscovery.threshold (32), one task per path up to spark.sql.sources.parallelPartitionDiscovery.parallelism (10000): raise the threshold to list a few hundred small directories on the driver, or read fewer directories (filter on the partition column, or read the table through a catalog that knows its partitions).".to_string());
    }
    let site = |call_site: &str| {
        if call_site.is_empty() {
            String::new()
        } else {
            format!(" (in the job of `{call_site}`)")
        }
    };
    Some(match &shape.partitions {
        // One partition on purpose is one output file: say what it costs and what keeps it.
        Partitions::Explicit {
            call,
            n: 1,
            call_site,
        } if resize == Resize::More => format!(
            "This stage runs as one task because of an explicit {}(1) in the code{}, usually there to write a single file: one core does all the work while the others wait. Drop it and let each of about {n} tasks write its own file (merge the files afterwards if one file is required, or write to a table that needs no single file), or {}. The trade-off is one output file against this stage's minutes.",
            call.name(),
            site(call_site),
            match call {
                ExplicitCall::Coalesce => format!("use repartition({n}) in its place so the work before it keeps its own parallelism, or coalesce to a few files"),
                ExplicitCall::Repartition => format!("repartition({n}) for {n} files"),
            }
        ),
        Partitions::Explicit {
            call: ExplicitCall::Repartition,
            n: now,
            call_site,
        } => format!(
            "This stage's {now} partitions come from an explicit repartition({now}) in the code{}, which spark.sql.shuffle.partitions and AQE leave alone: change that call to repartition({n}) (a write after it then makes {n} files instead of {now}), or drop it if it only sets the number of output files (spark.sql.files.maxRecordsPerFile or a REBALANCE hint size files without fixing the count).",
            site(call_site)
        ),
        Partitions::Explicit {
            call: ExplicitCall::Coalesce,
            n: now,
            call_site,
        } => format!(
            "This stage's {now} partitions come from an explicit coalesce({now}) in the code{}, which also runs everything before it since the last shuffle in {now} tasks: change it to coalesce({n}), or to repartition({n}) so the work before it keeps its own parallelism.",
            site(call_site)
        ),
        Partitions::UnplannedSqlShuffle { n: now, setting } => format!(
            "This DataFrame shuffle has {now} partitions while spark.sql.shuffle.partitions is {setting}, so the count comes from the program: an explicit repartition({now}) before this step, or spark.sql.shuffle.partitions={now} set at run time (sqlContext.setConf or spark.conf.set). {} Change whichever it is to {n} (after repartition({n}) a write makes {n} files instead of {now}).",
            if ctx.app.spark_version_number().is_some_and(|v| v < (2, 0)) {
                "Spark before 2.0 writes no query plans to the event log, so the log cannot say which."
            } else {
                "The log holds no plan for this query, so it cannot say which."
            }
        ),
        Partitions::InputSplits | Partitions::RddApi
            if resize == Resize::More && reads_gzip(ctx) && stage.totals.input_bytes > 0 =>
        {
            format!(
                "This stage reads input, and this application reads gzip files: a gzip file cannot be split, so each is read by one task whatever count is asked for (textFile(path, {n}), spark.sql.files.maxPartitionBytes and shuffle partitions change nothing). Read them once and repartition({n}) the parsed DataFrame (cached, if it is used again), or convert them once to Parquet or Delta, which split."
            )
        }
        Partitions::InputSplits
            if resize == Resize::More && shape.source_formats.iter().any(|f| f == "hive") =>
        {
            "This stage reads a Hive SerDe table (`Scan hive`): Hadoop's input format splits it by its files and blocks (mapreduce.input.fileinputformat.split.maxsize), not by spark.sql.files.maxPartitionBytes or spark.sql.shuffle.partitions. Convert the table to Parquet or Delta (Spark's own file source then reads it in 128 MB splits), or for splittable text files set spark.hadoop.mapreduce.input.fileinputformat.split.maxsize=134217728; a compressed text file (gzip) is one split whatever the setting.".to_string()
        }
        Partitions::InputSplits => match resize {
            Resize::Fewer => "This stage reads input: its partitions are input splits, sized by the files and spark.sql.files.maxPartitionBytes (128 MB) / spark.sql.files.openCostInBytes, not by spark.sql.shuffle.partitions: compact the small files, or raise spark.sql.files.maxPartitionBytes so each task reads more of them.".to_string(),
            Resize::More => "This stage reads input: its partitions are input splits, sized by the files and spark.sql.files.maxPartitionBytes (128 MB), not by spark.sql.shuffle.partitions: lower spark.sql.files.maxPartitionBytes so big splittable files are read as more splits, or rewrite unsplittable (gzip) files into smaller ones.".to_string(),
        },
        // An RDD-only application gets the RDD knobs from `partitions_advice` already.
        Partitions::RddApi if ctx.app.uses_sql() => format!(
            "This stage is RDD work outside any DataFrame query, so spark.sql.shuffle.partitions and AQE do not size it: pass the count to the RDD call that made it (parallelize(data, {n}), textFile(path, {n}), numPartitions={n} on a shuffle, or rdd.coalesce({n})), or set spark.default.parallelism."
        ),
        Partitions::RddApi | Partitions::ShuffleDefault { .. } | Partitions::Unknown => {
            return None;
        }
    })
}

/// The application's scans name gzip files (`.gz`): unsplittable input.
pub fn reads_gzip(ctx: &crate::Context) -> bool {
    ctx.facts.reads.iter().any(|r| {
        r.source
            .split([',', ' ', '[', ']'])
            .any(|p| p.to_ascii_lowercase().ends_with(".gz"))
    })
}

pub fn shuffle_stages<'a>(
    ctx: &'a crate::Context,
) -> impl Iterator<Item = (&'a sparkdiag_model::StageAttempt, &'a crate::StageStats)> {
    ctx.stage_stats()
        .filter(|(s, _)| s.totals.shuffle_read_bytes() > 0 || s.totals.shuffle_read_records > 0)
}

/// How to let executors go when there is no work, on this application's platform. Where
/// dynamic allocation is already on, saying "turn it on" would not fit: name the settings that
/// keep executors anyway, with this application's values.
pub fn release_idle_executors(ctx: &crate::Context) -> String {
    use sparkdiag_model::Platform;
    match (ctx.app.platform(), ctx.app.cluster_manager()) {
        (Platform::Databricks, _) => {
            "enable the cluster's autoscaling (a lower minimum of workers) and auto-termination, or run the work on a job cluster".to_string()
        }
        _ if ctx.app.dynamic_allocation() => dynamic_allocation_keepers(ctx),
        (_, Some("kubernetes")) => {
            "spark.dynamicAllocation.enabled=true with spark.dynamicAllocation.shuffleTracking.enabled=true (Kubernetes has no external shuffle service) and spark.dynamicAllocation.executorIdleTimeout=60s".to_string()
        }
        (Platform::Emr, _) => {
            "spark.dynamicAllocation.enabled=true (EMR runs the external shuffle service already) with spark.dynamicAllocation.executorIdleTimeout=60s, and EMR managed scaling for the nodes".to_string()
        }
        _ => {
            "spark.dynamicAllocation.enabled=true with spark.dynamicAllocation.executorIdleTimeout=60s (and spark.shuffle.service.enabled=true or spark.dynamicAllocation.shuffleTracking.enabled=true)".to_string()
        }
    }
}

/// An idle timeout longer than this keeps executors through gaps worth releasing them for.
const LONG_IDLE_TIMEOUT_MS: i64 = 60_000;

/// With dynamic allocation on, what keeps an idle executor: a long idle timeout, a floor of
/// executors, and (with no timeout by default) cached blocks or tracked shuffle files on it.
/// Settings already short are left out, so the advice never asks to lower what is low.
fn dynamic_allocation_keepers(ctx: &crate::Context) -> String {
    let setting = |key: &str| property(ctx, &format!("spark.dynamicAllocation.{key}"));
    let is_true = |value: Option<&str>| value.is_some_and(|v| v.eq_ignore_ascii_case("true"));
    // A timeout that is set and over a minute (or unreadable), as it reads here.
    let set_long = |key: &str| {
        let value = setting(key)?;
        match spark_seconds_setting_ms(value) {
            Some(ms) if ms <= LONG_IDLE_TIMEOUT_MS => None,
            Some(ms) => Some(duration(ms)),
            None => Some(value.to_string()),
        }
    };
    // Timeouts with no limit unless set: what keeps executors, in words.
    let unlimited_unless_short = |key: &str| match setting(key) {
        None => Some("with no limit by default".to_string()),
        Some(_) => set_long(key).map(|now| format!("{now} here")),
    };
    let mut keepers = Vec::new();
    if let Some(now) = set_long("executorIdleTimeout") {
        keepers.push(format!(
            "lower spark.dynamicAllocation.executorIdleTimeout from {now} to 60s"
        ));
    }
    if let Some(min) = setting("minExecutors").filter(|v| v.parse::<i64>().is_ok_and(|n| n > 0)) {
        keepers.push(format!(
            "lower spark.dynamicAllocation.minExecutors from {min}, as executors below it are never released"
        ));
    }
    if let Some(now) = unlimited_unless_short("cachedExecutorIdleTimeout") {
        keepers.push(format!(
            "unpersist() what cache() or persist() kept once it is used, as executors holding cached blocks stay for spark.dynamicAllocation.cachedExecutorIdleTimeout, {now}"
        ));
    }
    let shuffle_service = is_true(property(ctx, "spark.shuffle.service.enabled"));
    if is_true(setting("shuffleTracking.enabled"))
        && !shuffle_service
        && let Some(now) = unlimited_unless_short("shuffleTracking.timeout")
    {
        keepers.push(format!(
            "set spark.dynamicAllocation.shuffleTracking.timeout, as executors holding shuffle files stay for it, {now}"
        ));
    }
    if keepers.is_empty() {
        return "dynamic allocation is already on with short idle timeouts, so executors went as soon as Spark lets them; what is left is fewer of them, with a lower spark.dynamicAllocation.maxExecutors".to_string();
    }
    format!(
        "dynamic allocation is already on, so {}",
        keepers.join("; ")
    )
}

/// How to keep shuffle output when an executor goes, on this application's platform.
pub fn keep_shuffle_output(ctx: &crate::Context) -> &'static str {
    use sparkdiag_model::Platform;
    match (ctx.app.platform(), ctx.app.cluster_manager()) {
        (Platform::Databricks, _) => {
            "on Databricks use on-demand (not spot) workers for this job, or enable decommissioning (spark.decommission.enabled=true)"
        }
        (_, Some("kubernetes")) => {
            "on Kubernetes enable graceful decommissioning with shuffle migration (spark.decommission.enabled=true, spark.storage.decommission.enabled=true, spark.storage.decommission.shuffleBlocks.enabled=true)"
        }
        _ => {
            "run the external shuffle service (spark.shuffle.service.enabled=true) or decommission executors gracefully (spark.decommission.enabled=true) so shuffle files outlive them"
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context_advice(props: &[(&str, &str)]) -> (String, String) {
        let app = sparkdiag_model::Application {
            spark_properties: props
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        };
        let facts = sparkdiag_facts::Facts::of(&app);
        let ctx = crate::Context::new(&app, &facts);
        (
            release_idle_executors(&ctx).to_string(),
            keep_shuffle_output(&ctx).to_string(),
        )
    }

    #[test]
    fn advice_names_the_platforms_own_knobs() {
        let (idle, shuffle) =
            context_advice(&[("spark.databricks.clusterUsageTags.sparkVersion", "13.3.x")]);
        assert!(idle.contains("autoscaling") && !idle.contains("spark.dynamicAllocation"));
        assert!(!shuffle.contains("spark.shuffle.service"));
        let (idle, shuffle) = context_advice(&[("spark.master", "k8s://https://10.0.0.1:443")]);
        assert!(idle.contains("shuffleTracking") && !idle.contains("spark.shuffle.service"));
        assert!(shuffle.contains("shuffleBlocks"));
        let (idle, shuffle) = context_advice(&[("spark.master", "yarn")]);
        assert!(idle.contains("spark.shuffle.service.enabled=true"));
        assert!(shuffle.contains("spark.shuffle.service.enabled=true"));
    }

    #[test]
    fn with_dynamic_allocation_on_the_advice_names_what_keeps_executors() {
        let (idle, _) = context_advice(&[
            ("spark.master", "yarn"),
            ("spark.dynamicAllocation.enabled", "true"),
            ("spark.dynamicAllocation.minExecutors", "4"),
            ("spark.dynamicAllocation.executorIdleTimeout", "300s"),
        ]);
        assert!(!idle.contains("enabled=true"), "{idle}");
        assert!(idle.contains("already on"), "{idle}");
        assert!(
            idle.contains("from 5m 00s to 60s") && idle.contains("minExecutors from 4"),
            "{idle}"
        );
        let (idle, _) = context_advice(&[
            ("spark.master", "k8s://https://10.0.0.1:443"),
            ("spark.dynamicAllocation.enabled", "true"),
            ("spark.dynamicAllocation.shuffleTracking.enabled", "true"),
        ]);
        assert!(
            !idle.contains("executorIdleTimeout") && !idle.contains("minExecutors"),
            "{idle}"
        );
        assert!(idle.contains("shuffleTracking.timeout"), "{idle}");
        let (idle, _) = context_advice(&[
            ("spark.dynamicAllocation.enabled", "true"),
            ("spark.dynamicAllocation.executorIdleTimeout", "2s"),
            ("spark.dynamicAllocation.cachedExecutorIdleTimeout", "30"),
        ]);
        assert!(
            idle.contains("short idle timeouts") && !idle.contains("IdleTimeout"),
            "{idle}"
        );
    }
}
