//! Peak memory of the analysis (read, model, rules, report: what `sparkdiag analyze` runs, and
//! the views' data `--format html` and `batch` add) on
//! large logs made from real events, with completed stages folded and with every task kept as
//! read, and the bytes a task costs either way.
//!
//! The logs come from the real Spark 4.3 rolling fixture in `testdata/logs/rolling/zstd/`: its
//! opening events (environment, executors), then `STAGES` stages of one job each, every stage
//! made of copies of the fixture's real `SparkListenerTaskStart`/`SparkListenerTaskEnd` pairs
//! (each drawn at random from its 6,046 successful tasks, so metrics and durations are real ones
//! in an order that does not repeat) with fresh task ids, partition indices, stage ids and times,
//! eight tasks running at once. They are streamed
//! straight to zstd under `target/bench-data/` (10M tasks is about 45 GB of JSON) and reused when
//! present.
//!
//! Each case runs this benchmark's own binary again as a child under `/usr/bin/time -f %M`,
//! which prints the child's peak resident set size. The cases are `TASKS/STAGES` pairs,
//! `SPARKDIAG_MEMORY_CASES` (default `1000000/7,10000000/100`); the unfolded run (the storage
//! before folding) is made for cases up to `SPARKDIAG_MEMORY_UNFOLDED_MAX` tasks (default
//! 1,000,000: 10M unfolded tasks take about 2 GB). The fixture ran in local mode, on the
//! driver alone; `SPARKDIAG_MEMORY_EXECUTORS=N` spreads the tasks over N executors in turn, as
//! on a cluster, where the rules also keep each executor's tasks' figures. Run with
//! `cargo bench -p sparkdiag-analysis --bench memory`.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use serde_json::Value;
use sparkdiag_model::ApplicationBuilder;

#[path = "shared/cpu.rs"]
mod cpu;
#[path = "shared/malloc.rs"]
mod malloc;

/// Tasks of one stage running at once in the generated logs.
const SLOTS: usize = 8;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(at) = args.iter().position(|a| a == "--analyze") {
        let unfolded = args.iter().any(|a| a == "--unfolded");
        analyze_once(Path::new(&args[at + 1]), unfolded);
        return;
    }
    let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = repo.join("target/bench-data");
    std::fs::create_dir_all(&dir).unwrap();
    let cases =
        std::env::var("SPARKDIAG_MEMORY_CASES").unwrap_or_else(|_| "1000000/7,10000000/100".into());
    let unfolded_max: usize = std::env::var("SPARKDIAG_MEMORY_UNFOLDED_MAX")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000_000);
    let executors: usize = std::env::var("SPARKDIAG_MEMORY_EXECUTORS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1);
    let source = Source::read(&repo.join("testdata/logs/rolling/zstd"), executors > 1);
    for case in cases.split(',') {
        let (tasks, stages) = case
            .split_once('/')
            .and_then(|(t, s)| Some((t.trim().parse().ok()?, s.trim().parse().ok()?)))
            .unwrap_or_else(|| panic!("a case is TASKS/STAGES, not {case}"));
        let log = dir.join(match executors {
            0 | 1 => format!("memory-{tasks}-tasks-{stages}-stages.zstd"),
            n => format!("memory-{tasks}-tasks-{stages}-stages-{n}-executors.zstd"),
        });
        if !log.exists() {
            let started = Instant::now();
            source.generate(&log, tasks, stages, executors);
            println!(
                "generated {} ({} MB zstd) in {:.0} s",
                log.display(),
                std::fs::metadata(&log).unwrap().len() >> 20,
                started.elapsed().as_secs_f64()
            );
        }
        for unfolded in [false, true] {
            if unfolded && tasks > unfolded_max {
                continue;
            }
            measure(&log, tasks, stages, unfolded);
        }
    }
}

/// Runs the analysis in a child process and prints its peak RSS and what it said.
fn measure(log: &Path, tasks: usize, stages: usize, unfolded: bool) {
    let out = Command::new("/usr/bin/time")
        .args(["-f", "peak-rss-kb %M cpu-s %U %S"])
        .arg(std::env::current_exe().unwrap())
        .arg("--analyze")
        .arg(log)
        .args(unfolded.then_some("--unfolded"))
        .output()
        .expect("/usr/bin/time runs (apt-get install time)");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "analysis failed: {stderr}");
    let numbers: Vec<f64> = stderr
        .lines()
        .find(|l| l.starts_with("peak-rss-kb "))
        .expect("/usr/bin/time printed the peak RSS")
        .split(' ')
        .filter_map(|w| w.parse().ok())
        .collect();
    let (kb, cpu_s) = (numbers[0], numbers[1] + numbers[2]);
    let said = String::from_utf8_lossy(&out.stdout);
    println!(
        "{tasks:>10} tasks / {stages:>3} stages, {:<8}: peak RSS {:>6.1} MB  CPU {cpu_s:.1} s  {}",
        if unfolded { "unfolded" } else { "folded" },
        kb / 1024.0,
        said.trim()
    );
}

