//! The views of an analysed application, each rendered from its report contract alone
//! ([`Report`] and [`ViewData`], from `sparkdiag-contract`), never from the model.
//!
//! # Brief overview
//! The views are arranged by the document they draw, one file per format inside each:
//! [`analyze`] (one application: [`analyze::text::render`] for a person, plain, or with the
//! terminal's width and severity colours through [`analyze::text::render_with`];
//! [`analyze::markdown::render`] for an issue or a pull request; [`analyze::html::render`] as
//! one self-contained HTML page with the [`charts`] inline and each SQL execution's plan tree,
//! the operators findings point at highlighted), [`diff`] (two runs compared), [`fleet`] (the
//! nightly batch's index page), [`plan`] (`sparkdiag plan`) and [`catalogue`]
//! (`sparkdiag rules`). [`format`](mod@format) is how every view writes a number, and [`charts`] the one
//! chart kit.
//!
//! Every command reaches them through one seam: a document ([`analyze::Applications`], a
//! [`Diff`](sparkdiag_contract::diff::Diff), [`plan::PlanText`], [`catalogue::Catalogue`]) is a
//! [`View`], drawn in any [`Format`] of the one list with the [`Options`] every view takes
//! (where text goes, how many findings to show).

pub mod analyze;
pub mod browser;
pub mod catalogue;
pub mod charts;
pub mod diff;
pub mod fleet;
pub mod format;
pub mod gates;
mod output;
pub mod plan;
pub mod progress;

pub use output::{
    ColorChoice, Format, Narrowing, Options, RenderError, Terminal, View, terminal_width, write_out,
};

/// The contract the views render, under the name the views have always used.
pub use sparkdiag_contract::*;
