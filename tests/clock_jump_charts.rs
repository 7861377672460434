//! The charts of logs whose clock jumped (issue 53): every time axis spans the application's
//! own time, the jump cut out and labelled, not an axis that reads months with the work in a
//! sliver at its left; and on a log whose clock did not jump, nothing about the axes changes.

use std::path::Path;

use serde_json::Value;
use sparkdiag_analysis::{Analysis, Options};
use sparkdiag_report::charts::{Chart, render_all};

use crate::util::{shared_opt, testdata};

const DAY_MS: i64 = 86_400_000;

/// The one application of the log at `path`, analysed as `sparkdiag analyze` does.
fn analyse(path: &Path) -> Analysis {
    let config = sparkdiag_rules::Config::default();
    let options = Options::new(&config);
    let inputs = sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap();
    assert_eq!(inputs.len(), 1, "{}", path.display());
    sparkdiag_analysis::analyze(&inputs[0], &options).unwrap_or_else(|e| panic!("{e}"))
}

/// The charts that draw the application's time, by name.
const TIME_CHARTS: [&str; 2] = ["stage-timeline", "cores-busy"];

fn time_charts(a: &Analysis) -> Vec<Chart> {
    render_all(&a.report, &a.view_data())
        .into_iter()
        .filter(|c| TIME_CHARTS.contains(&c.name))
        .collect()
}

/// The text of every `<text>` element of an SVG, as plotters writes them.
fn svg_texts(svg: &str) -> Vec<String> {
    svg.split("<text")
        .skip(1)
        .filter_map(|t| Some(t[t.find('>')? + 1..t.find("</text>")?].trim().to_string()))
        .collect()
}

/// The application's runtime without its clock jumps, in seconds, as the report says it.
fn runtime_s(a: &Analysis) -> f64 {
    a.report.application.duration_ms.expect("a runtime") as f64 / 1000.0
}

/// What every time chart of `a` must show: an axis spanning the application's runtime
/// (within a second) whose ticks read seconds, not the months or years its clock jumped, and
/// one labelled cut per jump of at least `jumps_days` days (none when empty).
fn assert_time_axes(a: &Analysis, what: &str, jumps_days: &[f64]) {
    let runtime = runtime_s(a);
    let charts = time_charts(a);
    assert_eq!(charts.len(), TIME_CHARTS.len(), "{what}");
    for chart in &charts {
        let name = format!("{what}: {}", chart.name);
        let svg = chart
            .svg
            .as_deref()
            .unwrap_or_else(|| panic!("{name}: not drawn: {}", chart.caption));
        let span = chart.time_span_s().unwrap();
        assert!(
            (span - runtime).abs() <= 1.0,
            "{name}: the axis spans {span} s of a {runtime} s run"
        );
        let ticks: Vec<f64> = chart.axis_labels()[0]
            .iter()
            .map(|t| t.parse().unwrap())
            .collect();
        let top = ticks.iter().copied().fold(f64::MIN, f64::max);
        assert!(
            top >= span && top < 2.0 * runtime + 1.0,
            "{name}: ticks {ticks:?} for a {runtime} s run"
        );
        let texts = svg_texts(svg);
        let breaks = chart.clock_breaks();
        assert_eq!(breaks.len(), jumps_days.len(), "{name}: {breaks:?}");
        for (b, &days) in breaks.iter().zip(jumps_days) {
            let jumped = b.jumped_ms as f64 / DAY_MS as f64;
            assert!(
                (jumped - days).abs() < 1.0,
                "{name}: a cut of {jumped} days, not {days}"
            );
            assert!(
                b.at_ms >= 0 && b.at_ms as f64 / 1000.0 <= span,
                "{name}: the cut at {} ms is off the axis",
                b.at_ms
            );
            let label = format!("clock jumped {jumped:.1} days: left out");
            assert!(texts.contains(&label), "{name}: no {label:?} in {texts:?}");
            assert!(
                chart
                    .caption
                    .contains(&format!("clock jumped {jumped:.1} days")),
                "{name}: {}",
                chart.caption
            );
        }
        let title = match breaks.len() {
            0 => "seconds since application start",
            1 => "seconds since application start, its clock jump left out",
            _ => "seconds since application start, its clock jumps left out",
        };
        assert!(texts.iter().any(|t| t == title), "{name}: {texts:?}");
        if breaks.is_empty() {
            assert!(
                !svg.contains("clock jumped") && !chart.caption.contains("clock jumped"),
                "{name}: a cut on a log whose clock did not jump"
            );
        }
    }
}

