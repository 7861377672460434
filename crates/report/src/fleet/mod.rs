//! The views of a night (`sparkdiag batch`): the fleet's `index.html` ([`html`]).

pub mod html;

pub use html::*;
