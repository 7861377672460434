//! PL003 round-robin-repartition: `repartition(n)` shuffling every row to no one's benefit.

use super::plan_walk::{node_label, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::{Operator, PartitioningKind};

declare_rule! {
    /// ## What it does
    /// Finds `Exchange RoundRobinPartitioning(n)`: a `repartition(n)` without columns.
    ///
    /// ## Why is this bad?
    /// It shuffles every row across the network only to change the number of partitions, and
    /// the resulting partitioning helps no later join or aggregation.
    ///
    /// ## How to fix it
    /// To reduce the number of partitions (e.g. before a write), use `coalesce(n)`, which merges
    /// partitions without a shuffle. To prepare a join or aggregation, `repartition(n, "key")`.
    /// To even out skewed output files, AQE's `REBALANCE` hint is cheaper.
    ///
    /// ## Threshold and its source
    /// Presence: low.
    pub static ROUND_ROBIN = {
        code: "PL003",
        name: "round-robin-repartition",
        category: Plan,
        summary: "repartition(n) without columns shuffles every row just to change the partition count",
        thresholds: &[] as &[Threshold],
        check: check,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.plans.iter().enumerate() {
        let plan = &input.plan;
        for n in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::Exchange)
        {
            let Some(p) = plan.nodes[n]
                .details
                .partitioning
                .as_ref()
                .filter(|p| p.kind == PartitioningKind::RoundRobin)
            else {
                continue;
            };
            let title = format!(
                "{}: {} is a repartition({}) without columns: a full shuffle only to change the partition count",
                input.label(i),
                node_label(plan, n),
                p.num_partitions.map_or("n".into(), |c| c.to_string())
            );
            let finding = Finding::new(&ROUND_ROBIN, Severity::Low, title, 0)
                .evidence("partitioning", p.text.clone())
                .recommend("Use coalesce(n) to reduce partitions without a shuffle, or repartition(n, key) if a later join or aggregation uses that key.");
            findings.push(scoped(finding, i, input, [n]));
        }
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::ROUND_ROBIN;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_a_run_that_repartitions_without_columns() {
        assert_fires(
            &on_log(&ROUND_ROBIN, "patterns/executor-lost", &[]),
            ROUND_ROBIN.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&ROUND_ROBIN, "patterns/healthy", &[]));
    }
}
