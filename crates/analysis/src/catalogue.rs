//! The rules' catalogue as the views and `sparkdiag mcp` read it: each rule's documentation
//! and thresholds ([`RuleDoc`]), without its check.

use sparkdiag_contract::RuleDoc;

/// Every rule's documentation, in catalogue order.
pub fn rule_docs() -> Vec<RuleDoc> {
    sparkdiag_rules::all_rules()
        .iter()
        .map(|r| r.about())
        .collect()
}

/// A rule's documentation by code (`SK001`) or name (`data-skew`), case-insensitively.
pub fn find_rule(code_or_name: &str) -> Option<RuleDoc> {
    sparkdiag_rules::find_rule(code_or_name).map(|r| r.about())
}
