//! The memory figures on event lines as mutated from real logs of memory trouble: executor
//! metrics (task ends' `Task Executor Metrics`, `SparkListenerStageExecutorMetrics`,
//! heartbeats), the memory settings, and failure messages. The limits Spark would compute, each
//! JVM's peaks against them, and the failure classification must give an answer, never a panic
//! or an overflow.
#![no_main]

use libfuzzer_sys::fuzz_target;
use sparkdiag_facts::{memory_figures, memory_limits};
use sparkdiag_rules::memory_region;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for line in text.lines() {
        let _ = sparkdiag_facts::settings::parse_size(line, 1 << 20);
        let _ = sparkdiag_facts::settings::parse_size(line.trim(), 1);
    }
    let _ = memory_region::classify(text.lines());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("app");
    std::fs::write(&path, data).unwrap();
    let Ok(inputs) = sparkdiag_eventlog::discover(path.to_str().unwrap()) else {
        return;
    };
    for input in &inputs {
        let mut builder = sparkdiag_model::ApplicationBuilder::default();
        if sparkdiag_eventlog::read_log(input, |event| builder.on_event(event)).is_err() {
            continue;
        }
        let app = builder.finish();
        let limits = memory_limits::of(&app);
        let _ = limits.container_bytes();
        let _ = limits.unified_pool_bytes();
        let _ = limits.pool_per_task_bytes();
        let _ = memory_limits::setting(limits.executor_memory_bytes);
        let _ = memory_limits::setting(limits.container_bytes());
        if let Some(figures) = memory_figures::of(&app) {
            for executor in figures.executors.iter().chain(&figures.executor_peak) {
                let _ = executor.beyond_heap_bytes();
            }
            let _ = serde_json::to_string(&figures);
        }
        for failure in &app.task_failures {
            if let Some(found) = memory_region::of_task_failure(&app, failure) {
                let _ = found.settings(&limits);
                let _ = found.region.name();
            }
            if let Some(cause) = memory_region::data_cause(
                &app,
                failure.stage_id,
                failure.stage_attempt_id,
                failure.task_id,
                &limits,
            ) {
                let _ = cause.headline();
                let _ = cause.json();
            }
        }
        let facts = sparkdiag_facts::Facts::of(&app);
        let _ = sparkdiag_rules::analyze(&app, &facts, &sparkdiag_rules::Config::default());
    }
});
