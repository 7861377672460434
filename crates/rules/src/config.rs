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
                Config::from_toml(&text, &path.display().to_string())?
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

    /// Reads a `sparkdiag.toml`; `origin` names it in errors.
    pub fn from_toml(text: &str, origin: &str) -> Result<Config, ConfigError> {
        let file: File = toml::from_str(text).map_err(|e| ConfigError(format!("{origin}: {e}")))?;
        let mut config = Config::default();
        for name in file.disable {
            let rule = known(&name).map_err(|e| ConfigError(format!("{origin}: disable: {e}")))?;
            config.disabled.insert(rule.code.to_string());
        }
        for (rule, values) in file.rules {
            for (key, value) in values {
                config
                    .set(&rule, &key, value)
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
        self.set(rule.trim(), key.trim(), value)
    }

    pub fn disable(&mut self, code_or_name: &str) -> Result<(), ConfigError> {
        let rule = known(code_or_name)?;
        self.disabled.insert(rule.code.to_string());
        Ok(())
    }

    fn set(&mut self, code_or_name: &str, key: &str, value: f64) -> Result<(), ConfigError> {
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
        Ok(())
    }

    pub(crate) fn override_for(&self, code: &str, key: &str) -> Option<f64> {
        self.overrides
            .get(&(code.to_string(), key.to_string()))
            .copied()
    }

    pub(crate) fn enabled(&self, rule: &Rule) -> bool {
        !self.disabled.contains(rule.code)
    }
}

fn known(code_or_name: &str) -> Result<&'static Rule, ConfigError> {
    find_rule(code_or_name).ok_or_else(|| {
        ConfigError(format!(
            "unknown rule `{code_or_name}` (see `sparkdiag rules` for the list)"
        ))
    })
}
