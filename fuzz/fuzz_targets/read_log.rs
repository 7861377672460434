//! The whole reader on one file of arbitrary bytes: codec sniffing, decoding, line splitting and
//! event parsing. Reading may fail with an error naming the file, never panic.
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
        let mut events = 0u64;
        if let Ok(report) = sparkdiag_eventlog::read_log(input, |_| events += 1) {
            assert_eq!(report.events(), events);
        }
    }
});
