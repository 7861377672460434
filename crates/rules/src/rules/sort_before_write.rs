//! PL005 sort-before-write: an ORDER BY right before a write sorts everything written globally.

use super::plan_walk::{PASS_THROUGH, below, node_label, partitioning, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::{Operator, PartitioningKind};

declare_rule! {
    /// ## What it does
    /// Finds writes (`WriteFiles`, `Execute InsertInto…`/`CreateTableAsSelect…`/
    /// `WriteIntoDelta…` commands) fed by a global `Sort` over a range-partitioned `Exchange`
    /// (on Photon, a `PhotonSort` over a shuffle whose sink prints `rangepartitioning`): an
    /// `ORDER BY` / `orderBy` just before writing.
    ///
    /// ## Why is this bad?
    /// A global sort samples the data, shuffles all of it into ranges and sorts each range: the
    /// most expensive way to write. Files have no order readers can rely on across partitions
    /// anyway, so the sort is usually wasted.
    ///
    /// ## How to fix it
    /// Drop the `orderBy` before the write. If readers need clustered data, sort within
    /// partitions (`df.sortWithinPartitions("col")`, no shuffle), partition or bucket the table by
    /// the column, or use Z-ordering / liquid clustering on Delta tables.
    ///
    /// ## Threshold and its source
    /// Presence: low.
    pub static SORT_BEFORE_WRITE = {
        code: "PL005",
        name: "sort-before-write",
        category: Plan,
        claims: Saving,
        needs: [SqlPlans],
        summary: "A global sort (ORDER BY) right before a write shuffles and sorts everything written",
        thresholds: &[] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

fn is_write(node: &sparkdiag_plan::PlanNode) -> bool {
    node.operator == Operator::WriteFiles
        || (node.operator == Operator::Command
            && sparkdiag_facts::writes::is_write(node.name.trim()))
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        for write in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::WriteFiles || is_write(&plan.nodes[n]))
        {
            // Skip a command whose WriteFiles child reports the same sort.
            if plan.nodes[write].operator == Operator::Command
                && plan.nodes[write]
                    .children
                    .iter()
                    .any(|&c| plan.nodes[c].operator == Operator::WriteFiles)
            {
                continue;
            }
            let pass: Vec<Operator> = PASS_THROUGH
                .iter()
                .copied()
                .filter(|o| *o != Operator::Sort)
                .chain([Operator::WriteFiles])
                .collect();
            let Some(sort) = below(plan, write, &pass) else {
                continue;
            };
            // `PhotonSort` prints its order without Spark's `global` flag: over a range
            // shuffle it is the global sort of an ORDER BY all the same.
            let global = match plan.nodes[sort].details.global_sort {
                Some(global) => global,
                None => plan.nodes[sort].photon,
            };
            if plan.nodes[sort].operator != Operator::Sort || !global {
                continue;
            }
            let Some(exchange) = below(plan, sort, PASS_THROUGH) else {
                continue;
            };
            let ranged =
                partitioning(plan, exchange).is_some_and(|p| p.kind == PartitioningKind::Range);
            if plan.nodes[exchange].operator != Operator::Exchange || !ranged {
                continue;
            }
            let title = format!(
                "{}: {} globally sorts everything {} writes (a range shuffle and sort)",
                input.label(i),
                node_label(plan, sort),
                node_label(plan, write)
            );
            let finding = Finding::new(&SORT_BEFORE_WRITE, Severity::Low, title, 0)
                .evidence("sort_order", plan.nodes[sort].details.sort_order.clone())
                .recommend("Drop the orderBy before the write; sort within partitions (sortWithinPartitions) or partition/bucket/cluster the table by the column instead.");
            findings.push(scoped(finding, i, input, [write, sort, exchange]));
        }
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::SORT_BEFORE_WRITE;
    use crate::rules::testing::{assert_fires, assert_quiet, on_plan};

    #[test]
    fn fires_on_a_sort_before_a_write() {
        assert_fires(
            &on_plan(&SORT_BEFORE_WRITE, "antipattern-sort-before-write.txt"),
            SORT_BEFORE_WRITE.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_plan() {
        assert_quiet(&on_plan(&SORT_BEFORE_WRITE, "healthy.txt"));
    }
}
