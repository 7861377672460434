//! Streams a log's parts through their decoders, splits lines and parses events, keeping an
//! account of everything that was skipped, cut or missing.

use std::collections::BTreeMap;
use std::io::{self, BufRead, BufReader, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, mpsc};

use rayon::prelude::*;

use crate::codec::{Codec, error_offset};
use crate::events::{Event, ParseFailure, is_known_event_name, parse_line};
use crate::layout::{Layout, LogInput, Part};
use crate::{ReadError, ReadErrorKind};

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
            warnings: input.notes.iter().chain(&input.skipped).cloned().collect(),
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

/// What reading one log keeps track of across its files, beyond the report itself.
#[derive(Default)]
struct ReadState {
    /// Malformed lines located one by one so far.
    located: usize,
    application_starts: u64,
    repeated_lines: u64,
    first_repeat: Option<String>,
}

/// Counts the compressed bytes a decoder has consumed (not merely buffered), so a failure can
/// say where in the file it is, and keeps a store's own failure (a cut connection), which is
/// not damage in the log, for the reader to give back whole.
struct Position<R> {
    inner: R,
    count: Arc<AtomicU64>,
    store_failure: Arc<Mutex<Option<ReadError>>>,
}

impl<R: BufRead> Position<R> {
    fn keep_store_failure(&self, err: io::Error, shown: &str) -> io::Error {
        if !crate::store::is_store_failure(&err) {
            return err;
        }
        let kind = err.kind();
        let failure = crate::store::failure_of(err, shown, self.count.load(Ordering::Relaxed));
        let text = failure.to_string();
        *self.store_failure.lock().unwrap_or_else(|e| e.into_inner()) = Some(failure);
        io::Error::new(kind, text)
    }
}

impl<R: BufRead> Read for Position<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Position<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        // Checked first and returned after, so the borrow of the buffer ends on each path.
        if let Err(err) = self.inner.fill_buf() {
            return Err(self.keep_store_failure(err, ""));
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        self.count.fetch_add(amt as u64, Ordering::Relaxed);
        self.inner.consume(amt);
    }
}

/// Longest line read: 128 MiB. Spark writes each event on one line, and its largest (SQL
/// executions carrying a whole physical plan) run to a few MB on wide generated queries; the
/// largest in the fixtures here is 124 KB. A longer line is skipped, located and counted as
/// malformed, so a stream of bytes without a newline cannot take all the memory.
pub const MAX_LINE: usize = 128 << 20;
/// How far a line over [`MAX_LINE`] is followed to find its end before the rest of the file is
/// given up: 1 GiB, which bounds the time a decompression bomb of one endless line can take.
pub const MAX_SKIPPED_LINE: u64 = 1 << 30;

/// Decoded text handed from the decoding thread to the parsing one: whole lines (the last may
/// lack its newline at the end of the stream), then possibly a line too long to keep, then
/// possibly the error that ended the stream.
struct Chunk {
    /// The lines are `data[..len]`; the rest is room the decoder may reuse.
    data: Vec<u8>,
    len: usize,
    /// Where each line ends in `data` (just past its newline), found by the decoder while the
    /// bytes were still in its core's cache; a last line without a newline is not here.
    ends: Vec<u32>,
    long_line: Option<LongLine>,
    /// Set on the last chunk when the stream failed: the data before the failure came first.
    error: Option<io::Error>,
}

impl Chunk {
    fn lines(data: Vec<u8>, len: usize, ends: Vec<u32>) -> Self {
        Chunk {
            data,
            len,
            ends,
            long_line: None,
            error: None,
        }
    }

    /// What the chunk holds against the budget: its text and its list of line ends.
    fn weight(&self) -> usize {
        self.len + self.ends.len() * std::mem::size_of::<u32>()
    }
}

/// A line longer than [`MAX_LINE`], skipped without being kept.
struct LongLine {
    /// Bytes of the line that were read, its newline included when `ended`.
    len: u64,
    /// Its newline was found; otherwise the stream ended, failed or the skip limit was hit.
    ended: bool,
    /// No newline came within [`MAX_SKIPPED_LINE`]: the rest of the file is not read.
    gave_up: bool,
}

impl LongLine {
    fn unended(len: u64) -> Self {
        LongLine {
            len,
            ended: false,
            gave_up: false,
        }
    }
}

