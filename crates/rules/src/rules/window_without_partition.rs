//! PL002 window-without-partition: a window over all rows, computed by one task.

use super::common::bytes;
use super::plan_walk::{node_label, running, scoped, single_partition_feed};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};
use sparkdiag_plan::Operator;

pub const ONE_PARTITION_MB: Threshold = threshold(
    "one_partition_mb",
    64.0,
    "MB",
    "a window whose single-partition shuffle was measured under this is left alone",
    "spark.sql.adaptive.advisoryPartitionSizeInBytes's default (64 MB): the size Spark aims one shuffle partition at",
);

declare_rule! {
    /// ## What it does
    /// Finds `Window` operators fed by an `Exchange SinglePartition`: a window function without
    /// `partitionBy`, so Spark moves every row into one partition to compute it. On Databricks
    /// the same is a `PhotonWindow` over a `PhotonShuffleExchangeSink SinglePartition` (Photon
    /// runs window functions: "Photon coverage", <https://docs.databricks.com/en/compute/photon.html>).
    ///
    /// ## Why is this bad?
    /// One task on one core processes the whole data set, however large the cluster; it is slow
    /// and a common cause of out-of-memory errors and spills (Spark warns "No Partition Defined
    /// for Window operation!" only in the driver log).
    ///
    /// ## How to fix it
    /// Add `partitionBy` to the window (`Window.partitionBy("customer_id").orderBy("ts")`). For a
    /// global ranking, rank within partitions first and combine, or use `monotonically_increasing_id`
    /// / `zipWithIndex` when only unique ids are needed.
    ///
    /// ## Threshold and its source
    /// Presence: medium. In an event log, a window whose single-partition shuffle carried less
    /// than `one_partition_mb` = 64 MB (the log's `data size` SQL metric) is left alone: that is
    /// the size Spark's AQE aims one shuffle partition at
    /// (`spark.sql.adaptive.advisoryPartitionSizeInBytes`), so one task is what Spark would give
    /// those rows anyway, such as a ranking over a few hundred aggregated rows.
    pub static WINDOW_WITHOUT_PARTITION = {
        code: "PL002",
        name: "window-without-partition",
        category: Plan,
        claims: Saving,
        needs: [SqlPlans],
        summary: "A window function without partitionBy moves every row into one task",
        thresholds: &[ONE_PARTITION_MB] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let small = t.get(&ONE_PARTITION_MB) * 1e6;
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        for window in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::Window)
        {
            let Some(feed) = single_partition_feed(plan, window) else {
                continue;
            };
            // Where the log's SQL metrics left the Exchange unmeasured (a Spark 3.0 AQE plan
            // whose final Exchange got no values), the execution's one-task stage that read a
            // shuffle says how big the single partition was.
            let measured = input
                .measured
                .get(&feed)
                .and_then(|m| m.get("data size"))
                .copied()
                .or_else(|| one_task_shuffle_read(ctx, &input.stage_ids));
            if measured.is_some_and(|size| (size as f64) < small) {
                continue;
            }
            let title = format!(
                "{}: {} has no partitionBy, so one task computes it over every row{}",
                input.label(i),
                node_label(plan, window),
                measured
                    .map(|size| format!(" ({} shuffled into it)", bytes(size)))
                    .unwrap_or_default()
            );
            let finding = Finding::new(&WINDOW_WITHOUT_PARTITION, Severity::Medium, title, 0)
                .recommend("Add partitionBy to the window specification (Window.partitionBy(key).orderBy(...)).");
            findings.push(scoped(finding, i, input, [window, feed]));
        }
    }
    findings
}

