//! `sparkdiag`: the command line. It only wires arguments to the library crates.

mod analyze;
#[cfg(feature = "tables")]
mod batch;
mod diff;
mod features;
mod flags;
mod habits;
mod process;
mod shell;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{CommandFactory, Parser, Subcommand};
use sparkdiag_report::Severity;
use sparkdiag_report::{Format, View};

#[derive(Parser)]
#[command(
    name = "sparkdiag",
    version,
    long_version = features::LONG_VERSION,
    about = "Diagnose slow and failed Apache Spark jobs from their event logs.",
    long_about = "Diagnose slow and failed Apache Spark jobs from their event logs.\n\n\
        sparkdiag reads the event logs Spark already writes — plain, zstd, lz4, snappy, lzf or gzip; \
        single files, Spark 4's rolling eventlog_v2_* directories, Databricks cluster-log folders, \
        and .zip/.tar.gz archives of them — with the same numbers as the Spark History Server, and \
        says what slowed or killed each application, ranked by the wall-clock time fixing it would \
        save, with the fix: skew, stragglers, tiny or oversized partitions, spill, GC, driver-bound \
        loops, idle cores, failed jobs and lost executors, and expensive plan shapes. Reports come \
        as text, JSON, Markdown or one self-contained HTML page; `batch` does a whole night's logs.",
    after_help = EXIT_CODES
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// The exit codes, as `--help`, the man page and `docs/cli.md` give them (`Exit::means`, which
/// the JSON's `gates.means` writes, says the same; a test holds the two together).
const EXIT_CODES: &str = "Exit codes:\n  \
    0  analysed; every gate passed\n  \
    1  a gate failed (or a finding at least as severe as --fail-on)\n  \
    2  unusable input or a usage error: nothing was analysed\n  \
    3  a gate could not be judged on this input, and none failed";

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
    Analyze(analyze::AnalyzeArgs),
    /// Analyse physical-plan text on its own: df.explain("formatted"), EXPLAIN FORMATTED, or explain() output.
    #[command(after_help = "Examples:\n  \
        sparkdiag plan query-plan.txt\n  \
        pbpaste | sparkdiag plan -\n  \
        sparkdiag plan explain.txt --format json\n\n\
        The text may hold several plans (one per '== Physical Plan ==' section); each is parsed \
        into its operator tree, its shuffle Exchanges are counted (in the final plan when AQE \
        printed one), and the plan rules (EX*, PL*) look for expensive patterns. From text alone \
        the findings are ranked by structure; inside `sparkdiag analyze` they are ranked by the \
        time the log measured.")]
    Plan(PlanArgs),
    /// Analyse every application under some directories in parallel: the nightly fleet report.
    #[command(after_help = "Examples:\n  \
        sparkdiag batch /dbfs/cluster-logs /mnt/spark-events -o /reports/fleet\n  \
        sparkdiag batch spark-events/ -o fleet/ --date 2026-11-29 --jobs 8 --fail-on-regression\n\n\
        OUTDIR gets index.html (applications ranked by recoverable time, regressions since earlier \
        nights, the worst findings, unreadable logs, runtime and findings over the nights), \
        apps/DATE/*.html and *.json (one report per application), tables/{applications,stages,\
        executors,findings}/date=DATE/part-0.parquet (Parquet, readable by Spark, Databricks and \
        DuckDB) and nights/DATE.json (what later nights compare with). Re-running a date replaces \
        it. A log that cannot be read is listed with its error and never stops the batch.")]
    Batch(BatchArgs),
    /// Compare two runs of a job, before and after a fix: what changed, matched work, whether the outputs agree.
    #[command(after_help = "Examples:\n  \
        sparkdiag diff before/app-1.zstd after/app-2.zstd\n  \
        sparkdiag diff killed-run.zstd.inprogress fixed-run.zstd --price-per-core-hour 0.5\n  \
        sparkdiag diff old.zstd new.zstd --format markdown --fail-on-regression 10 --fail-on-output-change\n  \
        sparkdiag diff /mnt/history/2026-11-29 /mnt/history/2026-11-30 --app-name nightly-sales\n\n\
        Stage and job ids mean nothing across runs: SQL executions and jobs are matched by plan shape, \
        output destination, description and call site, and work with no counterpart is named \
        (\"24 SQL executions → 1\"). Rows, files and bytes written per destination are compared, and a \
        different row count is flagged at the top. A BEFORE that did not finish is projected from \
        the iterations it completed. Exit codes: 0 compared, 1 --fail-on-* tripped, 2 usage error \
        or unreadable input.")]
    Diff(diff::DiffArgs),
    /// A private upload page on this machine: drop a log in a browser, get its report.
    #[command(after_help = "Examples:\n  \
        sparkdiag serve\n  \
        sparkdiag serve --data-dir /var/tmp/sparkdiag --keep 7d --max-upload 4GiB\n  \
        sparkdiag serve --bind 0.0.0.0:8080 --allow-remote\n\n\
        Open the printed address, drop a log (any input `analyze` reads: a single log of any codec, \
        or a .zip/.tar.gz of a Databricks cluster-log folder or a rolling folder), and the page shows \
        the analysis's progress, then the same HTML report as `analyze --format html` with its JSON \
        and Markdown. Nothing leaves the machine: uploads and reports are kept in --data-dir and \
        deleted after --keep; the server fetches nothing from the network. It listens on loopback \
        only unless --allow-remote is given.")]
    Serve(ServeCommand),
    /// List the detectors, or explain one: what it finds, why it hurts, how to fix it, and its thresholds.
    #[command(
        after_help = "Examples:\n  sparkdiag rules\n  sparkdiag rules SK001\n  sparkdiag rules data-skew\n  sparkdiag rules --format json"
    )]
    Rules {
        /// A rule's code (SK001) or name (data-skew).
        code: Option<String>,
        /// text, or json: every rule (or the one named) with its doc and thresholds.
        #[arg(long, value_parser = flags::format(), default_value = "text")]
        format: Format,
    },
    /// Print the shell completion script: bash, zsh, fish, powershell or elvish.
    #[command(after_help = "Examples:\n  \
        sparkdiag completions bash > ~/.local/share/bash-completion/completions/sparkdiag\n  \
        sparkdiag completions zsh > ~/.zfunc/_sparkdiag\n  \
        sparkdiag completions fish > ~/.config/fish/completions/sparkdiag.fish")]
    Completions {
        #[arg(value_parser = shell::shells())]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff): sparkdiag man > ~/.local/share/man/man1/sparkdiag.1
    Man,
    /// A Model Context Protocol server on stdin/stdout for AI assistants: the analysis of local logs, read-only, inside --root.
    #[command(after_help = "Examples:\n  \
        sparkdiag mcp --root /var/log/spark-events\n  \
        sparkdiag mcp --root ~/spark-logs --root /mnt/history --set SK001.ratio=4\n\n\
        An assistant (Claude Desktop, VS Code, ...) starts it and asks over JSON-RPC: list the \
        applications in a folder, analyse one, a finding, a stage or a job in detail, the failure \
        post-mortem, compare two runs, analyse plan text, what-if for a core count, the rules. Only \
        files under --root (and the client's MCP roots) are read; answers are capped at 64 KiB. \
        docs/mcp.md shows the configuration.")]
    Mcp(McpCommand),
}

#[derive(clap::Args)]
struct McpCommand {
    /// A folder whose logs the assistant may read (repeatable). Nothing outside these folders
    /// (and the client's MCP roots) is read.
    #[arg(long = "root", value_name = "DIR")]
    roots: Vec<PathBuf>,
    /// A remote prefix whose logs the assistant may read (repeatable), e.g.
    /// s3://bucket/cluster-logs/. Without one, nothing remote is read.
    #[cfg(feature = "remote")]
    #[arg(long = "allow-prefix", value_name = "URL")]
    allow_prefixes: Vec<String>,
    #[cfg(feature = "remote")]
    #[command(flatten)]
    storage: sparkdiag_remote::StorageOptions,
    #[command(flatten)]
    settings: sparkdiag_analysis::settings::Settings,
    /// Pseudonymise what the answers say of each application (ids, names, hosts, users, paths,
    /// SQL literals), as `analyze --redact` does; the logs' paths stay, to ask by.
    #[arg(long)]
    redact: bool,
}

#[cfg(feature = "tables")]
use batch::BatchArgs;
#[cfg(not(feature = "tables"))]
type BatchArgs = features::Missing;
#[cfg(not(feature = "serve"))]
type ServeCommand = features::Missing;

/// `serve`'s own flags, then the settings every analysing command shares.
#[cfg(feature = "serve")]
#[derive(clap::Args)]
struct ServeCommand {
    #[command(flatten)]
    config: sparkdiag_serve::Config,
    #[command(flatten)]
    settings: sparkdiag_analysis::settings::Settings,
}

#[derive(clap::Args)]
struct PlanArgs {
    /// A file of plan text, or - for standard input.
    #[arg(value_name = "FILE")]
    file: String,
    /// Output format: the tree and findings for people, or JSON (schema sparkdiag/plan/v1).
    #[arg(long, value_parser = flags::format(), default_value = "text")]
    format: Format,
    /// Exit with code 1 when a finding is at least this severe.
    #[arg(long, value_name = "SEVERITY", value_parser = crate::flags::severity())]
    fail_on: Option<Severity>,
    /// Override one threshold, e.g. --set EX001.max_exchanges=5 (repeatable).
    #[arg(long = "set", value_name = "CODE.KEY=VALUE")]
    set: Vec<String>,
}

fn main() -> ExitCode {
    process::set_up();
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
        Command::Analyze(args) => analyze::run(args),
        Command::Rules { code, format } => rules(code.as_deref(), format),
        Command::Completions { shell } => shell::completions(shell, Cli::command()),
        Command::Man => shell::man(Cli::command()),
        Command::Plan(args) => plan(args),
        #[cfg(feature = "tables")]
        Command::Batch(args) => batch::run(args),
        #[cfg(not(feature = "tables"))]
        Command::Batch(_) => features::missing("batch", "tables"),
        Command::Diff(args) => diff::run(args),
        #[cfg(feature = "serve")]
        Command::Serve(args) => serve(args),
        Command::Mcp(args) => mcp(args),
        #[cfg(not(feature = "serve"))]
        Command::Serve(_) => features::missing("serve", "serve"),
    }
}

#[cfg(feature = "serve")]
fn serve(args: ServeCommand) -> anyhow::Result<ExitCode> {
    let (rules, prices) = args.settings.read()?;
    let config = sparkdiag_serve::Config {
        rules,
        prices,
        ..args.config
    };
    sparkdiag_serve::serve_until_stopped(config)?;
    Ok(ExitCode::SUCCESS)
}

fn mcp(args: McpCommand) -> anyhow::Result<ExitCode> {
    #[cfg(feature = "remote")]
    if !args.allow_prefixes.is_empty() {
        sparkdiag_remote::install(args.storage)?;
    }
    let (rules, prices) = args.settings.read()?;
    let options = sparkdiag_mcp::Options {
        roots: args.roots,
        #[cfg(feature = "remote")]
        remote_prefixes: args.allow_prefixes,
        #[cfg(not(feature = "remote"))]
        remote_prefixes: Vec::new(),
        rules,
        prices,
        redact: args.redact,
    };
    sparkdiag_mcp::serve_stdio(options).map_err(anyhow::Error::msg)?;
    Ok(ExitCode::SUCCESS)
}

fn plan(args: PlanArgs) -> anyhow::Result<ExitCode> {
    let (plans, findings) = sparkdiag_analysis::analyze_plan_file(&args.file, &args.set)?;
    let failing = args
        .fail_on
        .is_some_and(|threshold| findings.iter().any(|f| f.severity <= threshold));
    let document = sparkdiag_report::plan::PlanText {
        plans: &plans,
        findings: &findings,
    };
    // Findings wrapped at the terminal's width; pipes and files get them a line each.
    let options = sparkdiag_report::Options {
        terminal: sparkdiag_report::Terminal::for_stdout(),
        ..sparkdiag_report::Options::default()
    };
    document.write(args.format, &options, &mut std::io::stdout().lock())?;
    Ok(ExitCode::from(u8::from(failing)))
}

fn rules(code: Option<&str>, format: Format) -> anyhow::Result<ExitCode> {
    let rules = sparkdiag_analysis::catalogue::select(code).map_err(anyhow::Error::msg)?;
    let document = sparkdiag_report::catalogue::Catalogue {
        rules: &rules,
        explain: code.is_some(),
    };
    let options = sparkdiag_report::Options::default();
    document.write(format, &options, &mut std::io::stdout().lock())?;
    Ok(ExitCode::SUCCESS)
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
