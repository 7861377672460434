//! `sparkdiag mcp`: a Model Context Protocol server over stdio that answers an AI assistant's
//! questions about Spark applications from their event logs on this machine, with the same
//! analysis as `sparkdiag analyze` and no History Server.
//!
//! It is read-only and reads only inside the folders it is given (`--root`, and the client's
//! MCP roots); it opens no network connection unless it is given remote prefixes
//! (`--allow-prefix s3://bucket/logs/`), and then reads only under those. Every answer is capped
//! ([`fit::MAX_TEXT_BYTES`]) and says what it left out. The protocol is written out with
//! `serde_json` rather than with the official Rust SDK (`rmcp`): see `docs/mcp.md` for why and
//! the measurement.
//!
//! ```no_run
//! let options = sparkdiag_mcp::Options {
//!     roots: vec!["/var/log/spark-events".into()],
//!     remote_prefixes: Vec::new(),
//!     rules: sparkdiag_analysis::Config::default(),
//!     prices: sparkdiag_analysis::Prices::default(),
//!     redact: false,
//! };
//! sparkdiag_mcp::serve_stdio(options)?;
//! # Ok::<(), String>(())
//! ```

pub mod fit;
mod prompts;
pub mod roots;
mod server;
mod tools;

pub use server::{PROTOCOL_VERSIONS, serve};

/// What the server may read and how it analyses.
pub struct Options {
    /// The folders whose logs may be read (with the client's MCP roots).
    pub roots: Vec<std::path::PathBuf>,
    /// The remote prefixes whose logs may be read (`s3://bucket/logs/`); none by default, so
    /// nothing remote is read. The program installs the stores that read them.
    pub remote_prefixes: Vec<String>,
    /// The rules' configuration, as `analyze --config/--set/--disable` give it.
    pub rules: sparkdiag_analysis::Config,
    /// Money beside the savings, as `analyze --price-per-core-hour/--price-per-gb-hour` give it.
    pub prices: sparkdiag_analysis::Prices,
    /// `--redact`: every answer drawn from a pseudonymised application (names, hosts, users,
    /// paths, SQL literals); the logs' own paths stay, as the handles the assistant asks by.
    pub redact: bool,
}

/// What `initialize` tells the assistant about using the tools.
pub const INSTRUCTIONS: &str = "sparkdiag reads Apache Spark event logs on this machine and says what slowed or killed each application, ranked by the wall-clock time fixing it would save. Start with list_applications on a folder, then analyze_application on one log (its findings are ranked; get_finding gives one in full with the rule's doc). For a failed run use failure_postmortem; for 'why is it slower than last time' use compare_runs on the two logs. get_stage, get_job and get_executor give one stage, job or executor in detail (get_executor when a post-mortem or a finding names an executor), what_if predicts the run with another core count, analyze_plan reads df.explain() text, list_rules is the catalogue. Only files under the server's roots can be read. Times are in milliseconds, sizes in bytes. Answers are capped at 64 KiB; `omitted` says what was left out and how to get it.";

/// Serves MCP on standard input and output until standard input ends.
pub fn serve_stdio(options: Options) -> Result<(), String> {
    let stdin = std::io::stdin();
    serve(
        std::io::BufReader::new(stdin.lock()),
        std::io::stdout(),
        options,
    )
}
