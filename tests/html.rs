//! `analyze --format html|markdown` and `--charts DIR` on real logs: the page is one balanced,
//! self-contained document, text from the log is escaped, and odd logs do not break it.

use std::path::{Path, PathBuf};

use crate::util::{json_of, sparkdiag, testdata};

/// The one log file of a planted pattern, by its name in PATTERNS.tsv.
fn pattern(name: &str) -> PathBuf {
    let table = std::fs::read_to_string(testdata("logs/patterns/PATTERNS.tsv")).unwrap();
    let path = table
        .lines()
        .skip(1)
        .map(|line| line.split('\t').collect::<Vec<_>>())
        .find(|cols| cols[0] == name)
        .unwrap_or_else(|| panic!("no pattern {name} in PATTERNS.tsv"))[1];
    testdata("logs").join(path)
}

fn the_plain_log() -> PathBuf {
    let dir = testdata("logs/single/plain");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "one plain log in {}", dir.display());
    files.pop().unwrap()
}

fn page_of(log: &Path, extra: &[&str]) -> String {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.html");
    let mut args = vec![
        "analyze",
        log.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        out.to_str().unwrap(),
    ];
    args.extend_from_slice(extra);
    let run = sparkdiag(&args);
    assert!(
        run.status.success(),
        "sparkdiag {args:?}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    std::fs::read_to_string(&out).unwrap()
}

/// Every element opened is closed, in order: a small parser for the page this tool writes
/// (attribute values are escaped, so `>` only ends tags).
fn assert_balanced(html: &str) {
    const VOID: [&str; 10] = [
        "meta", "br", "hr", "img", "input", "link", "wbr", "col", "area", "source",
    ];
    let mut stack: Vec<String> = Vec::new();
    let mut rest = html;
    while let Some(open) = rest.find('<') {
        rest = &rest[open + 1..];
        let close = rest.find('>').expect("a tag is closed by >");
        let tag = &rest[..close];
        rest = &rest[close + 1..];
        if tag.starts_with('!') || tag.ends_with('/') {
            continue;
        }
        let name: String = tag
            .trim_start_matches('/')
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric())
            .collect::<String>()
            .to_ascii_lowercase();
        assert!(!name.is_empty(), "not a tag: <{tag}>");
        if VOID.contains(&name.as_str()) {
            continue;
        }
        if tag.starts_with('/') {
            let top = stack.pop();
            assert_eq!(
                top.as_deref(),
                Some(name.as_str()),
                "</{name}> closes <{top:?}>"
            );
        } else {
            stack.push(name);
        }
    }
    assert!(stack.is_empty(), "never closed: {stack:?}");
}

fn assert_self_contained(html: &str) {
    for external in [
        "src=\"http",
        "href=\"http",
        "<link",
        "@import",
        "url(",
        "<script",
        "<img",
        "<iframe",
    ] {
        assert!(!html.contains(external), "the page holds {external}");
    }
}

#[test]
fn of_a_skewed_join_has_every_chart_and_stands_alone() {
    let html = page_of(&pattern("skew-join"), &[]);
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert_balanced(&html);
    assert_self_contained(&html);
    // The skewed join spills too, so all six charts have data, and the what-if section has its
    // chart of predicted wall clock by cores.
    // Each is drawn twice, for a wide page and for a phone, and the style shows one.
    assert_eq!(
        html.matches("<svg").count(),
        14,
        "seven inline charts, twice"
    );
    assert_eq!(html.matches("<div class=\"chart narrow\">").count(), 7);
    assert!(html.contains("aria-label=\"Predicted wall clock by executor cores\""));
    // Every chart says what it is to a screen reader.
    assert_eq!(
        html.matches("<svg role=\"img\" aria-label=\"").count(),
        14,
        "each <svg> has a role and a label"
    );
    assert_eq!(
        html.matches("<title>").count(),
        15,
        "the page's and each chart's"
    );
    for title in [
        "Stage timeline",
        "Executor cores busy over time",
        "Task durations of the worst stages",
        "GC share per executor",
        "Spill per stage",
        "Memory peaks against limits",
    ] {
        assert!(html.contains(title), "chart {title}");
    }
    assert!(html.contains("SK001"), "the skew finding is shown");
    assert!(
        html.contains("sev-high"),
        "findings carry their severity colour"
    );
}

