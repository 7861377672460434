//! PL003 round-robin-repartition: `repartition(n)` shuffling every row to no one's benefit.

use super::plan_walk::{node_label, partitioning, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::{Operator, PartitioningKind};

declare_rule! {
    /// ## What it does
    /// Finds `Exchange RoundRobinPartitioning(n)`: a `repartition(n)` without columns (on
    /// Photon, a `PhotonShuffleMapStage` whose sink prints `RoundRobinPartitioning(n)`).
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
        claims: Saving,
        needs: [SqlPlans],
        summary: "repartition(n) without columns shuffles every row just to change the partition count",
        thresholds: &[] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        for n in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::Exchange)
        {
            let Some(p) = partitioning(plan, n).filter(|p| p.kind == PartitioningKind::RoundRobin)
            else {
                continue;
            };
            let title = format!(
                "{}: {} is a repartition({}) without columns: a full shuffle only to change the partition count",
                input.label(i),
                node_label(plan, n),
                p.num_partitions.map_or("n".into(), |c| c.to_string())
            );
            let advice = match (p.num_partitions, read_tasks_above(ctx, input, plan, n)) {
                (Some(count), Some(read)) if i64::from(count) < read => format!(
                    "Keep a shuffle here: coalesce({count}) would also run the {read}-task read above it in {count} tasks. If {count} output files are the point, a REBALANCE hint (AQE) gives even files for the same shuffle, or drop the repartition and let the write keep the read's {read} partitions; repartition({count}, key) only if a later join or aggregation uses that key."
                ),
                _ => "Use coalesce(n) to reduce partitions without a shuffle, or repartition(n, key) if a later join or aggregation uses that key.".to_string(),
            };
            let finding = Finding::new(&ROUND_ROBIN, Severity::Low, title, 0)
                .evidence("partitioning", p.text.clone())
                .recommend(advice);
            findings.push(scoped(finding, i, input, [n]));
        }
    }
    findings
}

/// When the Exchange at `exchange` sits right below a read (no other shuffle under it), the
/// most tasks a read stage of its execution ran: what a `coalesce` in its place would cut.
fn read_tasks_above(
    ctx: &Context,
    input: &sparkdiag_facts::PlanInput,
    plan: &sparkdiag_plan::Plan,
    exchange: usize,
) -> Option<i64> {
    let shuffles = [
        Operator::Exchange,
        Operator::ShuffleQueryStage,
        Operator::BroadcastExchange,
        Operator::BroadcastQueryStage,
        Operator::ReusedExchange,
    ];
    let below = plan.preorder(exchange);
    if below
        .iter()
        .skip(1)
        .any(|&i| shuffles.contains(&plan.nodes[i].operator))
    {
        return None;
    }
    ctx.stage_stats()
        .map(|(stage, _)| stage)
        .filter(|stage| input.stage_ids.contains(&stage.stage_id))
        .filter(|stage| !ctx.shape(stage).reads_shuffle && stage.totals.shuffle_write_bytes > 0)
        .map(|stage| stage.num_tasks)
        .max()
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

    /// `repartition(2)` right after a 17-partition read, before a write: `coalesce(2)` there
    /// would run the read in 2 tasks, so the advice must not offer it.
    #[test]
    fn before_a_write_right_after_a_read_it_does_not_offer_coalesce() {
        let found = on_log(&ROUND_ROBIN, "shapes/repartition-write", &[]);
        assert_fires(&found, ROUND_ROBIN.code);
        for f in &found {
            let advice = f.recommendation.as_str();
            assert!(!advice.contains("Use coalesce("), "{advice}");
            assert!(advice.contains("17-task read"), "{advice}");
        }
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&ROUND_ROBIN, "patterns/healthy", &[]));
    }
}
