//! The command line as a new user meets it: a terminal that reports no width, a failed
//! application, a night with mistakes in it, and the wrong file handed to the wrong command.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::util::{json_of, pattern_log, repo, sparkdiag, testdata};

/// `sparkdiag ARGS` on a pseudo-terminal made by `script`, whose size is 0 x 0 when the test's
/// own standard input is not a terminal: what CI runners and IDE consoles hand a program.
/// `None` when `script` (util-linux) is not installed.
fn on_zero_width_terminal(args: &str, columns: Option<&str>) -> Option<String> {
    on_terminal(args, columns, false)
}

/// [`on_zero_width_terminal`], in colour when `color`, with the colour codes taken out.
fn on_terminal(args: &str, columns: Option<&str>, color: bool) -> Option<String> {
    let script = ["/usr/bin/script", "/bin/script"]
        .into_iter()
        .find(|p| Path::new(p).exists())?;
    let mut cmd = Command::new(script);
    cmd.args([
        "-qec",
        &format!("{} {args}", env!("CARGO_BIN_EXE_sparkdiag")),
        "/dev/null",
    ])
    .current_dir(repo())
    .stdin(Stdio::null())
    .env_remove("NO_COLOR")
    .env_remove("COLUMNS");
    if !color {
        cmd.env("NO_COLOR", "1");
    }
    if let Some(columns) = columns {
        cmd.env("COLUMNS", columns);
    }
    let out = cmd.output().expect("run script");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap().replace("\r\n", "\n");
    Some(without_colour(&text))
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

/// One line on standard error itself (the harness hides eprintln! of passing tests).
fn skip_without_script() {
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "skipped: a terminal test needs `script` (util-linux) on this machine"
    );
}

/// Every size a cell holds has its number on the same line: no `23.1` / `MiB` split.
fn no_split_numbers(view: &str) -> bool {
    view.lines().all(|line| {
        let words: Vec<&str> = line.split_whitespace().collect();
        words.iter().enumerate().all(|(i, w)| {
            !["B", "KiB", "MiB", "GiB", "ms", "s"].contains(w)
                || i > 0 && words[i - 1].chars().any(|c| c.is_ascii_digit())
        })
    })
}

#[test]
fn a_terminal_reporting_zero_columns_gets_columns_then_80() {
    let logs = [
        "testdata/logs/failed",
        "testdata/logs/rolling/zstd",
        // Its header says why it is a batch program in a line longer than any terminal.
        "testdata/logs/platforms/connect-plugin-loop",
        &pattern_log("spill")
            .strip_prefix(repo())
            .unwrap()
            .display()
            .to_string(),
    ];
    for log in logs {
        for (columns, width) in [(Some("100"), 100), (None, 80), (Some("0"), 80)] {
            let Some(view) = on_zero_width_terminal(&format!("analyze {log}"), columns) else {
                skip_without_script();
                return;
            };
            let widest = view.lines().map(|l| l.chars().count()).max().unwrap();
            assert!(
                widest <= width && widest > width / 2,
                "{log} at COLUMNS={columns:?}: widest line {widest}\n{view}"
            );
            assert!(
                view.lines()
                    .filter(|l| l.trim().chars().count() == 1)
                    .count()
                    < 5,
                "one character a line:\n{view}"
            );
            assert!(no_split_numbers(&view), "{log} at {width}:\n{view}");
        }
    }
}

#[test]
fn stage_names_are_shortened_to_their_call_site_before_numbers_wrap() {
    for color in [false, true] {
        let Some(view) = on_terminal("analyze testdata/logs/failed", Some("100"), color) else {
            skip_without_script();
            return;
        };
        stages_fit_on_one_line_each(&view);
    }
}

fn stages_fit_on_one_line_each(view: &str) {
    let stages: Vec<&str> = view
        .lines()
        .skip_while(|l| !l.starts_with("Longest stages"))
        .skip_while(|l| !l.starts_with('─'))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .collect();
    // The five stages, each on one line with its numbers whole and its name ending in the
    // `file:line` it was called from.
    assert_eq!(stages.len(), 5, "{view}");
    for row in &stages {
        assert!(
            row.trim_end().ends_with(".py:103")
                || row.trim_end().ends_with(".py:107")
                || row.trim_end().ends_with(".py:113"),
            "{row}\n{view}"
        );
        assert!(row.contains(" ms ") || row.contains(" s "), "{row}");
    }
}

