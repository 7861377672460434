//! Event logs that a JSON pretty-printer reformatted (`jq . app-1 > app-1.json`, an editor's
//! "format document"): each event spread over many lines. Spark writes one event a line, and
//! the line reader would see only fragments — `{`, `"Event": "SparkListenerLogStart",` — and
//! find no events. Such a log is recognised from its first line and put back on one line an
//! event, as a stream: whitespace outside strings is dropped and a newline ends each top-level
//! value, so no event is ever held whole here and the line reader's limits still apply.

use std::io::{self, Read};

/// How much of the decoded stream is looked at for the first line: far more than any first
/// event (`SparkListenerLogStart`, a hundred bytes) needs.
const HEAD: usize = 64 << 10;

/// The decoded stream, one event a line: `decoded` itself when it already is, else the
/// pretty-printed events re-joined. The flag says which.
pub fn one_event_a_line<'r>(
    mut decoded: Box<dyn Read + Send + 'r>,
) -> (Box<dyn Read + Send + 'r>, bool) {
    let mut head = Vec::with_capacity(4096);
    let mut error = None;
    let mut chunk = [0u8; 4096];
    while head.len() < HEAD && !first_line_ended(&head) {
        match decoded.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => head.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                error = Some(e);
                break;
            }
        }
    }
    let pretty = error.is_none() && is_pretty(&head);
    let replayed = Replay {
        head: io::Cursor::new(head),
        error,
        rest: decoded,
    };
    if pretty {
        (Box::new(Compact::new(replayed)), true)
    } else {
        (Box::new(replayed), false)
    }
}

/// The first non-blank line is complete (a newline follows it).
fn first_line_ended(head: &[u8]) -> bool {
    let start = head
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(head.len());
    head[start..].contains(&b'\n')
}

/// The first non-blank line opens an object it does not close: Spark's lines are whole
/// objects, `{"Event":...}`, so one that does not end with `}` was spread over lines.
fn is_pretty(head: &[u8]) -> bool {
    let start = match head.iter().position(|b| !b.is_ascii_whitespace()) {
        Some(start) => start,
        None => return false,
    };
    let Some(len) = head[start..].iter().position(|&b| b == b'\n') else {
        return false;
    };
    let line = head[start..start + len].trim_ascii();
    line.first() == Some(&b'{') && line.last() != Some(&b'}')
}

/// The bytes peeked at, then the error met while peeking (if any), then the rest.
struct Replay<'r> {
    head: io::Cursor<Vec<u8>>,
    error: Option<io::Error>,
    rest: Box<dyn Read + Send + 'r>,
}

impl Read for Replay<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let n = self.head.read(out)?;
        if n > 0 || out.is_empty() {
            return Ok(n);
        }
        if let Some(err) = self.error.take() {
            return Err(err);
        }
        self.rest.read(out)
    }
}

/// Drops the whitespace between JSON tokens and ends each top-level value with a newline.
struct Compact<R> {
    inner: R,
    input: Vec<u8>,
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl<R: Read> Compact<R> {
    fn new(inner: R) -> Self {
        Compact {
            inner,
            input: vec![0; 64 << 10],
            depth: 0,
            in_string: false,
            escaped: false,
        }
    }
}

impl<R: Read> Read for Compact<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            // Each input byte gives at most two output bytes (a closing brace and a newline).
            let room = (out.len() / 2).clamp(1, self.input.len());
            let n = self.inner.read(&mut self.input[..room])?;
            if n == 0 {
                return Ok(0);
            }
            let mut written = 0;
            for &b in &self.input[..n] {
                if self.in_string {
                    out[written] = b;
                    written += 1;
                    if self.escaped {
                        self.escaped = false;
                    } else if b == b'\\' {
                        self.escaped = true;
                    } else if b == b'"' {
                        self.in_string = false;
                    }
                    continue;
                }
                match b {
                    b' ' | b'\t' | b'\r' | b'\n' => continue,
                    b'"' => self.in_string = true,
                    b'{' | b'[' => self.depth += 1,
                    b'}' | b']' => self.depth = self.depth.saturating_sub(1),
                    _ => {}
                }
                out[written] = b;
                written += 1;
                if self.depth == 0 && matches!(b, b'}' | b']') {
                    out[written] = b'\n';
                    written += 1;
                }
            }
            if written > 0 {
                return Ok(written);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn relined(text: &str) -> (String, bool) {
        let (mut reader, pretty) = one_event_a_line(Box::new(io::Cursor::new(text.to_string())));
        let mut out = String::new();
        reader.read_to_string(&mut out).unwrap();
        (out, pretty)
    }

    #[test]
    fn pretty_events_come_back_one_a_line_with_strings_untouched() {
        let (out, pretty) = relined(
            "{\n  \"Event\": \"A\",\n  \"Text\": \"a } b \\\" {\\n\"\n}\n{\n  \"Event\": \"B\", \"L\": [1, 2]\n}\n",
        );
        assert!(pretty);
        assert_eq!(
            out,
            "{\"Event\":\"A\",\"Text\":\"a } b \\\" {\\n\"}\n{\"Event\":\"B\",\"L\":[1,2]}\n"
        );
    }

    #[test]
    fn spark_lines_pass_through_byte_for_byte() {
        let text = "{\"Event\":\"A\", \"x\": 1}\n{\"Event\":\"B\"}\n";
        assert_eq!(relined(text), (text.to_string(), false));
        // A single cut line with no newline yet is not mistaken for a pretty-printed log.
        assert_eq!(
            relined("{\"Event\":\"A\""),
            ("{\"Event\":\"A\"".to_string(), false)
        );
    }
}
