//! Walking physical plans: what several plan rules share.

use sparkdiag_plan::{Operator, Plan};

use crate::{Finding, PlanInput};

/// Operators that keep their input's partitioning and carry no decision of their own.
pub const PASS_THROUGH: &[Operator] = &[
    Operator::Project,
    Operator::Filter,
    Operator::Sort,
    Operator::ShuffleQueryStage,
    Operator::AqeShuffleRead,
    Operator::ColumnarToRow,
    Operator::RowToColumnar,
];

/// From `idx`, follows single children through `pass` operators; returns the first other node.
pub fn below(plan: &Plan, idx: usize, pass: &[Operator]) -> Option<usize> {
    let mut at = *plan.nodes[idx]
        .children
        .iter()
        .find(|&&c| !plan.nodes[c].inner)?;
    loop {
        let node = &plan.nodes[at];
        let children: Vec<usize> = node
            .children
            .iter()
            .copied()
            .filter(|&c| !plan.nodes[c].inner)
            .collect();
        if !pass.contains(&node.operator) || children.len() != 1 {
            return Some(at);
        }
        at = children[0];
    }
}

/// The running nodes (each operator id once), as indexes.
pub fn running(plan: &Plan) -> Vec<usize> {
    plan.running_nodes()
}

/// Scope a finding to a plan: its SQL execution, the stages of its jobs, and these operators.
pub fn scoped(
    mut finding: Finding,
    index: usize,
    input: &PlanInput,
    nodes: impl IntoIterator<Item = usize>,
) -> Finding {
    finding.evidence.insert("plan_index".into(), index.into());
    finding
        .scope
        .sql_execution_ids
        .extend(input.sql_execution_id);
    finding
        .scope
        .stage_ids
        .extend(input.stage_ids.iter().copied());
    finding
        .scope
        .plan_node_ids
        .extend(nodes.into_iter().filter_map(|i| input.plan.nodes[i].id));
    finding.scope.plan_node_ids.sort_unstable();
    finding.scope.plan_node_ids.dedup();
    finding
}

/// `(12) Exchange` for titles.
pub fn node_label(plan: &Plan, idx: usize) -> String {
    let node = &plan.nodes[idx];
    match node.id {
        Some(id) => format!("({id}) {}", node.name.trim()),
        None => node.name.trim().to_string(),
    }
}