/// Every timestamp of `log` from `cut_ms` on moved `days` later: the log a driver writes whose
/// clock stepped forward in the middle of the run. Integers that are epoch milliseconds are
/// times wherever they sit (event times, stage, job, task and SQL times); strings are kept.
fn jumped_log(log: &Path, cut_ms: i64, days: i64, into: &Path) -> std::path::PathBuf {
    fn shift(value: &mut Value, cut_ms: i64, by: i64) {
        match value {
            Value::Number(n) => {
                if let Some(t) = n
                    .as_i64()
                    .filter(|t| (cut_ms..2_500_000_000_000).contains(t))
                {
                    *value = Value::from(t + by);
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| shift(v, cut_ms, by)),
            Value::Object(fields) => fields.values_mut().for_each(|v| shift(v, cut_ms, by)),
            _ => {}
        }
    }
    let text = std::fs::read_to_string(log).unwrap();
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            let mut event: Value = serde_json::from_str(line).unwrap();
            shift(&mut event, cut_ms, days * DAY_MS);
            event.to_string()
        })
        .collect();
    let path = into.join(format!("jumped-{days}d"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

/// A real Spark 4.3 log, and the same log with its clock jumped 400 days during the run: the
/// jumped log's charts are the real log's (same runtime, same stages, the same busy cores),
/// with a cut where the jump was; the real log's have none.
#[test]
fn a_clock_jump_in_the_middle_of_a_run_is_cut_out_of_every_time_axis() {
    let real = testdata("logs/single/plain/local-1796049337368");
    let steady = analyse(&real);
    assert!(steady.app.clock_jumps.is_empty());
    assert_time_axes(&steady, "the real log", &[]);

    let app = &steady.report.application;
    let (start, end) = (app.start_ms.unwrap(), app.end_ms.unwrap());
    // Four fifths of the way through, where a task ends every few milliseconds: the stretch
    // with no event around the cut, which goes with the jump, is short. (Halfway, the driver
    // sat alone for 7 s, which the jump would take with it.)
    let cut = start + (end - start) * 4 / 5;
    let dir = tempfile::tempdir().unwrap();
    let jumped = analyse(&jumped_log(&real, cut, 400, dir.path()));
    assert_eq!(jumped.app.clock_jumps.len(), 1, "the rewrite jumps once");
    assert_time_axes(&jumped, "the jumped log", &[400.0]);
    // Only the few milliseconds between the last event before the cut and the first after
    // it go with the jump.
    assert!(
        (runtime_s(&jumped) - runtime_s(&steady)).abs() <= 1.0,
        "{} s against {} s",
        runtime_s(&jumped),
        runtime_s(&steady)
    );
    let (steady_charts, jumped_charts) = (time_charts(&steady), time_charts(&jumped));
    for (before, after) in steady_charts.iter().zip(&jumped_charts) {
        assert_eq!(before.row_labels(), after.row_labels(), "{}", before.name);
        let cut_s = after.clock_breaks()[0].at_ms as f64 / 1000.0;
        assert!(
            (cut_s - (cut - start) as f64 / 1000.0).abs() <= 1.0,
            "{}: the cut at {cut_s} s, the jump at {} ms",
            after.name,
            cut - start
        );
    }
    // The busy task slots: the same work over the same time, not one slice of 400 days.
    let busy = |a: &Analysis| {
        let view = a.view_data();
        let slice_s = view.chart_span_ms().unwrap() as f64 / 1000.0 / view.busy_slots.len() as f64;
        view.busy_slots.iter().sum::<f64>() * slice_s
    };
    let (before, after) = (busy(&steady), busy(&jumped));
    assert!(before > 1.0, "{before} task-seconds");
    assert!(
        (after - before).abs() <= before * 0.05,
        "{after} task-seconds busy against {before}"
    );
    // No finding counts the jump: the same rules fire, with the same costs (UT001 once read
    // 400 days of two idle cores as 9,600 core-hours, and GC002 as 400 days of heap).
    let costs = |a: &Analysis| -> Vec<(String, i64, i64)> {
        a.report
            .findings
            .iter()
            .map(|f| {
                let core_hours = f.finding.cost_core_hours.unwrap_or(0.0);
                (
                    f.finding.rule.to_string(),
                    f.finding.impact_ms / 1000,
                    core_hours as i64,
                )
            })
            .collect()
    };
    assert_eq!(costs(&jumped), costs(&steady));
    // The page says it too, in both drawings of each chart.
    let page = sparkdiag_report::analyze::html::render(&[(&jumped.report, &jumped.view_data())]);
    assert_eq!(
        page.matches("clock jumped 400.0 days: left out").count(),
        2 * TIME_CHARTS.len(),
        "a labelled cut in the wide and narrow drawing of each time chart"
    );
}

/// The real sparkscope log whose clock jumps 65 days after its last task (a task end from
/// another run): its axes read its 8 s, not 6,000,000 s; and the logs whose 1,918-day jump
/// ends at the application's start draw no cut, that time being before the axis starts.
#[test]
fn the_real_logs_whose_clock_jumped_chart_their_own_seconds() {
    let Some(dir) = shared_opt("real-world/sparkscope/eventlog") else {
        return;
    };
    let removed = analyse(&dir.join("app-20231025121456-0004-eventLog-finished-exec-removed"));
    assert!(runtime_s(&removed) < 60.0);
    assert_time_axes(&removed, "finished-exec-removed", &[65.0]);
    let finished = analyse(&dir.join("app-20231025121456-0004-eventLog-finished"));
    assert_eq!(finished.app.clock_jumps.len(), 1, "the 1,918-day jump");
    assert_time_axes(&finished, "finished", &[]);
}

/// `diff` of the real log against itself with its clock jumped: AFTER's stage timeline, its
/// matched work's times and its cut say the run's own seconds, on a page that labels the cut.
#[test]
fn a_diff_against_a_run_whose_clock_jumped_compares_seconds_with_seconds() {
    let real = testdata("logs/single/plain/local-1796049337368");
    let steady = analyse(&real);
    let app = &steady.report.application;
    let (start, end) = (app.start_ms.unwrap(), app.end_ms.unwrap());
    let cut = start + (end - start) * 4 / 5;
    let dir = tempfile::tempdir().unwrap();
    let jumped = jumped_log(&real, cut, 400, dir.path());
    let (before, after) = (real.to_str().unwrap(), jumped.to_str().unwrap());
    let out = crate::util::sparkdiag(&["diff", before, after, "--format", "json"]);
    let d: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert!(d["before"].get("clock_breaks").is_none(), "{}", d["before"]);
    let breaks = d["after"]["clock_breaks"].as_array().unwrap();
    assert_eq!(breaks.len(), 1, "{breaks:?}");
    let jumped_days = breaks[0]["jumped_ms"].as_f64().unwrap() / DAY_MS as f64;
    assert!((jumped_days - 400.0).abs() < 1.0, "{jumped_days}");
    let duration = d["after"]["duration_ms"].as_i64().unwrap();
    for span in d["after"]["timeline"].as_array().unwrap() {
        let stage_end = span["end_ms"].as_i64().unwrap();
        assert!(stage_end <= duration, "{span} in a run of {duration} ms");
    }
    for work in d["work"].as_array().unwrap() {
        for key in ["time_ms", "wall_ms"] {
            let (b, a) = (&work["before"][key], &work["after"][key]);
            if let (Some(b), Some(a)) = (b.as_i64(), a.as_i64()) {
                assert!(
                    a <= b + 1000,
                    "{} {key}: {b} ms before, {a} ms after",
                    work["label"]
                );
            }
        }
    }
    let out = crate::util::sparkdiag(&["diff", before, after, "--format", "html"]);
    let page = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        page.matches("AFTER&apos;s clock jumped 400.0 days: left out")
            .count()
            + page
                .matches("AFTER's clock jumped 400.0 days: left out")
                .count(),
        2,
        "the cut labelled in the wide and the narrow drawing"
    );
    // The timeline's ticks read the runs' seconds.
    let timeline = &page[page.find("aria-label=\"Stage timelines\"").unwrap()..];
    let timeline = &timeline[..timeline.find("</svg>").unwrap()];
    let top = svg_texts(timeline)
        .iter()
        .filter_map(|t| t.parse::<f64>().ok())
        .fold(0.0, f64::max);
    assert!(
        top > 0.0 && top < 2.0 * duration as f64 / 1000.0 + 1.0,
        "the axis runs to {top} s for runs of {duration} ms"
    );
}

/// A killed loop projected from the iterations it finished: with its clock jumped 400 days in
/// the middle of the series, the pace and the projection are the same seconds as without.
#[test]
fn a_killed_loop_whose_clock_jumped_is_projected_from_its_own_seconds() {
    let one_log = |run: &str| {
        let dir = testdata(&format!("logs/diff/{run}"));
        std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| !p.file_name().unwrap().to_string_lossy().starts_with('.'))
            .unwrap()
    };
    let (killed, fixed) = (one_log("loop-killed"), one_log("fixed"));
    let projection = |before: &Path| -> Value {
        let out = crate::util::sparkdiag(&[
            "diff",
            before.to_str().unwrap(),
            fixed.to_str().unwrap(),
            "--format",
            "json",
        ]);
        let d: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
        d["before"]["projection"].clone()
    };
    let steady = projection(&killed);
    let app = analyse(&killed).report.application;
    // A killed run has no end: its last event's time closes its duration.
    let (start, end) = (
        app.start_ms.unwrap(),
        app.start_ms.unwrap() + app.duration_ms.unwrap(),
    );
    let dir = tempfile::tempdir().unwrap();
    // The rewrite reads plain JSON lines: the zstd log decompressed first.
    let plain = dir.path().join("loop-killed");
    let mut text = Vec::new();
    std::io::Read::read_to_end(
        &mut sparkdiag_eventlog::Codec::Zstd.decoder(std::io::BufReader::new(
            std::fs::File::open(&killed).unwrap(),
        )),
        &mut text,
    )
    .unwrap();
    std::fs::write(&plain, text).unwrap();
    let jumped = jumped_log(&plain, start + (end - start) * 3 / 5, 400, dir.path());
    assert_eq!(
        analyse(&jumped).app.clock_jumps.len(),
        1,
        "the rewrite jumps once"
    );
    let after_jump = projection(&jumped);
    let ms = |p: &Value| p["duration_ms"].as_i64().unwrap_or_else(|| panic!("{p}"));
    assert_eq!(steady["iterations_done"], after_jump["iterations_done"]);
    // The quiet stretch around the cut goes with the jump (a second or two here), and the
    // projection scales the series by the iterations still to do: within 5 %, not 400 days.
    assert!(
        (ms(&after_jump) - ms(&steady)).abs() as f64 <= 0.05 * ms(&steady) as f64,
        "projected {} ms with the jump, {} ms without",
        ms(&after_jump),
        ms(&steady)
    );
}