/// The child: reads, models, runs the rules and builds and serialises the report.
fn analyze_once(log: &Path, unfolded: bool) {
    // As `sparkdiag` itself starts.
    malloc::release_large_blocks();
    malloc::one_arena_a_core();
    let started = Instant::now();
    let input = &sparkdiag_eventlog::discover(log.to_str().unwrap()).unwrap()[0];
    let mut builder = if unfolded {
        ApplicationBuilder::keeping_tasks_unfolded()
    } else {
        ApplicationBuilder::default()
    };
    let source = sparkdiag_eventlog::read_log(input, |event| builder.on_event(event)).unwrap();
    let app = builder.finish();
    let modelled = started.elapsed().as_secs_f64();
    let modelled_cpu = cpu::cpu_seconds();
    let model_peak_mb = peak_rss_mb();
    let config = sparkdiag_rules::Config::default();
    let analysis = sparkdiag_analysis::analyze_model(
        input,
        source,
        app,
        // As `sparkdiag analyze`: only the report and the views' data are read.
        &sparkdiag_analysis::Options {
            report_only: true,
            ..sparkdiag_analysis::Options::new(&config)
        },
    );
    let (app, report) = (&analysis.app, &analysis.report);
    serde_json::to_writer(std::io::sink(), report).unwrap();
    let total = started.elapsed().as_secs_f64();
    let analysed_cpu = cpu::cpu_seconds() - modelled_cpu;
    let unfolds = app.tasks.unfolds();
    // What `--format html` and `batch` add: the views' data, every stage's durations packed.
    let view = analysis.view_data();
    let view_bytes: usize = view
        .stages
        .iter()
        .map(|s| s.succeeded_ms.stored_bytes() + s.failed_ms.stored_bytes())
        .sum();
    drop(view);
    let peak_with_views_mb = peak_rss_mb();
    let findings = report.findings.len();
    // Taken again, after the peak was reached and with the report dropped, so that measuring
    // them adds nothing to the peak: what the rules' per-stage facts hold while the rules and
    // the report run.
    let sparkdiag_analysis::Analysis { app, .. } = analysis;
    give_back_freed();
    let app = &app;
    let facts_bytes: usize = sparkdiag_facts::stage_stats(app)
        .iter()
        .map(|s| s.facts.heap_bytes())
        .sum();
    println!(
        "tasks {}  stored {:.1} B/task ({:.1} MB)  peak after read+model {model_peak_mb:.1} MB  \
         read+model {modelled:.1} s (CPU {modelled_cpu:.1} s)  rules+report {:.1} s \
         (CPU {analysed_cpu:.1} s)  stage facts {:.2} B/task  views' durations {:.2} B/task (peak \
         {peak_with_views_mb:.1} MB with them)  findings {}  unfolds {:.1} a \
         stage",
        app.tasks.len(),
        app.tasks.heap_bytes() as f64 / app.tasks.len().max(1) as f64,
        app.tasks.heap_bytes() as f64 / (1 << 20) as f64,
        total - modelled,
        facts_bytes as f64 / app.tasks.len().max(1) as f64,
        view_bytes as f64 / app.tasks.len().max(1) as f64,
        findings,
        unfolds as f64 / app.stages.len().max(1) as f64
    );
}

/// Hands the memory freed so far back to the system, so that a measurement made after the peak
/// (the bench's own, not the program's) starts from what is still in use and does not raise it.
fn give_back_freed() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free memory, under malloc's own lock.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// This process's peak resident set so far (`VmHWM`), in MB.
fn peak_rss_mb() -> f64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

/// A serialised event with numbers to fill in: `parts[0] n0 parts[1] n1 ... parts[k]`.
struct Template {
    parts: Vec<String>,
    /// Which field each number is, in the order they appear.
    fields: Vec<usize>,
}

/// Placeholder numbers no real event holds, one per field.
const MARK: i64 = 9_000_000_000_000_000;

