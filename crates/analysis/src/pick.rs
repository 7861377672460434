//! One application out of a path that may hold several (a night's history folder): what
//! `sparkdiag diff` compares, each side's errors naming the side.

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

/// Why one side of `sparkdiag diff` (BEFORE or AFTER) could not be read, naming the side and
/// its path. A read error is its [`source`](std::error::Error::source), as a context would be,
/// so a caller printing the chain prints `BEFORE path: the read error`.
#[derive(Debug)]
pub struct SideError {
    pub side: &'static str,
    pub path: String,
    /// Boxed: a read error is large, and this one travels up through every caller.
    pub error: Box<PickError>,
}

impl std::fmt::Display for SideError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let SideError { side, path, error } = self;
        match &**error {
            PickError::Read(_) => write!(f, "{side} {path}"),
            PickError::Several(n) => write!(
                f,
                "{side} {path} holds {n} applications; name one log, or pick by name with --app-name"
            ),
            PickError::NoneNamed(_) => write!(f, "{side} {path}: {error}"),
        }
    }
}

impl std::error::Error for SideError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &*self.error {
            PickError::Read(e) => Some(e),
            _ => None,
        }
    }
}

/// [`analyze_one`] for one side of a comparison: the report's inputs are `path`, and every error
/// names `side` and `path`.
pub fn analyze_side(
    side: &'static str,
    path: &str,
    options: &Options,
    app_name: Option<&str>,
    mut skipped: impl FnMut(&'static str, &LogInput, &ReadError),
) -> Result<Analysis, SideError> {
    let options = Options {
        inputs: vec![path.to_string()],
        ..*options
    };
    analyze_one(path, &options, app_name, |input, err| {
        skipped(side, input, err)
    })
    .map_err(|error| SideError {
        side,
        path: path.to_string(),
        error: Box::new(error),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn testdata(path: &str) -> String {
        format!("{}/../../testdata/{path}", env!("CARGO_MANIFEST_DIR"))
    }

    #[test]
    fn each_side_is_named_in_its_error_and_picked_by_name_among_several() {
        let config = crate::Config::default();
        let options = Options::new(&config);
        let folder = testdata("logs/failed");
        let one = analyze_side("BEFORE", &folder, &options, None, |_, _, _| {}).unwrap();
        assert_eq!(one.report.source.inputs, vec![folder.clone()]);
        let missing = testdata("logs/no-such-run");
        let err = analyze_side("AFTER", &missing, &options, None, |_, _, _| {})
            .err()
            .expect("an error");
        assert_eq!(err.to_string(), format!("AFTER {missing}"));
        assert!(std::error::Error::source(&err).is_some(), "the read error");
        let several = testdata("logs/multi");
        let err = analyze_side("BEFORE", &several, &options, None, |_, _, _| {})
            .err()
            .expect("an error");
        assert!(
            err.to_string()
                .contains(" applications; name one log, or pick by name"),
            "{err}"
        );
        let err = analyze_side(
            "AFTER",
            &several,
            &options,
            Some("no such app"),
            |_, _, _| {},
        )
        .err()
        .expect("an error");
        assert_eq!(
            err.to_string(),
            format!("AFTER {several}: no application named `no such app`")
        );
    }
}
