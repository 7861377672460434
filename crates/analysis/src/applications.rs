//! `sparkdiag analyze PATH...`: every application the paths hold, each analysed in turn, linked
//! to the Spark UI and judged against the CI budgets. One log that cannot be read is the
//! command's failure; among several it is left out and counted, never shown as an application.

use sparkdiag_contract::{Exit, Report, ViewData};
use sparkdiag_eventlog::{LogInput, ReadError};

use crate::gates::{self, Budgets};
use crate::{Options, analyze_with_progress};

/// What `analyze` asks of its paths beyond [`Options`] (whose `inputs` each application's
/// path replaces).
pub struct Request<'a> {
    pub paths: &'a [String],
    pub options: Options<'a>,
    pub budgets: Budgets,
    /// `--ui-url`: each finding linked to its page in this Spark UI ([`crate::spark_ui`]).
    pub ui_url: Option<&'a str>,
    /// Keep each application's [`ViewData`]: only the charts and the HTML page draw it, and a
    /// night's worth of tasks is not held for the others.
    pub keep_views: bool,
}

/// Told how the reading goes, on the calling thread, so that a caller can warn and draw
/// progress. Every method does nothing unless implemented.
pub trait Watch {
    /// `input` is about to be read.
    fn reading(&mut self, input: &LogInput) {
        let _ = input;
    }
    /// `events` events of the input being read have been read so far (every
    /// [`crate::PROGRESS_EVERY`]).
    fn events(&mut self, events: u64) {
        let _ = events;
    }
    /// The input being read is done with, read or not.
    fn read(&mut self) {}
    /// An input that could not be read, among several: left out.
    fn left_out(&mut self, error: &ReadError) {
        let _ = error;
    }
}

/// The applications analysed, in the order their paths and logs were found.
pub struct Applications {
    pub reports: Vec<Report>,
    /// Each report's view data, in the same order, when [`Request::keep_views`] asked.
    pub views: Vec<ViewData>,
    /// The logs left out because they could not be read.
    pub unreadable: Vec<ReadError>,
}

impl Applications {
    /// The exit code the gates give: the worst verdict of any application's.
    pub fn exit(&self) -> Exit {
        Exit::worst(
            self.reports
                .iter()
                .filter_map(|r| r.gates.as_ref().map(|g| g.verdict)),
        )
    }

    /// Every gate's line (`max-runtime: 9.3 s, limit 5 s: FAILED`), application by application.
    pub fn gate_lines(&self) -> impl Iterator<Item = &str> {
        self.reports
            .iter()
            .flat_map(|r| r.gates.iter().flat_map(|g| &g.checks))
            .map(|check| check.line.as_str())
    }
}

/// Why `analyze` had nothing to show.
#[derive(Debug)]
pub enum ApplicationsError {
    /// A path could not be searched, or its one log could not be read: the reader's own error.
    Read(ReadError),
    /// Several logs were found and none could be read.
    NothingReadable { paths: String, unreadable: usize },
}

impl std::fmt::Display for ApplicationsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            // The read error speaks for itself; its causes follow as its own (`source`).
            ApplicationsError::Read(e) => e.fmt(f),
            ApplicationsError::NothingReadable { paths, unreadable } => write!(
                f,
                "nothing readable in {paths}: {unreadable} log(s) found, none with a Spark event"
            ),
        }
    }
}

impl std::error::Error for ApplicationsError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ApplicationsError::Read(e) => e.source(),
            ApplicationsError::NothingReadable { .. } => None,
        }
    }
}

