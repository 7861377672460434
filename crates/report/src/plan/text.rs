//! The text view of `sparkdiag plan`: each plan's running tree, indented, and the findings about
//! it with their fixes.

use sparkdiag_contract::Finding;
use sparkdiag_contract::Plan;

use crate::findings_of_plan;

/// Every plan of a plan text with its findings, for a terminal.
pub fn render(plans: &[Plan], findings: &[Finding]) -> String {
    let mut out = String::new();
    for (i, plan) in plans.iter().enumerate() {
        out.push_str(&format!(
            "Plan {} (line {}): {} shuffle Exchange(s), {} broadcast, {} reused{}\n",
            i + 1,
            plan.line,
            plan.exchanges(),
            plan.broadcast_exchanges(),
            plan.reused_exchanges(),
            match plan.is_final_plan {
                Some(true) => " — AQE final plan",
                Some(false) => " — AQE plan, not final",
                None => "",
            }
        ));
        let mut lines = Vec::new();
        tree_lines(plan, plan.root, 0, &mut lines);
        for line in lines {
            out.push_str(&format!("  {line}\n"));
        }
        let found = findings_of_plan(findings, i);
        if found.is_empty() {
            out.push_str("  No findings.\n");
        }
        for f in found {
            out.push_str(&format!(
                "  {} {} {}\n      fix: {}\n",
                f.severity.name(),
                f.rule,
                f.title,
                f.recommendation
            ));
        }
        out.push('\n');
    }
    out
}

/// The running tree, indented, one operator a line.
fn tree_lines(plan: &Plan, node: usize, depth: usize, out: &mut Vec<String>) {
    let n = &plan.nodes[node];
    let id = n.id.map(|id| format!(" ({id})")).unwrap_or_default();
    let stage = n
        .codegen_stage
        .map(|s| format!(" [codegen {s}]"))
        .unwrap_or_default();
    out.push(format!(
        "{}{}{}{}",
        "  ".repeat(depth),
        n.name.trim(),
        id,
        stage
    ));
    for &child in n.children.iter().filter(|&&c| !plan.nodes[c].inner) {
        tree_lines(plan, child, depth + 1, out);
    }
}
