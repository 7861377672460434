//! The one seam every command writes its documents through: the formats ([`Format`], one list
//! that `analyze`, `diff`, `plan`, `rules`, `batch` and `serve` all take theirs from), what a
//! view is told besides its document ([`Options`]: where text goes, how many findings to show),
//! and the face every document turns to them ([`View`]).
//!
//! A format is one variant here; each document (`analyze`, `diff`, `plan`, `catalogue`) draws it
//! in a file of its own folder, or says it has no view in it ([`RenderError::Unsupported`]), and
//! the compiler names every document's `match` that wants the new arm. See CONTRIBUTING.md,
//! "Adding an output format".

use std::fmt;
use std::io::Write;

use sparkdiag_contract::{Category, Finding, FindingOut, Report, RuleDoc, Severity};

/// An output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// For a person at a terminal: coloured and fitted to its width there, plain elsewhere.
    Text,
    /// The versioned document (`sparkdiag/report/v1`, `diff/v1`, `plan/v1`), for programs.
    Json,
    /// For an issue, a pull request or a ticket that renders Markdown.
    Markdown,
    /// One self-contained page with charts that opens offline.
    Html,
    /// SARIF 2.1.0, for code-scanning tools: each finding at its code site in the user's program.
    Sarif,
}

impl Format {
    /// Every format, in the order `--help` lists them.
    pub const ALL: [Format; 5] = [
        Format::Text,
        Format::Json,
        Format::Markdown,
        Format::Html,
        Format::Sarif,
    ];

    /// What `--format` calls it.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Html => "html",
            Format::Sarif => "sarif",
        }
    }

    /// The format `--format NAME` (or a config file's `format = "NAME"`) means.
    pub fn parse(name: &str) -> Option<Format> {
        Format::ALL
            .into_iter()
            .find(|f| f.name().eq_ignore_ascii_case(name.trim()))
    }

    /// One line for `--help`.
    pub fn about(self) -> &'static str {
        match self {
            Format::Text => "for a person: coloured and fitted to a terminal, plain elsewhere",
            Format::Json => "the versioned document, for programs (docs/report-json.md)",
            Format::Markdown => "for an issue, a pull request or a ticket",
            Format::Html => "one self-contained page with charts that opens offline",
            Format::Sarif => "SARIF 2.1.0 for code-scanning tools, findings at their code sites",
        }
    }

    /// The file extension a document in this format is written with.
    pub fn extension(self) -> &'static str {
        match self {
            Format::Text => "txt",
            Format::Json => "json",
            Format::Markdown => "md",
            Format::Html => "html",
            Format::Sarif => "sarif",
        }
    }

    /// Whether its view of an application draws what the JSON does not carry (every task's
    /// duration for the charts): the caller then keeps each application's `ViewData`.
    pub fn needs_view_data(self) -> bool {
        matches!(self, Format::Html)
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// Where text goes, which decides its width and colour.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Terminal {
    /// Standard output is a terminal: tables fit `width`.
    pub terminal: bool,
    /// Severities and failed stages in colour (only meaningful with `terminal`).
    pub color: bool,
    /// The terminal's width in columns (only meaningful with `terminal`); `None` asks the
    /// terminal, as [`Terminal::for_stdout`] does.
    pub width: Option<u16>,
}

/// When the text view is in colour (`--color`, a config file's `color`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ColorChoice {
    #[default]
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Every choice, in the order `--help` lists them.
    pub const ALL: [ColorChoice; 3] = [ColorChoice::Auto, ColorChoice::Always, ColorChoice::Never];

    /// What `--color` calls it.
    pub fn name(self) -> &'static str {
        match self {
            ColorChoice::Auto => "auto",
            ColorChoice::Always => "always",
            ColorChoice::Never => "never",
        }
    }

    /// One line for `--help`.
    pub fn about(self) -> &'static str {
        match self {
            ColorChoice::Auto => "On a terminal, unless `NO_COLOR` is set",
            ColorChoice::Always => {
                "Always, even into a pipe or a file (and despite `NO_COLOR`: the flag is asked for)"
            }
            ColorChoice::Never => "Never",
        }
    }

    /// The choice `--color NAME` (or a config file's `color = "NAME"`) means, in any case.
    pub fn parse(name: &str) -> Option<ColorChoice> {
        ColorChoice::ALL
            .into_iter()
            .find(|c| c.name().eq_ignore_ascii_case(name))
    }
}

