//! Progress on standard error while a command works, drawn only when standard error is a
//! terminal: pipes, files and the tests see nothing. [`Spinner`] while one large log is read,
//! [`Bar`] while a night's logs are analysed.

use std::io::IsTerminal;

/// A spinner with the count of events read, for a log of more than [`Spinner::MIN_BYTES`] on
/// disk. The reader hands over events, not bytes, so it counts events.
pub struct Spinner(Option<(indicatif::ProgressBar, u64)>);

impl Spinner {
    /// Smaller logs are read before a spinner would be seen.
    pub const MIN_BYTES: u64 = 50 * 1024 * 1024;

    /// Starts spinning for the log `display` names, `bytes` long on disk, when it is large and
    /// standard error is a terminal.
    pub fn start(bytes: u64, display: &str) -> Spinner {
        if bytes <= Self::MIN_BYTES || !std::io::stderr().is_terminal() {
            return Spinner(None);
        }
        let bar =
            indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        bar.set_style(
            // The path last, cut to the terminal's width, so a long one never wraps the line.
            indicatif::ProgressStyle::with_template("{spinner} {elapsed} {prefix} {wide_msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        let mib = bytes / (1024 * 1024);
        bar.set_prefix(format!("{mib} MiB, 0k events"));
        bar.set_message(format!("reading {display}"));
        bar.enable_steady_tick(std::time::Duration::from_millis(120));
        Spinner(Some((bar, mib)))
    }

    /// `events` events read so far.
    pub fn events(&self, events: u64) {
        if let Some((bar, mib)) = &self.0 {
            bar.set_prefix(format!("{mib} MiB, {}k events", events / 1000));
        }
    }

    /// Takes the spinner off the screen.
    pub fn finish(self) {
        if let Some((bar, _)) = self.0 {
            bar.finish_and_clear();
        }
    }
}

/// A bar with the logs analysed so far out of all of them, each one's name beside it.
#[derive(Default)]
pub struct Bar(Option<indicatif::ProgressBar>);

impl Bar {
    /// Starts the bar for `logs` logs, when there are any and standard error is a terminal.
    pub fn start(&mut self, logs: usize) {
        if logs == 0 || !std::io::stderr().is_terminal() {
            return;
        }
        let bar = indicatif::ProgressBar::with_draw_target(
            Some(logs as u64),
            indicatif::ProgressDrawTarget::stderr(),
        );
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:30} {pos}/{len} logs {elapsed} {wide_msg}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        self.0 = Some(bar);
    }

    /// One more log analysed: `input`.
    pub fn advance(&mut self, input: &str) {
        if let Some(bar) = &self.0 {
            bar.inc(1);
            bar.set_message(input.to_string());
        }
    }

    /// Takes the bar off the screen.
    pub fn finish(self) {
        if let Some(bar) = self.0 {
            bar.finish_and_clear();
        }
    }
}
