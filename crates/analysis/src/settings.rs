//! Where a command's settings come from, as ruff, cargo and git users expect: `sparkdiag.toml`
//! or `.sparkdiag.toml` in the current folder or the nearest folder above it (the project's),
//! else `$XDG_CONFIG_HOME/sparkdiag/config.toml` (`~/.config/sparkdiag/config.toml`), the
//! user's. `--no-config` looks for none ([`ConfigFiles::none`]).
//!
//! The file is the rules' (`disable`, `[rules.CODE]`) with, beside them, the flags' defaults:
//!
//! ```toml
//! [defaults]
//! format = "markdown"          # as --format: text, json, markdown, html, sarif
//! fail_on = "high"
//! price_per_core_hour = 0.45      # every command that reports savings
//! price_per_gb_hour = 0.005       # a GiB of executor memory for an hour
//! top = 5
//! ui_url = "http://history.example.com:18080"
//! color = "never"              # auto, always, never
//! ```
//!
//! A flag on the command line wins over the file; the project's file wins over the user's,
//! key by key for `[defaults]`, and wholly for the rules. Every file read is named in the
//! report's `source.config`, with every threshold that differs from its default.

use std::path::{Path, PathBuf};

use sparkdiag_contract::Prices;
use sparkdiag_rules::{Config, ConfigError};

/// The settings every analysing command is given (`analyze`, `batch`, `diff`, `serve`, `mcp`):
/// the rules' configuration and the prices that put money beside time. With the `cli` feature
/// they parse as the command line's flags, whose help is these fields' documentation.
#[derive(Debug, Default, Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Settings {
    /// Threshold overrides and disabled rules (TOML). Default: sparkdiag.toml or .sparkdiag.toml
    /// here or in the nearest folder above, else $XDG_CONFIG_HOME/sparkdiag/config.toml.
    #[cfg_attr(feature = "cli", arg(long, value_name = "FILE"))]
    pub config: Option<PathBuf>,
    /// Read no config file (neither sparkdiag.toml nor the user's): only the defaults and the
    /// flags; the report says so.
    #[cfg_attr(feature = "cli", arg(long, conflicts_with = "config"))]
    pub no_config: bool,
    /// Override one threshold, e.g. --set SK001.ratio=4 (repeatable; `sparkdiag rules CODE` lists the keys).
    #[cfg_attr(feature = "cli", arg(long = "set", value_name = "CODE.KEY=VALUE"))]
    pub set: Vec<String>,
    /// Switch a rule off (repeatable), by code or name.
    #[cfg_attr(feature = "cli", arg(long, value_name = "CODE"))]
    pub disable: Vec<String>,
    /// Also give each finding's recoverable time in money, at this price per core-hour (one
    /// executor core for one hour). Shown in the cost column and as `impact_cost` in JSON;
    /// `diff` also prices each run's core-hours (runtime × peak cores) as its `cost` line.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "PRICE", value_parser = Prices::parse, allow_negative_numbers = true)
    )]
    pub price_per_core_hour: Option<f64>,
    /// Also give memory right-sizing's savings in money, at this price per GB-hour. A GB-hour
    /// here is one GiB (2^30 bytes, as cloud price lists count memory) of executor container
    /// memory (heap plus overhead) held for one hour of an executor's lifetime; the GB-hours
    /// saved are the container memory a smaller spark.executor.memory gives back times the
    /// executors' lifetimes (GC002). Shown in the cost column and as `impact_memory_cost` in
    /// JSON; never added to the time saved.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "PRICE", value_parser = Prices::parse, allow_negative_numbers = true)
    )]
    pub price_per_gb_hour: Option<f64>,
}

impl Settings {
    /// The config files these settings read: none with `--no-config`.
    pub fn files(&self) -> ConfigFiles {
        ConfigFiles::unless_ignored(self.no_config)
    }

    /// The rules' configuration: `--config`, else the first of `files`, then the overrides; it
    /// names every file read, for the report.
    pub fn rules(&self, files: &ConfigFiles) -> Result<Config, ConfigError> {
        files.rules(self.config.as_deref(), &self.set, &self.disable)
    }

    /// The prices given, each one not given taken from the `[defaults]` of `files`.
    pub fn prices(&self, files: &ConfigFiles) -> Result<Prices, ConfigError> {
        files.prices_or_defaults(Prices {
            per_core_hour: self.price_per_core_hour,
            per_gb_hour: self.price_per_gb_hour,
        })
    }

