//! `sparkdiag diff BEFORE AFTER`: reads each run once, compares them with `sparkdiag-diff`,
//! renders, and picks the exit code for CI.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, bail};
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
    /// Price core-hours (runtime × peak cores) as money.
    #[arg(long, value_name = "PRICE")]
    price_per_core_hour: Option<f64>,
    /// Exit with code 1 when runtime or core-hours (cost) went up by more than PCT percent.
    #[arg(long, value_name = "PCT")]
    fail_on_regression: Option<f64>,
    /// Exit with code 1 when rows written to a destination differ (or an output appeared or
    /// vanished).
    #[arg(long)]
    fail_on_output_change: bool,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum DiffFormat {
    Text,
    Json,
    Markdown,
    Html,
}

pub fn run(args: DiffArgs, config: Config) -> anyhow::Result<ExitCode> {
    if let Some(pct) = args.fail_on_regression
        && !(pct.is_finite() && pct >= 0.0)
    {
        bail!("--fail-on-regression wants a percentage of 0 or more, got {pct}");
    }
    let before = read_side("BEFORE", &args.before, &args, &config)?;
    let after = read_side("AFTER", &args.after, &args, &config)?;
    let diff = sparkdiag_diff::compare(
        sparkdiag_diff::Run {
            app: &before.app,
            report: &before.report,
            plans: &before.plans,
        },
        sparkdiag_diff::Run {
            app: &after.app,
            report: &after.report,
            plans: &after.plans,
        },
        &sparkdiag_diff::Options {
            price_per_core_hour: args.price_per_core_hour,
        },
    );
    let rendered = match args.format {
        DiffFormat::Text => sparkdiag_diff::text::render(&diff),
        DiffFormat::Json => serde_json::to_string_pretty(&diff)? + "\n",
        DiffFormat::Markdown => sparkdiag_diff::markdown::render(&diff),
        DiffFormat::Html => sparkdiag_diff::html::render(&diff),
    };
    match &args.output {
        Some(file) => std::fs::write(file, rendered)
            .with_context(|| format!("cannot write {}", file.display()))?,
        None => std::io::stdout().lock().write_all(rendered.as_bytes())?,
    }
    let mut failing = false;
    if let Some(pct) = args.fail_on_regression {
        for m in diff
            .metrics
            .iter()
            .filter(|m| matches!(m.metric, "runtime_ms" | "core_hours"))
        {
            if let Some(r) = m.ratio
                && (r - 1.0) * 100.0 > pct
            {
                eprintln!(
                    "sparkdiag: {} went up {:.0}% (more than --fail-on-regression {pct})",
                    m.label,
                    (r - 1.0) * 100.0
                );
                failing = true;
            }
        }
    }
    if args.fail_on_output_change && diff.correctness.status == "changed" {
        eprintln!("sparkdiag: the outputs differ (--fail-on-output-change)");
        failing = true;
    }
    Ok(if failing {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn read_side(
    side: &str,
    path: &str,
    args: &DiffArgs,
    config: &Config,
) -> anyhow::Result<sparkdiag_analysis::Analysis> {
    let inputs = sparkdiag_eventlog::discover(path).with_context(|| format!("{side} {path}"))?;
    let options = sparkdiag_analysis::Options {
        config,
        price_per_core_hour: args.price_per_core_hour,
        inputs: vec![path.to_string()],
    };
    if inputs.len() == 1 {
        return sparkdiag_analysis::analyze(&inputs[0], &options)
            .with_context(|| format!("{side} {path}"));
    }
    let Some(name) = &args.app_name else {
        bail!(
            "{side} {path} holds {} applications; name one log, or pick by name with --app-name",
            inputs.len()
        );
    };
    // A night's history: every application is read to learn its name; the latest of that name
    // is the run to compare.
    let mut best: Option<sparkdiag_analysis::Analysis> = None;
    for input in &inputs {
        let analysis = match sparkdiag_analysis::analyze(input, &options) {
            Ok(a) => a,
            Err(err) => {
                eprintln!("sparkdiag: {side}: skipping {}: {err}", input.display);
                continue;
            }
        };
        if analysis.app.name.as_deref() != Some(name.as_str()) {
            continue;
        }
        if best
            .as_ref()
            .is_none_or(|b| analysis.app.start_ms > b.app.start_ms)
        {
            best = Some(analysis);
        }
    }
    best.with_context(|| format!("{side} {path}: no application named `{name}`"))
}
