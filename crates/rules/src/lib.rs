//! The detectors: rules that read the application model and say what slowed or killed it, how
//! much wall-clock time each problem cost, and how to fix it.
//!
//! # Brief overview
//! Each [`Rule`] lives in its own file under `rules/`, with a stable code (`SK001`), a
//! [`Category`], a table of [`Threshold`]s with their defaults, units and sources, and its
//! documentation (what it detects, why it hurts, how to fix it), which `sparkdiag rules CODE`
//! prints. The rules and their thresholds are the registry: `sparkdiag rules --format json`
//! serialises it, overrides are checked against it, and tests hold the doc prose and the README's
//! detector table to it. Each threshold is a `const` the rule reads through [`Thresholds::get`].
//! Each rule also declares what its findings claim ([`Claim`]: a saving, a symptom's saving or
//! an outcome) and how its repeats merge ([`Lead`]), which is all the impact model needs to know
//! about it. The rules read the facts of the application and its stages from `sparkdiag_facts`
//! through a [`Context`], and decide which of them make a finding.
//! [`analyze`] runs every rule over an [`Application`] with a
//! [`Config`] (threshold overrides from the command line or a `sparkdiag.toml`) and returns the
//! [`Finding`]s ranked by severity, then by `impact_ms`, the estimated wall-clock time that fixing
//! each would save.
//!
//! # Example
//! ```no_run
//! let input = &sparkdiag_eventlog::discover("app.zstd")?[0];
//! let mut builder = sparkdiag_model::ApplicationBuilder::default();
//! sparkdiag_eventlog::read_log(input, |e| builder.on_event(e))?;
//! let app = builder.finish();
//! let facts = sparkdiag_facts::Facts::of(&app);
//! for finding in sparkdiag_rules::analyze(&app, &facts, &sparkdiag_rules::Config::default()) {
//!     println!("{} {} ({} ms)", finding.rule, finding.title, finding.impact_ms);
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#[cfg(test)]
mod checklist;
mod config;
mod context;
mod impact;
pub mod memory_region;
pub mod rules;
mod workload;

pub use config::{Config, ConfigError};
pub use context::Context;
// What a rule reports and the registry's entries are the report contract's vocabulary
// (`sparkdiag_contract`), named here as the rule files name them.
pub use sparkdiag_contract::{
    Category, Change, Claim, Counterfactual, Evidence, Finding, Registry, RegistryEntry, RuleDoc,
    RuleIdentity, Scope, Severity, Threshold, threshold,
};

// The facts the rules read, under the names the rule files give them (`crate::StageStats`,
// `crate::stage_shape::…`); their one home is `sparkdiag_facts`.
use sparkdiag_facts::{Facts, StageStats, memory_limits, stage_shape};
use sparkdiag_model::Application;

/// One detector: its identity, documentation, thresholds and check.
pub struct Rule {
    /// Stable code, never reused: two letters for the category, three digits.
    pub code: &'static str,
    /// Kebab-case name, also accepted wherever a code is.
    pub name: &'static str,
    pub category: Category,
    /// One line: what it finds.
    pub summary: &'static str,
    /// Markdown: What it does / Why is this bad? / How to fix it / Threshold and its source.
    pub doc: &'static str,
    pub thresholds: &'static [Threshold],
    pub check: fn(&Context, &Thresholds) -> Vec<Finding>,
    /// What its findings' `impact_ms` claims: a saving, a symptom's saving, or an outcome.
    pub claims: Claim,
    /// The evidence it reads: a log without one of these leaves it unable to run, and the
    /// report's ledger says so.
    pub needs: &'static [Evidence],
    /// Which finding leads when its repeats become one.
    pub lead: Lead,
    /// It describes a batch program's shape (job trains, driver gaps, idle cores) and stands
    /// down on a stream or a Spark Connect server, whose jobs come from triggers or clients.
    pub batch_only: bool,
    /// Its finding is a shuffle partition count to set, which a stateful streaming query cannot
    /// take (the count is in its checkpoint): its findings on such a query's stages are dropped.
    pub advises_shuffle_partitions: bool,
    /// It reads the SQL executions' plans one by one (`Context::each_plan`), each on its own:
    /// it runs over a batch of them at a time, so an event log's parsed plans are never all
    /// held at once.
    pub checks_each_plan: bool,
}

