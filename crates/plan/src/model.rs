//! The parsed plan: one arena of nodes per plan, plus its subqueries, trailers and warnings.

use std::collections::HashSet;

use crate::details::Details;
use crate::operator::Operator;

/// Which explain mode printed the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PlanKind {
    /// `EXPLAIN FORMATTED` / `df.explain("formatted")`: a tree of `Name (id)` lines followed by one
    /// detail block per id.
    Formatted,
    /// Plain `explain()` / `explain(True)` / `EXPLAIN EXTENDED|COST`: only a tree of one-line
    /// operator strings. Spark prints no ids here; the parser numbers the nodes itself (see
    /// [`PlanNode::id`]).
    TreeOnly,
}

/// The header an adaptive (AQE) plan printed above a sub-tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AqeLabel {
    /// `== Final Plan ==`: the plan after execution finished.
    Final,
    /// `== Current Plan ==`: the plan while execution was still running.
    Current,
    /// `== Initial Plan ==`: the plan before any query stage ran.
    Initial,
}

/// Where in the text a node was drawn.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Section {
    /// The main tree (for AQE: the Final/Current tree, or the only tree printed).
    Main,
    /// The `== Initial Plan ==` tree printed next to a Final or Current tree. It does not run.
    InitialPlan,
    /// The tree of [`Plan::subqueries`]`[i]` (`===== Subqueries =====`).
    Subquery(usize),
    /// The tree of [`Plan::optimized_out`]`[i]` (`===== Adaptively Optimized Out Exchanges =====`).
    OptimizedOut(usize),
}

/// One operator line of a plan tree.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanNode {
    /// The operator id: `(n)` in formatted output, `None` for `(unknown)`. Tree-only output prints
    /// no ids, so the parser numbers those nodes itself, in Spark's own order (post-order,
    /// children left to right, from 1), which keeps `children` expressible as ids.
    pub id: Option<u32>,
    /// The operator name as Spark prints it in the detail header, e.g. `Exchange`,
    /// `SortMergeJoin`, `Scan parquet spark_catalog.default.store_sales`, `PhotonScan parquet `
    /// (path-based reads keep their trailing space). Tree-only plans: the name part of the line.
    pub name: String,
    /// The normalised operator kind (Photon operators map to their Spark equivalent).
    pub operator: Operator,
    /// The name starts with `Photon` (a Databricks Photon operator).
    pub photon: bool,
    /// The whole-stage codegen stage: `[codegen id : k]` (formatted) or `*(k)` (tree-only).
    pub codegen_stage: Option<u32>,
    /// The line carried a `*` marker: the operator runs inside a generated pipeline.
    pub whole_stage_codegen: bool,
    /// Child nodes, as indexes into [`Plan::nodes`]. Inner children (subquery plans in tree-only
    /// output, a command's logical plan, recursive-CTE references) are included, flagged
    /// [`PlanNode::inner`].
    pub children: Vec<usize>,
    /// The parent node's index, `None` for a tree root.
    pub parent: Option<usize>,
    /// Printed as an inner child of its parent (two levels deeper), not as a plan child.
    pub inner: bool,
    /// For an `AdaptiveSparkPlan` that printed an `== Initial Plan ==` next to a Final/Current
    /// plan: the root of that initial tree. The running tree is in `children`.
    pub initial_plan: Option<usize>,
    /// The AQE header this node was printed under, when it is the root of such a sub-tree.
    pub aqe_label: Option<AqeLabel>,
    /// Where the node was drawn.
    pub section: Section,
    /// 1-based line number of the tree line.
    pub line: usize,
    /// The tree line's text after the indentation and codegen marker, unchanged.
    pub tree_text: String,
    /// What the detail block (formatted) or the one-line string (tree-only) says.
    pub details: Details,
}

/// One entry of the `===== Subqueries =====` section.
#[derive(Debug, Clone, PartialEq)]
pub struct Subquery {
    /// The `Subquery:<i>` number.
    pub index: u32,
    /// The id of the operator whose expression holds the subquery (`None` for `unknown`).
    pub hosting_operator_id: Option<u32>,
    /// The hosting expression, e.g. `Subquery scalar-subquery#12, [id=#34]` or
    /// `ss_sold_date_sk#4 IN dynamicpruning#5`.
    pub hosting_expression: String,
    /// Root of the subquery's tree; `None` when Spark printed no tree (a reused subquery whose
    /// plan is printed under another entry).
    pub root: Option<usize>,
    /// 1-based line of the `Subquery:` header.
    pub line: usize,
}

/// One entry of the `===== Adaptively Optimized Out Exchanges =====` section (Spark 3.5+): an
/// exchange that a `ReusedExchange` points at but that AQE removed from the main tree.
#[derive(Debug, Clone, PartialEq)]
pub struct Subplan {
    /// The `Subplan:<i>` number.
    pub index: u32,
    /// Root of the sub-plan's tree.
    pub root: Option<usize>,
    /// 1-based line of the `Subplan:` header.
    pub line: usize,
}

/// A vendor or extension section after the plan, e.g. `== Photon Explanation ==`,
/// `== Optimizer Statistics (table names per statistics state) ==`,
/// `== Extended Information (…) ==`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Trailer {
    /// The title between the `==` marks.
    pub title: String,
    /// The section's lines, joined with `\n`, trailing blank lines removed.
    pub text: String,
    /// 1-based line of the header.
    pub line: usize,
}

/// Something odd that did not stop the parse: an id in the tree without a detail block, a
/// detail block for no tree node, names that disagree, a `[n]` count that does not match its
/// list, an unresolved `Reuses operator id`, or a line the parser did not understand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanWarning {
    /// 1-based line number.
    pub line: usize,
    /// The class of warning.
    pub kind: WarningKind,
    /// One sentence for a human.
    pub message: String,
}

