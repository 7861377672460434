//! Parsing alone, one thread, on the real events of the Spark 4.3 rolling fixture
//! (`testdata/logs/rolling/zstd/`), per event type, in MB per CPU second: `parse_line` as the
//! reader runs it (the template for Spark's layout of task events first), `parse_line_generally`
//! (the general extractor alone; for the SQL, stage and job events the extractor reads, the
//! same as `parse_line`) and serde_json on the same lines. `SPARKDIAG_BENCH_EVENT=TaskEnd`
//! measures one type, `SPARKDIAG_BENCH_READER=line` (or `general`, `serde`) one reader, and
//! `SPARKDIAG_BENCH_COVER_MB=20` shortens the runs, for a profile under callgrind. Run with
//! `cargo bench -p sparkdiag-eventlog --bench parse`.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;

use sparkdiag_eventlog::Codec;
use sparkdiag_eventlog::events::{
    JobStart, SqlAdaptiveExecutionUpdate, SqlExecutionStart, StageEvent, TaskEnd, TaskStart,
    parse_event, parse_line, parse_line_generally, strip_task_accumulables,
};

/// A way of reading a line, by name; true if it read an event.
type Reader<'r> = (&'static str, &'r mut dyn FnMut(&[u8]) -> bool);

/// Bytes each figure covers at least (the lines of a type are parsed over and over).
const COVER: usize = 200 << 20;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/logs/rolling/zstd");
    let mut text = Vec::new();
    // The rolling log's files, in order.
    let input = &sparkdiag_eventlog::discover(dir.to_str().unwrap()).unwrap()[0];
    for part in &input.parts {
        let part = part.file().unwrap();
        let raw = std::fs::read(part).unwrap();
        Codec::Zstd
            .decoder(&raw[..])
            .read_to_end(&mut text)
            .unwrap();
    }
    let lines: Vec<&[u8]> = text
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut by_name: BTreeMap<String, Vec<&[u8]>> = BTreeMap::new();
    for line in &lines {
        let name = match parse_line(line) {
            Ok(sparkdiag_eventlog::Event::Other(_)) => "(not modelled)".to_string(),
            // Named without formatting the whole event, which would cost more than the runs
            // of a short profile (callgrind) that follow.
            Ok(sparkdiag_eventlog::Event::TaskEnd(_)) => "TaskEnd".to_string(),
            Ok(sparkdiag_eventlog::Event::TaskStart(_)) => "TaskStart".to_string(),
            Ok(event) => format!("{event:?}").split('(').next().unwrap().to_string(),
            Err(_) => "(malformed)".to_string(),
        };
        by_name.entry(name).or_default().push(line);
    }
    println!(
        "{:<28} {:>8} {:>9} {:>10} {:>10} {:>10}",
        "event", "lines", "MB", "line MB/s", "general", "serde"
    );
    let reader_only = std::env::var("SPARKDIAG_BENCH_READER").ok();
    // SPARKDIAG_BENCH_EVENT=TaskEnd measures one type alone (for a profile of it).
    let only = std::env::var("SPARKDIAG_BENCH_EVENT").ok();
    for (name, lines) in &by_name {
        if only.as_ref().is_some_and(|only| only != name) {
            continue;
        }
        let once: usize = lines.iter().map(|l| l.len()).sum();
        // SPARKDIAG_BENCH_COVER_MB=10 makes a run short enough for callgrind.
        let cover = std::env::var("SPARKDIAG_BENCH_COVER_MB")
            .ok()
            .and_then(|mb| mb.parse::<usize>().ok())
            .map_or(COVER, |mb| mb << 20);
        let passes = cover.div_ceil(once);
        let bytes = once * passes;
        // What reading cost before the extractor: cut the array out, then serde_json.
        // The events the extractor reads are read by serde_json alone here, by their type.
        let serde_only = |line: &[u8]| match name.as_str() {
            "TaskEnd" => serde_json::from_slice::<TaskEnd>(line).is_ok(),
            "TaskStart" => serde_json::from_slice::<TaskStart>(line).is_ok(),
            "StageSubmitted" | "StageCompleted" => {
                serde_json::from_slice::<StageEvent>(line).is_ok()
            }
            "JobStart" => serde_json::from_slice::<JobStart>(line).is_ok(),
            "SqlExecutionStart" => serde_json::from_slice::<SqlExecutionStart>(line).is_ok(),
            "SqlAdaptiveExecutionUpdate" => {
                serde_json::from_slice::<SqlAdaptiveExecutionUpdate>(line).is_ok()
            }
            _ => parse_event(line).is_ok(),
        };
        let mut copy = Vec::new();
        let mut serde = |line: &[u8]| {
            copy.clear();
            copy.extend_from_slice(line);
            let len = strip_task_accumulables(&mut copy);
            serde_only(&copy[..len])
        };
        let mut figures = Vec::new();
        let readers: [Reader<'_>; 3] = [
            ("line", &mut |line| parse_line(line).is_ok()),
            ("general", &mut |line| parse_line_generally(line).is_ok()),
            ("serde", &mut serde),
        ];
        for (reader, parse) in readers {
            // SPARKDIAG_BENCH_READER=line runs one reader alone (for a profile of it).
            if reader_only.as_ref().is_some_and(|only| only != reader) {
                figures.push(f64::NAN);
                continue;
            }
            let start = cpu_seconds();
            for _ in 0..passes {
                for line in lines {
                    std::hint::black_box(parse(line));
                }
            }
            figures.push(bytes as f64 / 1e6 / (cpu_seconds() - start));
        }
        println!(
            "{name:<28} {:>8} {:>9.2} {:>10.0} {:>10.0} {:>10.0}",
            lines.len(),
            once as f64 / 1e6,
            figures[0],
            figures[1],
            figures[2],
        );
    }
}

/// User + system time of this thread, in seconds (`/proc/thread-self/stat`, in ticks of 1/100 s):
/// on a machine shared with other work, wall time would count the time others ran.
fn cpu_seconds() -> f64 {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let after = stat.rsplit_once(')').unwrap().1;
    let ticks: f64 = after
        .split_whitespace()
        .skip(11)
        .take(2)
        .map(|v| v.parse::<f64>().unwrap())
        .sum();
    ticks / 100.0
}
