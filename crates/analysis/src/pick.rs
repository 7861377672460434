//! One application out of a path that may hold several (a night's history folder): what
//! `sparkdiag diff` compares.

use sparkdiag_eventlog::{LogInput, ReadError};

use crate::{Analysis, Options, analyze};

/// Why no single application could be picked out of a path.
#[derive(Debug)]
pub enum PickError {
    /// The path, or its only log, could not be read.
    Read(ReadError),
    /// The path holds this many applications and no name was given to choose.
    Several(usize),
    /// No readable application has this name.
    NoneNamed(String),
}

impl std::fmt::Display for PickError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PickError::Read(e) => e.fmt(f),
            PickError::Several(n) => write!(f, "holds {n} applications"),
            PickError::NoneNamed(name) => write!(f, "no application named `{name}`"),
        }
    }
}

impl std::error::Error for PickError {}

/// The application in `path`: its only one, or, when it holds several, the latest to start of
/// those named `app_name`. Every application is read to learn its name; one that cannot be
/// read is handed to `skipped` and passed over.
pub fn analyze_one(
    path: &str,
    options: &Options,
    app_name: Option<&str>,
    mut skipped: impl FnMut(&LogInput, &ReadError),
) -> Result<Analysis, PickError> {
    let inputs = sparkdiag_eventlog::discover(path).map_err(PickError::Read)?;
    if inputs.len() == 1 {
        return analyze(&inputs[0], options).map_err(PickError::Read);
    }
    let Some(name) = app_name else {
        return Err(PickError::Several(inputs.len()));
    };
    let mut best: Option<Analysis> = None;
    for input in &inputs {
        let analysis = match analyze(input, options) {
            Ok(a) => a,
            Err(err) => {
                skipped(input, &err);
                continue;
            }
        };
        if analysis.app.name.as_deref() != Some(name) {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|b| analysis.app.start_ms > b.app.start_ms)
        {
            best = Some(analysis);
        }
    }
    best.ok_or_else(|| PickError::NoneNamed(name.to_string()))
}
