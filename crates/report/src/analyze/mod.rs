//! The views of analysed applications (`sparkdiag analyze`, `serve`'s and the night's reports),
//! one file per format: [`text`] for a terminal, [`markdown`] for an issue or a pull request,
//! [`html`] as one self-contained page with the charts inline, and the versioned JSON. The
//! sections more than one format draws are helpers each format calls: the what-if
//! ([`whatif`]), the memory figures ([`memory`]), the streaming queries ([`streaming`]) and
//! what the report could check ([`ledger`]).
//! [`Applications`] is the document every format is asked for through [`crate::View`].

pub mod html;
pub mod ledger;
pub mod markdown;
pub mod memory;
pub mod sarif;
pub mod streaming;
pub mod text;
pub mod whatif;

use std::path::Path;

use crate::{Format, Options, RenderError, Report, View, ViewData};

/// One analysed application as the views draw it.
#[derive(Clone, Copy)]
pub struct App<'a> {
    pub report: &'a Report,
    /// What the HTML page's charts draw beyond the report; only [`Format::needs_view_data`]
    /// formats read it.
    pub view: Option<&'a ViewData>,
}

impl<'a> App<'a> {
    /// Each of `reports` with its view data, when it was kept: `views` holds one per report,
    /// in the same order, or none.
    pub fn each(reports: &'a [Report], views: &'a [ViewData]) -> Vec<App<'a>> {
        reports
            .iter()
            .enumerate()
            .map(|(i, report)| App {
                report,
                view: views.get(i),
            })
            .collect()
    }
}

/// The applications of one `sparkdiag analyze` (one per log found), in the order found.
pub struct Applications<'a>(pub &'a [App<'a>]);

impl View for Applications<'_> {
    fn document(&self) -> &'static str {
        "an application's report"
    }

    fn formats(&self) -> &'static [Format] {
        &Format::ALL
    }

    fn render(&self, format: Format, options: &Options) -> Result<String, RenderError> {
        let apps = self.0;
        if options.quiet {
            return Ok(apps
                .iter()
                .map(|a| text::quiet(a.report, options))
                .collect());
        }
        Ok(match format {
            Format::Text if apps.len() >= text::MANY_APPLICATIONS => {
                text::one_line_each(&apps.iter().map(|a| a.report).collect::<Vec<_>>())
            }
            Format::Text => apps
                .iter()
                .map(|a| text::render_with(a.report, options))
                .collect::<Vec<_>>()
                .join("\n────────\n\n"),
            Format::Json => json(apps, options)?,
            Format::Markdown => apps
                .iter()
                .map(|a| markdown::render_with(a.report, options))
                .collect::<Vec<_>>()
                .join("\n---\n\n"),
            Format::Html => {
                let pages: Option<Vec<(&Report, &ViewData)>> =
                    apps.iter().map(|a| Some((a.report, a.view?))).collect();
                html::render_with(&pages.ok_or(RenderError::NoViewData)?, options)
            }
            Format::Sarif => {
                sarif::render(&apps.iter().map(|a| a.report).collect::<Vec<_>>(), options)?
            }
        })
    }

    /// JSON goes out as it is written; every other format is drawn whole first.
    fn write(
        &self,
        format: Format,
        options: &Options,
        out: &mut dyn std::io::Write,
    ) -> Result<(), RenderError> {
        if format == Format::Json && !options.quiet {
            return write_json(self.0, options, out);
        }
        out.write_all(self.render(format, options)?.as_bytes())
            .map_err(RenderError::Io)
    }
}

/// How `analyze` shows its applications: the document's format and options, and where it and
/// its companions go.
pub struct Delivery<'a> {
    pub format: Format,
    pub options: Options,
    /// `-o FILE`; else standard output.
    pub output: Option<&'a Path>,
    /// `--charts DIR`: each application's charts, as SVG and PNG files.
    pub charts: Option<&'a Path>,
    /// `--open`: the HTML page opened in the browser as well, its file named on standard error
    /// unless the options are quiet.
    pub open: bool,
}