/// Decoded bytes per chunk: large enough that handing over and parallel parsing cost little,
/// small enough that the few chunks in flight keep memory flat.
const CHUNK: usize = 1 << 20;
/// Chunks in flight between the threads.
const IN_FLIGHT: usize = 4;

/// The decoded bytes in flight between the threads, so that chunks made long by long lines
/// cannot pile up: a chunk waits while others are in flight and together they would pass
/// `IN_FLIGHT * CHUNK`. At most one long chunk is queued while the next is being filled.
struct Budget {
    state: Mutex<(usize, bool)>,
    freed: Condvar,
}

impl Budget {
    fn new() -> Self {
        Budget {
            state: Mutex::new((0, false)),
            freed: Condvar::new(),
        }
    }

    /// Waits for room for `len` bytes; false once the parser has stopped listening.
    fn take(&self, len: usize) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        while !state.1 && state.0 > 0 && state.0 + len > IN_FLIGHT * CHUNK {
            state = self.freed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        state.0 += len;
        !state.1
    }

    fn give_back(&self, len: usize) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.0 = state.0.saturating_sub(len);
        self.freed.notify_all();
    }

    fn close(&self) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.1 = true;
        self.freed.notify_all();
    }
}

/// Closes the budget when the parsing side stops, however it stops, so the decoder never waits
/// for room that will not come.
struct CloseOnDrop<'a>(&'a Budget);

impl Drop for CloseOnDrop<'_> {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// The decoder thread's name, as `ps -T` and a debugger show it.
pub const DECODER_THREAD: &str = "sparkdiag-decode";

/// Joins the decoder thread however the parser leaves the scope. The scope's own end waits only
/// until the thread's closure returns, not until the thread has exited: its thread-locals are
/// then still being destroyed, and LeakSanitizer (which the fuzzer runs after each input) saw
/// their glibc bookkeeping (`__cxa_thread_atexit_impl`, 32 bytes) as leaked. A join waits for
/// the exit, so nothing of one read outlives it.
struct JoinOnDrop<'scope, T>(Option<std::thread::ScopedJoinHandle<'scope, T>>);

impl<T> Drop for JoinOnDrop<'_, T> {
    fn drop(&mut self) {
        if let Some(thread) = self.0.take()
            && let Err(panic) = thread.join()
            && !std::thread::panicking()
        {
            std::panic::resume_unwind(panic);
        }
    }
}

/// Decodes on its own thread, cutting the text at line ends, until the input ends or fails.
///
/// Each byte is searched for a newline once, so a line of any length costs linear time; a line
/// over [`MAX_LINE`] is dropped as it is read and only its length is passed on. Buffers the
/// parser is done with come back through `recycled`, so that a log's chunks reuse a few buffers
/// instead of allocating and zeroing one per chunk.
fn decode_chunks(
    mut decoder: impl Read,
    to_parser: mpsc::SyncSender<Chunk>,
    recycled: mpsc::Receiver<Vec<u8>>,
    budget: &Budget,
) {
    let send = |chunk: Chunk| budget.take(chunk.weight()) && to_parser.send(chunk).is_ok();
    let buffer = || recycled.try_recv().unwrap_or_default();
    let mut data: Vec<u8> = buffer();
    // Bytes of `data` read so far; the rest of it is room, already initialised.
    let mut filled = 0;
    // End of the last whole line in `data`: bytes before it were searched and hold a newline.
    let mut lines_end = 0;
    // Every line end in `data[..lines_end]`.
    let mut ends: Vec<u32> = Vec::new();
    loop {
        if data.len() < filled + CHUNK {
            // Room for a whole chunk up front: growing by doubling would copy it several times.
            data.resize(filled + CHUNK + (64 << 10), 0);
        }
        let before = filled;
        let (read, result) = read_up_to(&mut decoder, &mut data, filled, CHUNK, &mut ends);
        filled += read;
        if let Some(&end) = ends.last() {
            lines_end = end as usize;
        }
        match result {
            Ok(()) if filled == before => {
                send(Chunk::lines(data, filled, ends));
                return;
            }
            Ok(()) => {}
            Err(error) => {
                send(Chunk {
                    error: Some(error),
                    ..Chunk::lines(data, filled, ends)
                });
                return;
            }
        }
        if filled - lines_end > MAX_LINE {
            let seen = (filled - lines_end) as u64;
            data.truncate(lines_end);
            // Give the long line's memory back before following it further.
            data.shrink_to_fit();
            let (long_line, tail, error) = skip_line(&mut decoder, seen);
            let ended = long_line.ended;
            let lines = std::mem::take(&mut data);
            let lines_ends = std::mem::take(&mut ends);
            if !lines.is_empty() && !send(Chunk::lines(lines, lines_end, lines_ends)) {
                return;
            }
            let last = !ended || error.is_some();
            if !send(Chunk {
                long_line: Some(long_line),
                error,
                ..Chunk::lines(Vec::new(), 0, Vec::new())
            }) || last
            {
                return;
            }
            ends.extend(line_ends(&tail, 0));
            lines_end = ends.last().map_or(0, |&end| end as usize);
            filled = tail.len();
            data = tail;
            continue;
        }
        if filled >= CHUNK && lines_end > 0 {
            // The next chunk starts with the line in progress.
            let carry = filled - lines_end;
            let mut next = buffer();
            if next.len() < carry + CHUNK {
                next.resize(carry + CHUNK + (64 << 10), 0);
            }
            next[..carry].copy_from_slice(&data[lines_end..filled]);
            let full = std::mem::replace(&mut data, next);
            let full_len = lines_end;
            let full_ends = std::mem::take(&mut ends);
            filled = carry;
            lines_end = 0;
            if !send(Chunk::lines(full, full_len, full_ends)) {
                return;
            }
        }
    }
}

