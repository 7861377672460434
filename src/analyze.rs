//! `sparkdiag analyze PATH...`: each application found, analysed, its gates judged, drawn in the
//! format asked for; the exit code the gates give.

use std::path::PathBuf;
use std::process::ExitCode;

use sparkdiag_analysis::gates::Budgets;
use sparkdiag_analysis::settings::ConfigFiles;
use sparkdiag_report::analyze::{App, Applications, Delivery};
use sparkdiag_report::{ColorChoice, Severity};
use sparkdiag_report::{Format, Narrowing};

#[derive(clap::Args)]
pub struct AnalyzeArgs {
    /// Event logs, directories or archives to read; - reads standard input. With the `remote`
    /// feature also s3://, gs://, abfss:// and az:// URLs, and with --history-server the ids of
    /// its applications.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<String>,
    /// Read the applications from this Spark History Server's REST API
    /// (http://host:18080): each PATH is then an application id (APP_ID or APP_ID/ATTEMPT).
    #[cfg(feature = "remote")]
    #[arg(long, value_name = "URL")]
    history_server: Option<String>,
    #[cfg(feature = "remote")]
    #[command(flatten)]
    storage: sparkdiag_remote::StorageOptions,
    /// Output format: a summary for people, the versioned JSON report (schema sparkdiag/report/v1),
    /// Markdown for an issue or pull request, one self-contained HTML page with charts, or SARIF
    /// 2.1.0 for code-scanning tools. [default: text]
    #[arg(long, value_parser = crate::flags::format())]
    format: Option<Format>,
    /// Also write the report's charts into DIR (created if missing), each as NAME.svg and NAME.png.
    #[arg(long, value_name = "DIR")]
    charts: Option<PathBuf>,
    /// Write the report to FILE instead of standard output.
    #[arg(short, long, value_name = "FILE")]
    output: Option<PathBuf>,
    /// Exit with code 1 when a finding is at least this severe (for schedulers and CI).
    #[arg(long, value_name = "SEVERITY", value_parser = crate::flags::severity())]
    fail_on: Option<Severity>,
    /// Replace application ids and names, hosts and IP addresses, users and e-mail addresses,
    /// paths (buckets included), notebook paths and SQL literals with pseudonyms that say what
    /// they replace (host-1 stays host-1 throughout the report), in every format.
    #[arg(long)]
    redact: bool,
    // Each budget asked for is checked and printed as one line (name, measured value, limit,
    // verdict); exit 1 when one fails, 3 when one cannot be judged on this log.
    #[command(flatten)]
    gates: Budgets,
    #[command(flatten)]
    narrow: NarrowFlags,
    #[command(flatten)]
    settings: sparkdiag_analysis::settings::Settings,
    #[command(flatten)]
    habits: crate::habits::Habits,
}

/// Show only some findings; the summary, the ledger and the gates stay the whole run's.
#[derive(clap::Args)]
#[command(next_help_heading = "Narrowing the findings shown")]
struct NarrowFlags {
    /// Only this rule's findings (SK001 or data-skew) or this category's (skew); repeatable.
    #[arg(long, value_name = "CODE|CATEGORY")]
    only: Vec<String>,
    /// Only findings at least this severe.
    #[arg(long, value_name = "SEVERITY", value_parser = crate::flags::severity())]
    min_severity: Option<Severity>,
    /// Only findings about this stage; repeatable.
    #[arg(long, value_name = "N")]
    stage: Vec<i64>,
}

impl AnalyzeArgs {
    /// Each flag not given taken from the config files' `[defaults]`.
    fn fill_from_defaults(&mut self, files: &ConfigFiles) -> anyhow::Result<()> {
        let defaults = files.defaults()?;
        let formats = crate::flags::format_names().join(", ");
        let format = defaults.format.as_deref();
        self.format =
            files.given_or_default(self.format, "format", format, Format::parse, &formats)?;
        let severities = "critical, high, medium, low or info";
        let fail_on = defaults.fail_on.as_deref();
        self.fail_on = files.given_or_default(
            self.fail_on,
            "fail_on",
            fail_on,
            Severity::parse,
            severities,
        )?;
        let habits = &mut self.habits;
        let color = defaults.color.as_deref();
        habits.color = files.given_or_default(
            habits.color,
            "color",
            color,
            ColorChoice::parse,
            "auto, always or never",
        )?;
        habits.top = habits.top.or(defaults.top);
        habits.ui_url = habits.ui_url.take().or(defaults.ui_url);
        Ok(())
    }
}

