//! Streams a log's parts through their decoders, splits lines and parses events, keeping an
//! account of everything that was skipped, cut or missing.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;

use rayon::prelude::*;

use crate::ReadError;
use crate::codec::Codec;
use crate::events::{
    Event, ParseFailure, is_known_event_name, parse_event, strip_task_accumulables,
};
use crate::layout::{Layout, LogInput, Part};

/// How many damaged lines are located one by one before the rest are only counted.
const LOCATED_LINE_LIMIT: usize = 10;
const BUFFER: usize = 256 * 1024;

/// What was read from one file.
#[derive(Debug, Clone)]
pub struct FileReport {
    pub path: String,
    pub codec: Option<Codec>,
    /// Bytes on disk (compressed).
    pub bytes: u64,
    /// Bytes after decompression.
    pub decoded_bytes: u64,
    pub lines: u64,
    pub events: u64,
}

/// The account of one log's reading: the JSON report's `source` section is made from it.
#[derive(Debug, Clone)]
pub struct SourceReport {
    pub input: String,
    pub layout: Layout,
    pub files: Vec<FileReport>,
    /// The writer had not finished (`.inprogress`).
    pub in_progress: bool,
    pub saw_application_end: bool,
    /// A compressed stream or the last line ended mid-way.
    pub truncated: bool,
    /// Roll files missing, or a part that could not be decoded past some point.
    pub gaps: bool,
    pub malformed_lines: u64,
    /// Events of types Spark does not write (e.g. a vendor's own), by name.
    pub unknown_events: BTreeMap<String, u64>,
    /// Spark events the model does not use, by name.
    pub ignored_events: BTreeMap<String, u64>,
    pub warnings: Vec<String>,
}

impl SourceReport {
    fn new(input: &LogInput) -> Self {
        SourceReport {
            input: input.display.clone(),
            layout: input.layout,
            files: Vec::new(),
            in_progress: input.in_progress,
            saw_application_end: false,
            truncated: false,
            gaps: !input.notes.is_empty(),
            malformed_lines: 0,
            unknown_events: BTreeMap::new(),
            ignored_events: BTreeMap::new(),
            warnings: input.notes.clone(),
        }
    }

    /// Every event Spark wrote is here: the application ended and nothing was cut, skipped or lost.
    pub fn complete(&self) -> bool {
        self.saw_application_end && !self.truncated && !self.gaps && self.malformed_lines == 0
    }

    pub fn events(&self) -> u64 {
        self.files.iter().map(|f| f.events).sum()
    }
}

