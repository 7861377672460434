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

/// Where a path a page names may start: the repository's own folders.
const REPO_FOLDERS: &[&str] = &[
    "crates/",
    "src/",
    "tests/",
    "docs/",
    "testdata/",
    "examples/",
    "benches/",
    "fuzz/",
    ".ci/",
    "python/",
];

/// The code spans of a Markdown page outside fenced blocks, or of a Rust file's `//!` lines,
/// with their line numbers.
fn code_spans(text: &str, markdown: bool) -> Vec<(usize, String)> {
    let mut in_fence = false;
    let mut spans = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let line = if markdown {
            if line.trim_start().starts_with("```") {
                in_fence = !in_fence;
                continue;
            }
            if in_fence {
                continue;
            }
            line
        } else {
            match line.trim_start().strip_prefix("//!") {
                Some(doc) => doc,
                None => continue,
            }
        };
        for span in line.split('`').skip(1).step_by(2) {
            spans.push((n + 1, span.trim().to_string()));
        }
    }
    spans
}

/// A span that names a file or folder of the repository: it starts with one of its folders; a
/// `:LINE` or `#anchor` after it is left off.
fn repo_path(span: &str) -> Option<&str> {
    if !REPO_FOLDERS.iter().any(|f| span.starts_with(f)) {
        return None;
    }
    span.split([':', ' ', '#', '(']).next()
}

/// A path that stands for many (`crates/rules/src/rules/NAME.rs`, `tests/golden/*.md`,
/// `apps/{a,b}`, `…`).
fn placeholder(path: &str) -> bool {
    path.contains(['*', '<', '>', '{', '}', '…', '$'])
        || path
            .split(['/', '.', '_', '-'])
            .any(|word| word.len() >= 3 && word.chars().all(|c| c.is_ascii_uppercase()))
}

/// A missing path the repository ignores (what a run writes, such as `fuzz/artifacts/`), as the
/// `.gitignore` in one of its folders names it.
fn ignored(path: &str) -> bool {
    let parts: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    (0..parts.len()).any(|i| {
        let gitignore = repo().join(parts[..i].join("/")).join(".gitignore");
        std::fs::read_to_string(gitignore).is_ok_and(|text| {
            text.lines()
                .map(|l| l.trim().trim_matches('/'))
                .any(|pattern| pattern == parts[i])
        })
    })
}

#[test]
fn every_path_the_docs_name_exists() {
    let mut pages = pages();
    pages.push(repo().join("CONTRIBUTING.md"));
    let mut sources = Vec::new();
    let mut dirs = vec![repo().join("src")];
    for entry in std::fs::read_dir(repo().join("crates")).unwrap() {
        dirs.push(entry.unwrap().path().join("src"));
    }
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                sources.push(path);
            }
        }
    }
    let mut named = 0;
    let mut missing = Vec::new();
    for file in pages.iter().chain(&sources) {
        let text = std::fs::read_to_string(file).unwrap();
        let markdown = file.extension().is_some_and(|e| e == "md");
        for (line, span) in code_spans(&text, markdown) {
            let Some(path) = repo_path(&span) else {
                continue;
            };
            named += 1;
            if !repo().join(path).exists() && !ignored(path) && !placeholder(path) {
                missing.push(format!("{}:{line}: `{path}`", relative(file)));
            }
        }
    }
    assert!(
        named > 100,
        "only {named} paths found: is the span search broken?"
    );
    assert!(
        missing.is_empty(),
        "paths the docs name that do not exist (moved or renamed?):\n{}",
        missing.join("\n")
    );
    // The checks themselves.
    assert_eq!(
        repo_path("crates/mcp/src/tools/mod.rs:42"),
        Some("crates/mcp/src/tools/mod.rs")
    );
    assert!(placeholder("crates/rules/src/rules/NAME.rs") && !placeholder("docs/mcp.md"));
    assert_eq!(repo_path("../shared/real-world"), None);
    assert!(ignored("fuzz/artifacts/summary.tsv") && !ignored("fuzz/run.sh"));
}