/// Fills `data[at..at + len]` from `decoder` as far as it will go, adding the line ends it
/// reads to `ends`; returns how much was read and the error that stopped it, the bytes read
/// before an error included.
///
/// Each piece the decoder hands over (a zstd block, 128 KiB at most) is searched for newlines
/// at once, while it is in this core's cache: searched later by the parsing thread, every byte
/// came from another core's cache first, and that search took 7% of `analyze`'s CPU (perf).
fn read_up_to(
    decoder: &mut impl Read,
    data: &mut [u8],
    at: usize,
    len: usize,
    ends: &mut Vec<u32>,
) -> (usize, io::Result<()>) {
    let mut read = 0;
    while read < len {
        let start = at + read;
        match decoder.read(&mut data[start..at + len]) {
            Ok(0) => break,
            Ok(n) => {
                ends.extend(line_ends(&data[start..start + n], start));
                read += n;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (read, Err(e)),
        }
    }
    (read, Ok(()))
}

/// Where each line of `bytes` ends (just past its newline), counted from `offset`. A chunk
/// holds at most [`MAX_LINE`] plus a few [`CHUNK`]s, so its offsets fit in 32 bits.
fn line_ends(bytes: &[u8], offset: usize) -> impl Iterator<Item = u32> + '_ {
    memchr::memchr_iter(b'\n', bytes).map(move |i| (offset + i + 1) as u32)
}

