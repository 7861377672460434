//! When each log was last written, and whether it is still being written: the night skips a
//! live log and analyses one whose driver is gone, on a local disk and on every object store
//! alike, from the last-modified times of the log's files or objects.

use std::io::{BufRead, BufReader, Read};
use std::time::{Duration, SystemTime};

use sparkdiag_eventlog::{Codec, Layout, LogInput, Part};

/// When the log was last written: the newest last-modified time among its files (a single
/// file's own; a rolling or Databricks folder's newest part). `None` when no file says.
pub(crate) fn last_written(input: &LogInput) -> Option<SystemTime> {
    input.parts.iter().filter_map(Part::modified).max()
}

/// Whether `input` is still being written at `now`: its newest part was written less than
/// `stale_after` ago, and nothing says the application ended. A single file or a rolling
/// folder says so by its name (`.inprogress`, `appstatus_*.inprogress`). A Databricks
/// delivery folder has no such name (its live file is the plain `eventlog`, as it is after the
/// cluster stops), so its end is looked for in the last events written. A log not written for
/// `stale_after` is not live whatever its name: its driver was killed or lost, and it is
/// analysed as far as it goes.
pub(crate) fn still_being_written(
    input: &LogInput,
    stale_after: Duration,
    now: SystemTime,
) -> bool {
    let fresh = last_written(input).is_some_and(|written| {
        now.duration_since(written)
            .map_or(true, |age| age < stale_after)
    });
    if !fresh {
        return false;
    }
    match input.layout {
        Layout::Databricks => !ends_with_application_end(input),
        _ => input.in_progress,
    }
}

/// How an application's end is written: Spark writes each event as one line of JSON, its name
/// first.
const APPLICATION_END: &[u8] = b"\n{\"Event\":\"SparkListenerApplicationEnd\"";

/// How much of the end of a plain log is read to find its application's end: Spark writes the
/// end last but for a few events of the stop (executors, block managers removed), far less.
const TAIL: usize = 256 << 10;

/// Whether the log's last part holds its application's end. A plain part is read only at its
/// end (a ranged read on a store); a compressed one (a folder of roll files without its live
/// `eventlog`) is decoded whole. A part that cannot be read counts as ended: the analysis reads
/// it and says what is wrong.
fn ends_with_application_end(input: &LogInput) -> bool {
    let Some(last) = input.parts.last() else {
        return false;
    };
    match last.location.read_tail(&last.display, TAIL) {
        Ok(Some(tail)) if holds_application_end(&tail) => return true,
        Ok(Some(_)) => {}
        Ok(None) | Err(_) => return true,
    }
    // Not in the plain tail: a plain log without its end, or compressed bytes.
    let Ok((raw, _)) = last.open() else {
        return true;
    };
    let mut raw = BufReader::new(raw);
    let codec = match raw.fill_buf() {
        Ok(head) => Codec::detect(head, &last.display),
        Err(_) => return true,
    };
    match codec {
        Some(Codec::Plain) => false,
        Some(codec) => decoded_holds_application_end(codec.decoder(raw)).unwrap_or(true),
        None => true,
    }
}

/// Whether a plain stretch of a log (the first line's start possibly cut) holds the end.
fn holds_application_end(text: &[u8]) -> bool {
    text.windows(APPLICATION_END.len())
        .any(|w| w == APPLICATION_END)
}

/// Whether a decoded log holds the end, read in pieces; the first line counts too.
fn decoded_holds_application_end(mut events: impl Read) -> std::io::Result<bool> {
    let keep = APPLICATION_END.len() - 1;
    // A line break before the first byte, so that the first line is a line like the others.
    let mut window = vec![b'\n'];
    let mut chunk = vec![0; 64 << 10];
    loop {
        let read = match events.read(&mut chunk) {
            Ok(0) => return Ok(false),
            Ok(read) => read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        window.extend_from_slice(&chunk[..read]);
        if holds_application_end(&window) {
            return Ok(true);
        }
        window.drain(..window.len().saturating_sub(keep));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_end_is_found_at_a_line_start_across_pieces() {
        let end = b"{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":1}\n";
        let mut log = b"{\"Event\":\"SparkListenerJobEnd\"}\n".repeat(5000);
        log.extend_from_slice(end);
        assert!(decoded_holds_application_end(&log[..]).unwrap());
        assert!(decoded_holds_application_end(&end[..]).unwrap());
        let without = b"{\"Event\":\"SparkListenerJobEnd\"}\n".repeat(5000);
        assert!(!decoded_holds_application_end(&without[..]).unwrap());
        // The name inside another event's text is no end.
        let quoted = b"{\"Event\":\"X\",\"Description\":\"{\\\"Event\\\":\\\"SparkListenerApplicationEnd\\\"\"}\n";
        assert!(!decoded_holds_application_end(&quoted[..]).unwrap());
    }
}