/// The width when neither the terminal nor `COLUMNS` gives one.
const FALLBACK_WIDTH: u16 = 80;

impl Terminal {
    /// For standard output: terminal width and colour only when it is a terminal, no colour
    /// when `NO_COLOR` is set (<https://no-color.org>). Use the default (plain) for `-o FILE`.
    pub fn for_stdout() -> Terminal {
        use std::io::IsTerminal;
        let terminal = std::io::stdout().is_terminal();
        Terminal {
            terminal,
            color: terminal && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
            width: terminal.then(|| {
                terminal_width(
                    comfy_table::Table::new().width(),
                    std::env::var("COLUMNS").ok().as_deref(),
                )
            }),
        }
    }

    /// Where text goes with `color` asked for: standard output's terminal (width, and colour
    /// unless `NO_COLOR`), or plain text for `to_file` (`-o FILE`); `always` and `never` then
    /// decide the colour.
    pub fn chosen(to_file: bool, color: ColorChoice) -> Terminal {
        let mut terminal = if to_file {
            Terminal::default()
        } else {
            Terminal::for_stdout()
        };
        match color {
            ColorChoice::Auto => {}
            ColorChoice::Always => terminal.color = true,
            ColorChoice::Never => terminal.color = false,
        }
        terminal
    }

    /// The width to lay text out in.
    pub fn columns(self) -> u16 {
        self.width.unwrap_or_else(|| {
            terminal_width(
                comfy_table::Table::new().width(),
                std::env::var("COLUMNS").ok().as_deref(),
            )
        })
    }
}

/// The width to lay the view out in: what the terminal reports, unless it reports nothing or
/// zero columns (under `script`, some CI runners and IDE consoles), then `COLUMNS`, then 80.
/// A zero width would otherwise wrap every table to one character a line.
pub fn terminal_width(reported: Option<u16>, columns_env: Option<&str>) -> u16 {
    reported
        .filter(|&w| w > 0)
        .or_else(|| {
            columns_env
                .and_then(|c| c.trim().parse::<u16>().ok())
                .filter(|&w| w > 0)
        })
        .unwrap_or(FALLBACK_WIDTH)
}

/// What a view is told besides its document. The default is the plain view of everything.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Where text goes (the text views' width and colour).
    pub terminal: Terminal,
    /// Show only the N findings that recover the most (`--top N`); the summary keeps the whole
    /// run's counts.
    pub top: Option<usize>,
    /// One line per finding, in any format (`--quiet`).
    pub quiet: bool,
    /// Only some findings (`--only`, `--min-severity`, `--stage`); the summary keeps the whole
    /// run's counts.
    pub narrowing: Narrowing,
}

/// The findings a view is asked to show: `--only CODE|CATEGORY`, `--min-severity`, `--stage N`.
/// Empty lists and `None` keep every finding.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Narrowing {
    /// These rules' findings (codes), with those of `categories`.
    pub rules: Vec<&'static str>,
    pub categories: Vec<Category>,
    /// Findings at least this severe.
    pub min_severity: Option<Severity>,
    /// Findings about one of these stages.
    pub stages: Vec<i64>,
}

impl Narrowing {
    /// Whether `finding` is one to show.
    pub fn keeps(&self, finding: &Finding) -> bool {
        let chosen = (self.rules.is_empty() && self.categories.is_empty())
            || self.rules.contains(&finding.rule)
            || self.categories.contains(&finding.category);
        chosen
            && self.min_severity.is_none_or(|s| finding.severity <= s)
            && (self.stages.is_empty()
                || finding
                    .scope
                    .stage_ids
                    .iter()
                    .any(|s| self.stages.contains(s)))
    }

