//! EX004 nested-loop-join: joins that compare every row with every row.

use super::plan_walk::{below, node_label, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};
use sparkdiag_plan::{Operator, Plan};

declare_rule! {
    /// ## What it does
    /// Finds `CartesianProduct` and `BroadcastNestedLoopJoin` operators: joins without an
    /// equality condition Spark can hash or sort on.
    ///
    /// ## Why is this bad?
    /// They compare every row of one side with every row of the other: output and time grow with
    /// the product of the sides. A join condition that is an inequality, an `OR`, or a function of
    /// both sides forces this plan; a missing condition makes it a cross join.
    ///
    /// ## How to fix it
    /// Add an equality on a key (`a.k = b.k AND ...`), split an `OR` into a union of two equi-joins,
    /// bucket ranges (`floor(ts / 3600)`) to turn a range join into an equi-join on the bucket plus
    /// the range filter. A tiny single-row side (a scalar subquery) is harmless.
    ///
    /// ## Threshold and its source
    /// Presence: a Cartesian product is medium, a broadcast nested-loop join low. A join one of
    /// whose sides is a single row (a global aggregate without grouping keys, as TPC-DS q88
    /// joins eight counts side by side) is left alone: it compares each row with one.
    pub static NESTED_LOOP_JOIN = {
        code: "EX004",
        name: "nested-loop-join",
        category: Exchanges,
        claims: Saving,
        needs: [SqlPlans],
        summary: "A join compares every row with every row (Cartesian or nested-loop)",
        thresholds: &[] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

fn check(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        for n in running(plan) {
            let node = &plan.nodes[n];
            let severity = match node.operator {
                Operator::CartesianProduct => Severity::Medium,
                Operator::BroadcastNestedLoopJoin => Severity::Low,
                _ => continue,
            };
            if node.children.iter().any(|&side| one_row(plan, side)) {
                continue;
            }
            let condition = node
                .details
                .join_condition
                .clone()
                .unwrap_or_else(|| "none".into());
            let title = format!(
                "{}: {} joins every row with every row (condition: {})",
                input.label(i),
                node_label(plan, n),
                condition
            );
            let finding = Finding::new(&NESTED_LOOP_JOIN, severity, title, 0)
                .evidence("join_type", node.details.join_type.clone())
                .evidence("join_condition", condition)
                .recommend("Give the join an equality on a key (split OR conditions into a union of equi-joins, bucket range joins); a tiny single-row side is harmless.");
            findings.push(scoped(finding, i, input, [n]));
        }
    }
    findings
}

/// Operators a single row passes through as a single row (an exchange moves it, a projection
/// or filter keeps at most it).
const ROW_FOR_ROW: &[Operator] = &[
    Operator::Project,
    Operator::Filter,
    Operator::ColumnarToRow,
    Operator::RowToColumnar,
    Operator::Exchange,
    Operator::BroadcastExchange,
    Operator::ShuffleQueryStage,
    Operator::BroadcastQueryStage,
    Operator::AqeShuffleRead,
    Operator::ShuffleSink,
    Operator::ShuffleSource,
];

/// The join side starting at `side` is one row: an aggregate without grouping keys, reached
/// through operators that keep a row a row.
fn one_row(plan: &Plan, side: usize) -> bool {
    let node = &plan.nodes[side];
    let at = if ROW_FOR_ROW.contains(&node.operator) {
        match below(plan, side, ROW_FOR_ROW) {
            Some(at) => at,
            None => return false,
        }
    } else {
        side
    };
    let node = &plan.nodes[at];
    matches!(
        node.operator,
        Operator::HashAggregate | Operator::ObjectHashAggregate | Operator::SortAggregate
    ) && node
        .details
        .grouping_keys
        .as_ref()
        .is_some_and(Vec::is_empty)
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::NESTED_LOOP_JOIN;
    use crate::rules::testing::{assert_fires, assert_quiet, on_plan};

    #[test]
    fn fires_on_a_cross_join() {
        assert_fires(
            &on_plan(&NESTED_LOOP_JOIN, "antipattern-cross-join.txt"),
            NESTED_LOOP_JOIN.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_plan() {
        assert_quiet(&on_plan(&NESTED_LOOP_JOIN, "healthy.txt"));
    }

    /// TPC-DS q88 on Photon joins eight global counts side by side: each nested-loop join
    /// compares one row with one row.
    #[test]
    fn is_quiet_where_a_side_is_one_row() {
        let Some(found) = crate::rules::testing::on_sample(
            &NESTED_LOOP_JOIN,
            "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__SQLExecutionStart__physicalPlanDescription.txt",
        ) else {
            return;
        };
        assert_quiet(&found);
    }
}