/// The largest shuffle read of the stages, among `stage_ids`, that ran in one task: a window
/// over a `SinglePartition` exchange is one of them.
fn one_task_shuffle_read(ctx: &Context, stage_ids: &[i64]) -> Option<i64> {
    ctx.app
        .stages
        .iter()
        // A stage with a parent read a shuffle, even when it read nothing (a filter upstream
        // kept no rows); one still running measured nothing yet.
        .filter(|s| stage_ids.contains(&s.stage_id) && s.num_tasks == 1)
        .filter(|s| !s.parent_ids.is_empty() && s.completion_ms.is_some())
        .map(|s| s.totals.shuffle_read_bytes())
        .max()
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::WINDOW_WITHOUT_PARTITION;
    use crate::rules::testing::{assert_fires, assert_quiet, on_plan};

    #[test]
    fn fires_on_a_window_without_partition_by() {
        assert_fires(
            &on_plan(
                &WINDOW_WITHOUT_PARTITION,
                "antipattern-window-no-partition.txt",
            ),
            WINDOW_WITHOUT_PARTITION.code,
        );
    }

    /// The EMR PySpark ETL of `syncsparkpy` sums a grand total over a window without
    /// `partitionBy` (Spark 3.0, AQE): the log left the final Exchange's `data size` without
    /// values, but the one-task stage after it read 0 bytes of shuffle (a filter kept no rows).
    #[test]
    fn is_quiet_where_the_one_task_stage_read_next_to_nothing() {
        use crate::rules::testing::on_real_world_log;
        let log = "syncsparkpy/demo/emr/application_1678162862227_0001";
        let Some(found) = on_real_world_log(&WINDOW_WITHOUT_PARTITION, log, &[]) else {
            return;
        };
        assert_quiet(&found);
    }

    /// A DBR 9.1 job run (`databricks.zip`) ranks 381 aggregated rows in a window without
    /// `partitionBy`: its single-partition shuffle measured 9 KB, and the one task took 0.3 s.
    /// Under a lower threshold the same window is named with the size the log measured.
    #[test]
    fn is_quiet_on_a_window_over_a_few_measured_rows() {
        use crate::rules::testing::on_real_world_log;
        let log = "spark_log_parser/tests/logs/databricks.zip";
        let Some(found) = on_real_world_log(&WINDOW_WITHOUT_PARTITION, log, &[]) else {
            return;
        };
        assert_quiet(&found);
        let found = on_real_world_log(
            &WINDOW_WITHOUT_PARTITION,
            log,
            &["PL002.one_partition_mb=0.001"],
        )
        .unwrap();
        assert_fires(&found, WINDOW_WITHOUT_PARTITION.code);
        assert_eq!(
            found[0].title,
            "SQL execution 8: (4) Window has no partitionBy, so one task computes it over every row (8.9 KiB shuffled into it)"
        );
    }

    /// `row_number()` over `Window.orderBy("v")` on 6M rows (`testdata/gen/operations.py`):
    /// the log measured what its one partition took; with `partitionBy("k")` nothing is found.
    #[test]
    fn names_the_size_a_log_measured_for_a_big_window() {
        use crate::rules::testing::on_log;
        let found = on_log(
            &WINDOW_WITHOUT_PARTITION,
            "operations/window-no-partition",
            &[],
        );
        assert_fires(&found, WINDOW_WITHOUT_PARTITION.code);
        assert!(
            found[0].title.ends_with("MiB shuffled into it)"),
            "{}",
            found[0].title
        );
        assert_quiet(&on_log(
            &WINDOW_WITHOUT_PARTITION,
            "operations/window-no-partition-fixed",
            &[],
        ));
    }

    #[test]
    fn is_quiet_on_the_healthy_plan() {
        assert_quiet(&on_plan(&WINDOW_WITHOUT_PARTITION, "healthy.txt"));
    }

    /// Photon draws a shuffle as sink, map stage and source: the walk from a Photon operator
    /// reaches the map stage and reads the `SinglePartition` its sink prints, on two real
    /// Databricks plans (no real plan with a `PhotonWindow` is at hand; the walk is the one the
    /// rule takes from it): the global top-k `(30) PhotonTopK` over `(27)
    /// PhotonShuffleExchangeSink` / `(28) PhotonShuffleMapStage`, and, through AQE's
    /// `ShuffleQueryStage (30)`, `(32) PhotonAgg` over map stage `(29)` of a DBR 13.3 final plan.
    #[test]
    fn reaches_a_photon_single_partition_shuffle() {
        use super::super::plan_walk::single_partition_feed;
        use crate::rules::testing::sample_plans;
        for (file, from, feed) in [
            (
                "databricks-serverless-photon__github-readme-pyspark_demo__explain-formatted__top_avg_opt.txt",
                30,
                28,
            ),
            (
                "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__last-SQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
                32,
                29,
            ),
        ] {
            let Some(plans) = sample_plans(file) else {
                return;
            };
            let plan = &plans[0];
            let at = |id: u32| plan.nodes.iter().position(|n| n.id == Some(id)).unwrap();
            let found = single_partition_feed(plan, at(from)).map(|i| plan.nodes[i].id);
            assert_eq!(found, Some(Some(feed)), "{file}");
            assert_eq!(plan.nodes[at(feed)].name, "PhotonShuffleMapStage");
            // A hash-partitioned Photon shuffle is not one partition: (20) PhotonGroupingAgg
            // reads map stage (18), hashpartitioning(anime_id, Anime Title, 1024).
            if from == 30 {
                assert_eq!(single_partition_feed(plan, at(20)), None);
            }
        }
    }

    #[test]
    fn is_quiet_on_real_photon_plans() {
        for file in [
            "databricks-serverless-photon__github-readme-pyspark_demo__explain-formatted__top_avg_opt.txt",
            "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__last-SQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
        ] {
            if let Some(found) = crate::rules::testing::on_sample(&WINDOW_WITHOUT_PARTITION, file) {
                assert_quiet(&found);
            }
        }
    }
}