/// Which of a rule's findings leads when its repeats become one finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lead {
    /// The one with the largest impact.
    Largest,
    /// The cause before its consequences (evidence `consequence_of_another_failure`), then the
    /// earliest (`failed_at_ms`): the failure that started a chain heads it.
    FirstCause,
}

impl Rule {
    /// What it is, without its check: what the views and `sparkdiag rules` show of it.
    pub fn about(&self) -> RuleDoc {
        RuleDoc {
            code: self.code,
            name: self.name,
            category: self.category,
            summary: self.summary,
            doc: self.doc,
            thresholds: self.thresholds,
            needs: self.needs,
        }
    }

    /// Whether it runs at all on an application of this kind ([`Application::workload`]): a
    /// rule that describes a batch program's shape ([`Rule::batch_only`]) stands down on a
    /// stream or a Spark Connect server.
    pub fn applies_to(&self, workload: sparkdiag_model::Workload) -> bool {
        workload::applies(self, workload)
    }

    /// The doc as Markdown, without the space each `///` line leaves at its start.
    pub fn doc_markdown(&self) -> String {
        self.about().doc_markdown()
    }

    /// The rule as `sparkdiag rules --format json` prints it: the registry, nothing else.
    pub fn registry_entry(&self) -> RegistryEntry {
        self.about().registry_entry()
    }
}

impl RuleIdentity for Rule {
    fn code(&self) -> &'static str {
        self.code
    }

    fn category(&self) -> Category {
        self.category
    }

    fn claims(&self) -> Claim {
        self.claims
    }
}

/// A rule's thresholds with the user's overrides applied.
pub struct Thresholds<'a> {
    rule: &'a Rule,
    config: &'a Config,
}

impl Thresholds<'_> {
    /// The value of `threshold`: the user's override, else its default.
    pub fn get(&self, threshold: &Threshold) -> f64 {
        // A rule reading a threshold it does not declare would ignore the user's override of it.
        // Only this crate's tests check, as they run every rule on real logs: the shipped binary
        // never panics over it.
        #[cfg(test)]
        assert!(
            self.rule.thresholds.contains(threshold),
            "rule {} reads `{}`, which it does not declare",
            self.rule.code,
            threshold.key
        );
        self.config
            .override_for(self.rule.code, threshold.key)
            .unwrap_or(threshold.default)
    }
}

