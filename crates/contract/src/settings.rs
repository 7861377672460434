//! Where a report's settings came from: the config files read and every threshold that differs
//! from its default, so that a setting that changed a report is never applied without a trace.

use serde::Serialize;

/// The settings a report was made with (`source.config`).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConfigSource {
    /// The config files read, the project's first; empty when none was found or `--no-config`
    /// was given.
    pub files: Vec<String>,
    /// `--no-config`: config files were not looked for.
    pub ignored_config_files: bool,
    /// Every threshold that differs from its default, and where it was set.
    pub thresholds: Vec<ThresholdSet>,
    /// Every rule switched off, and where.
    pub disabled: Vec<RuleOff>,
}

/// A threshold set to other than its default.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ThresholdSet {
    pub rule: &'static str,
    pub key: &'static str,
    pub value: f64,
    pub default: f64,
    /// The config file that set it, or `--set`.
    pub from: String,
}

/// A rule switched off.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RuleOff {
    pub rule: &'static str,
    /// The config file that switched it off, or `--disable`.
    pub from: String,
}

impl ConfigSource {
    /// Nothing changed from the defaults: no file read, no threshold set, no rule off.
    pub fn is_default(&self) -> bool {
        self.files.is_empty() && self.thresholds.is_empty() && self.disabled.is_empty()
    }

    /// The settings in one line, for a text header: `config: ./sparkdiag.toml; SK001.ratio = 4
    /// (default 5) from --set; CF003 off`.
    pub fn line(&self) -> Option<String> {
        if self.is_default() && !self.ignored_config_files {
            return None;
        }
        let mut parts = Vec::new();
        if self.files.is_empty() {
            parts.push(if self.ignored_config_files {
                "no config file (--no-config)".to_string()
            } else {
                "no config file".to_string()
            });
        } else {
            parts.push(self.files.join(", "));
        }
        for t in &self.thresholds {
            parts.push(format!(
                "{}.{} = {} (default {}) from {}",
                t.rule, t.key, t.value, t.default, t.from
            ));
        }
        for r in &self.disabled {
            parts.push(format!("{} off ({})", r.rule, r.from));
        }
        Some(format!("config: {}", parts.join("; ")))
    }
}
