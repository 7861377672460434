//! What the README and `docs/` promise a reader: every relative link leads to a file that exists
//! (and to a heading that exists, when it names one), the first commands are the ones that work
//! on a fresh clone, and every sample of the program's output is what the program prints.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::util::repo;

/// README.md and every page under docs/.
fn pages() -> Vec<PathBuf> {
    let mut pages = vec![repo().join("README.md")];
    for entry in std::fs::read_dir(repo().join("docs")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "md") {
            pages.push(path);
        }
    }
    pages.sort();
    pages
}

/// The page's lines outside fenced code blocks, with code spans blanked out.
fn prose_lines(text: &str) -> Vec<(usize, String)> {
    let mut in_fence = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        let prose: Vec<&str> = line.split('`').step_by(2).collect();
        out.push((n + 1, prose.join(" ")));
    }
    out
}

/// The targets of the Markdown links and images on a line: `[text](target)`.
fn link_targets(line: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    targets
}

/// GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || *c == ' ' || *c == '-' || *c == '_')
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// Every anchor a page offers, numbered as GitHub numbers repeated headings (`-1`, `-2`).
fn anchors(text: &str) -> Vec<String> {
    let mut in_fence = false;
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence || !line.starts_with('#') {
            continue;
        }
        let base = slug(line.trim_start_matches('#'));
        let repeats = seen.iter().filter(|s| **s == base).count();
        seen.push(base.clone());
        out.push(if repeats == 0 {
            base
        } else {
            format!("{base}-{repeats}")
        });
    }
    out
}

fn relative(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

#[test]
fn every_relative_link_in_the_readme_and_docs_leads_somewhere() {
    let mut broken = Vec::new();
    let mut checked = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for (line_no, line) in prose_lines(&text) {
            for target in link_targets(&line) {
                if target.contains("://") || target.starts_with("mailto:") {
                    continue;
                }
                checked += 1;
                let (file, anchor) = match target.split_once('#') {
                    Some((file, anchor)) => (file, Some(anchor)),
                    None => (target.as_str(), None),
                };
                let dest = if file.is_empty() {
                    page.clone()
                } else {
                    page.parent().unwrap().join(file)
                };
                let at = format!("{}:{line_no}", relative(&page));
                if !dest.exists() {
                    broken.push(format!("{at}: {target} (no such file)"));
                    continue;
                }
                let Some(anchor) = anchor else { continue };
                if dest.extension().is_some_and(|e| e == "md") {
                    let dest_text = std::fs::read_to_string(&dest).unwrap();
                    if !anchors(&dest_text).iter().any(|a| a == anchor) {
                        broken.push(format!("{at}: {target} (no such heading)"));
                    }
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
    assert!(
        checked > 40,
        "only {checked} relative links found: is the parser right?"
    );
}

#[test]
fn the_anchor_of_a_heading_is_githubs() {
    assert_eq!(
        slug(" The diff JSON (`schema: \"sparkdiag/diff/v1\"`)"),
        "the-diff-json-schema-sparkdiagdiffv1"
    );
    assert_eq!(
        anchors("# A\n## Habits of `analyze`\n```\n# not a heading\n```\n## A\n"),
        ["a", "habits-of-analyze", "a-1"]
    );
    assert_eq!(
        link_targets("see [a](docs/a.md#b) and ![c](c.svg) [not a link]"),
        ["docs/a.md#b", "c.svg"]
    );
}

/// The README's first code block: a run on a bundled log, then the test command CI runs.
#[test]
fn the_readme_opens_with_a_run_on_a_bundled_log_and_cis_test_command() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let first_block: Vec<&str> = readme
        .split("```sh\n")
        .nth(1)
        .expect("README has a sh block")
        .split("```")
        .next()
        .unwrap()
        .lines()
        .collect();
    assert_eq!(first_block.len(), 2, "two commands: {first_block:?}");
    let log = first_block[0]
        .strip_prefix("cargo run --locked -- analyze ")
        .expect("the first command runs sparkdiag analyze through cargo");
    assert!(
        log.starts_with("testdata/") && repo().join(log).exists(),
        "{log}: not a bundled log"
    );
    let test_command = "cargo test --workspace --all-features --locked";
    assert_eq!(first_block[1], test_command);
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(
        ci.lines().any(|l| l == test_command),
        ".ci/run does not run the README's test command"
    );
}

/// Every ```text block that starts with `$ sparkdiag ARGS` in the README and docs/: each line
/// after the prompt is a line the binary prints for those arguments, run from the repository
/// root (a sample may leave lines out, never change one).
#[test]
fn every_sample_of_output_is_what_sparkdiag_prints() {
    let mut samples = 0;
    for page in pages() {
        let text = std::fs::read_to_string(&page).unwrap();
        for block in text.split("```text\n").skip(1) {
            let block = block.split("```").next().unwrap();
            let mut lines = block.lines();
            let Some(args) = lines.next().and_then(|l| l.strip_prefix("$ sparkdiag ")) else {
                continue;
            };
            samples += 1;
            let args: Vec<&str> = args.split_whitespace().collect();
            let out = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
                .current_dir(repo())
                .args(&args)
                .env_remove("NO_COLOR")
                .output()
                .expect("run sparkdiag");
            let printed = String::from_utf8(out.stdout).unwrap();
            let printed: Vec<&str> = printed.lines().map(str::trim_end).collect();
            for line in lines {
                assert!(
                    printed.contains(&line.trim_end()),
                    "{}: `sparkdiag {}` no longer prints\n{line}\nit prints:\n{}",
                    relative(&page),
                    args.join(" "),
                    printed.join("\n")
                );
            }
        }
    }
    assert!(samples >= 3, "only {samples} samples of output found");
}
