//! Structured Streaming's query events (started, progress, idle, terminated) as mutated from
//! real streaming logs: each line through the streaming event parser, then the whole input
//! through the model, the streaming accessors, the rules and the report. Any values in any
//! order must give an answer, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sparkdiag_eventlog::streaming;

const SUFFIXES: [&str; 4] = [
    "QueryStartedEvent",
    "QueryProgressEvent",
    "QueryIdleEvent",
    "QueryTerminatedEvent",
];

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = sparkdiag_model::streaming::exception_cause(line);
        let _ = sparkdiag_model::streaming::parse_iso_ms(line);
        if let Some(suffix) = SUFFIXES.iter().find(|s| line.contains(*s)) {
            let _ = streaming::parse(suffix, line);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app");
    std::fs::write(&path, data).unwrap();
    let Ok(inputs) = sparkdiag_eventlog::discover(path.to_str().unwrap()) else {
        return;
    };
    let config = sparkdiag_rules::Config::default();
    for input in &inputs {
        let Ok(analysis) =
            sparkdiag_analysis::analyze(input, &sparkdiag_analysis::Options::new(&config))
        else {
            continue;
        };
        let app = &analysis.app;
        let _ = app.workload();
        let _ = app.workload_evidence();
        let _ = app.jobs_stopped_by_program();
        for job in &app.jobs {
            let _ = app.stopped_by_program(job.job_id);
            let _ = app.streaming.batch_of_job(job.job_id);
        }
        for query in &app.streaming.queries {
            let _ = query.label();
            let _ = query.failed();
            let _ = query.working_batches().count();
            let _ = sparkdiag_model::streaming::trigger_interval_ms(query);
            for batch in &query.batches {
                let _ = batch.parts.overhead_ms();
            }
        }
        let _ = serde_json::to_string(&analysis.report);
    }
});
