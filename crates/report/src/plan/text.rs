//! The text view of `sparkdiag plan`: each plan's running tree, indented, and the findings about
//! it with their fixes.

use sparkdiag_contract::Finding;
use sparkdiag_contract::Plan;

use crate::findings_of_plan;

/// Every plan of a plan text with its findings, for a terminal: the findings wrapped at
/// `width` columns when given (the tree is not: an operator's depth is its indent).
pub fn render(plans: &[Plan], findings: &[Finding], width: Option<usize>) -> String {
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
            let finding = format!("  {} {} {}", f.severity.name(), f.rule, f.title);
            let fix = format!("      fix: {}", f.recommendation);
            match width {
                Some(width) => {
                    out.push_str(&crate::analyze::text::wrap(&finding, width, 4));
                    out.push_str(&crate::analyze::text::wrap(&fix, width, 11));
                }
                None => out.push_str(&format!("{finding}\n{fix}\n")),
            }
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
