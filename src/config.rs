//! Where a config file is looked for, as ruff, cargo and git users expect: `sparkdiag.toml` or
//! `.sparkdiag.toml` in the current folder or the nearest folder above it (the project's), else
//! `$XDG_CONFIG_HOME/sparkdiag/config.toml` (`~/.config/sparkdiag/config.toml`), the user's.
//!
//! The file is the rules' (`disable`, `[rules.CODE]`) with, beside them, the flags' defaults:
//!
//! ```toml
//! [defaults]
//! format = "markdown"          # as --format: text, json, markdown, html, ...
//! fail_on = "high"
//! price_per_core_hour = 0.45      # every command that reports savings
//! price_per_gb_hour = 0.005       # a GiB of executor memory for an hour
//! top = 5
//! ui_url = "http://history.example.com:18080"
//! color = "never"              # auto, always, never
//! ```
//!
//! A flag on the command line wins over the file; the project's file wins over the user's,
//! key by key for `[defaults]`, and wholly for the rules.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The flags a config file may give defaults for.
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
pub struct Found {
    pub files: Vec<PathBuf>,
    /// Their `[defaults]`, read once however many flags ask.
    defaults: std::cell::OnceCell<Defaults>,
}

impl Found {
    /// Looks from `cwd` up, then in the user's config folder.
    pub fn search(cwd: &Path) -> Found {
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
        Found::of(files)
    }

    pub fn of(files: Vec<PathBuf>) -> Found {
        Found {
            files,
            defaults: std::cell::OnceCell::new(),
        }
    }

    pub fn here() -> Found {
        match std::env::current_dir() {
            Ok(cwd) => Found::search(&cwd),
            Err(_) => Found::of(Vec::new()),
        }
    }

    /// The file the rules' thresholds come from when `--config` is not given.
    pub fn rules_file(&self) -> Option<&Path> {
        self.files.first().map(PathBuf::as_path)
    }

    /// The files, as an error about a value of `[defaults]` names them.
    fn origin(&self) -> String {
        self.files
            .iter()
            .map(|f| f.display().to_string())
            .collect::<Vec<_>>()
            .join(" or ")
    }

    /// Every file's `[defaults]`, the project's winning key by key; the files are read the
    /// first time only.
    pub fn defaults(&self) -> anyhow::Result<Defaults> {
        if let Some(defaults) = self.defaults.get() {
            return Ok(defaults.clone());
        }
        let mut merged = Defaults::default();
        for file in &self.files {
            let text = std::fs::read_to_string(file)
                .with_context(|| format!("cannot read {}", file.display()))?;
            let parsed: File =
                toml::from_str(&text).with_context(|| format!("{}", file.display()))?;
            merged = merged.or(parsed.defaults);
        }
        Ok(self.defaults.get_or_init(|| merged).clone())
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

/// The config files' `[defaults]` prices, each checked as the flags check theirs.
pub fn prices(found: &Found) -> anyhow::Result<sparkdiag_analysis::Prices> {
    let defaults = found.defaults()?;
    let check = |key: &str, price: Option<f64>| {
        price
            .map(|p| {
                sparkdiag_analysis::Prices::check(p)
                    .map_err(|e| anyhow::anyhow!("{}: [defaults] {key} = {p}: {e}", found.origin()))
            })
            .transpose()
    };
    Ok(sparkdiag_analysis::Prices {
        per_core_hour: check("price_per_core_hour", defaults.price_per_core_hour)?,
        per_gb_hour: check("price_per_gb_hour", defaults.price_per_gb_hour)?,
    })
}

/// Fills the flags of `analyze` that were not given from the config files' `[defaults]`.
pub fn apply_to_analyze(args: &mut crate::AnalyzeArgs, found: &Found) -> anyhow::Result<()> {
    use clap::ValueEnum;
    let defaults = found.defaults()?;
    let origin = || found.origin();
    if args.format.is_none()
        && let Some(format) = &defaults.format
    {
        args.format = Some(sparkdiag_report::Format::parse(format).ok_or_else(|| {
            anyhow::anyhow!(
                "{}: [defaults] format = \"{format}\": expected {}",
                origin(),
                crate::flags::format_names().join(", ")
            )
        })?);
    }
    if args.fail_on.is_none()
        && let Some(fail_on) = &defaults.fail_on
    {
        if sparkdiag_rules::Severity::parse(fail_on).is_none() {
            anyhow::bail!(
                "{}: [defaults] fail_on = \"{fail_on}\": expected critical, high, medium, low or info",
                origin()
            );
        }
        args.fail_on = Some(fail_on.clone());
    }
    let habits = &mut args.habits;
    if habits.top.is_none() {
        habits.top = defaults.top;
    }
    if habits.ui_url.is_none() {
        habits.ui_url = defaults.ui_url;
    }
    if habits.color.is_none()
        && let Some(color) = &defaults.color
    {
        habits.color = Some(
            crate::habits::ColorChoice::from_str(color, true).map_err(|_| {
                anyhow::anyhow!(
                    "{}: [defaults] color = \"{color}\": expected auto, always or never",
                    origin()
                )
            })?,
        );
    }
    Ok(())
}
