//! The `sparkdiag/plan/v1` document that `sparkdiag plan --format json` prints: each plan of a
//! plan text with the findings about it.

use crate::Finding;
use serde::Serialize;
use sparkdiag_plan::Plan;

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
