//! SK001 data-skew: a task far longer than its stage's median because its partition held more data.

use sparkdiag_facts::slowness::LongTask;

use super::slow_tasks::{DATA_RATIO, SKEW_THRESHOLDS, finding_for, long_for_its_data, slow_stages};
use crate::{Context, Finding, Thresholds, declare_rule};

declare_rule! {
    /// ## What it does
    /// Finds stages where one or more tasks ran far longer than the stage's median task
    /// **and** processed far more data (shuffle-read plus input bytes, or records) than the
    /// median task: one partition holds a hot key.
    ///
    /// ## Why is this bad?
    /// A stage ends when its last task ends. While the skewed task runs, every other core that
    /// finished its share sits idle: one customer holding 60 % of the orders makes one reducer
    /// run for 30 minutes while 199 finish in seconds. Adding executors does not help.
    ///
    /// ## How to fix it
    /// The advice follows what the stage is:
    /// - An input stage (no shuffle read): the input files are uneven. Rewrite or compact them
    ///   into even files, or lower `spark.sql.files.maxPartitionBytes` so big splittable files
    ///   are read as several splits; skew-join settings and salting do not apply to a read.
    /// - Behind a groupBy: AQE's skew join does not split aggregation partitions; salt the key
    ///   and aggregate in two phases (below).
    /// - Behind the program's own `repartition(n, "key")` with no join or aggregation after it:
    ///   repartition by row count (`df.repartition(n)`) or salt the key if the next step does
    ///   not need each key's rows together; from Spark 3.2 with AQE, a rebalance
    ///   (`df.hint("rebalance", "key")`) lets AQE split the hot partition.
    /// - Behind a join, Spark 3.2+: let AQE split skewed join partitions:
    ///   `spark.sql.adaptive.enabled=true`, `spark.sql.adaptive.skewJoin.enabled=true`
    ///   (lower `spark.sql.adaptive.skewJoin.skewedPartitionThresholdInBytes` if the skewed
    ///   partition is under 256 MB).
    /// - If one side of the join is small, broadcast it: `orders.join(F.broadcast(customers), "customer_id")`.
    /// - For aggregations, salt the hot key and aggregate twice:
    ///   `df.withColumn("salt", (F.rand() * 16).cast("int")).groupBy("key", "salt").agg(...)`
    ///   then `.groupBy("key").agg(...)` over the partial results.
    /// - Filter out null or placeholder keys (often the hot key) and handle them separately.
    ///
    /// ## Threshold and its source
    /// `ratio` = 5: a task more than 5x the stage's median duration, AQE's own
    /// `spark.sql.adaptive.skewJoin.skewedPartitionFactor`. `data_ratio` = 5: its bytes or
    /// records more than 5x the median task's, the same factor applied to data. A stage needs
    /// `min_tasks` = 5 successful tasks for a median to mean something, and the slow task must
    /// last `min_task_s` = 30 s or `min_app_share` = 0.5 % of the application (SparkForensics'
    /// impact floor) and at least `floor_s` = 1 s, so a 40 ms task five times an 8 ms median is
    /// not a finding.
    pub static DATA_SKEW = {
        code: "SK001",
        name: "data-skew",
        category: Skew,
        claims: Saving,
        needs: [TaskMetrics],
        summary: "A task ran far longer than its stage's median because its partition held far more data",
        thresholds: SKEW_THRESHOLDS,
        check: check_data_skew,
    };
}

fn check_data_skew(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let data_ratio = t.get(&DATA_RATIO);
    slow_stages(ctx, t)
        .iter()
        .filter_map(|s| {
            let skewed: Vec<&LongTask> = s
                .slow
                .iter()
                .copied()
                .filter(|task| long_for_its_data(task, s, data_ratio))
                .collect();
            let worst = *skewed.first()?;
            // Spread over the cores, the longest task's data takes a piece of it at most.
            let pieces = i64::from(sparkdiag_whatif_pieces(
                worst.duration_ms.into(),
                s.typical.duration_ms.into(),
                ctx.cores,
            ));
            let worst_ms = i64::from(worst.duration_ms);
            let estimate = worst_ms - worst_ms / pieces;
            Some(finding_for(ctx, &DATA_SKEW, s, &skewed, estimate))
        })
        .collect()
}

/// How many pieces of a typical task's length a task's data spreads into on `cores` cores.
fn sparkdiag_whatif_pieces(duration_ms: i64, typical_ms: i64, cores: i64) -> u32 {
    let wanted = (duration_ms.max(0) as u64).div_ceil(typical_ms.max(1) as u64);
    wanted.clamp(1, cores.clamp(1, 1024) as u64) as u32
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::DATA_SKEW;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_skewed_join() {
        assert_fires(
            &on_log(&DATA_SKEW, "patterns/skew-join", &[]),
            DATA_SKEW.code,
        );
    }

    /// A read of four big CSV files among forty small ones, with no shuffle: the advice is
    /// about the files, not about joins or salting.
    #[test]
    fn an_input_split_skew_gets_advice_about_the_files() {
        let found = on_log(&DATA_SKEW, "shapes/input-split-skew", &[]);
        assert_fires(&found, DATA_SKEW.code);
        for f in &found {
            let advice = f.recommendation.as_str();
            assert_eq!(f.evidence["stage_shape"], "input-split", "{}", f.title);
            assert!(
                advice.contains("spark.sql.files.maxPartitionBytes"),
                "{advice}"
            );
            assert!(
                !advice.contains("skewJoin.enabled") && !advice.contains("F.rand"),
                "{advice}"
            );
        }
    }

    /// The same hot customer skews a groupBy and a join of one application: AQE's skew join
    /// for the join only, two-phase aggregation for the groupBy.
    #[test]
    fn a_groupby_skew_gets_salting_and_a_join_skew_gets_aqe_skew_join() {
        let found = on_log(&DATA_SKEW, "shapes/groupby-and-join-skew", &[]);
        let advice_for = |kind: &str| {
            found
                .iter()
                .find(|f| f.evidence["stage_shape"] == kind)
                .map(|f| f.recommendation.clone())
                .unwrap_or_else(|| panic!("no {kind} skew among {found:?}"))
        };
        let aggregation = advice_for("aggregation");
        assert!(aggregation.contains("two phases") && aggregation.contains("F.rand"));
        assert!(
            !aggregation.contains("skewJoin.enabled=true"),
            "{aggregation}"
        );
        let join = advice_for("join");
        assert!(
            join.contains("spark.sql.adaptive.skewJoin.enabled=true"),
            "{join}"
        );
    }

    /// `repartition(8, "customer")` with customer 0 holding half the orders, then a write: no
    /// join or aggregation, so neither AQE's skew join nor two-phase aggregation fits; the
    /// advice is about the program's own repartition (and AQE's rebalance, Spark 4.3 here).
    #[test]
    fn a_skew_from_the_programs_repartition_gets_advice_about_that_repartition() {
        let found = on_log(&DATA_SKEW, "causes/wait-skew", &[]);
        assert_fires(&found, DATA_SKEW.code);
        let f = &found[0];
        assert_eq!(f.evidence["stage_shape"], "repartition", "{}", f.title);
        let advice = f.recommendation.as_str();
        assert!(
            advice.contains("df.repartition(n)") && advice.contains("hint(\"rebalance\""),
            "{advice}"
        );
        assert!(
            !advice.contains("skewJoin.enabled") && !advice.contains("aggregate twice"),
            "{advice}"
        );
    }

    #[test]
    fn is_quiet_on_the_straggler_whose_data_is_even() {
        assert_quiet(&on_log(&DATA_SKEW, "patterns/straggler", &[]));
    }
}
