//! Renders an analysed application: the versioned JSON contract (`sparkdiag/report/v1`) and a
//! short terminal summary.
//!
//! # Brief overview
//! [`Report::new`] takes the model ([`sparkdiag_model::Application`]) and the reading account
//! ([`sparkdiag_eventlog::SourceReport`]) and produces the serialisable [`Report`], whose field
//! names are a public API: renaming or dropping one is a new schema version. [`text::render`]
//! prints the same report for a person (plain; [`text::render_with`] adds the terminal's width
//! and severity colours when standard output is a terminal), [`markdown::render`] as a Markdown
//! document for an issue or a pull request, and [`html::render`] as one self-contained HTML
//! page with the [`charts`] inline and each SQL execution's plan tree, the operators findings
//! point at highlighted. [`fleet`] keeps what the nightly batch needs of each night, compares
//! nights and renders the fleet's index page.

pub mod charts;
mod contract;
pub mod fleet;
pub mod html;
pub mod markdown;
pub mod text;
pub mod whatif;

pub use contract::*;
