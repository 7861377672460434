//! `sparkdiag diff BEFORE AFTER`: reads each run once, compares them with `sparkdiag-diff`,
//! renders, and picks the exit code for CI.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
use sparkdiag_analysis::Prices;
use sparkdiag_rules::Config;

#[derive(clap::Args)]
pub struct DiffArgs {
    /// The run before the fix: any input `analyze` accepts.
    #[arg(value_name = "BEFORE")]
    before: String,
    /// The run after the fix.
    #[arg(value_name = "AFTER")]
    after: String,
    /// Output format: a summary for people, JSON (schema sparkdiag/diff/v1), Markdown for a pull
    /// request comment, or one self-contained HTML page with charts.
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
    /// Write the diff to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// When BEFORE or AFTER holds several applications (a night's history folder), compare the
    /// latest one with this application name.
    #[arg(long, value_name = "NAME")]
    app_name: Option<String>,
    /// Exit with code 1 when runtime or core-hours (cost) went up by more than PCT percent.
    #[arg(long, value_name = "PCT")]
    fail_on_regression: Option<f64>,
    /// Exit with code 1 when rows written to a destination differ (or an output appeared or
    /// vanished).
    #[arg(long)]
    fail_on_output_change: bool,
    /// Colour the text view's verdict and causes: auto (on a terminal, unless NO_COLOR is
    /// set), always, or never.
    #[arg(long, value_enum, value_name = "WHEN")]
    color: Option<crate::habits::ColorChoice>,
    /// How far this job's runtime moves between identical runs, as a share of BEFORE's runtime
    /// (25%) or a duration (10s, 2min): a change within it is "nothing material". Default: the
    /// larger of 15% and 3 s. A short job whose start-up is half its runtime moves more; the
    /// nightly index's band for the job (`sparkdiag batch`) is its measured noise.
    #[arg(long, value_name = "PCT|DURATION", value_parser = sparkdiag_diff::Noise::parse)]
    noise: Option<sparkdiag_diff::Noise>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum DiffFormat {
    Text,
    Json,
    Markdown,
    Html,
}

pub fn run(args: DiffArgs, config: Config, prices: Prices) -> anyhow::Result<ExitCode> {
    if let Some(pct) = args.fail_on_regression
        && !(pct.is_finite() && pct >= 0.0)
    {
        bail!("--fail-on-regression wants a percentage of 0 or more, got {pct}");
    }
    let color = args.color.unwrap_or_default();
    color.before_threads();
    let before = read_side("BEFORE", &args.before, &args, &config, prices)?;
    let after = read_side("AFTER", &args.after, &args, &config, prices)?;
    let diff = sparkdiag_diff::compare(
        sparkdiag_diff::Run {
            app: &before.app,
            report: &before.report,
            facts: &before.facts,
        },
        sparkdiag_diff::Run {
            app: &after.app,
            report: &after.report,
            facts: &after.facts,
        },
        &sparkdiag_diff::Options {
            price_per_core_hour: prices.per_core_hour,
            noise: args.noise,
        },
    );
    let rendered = match args.format {
        DiffFormat::Text => sparkdiag_report::diff::text::render_with(
            &diff,
            color.text_options(args.output.is_some()),
        ),
        DiffFormat::Json => serde_json::to_string_pretty(&diff)? + "\n",
        DiffFormat::Markdown => sparkdiag_report::diff::markdown::render(&diff),
        DiffFormat::Html => sparkdiag_report::diff::html::render(&diff),
    };
    match &args.output {
        Some(file) => std::fs::write(file, rendered)
            .with_context(|| format!("cannot write {}", file.display()))?,
        None => std::io::stdout().lock().write_all(rendered.as_bytes())?,
    }
    let mut failing = false;
    if let Some(pct) = args.fail_on_regression {
        for (label, up) in diff.regressions(pct) {
            eprintln!("sparkdiag: {label} went up {up:.0}% (more than --fail-on-regression {pct})");
            failing = true;
        }
    }
    if args.fail_on_output_change && diff.outputs_changed() {
        eprintln!("sparkdiag: the outputs differ (--fail-on-output-change)");
        failing = true;
    }
    Ok(if failing {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// The run `path` names for `side` (BEFORE or AFTER), with errors that say which.
fn read_side(
    side: &str,
    path: &str,
    args: &DiffArgs,
    config: &Config,
    prices: Prices,
) -> anyhow::Result<sparkdiag_analysis::Analysis> {
    use sparkdiag_analysis::PickError;
    let options = sparkdiag_analysis::Options {
        config,
        prices,
        inputs: vec![path.to_string()],
    };
    let skipped = |input: &sparkdiag_eventlog::LogInput, err: &sparkdiag_eventlog::ReadError| {
        eprintln!("sparkdiag: {side}: skipping {}: {err}", input.display);
    };
    match sparkdiag_analysis::analyze_one(path, &options, args.app_name.as_deref(), skipped) {
        Ok(analysis) => Ok(analysis),
        Err(PickError::Read(e)) => Err(anyhow::Error::new(e).context(format!("{side} {path}"))),
        Err(PickError::Several(n)) => bail!(
            "{side} {path} holds {n} applications; name one log, or pick by name with --app-name"
        ),
        Err(e @ PickError::NoneNamed(_)) => bail!("{side} {path}: {e}"),
    }
}
