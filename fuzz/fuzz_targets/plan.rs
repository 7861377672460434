//! The plan parser on arbitrary text, then what rules and reports do with a plan: walk it,
//! count it, serialise it.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let Ok(plans) = sparkdiag_plan::parse_plans(&text) else {
        return;
    };
    for plan in &plans {
        let _ = plan.running_nodes();
        let _ = plan.initial_nodes();
        let _ = plan.exchanges();
        let _ = plan.exchange_infos();
        let _ = plan.user_requested_exchanges();
        let _ = serde_json::to_string(plan);
    }
    let facts = sparkdiag_facts::Facts::of_plans(plans);
    let _ = sparkdiag_rules::analyze_plans(&facts, &sparkdiag_rules::Config::default());
});
