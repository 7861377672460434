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
}

/// `sparkdiag/report/v1`: the one report, or an array of them; each with only the findings
/// `options` shows (the summary keeps the whole run's counts).
fn json(apps: &[App], options: &Options) -> Result<String, RenderError> {
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
        [one] => crate::output::json(one),
        many => crate::output::json(&many),
    }
}
