//! The one analysis step that every sparkdiag command shares (`analyze`, `batch`, `diff`, the
//! tests, the examples and the benchmarks): read one input, build the model, run the rules, replay
//! their changes in the what-if and build the report contract ([`assemble`]).
//!
//! ```no_run
//! let config = sparkdiag_rules::Config::default();
//! for input in sparkdiag_eventlog::discover("app.zstd")? {
//!     let analysis = sparkdiag_analysis::analyze(&input, &sparkdiag_analysis::Options::new(&config))?;
//!     println!("{}: {} findings", analysis.report.application.name.as_deref().unwrap_or("?"),
//!              analysis.report.findings.len());
//! }
//! # Ok::<(), sparkdiag_eventlog::ReadError>(())
//! ```

pub use sparkdiag_contract::Prices;
use sparkdiag_contract::{Report, ViewData};
use sparkdiag_eventlog::{LogInput, ReadError, SourceReport};
use sparkdiag_facts::Facts;
use sparkdiag_model::{Application, ApplicationBuilder};

pub mod applications;
pub mod assemble;
pub mod catalogue;
mod compare;
pub mod detail;
pub mod gates;
pub mod ledger;
mod pick;
mod plan_text;
pub mod redact;
pub mod replay;
pub mod settings;
pub mod spark_ui;

pub use compare::{CompareOptions, DiffRequest, Noise, compare, diff_runs};
pub use pick::{PickError, SideError, analyze_one, analyze_side};
pub use plan_text::{PlanTextError, analyze_plan_file, analyze_plan_text};
/// The rules' configuration (thresholds overridden, rules disabled) every command passes in.
pub use sparkdiag_rules::{Config, ConfigError};

/// How to analyse: the rules' configuration and what the report is told about its inputs.
pub struct Options<'a> {
    pub config: &'a Config,
    /// Gives findings' savings in money too (`impact_cost`, `impact_memory_cost`).
    pub prices: Prices,
    /// The paths the user named, as the report's `source.inputs` shows them; the input's own
    /// display name when empty.
    pub inputs: Vec<String>,
    /// `--redact`: the application's identifying values pseudonymised before anything is
    /// computed from them ([`redact`]). One redactor for every application of a command, so
    /// that a host or a path has one pseudonym in all of them (and two runs compared match).
    pub redact: Option<&'a std::sync::Mutex<redact::Redactor>>,
    /// Only the report (and [`Analysis::view_data`]) will be read of the analysis, as by
    /// `analyze` and the night's pages: what only the rules and the what-if read is let go
    /// before the report is built beside it. [`Analysis::app`] then lacks each SQL execution's
    /// submitted plan where an adaptive re-plan replaced it (`diff` tells queries apart by it),
    /// and [`Analysis::facts`] each stage's slowness figures. On a log of thousands of adaptive
    /// queries and stages, megabytes. `false` by default.
    pub report_only: bool,
}

impl<'a> Options<'a> {
    pub fn new(config: &'a Config) -> Options<'a> {
        Options {
            config,
            prices: Prices::default(),
            inputs: Vec::new(),
            redact: None,
            report_only: false,
        }
    }
}

/// One analysed application: the reading account, the model and the report built from them.
pub struct Analysis {
    pub source: SourceReport,
    pub app: Application,
    pub report: Report,
    /// What the application and its stages were, computed once and read by the rules, the
    /// what-if and the report; `diff` reads its plans.
    pub facts: Facts,
}

impl Analysis {
    /// What the charts and the HTML page draw beyond the report. The views need only the report
    /// and this, so the model can be dropped once it is taken; JSON, text and Markdown output
    /// never need it, which is why it is not built with the report.
    pub fn view_data(&self) -> ViewData {
        assemble::view_data(&self.app)
    }
}

/// Reads `input`, builds the model, runs every enabled rule and builds the report.
pub fn analyze(input: &LogInput, options: &Options) -> Result<Analysis, ReadError> {
    analyze_with_progress(input, options, |_| {})
}

/// [`analyze`], calling `progress` with the number of events read so far every
/// [`PROGRESS_EVERY`] events (for a spinner on a large log).
pub fn analyze_with_progress(
    input: &LogInput,
    options: &Options,
    mut progress: impl FnMut(u64),
) -> Result<Analysis, ReadError> {
    let (source, app) = model_with_progress(input, &mut progress)?;
    if app.spark_events == 0 {
        return Err(nothing_readable(input, &source));
    }
    Ok(analyze_model(input, source, app, options))
}

/// An input without a single Spark event is no application: an error naming the input and
/// what the reading found, never an empty report.
fn nothing_readable(input: &LogInput, source: &SourceReport) -> ReadError {
    let prefix = format!("{}: ", input.display);
    let found: Vec<&str> = source
        .warnings
        .iter()
        .map(|w| w.strip_prefix(&prefix).unwrap_or(w))
        .collect();
    let found = if found.is_empty() {
        String::new()
    } else {
        format!(": {}", found.join("; "))
    };
    ReadError::new(
        sparkdiag_eventlog::ReadErrorKind::NotALog,
        &input.display,
        None,
        format!("nothing readable: not one Spark event in it{found}"),
    )
}

/// The second half of [`analyze`]: every enabled rule and the report, over a model already built
/// from `input` (by [`model`], or by an [`ApplicationBuilder`] set up otherwise, such as one that
/// keeps every task unfolded to compare).
pub fn analyze_model(
    input: &LogInput,
    source: SourceReport,
    mut app: Application,
    options: &Options,
) -> Analysis {
    // Held only while redacting: the analyses of an MCP session's logs go on side by side.
    fn redactor(
        shared: &std::sync::Mutex<redact::Redactor>,
    ) -> std::sync::MutexGuard<'_, redact::Redactor> {
        shared.lock().unwrap_or_else(|e| e.into_inner())
    }
    if let Some(shared) = options.redact {
        redactor(shared).application(&mut app);
    }
    // Every fact is computed once, here, and handed down: the rules, the what-if, the report
    // and `diff` read the same ones.
    let mut facts = Facts::of(&app);
    // The what-if's replays that need no finding run beside the rules; then it replays each
    // finding's change before the report is built from them.
    let (findings, baseline) = rayon::join(
        || sparkdiag_rules::analyze(&app, &facts, options.config),
        || sparkdiag_whatif::Baseline::of(&app, &facts),
    );
    let replayed = sparkdiag_whatif::replayed_from(baseline, &app, &facts, findings);
    if options.report_only {
        app.sql
            .iter_mut()
            .for_each(sparkdiag_model::SqlExecution::let_go_of_replaced_plan);
        facts.let_go_of_stage_slowness();
        hand_back_freed_pages();
    }
    let inputs = if options.inputs.is_empty() {
        vec![input.display.clone()]
    } else {
        options.inputs.clone()
    };
    let mut report = assemble::report(&inputs, &source, &app, &facts, replayed, &options.prices);
    // What the report could check, and what the settings were: named in every report.
    report.ledger = ledger::ledger(&app, options.config, &report);
    report.source.config = options.config.source();
    if let Some(shared) = options.redact {
        redactor(shared).report(&mut report);
    }
    Analysis {
        source,
        app,
        report,
        facts,
    }
}

