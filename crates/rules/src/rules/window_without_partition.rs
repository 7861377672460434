//! PL002 window-without-partition: a window over all rows, computed by one task.

use super::plan_walk::{PASS_THROUGH, below, node_label, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::{Operator, PartitioningKind};

declare_rule! {
    /// ## What it does
    /// Finds `Window` operators fed by an `Exchange SinglePartition`: a window function without
    /// `partitionBy`, so Spark moves every row into one partition to compute it.
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
    /// Presence: medium.
    pub static WINDOW_WITHOUT_PARTITION = {
        code: "PL002",
        name: "window-without-partition",
        category: Plan,
        claims: Saving,
        needs: [SqlPlans],
        summary: "A window function without partitionBy moves every row into one task",
        thresholds: &[] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.plans.iter().enumerate() {
        let plan = &input.plan;
        for window in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::Window)
        {
            let Some(feed) = below(plan, window, PASS_THROUGH) else {
                continue;
            };
            let single = plan.nodes[feed].operator == Operator::Exchange
                && plan.nodes[feed]
                    .details
                    .partitioning
                    .as_ref()
                    .is_some_and(|p| p.kind == PartitioningKind::Single);
            if !single {
                continue;
            }
            let title = format!(
                "{}: {} has no partitionBy, so one task computes it over every row",
                input.label(i),
                node_label(plan, window)
            );
            let finding = Finding::new(&WINDOW_WITHOUT_PARTITION, Severity::Medium, title, 0)
                .recommend("Add partitionBy to the window specification (Window.partitionBy(key).orderBy(...)).");
            findings.push(scoped(finding, i, input, [window, feed]));
        }
    }
    findings
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

    #[test]
    fn is_quiet_on_the_healthy_plan() {
        assert_quiet(&on_plan(&WINDOW_WITHOUT_PARTITION, "healthy.txt"));
    }
}
