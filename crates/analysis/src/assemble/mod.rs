//! The contract's documents filled in from what the analysis computed: the report from the
//! model, the reading account, the replayed findings and the stages' facts ([`report`]); its
//! streaming section ([`streaming::streaming_out`]); and what the views draw beyond it
//! ([`view_data`]). Building them decides nothing: the rules and the replay have run.

mod report;
pub mod streaming;
mod view;

pub use report::report;
pub use view::view_data;

#[cfg(test)]
mod tests {
    use sparkdiag_contract::PlanReport;

    #[test]
    fn each_finding_goes_with_the_plan_it_names() {
        // Two real plans in one text: a clean one, then one with more Exchanges than EX001 allows.
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/plans/");
        let clean = std::fs::read_to_string(format!("{dir}healthy.txt")).unwrap();
        let busy = std::fs::read_to_string(format!("{dir}antipattern-many-exchanges.txt")).unwrap();
        let plans = sparkdiag_plan::parse_plans(&format!("{clean}\n{busy}")).unwrap();
        let config = sparkdiag_rules::Config::default();
        let facts = sparkdiag_facts::Facts::of_plans(plans);
        let findings = sparkdiag_rules::analyze_plans(&facts, &config);
        let plans: Vec<_> = facts.plans.into_iter().map(|p| p.plan).collect();
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
