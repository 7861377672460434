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
/// The HTML report: structure, escaping, charts, and headless Chromium.
mod html;
/// `sparkdiag plan` on real plan text, and plan findings inside event logs.
mod plans;
/// The detectors on real logs with planted problems, and the rule catalogue.
mod rules;
/// Shared helpers: where the fixtures are, reading a log into the model, running the binary.
mod util;
/// What bounds a run and what more cores would change, against runs at 1, 2 and 4 executors.
mod whatif;
