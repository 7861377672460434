//! `sparkdiag`: the command line. It only wires arguments to the library crates.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Context;
use clap::{Parser, Subcommand, ValueEnum};
use sparkdiag_model::ApplicationBuilder;
use sparkdiag_report::Report;

#[derive(Parser)]
#[command(
    name = "sparkdiag",
    version,
    about = "Diagnose slow and failed Apache Spark jobs from their event logs.",
    long_about = "Diagnose slow and failed Apache Spark jobs from their event logs.\n\n\
        sparkdiag reads the event logs Spark already writes — plain, zstd, lz4, snappy, lzf or gzip; \
        single files, Spark 4's rolling eventlog_v2_* directories, Databricks cluster-log folders, \
        and .zip/.tar.gz archives of them — and reports the application, its jobs, stages and \
        executors with the same numbers as the Spark History Server.",
    after_help = "Exit codes: 0 analysed, 2 usage error or unreadable input."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyse one or more event logs.
    #[command(after_help = "Examples:\n  \
        sparkdiag analyze /tmp/spark-events/app-20261130-0001.zstd\n  \
        sparkdiag analyze eventlog_v2_local-1764500000000/ --format json\n  \
        sparkdiag analyze cluster-logs.zip -o report.json --format json\n  \
        zstd -dc app.zstd | sparkdiag analyze -\n\n\
        A PATH may be a log file (any codec, .inprogress too), a rolling eventlog_v2_* directory, \
        a Databricks cluster-log folder (eventlog + eventlog-YYYY-MM-DD--HH-MM.gz), a directory \
        holding several logs, a .zip or .tar.gz of any of these, or - for standard input. \
        Each application found is analysed on its own; with several, JSON output is an array.\n\n\
        Damaged logs are analysed as far as they go: the report's `source` section (and the \
        text view's last lines) say what was cut, skipped or missing.")]
    Analyze(AnalyzeArgs),
}

#[derive(clap::Args)]
struct AnalyzeArgs {
    /// Event logs, directories or archives to read; - reads standard input.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<String>,
    /// Output format: a summary for people, or the versioned JSON report (schema sparkdiag/report/v1).
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Write the report to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(code) => code,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            eprintln!("sparkdiag: {err:#}");
            ExitCode::from(2)
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Analyze(args) => analyze(args),
    }
}

fn analyze(args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let mut reports = Vec::new();
    for path in &args.paths {
        for input in sparkdiag_eventlog::discover(path)? {
            let mut builder = ApplicationBuilder::default();
            let source = sparkdiag_eventlog::read_log(&input, |event| builder.on_event(event))?;
            let app = builder.finish();
            reports.push(Report::new(std::slice::from_ref(path), &source, &app));
        }
    }
    let rendered = match args.format {
        Format::Json if reports.len() == 1 => serde_json::to_string_pretty(&reports[0])? + "\n",
        Format::Json => serde_json::to_string_pretty(&reports)? + "\n",
        Format::Text => reports
            .iter()
            .map(sparkdiag_report::text::render)
            .collect::<Vec<_>>()
            .join("\n────────\n\n"),
    };
    match &args.output {
        Some(file) => std::fs::write(file, rendered)
            .with_context(|| format!("cannot write {}", file.display()))?,
        None => std::io::stdout().lock().write_all(rendered.as_bytes())?,
    }
    Ok(ExitCode::SUCCESS)
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
