//! The report contract and its vocabulary: the versioned JSON document `sparkdiag/report/v1`
//! ([`Report`]), what the views draw beyond it ([`ViewData`]), `sparkdiag/plan/v1`
//! ([`PlanReport`]) for plan text given on its own, `sparkdiag/diff/v1` ([`diff::Diff`], two runs
//! compared) and what the nightly batch keeps of a night ([`night::Night`], `nights/DATE.json`);
//! and the words they are written in: the statuses, a [`Finding`] and its [`Severity`], a
//! rule's [`RuleDoc`], the what-if's results ([`WhatIf`]), the memory figures, the packed
//! durations and the one way to write a duration, a size or a count ([`units`]).
//!
//! This crate computes nothing and depends on no other part of sparkdiag but the parsed plan:
//! the model, the facts, the rules and the what-if use its types, `sparkdiag_analysis` fills the
//! documents in (`sparkdiag_analysis::assemble`), and the views (`sparkdiag-report`) and the
//! fleet's tables (`sparkdiag-tables`) read them and nothing else. [`detail`] is what is asked
//! of one application beyond its report (a stage's tasks, failures by cause), for `sparkdiag mcp`. Field names are a public API:
//! adding a field is compatible, renaming or dropping one is a new schema version.

mod counterfactual;
pub mod detail;
pub mod diff;
mod finding;
pub mod gates;
pub mod ledger;
pub mod memory;
pub mod night;
pub mod packed;
mod plan;
mod report;
mod rule_doc;
pub mod settings;
mod status;
pub mod streaming;
pub mod units;
mod view;
pub mod whatif;

pub use counterfactual::{Change, Counterfactual};
pub use finding::{Category, Claim, Finding, Scope, Severity};
pub use gates::{Exit, GateCheck, Gates};
pub use ledger::{Evidence, Ledger};
pub use memory::{ExecutorMemory, MemoryFigures};
pub use packed::Varints;
pub use plan::*;
pub use report::*;
pub use rule_doc::{Registry, RegistryEntry, RuleDoc, RuleIdentity, Threshold, threshold};
pub use settings::ConfigSource;
pub use status::{AppStatus, JobStatus, Outcome, Platform, Removal, StageStatus, Workload};
pub use view::*;
pub use whatif::{Advice, Setting, WhatIf, split_flags};

/// The parsed plan (`sparkdiag plan`), which the plan report and the HTML page draw.
pub use sparkdiag_plan::Plan;
