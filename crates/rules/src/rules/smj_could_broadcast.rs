//! EX003 sort-merge-join-could-broadcast: a shuffled join although one side is small.

use super::common::bytes;
use super::plan_walk::{PASS_THROUGH, node_label, running, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};
use sparkdiag_plan::Operator;

pub const MAX_BROADCAST_MB: Threshold = threshold(
    "max_broadcast_mb",
    10.0,
    "MB",
    "a join side under this size could be broadcast",
    "spark.sql.autoBroadcastJoinThreshold's default (10 MB)",
);

declare_rule! {
    /// ## What it does
    /// Finds `SortMergeJoin`s where one side was measured small — the `Statistics(sizeInBytes=…)`
    /// AQE prints for the query stage feeding that side, or, in an event log, the `data size` SQL
    /// metric of the Exchange under it — and that side could be broadcast for the join type.
    ///
    /// ## Why is this bad?
    /// A sort-merge join shuffles and sorts both sides. Broadcasting the small side ships it once
    /// to every executor and leaves the big side where it is: no shuffle, no sort.
    ///
    /// ## How to fix it
    /// `big.join(F.broadcast(small), "key")`, or raise `spark.sql.autoBroadcastJoinThreshold`
    /// (and, with AQE, `spark.sql.adaptive.autoBroadcastJoinThreshold`) above the side's size.
    /// Check that the threshold is not set to -1 (CF003).
    ///
    /// ## Threshold and its source
    /// A broadcastable side under `max_broadcast_mb` = 10 MB, Spark's default
    /// `spark.sql.autoBroadcastJoinThreshold` (DataFlint and SparkForensics use larger tiers when
    /// the other side is huge). The right side can be broadcast for inner, left outer, left semi
    /// and left anti joins, the left side for inner and right outer joins. From an
    /// event log, the recoverable time is bounded by what the query's shuffle stages spent
    /// shuffling (shuffle write and fetch-wait time spread over the cores), and never more than
    /// half their duration (the join and the scans still run); from text alone it is medium.
    pub static SMJ_COULD_BROADCAST = {
        code: "EX003",
        name: "sort-merge-join-could-broadcast",
        category: Exchanges,
        claims: Saving,
        needs: [SqlPlans],
        summary: "A sort-merge join shuffled both sides although one was small enough to broadcast",
        thresholds: &[MAX_BROADCAST_MB] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

/// The measured size of one join side: the statistics AQE printed for its query stage, or the
/// `data size` the log's SQL metrics recorded for the Exchange under it.
fn side_size(input: &sparkdiag_facts::PlanInput, side: usize) -> Option<u64> {
    let plan = &input.plan;
    let mut at = side;
    loop {
        let node = &plan.nodes[at];
        if let Some(size) = node
            .details
            .statistics
            .as_ref()
            .and_then(|s| s.size_in_bytes)
        {
            return Some(size);
        }
        if let Some(size) = input.measured.get(&at).and_then(|m| m.get("data size")) {
            return u64::try_from(*size).ok();
        }
        if !PASS_THROUGH.contains(&node.operator) {
            return None;
        }
        at = *node.children.iter().find(|&&c| !plan.nodes[c].inner)?;
    }
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let limit = (t.get(&MAX_BROADCAST_MB) * 1e6) as u64;
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        for join in running(plan)
            .into_iter()
            .filter(|&n| plan.nodes[n].operator == Operator::SortMergeJoin)
        {
            let node = &plan.nodes[join];
            let children: Vec<usize> = node
                .children
                .iter()
                .copied()
                .filter(|&c| !plan.nodes[c].inner)
                .collect();
            let [left, right] = children[..] else {
                continue;
            };
            let join_type = node
                .details
                .join_type
                .clone()
                .unwrap_or_default()
                .to_ascii_lowercase()
                .replace([' ', '_'], "");
            let right_ok = matches!(
                join_type.as_str(),
                "inner" | "leftouter" | "leftsemi" | "leftanti" | "existencejoin" | ""
            );
            let left_ok = matches!(join_type.as_str(), "inner" | "rightouter" | "");
            let candidate = [(left, "left", left_ok), (right, "right", right_ok)]
                .into_iter()
                .filter(|(_, _, ok)| *ok)
                .filter_map(|(side, name, _)| Some((side, name, side_size(input, side)?)))
                .filter(|(_, _, size)| *size < limit)
                .min_by_key(|(_, _, size)| *size);
            let Some((side, name, size)) = candidate else {
                continue;
            };
            let title = format!(
                "{}: {} shuffles both sides although its {name} side measured only {} — broadcast it",
                input.label(i),
                node_label(plan, join),
                bytes(size as i64)
            );

            let severity = if input.shuffle_stage_ms > 0 {
                Severity::from_share(input.shuffle_stage_ms / 2, ctx.app_ms).at_least(Severity::Low)
            } else {
                Severity::Medium
            };
            // Broadcasting removes the shuffle of both sides, not the join: what shuffling took
            // (write, fetch wait) spread over the cores, at most half the shuffle stages' time.
            let shuffle_work_ms = super::too_many_exchanges::shuffle_work_ms(ctx, &input.stage_ids)
                / ctx.cores.max(1);
            let impact = (input.shuffle_stage_ms / 2).min(shuffle_work_ms);
            let finding = Finding::new(&SMJ_COULD_BROADCAST, severity, title, impact)
                .proposes(
                    crate::Change::BroadcastSide { stages: input.stage_ids.clone() },
                    "not replayed: the shuffle stages' shuffle write and fetch-wait time spread over the cores, at most half their duration",
                )
                .evidence("join_type", node.details.join_type.clone())
                .evidence("small_side", name)
                .evidence("small_side_bytes", size)
                .recommend("Broadcast the small side (big.join(F.broadcast(small), key)) or raise spark.sql.autoBroadcastJoinThreshold above its size; make sure it is not -1.");
            findings.push(scoped(finding, i, input, [join, side]));
        }
    }
    findings
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::SMJ_COULD_BROADCAST;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_a_small_side_aqe_measured() {
        assert_fires(
            &on_log(&SMJ_COULD_BROADCAST, "patterns/skew-join-aqe", &[]),
            SMJ_COULD_BROADCAST.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&SMJ_COULD_BROADCAST, "patterns/healthy", &[]));
    }
}
