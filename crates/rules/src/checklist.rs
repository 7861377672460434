//! What a new rule still needs, named step by step: CONTRIBUTING.md's "Adding a detector" as a
//! test. Each rule file under `rules/` is held to every step, and a forgotten one fails with
//! what to do about it rather than with an assertion about a list somewhere else.

use std::path::{Path, PathBuf};

use crate::Rule;

const SECTIONS: [&str; 4] = [
    "## What it does",
    "## Why is this bad?",
    "## How to fix it",
    "## Threshold and its source",
];

/// The text a rule is checked against: its file, the tests beside the crate and the tables of
/// rules in the README and `docs/`.
struct Sources {
    /// Each rule file's stem and text.
    rule_files: Vec<(String, String)>,
    /// Each test file's name (`rules.rs`) and text, under `tests/`.
    tests: Vec<(String, String)>,
    /// The README and every Markdown file under `docs/`, one after another.
    tables: String,
}

/// The steps the rule declared in each file has not taken, each as what to do.
fn forgotten(registry: &[&Rule], sources: &Sources) -> Vec<String> {
    let mut todo = Vec::new();
    for (stem, text) in &sources.rule_files {
        let Some(at) = text.find("declare_rule! {") else {
            continue;
        };
        let file = format!("crates/rules/src/rules/{stem}.rs");
        let code = quoted_after(&text[at..], "code: ").unwrap_or_default();
        let name = quoted_after(&text[at..], "name: ").unwrap_or_default();
        let static_name = text[at..]
            .split("pub static ")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_default();
        let Some(rule) = registry.iter().find(|r| r.code == code) else {
            todo.push(format!(
                "{file} declares {code}, which is not registered: add `mod {stem};` and \
                 `&{stem}::{static_name},` to `ALL` in crates/rules/src/rules/mod.rs, where the \
                 catalogue order puts it"
            ));
            continue;
        };
        if !text.starts_with(&format!("//! {code} {name}: ")) {
            todo.push(format!(
                "{file}: start the file with `//! {code} {name}: ` and one line of what it finds"
            ));
        }
        // A rule reading the plans one by one is run over a batch of them at a time; one
        // that did not say so would see no plan of an event log.
        let code_part = text.split("#[cfg(test)]").next().unwrap_or_default();
        let reads_plans = code_part.contains("ctx.each_plan()") || code_part.contains("ctx.plans");
        if reads_plans && !rule.checks_each_plan {
            todo.push(format!(
                "{file} reads the plans: add `checks_each_plan: true` after `check` in its \
                 `declare_rule!`, so that it runs over each batch of an event log's plans"
            ));
        }
        if rule.checks_each_plan && !code_part.contains("ctx.each_plan()") {
            todo.push(format!(
                "{file} declares `checks_each_plan: true`: read the plans through \
                 `ctx.each_plan()`, which numbers them among all of the application's"
            ));
        }
        for section in SECTIONS {
            if !rule.doc.contains(section) {
                todo.push(format!(
                    "{code}'s doc has no `{section}`: write it in the `///` comment above \
                     `pub static {static_name}` in {file}"
                ));
            }
        }
        for t in rule.thresholds {
            if !rule.doc.contains(&format!("`{}` =", t.key)) {
                todo.push(format!(
                    "{code}'s doc never gives threshold `{}` with its default: write \"`{}` = {}\" \
                     and where the number comes from under `## Threshold and its source`",
                    t.key, t.key, t.default
                ));
            }
        }
        if rule.summary.is_empty() || rule.summary.contains('\n') {
            todo.push(format!("{code}'s summary: one line of what it finds"));
        }
        let own_test = ["on_log(", "on_plan(", "on_sample("]
            .iter()
            .any(|call| text.contains(&format!("{call}&{static_name}")));
        let other_test = sources
            .tests
            .iter()
            .filter(|(test, _)| test != "rules.rs")
            .any(|(_, t)| t.contains(&format!("\"{code}\"")));
        if !own_test && !other_test {
            todo.push(format!(
                "{code} has no test of its own: add a `#[cfg(test)] mod real_logs` to {file} \
                 that runs `on_log(&{static_name}, \"…\", &[])` (from `crate::rules::testing`) on \
                 a real log where it fires and on one where it must stay quiet"
            ));
        }
        let every_rule = sources
            .tests
            .iter()
            .find(|(test, _)| test == "rules.rs")
            .and_then(|(_, t)| t.split("const EVERY_RULE").nth(1))
            .and_then(|list| list.split("\n];").next())
            .is_some_and(|list| list.contains(&format!("\"{code}\",")));
        if !every_rule {
            todo.push(format!(
                "{code} is not in `EVERY_RULE` in tests/rules.rs: add (\"{code}\", \"logs/…\", \
                 &[]) with a log that a PySpark script in testdata/gen/ wrote with the problem \
                 planted"
            ));
        }
        if !sources
            .tables
            .lines()
            .any(|l| l.starts_with(&format!("| {code} | {name} |")))
        {
            todo.push(format!(
                "{code} has no row in the detector table: add `| {code} | {name} | what it finds \
                 | its thresholds = defaults | their sources |` in catalogue order"
            ));
        }
    }
    todo
}