#[test]
fn a_failed_job_shows_in_every_header_of_an_app_that_exited_0() {
    let log = testdata("logs/failed");
    let json = json_of(&["analyze", log.to_str().unwrap(), "--format", "json"]);
    assert_eq!(json["application"]["status"], "succeeded");
    assert_eq!(
        json["application"]["outcome"],
        "succeeded, 1 of 5 jobs failed"
    );
    for (format, header) in [
        (
            "text",
            "Spark 4.3.0 · succeeded, 1 of 5 jobs failed · 9.3 s",
        ),
        (
            "markdown",
            "local-1796049483373 · Spark 4.3.0 · **succeeded, 1 of 5 jobs failed** · 9.3 s",
        ),
        (
            "html",
            "<p class=\"meta\">local-1796049483373 · Spark 4.3.0 · <strong class=\"bad\">succeeded, 1 of 5 jobs failed</strong> · ran 9.3 s</p>",
        ),
    ] {
        let out = sparkdiag(&["analyze", log.to_str().unwrap(), "--format", format]);
        let page = String::from_utf8(out.stdout).unwrap();
        assert!(page.contains(header), "{format}: {page}");
    }
    let healthy = json_of(&[
        "analyze",
        pattern_log("healthy").to_str().unwrap(),
        "--format",
        "json",
    ]);
    assert_eq!(healthy["application"]["outcome"], "succeeded");
}

#[test]
fn skipped_stages_do_not_read_as_the_stages_that_ran() {
    let out = sparkdiag(&["analyze", testdata("logs/failed").to_str().unwrap()]);
    let view = String::from_utf8(out.stdout).unwrap();
    let line = view
        .lines()
        .find(|l| l.trim_start().starts_with("stages"))
        .unwrap();
    assert!(line.contains("5 run (1 failed), plus 2 skipped"), "{line}");
}

