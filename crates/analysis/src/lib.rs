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
use sparkdiag_facts::{FoldedStageStats, PlanInput};
use sparkdiag_model::{Application, ApplicationBuilder};
use sparkdiag_rules::Config;

pub mod assemble;
mod pick;
mod plan_text;

pub use pick::{PickError, analyze_one};
pub use plan_text::{PlanTextError, analyze_plan_text};

/// How to analyse: the rules' configuration and what the report is told about its inputs.
pub struct Options<'a> {
    pub config: &'a Config,
    /// Gives findings' savings in money too (`impact_cost`, `impact_memory_cost`).
    pub prices: Prices,
    /// The paths the user named, as the report's `source.inputs` shows them; the input's own
    /// display name when empty.
    pub inputs: Vec<String>,
}

impl<'a> Options<'a> {
    pub fn new(config: &'a Config) -> Options<'a> {
        Options {
            config,
            prices: Prices::default(),
            inputs: Vec::new(),
        }
    }
}

/// One analysed application: the reading account, the model and the report built from them.
pub struct Analysis {
    pub source: SourceReport,
    pub app: Application,
    pub report: Report,
    /// Each SQL execution's plan, parsed and paired once by the rules; `diff` reads these.
    pub plans: Vec<PlanInput>,
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
    let (source, app, early) = model_and_stage_stats(input, &mut progress)?;
    Ok(analyze_model_given(input, source, app, early, options))
}

/// The second half of [`analyze`]: every enabled rule and the report, over a model already built
/// from `input` (by [`model`], or by an [`ApplicationBuilder`] set up otherwise, such as one that
/// keeps every task unfolded to compare).
pub fn analyze_model(
    input: &LogInput,
    source: SourceReport,
    app: Application,
    options: &Options,
) -> Analysis {
    analyze_model_given(input, source, app, Vec::new(), options)
}

fn analyze_model_given(
    input: &LogInput,
    source: SourceReport,
    app: Application,
    early: Vec<FoldedStageStats>,
    options: &Options,
) -> Analysis {
    let analysed = sparkdiag_rules::analyze_keeping_all_given(&app, options.config, early);
    // The what-if replays each finding's change before the report is built from them.
    let replayed = sparkdiag_whatif::replayed(&app, &analysed.stages, analysed.findings);
    let cores = sparkdiag_facts::peak_cores(&app);
    let inputs = if options.inputs.is_empty() {
        vec![input.display.clone()]
    } else {
        options.inputs.clone()
    };
    let report = assemble::report(
        &inputs,
        &source,
        &app,
        replayed,
        cores,
        &options.prices,
        &analysed.stages,
    );
    Analysis {
        source,
        app,
        report,
        plans: analysed.plans,
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

/// [`model_with_progress`], with the statistics of each stage computed on a thread of its own
/// as the stage completes, from its tasks as they were folded: the work that needs no more than
/// one stage's tasks is done while the reading goes on, not after it.
fn model_and_stage_stats(
    input: &LogInput,
    mut progress: impl FnMut(u64),
) -> Result<(SourceReport, Application, Vec<FoldedStageStats>), ReadError> {
    let mut builder = ApplicationBuilder::default().handing_on_folded_stages();
    let mut events: u64 = 0;
    let (to_stats, folded) = std::sync::mpsc::channel::<sparkdiag_model::FoldedStage>();
    std::thread::scope(|scope| {
        let stats = std::thread::Builder::new()
            .name(STAGE_STATS_THREAD.into())
            .spawn_scoped(scope, move || {
                folded
                    .iter()
                    .map(|stage| FoldedStageStats::of(&stage))
                    .collect::<Vec<_>>()
            });
        let source = sparkdiag_eventlog::read_log(input, |event| {
            builder.on_event(event);
            for stage in builder.take_folded() {
                // Without the thread (it could not start) the stages' statistics are computed
                // after the reading, as always.
                let _ = to_stats.send(stage);
            }
            events += 1;
            if events.is_multiple_of(PROGRESS_EVERY) {
                progress(events);
            }
        });
        drop(to_stats);
        let early = match stats {
            Ok(thread) => thread.join().unwrap_or_default(),
            Err(_) => Vec::new(),
        };
        Ok((source?, builder.finish(), early))
    })
}

/// The thread computing completed stages' statistics while the reading goes on.
pub const STAGE_STATS_THREAD: &str = "sparkdiag-stage-stats";

/// Events between two progress calls.
pub const PROGRESS_EVERY: u64 = 100_000;