impl Template {
    /// `event` with the numbers at `paths` (JSON pointers) marked as fields 0, 1, ...
    fn new(mut event: Value, paths: &[&str]) -> Template {
        for (field, path) in paths.iter().enumerate() {
            if let Some(slot) = event.pointer_mut(path) {
                // A string field (an executor id) stays a string: its digits are found inside
                // the quotes as a number's are.
                *slot = match slot {
                    Value::String(_) => Value::from((MARK + field as i64).to_string()),
                    _ => Value::from(MARK + field as i64),
                };
            }
        }
        let text = event.to_string();
        let mut parts = Vec::new();
        let mut fields = Vec::new();
        let mut rest = text.as_str();
        loop {
            let found = (0..paths.len())
                .filter_map(|f| rest.find(&(MARK + f as i64).to_string()).map(|at| (at, f)))
                .min();
            let Some((at, field)) = found else { break };
            parts.push(rest[..at].to_string());
            fields.push(field);
            rest = &rest[at + MARK.to_string().len()..];
        }
        parts.push(rest.to_string());
        Template { parts, fields }
    }

    fn write(&self, out: &mut impl Write, values: &[i64]) {
        for (part, &field) in self.parts.iter().zip(&self.fields) {
            out.write_all(part.as_bytes()).unwrap();
            write!(out, "{}", values[field]).unwrap();
        }
        out.write_all(self.parts.last().unwrap().as_bytes())
            .unwrap();
        out.write_all(b"\n").unwrap();
    }
}

/// Fields of the task templates; the executor's is filled only when the tasks are spread over
/// executors (`SPARKDIAG_MEMORY_EXECUTORS`), otherwise they keep the fixture's (the driver, in
/// local mode).
const TASK_FIELDS: &[&str] = &[
    "/Stage ID",
    "/Task Info/Task ID",
    "/Task Info/Index",
    "/Task Info/Launch Time",
    "/Task Info/Finish Time",
    "/Task Info/Executor ID",
];

/// The real events the logs are made of.
struct Source {
    /// Everything before the first job: log start, environment, executors, application start.
    opening: Vec<Value>,
    job_start: Value,
    stage_submitted: Value,
    stage_completed: Value,
    job_end: Value,
    application_end: Value,
    /// Each real task as its start and end events, and its duration.
    tasks: Vec<(Template, Template, i64)>,
}

