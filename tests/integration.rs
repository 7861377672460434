//! Integration tests, one binary (each test binary costs a link).

/// `sparkdiag batch` over two nights of real logs.
#[cfg(feature = "tables")]
mod batch;
/// Every chart of every bundled log: round unique ticks, file:line labels, the marked stage.
mod charts;
/// The command line as a new user meets it: terminal width, failed apps, batch mistakes.
mod cli;
/// Logs whose clock jumps: every chart's time axis cuts the jump out and says so.
mod clock_jump_charts;
/// Logs whose clock jumps by days or years: no duration, replay or finding holds the jump.
mod clock_jumps;
/// Our numbers against the Spark History Server's own golden REST responses.
mod conformance;
/// Cut, corrupt and unreadable input.
mod damage;
/// `sparkdiag diff` on real before/after pairs, checked against each run's own report.
mod diff;
/// A night spread over Spark executors (PySpark, local mode) against one `sparkdiag batch`.
#[cfg(feature = "tables")]
mod distributed;
/// The real Spark 4.3 logs of every codec and layout in testdata/.
mod fixtures;
/// Folded stages against tasks kept as read: same report, charts and what-if, less memory.
mod folding;
/// The Markdown and text views of real logs against the files in tests/golden/.
mod golden;
/// What a new user meets first: features left out of a build, colour, completions, the man
/// page, --open, --quiet and --top, config files, many applications at once, UI links.
mod habits;
/// The logs people actually have: pretty-printed JSON, logs compressed by hand (bzip2, xz,
/// zstd), and folders holding files that are not logs.
mod handmade;
/// Hostile and broken input: bounded time and memory, nothing read outside (issue 11).
mod hostile;
/// The HTML report: structure, escaping, charts, and headless Chromium.
mod html;
/// The read bench's large log, made from a real fixture; the MCP and serve load tests use it.
#[path = "../crates/analysis/benches/shared/large_log.rs"]
#[allow(dead_code)]
mod large_log;
/// The README and docs/: links and anchors that resolve, the first commands, real samples.
mod links;
/// `sparkdiag mcp` over stdio: refusals, roots, the size cap, and the official Python client.
mod mcp;
/// What a report says about itself and how a pipeline uses it: the evidence ledger, settings,
/// gates and exit codes, unusable input, narrowing, SARIF (issue 49).
mod outputs;
/// `sparkdiag plan` on real plan text, and plan findings inside event logs.
mod plans;
/// The logs users bring from Databricks and EMR: the workload from what ran, advice for the
/// operation that made each stage.
mod platforms;
/// `batch --redact` and `serve --redact`: no original in any file of a night or any answer.
#[cfg(any(feature = "tables", feature = "serve"))]
mod redact;
/// Logs read where they live: S3, Azure, GCS and a History Server, from real servers.
#[cfg(feature = "remote")]
mod remote;
/// The detectors on real logs with planted problems, and the rule catalogue.
mod rules;
/// What a fix saves: each finding's replayed change against the what-if, money apart from time.
mod savings;
/// Every report against the JSON Schema of `sparkdiag/report/v1` (docs/schema/report-v1.json).
mod schema;
/// `sparkdiag serve` over loopback: uploads, refusals, escaping, deletion, and Chromium.
#[cfg(feature = "serve")]
mod serve;
/// `sparkdiag serve` as a process under load and bad clients, its memory and open files.
#[cfg(feature = "serve")]
mod serve_load;
/// Why a task was slow: skew, stragglers and slow hosts named by their cause (issue 47).
mod slowness;
/// Structured Streaming, DStreams and Spark Connect applications (issue 24).
mod streaming;
/// The template for Spark's layout of task events against the general reading, on every real log.
mod task_template;
/// Findings to trust on logs we did not write: impacts within the runtime, one finding per
/// problem, interactive sessions, executor removals, failure chains, advice that fits.
mod trust;
/// Shared helpers: where the fixtures are, reading a log into the model, running the binary.
mod util;
/// What bounds a run and what more cores would change, against runs at 1, 2 and 4 executors.
mod whatif;