impl Applications<'_> {
    /// Writes the charts, the document and the page `delivery` asks for, in that order. Gives
    /// whether the document showed the gates, one line each (the text view of a few
    /// applications, on standard output and not quiet); when it did not, the caller says them
    /// where a pipeline's log shows them.
    pub fn deliver(&self, delivery: &Delivery) -> std::io::Result<bool> {
        let Delivery {
            format,
            options,
            output,
            charts,
            open,
        } = delivery;
        if let Some(dir) = charts {
            crate::charts::write_files(dir, self.0)?;
        }
        // A document that cannot be drawn is the reason the command failed, said as it is.
        let as_io = |e: RenderError| match e {
            RenderError::Io(e) => e,
            e => std::io::Error::other(e),
        };
        // The page is never one line per finding, whatever `--quiet` does to the document.
        let page_options = Options {
            quiet: false,
            ..options.clone()
        };
        let page = if *open {
            let page = self.render(Format::Html, &page_options).map_err(as_io)?;
            let file = crate::browser::open(&page)?;
            if !options.quiet {
                eprintln!("sparkdiag: opened {}", file.display());
            }
            // The same page is the document when HTML is asked for: drawn once.
            (*format == Format::Html && !options.quiet).then_some(page)
        } else {
            None
        };
        // Written as drawn: a JSON report of thousands of queries is never held whole.
        let write = |out: &mut dyn std::io::Write| match &page {
            Some(page) => out.write_all(page.as_bytes()),
            None => self.write(*format, options, out).map_err(as_io),
        };
        match output {
            Some(file) => std::fs::File::create(file)
                .and_then(|mut out| {
                    write(&mut out).inspect_err(|_| {
                        // No half-written report is left where a pipeline would read it.
                        let _ = std::fs::remove_file(file);
                    })
                })
                .map_err(|e| {
                    std::io::Error::new(e.kind(), format!("cannot write {}: {e}", file.display()))
                })?,
            None => write(&mut std::io::stdout().lock())?,
        }
        Ok(*format == Format::Text
            && output.is_none()
            && !options.quiet
            && self.0.len() < text::MANY_APPLICATIONS)
    }
}

/// `sparkdiag/report/v1`: the one report, or an array of them; each with only the findings
/// `options` shows (the summary keeps the whole run's counts).
fn json(apps: &[App], options: &Options) -> Result<String, RenderError> {
    let mut out = Vec::new();
    write_json(apps, options, &mut out)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// [`json`] streamed into `out`.
fn write_json(
    apps: &[App],
    options: &Options,
    out: &mut dyn std::io::Write,
) -> Result<(), RenderError> {
    let narrowed: Vec<Option<Report>> = apps
        .iter()
        .map(|a| {
            options.narrows(a.report).then(|| {
                let mut report = a.report.clone();
                let shown: Vec<_> = options.shown(a.report).into_iter().cloned().collect();
                report.narrowed = Some(crate::Narrowed {
                    flags: options.narrowed_by(),
                    findings_shown: shown.len(),
                    findings_total: a.report.findings.len(),
                });
                report.findings = shown;
                report
            })
        })
        .collect();
    let reports: Vec<&Report> = apps
        .iter()
        .zip(&narrowed)
        .map(|(a, n)| n.as_ref().unwrap_or(a.report))
        .collect();
    match reports.as_slice() {
        [one] => crate::output::write_json(one, out),
        many => crate::output::write_json(&many, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delivery_writes_the_charts_and_the_document_and_leaves_the_gates_to_the_caller() {
        let log = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/logs/failed/local-1796049483373"
        );
        let input = sparkdiag_eventlog::discover(log).unwrap().remove(0);
        let config = sparkdiag_analysis::Config::default();
        let analysis =
            sparkdiag_analysis::analyze(&input, &sparkdiag_analysis::Options::new(&config))
                .unwrap();
        let view = analysis.view_data();
        let apps = [App {
            report: &analysis.report,
            view: Some(&view),
        }];
        let dir = tempfile::tempdir().unwrap();
        let (file, charts) = (dir.path().join("report.json"), dir.path().join("charts"));
        let delivery = Delivery {
            format: Format::Json,
            options: Options::default(),
            output: Some(&file),
            charts: Some(&charts),
            open: false,
        };
        let gates_shown = Applications(&apps).deliver(&delivery).unwrap();
        assert!(!gates_shown, "a file's JSON shows no gate lines");
        let written: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(written["application"]["id"], "local-1796049483373");
        let svgs = std::fs::read_dir(&charts)
            .unwrap()
            .filter(|e| e.as_ref().unwrap().path().extension() == Some("svg".as_ref()))
            .count();
        assert!(svgs > 0, "the charts were drawn");
        let unwritable = Delivery {
            output: Some(&charts),
            charts: None,
            ..delivery
        };
        let err = Applications(&apps).deliver(&unwritable).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("cannot write {}: ", charts.display())),
            "{err}"
        );
    }
}
