//! The blocking work: finding the logs in an upload (unpacking archives under the eventlog
//! crate's limits, refusing hostile ones), analysing them, and rendering the report's views.

use std::path::Path;
use std::sync::{Arc, Mutex};

use sparkdiag_analysis::Analysis;
use sparkdiag_analysis::redact::Redactor;
use sparkdiag_eventlog::{ArchiveRefusal, LogInput};

use crate::store::AppSummary;

/// An upload refused, with the HTTP status and a message for the person who sent it.
#[derive(Debug, Clone)]
pub struct Refused {
    pub status: u16,
    pub message: String,
}

impl Refused {
    pub fn new(status: u16, message: impl Into<String>) -> Refused {
        Refused {
            status,
            message: message.into(),
        }
    }
}

/// The logs in the uploaded file at `path` (shown as `shown`). Archives are unpacked under
/// `unpack_into`; one that unpacks like a bomb is refused with 413, one with members that
/// lead outside it, links or devices with 422, as is a file that holds no Spark event log.
pub fn find_logs(path: &Path, shown: &str, unpack_into: &Path) -> Result<Vec<LogInput>, Refused> {
    let path_text = path.to_string_lossy();
    let mut inputs = sparkdiag_eventlog::discover_unpacking_into(&path_text, unpack_into)
        .map_err(|e| {
            let message = e.to_string();
            refusal(&message, &[]).unwrap_or_else(|| Refused::new(422, message))
        })
        .map_err(|r| Refused::new(r.status, shown_as(&r.message, &path_text, shown)))?;
    let skipped: Vec<String> = inputs
        .iter()
        .flat_map(|i| i.skipped.iter().cloned())
        .collect();
    if let Some(refused) = refusal("", &skipped) {
        return Err(Refused::new(
            refused.status,
            shown_as(&refused.message, &path_text, shown),
        ));
    }
    for input in &mut inputs {
        input.display = shown_as(&input.display, &path_text, shown);
    }
    Ok(inputs)
}

/// The refusal `message` or one of `skipped` tells of, if any, with every note that tells one.
fn refusal(message: &str, skipped: &[String]) -> Option<Refused> {
    let notes: Vec<&str> = std::iter::once(message)
        .chain(skipped.iter().map(String::as_str))
        .filter(|note| ArchiveRefusal::find(note).is_some())
        .collect();
    let first = ArchiveRefusal::find(notes.first()?)?;
    let (status, why) = if first == ArchiveRefusal::BOMB {
        (
            413,
            "the archive unpacks past sparkdiag's limits, as a decompression bomb does",
        )
    } else {
        (
            422,
            "the archive holds members that are not plain files inside it",
        )
    };
    Some(Refused::new(
        status,
        format!(
            "refused: {why}; nothing from it was analysed. {}",
            notes.join("; ")
        ),
    ))
}

/// `text` with the upload's path on disk replaced by the name it was sent with.
fn shown_as(text: &str, path: &str, shown: &str) -> String {
    text.replace(path, shown)
}

/// One redacted upload's (or diff's) pseudonyms, for its report and everything said of it
/// beside (progress, refusals), keyed by the server's secret.
#[derive(Clone)]
pub struct Redaction(Arc<Mutex<Redactor>>);

impl Redaction {
    pub fn new(key: &[u8]) -> Redaction {
        Redaction(Arc::new(Mutex::new(Redactor::keyed(key))))
    }

    fn redactor(&self) -> std::sync::MutexGuard<'_, Redactor> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// `refused` with its message pseudonymised when the upload is redacted: it may name the
    /// archive's members, or quote the log.
    pub fn refusal(redaction: Option<&Redaction>, refused: Refused) -> Refused {
        match redaction {
            None => refused,
            Some(r) => Refused::new(refused.status, r.redactor().text(&refused.message)),
        }
    }
}