    /// The rules' configuration, then the prices, from the config files found from here.
    pub fn read(&self) -> Result<(Config, Prices), ConfigError> {
        let files = self.files();
        Ok((self.rules(&files)?, self.prices(&files)?))
    }
}

/// The flags a config file may give defaults for, as written (the command line checks them).
#[derive(Debug, Default, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    pub format: Option<String>,
    pub fail_on: Option<String>,
    pub price_per_core_hour: Option<f64>,
    pub price_per_gb_hour: Option<f64>,
    pub top: Option<usize>,
    pub ui_url: Option<String>,
    pub color: Option<String>,
}

impl Defaults {
    /// `self`, with each key it lacks taken from `other`.
    fn or(self, other: Defaults) -> Defaults {
        Defaults {
            format: self.format.or(other.format),
            fail_on: self.fail_on.or(other.fail_on),
            price_per_core_hour: self.price_per_core_hour.or(other.price_per_core_hour),
            price_per_gb_hour: self.price_per_gb_hour.or(other.price_per_gb_hour),
            top: self.top.or(other.top),
            ui_url: self.ui_url.or(other.ui_url),
            color: self.color.or(other.color),
        }
    }
}

/// Only the `[defaults]` table; the rest of the file is the rules', read by `sparkdiag-rules`.
#[derive(serde::Deserialize)]
struct File {
    #[serde(default)]
    defaults: Defaults,
}

/// The config files found, the project's first.
pub struct ConfigFiles {
    pub files: Vec<PathBuf>,
    /// `--no-config`: none was looked for.
    ignored: bool,
    /// Their `[defaults]`, read once however many flags ask.
    defaults: std::cell::OnceCell<Defaults>,
}

impl ConfigFiles {
    /// Looks from `cwd` up, then in the user's config folder.
    pub fn search(cwd: &Path) -> ConfigFiles {
        let mut files = Vec::new();
        'up: for dir in cwd.ancestors() {
            for name in ["sparkdiag.toml", ".sparkdiag.toml"] {
                let file = dir.join(name);
                if file.is_file() {
                    files.push(file);
                    break 'up;
                }
            }
        }
        if let Some(file) = user_file().filter(|f| f.is_file()) {
            files.push(file);
        }
        ConfigFiles::of(files)
    }

    pub fn of(files: Vec<PathBuf>) -> ConfigFiles {
        ConfigFiles {
            files,
            ignored: false,
            defaults: std::cell::OnceCell::new(),
        }
    }

    /// From the current folder.
    pub fn here() -> ConfigFiles {
        match std::env::current_dir() {
            Ok(cwd) => ConfigFiles::search(&cwd),
            Err(_) => ConfigFiles::of(Vec::new()),
        }
    }

    /// The files a command reads: none with `--no-config`, else those found from here.
    pub fn unless_ignored(no_config: bool) -> ConfigFiles {
        if no_config {
            ConfigFiles::none()
        } else {
            ConfigFiles::here()
        }
    }

    /// `--no-config`: no file at all.
    pub fn none() -> ConfigFiles {
        ConfigFiles {
            ignored: true,
            ..ConfigFiles::of(Vec::new())
        }
    }

    /// The files, as an error about a value of `[defaults]` names them.
    pub fn origin(&self) -> String {
        self.files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(" or ")
    }

    /// Every file's `[defaults]`, the project's winning key by key; the files are read the
    /// first time only.
    pub fn defaults(&self) -> Result<Defaults, ConfigError> {
        if let Some(defaults) = self.defaults.get() {
            return Ok(defaults.clone());
        }
        let mut merged = Defaults::default();
        for file in &self.files {
            let text = std::fs::read_to_string(file)
                .map_err(|e| ConfigError(format!("cannot read {}: {e}", file.display())))?;
            let parsed: File = toml::from_str(&text)
                .map_err(|e| ConfigError(format!("{}: {e}", file.display())))?;
            merged = merged.or(parsed.defaults);
        }
        Ok(self.defaults.get_or_init(|| merged).clone())
    }

    /// The rules' configuration: `explicit` (`--config FILE`), else the first file found, then
    /// each `--set` and `--disable`; it names every file read, for the report.
    pub fn rules(
        &self,
        explicit: Option<&Path>,
        set: &[String],
        disable: &[String],
    ) -> Result<Config, ConfigError> {
        let file = explicit.or(self.files.first().map(PathBuf::as_path));
        let mut config = if self.ignored && explicit.is_none() {
            Config::without_files(set, disable)?
        } else {
            Config::load(file, set, disable)?
        };
        config.read_files(self.files.iter().map(|f| f.display().to_string()));
        if self.ignored {
            config.ignore_config_files();
        }
        Ok(config)
    }

    /// A flag's value: `given` when the command line gave one (a flag wins over the files),
    /// else the `[defaults]` `value` under `key` read with `parse`; `None` when neither gives
    /// one, an error naming the files, the key and what was `expected` when `parse` refuses the
    /// files' value.
    pub fn given_or_default<T>(
        &self,
        given: Option<T>,
        key: &str,
        value: Option<&str>,
        parse: impl FnOnce(&str) -> Option<T>,
        expected: &str,
    ) -> Result<Option<T>, ConfigError> {
        let Some(value) = value.filter(|_| given.is_none()) else {
            return Ok(given);
        };
        parse(value).map(Some).ok_or_else(|| {
            ConfigError(format!(
                "{}: [defaults] {key} = \"{value}\": expected {expected}",
                self.origin()
            ))
        })
    }

    /// The `[defaults]` prices, each checked as the flags check theirs.
    pub fn prices(&self) -> Result<Prices, ConfigError> {
        let defaults = self.defaults()?;
        let check = |key: &str, price: Option<f64>| {
            price
                .map(|p| {
                    Prices::check(p).map_err(|e| {
                        ConfigError(format!("{}: [defaults] {key} = {p}: {e}", self.origin()))
                    })
                })
                .transpose()
        };
        Ok(Prices {
            per_core_hour: check("price_per_core_hour", defaults.price_per_core_hour)?,
            per_gb_hour: check("price_per_gb_hour", defaults.price_per_gb_hour)?,
        })
    }

    /// The prices the flags `given`, each one not given taken from `[defaults]`.
    pub fn prices_or_defaults(&self, given: Prices) -> Result<Prices, ConfigError> {
        let defaults = self.prices()?;
        Ok(Prices {
            per_core_hour: given.per_core_hour.or(defaults.per_core_hour),
            per_gb_hour: given.per_gb_hour.or(defaults.per_gb_hour),
        })
    }
}

