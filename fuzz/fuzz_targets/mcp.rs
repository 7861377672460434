//! The MCP server's JSON-RPC input: the bytes, as lines, to the server loop, as a client's
//! standard input would bring them, with its answers written to a bounded buffer. Any line
//! must get an answer or an error, never a panic, a hang or unbounded output. The server may
//! read only `fuzz/artifacts/mcp-root/`, which holds the first 64 KB of a real log (the plain
//! one in `testdata/logs/single`) as `app`: tool calls then do real work, quickly enough for
//! the fuzzer to try many (a whole log took a second an input).
#![no_main]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use libfuzzer_sys::fuzz_target;

/// The server's output, kept to its first few MiB: the answers are capped, so more is a bug.
#[derive(Clone, Default)]
struct Bounded(Arc<Mutex<Vec<u8>>>);

const MAX_OUTPUT: usize = 64 << 20;

impl Write for Bounded {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut out = self.0.lock().unwrap();
        assert!(
            out.len() + buf.len() <= MAX_OUTPUT,
            "the server wrote over {MAX_OUTPUT} bytes"
        );
        out.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The folder the server may read, made once: the cut log, whole lines only.
fn root() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let log = here.join("../testdata/logs/single/plain/local-1796049337368");
        let text = std::fs::read(&log).unwrap();
        let cut = text[..64 << 10].iter().rposition(|&b| b == b'\n').unwrap() + 1;
        let root = here.join("artifacts/mcp-root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("app"), &text[..cut]).unwrap();
        root
    })
}

fuzz_target!(|data: &[u8]| {
    let options = sparkdiag_mcp::Options {
        roots: vec![root().to_path_buf()],
        remote_prefixes: Vec::new(),
        rules: sparkdiag_analysis::Config::default(),
        prices: Default::default(),
        redact: false,
    };
    let out = Bounded::default();
    let _ = sparkdiag_mcp::serve(data, out.clone(), options);
    let written = out.0.lock().unwrap();
    // Every answer is one JSON object on its own line.
    for line in written.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        assert!(
            serde_json::from_slice::<serde_json::Value>(line).is_ok(),
            "an answer is not JSON: {}",
            String::from_utf8_lossy(line)
        );
    }
});
