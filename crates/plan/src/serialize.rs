//! The `sparkdiag/plan/v1` JSON shape of a plan: nodes name their children by id.

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};

use crate::model::{
    AqeLabel, Plan, PlanKind, PlanWarning, Subplan, Subquery, Trailer, WarningKind,
};

/// The schema name of the `sparkdiag plan --format json` document.
pub const SCHEMA: &str = "sparkdiag/plan/v1";

impl Serialize for Plan {
    /// One entry of the `plans` array: `kind`, `line`, `is_final_plan`, `aqe_label`,
    /// `exchanges`, `broadcast_exchanges`, `reused_exchanges`, `user_requested_exchanges` (ids),
    /// `truncated`, `root` (id), `nodes` (the plan that runs, each id once), `subqueries`,
    /// `optimized_out`, `initial_plan` (`{root, nodes}` or null), `trailers`, `warnings`.
    /// `findings` is not part of a parsed plan; the caller adds it next to these keys.
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let infos = self.exchange_infos();
        let count = |kind| infos.iter().filter(|e| e.kind == kind).count();
        let user: Vec<Option<u32>> = infos
            .iter()
            .filter(|e| e.user_requested)
            .map(|e| self.nodes[e.node].id)
            .collect();
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry(
            "kind",
            match self.kind {
                PlanKind::Formatted => "formatted",
                PlanKind::TreeOnly => "tree_only",
            },
        )?;
        map.serialize_entry("line", &self.line)?;
        map.serialize_entry("is_final_plan", &self.is_final_plan)?;
        map.serialize_entry("aqe_label", &self.aqe_label.map(label_str))?;
        map.serialize_entry("exchanges", &count(crate::ExchangeKind::Shuffle))?;
        map.serialize_entry(
            "broadcast_exchanges",
            &count(crate::ExchangeKind::Broadcast),
        )?;
        map.serialize_entry("reused_exchanges", &count(crate::ExchangeKind::Reused))?;
        map.serialize_entry("user_requested_exchanges", &user)?;
        map.serialize_entry("truncated", &self.truncated)?;
        map.serialize_entry("root", &self.nodes[self.root].id)?;
        map.serialize_entry(
            "nodes",
            &Nodes {
                plan: self,
                indexes: self.running_nodes(),
            },
        )?;
        map.serialize_entry("subqueries", &Subqueries(self))?;
        if !self.optimized_out.is_empty() {
            map.serialize_entry("optimized_out", &Subplans(self))?;
        }
        match self.initial_plan() {
            Some(root) => map.serialize_entry("initial_plan", &InitialPlan { plan: self, root })?,
            None => map.serialize_entry("initial_plan", &None::<()>)?,
        }
        map.serialize_entry("trailers", &Trailers(&self.trailers))?;
        map.serialize_entry("warnings", &Warnings(&self.warnings))?;
        map.end()
    }
}

fn label_str(label: AqeLabel) -> &'static str {
    match label {
        AqeLabel::Final => "final",
        AqeLabel::Current => "current",
        AqeLabel::Initial => "initial",
    }
}

struct Nodes<'a> {
    plan: &'a Plan,
    indexes: Vec<usize>,
}

impl Serialize for Nodes<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.indexes.len()))?;
        for &idx in &self.indexes {
            seq.serialize_element(&NodeJson {
                plan: self.plan,
                idx,
            })?;
        }
        seq.end()
    }
}

struct NodeJson<'a> {
    plan: &'a Plan,
    idx: usize,
}

