//! The commands whose heavy parts are cargo features (`tables`, `serve`): when a build leaves
//! one out, its command still parses and says how to get it, rather than clap's "unrecognized
//! subcommand", which would read as a typo.

#[cfg(not(all(feature = "tables", feature = "serve")))]
use std::{ffi::OsString, process::ExitCode};

/// Whatever was typed after a command this build does not have: read, never used.
#[cfg(not(all(feature = "tables", feature = "serve")))]
#[derive(clap::Args)]
pub struct Missing {
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    _args: Vec<OsString>,
}

/// `sparkdiag COMMAND` in a build without `feature`: the error and how to get it, exit 2.
#[cfg(not(all(feature = "tables", feature = "serve")))]
pub fn missing(command: &str, feature: &str) -> anyhow::Result<ExitCode> {
    eprintln!(
        "sparkdiag: `sparkdiag {command}` needs the `{feature}` feature, which this build leaves out: \
         cargo install sparkdiag --features {feature} (or --features full for every command; \
         from a clone: cargo install --path . --features {feature})"
    );
    Ok(ExitCode::from(2))
}

/// `sparkdiag --version`: the version and the features this binary was built with.
#[cfg(all(feature = "tables", feature = "serve"))]
pub const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (features: tables, serve)");
#[cfg(all(feature = "tables", not(feature = "serve")))]
pub const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (features: tables)");
#[cfg(all(not(feature = "tables"), feature = "serve"))]
pub const LONG_VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (features: serve)");
#[cfg(not(any(feature = "tables", feature = "serve")))]
pub const LONG_VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (features: none; batch and serve left out)"
);
