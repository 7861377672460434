//! The views of an analysed application, each rendered from its report contract alone
//! ([`Report`] and [`ViewData`], from `sparkdiag-contract`), never from the model.
//!
//! # Brief overview
//! [`text::render`] prints the report for a person (plain; [`text::render_with`] adds the
//! terminal's width and severity colours when standard output is a terminal),
//! [`markdown::render`] as a Markdown document for an issue or a pull request, and
//! [`html::render`] as one self-contained HTML page with the [`charts`] inline and each SQL
//! execution's plan tree, the operators findings point at highlighted. [`fleet`] renders the
//! nightly batch's index page from its nights, and [`diff`] draws two runs compared.
//! [`plan::render`] is `sparkdiag plan`'s text view and [`catalogue`] `sparkdiag rules`'.

pub mod catalogue;
pub mod charts;
pub mod diff;
pub mod fleet;
pub mod format;
pub mod html;
pub mod markdown;
pub mod memory;
pub mod plan;
pub mod streaming;
pub mod text;
pub mod whatif;

/// The contract the views render, under the name the views have always used.
pub use sparkdiag_contract::*;
