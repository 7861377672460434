//! The rules catalogue for a terminal, as `sparkdiag rules` prints it: every rule in a table, or
//! one rule's documentation with its thresholds. Both are given what the registry says of each
//! rule ([`RuleDoc`], `sparkdiag_rules::Rule::about`); `--format json` is
//! [`RuleDoc::registry_entry`].

use sparkdiag_contract::RuleDoc;

/// One line per rule: code, name, category and what it finds.
pub fn table(rules: &[RuleDoc]) -> String {
    let mut table = comfy_table::Table::new();
    table.load_style(comfy_table::presets::NOTHING);
    table.set_header(vec!["code", "name", "category", "what it finds"]);
    for rule in rules {
        table.add_row(vec![
            rule.code,
            rule.name,
            rule.category.name(),
            rule.summary,
        ]);
    }
    let mut out = String::new();
    // comfy-table pads every cell, the last column too: drop the trailing blanks.
    for line in table.to_string().lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str("\nsparkdiag rules CODE explains one rule and lists its thresholds.\n");
    out
}

/// One rule: what it finds, why it hurts, how to fix it, and its thresholds.
pub fn explain(rule: &RuleDoc) -> String {
    let mut out = format!(
        "# {} ({}) — {}\n\n{}\n\n",
        rule.code,
        rule.name,
        rule.category.name(),
        rule.summary
    );
    out.push_str(rule.doc.trim_end());
    out.push('\n');
    if !rule.thresholds.is_empty() {
        out.push_str("\n## Thresholds (override with --set CODE.key=value or [rules.CODE] in sparkdiag.toml)\n");
        for t in rule.thresholds {
            out.push_str(&format!(
                "- {} = {} {}: {} (source: {})\n",
                t.key, t.default, t.unit, t.meaning, t.source
            ));
        }
    }
    out
}