#[test]
fn says_why_a_chart_is_missing() {
    // gc-pressure does not spill.
    let html = page_of(&pattern("gc-pressure"), &[]);
    assert_balanced(&html);
    assert_self_contained(&html);
    // Five of the six charts, and the what-if chart, each drawn wide and for a phone.
    assert_eq!(html.matches("<svg").count(), 12);
    assert!(html.contains("No stage spilled"));
    assert!(html.contains("GC001"));
}

#[test]
fn of_a_failed_application_shows_the_failure() {
    let html = page_of(&testdata("logs/failed"), &[]);
    assert_balanced(&html);
    assert_self_contained(&html);
    assert!(html.contains("Failed jobs"));
    // The job failed though the application went on and ended well.
    assert!(html.contains("ValueError: bad row 1234"));
    assert!(
        html.contains("<pre>"),
        "the failure message is shown as written"
    );
}

/// Sets every `key` field, at any depth, to `value`; how many it set.
fn replace_field(json: &mut serde_json::Value, key: &str, value: &str) -> usize {
    match json {
        serde_json::Value::Object(map) => map
            .iter_mut()
            .map(|(k, v)| {
                if k == key {
                    *v = value.into();
                    1
                } else {
                    replace_field(v, key, value)
                }
            })
            .sum(),
        serde_json::Value::Array(items) => {
            items.iter_mut().map(|v| replace_field(v, key, value)).sum()
        }
        _ => 0,
    }
}

#[test]
fn escapes_a_hostile_application_name() {
    let text = std::fs::read_to_string(the_plain_log()).unwrap();
    let hostile = "<script>alert(1)</script>";
    // Stage names reach the tables, the finding titles and the charts' SVG labels.
    let hostile_stage = "<img src=x onerror=alert(2)>|`x`";
    let mut replaced = 0;
    let copy: String = text
        .lines()
        .map(|line| {
            if line.contains("\"Event\":\"SparkListenerApplicationStart\"") {
                let mut event: serde_json::Value = serde_json::from_str(line).unwrap();
                event["App Name"] = hostile.into();
                replaced += 1;
                format!("{event}\n")
            } else if line.contains("\"Stage Name\"") {
                let mut event: serde_json::Value = serde_json::from_str(line).unwrap();
                replace_field(&mut event, "Stage Name", hostile_stage);
                format!("{event}\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect();
    assert_eq!(replaced, 1);
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("local-1796049337368");
    std::fs::write(&log, copy).unwrap();
    assert_eq!(
        json_of(&["analyze", log.to_str().unwrap(), "--format", "json"])["application"]["name"],
        hostile,
        "the copy carries the hostile name"
    );

    let html = page_of(&log, &[]);
    assert!(!html.contains(hostile), "the name went out unescaped");
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
    assert!(!html.contains("<img"), "a stage name went out unescaped");
    assert!(
        html.contains("&lt;img src=x"),
        "stage names are shown, escaped"
    );
    assert_balanced(&html);
    assert_self_contained(&html);

    let md = sparkdiag(&["analyze", log.to_str().unwrap(), "--format", "markdown"]);
    let md = String::from_utf8(md.stdout).unwrap();
    assert!(!md.contains(hostile));
    assert!(!md.contains("<img"));
    assert!(md.contains("&lt;script&gt;"));
}

#[test]
fn survives_logs_cut_short() {
    let text = std::fs::read_to_string(the_plain_log()).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let start = lines
        .iter()
        .position(|l| l.contains("\"Event\":\"SparkListenerApplicationStart\""))
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (name, keep) in [
        // The application started and nothing else happened: no stage, no task, no end.
        ("no-tasks", start + 1),
        // Cut mid-run: stages without completion, no application end.
        ("incomplete", lines.len() / 2),
    ] {
        let log = dir.path().join(name);
        std::fs::write(&log, lines[..keep].join("\n") + "\n").unwrap();
        let html = page_of(&log, &[]);
        assert_balanced(&html);
        assert_self_contained(&html);
        assert!(html.contains("incomplete"), "{name}: says so");
        let md = sparkdiag(&["analyze", log.to_str().unwrap(), "--format", "markdown"]);
        assert!(md.status.success(), "{name}: markdown");
    }
}

#[test]
fn markdown_lists_findings_in_rank_order() {
    let log = pattern("driver-loop-serial");
    let report = json_of(&["analyze", log.to_str().unwrap(), "--format", "json"]);
    let rules: Vec<&str> = report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["rule"].as_str().unwrap())
        .collect();
    assert!(rules.len() >= 2, "{rules:?}");
    let out = sparkdiag(&["analyze", log.to_str().unwrap(), "--format", "markdown"]);
    assert!(out.status.success());
    let md = String::from_utf8(out.stdout).unwrap();
    let rows: Vec<Vec<&str>> = md
        .lines()
        .skip_while(|l| !l.starts_with("| # |"))
        .skip(2)
        .take_while(|l| l.starts_with('|'))
        .map(|l| l.split(" | ").collect())
        .collect();
    assert_eq!(rows.len(), rules.len(), "one row per finding:\n{md}");
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], format!("| {}", i + 1), "rank column");
        assert_eq!(row[3], rules[i], "row {} is finding {}", i + 1, i + 1);
    }
    assert!(md.contains("### How to fix them"));
}

