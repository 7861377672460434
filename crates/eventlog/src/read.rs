//! Streams a log's parts through their decoders, splits lines and parses events, keeping an
//! account of everything that was skipped, cut or missing.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::rc::Rc;

use crate::ReadError;
use crate::codec::Codec;
use crate::events::{Event, ParseFailure, is_known_event_name, parse_event};
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
    count: Rc<Cell<u64>>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
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
    let count = Rc::new(Cell::new(0u64));
    let (raw, bytes): (Box<dyn Read>, u64) = match &part.path {
        Some(path) => {
            let file = File::open(path)
                .map_err(|e| ReadError::io(&part.display, None, "cannot open", e))?;
            let len = file.metadata().map(|m| m.len()).unwrap_or(0);
            (Box::new(file), len)
        }
        None => (Box::new(io::stdin().lock()), 0),
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
    let mut lines = BufReader::with_capacity(BUFFER, codec.decoder(raw));
    let mut file = FileReport {
        path: part.display.clone(),
        codec: Some(codec),
        bytes,
        decoded_bytes: 0,
        lines: 0,
        events: 0,
    };
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    loop {
        buf.clear();
        let line_offset = file.decoded_bytes;
        let (read, stream_error) = match lines.read_until(b'\n', &mut buf) {
            Ok(n) => (n, None),
            // read_until keeps what it read before the error in `buf`.
            Err(e) => (buf.len(), Some(e)),
        };
        file.decoded_bytes += read as u64;
        if read > 0 {
            file.lines += 1;
            let ends_with_newline = buf.last() == Some(&b'\n');
            let line = trim_line_end(&buf);
            if !line.iter().all(u8::is_ascii_whitespace) {
                match parse_event(line) {
                    Ok(event) => {
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
                    Err(failure) if !ends_with_newline => {
                        report.truncated = true;
                        report.warnings.push(format!(
                            "{}: line {} (byte {line_offset}) is cut short{}; it was skipped{}",
                            part.display,
                            file.lines,
                            describe_event(&failure),
                            if is_last_part && stream_error.is_none() {
                                " (the writer stopped mid-line)"
                            } else {
                                ""
                            },
                        ));
                    }
                    Err(failure) => {
                        report.malformed_lines += 1;
                        if *located < LOCATED_LINE_LIMIT {
                            *located += 1;
                            report.warnings.push(format!(
                                "{}: line {} (byte {line_offset}) is not a valid event{}: {}; it was skipped",
                                part.display,
                                file.lines,
                                describe_event(&failure),
                                failure.error.as_ref().map_or("expected a JSON object with an \"Event\" key".to_string(), |e| e.to_string()),
                            ));
                        }
                    }
                }
            }
        }
        if let Some(err) = stream_error {
            if file.decoded_bytes == 0 && file.lines == 0 {
                return Err(ReadError::new(
                    &part.display,
                    Some(0),
                    format!("cannot decode as {codec}: {err}"),
                ));
            }
            let at = count.get();
            if err.kind() == io::ErrorKind::UnexpectedEof {
                report.truncated = true;
                report.warnings.push(format!(
                    "{}: the {codec} stream is cut short ({err}; read {at} of {bytes} bytes); events after line {} are missing{}",
                    part.display,
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
            break;
        }
        if read == 0 {
            break;
        }
    }
    Ok(file)
}

fn describe_event(failure: &ParseFailure<'_>) -> String {
    failure
        .event
        .map(|name| format!(" ({name})"))
        .unwrap_or_default()
}

fn trim_line_end(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}
