//! EX002 back-to-back-shuffles: a shuffle whose output is shuffled again before anything uses it.

use super::plan_walk::{PASS_THROUGH, below, node_label, partitioning, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::{Operator, Partitioning};

declare_rule! {
    /// ## What it does
    /// Finds an `Exchange` whose input is another `Exchange` with a different partitioning,
    /// with nothing between them but projections, filters, sorts and query-stage wrappers:
    /// the first shuffle's partitioning is thrown away before any operator used it. A Photon
    /// shuffle (`PhotonShuffleExchangeSink` → `PhotonShuffleMapStage` →
    /// `PhotonShuffleExchangeSource`) counts as one exchange, with its sink's partitioning.
    ///
    /// ## Why is this bad?
    /// The data crosses the network twice for the price of once. The usual cause is a
    /// `repartition(col)` (or `repartition(n)`) right before a join or aggregation on other keys.
    ///
    /// ## How to fix it
    /// Remove the first repartition, or repartition by the keys the next join or aggregation
    /// needs (`df.repartition("join_key")`), so Spark reuses it instead of shuffling again.
    ///
    /// ## Threshold and its source
    /// Presence: an exchange directly feeding another on different keys. From an event log, the
    /// recoverable time is one shuffle's share of what the query's shuffle stages spent shuffling
    /// (shuffle write and fetch-wait time spread over the cores), never of their whole duration;
    /// from text alone it is medium.
    pub static BACK_TO_BACK = {
        code: "EX002",
        name: "back-to-back-shuffles",
        category: Exchanges,
        claims: Saving,
        needs: [SqlPlans],
        summary: "A shuffle's output is shuffled again on other keys before anything uses it",
        thresholds: &[] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

fn same(a: Option<&Partitioning>, b: Option<&Partitioning>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a.kind == b.kind && a.expressions == b.expressions,
        _ => false,
    }
}

/// Like [`below`], also passing partial aggregates: they pre-aggregate whatever rows each
/// partition holds and need no particular partitioning.
fn below_partial_aggregates(plan: &sparkdiag_plan::Plan, from: usize) -> Option<usize> {
    let mut at = below(plan, from, PASS_THROUGH)?;
    loop {
        let node = &plan.nodes[at];
        let partial = node.operator == Operator::HashAggregate
            && node
                .details
                .functions
                .as_ref()
                .is_some_and(|f| !f.is_empty() && f.iter().all(|x| x.starts_with("partial_")));
        if !partial {
            return Some(at);
        }
        at = below(plan, at, PASS_THROUGH)?;
        // `below` starts from a node's child; a partial aggregate directly on an exchange is that exchange.
    }
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        for outer in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::Exchange)
        {
            let Some(inner) = below_partial_aggregates(plan, outer) else {
                continue;
            };
            if plan.nodes[inner].operator != Operator::Exchange {
                continue;
            }
            let (a, b) = (partitioning(plan, outer), partitioning(plan, inner));
            if same(a, b) {
                continue;
            }
            let text = |p: Option<&Partitioning>| p.map_or("?".to_string(), |p| p.text.clone());
            let title = format!(
                "{}: {} re-shuffles the output of {} before anything used it ({} after {})",
                input.label(i),
                node_label(plan, outer),
                node_label(plan, inner),
                text(a),
                text(b)
            );
            // One of the query's shuffles is wasted: its share of what the shuffle stages spent
            // shuffling (write, fetch wait, over the cores), not of their whole duration.
            let shuffle_work_ms = super::too_many_exchanges::shuffle_work_ms(ctx, &input.stage_ids)
                / ctx.cores.max(1);
            let impact =
                input.shuffle_stage_ms.min(shuffle_work_ms) / plan.exchanges().max(1) as i64;
            let severity = if input.shuffle_stage_ms > 0 {
                Severity::from_share(impact, ctx.app_ms).at_least(Severity::Low)
            } else {
                Severity::Medium
            };
            let finding = Finding::new(&BACK_TO_BACK, severity, title, impact)
                .proposes(
                    crate::Change::DropExchange {
                        stages: input.stage_ids.clone(),
                        exchanges: 1,
                    },
                    "not replayed: one Exchange's share of the shuffle stages' shuffle write and fetch-wait time spread over the cores",
                )
                .evidence("outer_partitioning", text(a))
                .evidence("inner_partitioning", text(b))
                .recommend("Remove the first repartition, or repartition by the keys the next join or aggregation needs so Spark reuses that partitioning.");
            findings.push(scoped(finding, i, input, [outer, inner]));
        }
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::BACK_TO_BACK;
    use crate::rules::testing::{assert_fires, assert_quiet, on_plan};

    #[test]
    fn fires_on_a_plan_that_reshuffles() {
        assert_fires(
            &on_plan(&BACK_TO_BACK, "antipattern-back-to-back.txt"),
            BACK_TO_BACK.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_plan() {
        assert_quiet(&on_plan(&BACK_TO_BACK, "healthy.txt"));
    }

    /// Real Photon plans whose shuffles each feed an aggregation, a join or a top-k: none is
    /// re-shuffled unused, and each map stage is compared by its sink's partitioning (read
    /// from the wrong node, every Photon shuffle would look unknown, and so different).
    #[test]
    fn is_quiet_on_real_photon_plans() {
        for file in [
            "databricks-serverless-photon__github-readme-pyspark_demo__explain-formatted__top_avg_opt.txt",
            "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__last-SQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
            "databricks-photon__github-notebook-biker_r_project__explain-extended.txt",
        ] {
            if let Some(found) = crate::rules::testing::on_sample(&BACK_TO_BACK, file) {
                assert_quiet(&found);
            }
        }
    }
}