#[test]
fn charts_dir_gets_an_svg_and_a_png_per_chart() {
    let dir = tempfile::tempdir().unwrap();
    let charts = dir.path().join("charts");
    let log = pattern("spill");
    let out = sparkdiag(&[
        "analyze",
        log.to_str().unwrap(),
        "--charts",
        charts.to_str().unwrap(),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for name in [
        "stage-timeline",
        "cores-busy",
        "task-durations",
        "gc-share",
        "spill",
    ] {
        let svg = std::fs::read_to_string(charts.join(format!("{name}.svg")))
            .unwrap_or_else(|e| panic!("{name}.svg: {e}"));
        assert!(svg.starts_with("<svg"), "{name}");
        assert!(svg.trim_end().ends_with("</svg>"), "{name}");
        assert_balanced(&svg);
        let png = std::fs::read(charts.join(format!("{name}.png")))
            .unwrap_or_else(|e| panic!("{name}.png: {e}"));
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name}.png is a PNG");
    }
}

#[test]
fn several_applications_share_one_page() {
    let html = page_of(&testdata("logs/multi"), &[]);
    assert_balanced(&html);
    assert_self_contained(&html);
    assert_eq!(
        html.matches("<h1>").count(),
        2,
        "one section per application"
    );
    assert!(html.contains("<title>sparkdiag: 2 applications</title>"));
}

#[test]
fn plan_refuses_the_report_formats() {
    let plan = std::fs::read_dir(testdata("plans"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "txt"))
        .expect("a plan text in testdata/plans");
    let out = sparkdiag(&["plan", plan.to_str().unwrap(), "--format", "html"]);
    // One format list for every command: a plan report says which of them it comes in.
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("has no html view; it comes as text, json"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty(), "nothing half-written");
}

#[test]
fn shows_each_plan_with_the_operators_findings_point_at() {
    let html = page_of(&pattern("skew-join"), &[]);
    let plans = &html[html.find("<h2>Query plans</h2>").expect("a plans section")..];
    // EX003 names the SortMergeJoin and its small side's Sort by Spark's node ids (those of
    // the SQL UI's plan graph: (6) and (15), the plan text's (10) and (9)); both are highlighted
    // in the finding's colour, with its code.
    for operator in [
        "SortMergeJoin</span> <span class=\"oid\">(6)",
        "Sort</span> <span class=\"oid\">(15)",
    ] {
        let at = plans
            .find(operator)
            .unwrap_or_else(|| panic!("{operator} in {plans}"));
        let line_start = plans[..at].rfind("<li>").unwrap();
        let line = &plans[line_start..at + plans[at..].find('\n').unwrap()];
        // Medium: broadcasting removes the shuffles and, with them, the skewed join stage
        // SK001 is about, whose saving EX003's holds.
        assert!(line.contains("node hot sev-medium"), "{line}");
        assert!(line.contains(">EX003</span>"), "{line}");
    }
    // Key metrics and the stages each operator ran in.
    assert!(plans.contains("rows 5,000,000"));
    assert!(plans.contains("spill 80.0 MiB"), "the sort that spilled");
    assert!(
        plans.contains("<span class=\"st\">in stages 1, 2</span>"),
        "the Exchange's writer and reader"
    );
    // Only the findings' operators are highlighted.
    assert_eq!(plans.matches("node hot").count(), 2);

    let html = page_of(&testdata("logs/failed"), &[]);
    let plans = &html[html.find("<h2>Query plans</h2>").unwrap()..];
    assert!(
        plans.contains("<strong>SQL execution 1</strong> · 8 operators · 1.3 s · fails: UDF raises on order_id 1234 · <strong class=\"qfail\">failed</strong>"),
        "the failed execution says so"
    );
    let at = plans
        .find("BatchEvalPython</span> <span class=\"oid\">(6)")
        .expect("the UDF");
    let line = &plans[plans[..at].rfind("<li>").unwrap()..at + plans[at..].find('\n').unwrap()];
    assert!(
        line.contains("node hot sev-low") && line.contains(">PL001</span>"),
        "{line}"
    );
    assert_balanced(&html);
}

/// Chromium for the end-to-end test: `chromium` on the PATH (Debian's package), or `$CHROMIUM`.
/// Without it the test is skipped with one line, except under CI (`CI` set; `.ci/run` installs
/// Debian's chromium), where its absence is a failure.
pub fn chromium() -> Option<PathBuf> {
    let named = std::env::var_os("CHROMIUM").map(PathBuf::from);
    let on_path = || {
        std::env::split_paths(&std::env::var_os("PATH")?)
            .map(|dir| dir.join("chromium"))
            .find(|p| p.is_file())
    };
    let found = named.filter(|p| p.is_file()).or_else(on_path);
    if found.is_none() {
        let why = "the HTML report's end-to-end test needs Chromium: install it \
                   (Debian/Ubuntu: apt-get install chromium; .ci/run does) or point $CHROMIUM at one";
        if std::env::var_os("CI").is_some() {
            panic!("CI is set but chromium is not installed: {why}");
        }
        use std::io::Write;
        let _ = writeln!(std::io::stderr(), "skipped: {why}");
    }
    found
}

/// Headless Chromium that reaches out to nothing on its own (no updates, sync or first-run
/// pages), so the tests see only the page they load.
pub const CHROMIUM_QUIET: [&str; 7] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
];