/// The class of a [`PlanWarning`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarningKind {
    /// A node with an id has no detail block.
    MissingDetails,
    /// A detail block's id appears in no tree.
    OrphanDetails,
    /// The tree line and the detail header name different operators.
    NameMismatch,
    /// Two detail blocks carry the same id.
    DuplicateDetails,
    /// A field's `[n]` count differs from the number of list elements parsed.
    ListCountMismatch,
    /// `ReusedExchange [Reuses operator id: N]` where no node has id `N`.
    UnresolvedReuse,
    /// A line outside any block or section the parser knows.
    StrayLine,
}

/// One physical plan found in the text.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Formatted or tree-only.
    pub kind: PlanKind,
    /// 1-based line of the `== Physical Plan ==` header (or of the first tree line when the text
    /// had no header).
    pub line: usize,
    /// Every node drawn in this plan: main tree, initial plan, subquery trees and optimized-out
    /// sub-plans. A node drawn twice (AQE re-draws shared nodes and subqueries) appears twice.
    pub nodes: Vec<PlanNode>,
    /// Index of the main tree's root.
    pub root: usize,
    /// `Some(true)` when the outermost `AdaptiveSparkPlan` says `isFinalPlan=true` (or printed a
    /// `== Final Plan ==`), `Some(false)` for a plan not yet final, `None` without AQE.
    pub is_final_plan: Option<bool>,
    /// The header the outermost `AdaptiveSparkPlan` printed above the tree that runs, if any.
    pub aqe_label: Option<AqeLabel>,
    /// The `===== Subqueries =====` entries, in order.
    pub subqueries: Vec<Subquery>,
    /// The `===== Adaptively Optimized Out Exchanges =====` entries, in order.
    pub optimized_out: Vec<Subplan>,
    /// Sections after the plan (`== Photon Explanation ==` and the like).
    pub trailers: Vec<Trailer>,
    /// The text ended with Spark's `... <n> more characters` marker.
    pub truncated: bool,
    /// Oddities that did not stop the parse.
    pub warnings: Vec<PlanWarning>,
}

impl Plan {
    /// The main tree's root node.
    pub fn root_node(&self) -> &PlanNode {
        &self.nodes[self.root]
    }

    /// The first node drawn with operator id `id`.
    pub fn node_by_id(&self, id: u32) -> Option<&PlanNode> {
        self.nodes.iter().find(|node| node.id == Some(id))
    }

    /// The root of the `== Initial Plan ==` tree printed next to a Final/Current tree by the
    /// outermost `AdaptiveSparkPlan`, if any.
    pub fn initial_plan(&self) -> Option<usize> {
        self.outermost_adaptive()
            .and_then(|idx| self.nodes[idx].initial_plan)
    }

    /// The outermost `AdaptiveSparkPlan` of the main tree (pre-order), if any.
    pub fn outermost_adaptive(&self) -> Option<usize> {
        self.preorder(self.root)
            .into_iter()
            .find(|&idx| self.nodes[idx].operator == Operator::AdaptiveSparkPlan)
    }

    /// Indexes of the tree under `root` in pre-order, following `children` (inner children
    /// included, `initial_plan` not). Iterative, so deep trees cannot overflow the stack.
    pub fn preorder(&self, root: usize) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(idx) = stack.pop() {
            let Some(node) = self.nodes.get(idx) else {
                continue;
            };
            out.push(idx);
            stack.extend(node.children.iter().rev());
        }
        out
    }

    /// The nodes of the plan that runs, each operator once: the main tree (the Final or Current
    /// tree when AQE printed one, never the Initial tree printed next to it), then every
    /// subquery tree, then every optimized-out sub-plan. A node drawn again under the same id
    /// (AQE re-draws) is listed once, at its first drawing; in tree-only output, a subquery
    /// drawn again with the same `Subquery …#n, [id=#m]` text is skipped with its sub-tree.
    pub fn running_nodes(&self) -> Vec<usize> {
        let mut roots = vec![self.root];
        roots.extend(self.subqueries.iter().filter_map(|s| s.root));
        roots.extend(self.optimized_out.iter().filter_map(|s| s.root));
        self.unique_nodes(&roots)
    }

    /// The nodes of the `== Initial Plan ==` tree (empty when none was printed next to a
    /// Final/Current tree), each id once.
    pub fn initial_nodes(&self) -> Vec<usize> {
        match self.initial_plan() {
            Some(root) => self.unique_nodes(&[root]),
            None => Vec::new(),
        }
    }

    fn unique_nodes(&self, roots: &[usize]) -> Vec<usize> {
        let mut seen_ids = HashSet::new();
        let mut seen_idx = HashSet::new();
        let mut seen_subqueries: HashSet<&str> = HashSet::new();
        let mut out = Vec::new();
        for &root in roots {
            let mut stack = vec![root];
            while let Some(idx) = stack.pop() {
                let Some(node) = self.nodes.get(idx) else {
                    continue;
                };
                if !seen_idx.insert(idx) {
                    continue;
                }
                // Tree-only output draws a subquery under every expression that uses it; the
                // same `Subquery subquery#5, [id=#12]` text is the same subquery, run once.
                if node.operator == Operator::Subquery
                    && !seen_subqueries.insert(node.tree_text.as_str())
                {
                    continue;
                }
                stack.extend(node.children.iter().rev());
                if let Some(id) = node.id
                    && !seen_ids.insert(id)
                {
                    continue;
                }
                out.push(idx);
            }
        }
        out
    }
}