/// `$XDG_CONFIG_HOME/sparkdiag/config.toml`, else `~/.config/sparkdiag/config.toml`.
fn user_file() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|v| !v.is_empty())
                .map(|home| PathBuf::from(home).join(".config"))
        })?;
    Some(base.join("sparkdiag").join("config.toml"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_default_is_read_with_its_parser_and_a_bad_one_names_the_file_and_key() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sparkdiag.toml");
        std::fs::write(&file, "[defaults]\ntop = 3\ncolor = \"purple\"\n").unwrap();
        let files = ConfigFiles::of(vec![file.clone()]);
        let defaults = files.defaults().unwrap();
        assert_eq!(defaults.top, Some(3));
        let colour = |name: &str| {
            ["auto", "always", "never"]
                .contains(&name)
                .then_some(name.len())
        };
        let err = files
            .given_or_default(
                None,
                "color",
                defaults.color.as_deref(),
                colour,
                "auto, always or never",
            )
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            format!(
                "{}: [defaults] color = \"purple\": expected auto, always or never",
                file.display()
            )
        );
        let given = files.given_or_default(Some(2), "color", Some("purple"), colour, "");
        assert_eq!(
            given.unwrap(),
            Some(2),
            "a flag given wins, its default unread"
        );
        assert_eq!(
            files
                .given_or_default(None, "color", Some("never"), colour, "")
                .unwrap(),
            Some(5)
        );
        let neither = files.given_or_default(None, "format", None, colour, "");
        assert_eq!(neither.unwrap(), None);
        let priced = ConfigFiles::of(vec![dir.path().join("priced.toml")]);
        std::fs::write(&priced.files[0], "[defaults]\nprice_per_gb_hour = 0.5\n").unwrap();
        let given = Prices {
            per_core_hour: Some(2.0),
            per_gb_hour: None,
        };
        assert_eq!(
            priced.prices_or_defaults(given).unwrap(),
            Prices {
                per_core_hour: Some(2.0),
                per_gb_hour: Some(0.5)
            }
        );
    }
}
