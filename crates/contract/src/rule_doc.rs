//! What a rule is, apart from its check: its identity, documentation and thresholds, as the
//! views, `sparkdiag rules` and the report name it. The rules themselves (`sparkdiag_rules::Rule`)
//! add the check and what the impact model needs to know.

use crate::Category;

/// The identity a finding takes from its rule.
pub trait RuleIdentity {
    /// Stable code, never reused: two letters for the category, three digits.
    fn code(&self) -> &'static str;
    fn category(&self) -> Category;
    /// What its findings claim: a saving, a symptom's saving, or an outcome.
    fn claims(&self) -> crate::Claim;
}

/// One rule as the catalogue shows it: `sparkdiag rules`, `sparkdiag rules CODE`, the MCP server.
#[derive(Debug, Clone, Copy)]
pub struct RuleDoc {
    pub code: &'static str,
    /// Kebab-case name, also accepted wherever a code is.
    pub name: &'static str,
    pub category: Category,
    /// One line: what it finds.
    pub summary: &'static str,
    /// Markdown: What it does / Why is this bad? / How to fix it / Threshold and its source.
    pub doc: &'static str,
    pub thresholds: &'static [Threshold],
    /// The evidence it reads; a log without one of these leaves it unable to run.
    pub needs: &'static [crate::Evidence],
}

impl RuleDoc {
    /// The doc as Markdown, without the space each `///` line leaves at its start.
    pub fn doc_markdown(&self) -> String {
        self.doc
            .lines()
            .map(|l| l.strip_prefix(' ').unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The rule as `sparkdiag rules --format json` prints it: the registry, nothing else.
    pub fn registry_entry(&self) -> RegistryEntry {
        RegistryEntry {
            code: self.code,
            name: self.name,
            category: self.category.name(),
            summary: self.summary,
            doc: self.doc_markdown(),
            thresholds: self.thresholds,
            needs: self.needs,
        }
    }
}

/// What `sparkdiag rules --format json` prints: `{"rules": [...]}`.
#[derive(Debug, serde::Serialize)]
pub struct Registry {
    pub rules: Vec<RegistryEntry>,
}

/// One rule of `sparkdiag rules --format json`, its fields in this order.
#[derive(Debug, serde::Serialize)]
pub struct RegistryEntry {
    pub code: &'static str,
    pub name: &'static str,
    pub category: &'static str,
    pub summary: &'static str,
    pub doc: String,
    pub thresholds: &'static [Threshold],
    /// Added: the evidence it reads (`tasks`, `task-metrics`, `sql-plans`, ...).
    pub needs: &'static [crate::Evidence],
}

/// A tunable number of a rule: the registry entry that `sparkdiag rules`, the README's detector
/// table and the overrides are all checked against. Rules declare each one as a `const` and read
/// it through `sparkdiag_rules::Thresholds::get`, so a misspelt key is a compile error rather than a run-time one.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Threshold {
    pub key: &'static str,
    pub default: f64,
    pub unit: &'static str,
    pub meaning: &'static str,
    /// Where the default comes from: a Spark setting, another tool's tier, or sparkdiag's own.
    pub source: &'static str,
}

/// A threshold entry for a rule's table.
pub const fn threshold(
    key: &'static str,
    default: f64,
    unit: &'static str,
    meaning: &'static str,
    source: &'static str,
) -> Threshold {
    Threshold {
        key,
        default,
        unit,
        meaning,
        source,
    }
}
