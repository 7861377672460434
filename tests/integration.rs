//! Integration tests, one binary (each test binary costs a link).

/// Our numbers against the Spark History Server's own golden REST responses.
mod conformance;
/// Cut, corrupt and unreadable input.
mod damage;
/// Shared helpers: where the fixtures are, reading a log into the model, running the binary.
mod util;