/// Counts the bytes pulled from a file, so decoder errors can say where in the file they are.
struct Counting<R> {
    inner: R,
    count: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// Whole lines of decoded text, handed from the decoding thread to the parsing one.
struct Chunk {
    data: Vec<u8>,
    /// Set on the last chunk when the stream failed: the data before the failure came first.
    error: Option<io::Error>,
}

/// Decoded bytes per chunk: large enough that handing over and parallel parsing cost little,
/// small enough that the few chunks in flight keep memory flat.
const CHUNK: usize = 1 << 20;
/// Chunks in flight between the threads.
const IN_FLIGHT: usize = 4;

/// Decodes on its own thread, cutting the text at line ends, until the input ends or fails.
fn decode_chunks(mut decoder: impl Read, to_parser: mpsc::SyncSender<Chunk>) {
    let mut carry: Vec<u8> = Vec::new();
    loop {
        // Room for a whole chunk up front: growing by doubling would copy it several times.
        let mut data = Vec::with_capacity(CHUNK + carry.len() + (64 << 10));
        data.append(&mut carry);
        let mut error = None;
        let mut at_end = false;
        // A line longer than a chunk (a big plan description) simply makes the chunk longer.
        while data.len() < CHUNK || memchr::memrchr(b'\n', &data).is_none() {
            let before = data.len();
            // read_to_end fills spare capacity without zeroing it first, and keeps what it read
            // before an error.
            match (&mut decoder).take(CHUNK as u64).read_to_end(&mut data) {
                Ok(_) if data.len() == before => {
                    at_end = true;
                    break;
                }
                Ok(_) => {}
                Err(e) => {
                    error = Some(e);
                    break;
                }
            }
        }
        if !at_end && error.is_none() {
            let cut = memchr::memrchr(b'\n', &data).map_or(0, |i| i + 1);
            carry = data.split_off(cut);
        }
        let last = at_end || error.is_some();
        if to_parser.send(Chunk { data, error }).is_err() || last {
            return;
        }
    }
}

/// Reads every part of `input` in order and hands each event to `on_event`.
///
/// Damage is recorded in the returned report and reading goes on wherever it can. It is an error
/// only when nothing at all could be read: a missing file, a file that is not a log, or a stream
/// whose very first bytes do not decode.
pub fn read_log(
    input: &LogInput,
    mut on_event: impl FnMut(Event<'_>),
) -> Result<SourceReport, ReadError> {
    let mut report = SourceReport::new(input);
    let mut located = 0usize;
    for (i, part) in input.parts.iter().enumerate() {
        let is_last_part = i + 1 == input.parts.len();
        let file = read_part(part, is_last_part, &mut report, &mut located, &mut on_event);
        match file {
            Ok(file) => report.files.push(file),
            Err(err) if input.parts.len() == 1 => return Err(err),
            Err(err) => {
                report.gaps = true;
                report
                    .warnings
                    .push(format!("{err}; this file was skipped"));
                report.files.push(FileReport {
                    path: part.display.clone(),
                    codec: None,
                    bytes: 0,
                    decoded_bytes: 0,
                    lines: 0,
                    events: 0,
                });
            }
        }
    }
    if report.malformed_lines as usize > LOCATED_LINE_LIMIT {
        report.warnings.push(format!(
            "{} more malformed lines were skipped (only the first {LOCATED_LINE_LIMIT} are located above)",
            report.malformed_lines as usize - LOCATED_LINE_LIMIT
        ));
    }
    for (name, count) in &report.unknown_events {
        report.warnings.push(format!(
            "{count} event(s) of unknown type {name} were skipped"
        ));
    }
    if !report.saw_application_end && report.events() > 0 {
        report.warnings.push(if report.in_progress {
            "no SparkListenerApplicationEnd: the log is in progress, so the application was still running or was killed"
                .to_string()
        } else {
            "no SparkListenerApplicationEnd: the application did not finish writing its log (killed, crashed, or still running)"
                .to_string()
        });
    }
    if report.events() == 0 {
        report
            .warnings
            .push(format!("{}: no events were found", input.display));
    }
    Ok(report)
}

fn read_part(
    part: &Part,
    is_last_part: bool,
    report: &mut SourceReport,
    located: &mut usize,
    on_event: &mut impl FnMut(Event<'_>),
) -> Result<FileReport, ReadError> {
    let count = Arc::new(AtomicU64::new(0));
    let (raw, bytes): (Box<dyn Read + Send>, u64) = match &part.path {
        Some(path) => {
            let file = File::open(path)
                .map_err(|e| ReadError::io(&part.display, None, "cannot open", e))?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            (Box::new(file), len)
        }
        None => (Box::new(io::stdin()), 0),
    };
    let mut raw = BufReader::with_capacity(
        BUFFER,
        Counting {
            inner: raw,
            count: count.clone(),
        },
    );
    let head = raw
        .fill_buf()
        .map_err(|e| ReadError::io(&part.display, Some(0), "cannot read", e))?
        .to_vec();
    let name = part.display.rsplit('/').next().unwrap_or_default();
    let codec = Codec::detect(&head, name).ok_or_else(|| {
        ReadError::new(
            &part.display,
            Some(0),
            "not a Spark event log: the first bytes are neither JSON nor a codec Spark writes",
        )
    })?;
    let mut file = FileReport {
        path: part.display.clone(),
        codec: Some(codec),
        bytes,
        decoded_bytes: 0,
        lines: 0,
        events: 0,
    };
    let (to_parser, chunks) = mpsc::sync_channel::<Chunk>(IN_FLIGHT);
    let decoder = codec.decoder(raw);
    std::thread::scope(|scope| -> Result<(), ReadError> {
        scope.spawn(move || decode_chunks(decoder, to_parser));
        for chunk in chunks {
            let mut chunk = chunk;
            let lines = split_lines_mut(&mut chunk.data);
            let shapes: Vec<LineShape> = lines
                .iter()
                .map(|l| LineShape {
                    len: l.len(),
                    newline: l.last() == Some(&b'\n'),
                })
                .collect();
            // Parsing is the costly step and lines are independent: parse them in parallel,
            // then apply them in log order.
            let parsed: Vec<Option<Result<Event<'_>, ParseFailure<'_>>>> = lines
                .into_par_iter()
                .with_min_len(256)
                .map(|line| {
                    let len = trim_line_end(line).len();
                    let len = strip_task_accumulables(&mut line[..len]);
                    let line: &[u8] = &line[..len];
                    (!line.iter().all(u8::is_ascii_whitespace)).then(|| parse_event(line))
                })
                .collect();
            for (line, result) in shapes.iter().zip(parsed) {
                let line_offset = file.decoded_bytes;
                file.decoded_bytes += line.len as u64;
                file.lines += 1;
                match result {
                    None => {}
                    Some(Ok(event)) => {
                        file.events += 1;
                        match &event {
                            Event::ApplicationEnd(_) => report.saw_application_end = true,
                            Event::Other(name) => {
                                let bucket = if is_known_event_name(name) {
                                    &mut report.ignored_events
                                } else {
                                    &mut report.unknown_events
                                };
                                *bucket.entry((*name).to_string()).or_default() += 1;
                            }
                            _ => {}
                        }
                        on_event(event);
                    }
                    // Only the last line of a stream can lack its newline: the writer stopped there.
                    Some(Err(failure)) if !line.newline => {
                        report.truncated = true;
                        report.warnings.push(format!(
                            "{}: line {} (byte {line_offset}) is cut short{}; it was skipped{}",
                            part.display,
                            file.lines,
                            describe_event(&failure),
                            if is_last_part && chunk.error.is_none() {
                                " (the writer stopped mid-line)"
                            } else {
                                ""
                            },
                        ));
                    }
                    Some(Err(failure)) => {
                        report.malformed_lines += 1;
                        if *located < LOCATED_LINE_LIMIT {
                            *located += 1;
                            report.warnings.push(format!(
                                "{}: line {} (byte {line_offset}) is not a valid event{}: {}; it was skipped",
                                part.display,
                                file.lines,
                                describe_event(&failure),
                                failure
                                    .error
                                    .as_ref()
                                    .map_or("expected a JSON object with an \"Event\" key".to_string(), |e| e.to_string()),
                            ));
                        }
                    }
                }
            }
            if let Some(err) = chunk.error.take() {
                if file.decoded_bytes == 0 {
                    return Err(ReadError::new(
                        &part.display,
                        Some(0),
                        format!("cannot decode as {codec}: {err}"),
                    ));
                }
                let at = count.load(Ordering::Relaxed);
                if err.kind() == io::ErrorKind::UnexpectedEof {
                    report.truncated = true;
                    // The reader runs ahead of the decoder, so `at` is where the input ended,
                    // not where the unfinished frame began: say that it ended, and after what.
                    report.warnings.push(format!(
                        "{}: the {codec} stream is cut short: its {at} bytes end inside a compressed {} ({err}); events after line {} are missing{}",
                        part.display,
                        match codec {
                            Codec::Zstd => "frame",
                            Codec::Gzip => "member",
                            _ => "block",
                        },
                        file.lines,
                        if is_last_part { "" } else { " from this file" },
                    ));
                } else {
                    report.gaps = true;
                    report.warnings.push(format!(
                        "{}: corrupt {codec} data after line {} ({err}); the rest of this file was skipped",
                        part.display, file.lines
                    ));
                }
            }
        }
        Ok(())
    })?;
    if part.path.is_none() {
        // Standard input has no size up front; what was read is its size.
        file.bytes = count.load(Ordering::Relaxed);
    }
    Ok(file)
}

/// A line's length and whether it ended with a newline, taken before parsing edits it.
struct LineShape {
    len: usize,
    newline: bool,
}

/// Lines with their newline, found with memchr (a per-byte split closure costs several times
/// more), as separate mutable slices so each parser can edit its own line.
fn split_lines_mut(data: &mut [u8]) -> Vec<&mut [u8]> {
    let mut ends: Vec<usize> = memchr::memchr_iter(b'\n', data).map(|i| i + 1).collect();
    if ends.last().copied().unwrap_or(0) < data.len() {
        ends.push(data.len());
    }
    let mut lines = Vec::with_capacity(ends.len());
    let mut rest = data;
    let mut start = 0;
    for end in ends {
        let (line, tail) = rest.split_at_mut(end - start);
        lines.push(line);
        rest = tail;
        start = end;
    }
    lines
}

fn describe_event(failure: &ParseFailure<'_>) -> String {
    failure
        .event
        .map(|name| format!(" ({name})"))
        .unwrap_or_default()
}

fn trim_line_end(line: &mut [u8]) -> &mut [u8] {
    let mut len = line.len();
    if line[..len].ends_with(b"\n") {
        len -= 1;
    }
    if line[..len].ends_with(b"\r") {
        len -= 1;
    }
    &mut line[..len]
}
