//! What a new user meets first on the command line: a command whose feature the build left out,
//! colour, shell completions, the man page, `--open`, `--quiet`, `--top`, config files, a folder
//! of many applications, and links to the Spark UI.

use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::util::{sparkdiag, testdata};

/// A default build (`cargo install sparkdiag`) leaves `batch` out: the command still parses,
/// and says which feature it needs and how to get it, with exit code 2.
#[cfg(not(feature = "tables"))]
#[test]
fn batch_without_its_feature_says_how_to_get_it() {
    let out = sparkdiag(&["batch", "logs/", "-o", "fleet/", "--jobs", "2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`sparkdiag batch` needs the `tables` feature")
            && stderr.contains("cargo install sparkdiag --features tables"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
}

#[cfg(not(feature = "serve"))]
#[test]
fn serve_without_its_feature_says_how_to_get_it() {
    let out = sparkdiag(&["serve", "--bind", "127.0.0.1:0"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("`sparkdiag serve` needs the `serve` feature")
            && stderr.contains("cargo install sparkdiag --features serve"),
        "{stderr}"
    );
}

/// `--version` says which commands the build has, so a user can tell before trying one.
#[test]
fn the_version_names_the_features_built_in() {
    let out = sparkdiag(&["--version"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    let expected = match (cfg!(feature = "tables"), cfg!(feature = "serve")) {
        (true, true) => "(features: tables, serve)",
        (true, false) => "(features: tables)",
        (false, true) => "(features: serve)",
        (false, false) => "(features: none; batch and serve left out)",
    };
    assert!(said.trim_end().ends_with(expected), "{said}");
}

fn failed_log() -> String {
    testdata("logs/failed/local-1796049483373")
        .to_string_lossy()
        .into_owned()
}

fn run_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_sparkdiag"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("NO_COLOR")
        .env_remove("BROWSER");
    // No user config from the machine running the tests.
    cmd.env("XDG_CONFIG_HOME", dir.join("no-user-config"));
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run sparkdiag")
}

fn stdout(out: &Output) -> String {
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// The failed log's findings as the JSON report has them: (rule, severity).
fn findings_of(log: &str) -> Vec<(String, String)> {
    let tmp = tempfile::tempdir().unwrap();
    let out = run_in(tmp.path(), &["analyze", log, "--format", "json"], &[]);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

const ESC: &str = "\u{1b}[";

#[test]
fn color_follows_the_flag_then_no_color_then_the_terminal() {
    let tmp = tempfile::tempdir().unwrap();
    let log = failed_log();
    let piped = |args: &[&str], env: &[(&str, &str)]| {
        let mut all = vec!["analyze", log.as_str()];
        all.extend_from_slice(args);
        stdout(&run_in(tmp.path(), &all, env))
    };
    // Into a pipe: plain unless asked for; asked for, even against NO_COLOR.
    assert!(!piped(&[], &[]).contains(ESC));
    assert!(!piped(&["--color", "never"], &[]).contains(ESC));
    let always = piped(&["--color", "always"], &[("NO_COLOR", "1")]);
    assert!(always.contains(ESC), "{always}");
    // The severity cell of a high finding is red (38;5;9), and the text is the same without it.
    assert!(always.contains("\u{1b}[38;5;9m"), "{always}");
    assert_eq!(without_colour(&always), piped(&["--color", "never"], &[]));
    // On a terminal: colour by default, none with NO_COLOR or --color never.
    let Some(script) = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| Path::new(p).exists())
    else {
        return;
    };
    let on_terminal = |flags: &str, no_color: bool| {
        let mut cmd = Command::new(script);
        cmd.args([
            "-qec",
            &format!("{} analyze {log} {flags}", env!("CARGO_BIN_EXE_sparkdiag")),
            "/dev/null",
        ])
        .stdin(Stdio::null())
        .env_remove("NO_COLOR")
        .env("XDG_CONFIG_HOME", tmp.path().join("none"));
        if no_color {
            cmd.env("NO_COLOR", "1");
        }
        String::from_utf8(cmd.output().unwrap().stdout).unwrap()
    };
    assert!(on_terminal("", false).contains(ESC));
    assert!(!on_terminal("", true).contains(ESC));
    assert!(!on_terminal("--color never", false).contains(ESC));
    assert!(on_terminal("--color always", true).contains(ESC));
}

#[test]
fn completions_for_every_shell_and_a_man_page() {
    let tmp = tempfile::tempdir().unwrap();
    for shell in ["bash", "zsh", "fish", "powershell"] {
        let text = stdout(&run_in(tmp.path(), &["completions", shell], &[]));
        assert!(
            text.contains("analyze") && text.contains("fail-on") && text.contains("color"),
            "{shell}: {}",
            &text[..text.len().min(300)]
        );
    }
    // The bash script is valid bash, and completes the subcommands once loaded.
    let bash = stdout(&run_in(tmp.path(), &["completions", "bash"], &[]));
    let file = tmp.path().join("sparkdiag.bash");
    std::fs::write(&file, &bash).unwrap();
    if Path::new("/bin/bash").exists() {
        let probe = format!(
            "source {}; COMP_WORDS=(sparkdiag an); COMP_CWORD=1; _sparkdiag sparkdiag an sparkdiag; echo \"${{COMPREPLY[@]}}\"",
            file.display()
        );
        let out = Command::new("/bin/bash")
            .args(["-c", &probe])
            .output()
            .unwrap();
        let said = String::from_utf8_lossy(&out.stdout);
        assert!(
            said.split_whitespace().any(|w| w == "analyze"),
            "{said} {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let man = stdout(&run_in(tmp.path(), &["man"], &[]));
    assert!(
        man.starts_with(".ie") || man.contains(".TH sparkdiag 1"),
        "{}",
        &man[..200]
    );
    for section in [
        ".SH NAME",
        ".SH SYNOPSIS",
        "SPARKDIAG ANALYZE",
        "\\-\\-fail\\-on",
    ] {
        assert!(man.contains(section), "man page lacks {section}");
    }
}

#[test]
fn open_hands_the_html_report_to_the_browser() {
    let tmp = tempfile::tempdir().unwrap();
    let record = tmp.path().join("opened.txt");
    let browser = tmp.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > {}\n", record.display()),
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = run_in(
        tmp.path(),
        &["analyze", &failed_log(), "--open"],
        &[("BROWSER", browser.to_str().unwrap())],
    );
    // The text report still goes to stdout.
    assert!(stdout(&out).contains("Findings"));
    let opened = std::fs::read_to_string(&record).expect("the browser was run");
    let page = std::fs::read_to_string(&opened).expect("it was given the report's file");
    assert!(page.to_ascii_lowercase().starts_with("<!doctype html"));
    for (rule, _) in findings_of(&failed_log()) {
        assert!(page.contains(&rule), "{rule} in the opened page");
    }
    assert!(String::from_utf8_lossy(&out.stderr).contains(&opened));
    // No browser at all: an error that says where the report is, exit 2.
    let out = run_in(
        tmp.path(),
        &["analyze", &failed_log(), "--open"],
        &[("BROWSER", "/nonexistent/browser")],
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("could not open a browser") && stderr.contains(".html"),
        "{stderr}"
    );
}

#[test]
fn quiet_prints_one_line_a_finding_and_top_keeps_the_first_n() {
    let tmp = tempfile::tempdir().unwrap();
    let findings = findings_of(&failed_log());
    assert!(findings.len() >= 2, "{findings:?}");
    let quiet = stdout(&run_in(tmp.path(), &["analyze", &failed_log(), "-q"], &[]));
    let lines: Vec<&str> = quiet.lines().collect();
    assert_eq!(lines.len(), findings.len(), "{quiet}");
    for (line, (rule, severity)) in lines.iter().zip(&findings) {
        assert!(
            line.contains(rule.as_str()) && line.contains(severity.as_str()),
            "{line}"
        );
    }
    // --fail-on still decides the exit code, quietly.
    let out = run_in(
        tmp.path(),
        &["analyze", &failed_log(), "--quiet", "--fail-on", "info"],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Nothing at all for a log without findings.
    let healthy = crate::util::pattern_log("healthy");
    let healthy_findings = findings_of(healthy.to_str().unwrap());
    let out = stdout(&run_in(
        tmp.path(),
        &["analyze", healthy.to_str().unwrap(), "-q"],
        &[],
    ));
    assert_eq!(out.lines().count(), healthy_findings.len(), "{out}");

    let top: Value = serde_json::from_str(&stdout(&run_in(
        tmp.path(),
        &["analyze", &failed_log(), "--top", "1", "--format", "json"],
        &[],
    )))
    .unwrap();
    let kept = top["findings"].as_array().unwrap();
    assert_eq!(kept.len(), 1);
    assert_eq!(kept[0]["rule"].as_str().unwrap(), findings[0].0);
}

#[test]
fn a_config_file_in_the_project_then_the_users_gives_the_defaults() {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    let deep = project.join("jobs/nightly");
    std::fs::create_dir_all(&deep).unwrap();
    let user = tmp.path().join("xdg");
    std::fs::create_dir_all(user.join("sparkdiag")).unwrap();
    std::fs::write(
        user.join("sparkdiag/config.toml"),
        "[defaults]\nformat = \"markdown\"\nfail_on = \"info\"\n",
    )
    .unwrap();
    let xdg = [("XDG_CONFIG_HOME", user.to_str().unwrap())];
    let log = failed_log();

    // The user's file alone: Markdown, and exit 1 on any finding.
    let out = run_in(&deep, &["analyze", &log], &xdg);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stdout(&out).starts_with('#'),
        "Markdown from the user's config"
    );

    // The project's file, found from a folder below it, wins key by key.
    std::fs::write(
        project.join(".sparkdiag.toml"),
        "disable = [\"CF003\"]\n[defaults]\nformat = \"json\"\ntop = 1\n",
    )
    .unwrap();
    let out = run_in(&deep, &["analyze", &log], &xdg);
    assert_eq!(
        out.status.code(),
        Some(1),
        "fail_on still from the user's file"
    );
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(report["findings"].as_array().unwrap().len(), 1);

    // The command line wins over both.
    let out = run_in(
        &deep,
        &["analyze", &log, "--format", "text", "--top", "2"],
        &xdg,
    );
    assert!(stdout(&out).contains("Findings, most severe first, then most time saved"));

    // A mistake in the file names the file.
    std::fs::write(
        project.join(".sparkdiag.toml"),
        "[defaults]\nformat = \"pdf\"\n",
    )
    .unwrap();
    let out = run_in(&deep, &["analyze", &log], &xdg);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr.contains(".sparkdiag.toml") && stderr.contains("pdf"),
        "{stderr}"
    );
}

/// Prices come from a config file's `[defaults]` for `analyze` and `diff` alike, and a price
/// that cannot be one (negative, NaN, infinite) is refused naming the flag or the file, rather
/// than turning every saving into a cost.
#[test]
fn prices_come_from_the_config_file_and_impossible_ones_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let log = testdata("logs/memory/overprovisioned")
        .to_string_lossy()
        .into_owned();
    std::fs::write(
        tmp.path().join("sparkdiag.toml"),
        "[defaults]\nprice_per_core_hour = 0.5\nprice_per_gb_hour = 1\n",
    )
    .unwrap();
    let out = run_in(tmp.path(), &["analyze", &log, "--format", "json"], &[]);
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let findings = report["findings"].as_array().unwrap();
    let gc = findings.iter().find(|f| f["rule"] == "GC002").unwrap();
    let gb_hours = gc["evidence"]["gb_hours_saved"].as_f64().unwrap();
    assert_eq!(
        gc["impact_memory_cost"].as_f64().unwrap(),
        (gb_hours * 100.0).round() / 100.0,
        "{gc}"
    );
    assert!(findings.iter().all(|f| f["impact_cost"].is_number()));
    // The flag wins over the file.
    let out = run_in(
        tmp.path(),
        &[
            "analyze",
            &log,
            "--format",
            "json",
            "--price-per-gb-hour",
            "2",
        ],
        &[],
    );
    let report: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let gc = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "GC002")
        .unwrap()
        .clone();
    assert_eq!(
        gc["impact_memory_cost"].as_f64().unwrap(),
        (gb_hours * 2.0 * 100.0).round() / 100.0
    );
    // `diff` takes the file's core-hour price for its cost line.
    let out = run_in(tmp.path(), &["diff", &log, &log, "--format", "json"], &[]);
    let diff: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let metrics = diff["metrics"].as_array().unwrap();
    let metric = |name: &str| metrics.iter().find(|m| m["metric"] == name).cloned();
    let cost = metric("cost").expect("a cost line from the file's price");
    let core_hours = metric("core_hours").unwrap();
    assert!(
        (cost["before"].as_f64().unwrap() - core_hours["before"].as_f64().unwrap() * 0.5).abs()
            < 1e-9,
        "{cost}"
    );

    for bad in ["-1", "nan", "inf", "cheap"] {
        for flag in ["--price-per-core-hour", "--price-per-gb-hour"] {
            let out = run_in(tmp.path(), &["analyze", &log, flag, bad], &[]);
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{flag} {bad}: {stderr}");
            assert!(stderr.contains(flag) && stderr.contains(bad), "{stderr}");
        }
    }
    std::fs::write(
        tmp.path().join("sparkdiag.toml"),
        "[defaults]\nprice_per_gb_hour = -0.01\n",
    )
    .unwrap();
    for command in [&["analyze", &log][..], &["diff", &log, &log][..]] {
        let out = run_in(tmp.path(), command, &[]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("sparkdiag.toml") && stderr.contains("price_per_gb_hour = -0.01"),
            "{stderr}"
        );
    }
}

#[test]
fn a_folder_of_many_applications_is_one_line_each() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let names = [
        "healthy",
        "skew-join",
        "spill",
        "straggler",
        "tiny-partitions",
        "gc-pressure",
    ];
    for name in names {
        let log = crate::util::pattern_log(name);
        std::fs::copy(&log, logs.join(log.file_name().unwrap())).unwrap();
    }
    let text = stdout(&run_in(
        tmp.path(),
        &["analyze", logs.to_str().unwrap()],
        &[],
    ));
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("6 applications"), "{text}");
    assert_eq!(lines.len(), 7, "{text}");
    // Each line names its application's log and its top finding, as the full report does.
    for name in names {
        let log = crate::util::pattern_log(name);
        let file = log.file_name().unwrap().to_str().unwrap();
        let line = lines
            .iter()
            .find(|l| l.contains(file))
            .unwrap_or_else(|| panic!("{file}: {text}"));
        let findings = findings_of(log.to_str().unwrap());
        match findings.first() {
            Some((rule, _)) => assert!(line.contains(&format!("top {rule}")), "{line}"),
            None => assert!(line.contains(" 0 finding(s)"), "{line}"),
        }
    }
}

#[test]
fn ui_url_links_each_finding_to_its_stage_or_job() {
    let tmp = tempfile::tempdir().unwrap();
    let log = failed_log();
    let shs = "http://history.example.com:18080/";
    let report: Value = serde_json::from_str(&stdout(&run_in(
        tmp.path(),
        &["analyze", &log, "--format", "json", "--ui-url", shs],
        &[],
    )))
    .unwrap();
    let app = report["application"]["id"].as_str().unwrap();
    let mut linked = 0;
    for f in report["findings"].as_array().unwrap() {
        let url = f["evidence"]["spark_ui_url"].as_str();
        let stage = f["scope"]["stage_ids"].as_array().and_then(|s| s.first());
        let job = f["scope"]["job_ids"].as_array().and_then(|s| s.first());
        match (stage, job) {
            (Some(stage), _) => {
                assert_eq!(
                    url,
                    Some(format!("http://history.example.com:18080/history/{app}/stages/stage/?id={stage}&attempt=0").as_str())
                );
                linked += 1;
            }
            (None, Some(job)) => {
                assert_eq!(
                    url,
                    Some(
                        format!(
                            "http://history.example.com:18080/history/{app}/jobs/job/?id={job}"
                        )
                        .as_str()
                    )
                );
                linked += 1;
            }
            _ => {}
        }
    }
    assert!(linked > 0, "the failed job's findings name a stage or job");
    // A Databricks cluster's Spark UI is already one application's: pages go under it.
    let databricks =
        "https://adb-1.azuredatabricks.net/?o=1#setting/sparkui/0101-123456-abc/driver-4242";
    let text = stdout(&run_in(
        tmp.path(),
        &["analyze", &log, "--ui-url", databricks],
        &[],
    ));
    assert!(text.contains("Spark UI pages of the findings"), "{text}");
    assert!(
        text.contains(&format!("{databricks}/stages/stage/?id=")),
        "{text}"
    );
}

/// `text` without its ANSI colour codes (`ESC [ ... m`).
fn without_colour(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c == 'm' {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}
