//! The views of the rules catalogue (`sparkdiag rules`): [`text`].

pub mod text;

pub use text::{explain, table};