/// Hands the pages that freed memory left whole back to the system.
///
/// What the analysis lets go of is thousands of small blocks spread over the heap, while the
/// report's lists of stages and jobs are large blocks, which glibc maps afresh: without this,
/// the freed pages stay resident beside them. On a 3.5 GB log of 2,210 queries and 9,490 stage
/// attempts, `analyze` peaked at 62.5 to 63.0 MB without it and 60.2 to 60.8 MB with it, in the
/// same time. Other allocators give freed pages back on their own.
fn hand_back_freed_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free memory, under each arena's own lock.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The first half of [`analyze`]: reads `input` into the model, without running the rules.
pub fn model(input: &LogInput) -> Result<(SourceReport, Application), ReadError> {
    model_with_progress(input, |_| {})
}

fn model_with_progress(
    input: &LogInput,
    mut progress: impl FnMut(u64),
) -> Result<(SourceReport, Application), ReadError> {
    let mut builder = ApplicationBuilder::default();
    let mut events: u64 = 0;
    let source = sparkdiag_eventlog::read_log(input, |event| {
        builder.on_event(event);
        events += 1;
        if events.is_multiple_of(PROGRESS_EVERY) {
            progress(events);
        }
    })?;
    Ok((source, builder.finish()))
}

/// Events between two progress calls.
pub const PROGRESS_EVERY: u64 = 100_000;

#[cfg(test)]
mod tests {
    use super::*;

    /// `report_only` lets go of what only the rules and the what-if read, and of nothing the
    /// report or the charts read.
    #[test]
    fn report_only_gives_the_same_report_and_views_without_the_replaced_plans() {
        let path = format!(
            "{}/../../testdata/logs/diff/partitions-aqe",
            env!("CARGO_MANIFEST_DIR")
        );
        let input = &sparkdiag_eventlog::discover(&path).unwrap()[0];
        let config = Config::default();
        let kept = analyze(input, &Options::new(&config)).unwrap();
        let options = Options {
            report_only: true,
            ..Options::new(&config)
        };
        let lean = analyze(input, &options).unwrap();

        let json = |a: &Analysis| serde_json::to_string(&a.report).unwrap();
        assert_eq!(json(&kept), json(&lean));
        let views = |a: &Analysis| format!("{:?}", a.view_data());
        assert_eq!(views(&kept), views(&lean));

        let replaced = |a: &Analysis| {
            a.app
                .sql
                .iter()
                .filter(|s| s.final_plan.is_some() && s.plan.is_some())
                .count()
        };
        assert!(replaced(&kept) > 0, "the log's queries were re-planned");
        assert_eq!(replaced(&lean), 0);
        let slowness = |a: &Analysis| -> usize {
            a.facts
                .stages
                .iter()
                .map(|s| s.facts.slowness.heap_bytes())
                .sum()
        };
        assert!(slowness(&kept) > 0);
        assert_eq!(slowness(&lean), 0);
    }
}