    /// What the flags ask for: each of `only` is a rule of `catalogue` (its code or name) or a
    /// rule's category, in any case; anything else is refused, naming it.
    pub fn asked(
        only: &[String],
        min_severity: Option<Severity>,
        stages: Vec<i64>,
        catalogue: &[RuleDoc],
    ) -> Result<Narrowing, String> {
        let mut narrowing = Narrowing {
            min_severity,
            stages,
            ..Narrowing::default()
        };
        for only in only {
            let named = |rule: &&RuleDoc| {
                rule.code.eq_ignore_ascii_case(only) || rule.name.eq_ignore_ascii_case(only)
            };
            if let Some(rule) = catalogue.iter().find(named) {
                narrowing.rules.push(rule.code);
            } else if let Some(rule) = catalogue
                .iter()
                .find(|r| r.category.name().eq_ignore_ascii_case(only))
            {
                narrowing.categories.push(rule.category);
            } else {
                return Err(format!(
                    "--only {only}: no rule or category of that name (`sparkdiag rules` lists both)"
                ));
            }
        }
        Ok(narrowing)
    }

    /// What was asked for, as the flags say it: `--only skew --min-severity high`.
    pub fn flags(&self) -> String {
        let mut flags: Vec<String> = Vec::new();
        for only in self
            .rules
            .iter()
            .copied()
            .chain(self.categories.iter().map(|c| c.name()))
        {
            flags.push(format!("--only {only}"));
        }
        if let Some(s) = self.min_severity {
            flags.push(format!("--min-severity {}", s.name()));
        }
        for stage in &self.stages {
            flags.push(format!("--stage {stage}"));
        }
        flags.join(" ")
    }
}

impl Options {
    /// The findings of `report` a view shows, in the report's order.
    pub fn shown<'r>(&self, report: &'r Report) -> Vec<&'r FindingOut> {
        report
            .findings
            .iter()
            .filter(|f| self.narrowing.keeps(&f.finding))
            .take(self.top.unwrap_or(usize::MAX))
            .collect()
    }

    /// What narrowed the findings, as the flags say it: `--only skew --top 3`.
    pub fn narrowed_by(&self) -> String {
        let mut flags = self.narrowing.flags();
        if let Some(top) = self.top {
            if !flags.is_empty() {
                flags.push(' ');
            }
            flags.push_str(&format!("--top {top}"));
        }
        flags
    }

    /// Whether a view shows fewer findings than the report holds.
    pub fn narrows(&self, report: &Report) -> bool {
        self.shown(report).len() < report.findings.len()
    }
}

/// A document the views draw: an application's report (or several), two runs compared, plan
/// text's report, the rules catalogue.
pub trait View {
    /// What it is, for an error that names it ("the rules catalogue").
    fn document(&self) -> &'static str;

    /// The formats it has a view in.
    fn formats(&self) -> &'static [Format];

    /// The document in `format`.
    fn render(&self, format: Format, options: &Options) -> Result<String, RenderError>;

    /// [`View::render`] into `out`.
    fn write(
        &self,
        format: Format,
        options: &Options,
        out: &mut dyn std::io::Write,
    ) -> Result<(), RenderError> {
        out.write_all(self.render(format, options)?.as_bytes())
            .map_err(RenderError::Io)
    }
}

/// Why a document was not drawn.
#[derive(Debug)]
pub enum RenderError {
    /// The document has no view in this format.
    Unsupported {
        format: Format,
        document: &'static str,
        formats: &'static [Format],
    },
    /// The HTML page draws each application's charts from its `ViewData`, which was not kept.
    NoViewData,
    Json(serde_json::Error),
    Io(std::io::Error),
}

impl RenderError {
    /// `format` is not one of `document`'s.
    pub fn unsupported(view: &dyn View, format: Format) -> RenderError {
        RenderError::Unsupported {
            format,
            document: view.document(),
            formats: view.formats(),
        }
    }
}

impl fmt::Display for RenderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RenderError::Unsupported {
                format,
                document,
                formats,
            } => write!(
                f,
                "--format {format}: {document} has no {format} view; it comes as {}",
                formats
                    .iter()
                    .map(|f| f.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            RenderError::NoViewData => f.write_str(
                "the HTML page needs each application's view data (Analysis::view_data)",
            ),
            RenderError::Json(e) => write!(f, "cannot write the JSON: {e}"),
            RenderError::Io(e) => write!(f, "cannot write the output: {e}"),
        }
    }
}