/// Copies a log into `dir` under the application name `name`, as another run of it would be.
#[cfg(feature = "tables")]
fn copy_named(log: &Path, dir: &Path, file: &str, name: &str) {
    let text = std::fs::read(log).unwrap();
    let decoded = if log.extension().is_some_and(|e| e == "zstd") {
        zstd::decode_all(&text[..]).unwrap()
    } else {
        text
    };
    let text = String::from_utf8(decoded).unwrap();
    let renamed: String = text
        .lines()
        .map(|l| {
            if l.starts_with(r#"{"Event":"SparkListenerApplicationStart""#) {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v["App Name"] = Value::String(name.into());
                v.to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(dir.join(file), renamed + "\n").unwrap();
}

#[cfg(feature = "tables")]
#[test]
fn a_night_puts_failed_applications_first_and_lists_what_it_skipped() {
    let tmp = tempfile::tempdir().unwrap();
    let (logs, out) = (tmp.path().join("logs"), tmp.path().join("fleet"));
    std::fs::create_dir_all(logs.join("team-a")).unwrap();
    std::fs::create_dir_all(logs.join("team-b")).unwrap();
    // Two applications of one name from two teams, with more recoverable time than the
    // failed one, which must still come first.
    copy_named(
        &pattern_log("skew-join"),
        &logs.join("team-a"),
        "app-a",
        "nightly-etl",
    );
    copy_named(
        &pattern_log("driver-loop-serial"),
        &logs.join("team-b"),
        "app-b",
        "nightly-etl",
    );
    let failed = testdata("logs/failed/local-1796049483373");
    std::fs::copy(&failed, logs.join("failed-app")).unwrap();
    let killed = std::fs::read_dir(testdata("logs/killed/single"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::copy(&killed, logs.join(killed.file_name().unwrap())).unwrap();

    let run = sparkdiag(&[
        "batch",
        logs.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--date",
        "2026-11-30",
        "--jobs",
        "2",
    ]);
    let said = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{said}");
    assert!(said.contains("1 failed or with failed jobs"), "{said}");
    assert!(
        said.contains("succeeded, 1 of 5 jobs failed") && said.contains("failed-app"),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "skipped, still being written: {}",
            logs.join(killed.file_name().unwrap()).display()
        )),
        "{said}"
    );

    let index = std::fs::read_to_string(out.join("index.html")).unwrap();
    assert!(
        index.contains("3 application(s): <span class=\"reg\">1 failed or with failed jobs</span>"),
        "{index}"
    );
    let table = &index[index.find("<h2>Applications").unwrap()..];
    let rows: Vec<&str> = table
        .lines()
        .filter(|l| l.starts_with("<tr><td>"))
        .take(3)
        .collect();
    assert!(
        rows[0].contains("sparkdiag-fixture failed")
            && rows[0].contains("succeeded, 1 of 5 jobs failed"),
        "the failed application is first: {rows:#?}"
    );
    // The two of one name are told apart by the logs they came from.
    assert!(
        rows[1..].iter().any(|r| r.contains("team-a/app-a"))
            && rows[1..].iter().any(|r| r.contains("team-b/app-b")),
        "{rows:#?}"
    );
    assert!(
        index.contains("Logs still being written, skipped")
            && index.contains(&*killed.file_name().unwrap().to_string_lossy()),
        "{index}"
    );
}

#[cfg(feature = "tables")]
#[test]
fn batch_stops_on_a_missing_directory_and_an_impossible_date() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("fleet");
    let missing = tmp.path().join("no-such-dir");
    let logs = testdata("logs/multi");
    let run = sparkdiag(&[
        "batch",
        logs.to_str().unwrap(),
        missing.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(run.status.code(), Some(2));
    let err = String::from_utf8_lossy(&run.stderr);
    assert_eq!(
        err.matches("no-such-dir").count(),
        1,
        "the path, once: {err}"
    );
    assert!(!out.exists(), "nothing written for a mistaken command");

    for date in ["2026-13-45", "2026-02-30", "yesterday"] {
        let run = sparkdiag(&[
            "batch",
            logs.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--date",
            date,
        ]);
        assert_eq!(run.status.code(), Some(2), "{date}");
        assert!(
            String::from_utf8_lossy(&run.stderr).contains(&format!("--date {date}")),
            "{date}"
        );
        assert!(!out.exists(), "no date={date} partition");
    }
}

#[cfg(feature = "tables")]
#[test]
fn an_unreadable_log_in_a_night_names_its_path_once() {
    let tmp = tempfile::tempdir().unwrap();
    let logs = tmp.path().join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::write(
        logs.join("broken.zstd"),
        b"\x28\xB5\x2F\xFD\xFF\xFF garbage",
    )
    .unwrap();
    let run = sparkdiag(&[
        "batch",
        logs.to_str().unwrap(),
        "-o",
        tmp.path().join("fleet").to_str().unwrap(),
        "--date",
        "2026-11-30",
    ]);
    assert!(run.status.success());
    let said = String::from_utf8_lossy(&run.stdout);
    let line = said
        .lines()
        .find(|l| l.contains("could not read"))
        .expect("the broken log is listed");
    assert_eq!(line.matches("broken.zstd").count(), 1, "{line}");
}

#[test]
fn plan_on_an_event_log_points_to_analyze() {
    for log in [
        testdata("logs/single/zstd/local-1796049355449.zstd"),
        testdata("logs/single/plain/local-1796049337368"),
    ] {
        let out = sparkdiag(&["plan", log.to_str().unwrap()]);
        assert_eq!(out.status.code(), Some(2));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("looks like") && err.contains("Spark event log"),
            "{err}"
        );
        assert!(
            err.contains(&format!("sparkdiag analyze {}", log.display())),
            "{err}"
        );
        assert!(!err.contains("UTF-8"), "{err}");
    }
}

#[test]
fn standard_input_reports_the_bytes_it_read() {
    let log = testdata("logs/single/zstd/local-1796049355449.zstd");
    let bytes = std::fs::read(&log).unwrap();
    for format in ["json", "text"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
            .args(["analyze", "-", "--format", format])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let data = bytes.clone();
        let writer = std::thread::spawn(move || {
            use std::io::Write;
            stdin.write_all(&data).unwrap();
        });
        let out = child.wait_with_output().unwrap();
        writer.join().unwrap();
        assert!(out.status.success());
        let text = String::from_utf8(out.stdout).unwrap();
        if format == "json" {
            let report: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(
                report["source"]["files"][0]["bytes"],
                bytes.len() as u64,
                "{}",
                report["source"]
            );
        } else {
            assert!(!text.contains("(0 B)"), "{text}");
            assert!(text.contains("zstd (158.4 KiB)"), "{text}");
        }
    }
}

#[test]
fn a_cut_zstd_stream_says_it_ended_inside_a_frame() {
    let log = std::fs::read_dir(testdata("logs/killed/single"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let json = json_of(&["analyze", log.to_str().unwrap(), "--format", "json"]);
    let warnings = json["source"]["warnings"].as_array().unwrap();
    let cut = warnings
        .iter()
        .filter_map(Value::as_str)
        .find(|w| w.contains("stream is cut short"))
        .expect("a warning about the cut stream");
    let size = std::fs::metadata(&log).unwrap().len();
    assert!(
        cut.contains(&format!("its {size} bytes end inside a compressed frame")),
        "{cut}"
    );
    assert!(!cut.contains(&format!("{size} of {size}")), "{cut}");
}

#[test]
fn a_job_train_is_named_by_the_users_call_not_a_pool_thread() {
    let json = json_of(&[
        "analyze",
        pattern_log("driver-loop-threadpool").to_str().unwrap(),
        "--format",
        "json",
    ]);
    let train = json["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["rule"] == "DR002")
        .expect("DR002 fires on the thread-pool loop");
    let title = train["title"].as_str().unwrap();
    assert!(
        title.contains("`parquet at DataFrameWriter.scala:383` (month ")
            && title.contains(": filter + groupBy + write, and ")
            && !title.contains('#'),
        "{title}"
    );
    assert!(
        !title.contains("CompletableFuture") && !title.contains("$anonfun"),
        "{title}"
    );
}

#[test]
fn the_rule_list_has_no_trailing_blanks() {
    let out = sparkdiag(&["rules"]);
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().count() > 30, "{text}");
    for line in text.lines() {
        assert_eq!(line, line.trim_end(), "trailing blanks: {line:?}");
    }
}

#[test]
fn the_readme_sends_users_to_nothing_outside_the_repository() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    assert!(!readme.contains("../shared"), "a user has no ../shared");
    assert!(
        readme.contains("cargo install --path . --locked"),
        "how to get sparkdiag on the PATH"
    );
    for shorthand in ["the brief", "rule R"] {
        assert!(!readme.contains(shorthand), "{shorthand}");
    }
}

/// The sparkdiag crates a manifest's `[dependencies]` names, without the prefix; those only its
/// `testing` feature turns on (for other crates' tests) are left out, as the page leaves them out.
fn sparkdiag_dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap();
    let for_tests: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("testing = ["))
        .flat_map(|l| l.split('"'))
        .filter_map(|d| d.strip_prefix("dep:sparkdiag-"))
        .collect();
    let deps = text.split("\n[dependencies]\n").nth(1).unwrap_or_default();
    let deps = deps.split("\n[").next().unwrap_or_default();
    let mut names: Vec<String> = deps
        .lines()
        .filter_map(|l| l.strip_prefix("sparkdiag-"))
        .map(|l| l.split(['.', ' ', '=']).next().unwrap().to_string())
        .filter(|name| !for_tests.contains(&name.as_str()))
        .collect();
    names.sort();
    names
}

#[test]
fn the_architecture_pages_crate_graph_is_the_manifests() {
    let page = std::fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    let graph = page
        .split("```text\neventlog, plan")
        .nth(1)
        .expect("docs/architecture.md draws the crate graph")
        .split("```")
        .next()
        .unwrap();
    let mut drawn: Vec<(String, Vec<String>)> =
        vec![("eventlog".into(), Vec::new()), ("plan".into(), Vec::new())];
    for line in graph.lines().filter(|l| l.contains("->")) {
        let (name, deps) = line.split_once("->").unwrap();
        let name = name.split_whitespace().next().unwrap().to_string();
        let mut deps: Vec<String> = deps.split(',').map(|d| d.trim().to_string()).collect();
        deps.sort();
        drawn.push((name, deps));
    }
    drawn.sort();
    let mut manifests = vec![(
        "sparkdiag".to_string(),
        sparkdiag_dependencies(&repo().join("Cargo.toml")),
    )];
    for entry in std::fs::read_dir(repo().join("crates")).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        manifests.push((name, sparkdiag_dependencies(&dir.join("Cargo.toml"))));
    }
    manifests.sort();
    assert_eq!(drawn, manifests);
    // Compute below the contract, render above it: the views and the fleet's tables reach the
    // contract alone, and through it nothing that computes (no model, facts, rules, what-if).
    let depends_on = |name: &str| -> Vec<String> {
        manifests
            .iter()
            .find(|(crate_name, _)| crate_name == name)
            .map(|(_, deps)| deps.clone())
            .unwrap_or_default()
    };
    for view in ["report", "tables"] {
        let mut reached: Vec<String> = Vec::new();
        let mut next = depends_on(view);
        while let Some(dep) = next.pop() {
            if !reached.contains(&dep) {
                next.extend(depends_on(&dep));
                reached.push(dep);
            }
        }
        reached.sort();
        assert_eq!(
            reached,
            ["contract", "plan"],
            "{view} reaches more than the contract and the parsed plan it serialises"
        );
    }
    // The MCP server is a view too: it reads the contract, asks the analysis for the rest, and
    // finds logs with the reader; it builds no model and runs no rule or replay of its own.
    assert_eq!(
        depends_on("mcp"),
        ["analysis", "contract", "eventlog"],
        "mcp reads the contract and asks the analysis; nothing else"
    );
    // The facts are computed once below the rules and handed down: the what-if reads typed
    // findings and facts, and `diff` compares runs, so neither asks the rules anything.
    for reader in ["whatif", "diff"] {
        assert!(
            !depends_on(reader).contains(&"rules".to_string()),
            "{reader} depends on rules: read the contract's findings and the facts instead"
        );
    }
}

#[cfg(feature = "tables")]
#[test]
fn a_night_read_by_a_reader_that_stops_early_ends_quietly() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("fleet");
    // Like `sparkdiag batch ... | head -0`: stdout's reader is gone before the summary is printed.
    let mut child = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
        .args(["batch", "-o", out.to_str().unwrap(), "--date", "2026-11-30"])
        .arg(testdata("logs/failed/local-1796049483373"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let done = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&done.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert!(done.status.success(), "{:?}: {stderr}", done.status);
    assert!(
        out.join("index.html").exists(),
        "the night was still written"
    );
}

/// `sparkdiag plan` wraps its findings and their fixes at the terminal's width, and writes each
/// on one line into a pipe.
#[test]
fn plan_findings_wrap_at_the_terminals_width() {
    let plan = "testdata/plans/antipattern-many-exchanges.txt";
    for (columns, width) in [("80", 80), ("100", 100)] {
        let Some(view) = on_zero_width_terminal(&format!("plan {plan}"), Some(columns)) else {
            skip_without_script();
            return;
        };
        assert!(view.contains("fix: "), "{view}");
        let widest = view.lines().map(|l| l.chars().count()).max().unwrap();
        assert!(widest <= width, "widest line {widest} at {width}:\n{view}");
    }
    let piped = sparkdiag(&["plan", plan]);
    let piped = String::from_utf8(piped.stdout).unwrap();
    let fix = piped.lines().find(|l| l.contains("fix: ")).unwrap();
    assert!(fix.chars().count() > 100, "one line into a pipe: {fix}");
}