/// Declares a rule; its doc comment becomes the text `sparkdiag rules CODE` prints. The fields
/// come in this order; `lead`, `batch_only`, `advises_shuffle_partitions` and
/// `checks_each_plan` may be left out (`Largest`, `false`, `false`, `false`).
///
/// ```ignore
/// declare_rule! {
///     /// ## What it does … ## Why is this bad? … ## How to fix it … ## Threshold and its source …
///     pub static DATA_SKEW = {
///         code: "SK001",
///         name: "data-skew",
///         category: Skew,
///         claims: Saving,
///         needs: [TaskMetrics],
///         summary: "A task far longer than its stage's median, with more data",
///         thresholds: &[RATIO] as &[Threshold],
///         check: check,
///     };
/// }
/// ```
#[macro_export]
macro_rules! declare_rule {
    (
        $(#[doc = $doc:expr])*
        pub static $NAME:ident = {
            code: $code:expr,
            name: $name:expr,
            category: $category:ident,
            claims: $claims:ident,
            needs: [$($needs:ident),* $(,)?],
            summary: $summary:expr,
            thresholds: $thresholds:expr,
            check: $check:path
            $(, lead: $lead:ident)?
            $(, batch_only: $batch_only:literal)?
            $(, advises_shuffle_partitions: $advises_shuffle_partitions:literal)?
            $(, checks_each_plan: $checks_each_plan:literal)?
            $(,)?
        };
    ) => {
        pub static $NAME: $crate::Rule = $crate::Rule {
            code: $code,
            name: $name,
            category: $crate::Category::$category,
            summary: $summary,
            doc: concat!($($doc, "\n"),*),
            thresholds: $thresholds,
            check: $check,
            claims: $crate::Claim::$claims,
            needs: &[$($crate::Evidence::$needs),*],
            lead: $crate::declare_rule!(@lead $($lead)?),
            batch_only: $crate::declare_rule!(@flag $($batch_only)?),
            advises_shuffle_partitions: $crate::declare_rule!(@flag $($advises_shuffle_partitions)?),
            checks_each_plan: $crate::declare_rule!(@flag $($checks_each_plan)?),
        };
    };
    (@lead) => { $crate::Lead::Largest };
    (@lead $lead:ident) => { $crate::Lead::$lead };
    (@flag) => { false };
    (@flag $value:literal) => { $value };
    ($($anything:tt)*) => {
        compile_error!(
            "declare_rule! wants the rule's doc (## What it does, ## Why is this bad?, ## How to fix it, ## Threshold and its source), then `pub static NAME = { code, name, category, claims, needs, summary, thresholds, check };` in that order. `claims` is what its impact is: `Saving` (a cause, time a fix saves), `Symptom` (claims only time no cause claimed) or `Outcome` (a failure or a stream's health: time lost). `needs` lists the evidence it reads, `[TaskMetrics, SqlPlans]` (sparkdiag_contract::Evidence), `[]` for none. After `check` it may add `lead: FirstCause`, `batch_only: true`, `advises_shuffle_partitions: true`, `checks_each_plan: true`. See CONTRIBUTING.md, \"Adding a detector\"."
        );
    };
}

/// Every rule, in catalogue order.
pub fn all_rules() -> &'static [&'static Rule] {
    rules::ALL
}

/// Finds a rule by code (`SK001`) or name (`data-skew`), case-insensitively.
pub fn find_rule(code_or_name: &str) -> Option<&'static Rule> {
    all_rules().iter().copied().find(|r| {
        r.code.eq_ignore_ascii_case(code_or_name) || r.name.eq_ignore_ascii_case(code_or_name)
    })
}

/// The rule of a finding, by its exact code.
pub(crate) fn rule_of(code: &str) -> Option<&'static Rule> {
    all_rules().iter().copied().find(|r| r.code == code)
}

/// Runs every enabled rule over `app` and its facts (`Facts::of(app)`, computed once by the
/// analysis step) and returns the findings, most severe first and then most recoverable time
/// first, with each millisecond of the application attributed to at most one finding (see
/// docs/impact.md). A log without an application start says nothing about an application: no
/// findings.
pub fn analyze(app: &Application, facts: &Facts, config: &Config) -> Vec<Finding> {
    analyze_plans_in_batches(app, facts, config, PLANS_AT_ONCE)
}

/// SQL executions whose plans are parsed and held at once for the rules that check each plan:
/// enough to keep both cores parsing, few enough that a log of thousands of queries never holds
/// its parsed plans all together.
const PLANS_AT_ONCE: usize = 64;

