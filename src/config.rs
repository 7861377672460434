//! The flags every analysing command shares: the rules' configuration (`--config`, `--set`,
//! `--disable`, `--no-config`) and the prices. Where config files are found and what their
//! `[defaults]` hold is `sparkdiag_analysis::settings`'; what is left here is filling the flags
//! a user did not give from those defaults.

use std::path::PathBuf;

use sparkdiag_analysis::settings::ConfigFiles;
use sparkdiag_analysis::{Config, Prices};

/// The flags that `analyze`, `batch`, `diff`, `serve` and `mcp` share: the rules'
/// configuration, and the prices that put money beside time (a config file's `[defaults]` may
/// give either price).
#[derive(clap::Args)]
pub struct SettingsFlags {
    /// Threshold overrides and disabled rules (TOML). Default: sparkdiag.toml or .sparkdiag.toml
    /// here or in the nearest folder above, else $XDG_CONFIG_HOME/sparkdiag/config.toml.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Read no config file (neither sparkdiag.toml nor the user's): only the defaults and the
    /// flags; the report says so.
    #[arg(long, conflicts_with = "config")]
    no_config: bool,
    /// Override one threshold, e.g. --set SK001.ratio=4 (repeatable; `sparkdiag rules CODE` lists the keys).
    #[arg(long = "set", value_name = "CODE.KEY=VALUE")]
    set: Vec<String>,
    /// Switch a rule off (repeatable), by code or name.
    #[arg(long, value_name = "CODE")]
    disable: Vec<String>,
    /// Also give each finding's recoverable time in money, at this price per core-hour (one
    /// executor core for one hour). Shown in the cost column and as `impact_cost` in JSON;
    /// `diff` also prices each run's core-hours (runtime × peak cores) as its `cost` line.
    #[arg(long, value_name = "PRICE", value_parser = sparkdiag_analysis::Prices::parse, allow_negative_numbers = true)]
    price_per_core_hour: Option<f64>,
    /// Also give memory right-sizing's savings in money, at this price per GB-hour. A GB-hour
    /// here is one GiB (2^30 bytes, as cloud price lists count memory) of executor container
    /// memory (heap plus overhead) held for one hour of an executor's lifetime; the GB-hours
    /// saved are the container memory a smaller spark.executor.memory gives back times the
    /// executors' lifetimes (GC002). Shown in the cost column and as `impact_memory_cost` in
    /// JSON; never added to the time saved.
    #[arg(long, value_name = "PRICE", value_parser = sparkdiag_analysis::Prices::parse, allow_negative_numbers = true)]
    price_per_gb_hour: Option<f64>,
}

impl SettingsFlags {
    /// The config files this command reads: none with `--no-config`.
    pub fn files(&self) -> ConfigFiles {
        ConfigFiles::unless_ignored(self.no_config)
    }

    /// The rules' configuration: `--config`, else the first config file found, then the
    /// command line's overrides; it names every file read, for the report.
    pub fn config(&self, files: &ConfigFiles) -> anyhow::Result<Config> {
        Ok(files.rules(self.config.as_deref(), &self.set, &self.disable)?)
    }

    /// The flags' prices, each one not given taken from the config files' `[defaults]`.
    pub fn prices(&self, files: &ConfigFiles) -> anyhow::Result<Prices> {
        let given = Prices {
            per_core_hour: self.price_per_core_hour,
            per_gb_hour: self.price_per_gb_hour,
        };
        Ok(files.prices_or_defaults(given)?)
    }

    /// The rules' configuration, then the prices, from the config files found.
    pub fn read(&self) -> anyhow::Result<(Config, Prices)> {
        let files = self.files();
        Ok((self.config(&files)?, self.prices(&files)?))
    }
}

/// Fills the flags of `analyze` that were not given from the config files' `[defaults]`.
pub fn apply_to_analyze(
    args: &mut crate::analyze::AnalyzeArgs,
    files: &ConfigFiles,
) -> anyhow::Result<()> {
    use sparkdiag_report::{ColorChoice, Format, Severity};
    let defaults = files.defaults()?;
    if args.format.is_none() {
        let names = crate::flags::format_names().join(", ");
        args.format = files.checked("format", defaults.format.as_deref(), Format::parse, &names)?;
    }
    if args.fail_on.is_none() {
        let expected = "critical, high, medium, low or info";
        args.fail_on = files.checked(
            "fail_on",
            defaults.fail_on.as_deref(),
            Severity::parse,
            expected,
        )?;
    }
    let habits = &mut args.habits;
    habits.top = habits.top.or(defaults.top);
    habits.ui_url = habits.ui_url.take().or(defaults.ui_url);
    if habits.color.is_none() {
        let expected = "auto, always or never";
        habits.color = files.checked(
            "color",
            defaults.color.as_deref(),
            ColorChoice::parse,
            expected,
        )?;
    }
    Ok(())
}