/// The string literal after `key` in `text`: `code: "SK001"` gives `SK001`.
fn quoted_after<'t>(text: &'t str, key: &str) -> Option<&'t str> {
    let rest = &text[text.find(key)? + key.len()..];
    let rest = rest.strip_prefix('"')?;
    Some(&rest[..rest.find('"')?])
}

fn read_dir_of(dir: &Path, extension: &str) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == extension))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect();
    files.sort();
    files
}

fn markdown_under(dir: &Path, out: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    for path in paths {
        if path.is_dir() {
            markdown_under(&path, out);
        } else if path.extension().is_some_and(|e| e == "md") {
            out.push_str(&std::fs::read_to_string(&path).unwrap());
            out.push('\n');
        }
    }
}

fn repository_sources() -> Sources {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let repo = crate_dir.join("../..");
    let rule_files = read_dir_of(&crate_dir.join("src/rules"), "rs")
        .into_iter()
        .map(|(name, text)| (name.trim_end_matches(".rs").to_string(), text))
        .collect();
    let mut tables = std::fs::read_to_string(repo.join("README.md")).unwrap();
    markdown_under(&repo.join("docs"), &mut tables);
    Sources {
        rule_files,
        tests: read_dir_of(&repo.join("tests"), "rs"),
        tables,
    }
}

#[test]
fn every_rule_has_taken_every_step_of_adding_a_detector() {
    let sources = repository_sources();
    let declared = sources
        .rule_files
        .iter()
        .filter(|(_, text)| text.contains("declare_rule! {"))
        .count();
    assert_eq!(declared, crate::all_rules().len(), "rule files against ALL");
    let todo = forgotten(crate::all_rules(), &sources);
    assert!(
        todo.is_empty(),
        "What the new rule still needs (CONTRIBUTING.md, \"Adding a detector\"):\n- {}",
        todo.join("\n- ")
    );
}

/// A newcomer's first draft, copied from a rule and half filled in: each step it skipped is
/// named, with the file and the line to add.
#[test]
fn a_half_added_rule_is_told_each_step_it_skipped() {
    let draft = r#"//! Something about a new rule.

declare_rule! {
    /// ## What it does
    /// Finds it.
    pub static NEW_RULE = {
        code: "XX901",
        name: "new-rule",
        category: Skew,
        claims: Saving,
        summary: "A new rule",
        thresholds: &[] as &[Threshold],
        check: check,
    };
}
"#;
    let sources = Sources {
        rule_files: vec![("new_rule".into(), draft.into())],
        tests: vec![(
            "rules.rs".into(),
            "const EVERY_RULE: &[(&str, &str, &[&str])] = &[\n    (\"SK001\", \"logs/x\", &[]),\n];\n// \"XX901\", outside it\n".into(),
        )],
        tables: "| SK001 | data-skew | … |".into(),
    };
    let unregistered = forgotten(&[], &sources);
    assert_eq!(unregistered.len(), 1, "{unregistered:#?}");
    assert!(
        unregistered[0].contains("add `mod new_rule;` and `&new_rule::NEW_RULE,` to `ALL`"),
        "{unregistered:#?}"
    );

    // Registered, with the doc's first part only and no test, table row or real log.
    static THRESHOLDS: [crate::Threshold; 1] =
        [crate::threshold("ratio", 5.0, "x", "how far", "its own")];
    let rule = Rule {
        code: "XX901",
        name: "new-rule",
        category: crate::Category::Skew,
        summary: "A new rule",
        doc: "## What it does\nFinds it.\n",
        thresholds: &THRESHOLDS,
        check: |_, _| Vec::new(),
        claims: crate::Claim::Saving,
        needs: &[],
        lead: crate::Lead::Largest,
        batch_only: false,
        advises_shuffle_partitions: false,
        checks_each_plan: false,
    };
    let todo = forgotten(&[&rule], &sources);
    let expect = [
        "start the file with `//! XX901 new-rule: `",
        "no `## Why is this bad?`",
        "no `## How to fix it`",
        "no `## Threshold and its source`",
        "never gives threshold `ratio`",
        "no test of its own",
        "not in `EVERY_RULE`",
        "no row in the detector table",
    ];
    assert_eq!(todo.len(), expect.len(), "{todo:#?}");
    for (said, expected) in todo.iter().zip(expect) {
        assert!(said.contains(expected), "{said:?} should say {expected:?}");
    }
}
