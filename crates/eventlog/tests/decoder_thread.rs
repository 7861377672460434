//! A read leaves no thread of its own behind: the decoder thread is joined when `read_log`
//! returns, so none is left running or blocked. The fuzzer's LeakSanitizer saw a thread still
//! tearing down its thread-locals after a read as a leak (issue 31), which stopped the `model`
//! and `read_log` targets within minutes; that microsecond window is LeakSanitizer's to judge
//! (`fuzz/run.sh`), since `/proc` can show a joined thread until the kernel reaps it
//! (this test once failed so in CI). Its own test binary, so no other test's reads run alongside.

use sparkdiag_eventlog::{DECODER_THREAD, discover, read_log};

/// The live threads of this process named as the decoder is (Linux truncates names to 15
/// bytes). A thread that has exited can keep its `/proc/self/task` entry for a moment after
/// `join` returns, until the kernel reaps it: its state is then `Z` or `X`, and it no longer runs
/// anything (its thread-locals are gone), so it is not counted. One still running or sleeping
/// would be a decoder left behind.
fn decoder_threads() -> usize {
    let name = &DECODER_THREAD.as_bytes()[..DECODER_THREAD.len().min(15)];
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .flatten()
        .filter(|task| {
            std::fs::read(task.path().join("comm"))
                .is_ok_and(|comm| comm.strip_suffix(b"\n").unwrap_or(&comm) == name)
        })
        .filter(|task| {
            // `tid (comm) STATE ...`: the state follows the last parenthesis.
            std::fs::read_to_string(task.path().join("stat")).is_ok_and(|stat| {
                let state = stat.rsplit_once(')').map(|(_, rest)| rest.trim_start());
                !matches!(state.and_then(|s| s.chars().next()), Some('Z' | 'X') | None)
            })
        })
        .count()
}

#[test]
#[cfg(target_os = "linux")]
fn no_decoder_thread_outlives_a_read() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/logs");
    // A plain log, a compressed one, and one whose stream is cut short (the parser stops early).
    let logs = [
        format!("{root}/single/plain/local-1796049337368"),
        format!("{root}/single/zstd/local-1796049355449.zstd"),
        format!("{root}/killed/single/local-1796049494862.zstd.inprogress"),
    ];
    for round in 0..10 {
        for log in &logs {
            for input in discover(log).unwrap() {
                let mut events = 0u64;
                let _ = read_log(&input, |_| events += 1);
                assert!(events > 0, "{log}: no events read");
                // A joined thread is between clearing its id (what `join` waits for) and being
                // reaped for a few microseconds; one never joined, or blocked, stays.
                let deadline = std::time::Instant::now() + std::time::Duration::from_millis(200);
                while decoder_threads() > 0 && std::time::Instant::now() < deadline {
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
                assert_eq!(
                    decoder_threads(),
                    0,
                    "round {round}: a decoder thread still runs 200 ms after reading {log}"
                );
            }
        }
    }
}
