//! EX001 too-many-exchanges: a query that shuffles its data many times.

use super::plan_walk::{node_label, scoped};
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule, threshold};
use sparkdiag_plan::ExchangeKind;

pub const MAX_EXCHANGES: Threshold = threshold(
    "max_exchanges",
    3.0,
    "shuffles",
    "shuffle Exchanges in one query above which it is worth a look",
    "sparkdiag's own (no other tool counts them)",
);

declare_rule! {
    /// ## What it does
    /// Counts the shuffle `Exchange` operators of each query's physical plan (the plan that ran:
    /// the final adaptive plan when AQE printed one; broadcasts and reused exchanges are not
    /// shuffles) and flags queries with many of them, saying how many were asked for by the
    /// user (`repartition`, `DISTRIBUTE BY`, `REBALANCE`).
    ///
    /// ## Why is this bad?
    /// Every Exchange writes all its input to local disk, sends it across the network and reads
    /// it back: it is usually the most expensive operator of a query and a stage boundary.
    /// Several of them in one query often mean joins and aggregations on different keys that
    /// could share one partitioning, or repartitions that undo each other.
    ///
    /// ## How to fix it
    /// - Join and aggregate on the same keys where possible, so one shuffle serves several steps.
    /// - Broadcast small join sides (`F.broadcast(df)`) instead of shuffling both.
    /// - Drop `repartition` calls that a later join or aggregation re-shuffles anyway.
    /// - Bucket tables that are joined repeatedly on the same key.
    ///
    /// ## Threshold and its source
    /// More than `max_exchanges` = 3 shuffles in one query (sparkdiag's own default; no other tool counts them).
    /// From an event log its saving is bounded by what the shuffles beyond the threshold took
    /// themselves (their share of the shuffle stages' shuffle write and fetch-wait time, spread
    /// over the cores), never the stages' whole duration; otherwise it is ranked by the count:
    /// medium above twice the threshold, low otherwise.
    pub static TOO_MANY_EXCHANGES = {
        code: "EX001",
        name: "too-many-exchanges",
        category: Exchanges,
        claims: Saving,
        needs: [SqlPlans],
        summary: "A query shuffles its data more times than it probably needs to",
        thresholds: &[MAX_EXCHANGES] as &[Threshold],
        check: check,
        checks_each_plan: true,
    };
}

fn check(ctx: &Context, t: &Thresholds) -> Vec<Finding> {
    let mut findings = Vec::new();
    for (i, input) in ctx.each_plan() {
        let plan = &input.plan;
        let shuffles: Vec<usize> = plan
            .exchange_infos()
            .iter()
            .filter(|e| e.kind == ExchangeKind::Shuffle)
            .map(|e| e.node)
            .collect();
        let count = shuffles.len();
        if (count as f64) <= t.get(&MAX_EXCHANGES) {
            continue;
        }
        let user: Vec<usize> = plan
            .user_requested_exchanges()
            .iter()
            .map(|e| e.node)
            .collect();
        // The shuffles beyond the threshold are what a leaner plan would save, in proportion,
        // and of the shuffle stages' time only what shuffling itself took (writing the shuffle
        // files, waiting to fetch them) spread over the cores: the stages' other work (scans,
        // joins, aggregations) would still run without the Exchange.
        let excess = count as f64 - t.get(&MAX_EXCHANGES);
        let shuffle_work_ms = shuffle_work_ms(ctx, &input.stage_ids) / ctx.cores.max(1);
        let bound_ms = input.shuffle_stage_ms.min(shuffle_work_ms);
        let impact = (bound_ms as f64 * excess / count as f64) as i64;
        let severity = if input.shuffle_stage_ms > 0 {
            Severity::from_share(impact, ctx.app_ms)
        } else if count as f64 > 2.0 * t.get(&MAX_EXCHANGES) {
            Severity::Medium
        } else {
            Severity::Low
        };
        let title = format!(
            "{}: {count} shuffle Exchanges{} ({} broadcast, {} reused)",
            input.label(i),
            if user.is_empty() {
                String::new()
            } else {
                format!(", {} of them user-requested repartitions", user.len())
            },
            plan.broadcast_exchanges(),
            plan.reused_exchanges()
        );
        let finding = Finding::new(&TOO_MANY_EXCHANGES, severity, title, impact)
            .evidence("exchanges", count)
            .evidence("broadcast_exchanges", plan.broadcast_exchanges())
            .evidence("reused_exchanges", plan.reused_exchanges())
            .evidence("user_requested", user.iter().map(|&n| node_label(plan, n)).collect::<Vec<_>>())
            .evidence("shuffle_stage_ms", input.shuffle_stage_ms)
            .evidence("shuffle_work_ms", shuffle_work_ms)
            .proposes(
                crate::Change::DropExchange {
                    stages: input.stage_ids.clone(),
                    exchanges: excess.ceil() as i64,
                },
                "not replayed: the Exchanges beyond the threshold, in proportion, of the shuffle stages' shuffle write and fetch-wait time spread over the cores (never their whole duration)",
            )
            .recommend("Join and aggregate on shared keys so one shuffle serves several steps, broadcast small join sides (F.broadcast(df)), and drop repartition() calls that a later join or aggregation re-shuffles anyway.");
        findings.push(scoped(finding, i, input, shuffles));
    }
    findings
}

/// Shuffle write time and fetch wait of `stage_ids`' tasks, in ms of one core.
pub(crate) fn shuffle_work_ms(ctx: &Context, stage_ids: &[i64]) -> i64 {
    let ids: std::collections::HashSet<i64> = stage_ids.iter().copied().collect();
    ctx.app
        .stages
        .iter()
        .filter(|s| ids.contains(&s.stage_id))
        .map(|s| s.totals.shuffle_write_time / 1_000_000 + s.totals.shuffle_fetch_wait_time)
        .sum()
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::TOO_MANY_EXCHANGES;
    use crate::rules::testing::{assert_fires, assert_quiet, on_plan};

    #[test]
    fn fires_on_a_plan_with_many_exchanges() {
        assert_fires(
            &on_plan(&TOO_MANY_EXCHANGES, "antipattern-many-exchanges.txt"),
            TOO_MANY_EXCHANGES.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_plan() {
        assert_quiet(&on_plan(&TOO_MANY_EXCHANGES, "healthy.txt"));
    }

    /// TPC-DS q88 under Photon (DBR 13.3, final plan): a shuffle is one
    /// `PhotonShuffleMapStage`, not its sink and source, and an `EXECUTOR_BROADCAST` map stage
    /// is a broadcast: 8 shuffles, as Spark's own q88 plan has.
    #[test]
    fn counts_a_photon_shuffle_once() {
        let Some(found) = crate::rules::testing::on_sample(
            &TOO_MANY_EXCHANGES,
            "databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__last-SQLAdaptiveExecutionUpdate__physicalPlanDescription.txt",
        ) else {
            return;
        };
        assert_fires(&found, TOO_MANY_EXCHANGES.code);
        assert_eq!(found[0].evidence["exchanges"], 8);
        assert_eq!(found[0].evidence["broadcast_exchanges"], 17);
    }
}