/// Analyses every log found, calling `progress` with a line saying how far it has got;
/// redacted, with `redaction`'s pseudonyms, and the progress names no log.
pub fn analyze(
    inputs: &[LogInput],
    shown: &str,
    config: &crate::Config,
    redaction: Option<&Redaction>,
    progress: impl Fn(String),
) -> Result<Vec<Analysis>, Refused> {
    let mut analyses = Vec::new();
    for (i, input) in inputs.iter().enumerate() {
        let of = if inputs.len() > 1 {
            format!(" (application {} of {})", i + 1, inputs.len())
        } else {
            String::new()
        };
        // A member of an archive is named after its application.
        let reading = match redaction {
            Some(_) => format!("reading the upload{of}"),
            None => format!("reading {}{of}", input.display),
        };
        progress(reading.clone());
        let options = sparkdiag_analysis::Options {
            config: &config.rules,
            prices: config.prices,
            inputs: vec![shown.to_string()],
            redact: redaction.map(|r| &*r.0),
            report_only: false,
        };
        let analysis = sparkdiag_analysis::analyze_with_progress(input, &options, |events| {
            progress(format!("{reading}: {events} events so far"))
        })
        .map_err(|e| {
            let message = match redaction {
                Some(_) => e.to_string().replace(&input.display, shown),
                None => e.to_string(),
            };
            Redaction::refusal(redaction, Refused::new(422, message))
        })?;
        analyses.push(analysis);
    }
    progress("writing the report".into());
    Ok(analyses)
}

/// The report's views, exactly as `sparkdiag analyze --format html|json|markdown` writes them.
pub struct Views {
    pub html: String,
    pub json: String,
    pub markdown: String,
    pub apps: Vec<AppSummary>,
}

/// The one place the report is rendered.
pub fn render(analyses: &[Analysis]) -> Result<Views, Refused> {
    use sparkdiag_report::analyze::{App, Applications};
    use sparkdiag_report::{Format, View};
    let reports: Vec<_> = analyses.iter().map(|a| &a.report).collect();
    let views: Vec<_> = analyses.iter().map(Analysis::view_data).collect();
    let pages: Vec<App> = reports
        .iter()
        .zip(&views)
        .map(|(report, view)| App {
            report,
            view: Some(view),
        })
        .collect();
    let document = Applications(&pages);
    let render = |format: Format| {
        document
            .render(format, &sparkdiag_report::Options::default())
            .map_err(|e| Refused::new(500, format!("cannot write the {format} report: {e}")))
    };
    let (html, json, markdown) = (
        render(Format::Html)?,
        render(Format::Json)?,
        render(Format::Markdown)?,
    );
    let apps = reports
        .iter()
        .map(|r| AppSummary {
            name: r
                .application
                .name
                .clone()
                .unwrap_or_else(|| "(unnamed application)".into()),
            findings: r.findings.len(),
            top: r.findings.first().map(|f| f.finding.title.clone()),
        })
        .collect();
    Ok(Views {
        html,
        json,
        markdown,
        apps,
    })
}

/// `sparkdiag diff`'s HTML page for two uploads, each holding one application.
pub fn diff(
    before: (&Path, &str),
    after: (&Path, &str),
    unpack_into: &Path,
    config: &crate::Config,
    redaction: Option<&Redaction>,
) -> Result<String, Refused> {
    let read = |(path, shown): (&Path, &str)| -> Result<Analysis, Refused> {
        let inputs = find_logs(path, shown, unpack_into)
            .map_err(|refused| Redaction::refusal(redaction, refused))?;
        if inputs.len() != 1 {
            return Err(Refused::new(
                422,
                format!(
                    "{shown} holds {} applications; compare uploads of one application each",
                    inputs.len()
                ),
            ));
        }
        let mut analyses = analyze(&inputs, shown, config, redaction, |_| {})?;
        Ok(analyses.remove(0))
    };
    let before = read(before)?;
    let after = read(after)?;
    fn run(a: &Analysis) -> sparkdiag_diff::Run<'_> {
        sparkdiag_diff::Run {
            app: &a.app,
            report: &a.report,
            facts: &a.facts,
        }
    }
    let options = sparkdiag_diff::Options {
        price_per_core_hour: config.prices.per_core_hour,
        ..Default::default()
    };
    let diff = sparkdiag_diff::compare(run(&before), run(&after), &options);
    Ok(sparkdiag_report::diff::html::render(&diff))
}