/// Runs `cmd`, killing it after `limit`: a hung browser must fail the test, not hang it.
pub(crate) fn output_within(
    mut cmd: std::process::Command,
    limit: std::time::Duration,
) -> std::process::Output {
    use std::process::Stdio;
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    // Drain both pipes while waiting, so a full pipe cannot stall the browser.
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut buf).ok();
        buf
    });
    let err = std::thread::spawn(move || {
        let mut buf = Vec::new();
        std::io::Read::read_to_end(&mut stderr, &mut buf).ok();
        buf
    });
    let start = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for chromium") {
            break status;
        }
        if start.elapsed() > limit {
            child.kill().ok();
            child.wait().ok();
            panic!("chromium did not finish within {limit:?}");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    std::process::Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// The page as a browser sees it: headless Chromium loads the report and dumps the DOM it
/// built. Skipped with one line when Chromium is missing, except under CI.
#[test]
fn renders_in_headless_chromium_without_console_errors() {
    let Some(browser) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let log = pattern("skew-join");
    let run = sparkdiag(&[
        "analyze",
        log.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let profile = dir.path().join("profile");
    let mut cmd = std::process::Command::new(&browser);
    cmd.args(CHROMIUM_QUIET);
    cmd.args([
        &format!("--user-data-dir={}", profile.display()),
        "--enable-logging=stderr",
        "--v=0",
        "--virtual-time-budget=2000",
        "--dump-dom",
        &format!("file://{}", page.display()),
    ]);
    let out = output_within(cmd, std::time::Duration::from_secs(120));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "{} exited with {}: {stderr}",
        browser.display(),
        out.status
    );
    let dom = String::from_utf8(out.stdout).expect("the DOM is UTF-8");
    assert!(
        dom.contains("<h1>sparkdiag-pattern skew-join</h1>"),
        "the app name:\n{dom}"
    );
    assert_eq!(
        dom.matches("<svg").count(),
        14,
        "each chart's two <svg> (six charts and the what-if chart) are in the DOM"
    );
    for title in [
        "Stage timeline",
        "Executor cores busy over time",
        "Task durations of the worst stages",
        "GC share per executor",
        "Spill per stage",
        "Memory peaks against limits",
    ] {
        assert!(dom.contains(title), "chart {title}");
    }
    assert!(dom.contains("Query plans") && dom.contains("node hot sev-medium"));
    // The page has no script, so any console message at all is a fault. (Chromium logs
    // console.error() as INFO:CONSOLE, so "CONSOLE" alone is matched, not "CONSOLE" + "ERROR".)
    let faults: Vec<&str> = stderr
        .lines()
        .filter(|l| {
            l.contains("CONSOLE") || l.contains("Uncaught") || l.contains("Failed to load resource")
        })
        .collect();
    assert!(faults.is_empty(), "console errors:\n{}", faults.join("\n"));
}

/// What the probe script measures of the page as laid out at one window width.
const LAYOUT_PROBE: &str = r#"<script>
const vw = document.documentElement.clientWidth;
const shown = (e) => e.getClientRects().length > 0;
const report = { innerWidth: window.innerWidth, viewport: vw,
  scrollWidth: document.documentElement.scrollWidth, cards: 0, clipped: [], charts: [],
  boxes: [], overflowing: [] };
for (const card of document.querySelectorAll("article.finding, .numbers > div")) {
  report.cards += 1;
  const r = card.getBoundingClientRect();
  if (card.scrollWidth > card.clientWidth + 1 || r.left < -0.5 || r.right > vw + 0.5) {
    report.clipped.push(card.textContent.trim().slice(0, 80));
  }
}
for (const svg of document.querySelectorAll("figure svg")) {
  if (!shown(svg)) continue;
  const r = svg.getBoundingClientRect();
  let smallest = Infinity;
  for (const t of svg.querySelectorAll("text")) {
    if (!t.textContent.trim()) continue;
    smallest = Math.min(smallest, t.getBoundingClientRect().height);
  }
  report.charts.push({ label: svg.getAttribute("aria-label"), left: r.left, right: r.right,
    smallestText: smallest });
}
for (const box of document.querySelectorAll(".scroll, details.plan, pre")) {
  if (!shown(box)) continue;
  const r = box.getBoundingClientRect();
  report.boxes.push({ what: box.className || box.tagName, left: r.left, right: r.right });
}
for (const e of document.querySelectorAll("main *")) {
  if (!shown(e) || e.closest(".scroll, details.plan, pre, svg")) continue;
  const r = e.getBoundingClientRect();
  if (r.right > vw + 0.5) report.overflowing.push(e.tagName + "." + e.className);
}
const pre = document.createElement("pre");
pre.id = "layout-probe";
pre.textContent = JSON.stringify(report);
// Inside the phone-width frame the result goes to the page Chromium dumps.
(window.frameElement ? window.parent.document : document).body.appendChild(pre);
</script>"#;

/// The report at `width` CSS pixels as headless Chromium lays it out, measured by
/// [`LAYOUT_PROBE`] (appended to a copy of the page; the report itself has no script).
fn layout_at(browser: &Path, page: &Path, width: u32) -> serde_json::Value {
    let html = std::fs::read_to_string(page).unwrap();
    let probe = page.with_file_name(format!("probe-{width}.html"));
    let probed = html.replace("</body>", &format!("{LAYOUT_PROBE}\n</body>"));
    // Headless Chromium will not open a window narrower than 500 px, so a phone's width is a
    // frame of that width (its own viewport: the page's media queries and `innerWidth` see it).
    let written = if width < 500 {
        let escaped = probed.replace('&', "&amp;").replace('"', "&quot;");
        format!(
            "<!doctype html><html><body style=\"margin:0\"><iframe style=\"border:0;width:{width}px;height:900px\" srcdoc=\"{escaped}\"></iframe></body></html>"
        )
    } else {
        probed
    };
    std::fs::write(&probe, written).unwrap();
    let profile = page.with_file_name(format!("profile-{width}"));
    let mut cmd = std::process::Command::new(browser);
    cmd.args(CHROMIUM_QUIET);
    cmd.args([
        &format!("--user-data-dir={}", profile.display()),
        &format!("--window-size={},900", width.max(500)),
        "--hide-scrollbars",
        "--virtual-time-budget=2000",
        "--dump-dom",
        &format!("file://{}", probe.display()),
    ]);
    let out = output_within(cmd, std::time::Duration::from_secs(120));
    assert!(
        out.status.success(),
        "{} exited with {}: {}",
        browser.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let dom = String::from_utf8(out.stdout).expect("the DOM is UTF-8");
    let start = dom
        .find("<pre id=\"layout-probe\">")
        .unwrap_or_else(|| panic!("the probe did not run at {width} px"))
        + "<pre id=\"layout-probe\">".len();
    let json = &dom[start..start + dom[start..].find("</pre>").unwrap()];
    // The DOM dump escapes the text as HTML.
    let json = json
        .replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"))
}

/// At a phone's 420 px the report fits its width: nothing but the boxes meant to scroll
/// (tables, plans, stack traces) is wider than the screen, no card's text runs out of it, and
/// each chart is drawn to the screen's width with its smallest label at least 8 px tall; at a
/// desktop's 1280 px the wide drawings show with their labels at full size.
#[test]
fn reads_at_phone_width_in_headless_chromium() {
    let Some(browser) = chromium() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let page = dir.path().join("report.html");
    let log = pattern("skew-join");
    let run = sparkdiag(&[
        "analyze",
        log.to_str().unwrap(),
        "--format",
        "html",
        "-o",
        page.to_str().unwrap(),
    ]);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    for (width, smallest_label) in [(420, 8.0), (1280, 9.5)] {
        let at = layout_at(&browser, &page, width);
        let num = |v: &serde_json::Value| v.as_f64().unwrap_or(f64::NAN);
        assert_eq!(
            num(&at["innerWidth"]),
            f64::from(width),
            "the window is {width} px"
        );
        let viewport = num(&at["viewport"]);
        assert!(
            num(&at["scrollWidth"]) <= viewport,
            "{width} px: the page scrolls sideways: {at}"
        );
        assert!(
            num(&at["cards"]) >= 5.0,
            "{width} px: findings and tiles: {at}"
        );
        assert_eq!(
            at["clipped"],
            serde_json::json!([]),
            "{width} px: cards cut off"
        );
        assert_eq!(
            at["overflowing"],
            serde_json::json!([]),
            "{width} px: elements past the right edge"
        );
        let charts = at["charts"].as_array().unwrap();
        assert_eq!(
            charts.len(),
            7,
            "{width} px: one drawing of each chart shows: {at}"
        );
        for chart in charts {
            assert!(
                num(&chart["left"]) >= 0.0 && num(&chart["right"]) <= viewport,
                "{width} px: a chart is wider than the screen: {chart}"
            );
            assert!(
                num(&chart["smallestText"]) >= smallest_label,
                "{width} px: a chart's label is too small to read: {chart}"
            );
        }
        for b in at["boxes"].as_array().unwrap() {
            assert!(
                num(&b["left"]) >= 0.0 && num(&b["right"]) <= viewport,
                "{width} px: a scrolling box is wider than the screen: {b}"
            );
        }
    }
}