/// Reads on past a line already `seen` bytes long until its newline. Returns the line's account,
/// the bytes read after its newline, and the error that stopped the stream, if one did.
fn skip_line(decoder: &mut impl Read, seen: u64) -> (LongLine, Vec<u8>, Option<io::Error>) {
    let mut len = seen;
    let mut buf = vec![0u8; CHUNK];
    loop {
        if len > MAX_SKIPPED_LINE {
            let line = LongLine {
                len,
                ended: false,
                gave_up: true,
            };
            return (line, Vec::new(), None);
        }
        match decoder.read(&mut buf) {
            Ok(0) => return (LongLine::unended(len), Vec::new(), None),
            Ok(n) => match memchr::memchr(b'\n', &buf[..n]) {
                Some(i) => {
                    len += (i + 1) as u64;
                    let mut tail = Vec::with_capacity(CHUNK + (64 << 10));
                    tail.extend_from_slice(&buf[i + 1..n]);
                    let line = LongLine {
                        len,
                        ended: true,
                        gave_up: false,
                    };
                    return (line, tail, None);
                }
                None => len += n as u64,
            },
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return (LongLine::unended(len), Vec::new(), Some(e)),
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
    on_event: impl FnMut(Event<'_>),
) -> Result<SourceReport, ReadError> {
    read_log_parsing(input, Parsing::for_this_machine(), on_event)
}

fn read_log_parsing(
    input: &LogInput,
    parsing: Parsing,
    mut on_event: impl FnMut(Event<'_>),
) -> Result<SourceReport, ReadError> {
    let mut report = SourceReport::new(input);
    let mut state = ReadState::default();
    for (i, part) in input.parts.iter().enumerate() {
        let is_last_part = i + 1 == input.parts.len();
        let file = read_part(
            part,
            is_last_part,
            parsing,
            &mut report,
            &mut state,
            &mut on_event,
        );
        match file {
            Ok(file) => report.files.push(file),
            // A store that fails mid-log fails the log: its other parts would be read from
            // the same failing store, and a report with a part missing would look like damage.
            Err(err)
                if input.parts.len() == 1
                    || matches!(
                        err.kind,
                        ReadErrorKind::Connection | ReadErrorKind::Credentials
                    ) =>
            {
                return Err(err);
            }
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
    if let Some(first) = &state.first_repeat {
        report.warnings.push(format!(
            "{} line(s) repeat the line just before them byte for byte, first at {first}: the log may have been written twice, and repeated events are counted again",
            state.repeated_lines
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
    parsing: Parsing,
    report: &mut SourceReport,
    state: &mut ReadState,
    on_event: &mut impl FnMut(Event<'_>),
) -> Result<FileReport, ReadError> {
    let count = Arc::new(AtomicU64::new(0));
    let (raw, len) = part.open()?;
    let store_failure = Arc::new(Mutex::new(None));
    let mut raw = Position {
        inner: BufReader::with_capacity(BUFFER, raw),
        count: count.clone(),
        store_failure: store_failure.clone(),
    };
    let mut file = FileReport {
        path: part.display.clone(),
        codec: None,
        bytes: len.unwrap_or(0),
        decoded_bytes: 0,
        lines: 0,
        events: 0,
    };
    let Some(codec) = codec_of(part, &mut raw, report, &store_failure)? else {
        file.codec = Codec::from_name(file_name(part));
        return Ok(file);
    };
    file.codec = Some(codec);
    let (to_parser, chunks) = mpsc::sync_channel::<Chunk>(IN_FLIGHT);
    let (recycle, recycled) = mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT);
    let (decoder, pretty) = crate::pretty::one_event_a_line(codec.decoder(raw));
    if pretty {
        report.warnings.push(format!(
            "{}: pretty-printed JSON (each event over many lines, where Spark writes one a line); it was read event by event, so line numbers below count events",
            part.display
        ));
    }
    let mut reader = PartReader {
        part,
        is_last_part,
        codec,
        file,
        report,
        state,
        on_event,
        previous_line: Vec::new(),
    };
    let budget = Budget::new();
    std::thread::scope(|scope| -> Result<(), ReadError> {
        let budget = &budget;
        // Declared before `_close`, so dropped after it: the budget is closed (the decoder
        // stops waiting on it) before the decoder is joined.
        let decoder_thread = std::thread::Builder::new()
            .name(DECODER_THREAD.into())
            .spawn_scoped(scope, move || {
                decode_chunks(decoder, to_parser, recycled, budget)
            })
            .map_err(|e| {
                ReadError::new(
                    ReadErrorKind::Io,
                    &part.display,
                    None,
                    format!("cannot start a thread to decode it: {e}"),
                )
            })?;
        let _decoder = JoinOnDrop(Some(decoder_thread));
        let _close = CloseOnDrop(budget);
        for mut chunk in chunks {
            let chunk_weight = chunk.weight();
            reader.lines_of(&mut chunk, parsing);
            budget.give_back(chunk_weight);
            // Only buffers of the usual size come back: one grown for a long line is freed.
            if chunk.data.len() <= 2 * CHUNK {
                let _ = recycle.try_send(std::mem::take(&mut chunk.data));
            }
            if let Some(long) = chunk.long_line.take() {
                reader.skip_long_line(long);
            }
            if let Some(err) = chunk.error.take() {
                // The store failed (a connection cut): no damage in the log, and no reason to
                // believe the rest is gone, so the log is not analysed from half its events.
                if let Some(failure) = take_store_failure(&store_failure, part) {
                    return Err(failure);
                }
                let at = error_offset(&err).unwrap_or_else(|| count.load(Ordering::Relaxed));
                reader.stream_failed(&err, at)?;
            }
        }
        Ok(())
    })?;
    let mut file = reader.file;
    if len.is_none() {
        // Standard input has no size up front; what was read is its size.
        file.bytes = count.load(Ordering::Relaxed);
    }
    Ok(file)
}

/// The last segment of the part's path, whose extension may name its codec.
fn file_name(part: &Part) -> &str {
    part.display.rsplit('/').next().unwrap_or_default()
}

/// The store's own failure (a cut connection) kept by [`Position`], named by the part's path.
fn take_store_failure(store_failure: &Mutex<Option<ReadError>>, part: &Part) -> Option<ReadError> {
    store_failure
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .map(|mut failure| {
            failure.path.clone_from(&part.display);
            failure
        })
}

/// The codec of a part from its first bytes (and name); `None` for an empty file.
fn codec_of<R: Read>(
    part: &Part,
    raw: &mut Position<BufReader<R>>,
    report: &mut SourceReport,
    store_failure: &Mutex<Option<ReadError>>,
) -> Result<Option<Codec>, ReadError> {
    let head = match raw.fill_buf() {
        Ok(head) => head,
        Err(e) => {
            return Err(take_store_failure(store_failure, part)
                .unwrap_or_else(|| ReadError::io(&part.display, Some(0), "cannot read", e)));
        }
    };
    if head.is_empty() {
        // Empty is empty whatever the codec its name promises: Spark creates a log before it
        // writes to it, so an empty file is a log with nothing in it yet, not a broken stream.
        report
            .warnings
            .push(format!("{}: the file is empty (0 bytes)", part.display));
        return Ok(None);
    }
    Codec::detect(head, file_name(part))
        .map(Some)
        .ok_or_else(|| {
            ReadError::new(
                ReadErrorKind::NotALog,
                &part.display,
                Some(0),
                "not a Spark event log: the first bytes are neither JSON nor a codec Spark writes",
            )
        })
}

/// One file's lines, as they come decoded, counted into its report and handed on as events.
struct PartReader<'r, F> {
    part: &'r Part,
    is_last_part: bool,
    codec: Codec,
    file: FileReport,
    report: &'r mut SourceReport,
    state: &'r mut ReadState,
    on_event: &'r mut F,
    /// The last line of the previous chunk, to notice a line repeated across the cut.
    previous_line: Vec<u8>,
}

impl<F: FnMut(Event<'_>)> PartReader<'_, F> {
    /// A chunk's lines parsed (on this thread or the pool's) and applied in log order.
    fn lines_of(&mut self, chunk: &mut Chunk, parsing: Parsing) {
        let stream_ended_well = chunk.error.is_none();
        let lines = split_lines_at(&mut chunk.data[..chunk.len], &chunk.ends);
        let shapes = self.shapes_of(&lines);
        match parsing {
            // Each event applied as soon as it is parsed: collecting a chunk's events first
            // moved every one of them (a task end is hundreds of bytes) once more.
            Parsing::InLine => {
                for (shape, line) in shapes.iter().zip(lines) {
                    self.apply(shape, parse_one(line), stream_ended_well);
                }
            }
            Parsing::Parallel => {
                // Applying one segment (on this thread) overlaps parsing the next (on the
                // pool's threads).
                let mut shapes = shapes.iter();
                let mut apply_all = |parsed: Vec<Parsed<'_>>| {
                    for (result, shape) in parsed.into_iter().zip(shapes.by_ref()) {
                        self.apply(shape, result, stream_ended_well);
                    }
                };
                let mut lines = lines.into_iter();
                let mut next_segment = || lines.by_ref().take(SEGMENT).collect::<Vec<_>>();
                let mut parsed = parse_lines(next_segment());
                loop {
                    let segment = next_segment();
                    if segment.is_empty() {
                        apply_all(parsed);
                        break;
                    }
                    let mut parsed_next = Vec::new();
                    rayon::in_place_scope(|scope| {
                        scope.spawn(|_| parsed_next = parse_lines(segment));
                        apply_all(parsed);
                    });
                    parsed = parsed_next;
                }
            }
        }
    }

    /// Each line's length, newline and whether it repeats the line before it.
    fn shapes_of(&mut self, lines: &[&mut [u8]]) -> Vec<LineShape> {
        let mut shapes: Vec<LineShape> = Vec::with_capacity(lines.len());
        for (i, l) in lines.iter().enumerate() {
            let before: &[u8] = if i == 0 {
                &self.previous_line
            } else {
                lines[i - 1]
            };
            shapes.push(LineShape {
                len: l.len(),
                newline: l.last() == Some(&b'\n'),
                repeats: l.len() > 1 && **l == *before,
            });
        }
        if let Some(last) = lines.last() {
            // Lines are rarely long; one that is costs one copy, only when it might repeat.
            self.previous_line.clear();
            if last.len() <= CHUNK {
                self.previous_line.extend_from_slice(last);
            }
        }
        shapes
    }

    /// One line: counted, its event handed on, or what is wrong with it said.
    fn apply(&mut self, line: &LineShape, result: Parsed<'_>, stream_ended_well: bool) {
        let display = &self.part.display;
        let (file, report, state) = (&mut self.file, &mut *self.report, &mut *self.state);
        let line_offset = file.decoded_bytes;
        file.decoded_bytes += line.len as u64;
        file.lines += 1;
        if line.repeats && matches!(&result, Some(Ok(e)) if happens_once(e)) {
            state.repeated_lines += 1;
            if state.first_repeat.is_none() {
                state.first_repeat = Some(format!(
                    "{display} line {} (byte {line_offset})",
                    file.lines
                ));
            }
        }
        match result {
            None => {}
            Some(Ok(event)) => {
                file.events += 1;
                match &event {
                    Event::ApplicationStart(_) => {
                        state.application_starts += 1;
                        if state.application_starts == 2 {
                            report.warnings.push(format!(
                                "{display}: line {} (byte {line_offset}) is a second SparkListenerApplicationStart: two logs may have been joined, and events may be counted twice",
                                file.lines
                            ));
                        }
                    }
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
                (self.on_event)(event);
            }
            // Only the last line of a stream can lack its newline: the writer stopped there.
            Some(Err(failure)) if !line.newline => {
                report.truncated = true;
                report.warnings.push(format!(
                    "{display}: line {} (byte {line_offset}) is cut short{}; it was skipped{}",
                    file.lines,
                    describe_event(&failure),
                    if self.is_last_part && stream_ended_well {
                        " (the writer stopped mid-line)"
                    } else {
                        ""
                    },
                ));
            }
            Some(Err(failure)) => {
                report.malformed_lines += 1;
                if state.located < LOCATED_LINE_LIMIT {
                    state.located += 1;
                    report.warnings.push(format!(
                        "{display}: line {} (byte {line_offset}) is not a valid event{}: {}; it was skipped",
                        file.lines,
                        describe_event(&failure),
                        failure.error.as_ref().map_or(
                            "expected a JSON object with an \"Event\" key".to_string(),
                            |e| e.to_string()
                        ),
                    ));
                }
            }
        }
    }

    /// A line over the limit on one event, which the decoder skipped without keeping it.
    fn skip_long_line(&mut self, long: LongLine) {
        let (display, file, report) = (&self.part.display, &mut self.file, &mut *self.report);
        let line_offset = file.decoded_bytes;
        file.decoded_bytes += long.len;
        file.lines += 1;
        report.malformed_lines += 1;
        self.previous_line.clear();
        report.warnings.push(format!(
            "{display}: line {} (byte {line_offset}) is {}{} bytes long, over the {} MiB limit on one event; it was skipped",
            file.lines,
            if long.ended { "" } else { "at least " },
            long.len,
            MAX_LINE >> 20,
        ));
        if long.gave_up {
            report.gaps = true;
            report.warnings.push(format!(
                "{display}: no newline within {} MiB of line {}, so the rest of this file was not read",
                MAX_SKIPPED_LINE >> 20,
                file.lines,
            ));
        }
    }

    /// The decoded stream failed at compressed byte `at`: nothing decoded is an error; a cut
    /// stream or corrupt data after some lines is said, and the file read as far as it went.
    fn stream_failed(&mut self, err: &io::Error, at: u64) -> Result<(), ReadError> {
        let (display, codec, file, report) = (
            &self.part.display,
            self.codec,
            &self.file,
            &mut *self.report,
        );
        if file.decoded_bytes == 0 {
            return Err(ReadError::new(
                ReadErrorKind::Codec,
                display,
                Some(at),
                format!("cannot decode as {codec}: {err}"),
            ));
        }
        if err.kind() == io::ErrorKind::UnexpectedEof {
            report.truncated = true;
            // The reader runs ahead of the decoder, so `at` is where the input ended, not
            // where the unfinished frame began: say that it ended, and after what.
            report.warnings.push(format!(
                "{display}: the {codec} stream is cut short: its {at} bytes end inside a compressed {} ({err}); events after line {} are missing{}",
                match codec {
                    Codec::Zstd => "frame",
                    Codec::Gzip => "member",
                    _ => "block",
                },
                file.lines,
                if self.is_last_part { "" } else { " from this file" },
            ));
        } else {
            report.gaps = true;
            report.warnings.push(format!(
                "{display}: corrupt {codec} data at byte {at}, after line {} ({err}); the rest of this file was skipped",
                file.lines
            ));
        }
        Ok(())
    }
}

/// Events Spark writes once each (every task, job, stage, executor and query has its own ids
/// or times), so that the same line twice in a row means a duplicated log. Others can repeat
/// byte for byte in a real log: Databricks writes runs of identical empty
/// `SparkListenerDriverAccumUpdates`.
fn happens_once(event: &Event<'_>) -> bool {
    matches!(
        event,
        Event::LogStart(_)
            | Event::ApplicationStart(_)
            | Event::ApplicationEnd(_)
            | Event::EnvironmentUpdate(_)
            | Event::JobStart(_)
            | Event::JobEnd(_)
            | Event::StageSubmitted(_)
            | Event::StageCompleted(_)
            | Event::TaskStart(_)
            | Event::TaskEnd(_)
            | Event::ExecutorAdded(_)
            | Event::ExecutorRemoved(_)
            | Event::SqlExecutionStart(_)
            | Event::SqlExecutionEnd(_)
    )
}

/// What parsing made of one line: nothing for a blank line, else the event or why not.
type Parsed<'a> = Option<Result<Event<'a>, ParseFailure<'a>>>;

/// Where a chunk's lines are parsed before they are applied in log order on the reading thread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Parsing {
    /// On the reading thread, line after line.
    InLine,
    /// On the pool's threads, segment by segment, each segment parsed while the one before it
    /// is applied.
    Parallel,
}

impl Parsing {
    /// The decoder has a thread of its own and the model is applied on the reading thread, so
    /// parsing in parallel pays only with a core beyond those two. On two cores the pool's
    /// threads only took time from them: waking and idling between segments (65,000
    /// `sched_yield` calls on the 1 GB bench log) cost a sixth of the reading's CPU time for a
    /// longer wall time (docs/performance.md, sixth round).
    fn for_this_machine() -> Parsing {
        match std::thread::available_parallelism() {
            Ok(cores) if cores.get() > 2 => Parsing::Parallel,
            _ => Parsing::InLine,
        }
    }
}

/// Lines parsed as one piece of work, applied while the next segment is parsed: 128 task ends
/// are about 600 KB, two segments to a chunk. Smaller segments overlap more but cost more in
/// waking the pool's threads (64 lines and 8 to a task: 9% of the profile in scheduling).
const SEGMENT: usize = 128;
/// Fewest lines one thread of the pool parses at a time.
const LINES_PER_TASK: usize = 32;

/// Parses lines on the pool's threads, keeping their order.
fn parse_lines(lines: Vec<&mut [u8]>) -> Vec<Parsed<'_>> {
    lines
        .into_par_iter()
        .with_min_len(LINES_PER_TASK)
        .map(parse_one)
        .collect()
}

fn parse_one(line: &mut [u8]) -> Parsed<'_> {
    let line: &[u8] = trim_line_end(line);
    (!line.iter().all(u8::is_ascii_whitespace)).then(|| parse_line(line))
}

/// A line's length and whether it ended with a newline, taken before parsing edits it.
struct LineShape {
    len: usize,
    newline: bool,
    /// Byte for byte the line before it: a log written twice, or joined with itself.
    repeats: bool,
}

/// The lines of `data` with their newline, cut at `ends` (where the decoder found each
/// newline), then the rest if it lacks one, as separate mutable slices so each parser can edit
/// its own line.
fn split_lines_at<'d>(data: &'d mut [u8], ends: &[u32]) -> Vec<&'d mut [u8]> {
    let mut lines = Vec::with_capacity(ends.len() + 1);
    let mut rest = data;
    let mut start = 0;
    for &end in ends {
        let end = end as usize;
        let (line, tail) = std::mem::take(&mut rest).split_at_mut(end - start);
        lines.push(line);
        rest = tail;
        start = end;
    }
    if !rest.is_empty() {
        lines.push(rest);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out its bytes a few at a time, in pieces of changing sizes, as a decoder might.
    struct Trickle<'a> {
        bytes: &'a [u8],
        piece: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.piece = self.piece % 13 + 1;
            let n = self.piece.min(out.len()).min(self.bytes.len());
            out[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    /// Everything a read hands on and reports, in a form two reads can be compared by.
    fn read_with(path: &std::path::Path, parsing: Parsing) -> (Vec<String>, String) {
        let input = &crate::discover(path.to_str().unwrap()).unwrap()[0];
        let mut events = Vec::new();
        let report =
            read_log_parsing(input, parsing, |event| events.push(format!("{event:?}"))).unwrap();
        (events, format!("{report:?}"))
    }

    /// Parsing on the reading thread and on the pool's threads hand on the same events in the
    /// same order and report the same, on real logs of every layout the tests have (plain,
    /// zstd, rolling) and on one damaged mid-log and cut short. CI's two cores take only the
    /// first way, so this is where the second is kept honest.
    #[test]
    fn both_ways_of_parsing_read_the_same() {
        let logs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/logs/");
        let plain = std::path::Path::new(logs).join("single/plain/local-1796049337368");
        let mut damaged = std::fs::read(&plain).unwrap();
        let middle = damaged.len() / 2
            + damaged[damaged.len() / 2..]
                .iter()
                .position(|&b| b == b'\n')
                .unwrap()
            + 1;
        damaged.splice(
            middle..middle,
            *b"{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":[}\n",
        );
        damaged.truncate(damaged.len() - 40);
        // Removed when the test ends, passed or not.
        let dir = tempfile::tempdir().unwrap();
        let damaged_path = dir.path().join("damaged");
        std::fs::write(&damaged_path, &damaged).unwrap();
        for path in [
            plain.clone(),
            std::path::Path::new(logs).join("single/zstd/local-1796049355449.zstd"),
            std::path::Path::new(logs).join("rolling/zstd/eventlog_v2_local-1796049428891"),
            damaged_path.clone(),
        ] {
            let (in_line, in_line_report) = read_with(&path, Parsing::InLine);
            let (parallel, parallel_report) = read_with(&path, Parsing::Parallel);
            assert!(
                in_line.len() > 100,
                "{}: {} events",
                path.display(),
                in_line.len()
            );
            assert!(in_line == parallel, "{}: the events differ", path.display());
            assert_eq!(in_line_report, parallel_report, "{}", path.display());
        }
        let (_, damaged_report) = read_with(&damaged_path, Parsing::InLine);
        assert!(
            damaged_report.contains("malformed_lines: 1")
                && damaged_report.contains("truncated: true"),
            "{damaged_report}"
        );
    }

    /// The line ends the decoder finds piece by piece cut a real log into exactly its lines,
    /// across chunks, with the last line's missing newline kept as a line of its own.
    #[test]
    fn lines_cut_at_the_decoders_ends_are_the_logs_lines() {
        let path = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/logs/single/plain/local-1796049337368"
        );
        let whole = std::fs::read(path).unwrap();
        // Without its final newline, and repeated so that lines straddle chunks.
        let mut text = whole.repeat(3);
        text.pop();
        assert!(text.len() > 2 * CHUNK, "the log must fill several chunks");
        let (to_parser, chunks) = mpsc::sync_channel::<Chunk>(IN_FLIGHT);
        let (_recycle, recycled) = mpsc::sync_channel::<Vec<u8>>(IN_FLIGHT);
        let budget = Budget::new();
        let mut lines: Vec<Vec<u8>> = Vec::new();
        std::thread::scope(|scope| {
            let budget = &budget;
            let trickle = Trickle {
                bytes: &text,
                piece: 0,
            };
            scope.spawn(move || decode_chunks(trickle, to_parser, recycled, budget));
            for mut chunk in chunks {
                assert!(chunk.error.is_none() && chunk.long_line.is_none());
                let weight = chunk.weight();
                let len = chunk.len;
                lines.extend(
                    split_lines_at(&mut chunk.data[..len], &chunk.ends)
                        .into_iter()
                        .map(|line| line.to_vec()),
                );
                budget.give_back(weight);
            }
        });
        let expected: Vec<Vec<u8>> = text
            .split_inclusive(|&b| b == b'\n')
            .map(<[u8]>::to_vec)
            .collect();
        assert_eq!(lines.len(), expected.len());
        assert!(lines == expected, "a line was cut in the wrong place");
        assert!(!lines.last().unwrap().ends_with(b"\n"));
    }
}
