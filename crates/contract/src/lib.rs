//! The report contract: the versioned JSON document `sparkdiag/report/v1` ([`Report`]), built
//! from an analysed application, what the views draw beyond it ([`ViewData`]), and
//! `sparkdiag/plan/v1` ([`PlanReport`]) for plan text given on its own, `sparkdiag/diff/v1`
//! ([`diff::Diff`], two runs compared) and what the nightly batch keeps of a night
//! ([`night::Night`], `nights/DATE.json`). Nothing here
//! renders: the text, Markdown and HTML views and the charts live in `sparkdiag-report`, the
//! fleet's Parquet tables in `sparkdiag-tables`, and both read only these types.
//!
//! [`Report::new`] takes the model ([`sparkdiag_model::Application`]), the reading account
//! ([`sparkdiag_eventlog::SourceReport`]), the rules' findings as the what-if replay left them
//! and the stages' facts; it runs neither the rules nor the replay. Its field names are a public
//! API: adding a field is compatible, renaming or dropping one is a new schema version.
//!
//! ```no_run
//! let config = sparkdiag_rules::Config::default();
//! let input = &sparkdiag_eventlog::discover("app.zstd")?[0];
//! let mut builder = sparkdiag_model::ApplicationBuilder::default();
//! let source = sparkdiag_eventlog::read_log(input, |event| builder.on_event(event))?;
//! let app = builder.finish();
//! let analysed = sparkdiag_rules::analyze_keeping_all(&app, &config);
//! let replayed = sparkdiag_whatif::replayed(&app, &analysed.stages, analysed.findings);
//! let cores = sparkdiag_facts::peak_cores(&app);
//! let report = sparkdiag_contract::Report::new(
//!     &[], &source, &app, replayed, cores, &sparkdiag_contract::Prices::default(), &analysed.stages,
//! );
//! assert_eq!(report.schema, sparkdiag_contract::SCHEMA);
//! # Ok::<(), sparkdiag_eventlog::ReadError>(())
//! ```

pub mod diff;
pub mod night;
mod plan;
mod report;
pub mod streaming;
mod view;

pub use plan::*;
pub use report::*;
pub use view::*;

/// The report's `memory` section is the facts layer's figures as they are.
pub use sparkdiag_facts::memory_figures::{ExecutorMemory, MemoryFigures};

/// The vocabulary the views render beside the report's own types, re-exported so that a view
/// crate depends on this crate alone and reaches nothing that computes: the statuses, the
/// findings and their severities, the rule registry (`sparkdiag rules`), the parsed plan
/// (`sparkdiag plan`), the what-if, and the one way to write a duration, a size or a count.
pub use sparkdiag_model::units;
pub use sparkdiag_model::{AppStatus, Platform, StageStatus, Workload};
pub use sparkdiag_plan::Plan;
pub use sparkdiag_rules::{Finding, Rule, Severity, all_rules, find_rule};
pub use sparkdiag_whatif::settings::{Setting, split_flags};
pub use sparkdiag_whatif::{Advice, WhatIf};
