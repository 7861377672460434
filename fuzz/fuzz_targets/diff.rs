//! `diff` on two mutated logs: the input is BEFORE and AFTER joined by a line holding one NUL
//! byte (`\n\0\n`; without one, both runs are the whole input). Both are analysed as
//! `sparkdiag diff` does, compared, and the comparison drawn as text, Markdown, HTML and JSON:
//! any pair of runs must give an answer, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

const SEPARATOR: &[u8] = b"\n\0\n";

fn analyse(
    dir: &std::path::Path,
    name: &str,
    bytes: &[u8],
    config: &sparkdiag_rules::Config,
) -> Option<sparkdiag_analysis::Analysis> {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let inputs = sparkdiag_eventlog::discover(path.to_str().unwrap()).ok()?;
    let input = inputs.first()?;
    sparkdiag_analysis::analyze(input, &sparkdiag_analysis::Options::new(config)).ok()
}

fn run(a: &sparkdiag_analysis::Analysis) -> sparkdiag_diff::Run<'_> {
    sparkdiag_diff::Run {
        app: &a.app,
        report: &a.report,
        facts: &a.facts,
    }
}

fuzz_target!(|data: &[u8]| {
    let (before, after) = match data.windows(SEPARATOR.len()).position(|w| w == SEPARATOR) {
        Some(at) => (&data[..at + 1], &data[at + SEPARATOR.len()..]),
        None => (data, data),
    };
    let dir = tempfile::tempdir().unwrap();
    let config = sparkdiag_rules::Config::default();
    let (Some(before), Some(after)) = (
        analyse(dir.path(), "before", before, &config),
        analyse(dir.path(), "after", after, &config),
    ) else {
        return;
    };
    let diff = sparkdiag_diff::compare(
        run(&before),
        run(&after),
        &sparkdiag_diff::Options::default(),
    );
    let _ = sparkdiag_report::diff::text::render(&diff);
    let _ = sparkdiag_report::diff::markdown::render(&diff);
    let _ = sparkdiag_report::diff::html::render(&diff);
    let _ = serde_json::to_string(&diff);
});
