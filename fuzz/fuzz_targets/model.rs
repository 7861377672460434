//! Event lines (plain JSON, as mutated from real logs) through the model builder and every
//! rule: any values in any order must give an answer, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
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
        let _ = app.job_and_driver_time_ms();
        let _ = app.duration_ms();
        let facts = sparkdiag_facts::Facts::of(&app);
        let _ = sparkdiag_rules::analyze(&app, &facts, &sparkdiag_rules::Config::default());
    }
});