fn analyze_plans_in_batches(
    app: &Application,
    facts: &Facts,
    config: &Config,
    plans_at_once: usize,
) -> Vec<Finding> {
    if app.start_ms.is_none() {
        return Vec::new();
    }
    let sql_plans = sparkdiag_facts::SqlPlans::new(app, &facts.stages);
    let context = Context {
        sql_plans: Some(&sql_plans),
        ..Context::new(app, facts)
    };
    let mut findings = run(&context, config, |rule| !rule.checks_each_plan);
    let mut numbered = 0;
    for executions in app.sql.chunks(plans_at_once.max(1)) {
        let plans = sql_plans.parse(executions);
        let batch = Context {
            plans: &plans,
            first_plan: numbered,
            ..context
        };
        findings.extend(run(&batch, config, |rule| rule.checks_each_plan));
        numbered += plans.len();
    }
    // In the order one run over every plan would have given: a rule's findings plan by plan.
    sort(&mut findings);
    let mut findings = impact::settle(&context, findings);
    sort(&mut findings);
    findings
}

/// Runs the plan rules (categories `exchanges` and `plan`) over plans given on their own
/// (`Facts::of_plans`).
pub fn analyze_plans(facts: &Facts, config: &Config) -> Vec<Finding> {
    let app = Application::default();
    let context = Context::new(&app, facts);
    run(&context, config, |rule| {
        matches!(rule.category, Category::Exchanges | Category::Plan)
    })
}

fn run(context: &Context, config: &Config, wanted: impl Fn(&Rule) -> bool + Sync) -> Vec<Finding> {
    use rayon::prelude::*;
    // Every rule reads the context and nothing else: they run at once on every core, their
    // findings collected in catalogue order as one after the other would give them.
    let mut findings: Vec<Finding> = all_rules()
        .par_iter()
        .filter(|rule| config.enabled(rule) && wanted(rule))
        .filter(|rule| workload::applies(rule, context.workload))
        .flat_map_iter(|rule| {
            workload::keep(
                context.app,
                context.workload,
                (rule.check)(context, &Thresholds { rule, config }),
            )
        })
        .collect();
    sort(&mut findings);
    findings
}

