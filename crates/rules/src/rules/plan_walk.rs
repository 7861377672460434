//! Walking physical plans: what several plan rules share.

use sparkdiag_plan::{Operator, Partitioning, PartitioningKind, Plan};

use sparkdiag_facts::PlanInput;

use crate::Finding;

/// Operators that keep their input's partitioning and carry no decision of their own.
///
/// Photon draws one shuffle as three operators, `PhotonShuffleExchangeSink` (the write side,
/// which prints the partitioning) → `PhotonShuffleMapStage` (the exchange, counted as one) →
/// `PhotonShuffleExchangeSource` (the read side): the sink and the source are passed through
/// like AQE's query-stage wrappers, so that a walk from an operator reaches the map stage as it
/// reaches an `Exchange` (Photon operators are classified by the Spark operator they replace:
/// `PhotonWindow` is a `Window`, `PhotonSort` a `Sort`; see `sparkdiag_plan::Operator`).
pub const PASS_THROUGH: &[Operator] = &[
    Operator::Project,
    Operator::Filter,
    Operator::Sort,
    Operator::ShuffleQueryStage,
    Operator::AqeShuffleRead,
    Operator::ColumnarToRow,
    Operator::RowToColumnar,
    Operator::ShuffleSource,
    Operator::ShuffleSink,
];

/// The partitioning of the exchange at `idx`: an `Exchange`'s own, or for Photon's
/// `PhotonShuffleMapStage` its sink's, where Photon prints it.
pub fn partitioning(plan: &Plan, idx: usize) -> Option<&Partitioning> {
    plan.exchange_info(idx).and_then(|e| e.partitioning)
}

/// The shuffle feeding `idx` when it moves every row into one partition (`SinglePartition`),
/// through operators that keep their input's partitioning: a `Window` or `PhotonWindow` without
/// `partitionBy`, a global top-k.
pub fn single_partition_feed(plan: &Plan, idx: usize) -> Option<usize> {
    let feed = below(plan, idx, PASS_THROUGH)?;
    (plan.nodes[feed].operator == Operator::Exchange
        && partitioning(plan, feed).is_some_and(|p| p.kind == PartitioningKind::Single))
    .then_some(feed)
}

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
    finding.scope.plan_index = Some(index);
    finding
        .scope
        .sql_execution_ids
        .extend(input.sql_execution_id);
    finding
        .scope
        .stage_ids
        .extend(input.stage_ids.iter().copied());
    // Plans from a log are named by Spark's own node ids (its UI's), plan texts by theirs.
    let nodes: Vec<usize> = nodes.into_iter().collect();
    if input.sql_execution_id.is_some() {
        finding.title = spark_labels(&finding.title, input);
        let text: Vec<u32> = nodes
            .iter()
            .filter_map(|&i| input.plan.nodes[i].id)
            .collect();
        finding
            .evidence
            .insert("plan_text_operator_ids".into(), text.into());
        finding.scope.plan_node_ids.extend(
            nodes
                .iter()
                .filter_map(|&i| input.spark_ids.get(i).copied().flatten()),
        );
    } else {
        finding
            .scope
            .plan_node_ids
            .extend(nodes.iter().filter_map(|&i| input.plan.nodes[i].id));
    }
    finding.scope.plan_node_ids.sort_unstable();
    finding.scope.plan_node_ids.dedup();
    finding
}

/// A title naming operators as the plan text does, `(14) SortMergeJoin`, rewritten with Spark's
/// own node ids, `(8) SortMergeJoin`, for a plan from a log. An operator label is `(digits)` at
/// the start or after a space, followed by a space and a capital letter; ids the plan text has
/// but Spark's graph does not pair are left as they were.
fn spark_labels(title: &str, input: &PlanInput) -> String {
    let map: std::collections::HashMap<u32, u32> = input
        .plan
        .nodes
        .iter()
        .zip(&input.spark_ids)
        .filter_map(|(n, s)| Some((n.id?, (*s)?)))
        .collect();
    let mut out = String::with_capacity(title.len());
    let mut rest = title;
    while let Some(open) = rest.find('(') {
        let (before, after) = rest.split_at(open);
        out.push_str(before);
        let label = after[1..]
            .find(')')
            .map(|close| (&after[1..1 + close], &after[close + 2..]))
            .filter(|(digits, tail)| {
                !digits.is_empty()
                    && digits.chars().all(|c| c.is_ascii_digit())
                    && (out.is_empty() || out.ends_with(' '))
                    && tail
                        .strip_prefix(' ')
                        .is_some_and(|t| t.starts_with(|c: char| c.is_ascii_uppercase()))
            })
            .and_then(|(digits, tail)| Some((map.get(&digits.parse::<u32>().ok()?)?, tail)));
        match label {
            Some((id, tail)) => {
                out.push_str(&format!("({id})"));
                rest = tail;
            }
            None => {
                out.push('(');
                rest = &after[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// `(12) Exchange` for titles.
pub fn node_label(plan: &Plan, idx: usize) -> String {
    let node = &plan.nodes[idx];
    match node.id {
        Some(id) => format!("({id}) {}", node.name.trim()),
        None => node.name.trim().to_string(),
    }
}
