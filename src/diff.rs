//! `sparkdiag diff BEFORE AFTER`: reads each run once, compares them with `sparkdiag-diff`,
//! renders, and picks the exit code for CI.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::bail;
use sparkdiag_report::Severity;

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
    #[arg(long, value_parser = crate::flags::format(), default_value = "text")]
    format: sparkdiag_report::Format,
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
    /// Exit with code 1 when AFTER has a finding BEFORE did not, at least this severe.
    #[arg(long, value_name = "SEVERITY", value_parser = crate::flags::severity())]
    fail_on_new: Option<Severity>,
    /// Colour the text view's verdict and causes: auto (on a terminal, unless NO_COLOR is
    /// set), always, or never.
    #[arg(long, value_name = "WHEN", value_parser = crate::flags::color())]
    color: Option<sparkdiag_report::ColorChoice>,
    /// How far this job's runtime moves between identical runs, as a share of BEFORE's runtime
    /// (25%) or a duration (10s, 2min): a change within it is "nothing material". Default: the
    /// larger of 15% and 3 s. A short job whose start-up is half its runtime moves more; the
    /// nightly index's band for the job (`sparkdiag batch`) is its measured noise.
    #[arg(long, value_name = "PCT|DURATION", value_parser = sparkdiag_analysis::Noise::parse)]
    noise: Option<sparkdiag_analysis::Noise>,
    /// Pseudonymise both runs as `analyze --redact` does: a value has one pseudonym in both.
    #[arg(long)]
    redact: bool,
    #[cfg(feature = "remote")]
    #[command(flatten)]
    storage: sparkdiag_remote::StorageOptions,
    #[command(flatten)]
    settings: sparkdiag_analysis::settings::Settings,
}

pub fn run(args: DiffArgs) -> anyhow::Result<ExitCode> {
    #[cfg(feature = "remote")]
    sparkdiag_remote::install(args.storage)?;
    let (config, prices) = args.settings.read()?;
    if let Some(pct) = args.fail_on_regression
        && !(pct.is_finite() && pct >= 0.0)
    {
        bail!("--fail-on-regression wants a percentage of 0 or more, got {pct}");
    }
    let color = args.color.unwrap_or_default();
    crate::habits::before_threads(color);
    let redactor = std::sync::Mutex::default();
    let options = sparkdiag_analysis::Options {
        prices,
        redact: args.redact.then_some(&redactor),
        ..sparkdiag_analysis::Options::new(&config)
    };
    let request = sparkdiag_analysis::DiffRequest {
        before: &args.before,
        after: &args.after,
        app_name: args.app_name.as_deref(),
        noise: args.noise,
        fail_on_regression: args.fail_on_regression,
        fail_on_new: args.fail_on_new,
        fail_on_output_change: args.fail_on_output_change,
    };
    let diff = sparkdiag_analysis::diff_runs(&request, &options, |side, input, err| {
        eprintln!("sparkdiag: {side}: skipping {}: {err}", input.display);
    })?;
    let options = sparkdiag_report::Options {
        terminal: sparkdiag_report::Terminal::chosen(args.output.is_some(), color),
        ..Default::default()
    };
    let output = args.output.as_deref();
    let gates_shown = sparkdiag_report::diff::deliver(&diff, args.format, &options, output)?;
    // Gates the view did not show go to standard error.
    let gates = diff.gates.as_ref();
    if !gates_shown {
        for check in gates.iter().flat_map(|g| &g.checks) {
            eprintln!("sparkdiag: gate {}", check.line);
        }
    }
    Ok(ExitCode::from(gates.map_or(0, |g| g.exit_code)))
}
