//! The `sparkdiag/plan/v1` document that `sparkdiag plan --format json` prints: each plan of a
//! plan text with the findings about it.

use serde::Serialize;
use sparkdiag_plan::Plan;
use sparkdiag_rules::Finding;

/// Every plan of one plan text, in the order the text gives them.
#[derive(Debug, Serialize)]
pub struct PlanReport<'a> {
    pub schema: &'static str,
    pub plans: Vec<PlanOut<'a>>,
}

/// One plan (its own `sparkdiag/plan/v1` fields) and the findings about it.
#[derive(Debug, Serialize)]
pub struct PlanOut<'a> {
    #[serde(flatten)]
    pub plan: &'a Plan,
    pub findings: Vec<&'a Finding>,
}

impl<'a> PlanReport<'a> {
    /// Pairs `plans` with the `findings` the plan rules returned for them.
    pub fn new(plans: &'a [Plan], findings: &'a [Finding]) -> PlanReport<'a> {
        PlanReport {
            schema: sparkdiag_plan::SCHEMA,
            plans: plans
                .iter()
                .enumerate()
                .map(|(i, plan)| PlanOut {
                    plan,
                    findings: findings_of_plan(findings, i),
                })
                .collect(),
        }
    }
}

/// The findings about plan `index` of those the rules were given.
pub fn findings_of_plan(findings: &[Finding], index: usize) -> Vec<&Finding> {
    findings
        .iter()
        .filter(|f| f.scope.plan_index == Some(index))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_finding_goes_with_the_plan_it_names() {
        // Two real plans in one text: a clean one, then one with more Exchanges than EX001 allows.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/plans/");
        let clean = std::fs::read_to_string(format!("{dir}healthy.txt")).unwrap();
        let busy = std::fs::read_to_string(format!("{dir}antipattern-many-exchanges.txt")).unwrap();
        let plans = sparkdiag_plan::parse_plans(&format!("{clean}\n{busy}")).unwrap();
        let config = sparkdiag_rules::Config::default();
        let (plans, findings) = sparkdiag_rules::analyze_plans(plans, &config);
        let report = PlanReport::new(&plans, &findings);
        assert_eq!(report.schema, sparkdiag_plan::SCHEMA);
        let last = report.plans.len() - 1;
        assert!(
            report.plans[last]
                .findings
                .iter()
                .any(|f| f.rule == "EX001")
        );
        for (i, plan) in report.plans.iter().enumerate() {
            for f in &plan.findings {
                assert_eq!(f.scope.plan_index, Some(i));
                assert_eq!(f.evidence["plan_index"], i);
            }
        }
        let paired: usize = report.plans.iter().map(|p| p.findings.len()).sum();
        assert_eq!(paired, findings.len(), "every finding names its plan");
    }
}
