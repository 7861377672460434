//! Threshold overrides and disabled rules, from `sparkdiag.toml` and the command line.
//!
//! ```toml
//! # sparkdiag.toml
//! disable = ["CF003"]          # codes or names
//!
//! [rules.data-skew]            # a code or a name
//! ratio = 4
//! min_task_s = 10
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use crate::{Rule, find_rule};

#[derive(Debug, Clone, Default)]
pub struct Config {
    /// (rule code, threshold key) -> value.
    overrides: BTreeMap<(String, String), f64>,
    disabled: BTreeSet<String>,
    /// Where each override and each rule switched off came from: a file's path, `--set`,
    /// `--disable`; what the report's `source.config` names.
    origins: BTreeMap<(String, String), String>,
    /// The config files the command read (the project's first), the rules' and the flags'
    /// defaults' alike.
    files: Vec<String>,
    /// `--no-config`: no config file was looked for.
    files_ignored: bool,
}

#[derive(Debug)]
pub struct ConfigError(pub String);

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ConfigError {}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    disable: Vec<String>,
    #[serde(default)]
    rules: BTreeMap<String, BTreeMap<String, f64>>,
    /// The command line's defaults (`format`, `fail_on`, ...), read by the binary itself.
    #[serde(default, rename = "defaults")]
    _defaults: Option<serde::de::IgnoredAny>,
}