impl Source {
    fn read(dir: &Path, spread: bool) -> Source {
        let fields = if spread {
            TASK_FIELDS
        } else {
            &TASK_FIELDS[..TASK_FIELDS.len() - 1]
        };
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.is_dir())
            .flat_map(|d| std::fs::read_dir(d).unwrap().map(|e| e.unwrap().path()))
            .filter(|p| p.to_string_lossy().ends_with(".zstd"))
            .collect();
        files.sort_by_key(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            name.split('_').nth(1).and_then(|n| n.parse::<u32>().ok())
        });
        let mut events: Vec<Value> = Vec::new();
        for file in &files {
            let mut text = String::new();
            zstd::Decoder::new(File::open(file).unwrap())
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            events.extend(
                text.lines()
                    .map(|l| serde_json::from_str::<Value>(l).unwrap()),
            );
        }
        let name = |e: &Value| e["Event"].as_str().unwrap_or_default().to_string();
        let first = |wanted: &str| {
            events
                .iter()
                .find(|e| name(e) == wanted)
                .unwrap_or_else(|| panic!("no {wanted} in the fixture"))
                .clone()
        };
        let opening = events
            .iter()
            .take_while(|e| name(e) != "SparkListenerJobStart")
            .filter(|e| !name(e).contains("sql.execution"))
            .cloned()
            .collect();
        let mut starts = std::collections::HashMap::new();
        let mut tasks = Vec::new();
        for e in &events {
            let id = e["Task Info"]["Task ID"].as_i64();
            match name(e).as_str() {
                "SparkListenerTaskStart" => {
                    starts.insert(id, e.clone());
                }
                "SparkListenerTaskEnd" if e["Task End Reason"]["Reason"] == "Success" => {
                    let Some(start) = starts.remove(&id) else {
                        continue;
                    };
                    let info = &e["Task Info"];
                    let duration = info["Finish Time"].as_i64().unwrap()
                        - info["Launch Time"].as_i64().unwrap();
                    let mut end = e.clone();
                    end["Stage Attempt ID"] = Value::from(0);
                    end["Task Info"]["Attempt"] = Value::from(0);
                    tasks.push((
                        Template::new(start, fields),
                        Template::new(end, fields),
                        duration,
                    ));
                }
                _ => {}
            }
        }
        Source {
            opening,
            job_start: first("SparkListenerJobStart"),
            stage_submitted: first("SparkListenerStageSubmitted"),
            stage_completed: first("SparkListenerStageCompleted"),
            job_end: first("SparkListenerJobEnd"),
            application_end: first("SparkListenerApplicationEnd"),
            tasks,
        }
    }

    /// Writes a log of `tasks` tasks over `stages` stages to `path`, zstd-compressed; with
    /// `executors` over one, the tasks run on that many executors (ids 1, 2, ..., each added
    /// as the fixture's own executor was), in turn.
    fn generate(&self, path: &Path, tasks: usize, stages: usize, executors: usize) {
        let partial = path.with_extension("partial");
        let file = BufWriter::with_capacity(1 << 20, File::create(&partial).unwrap());
        let mut out = BufWriter::with_capacity(1 << 20, zstd::Encoder::new(file, 1).unwrap());
        let line = |out: &mut BufWriter<_>, e: &Value| {
            serde_json::to_writer(&mut *out, e).unwrap();
            out.write_all(b"\n").unwrap();
        };
        let mut now = self
            .opening
            .iter()
            .find_map(|e| e["Timestamp"].as_i64())
            .unwrap_or(0);
        for e in &self.opening {
            line(&mut out, e);
            if executors > 1 && e["Event"] == "SparkListenerExecutorAdded" {
                for k in 1..=executors {
                    let mut added = e.clone();
                    added["Executor ID"] = Value::from(k.to_string());
                    added["Executor Info"]["Host"] =
                        Value::from(format!("10.0.{}.{}", k / 256, k % 256));
                    line(&mut out, &added);
                }
            }
        }
        let mut next_task = 0usize;
        // xorshift64: a fixed seed, so a log is the same each time it is made.
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut random = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        for stage in 0..stages {
            let count = tasks / stages + usize::from(stage < tasks % stages);
            let mut info = self.stage_submitted["Stage Info"].clone();
            info["Stage ID"] = Value::from(stage);
            info["Stage Attempt ID"] = Value::from(0);
            info["Stage Name"] = Value::from(format!("generated stage {stage}"));
            info["Number of Tasks"] = Value::from(count);
            info["Parent IDs"] = Value::Array(Vec::new());
            info["Submission Time"] = Value::from(now);
            info["Accumulables"] = Value::Array(Vec::new());
            let mut job = self.job_start.clone();
            job["Job ID"] = Value::from(stage);
            job["Submission Time"] = Value::from(now);
            job["Stage Infos"] = Value::Array(vec![info.clone()]);
            job["Stage IDs"] = Value::from(vec![stage]);
            if let Some(props) = job.get_mut("Properties").and_then(Value::as_object_mut) {
                props.remove("spark.sql.execution.id");
            }
            line(&mut out, &job);
            let mut submitted = self.stage_submitted.clone();
            submitted["Stage Info"] = info.clone();
            if let Some(props) = submitted
                .get_mut("Properties")
                .and_then(Value::as_object_mut)
            {
                props.remove("spark.sql.execution.id");
            }
            line(&mut out, &submitted);
            // Eight slots: once they are full, a task starts when the oldest running one ends.
            let mut running: std::collections::VecDeque<(usize, [i64; 6])> = Default::default();
            for index in 0..count {
                if running.len() == SLOTS {
                    let (which, values) = running.pop_front().unwrap();
                    now = now.max(values[4]);
                    self.tasks[which].1.write(&mut out, &values);
                }
                let which = (random() % self.tasks.len() as u64) as usize;
                let (start, _, duration) = &self.tasks[which];
                let values = [
                    stage as i64,
                    next_task as i64,
                    index as i64,
                    now,
                    now + duration,
                    (next_task % executors.max(1)) as i64 + 1,
                ];
                next_task += 1;
                start.write(&mut out, &values);
                running.push_back((which, values));
            }
            for (which, values) in running {
                now = now.max(values[4]);
                self.tasks[which].1.write(&mut out, &values);
            }
            info["Completion Time"] = Value::from(now);
            let mut completed = self.stage_completed.clone();
            completed["Stage Info"] = info;
            line(&mut out, &completed);
            let mut job_end = self.job_end.clone();
            job_end["Job ID"] = Value::from(stage);
            job_end["Completion Time"] = Value::from(now);
            line(&mut out, &job_end);
        }
        let mut end = self.application_end.clone();
        end["Timestamp"] = Value::from(now + 1);
        line(&mut out, &end);
        let file = out.into_inner().ok().unwrap().finish().unwrap();
        file.into_inner().ok().unwrap().sync_all().unwrap();
        std::fs::rename(&partial, path).unwrap();
    }
}