impl std::error::Error for RenderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            RenderError::Json(e) => Some(e),
            RenderError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<serde_json::Error> for RenderError {
    fn from(e: serde_json::Error) -> RenderError {
        RenderError::Json(e)
    }
}

/// Writes a command's document to `file` (`-o FILE`), else to standard output. A file that
/// cannot be written is named in the error; standard output's error is its own, so that a
/// reader that went away is a broken pipe the program can end quietly on.
pub fn write_out(text: &str, file: Option<&std::path::Path>) -> std::io::Result<()> {
    use std::io::Write;
    match file {
        Some(file) => std::fs::write(file, text).map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot write {}: {e}", file.display()))
        }),
        None => std::io::stdout().lock().write_all(text.as_bytes()),
    }
}

/// A document as pretty JSON with a final newline.
pub fn json(document: &impl serde::Serialize) -> Result<String, RenderError> {
    let mut out = Vec::new();
    write_json(document, &mut out)?;
    Ok(String::from_utf8(out).expect("serde_json writes UTF-8"))
}

/// [`json`] written straight into `out`, through a buffer: a report of thousands of SQL
/// executions is tens of megabytes of JSON, which need not be held whole before it is written.
pub fn write_json(
    document: &impl serde::Serialize,
    out: &mut dyn std::io::Write,
) -> Result<(), RenderError> {
    let mut buffered = std::io::BufWriter::with_capacity(64 << 10, out);
    serde_json::to_writer_pretty(&mut buffered, document).map_err(|e| {
        if e.is_io() {
            RenderError::Io(e.into())
        } else {
            RenderError::Json(e)
        }
    })?;
    buffered.write_all(b"\n").map_err(RenderError::Io)?;
    buffered.flush().map_err(RenderError::Io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_names_a_rule_by_code_or_name_or_a_category_and_nothing_else() {
        let rule = |code, name, category| RuleDoc {
            code,
            name,
            category,
            summary: "",
            doc: "",
            thresholds: &[],
            needs: &[],
        };
        let catalogue = [
            rule("SK001", "data-skew", Category::Skew),
            rule("SP001", "spill", Category::Spill),
        ];
        let asked = |only: &[&str]| {
            let only: Vec<String> = only.iter().map(|s| s.to_string()).collect();
            Narrowing::asked(&only, Some(Severity::High), vec![3], &catalogue)
        };
        let narrowing = asked(&["sk001", "SPILL", "Data-Skew"]).unwrap();
        assert_eq!(narrowing.rules, ["SK001", "SP001", "SK001"]);
        assert!(narrowing.categories.is_empty());
        assert_eq!(narrowing.min_severity, Some(Severity::High));
        assert_eq!(narrowing.stages, [3]);
        let by_category = asked(&["skew"]).unwrap();
        assert_eq!(by_category.categories, [Category::Skew]);
        assert_eq!(
            asked(&["gc"]).unwrap_err(),
            "--only gc: no rule or category of that name (`sparkdiag rules` lists both)"
        );
    }

    #[test]
    fn a_colour_choice_is_found_by_its_name_and_decides_over_the_terminal() {
        for choice in ColorChoice::ALL {
            assert_eq!(ColorChoice::parse(choice.name()), Some(choice));
            assert_eq!(
                ColorChoice::parse(&choice.name().to_uppercase()),
                Some(choice)
            );
        }
        assert_eq!(ColorChoice::parse("sometimes"), None);
        assert!(Terminal::chosen(true, ColorChoice::Always).color);
        assert!(
            !Terminal::chosen(true, ColorChoice::Always).terminal,
            "a file is no terminal"
        );
        assert!(!Terminal::chosen(true, ColorChoice::Auto).color);
        assert!(!Terminal::chosen(false, ColorChoice::Never).color);
    }

    #[test]
    fn every_format_is_found_by_its_name() {
        for format in Format::ALL {
            assert_eq!(Format::parse(format.name()), Some(format));
            assert_eq!(Format::parse(&format.name().to_uppercase()), Some(format));
            assert!(!format.about().is_empty() && !format.extension().is_empty());
        }
        assert_eq!(Format::parse("yaml"), None);
    }
}
