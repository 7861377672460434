//! Integration tests, one binary (each test binary costs a link).

/// `sparkdiag batch` over two nights of real logs.
mod batch;
/// Our numbers against the Spark History Server's own golden REST responses.
mod conformance;
/// Cut, corrupt and unreadable input.
mod damage;
/// The real Spark 4.3 logs of every codec and layout in testdata/.
mod fixtures;
/// The Markdown and text views of real logs against the files in tests/golden/.
mod golden;
/// Hostile and broken input: bounded time and memory, nothing read outside (issue 11).
mod hostile;
/// The HTML report: structure, escaping, charts, and headless Chromium.
mod html;
/// `sparkdiag plan` on real plan text, and plan findings inside event logs.
mod plans;
/// The detectors on real logs with planted problems, and the rule catalogue.
mod rules;
/// Shared helpers: where the fixtures are, reading a log into the model, running the binary.
mod util;
