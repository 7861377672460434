//! The flags every analysing command shares: the rules' configuration (`--config`, `--set`,
//! `--disable`, `--no-config`) and the prices. Where config files are found and what their
//! `[defaults]` hold is `sparkdiag_analysis::settings`'; what is left here is filling the flags
//! a user did not give from those defaults.

use sparkdiag_analysis::settings::ConfigFiles;

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