/// Finds every application under `request.paths` (all of them before reading any, so a path
/// that does not exist fails at once), then analyses each, telling `watch` as it goes.
pub fn analyze_paths(
    request: &Request,
    watch: &mut dyn Watch,
) -> Result<Applications, ApplicationsError> {
    let mut inputs: Vec<(&String, LogInput)> = Vec::new();
    for path in request.paths {
        let found = sparkdiag_eventlog::discover(path).map_err(ApplicationsError::Read)?;
        inputs.extend(found.into_iter().map(|input| (path, input)));
    }
    let one = inputs.len() == 1;
    let mut analysed = Applications {
        reports: Vec::new(),
        views: Vec::new(),
        unreadable: Vec::new(),
    };
    for (path, input) in &inputs {
        watch.reading(input);
        let options = Options {
            inputs: vec![path.to_string()],
            ..request.options
        };
        let analysis = analyze_with_progress(input, &options, |n| watch.events(n));
        watch.read();
        let analysis = match analysis {
            Ok(analysis) => analysis,
            Err(e) if one => return Err(ApplicationsError::Read(e)),
            Err(e) => {
                watch.left_out(&e);
                analysed.unreadable.push(e);
                continue;
            }
        };
        if request.keep_views {
            analysed.views.push(analysis.view_data());
        }
        let mut report = analysis.report;
        if let Some(base) = request.ui_url {
            crate::spark_ui::link_findings(&mut report, base);
        }
        report.gates = gates::check(&report, &request.budgets);
        analysed.reports.push(report);
    }
    if analysed.reports.is_empty() {
        return Err(ApplicationsError::NothingReadable {
            paths: request.paths.join(" "),
            unreadable: analysed.unreadable.len(),
        });
    }
    Ok(analysed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn testdata(path: &str) -> String {
        format!("{}/../../testdata/{path}", env!("CARGO_MANIFEST_DIR"))
    }

    /// Counts what it is told.
    #[derive(Default)]
    struct Told {
        reading: usize,
        read: usize,
        left_out: Vec<String>,
    }

    impl Watch for Told {
        fn reading(&mut self, _: &LogInput) {
            self.reading += 1;
        }
        fn read(&mut self) {
            self.read += 1;
        }
        fn left_out(&mut self, error: &ReadError) {
            self.left_out.push(error.to_string());
        }
    }

    #[test]
    fn among_several_logs_an_unreadable_one_is_left_out_and_the_gates_are_judged() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("empty.log"), b"").unwrap();
        let log = testdata("logs/failed/local-1796049483373");
        std::fs::copy(&log, dir.path().join("local-1796049483373")).unwrap();
        let config = crate::Config::default();
        let paths = vec![dir.path().display().to_string()];
        let request = Request {
            paths: &paths,
            options: Options::new(&config),
            budgets: Budgets {
                max_runtime: Some(std::time::Duration::from_millis(1)),
                ..Budgets::default()
            },
            ui_url: None,
            keep_views: true,
        };
        let mut told = Told::default();
        let analysed = analyze_paths(&request, &mut told).unwrap();
        assert_eq!((told.reading, told.read), (2, 2));
        assert_eq!(told.left_out.len(), 1, "{:?}", told.left_out);
        assert!(
            told.left_out[0].contains("empty.log"),
            "{:?}",
            told.left_out
        );
        assert_eq!((analysed.reports.len(), analysed.views.len()), (1, 1));
        assert_eq!(analysed.reports[0].source.inputs, paths);
        assert_eq!(analysed.exit(), Exit::Failed, "9 s is over a 1 ms budget");
        let lines: Vec<&str> = analysed.gate_lines().collect();
        assert_eq!(lines.len(), 1);
        assert!(lines[0].starts_with("max-runtime: "), "{lines:?}");
    }

    #[test]
    fn one_unreadable_log_is_the_error_and_several_say_nothing_was_readable() {
        let dir = tempfile::tempdir().unwrap();
        for name in ["empty-1.log", "empty-2.log"] {
            std::fs::write(dir.path().join(name), b"").unwrap();
        }
        let config = crate::Config::default();
        let request = |paths| Request {
            paths,
            options: Options::new(&config),
            budgets: Budgets::default(),
            ui_url: None,
            keep_views: false,
        };
        let both = vec![dir.path().display().to_string()];
        let err = analyze_paths(&request(&both), &mut Told::default())
            .err()
            .expect("nothing readable");
        assert_eq!(
            err.to_string(),
            format!(
                "nothing readable in {}: 2 log(s) found, none with a Spark event",
                both[0]
            )
        );
        let one = vec![dir.path().join("empty-1.log").display().to_string()];
        let mut told = Told::default();
        let err = analyze_paths(&request(&one), &mut told)
            .err()
            .expect("the read error");
        assert!(matches!(err, ApplicationsError::Read(_)), "{err}");
        assert!(
            told.left_out.is_empty(),
            "one log is not left out, it fails"
        );
    }
}
