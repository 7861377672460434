//! Reads a real log from `testdata/`, so each fact can be checked on what Spark wrote.

use std::path::PathBuf;

use sparkdiag_model::{Application, ApplicationBuilder};

/// Every application in a log (a file, a rolling directory or an archive) under `testdata/`.
pub fn apps(rel: &str) -> Vec<Application> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel);
    read(path, rel)
}

/// Every application in a log under `../shared/` beside the repository (other projects' real
/// logs, Spark's History Server suite), or `None` after one line on standard error when it is
/// absent; under CI (`CI` set) its absence is a failure, not a skip.
pub fn shared_apps(rel: &str) -> Option<Vec<Application>> {
    Some(read(shared_path(rel)?, rel))
}

/// The path of `{rel}` under `../shared` beside the repository, or `None` after one line on
/// standard error when it is absent; under CI its absence is a failure, not a skip.
pub fn shared_path(rel: &str) -> Option<PathBuf> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared")
        .join(rel);
    if !path.exists() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI is set but {} is missing",
            path.display()
        );
        eprintln!("skipped: {} is not here", path.display());
        return None;
    }
    Some(path)
}

fn read(path: PathBuf, rel: &str) -> Vec<Application> {
    let inputs = sparkdiag_eventlog::discover(path.to_str().unwrap())
        .unwrap_or_else(|e| panic!("{rel}: {e}"));
    assert!(!inputs.is_empty(), "{rel}: no event log");
    inputs
        .iter()
        .map(|input| {
            let mut builder = ApplicationBuilder::default();
            sparkdiag_eventlog::read_log(input, |e| builder.on_event(e))
                .unwrap_or_else(|e| panic!("{rel}: {e}"));
            builder.finish()
        })
        .collect()
}
