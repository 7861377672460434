//! The views of a [`Diff`](sparkdiag_contract::diff::Diff) (`sparkdiag/diff/v1`, built by
//! `sparkdiag-diff`): [`text::render`] for a terminal, [`markdown::render`] for a pull-request
//! comment and [`html::render`] as one self-contained page with charts. Durations, sizes,
//! counts and escaping come from [`crate::format`], as in the report's own views.

pub mod html;
pub mod markdown;
pub mod text;
