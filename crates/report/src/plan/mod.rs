//! The views of plan text analysed on its own (`sparkdiag plan`): [`text`].

pub mod text;

pub use text::render;