impl Config {
    /// The configuration a command runs with: the TOML file `file`, else `./sparkdiag.toml`
    /// when it exists, else the defaults; then each `CODE.KEY=VALUE` of `set` and each rule of
    /// `disable`, in that order.
    pub fn load(
        file: Option<&std::path::Path>,
        set: &[String],
        disable: &[String],
    ) -> Result<Config, ConfigError> {
        let default = std::path::Path::new("sparkdiag.toml");
        let path = file.or_else(|| default.exists().then_some(default));
        let mut config = match path {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| ConfigError(format!("cannot read {}: {e}", path.display())))?;
                let mut config = Config::from_toml(&text, &path.display().to_string())?;
                config.files.push(path.display().to_string());
                config
            }
            None => Config::default(),
        };
        for arg in set {
            config.set_from_arg(arg)?;
        }
        for rule in disable {
            config.disable(rule)?;
        }
        Ok(config)
    }

    /// The command line's `--set` and `--disable` alone, no file read (`--no-config`).
    pub fn without_files(set: &[String], disable: &[String]) -> Result<Config, ConfigError> {
        let mut config = Config::default();
        for arg in set {
            config.set_from_arg(arg)?;
        }
        for rule in disable {
            config.disable(rule)?;
        }
        Ok(config)
    }

    /// Reads a `sparkdiag.toml`; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let file: File = toml::from_str(text).map_err(|e| ConfigError(format!("{origin}: {e}")))?;
        let mut config = Config::default();
        for name in file.disable {
            let rule = known(&name).map_err(|e| ConfigError(format!("{origin}: disable: {e}")))?;
            config.switch_off(rule, origin);
        }
        for (rule, values) in file.rules {
            for (key, value) in values {
                config
                    .set(&rule, &key, value, origin)
                    .map_err(|e| ConfigError(format!("{origin}: [rules.{rule}]: {e}")))?;
            }
        }
        Ok(config)
    }

    /// Applies `CODE.key=value` (e.g. `SK001.ratio=4`).
    pub fn set_from_arg(&mut self, arg: &str) -> Result<(), ConfigError> {
        let (target, value) = arg.split_once('=').ok_or_else(|| {
            ConfigError(format!(
                "`{arg}`: expected CODE.key=value, e.g. SK001.ratio=4"
            ))
        })?;
        let (rule, key) = target.split_once('.').ok_or_else(|| {
            ConfigError(format!(
                "`{arg}`: expected CODE.key=value, e.g. SK001.ratio=4"
            ))
        })?;
        let value: f64 = value
            .trim()
            .parse()
            .map_err(|_| ConfigError(format!("`{arg}`: `{value}` is not a number")))?;
        self.set(rule.trim(), key.trim(), value, "--set")
    }

    pub fn disable(&mut self, code_or_name: &str) -> Result<(), ConfigError> {
        let rule = known(code_or_name)?;
        self.switch_off(rule, "--disable");
        Ok(())
    }

    fn switch_off(&mut self, rule: &Rule, origin: &str) {
        self.disabled.insert(rule.code.to_string());
        self.origins
            .insert((rule.code.to_string(), String::new()), origin.to_string());
    }

    fn set(
        &mut self,
        code_or_name: &str,
        key: &str,
        value: f64,
        origin: &str,
    ) -> Result<(), ConfigError> {
        let rule = known(code_or_name)?;
        if !rule.thresholds.iter().any(|t| t.key == key) {
            let keys: Vec<&str> = rule.thresholds.iter().map(|t| t.key).collect();
            return Err(ConfigError(format!(
                "rule {} ({}) has no threshold `{key}`; its thresholds are: {}",
                rule.code,
                rule.name,
                if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                }
            )));
        }
        self.overrides
            .insert((rule.code.to_string(), key.to_string()), value);
        self.origins
            .insert((rule.code.to_string(), key.to_string()), origin.to_string());
        Ok(())
    }

    pub(crate) fn override_for(&self, code: &str, key: &str) -> Option<f64> {
        self.overrides
            .get(&(code.to_string(), key.to_string()))
            .copied()
    }

    /// Whether `rule` runs: it was not switched off.
    pub fn enabled(&self, rule: &Rule) -> bool {
        !self.disabled.contains(rule.code)
    }

    /// The value `rule` runs `threshold` with: the override, else the default.
    pub fn value(&self, rule: &Rule, threshold: &crate::Threshold) -> f64 {
        self.override_for(rule.code, threshold.key)
            .unwrap_or(threshold.default)
    }

    /// Names the config files the command read besides the rules' own (a user's file that gave
    /// only the flags' defaults), the project's first.
    pub fn read_files(&mut self, files: impl IntoIterator<Item = String>) {
        for file in files {
            if !self.files.contains(&file) {
                self.files.push(file);
            }
        }
    }

    /// `--no-config`: no config file was looked for, and the report says so.
    pub fn ignore_config_files(&mut self) {
        self.files_ignored = true;
    }

    /// Where the settings came from, as the report's `source.config` names them: the files
    /// read, every threshold that differs from its default and every rule switched off.
    pub fn source(&self) -> sparkdiag_contract::ConfigSource {
        use sparkdiag_contract::settings::{RuleOff, ThresholdSet};
        let origin = |code: &str, key: &str| {
            self.origins
                .get(&(code.to_string(), key.to_string()))
                .cloned()
                .unwrap_or_default()
        };
        let mut thresholds = Vec::new();
        let mut disabled = Vec::new();
        for rule in crate::all_rules() {
            for t in rule.thresholds {
                if let Some(value) = self.override_for(rule.code, t.key)
                    && value != t.default
                {
                    thresholds.push(ThresholdSet {
                        rule: rule.code,
                        key: t.key,
                        value,
                        default: t.default,
                        from: origin(rule.code, t.key),
                    });
                }
            }
            if !self.enabled(rule) {
                disabled.push(RuleOff {
                    rule: rule.code,
                    from: origin(rule.code, ""),
                });
            }
        }
        sparkdiag_contract::ConfigSource {
            files: self.files.clone(),
            ignored_config_files: self.files_ignored,
            thresholds,
            disabled,
        }
    }
}

fn known(code_or_name: &str) -> Result<&'static Rule, ConfigError> {
    find_rule(code_or_name).ok_or_else(|| {
        ConfigError(format!(
            "unknown rule `{code_or_name}` (see `sparkdiag rules` for the list)"
        ))
    })
}
