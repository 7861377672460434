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

/// What `sparkdiag rules [CODE]` lists: the rule `code` names (by code or name), or, without
/// one, every rule; an unknown name is an error that says where the names are.
pub fn select(code: Option<&str>) -> Result<Vec<RuleDoc>, String> {
    match code {
        Some(code) => find_rule(code)
            .map(|rule| vec![rule])
            .ok_or_else(|| format!("no rule `{code}`; `sparkdiag rules` lists them")),
        None => Ok(rule_docs()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_is_selected_by_code_or_name_and_an_unknown_one_is_refused() {
        let by_code = select(Some("sk001")).unwrap();
        assert_eq!(by_code.len(), 1);
        assert_eq!(by_code[0].code, "SK001");
        assert_eq!(select(Some(by_code[0].name)).unwrap()[0].code, "SK001");
        assert_eq!(select(None).unwrap().len(), rule_docs().len());
        assert_eq!(
            select(Some("XX999")).unwrap_err(),
            "no rule `XX999`; `sparkdiag rules` lists them"
        );
    }
}
