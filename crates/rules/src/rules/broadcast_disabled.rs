//! CF003 broadcast-disabled: broadcast joins switched off while sort-merge joins ran.

use super::common::property;
use crate::{Context, Finding, Severity, Threshold, Thresholds, declare_rule};

declare_rule! {
    /// ## What it does
    /// Flags applications that switched broadcast joins off
    /// (`spark.sql.autoBroadcastJoinThreshold=-1`) and then ran sort-merge joins.
    ///
    /// ## Why is this bad?
    /// A broadcast hash join ships a small table to every executor and joins without shuffling
    /// the big side. With broadcasts off, every join shuffles and sorts both sides, however small
    /// one of them is.
    ///
    /// ## How to fix it
    /// Remove the setting (default 10 MB) or raise it to the size of your dimension tables
    /// (`spark.sql.autoBroadcastJoinThreshold=64m`); or broadcast explicitly where it is safe:
    /// `fact.join(F.broadcast(dim), "key")`. If it was set to avoid driver out-of-memory errors,
    /// raise `spark.driver.memory` instead.
    ///
    /// ## Threshold and its source
    /// The setting at -1 with at least one `SortMergeJoin` in the SQL plans. Low severity: the
    /// plan rules weigh each join by its measured sizes.
    pub static BROADCAST_DISABLED = {
        code: "CF003",
        name: "broadcast-disabled",
        category: Config,
        claims: Saving,
        needs: [Environment, SqlPlans],
        summary: "Broadcast joins switched off while sort-merge joins ran",
        thresholds: &[] as &[Threshold],
        check: check_broadcast,
    };
}

fn check_broadcast(ctx: &Context, _: &Thresholds) -> Vec<Finding> {
    if property(ctx, "spark.sql.autoBroadcastJoinThreshold") != Some("-1") || !ctx.app.uses_sql() {
        return Vec::new();
    }
    let joins: Vec<i64> = ctx
        .app
        .sql
        .iter()
        .filter(|s| s.plan_text_that_ran().contains("SortMergeJoin"))
        .map(|s| s.execution_id)
        .collect();
    if joins.is_empty() {
        return Vec::new();
    }
    let title = format!(
        "Broadcast joins were switched off (spark.sql.autoBroadcastJoinThreshold=-1) and {} SQL execution(s) ran sort-merge joins",
        joins.len()
    );
    let mut finding = Finding::new(&BROADCAST_DISABLED, Severity::Low, title, 0)
        .evidence("sql_executions_with_sort_merge_join", joins.len())
        .recommend("Remove spark.sql.autoBroadcastJoinThreshold=-1 (default 10 MB) or raise it to your dimension tables' size, or broadcast explicitly: fact.join(F.broadcast(dim), key).");
    finding.scope.sql_execution_ids = joins;
    vec![finding]
}

/// The rule alone on real Spark output: a log where it fires, and one where it must not.
#[cfg(test)]
mod real_logs {
    use super::BROADCAST_DISABLED;
    use crate::rules::testing::{assert_fires, assert_quiet, on_log};

    #[test]
    fn fires_on_the_disabled_broadcast() {
        assert_fires(
            &on_log(&BROADCAST_DISABLED, "patterns/broadcast-disabled", &[]),
            BROADCAST_DISABLED.code,
        );
    }

    #[test]
    fn is_quiet_on_the_healthy_run() {
        assert_quiet(&on_log(&BROADCAST_DISABLED, "patterns/healthy", &[]));
    }
}
