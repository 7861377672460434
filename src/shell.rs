//! `sparkdiag completions SHELL` and `sparkdiag man`: generated from the command line's own
//! definition, so they never fall behind a new flag.

use std::io::Write;
use std::process::ExitCode;

/// `sparkdiag completions SHELL`: the shells it writes for, in `--help`'s order.
pub fn shells() -> impl clap::builder::TypedValueParser<Value = clap_complete::Shell> {
    let names = ["bash", "zsh", "fish", "powershell", "elvish"];
    crate::flags::one_of(names, |name| clap::ValueEnum::from_str(name, false).ok())
}

pub fn completions(
    shell: clap_complete::Shell,
    mut command: clap::Command,
) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_complete::generate(shell, &mut command, "sparkdiag", &mut out);
    std::io::stdout().lock().write_all(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// The man page, sparkdiag(1), in roff, with one section per subcommand.
pub fn man(command: clap::Command) -> anyhow::Result<ExitCode> {
    let mut out = Vec::new();
    clap_mangen::Man::new(command.clone()).render(&mut out)?;
    for sub in command.get_subcommands() {
        if sub.is_hide_set() || sub.get_name() == "help" {
            continue;
        }
        out.extend_from_slice(
            format!(".SH \"SPARKDIAG {}\"\n", sub.get_name().to_uppercase()).as_bytes(),
        );
        let page = clap_mangen::Man::new(sub.clone());
        page.render_description_section(&mut out)?;
        page.render_options_section(&mut out)?;
    }
    std::io::stdout().lock().write_all(&out)?;
    Ok(ExitCode::SUCCESS)
}