impl Serialize for NodeJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let node = &self.plan.nodes[self.idx];
        let children: Vec<Option<u32>> = node
            .children
            .iter()
            .map(|&c| self.plan.nodes.get(c).and_then(|n| n.id))
            .collect();
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("id", &node.id)?;
        map.serialize_entry("name", &node.name)?;
        map.serialize_entry("operator", node.operator.as_str())?;
        map.serialize_entry("children", &children)?;
        map.serialize_entry("codegen_stage", &node.codegen_stage)?;
        map.serialize_entry("whole_stage_codegen", &node.whole_stage_codegen)?;
        if node.photon {
            map.serialize_entry("photon", &true)?;
        }
        if node.inner {
            map.serialize_entry("inner", &true)?;
        }
        map.serialize_entry("line", &node.line)?;
        map.serialize_entry("details", &node.details)?;
        map.end()
    }
}

struct Subqueries<'a>(&'a Plan);

impl Serialize for Subqueries<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let plan = self.0;
        let mut seq = serializer.serialize_seq(Some(plan.subqueries.len()))?;
        for sub in &plan.subqueries {
            seq.serialize_element(&SubqueryJson { plan, sub })?;
        }
        seq.end()
    }
}

struct SubqueryJson<'a> {
    plan: &'a Plan,
    sub: &'a Subquery,
}

impl Serialize for SubqueryJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("index", &self.sub.index)?;
        map.serialize_entry("hosting_operator_id", &self.sub.hosting_operator_id)?;
        map.serialize_entry("hosting_expression", &self.sub.hosting_expression)?;
        map.serialize_entry("root", &root_id(self.plan, self.sub.root))?;
        map.end()
    }
}

struct Subplans<'a>(&'a Plan);

impl Serialize for Subplans<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let plan = self.0;
        let mut seq = serializer.serialize_seq(Some(plan.optimized_out.len()))?;
        for sub in &plan.optimized_out {
            seq.serialize_element(&SubplanJson { plan, sub })?;
        }
        seq.end()
    }
}

struct SubplanJson<'a> {
    plan: &'a Plan,
    sub: &'a Subplan,
}

impl Serialize for SubplanJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("index", &self.sub.index)?;
        map.serialize_entry("root", &root_id(self.plan, self.sub.root))?;
        map.end()
    }
}

fn root_id(plan: &Plan, root: Option<usize>) -> Option<u32> {
    root.and_then(|r| plan.nodes.get(r)).and_then(|n| n.id)
}

struct InitialPlan<'a> {
    plan: &'a Plan,
    root: usize,
}

impl Serialize for InitialPlan<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("root", &root_id(self.plan, Some(self.root)))?;
        map.serialize_entry(
            "nodes",
            &Nodes {
                plan: self.plan,
                indexes: self.plan.initial_nodes(),
            },
        )?;
        map.end()
    }
}

struct Trailers<'a>(&'a [Trailer]);

impl Serialize for Trailers<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for t in self.0 {
            let mut entry = std::collections::BTreeMap::new();
            entry.insert("title", t.title.as_str());
            entry.insert("text", t.text.as_str());
            seq.serialize_element(&entry)?;
        }
        seq.end()
    }
}

struct Warnings<'a>(&'a [PlanWarning]);

impl Serialize for Warnings<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut seq = serializer.serialize_seq(Some(self.0.len()))?;
        for w in self.0 {
            seq.serialize_element(&WarningJson(w))?;
        }
        seq.end()
    }
}

struct WarningJson<'a>(&'a PlanWarning);

impl Serialize for WarningJson<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let kind = match self.0.kind {
            WarningKind::MissingDetails => "missing_details",
            WarningKind::OrphanDetails => "orphan_details",
            WarningKind::NameMismatch => "name_mismatch",
            WarningKind::DuplicateDetails => "duplicate_details",
            WarningKind::ListCountMismatch => "list_count_mismatch",
            WarningKind::UnresolvedReuse => "unresolved_reuse",
            WarningKind::StrayLine => "stray_line",
        };
        let mut map = serializer.serialize_map(Some(3))?;
        map.serialize_entry("line", &self.0.line)?;
        map.serialize_entry("kind", kind)?;
        map.serialize_entry("message", &self.0.message)?;
        map.end()
    }
}