pub fn run(mut args: AnalyzeArgs) -> anyhow::Result<ExitCode> {
    let files = args.settings.files();
    args.fill_from_defaults(&files)?;
    let prices = args.settings.prices(&files)?;
    let color = args.habits.color.unwrap_or_default();
    crate::habits::before_threads(color);
    let format = args.format.unwrap_or(Format::Text);
    let config = args.settings.rules(&files)?;
    let budgets = Budgets {
        fail_on: args.fail_on,
        ..args.gates
    };
    if budgets.max_cost.is_some() && prices.per_core_hour.is_none() {
        anyhow::bail!(
            "--max-cost needs a price: --price-per-core-hour, or price_per_core_hour in a config file's [defaults]"
        );
    }
    let narrowing = Narrowing::asked(
        &args.narrow.only,
        args.narrow.min_severity,
        args.narrow.stage.clone(),
        &sparkdiag_analysis::catalogue::rule_docs(),
    )
    .map_err(anyhow::Error::msg)?;
    #[cfg(feature = "remote")]
    let paths = {
        sparkdiag_remote::install(args.storage)?;
        match &args.history_server {
            Some(server) => sparkdiag_remote::history_server_paths(server, &args.paths),
            None => args.paths.clone(),
        }
    };
    #[cfg(not(feature = "remote"))]
    let paths = args.paths.clone();
    let redactor = std::sync::Mutex::default();
    let request = sparkdiag_analysis::applications::Request {
        paths: &paths,
        options: sparkdiag_analysis::Options {
            prices,
            redact: args.redact.then_some(&redactor),
            // Nothing compares these runs with others: only their reports and charts are read.
            report_only: true,
            ..sparkdiag_analysis::Options::new(&config)
        },
        budgets,
        ui_url: args.habits.ui_url.as_deref(),
        // Only the charts and the HTML plan trees need the per-task view data.
        keep_views: format.needs_view_data() || args.charts.is_some() || args.habits.open,
    };
    let mut watch = Watch {
        quiet: args.habits.quiet,
        spinner: None,
    };
    let analysed = sparkdiag_analysis::applications::analyze_paths(&request, &mut watch)?;
    let apps = App::each(&analysed.reports, &analysed.views);
    let delivery = Delivery {
        format,
        options: sparkdiag_report::Options {
            // Terminal width and colour only when the text goes to a terminal; `-o FILE` and
            // pipes get the plain view.
            terminal: sparkdiag_report::Terminal::chosen(args.output.is_some(), color),
            top: args.habits.top,
            quiet: args.habits.quiet,
            narrowing,
        },
        output: args.output.as_deref(),
        charts: args.charts.as_deref(),
        open: args.habits.open,
    };
    let gates_shown = Applications(&apps).deliver(&delivery)?;
    // Gates the view did not show go to standard error, where a pipeline's log shows them;
    // `--quiet` keeps it quiet: the exit code still says how the gates went.
    if !gates_shown && !args.habits.quiet {
        for line in analysed.gate_lines() {
            eprintln!("sparkdiag: gate {line}");
        }
    }
    Ok(ExitCode::from(analysed.exit().code()))
}

/// Warns of what the search passed over and of logs left out, and spins while a large log is
/// read.
struct Watch {
    quiet: bool,
    spinner: Option<sparkdiag_report::progress::Spinner>,
}

impl sparkdiag_analysis::applications::Watch for Watch {
    fn reading(&mut self, input: &sparkdiag_eventlog::LogInput) {
        if !self.quiet {
            for passed_over in &input.skipped {
                eprintln!("sparkdiag: warning: {passed_over}");
            }
        }
        let bytes = input.parts.iter().filter_map(|p| p.known_len()).sum();
        self.spinner = Some(sparkdiag_report::progress::Spinner::start(
            bytes,
            &input.display,
        ));
    }

    fn events(&mut self, n: u64) {
        if let Some(spinner) = &self.spinner {
            spinner.events(n);
        }
    }

    fn read(&mut self) {
        if let Some(spinner) = self.spinner.take() {
            spinner.finish();
        }
    }

    fn left_out(&mut self, error: &sparkdiag_eventlog::ReadError) {
        eprintln!("sparkdiag: unreadable, left out: {error}");
    }
}
