//! The views of an analysed application (`sparkdiag analyze`, `serve`'s and the night's reports):
//! [`text`] for a terminal, [`markdown`] for an issue or a pull request and [`html`] as one
//! self-contained page with the charts inline. The sections more than one format draws are
//! helpers each format calls: the what-if ([`whatif`]), the memory figures ([`memory`]) and the
//! streaming queries ([`streaming`]).

pub mod html;
pub mod markdown;
pub mod memory;
pub mod streaming;
pub mod text;
pub mod whatif;
