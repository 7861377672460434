//! Spark's own ids for the nodes of a plan, as its UI and the History Server's `/sql` REST API
//! number them (`SparkPlanGraph` in Spark's `sql/core/.../execution/ui/`): wrappers such as
//! `InputAdapter` and AQE's query stages get no id, a `WholeStageCodegen` cluster gets one before
//! the operators inside it, and a reused exchange or subquery points at the original.

use std::collections::HashMap;

use sparkdiag_eventlog::events::SparkPlanInfo;

/// The ids of one plan.
pub struct PlanGraph<'a> {
    /// Every node in pre-order (wrappers included), as the plan's `children` lists walk it.
    pub preorder: Vec<&'a SparkPlanInfo>,
    /// Spark's id of the node at each pre-order position; `None` for nodes Spark's graph skips.
    pub ids: Vec<Option<usize>>,
}

impl<'a> PlanGraph<'a> {
    pub fn new(root: &'a SparkPlanInfo) -> PlanGraph<'a> {
        let mut preorder = Vec::new();
        let mut stack = vec![root];
        while let Some(node) = stack.pop() {
            preorder.push(node);
            stack.extend(node.children.iter().rev());
        }
        let position: HashMap<*const SparkPlanInfo, usize> = preorder
            .iter()
            .enumerate()
            .map(|(i, n)| (*n as *const SparkPlanInfo, i))
            .collect();
        let mut builder = Builder {
            position,
            ids: vec![None; preorder.len()],
            next: 0,
            exchanges: Vec::new(),
        };
        builder.visit(root, false);
        PlanGraph {
            ids: builder.ids,
            preorder,
        }
    }

    /// The nodes Spark's graph has, by id.
    pub fn nodes(&self) -> Vec<(usize, &'a SparkPlanInfo)> {
        let mut out: Vec<(usize, &SparkPlanInfo)> = self
            .ids
            .iter()
            .zip(&self.preorder)
            .filter_map(|(id, node)| Some(((*id)?, *node)))
            .collect();
        out.sort_by_key(|(id, _)| *id);
        out
    }
}

struct Builder<'a> {
    position: HashMap<*const SparkPlanInfo, usize>,
    ids: Vec<Option<usize>>,
    next: usize,
    /// Exchanges and subqueries already numbered, for reuses to point at.
    exchanges: Vec<&'a SparkPlanInfo>,
}

impl<'a> Builder<'a> {
    fn number(&mut self, node: &'a SparkPlanInfo) {
        if let Some(&at) = self.position.get(&(node as *const SparkPlanInfo)) {
            self.ids[at] = Some(self.next);
        }
        self.next += 1;
    }

    /// Spark compares plan infos by name, description and children, not by identity.
    fn seen(&self, node: &SparkPlanInfo) -> bool {
        self.exchanges.iter().any(|e| same(e, node))
    }

    fn visit(&mut self, node: &'a SparkPlanInfo, in_cluster: bool) {
        let name = node.node_name.as_str();
        let head = node.children.first();
        let subquery = matches!(name, "Subquery" | "SubqueryBroadcast");
        let query_stage = matches!(
            name,
            "BroadcastQueryStage"
                | "ShuffleQueryStage"
                | "TableCacheQueryStage"
                | "ResultQueryStage"
        );
        // Reuses point at the node already numbered: nothing new in the graph.
        let reuse = (query_stage && head.is_some_and(|c| self.seen(c)))
            || (subquery && !in_cluster && self.seen(node))
            || (name == "ReusedExchange" && head.is_some_and(|c| self.seen(c)));
        if reuse {
            return;
        }
        if name.starts_with("WholeStageCodegen") {
            self.number(node);
            if let Some(child) = head {
                self.visit(child, true);
            }
        } else if name == "InputAdapter" || query_stage {
            if let Some(child) = head {
                self.visit(child, false);
            }
        } else if subquery && in_cluster {
            self.visit(node, false);
        } else if name == "ReusedSubquery" {
            if let Some(child) = head {
                self.visit(child, in_cluster);
            }
        } else {
            self.number(node);
            if name.contains("Exchange") || subquery {
                self.exchanges.push(node);
            }
            for child in &node.children {
                self.visit(child, in_cluster);
            }
        }
    }
}

fn same(a: &SparkPlanInfo, b: &SparkPlanInfo) -> bool {
    std::ptr::eq(a, b)
        || (a.node_name == b.node_name
            && a.simple_string == b.simple_string
            && a.children.len() == b.children.len()
            && a.children.iter().zip(&b.children).all(|(x, y)| same(x, y)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(name: &str, children: Vec<SparkPlanInfo>) -> SparkPlanInfo {
        SparkPlanInfo {
            node_name: name.into(),
            simple_string: name.into(),
            children,
            ..Default::default()
        }
    }

    #[test]
    fn wrappers_get_no_id_and_codegen_clusters_come_first() {
        // WholeStageCodegen (1) > HashAggregate > InputAdapter > Exchange > WholeStageCodegen (2)
        // > Project > ColumnarToRow > InputAdapter > Scan
        let plan = node(
            "WholeStageCodegen (1)",
            vec![node(
                "HashAggregate",
                vec![node(
                    "InputAdapter",
                    vec![node(
                        "Exchange",
                        vec![node(
                            "WholeStageCodegen (2)",
                            vec![node(
                                "Project",
                                vec![node("InputAdapter", vec![node("Scan", vec![])])],
                            )],
                        )],
                    )],
                )],
            )],
        );
        let graph = PlanGraph::new(&plan);
        assert_eq!(
            graph.ids,
            vec![
                Some(0),
                Some(1),
                None,
                Some(2),
                Some(3),
                Some(4),
                None,
                Some(5)
            ]
        );
        let names: Vec<&str> = graph
            .nodes()
            .iter()
            .map(|(_, n)| n.node_name.as_str())
            .collect();
        assert_eq!(
            names,
            [
                "WholeStageCodegen (1)",
                "HashAggregate",
                "Exchange",
                "WholeStageCodegen (2)",
                "Project",
                "Scan"
            ]
        );
    }

    #[test]
    fn a_reused_exchange_points_at_the_original() {
        let exchange = || node("Exchange", vec![node("Scan", vec![])]);
        let plan = node(
            "SortMergeJoin",
            vec![exchange(), node("ReusedExchange", vec![exchange()])],
        );
        let graph = PlanGraph::new(&plan);
        assert_eq!(graph.ids, vec![Some(0), Some(1), Some(2), None, None, None]);
    }
}