fn sort(findings: &mut [Finding]) {
    findings.sort_by(|a, b| {
        a.severity
            .cmp(&b.severity)
            .then(b.impact_ms.cmp(&a.impact_ms))
            .then(a.rule.cmp(b.rule))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The rules that check each plan, run over one execution's plan at a time or three at a
    /// time, find what they find with every plan at hand, in the same order and with the same
    /// plan numbers: on real logs of many SQL executions where those rules fire.
    #[test]
    fn plans_checked_a_batch_at_a_time_give_the_findings_of_all_at_once() {
        let config = Config::default();
        let mut plan_findings = 0;
        for rel in ["logs/rolling/zstd", "logs/single/plain"] {
            for app in crate::rules::testing::apps(rel) {
                let facts = Facts::of(&app);
                let whole = analyze_plans_in_batches(&app, &facts, &config, usize::MAX);
                let said = |found: &[Finding]| serde_json::to_string(found).unwrap();
                for plans_at_once in [1, 3] {
                    let batched = analyze_plans_in_batches(&app, &facts, &config, plans_at_once);
                    assert_eq!(
                        said(&batched),
                        said(&whole),
                        "{rel}, {plans_at_once} at once"
                    );
                }
                plan_findings += whole
                    .iter()
                    .filter(|f| find_rule(f.rule).is_some_and(|r| r.checks_each_plan))
                    .count();
                assert!(app.sql.len() > 1, "{rel}: one execution is one batch");
            }
        }
        assert!(
            plan_findings >= 2,
            "{plan_findings} findings of the plan rules"
        );
    }

    #[test]
    fn every_rule_has_a_unique_code_and_is_found_by_its_name() {
        let mut codes = std::collections::BTreeSet::new();
        for rule in all_rules() {
            assert!(codes.insert(rule.code), "duplicate code {}", rule.code);
            let (letters, digits) = rule.code.split_at(2);
            assert!(
                letters.chars().all(|c| c.is_ascii_uppercase())
                    && digits.len() == 3
                    && digits.parse::<u32>().is_ok(),
                "{}",
                rule.code
            );
            // The doc's parts and its thresholds: `checklist`, with what to write.
            assert_eq!(find_rule(rule.name).map(|r| r.code), Some(rule.code));
        }
    }

    /// The number after `` `key` = `` in a doc, as the registry writes it: "0.5 %" is 0.005.
    fn stated_defaults(doc: &str, key: &str) -> Vec<f64> {
        let needle = format!("`{key}` =");
        doc.match_indices(&needle)
            .filter_map(|(at, _)| {
                let rest = doc[at + needle.len()..].trim_start();
                let end = rest
                    .find(|c: char| !(c.is_ascii_digit() || c == '.'))
                    .unwrap_or(rest.len());
                let value: f64 = rest[..end].trim_end_matches('.').parse().ok()?;
                let percent = rest[end..].trim_start().starts_with('%');
                Some(if percent { value / 100.0 } else { value })
            })
            .collect()
    }

    #[test]
    fn every_default_the_doc_states_is_the_registrys() {
        for rule in all_rules() {
            for t in rule.thresholds {
                let stated = stated_defaults(rule.doc, t.key);
                assert!(
                    !stated.is_empty(),
                    "{}'s doc never says `{}` = its default",
                    rule.code,
                    t.key
                );
                for value in stated {
                    assert!(
                        (value - t.default).abs() < 1e-9,
                        "{}'s doc says `{}` = {value}, the registry {}",
                        rule.code,
                        t.key,
                        t.default
                    );
                }
            }
        }
        assert_eq!(
            stated_defaults("`a` = 0.5 % or `a` = 30 s.", "a"),
            [0.005, 30.0]
        );
    }

    #[test]
    fn overrides_are_checked_against_the_rules_thresholds() {
        let mut config = Config::default();
        config.set_from_arg("SK001.ratio=4").unwrap();
        config.set_from_arg("data-skew.min_tasks=3").unwrap();
        assert_eq!(config.override_for("SK001", "ratio"), Some(4.0));
        assert_eq!(config.override_for("SK001", "min_tasks"), Some(3.0));
        let err = config
            .set_from_arg("SK001.ratoi=4")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("no threshold `ratoi`") && err.contains("ratio"),
            "{err}"
        );
        assert!(
            config
                .set_from_arg("XX999.ratio=4")
                .unwrap_err()
                .to_string()
                .contains("unknown rule")
        );
        assert!(
            config
                .set_from_arg("SK001.ratio=four")
                .unwrap_err()
                .to_string()
                .contains("not a number")
        );

        let file = "disable = [\"CF003\"]\n[rules.tiny-tasks]\nmin_tasks = 50\n";
        let config = Config::from_toml(file, "sparkdiag.toml").unwrap();
        assert_eq!(config.override_for("PA001", "min_tasks"), Some(50.0));
        assert!(!config.enabled(find_rule("CF003").unwrap()));
        let err = Config::from_toml("[rules.tiny-tasks]\nmin_taks = 1\n", "sparkdiag.toml")
            .unwrap_err()
            .to_string();
        assert!(
            err.starts_with("sparkdiag.toml: [rules.tiny-tasks]"),
            "{err}"
        );
        assert!(
            Config::from_toml("[rulez]\n", "my.toml")
                .unwrap_err()
                .to_string()
                .starts_with("my.toml:")
        );
    }

    #[test]
    fn severity_bands_follow_the_share_of_the_application() {
        assert_eq!(Severity::from_share(300, 1000), Severity::Critical);
        assert_eq!(Severity::from_share(100, 1000), Severity::High);
        assert_eq!(Severity::from_share(20, 1000), Severity::Medium);
        assert_eq!(Severity::from_share(5, 1000), Severity::Low);
        assert_eq!(Severity::from_share(1, 1000), Severity::Info);
        assert_eq!(Severity::Low.at_least(Severity::High), Severity::High);
        assert_eq!(
            Severity::Critical.at_most(Severity::Medium),
            Severity::Medium
        );
    }
}
