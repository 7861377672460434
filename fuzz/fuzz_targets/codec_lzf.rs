//! The lzf decoder on arbitrary bytes: it must end (with data or an error) without a panic,
//! and never hand out more than its input can honestly hold.
#![no_main]

use std::io::Read;

use libfuzzer_sys::fuzz_target;
use sparkdiag_eventlog::Codec;

fuzz_target!(|data: &[u8]| {
    let mut out = Vec::new();
    // Bounded so that a valid bomb costs the fuzzer time, not memory.
    let _ = Codec::Lzf
        .decoder(data)
        .take(64 << 20)
        .read_to_end(&mut out);
});
