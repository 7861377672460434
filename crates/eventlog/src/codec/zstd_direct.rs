//! zstd frames decoded block by block straight into the reader's chunk buffers, with zstd's
//! buffer-less API (`ZSTD_decompressBegin`, `ZSTD_nextSrcSizeToDecompress`,
//! `ZSTD_decompressContinue`), so that no byte is copied out of a window of zstd's own.
//!
//! zstd reads its window from the output itself: the current buffer up to where it has written,
//! and the one segment before it (zstd remembers a single earlier, non-contiguous segment). So
//! the buffers are owned here: a buffer the decoder has moved on from is *held* until zstd can no
//! longer read it, and only then handed back to the caller (who gives it to the parser, which
//! edits text in place). A frame whose window is larger than a buffer's fill
//! ([`ZstdChunks::new`]'s `max_window`) is decoded by zstd's streaming decoder instead, which
//! keeps its own window and copies out, as [`super::ZstdFrames`] does for every frame.

use std::collections::VecDeque;
use std::io::{self, BufRead};
use std::ptr::NonNull;

use zstd::zstd_safe::zstd_sys as sys;

use super::{ZSTD_BLOCK, ZSTD_WINDOW_LOG_MAX, cut, invalid};

/// Room every decoding step is given: one whole block.
pub(crate) const BLOCK: usize = ZSTD_BLOCK;

const MAGIC_SKIPPABLE_MASK: u32 = 0xFFFF_FFF0;
const MAGIC_SKIPPABLE_START: u32 = 0x184D_2A50;
/// A frame header's first bytes: the magic number and the frame header descriptor.
const HEADER_PREFIX: usize = 5;

/// A decoding context of zstd's, freed with the reader.
struct Context(NonNull<sys::ZSTD_DCtx>);

impl Context {
    fn new() -> Option<Self> {
        // SAFETY: creating a context has no precondition; a null result is checked.
        NonNull::new(unsafe { sys::ZSTD_createDCtx() }).map(Context)
    }
}

impl Drop for Context {
    fn drop(&mut self) {
        // SAFETY: the context came from `ZSTD_createDCtx` and is freed once, here.
        unsafe {
            sys::ZSTD_freeDCtx(self.0.as_ptr());
        }
    }
}

// SAFETY: the context is owned by one reader and used by one thread at a time (the reader moves
// to the decoding thread whole); zstd's contexts have no thread affinity.
unsafe impl Send for Context {}

fn is_error(code: usize) -> bool {
    // SAFETY: a pure function of its argument.
    unsafe { sys::ZSTD_isError(code) != 0 }
}

/// What the next compressed bytes are.
enum Frame {
    /// The start of a frame, or the end of the input.
    Between,
    /// A frame decoded by the buffer-less API into the current buffer.
    Direct,
    /// A frame whose window the buffers cannot hold, decoded by zstd's streaming decoder.
    Streamed,
    /// A skippable frame, with this many bytes of it left to pass over.
    Skip(u64),
}

/// zstd frames decoded into buffers this reader owns: see the module's comment.
pub(crate) struct ZstdChunks<R> {
    raw: R,
    context: Option<Context>,
    stream: Option<zstd::stream::raw::Decoder<'static>>,
    frame: Frame,
    /// Largest window decoded straight into the buffers.
    max_window: u64,
    /// Compressed bytes consumed so far: where an error happened.
    pos: u64,
    /// An error met after some output was returned, reported on the next call.
    pending: Option<io::Error>,
    /// After an error nothing more is decoded.
    failed: bool,
    /// Compressed bytes of one step, gathered when the reader's buffer did not hold them whole.
    staging: Vec<u8>,
    /// The current frame's header, gathered to read its window size before decoding it.
    header: Vec<u8>,
    /// The buffer being decoded into: `cur[..filled]` is decoded text.
    cur: Vec<u8>,
    filled: usize,
    /// The block being decoded is stored as it is (raw), so its bytes may come in pieces.
    raw_block: bool,
    /// Where zstd's last write into `cur` ended, to tell a new buffer from a continuation.
    last_end: *const u8,
    /// The buffer before `cur`, which zstd may still read as the earlier part of its window.
    held: Option<Vec<u8>>,
    /// Buffers zstd no longer reads, oldest first, to be taken back by the caller.
    released: VecDeque<Vec<u8>>,
}

// SAFETY: `last_end` is only compared, never dereferenced; everything else is `Send`.
unsafe impl<R: Send> Send for ZstdChunks<R> {}

impl<R: BufRead> ZstdChunks<R> {
    /// A reader decoding into `first` (at least [`BLOCK`] long). `max_window` is the largest
    /// window decoded straight into the buffers: the caller promises to decode at least that
    /// many bytes into each buffer before it [`switch`](Self::switch)es to the next.
    pub(crate) fn new(raw: R, first: Vec<u8>, max_window: usize) -> Self {
        let mut first = first;
        if first.len() < BLOCK {
            first.resize(BLOCK, 0);
        }
        ZstdChunks {
            raw,
            context: Context::new(),
            stream: None,
            frame: Frame::Between,
            max_window: max_window as u64,
            pos: 0,
            pending: None,
            failed: false,
            staging: Vec::new(),
            header: Vec::new(),
            cur: first,
            filled: 0,
            raw_block: false,
            last_end: std::ptr::null(),
            held: None,
            released: VecDeque::new(),
        }
    }

    /// The decoded text of the current buffer.
    pub(crate) fn text(&self) -> &[u8] {
        &self.cur[..self.filled]
    }

    pub(crate) fn filled(&self) -> usize {
        self.filled
    }

    /// Room left in the current buffer; a step needs [`BLOCK`].
    pub(crate) fn room(&self) -> usize {
        self.cur.len() - self.filled
    }

    /// Moves on to `next`, which starts with `text()[from..]` (the line in progress) and has
    /// room for at least a block after it. The buffer left is held while zstd may read it; the
    /// one held before is released. Returns how many bytes were carried over.
    pub(crate) fn switch(&mut self, next: Vec<u8>, from: usize) -> usize {
        let carry = self.filled - from;
        let mut next = next;
        if next.len() < carry + BLOCK {
            next.resize(carry + BLOCK, 0);
        }
        if !self.last_end.is_null() && next[carry..].as_ptr() == self.last_end {
            // Right where zstd's last write ended: zstd would take it for a continuation of the
            // buffer left and read across both. Another allocation, while this one is alive,
            // cannot start there.
            let other = vec![0u8; next.len()];
            next = other;
        }
        next[..carry].copy_from_slice(&self.cur[from..self.filled]);
        let left = std::mem::replace(&mut self.cur, next);
        self.filled = carry;
        // zstd forgets the buffer held so far at its next step, which goes to the new buffer and
        // so is not contiguous with its last write: it then keeps the buffer left (or nothing,
        // at a frame's start).
        if let Some(old) = self.held.take() {
            self.released.push_back(old);
        }
        if matches!(self.frame, Frame::Direct) {
            self.held = Some(left);
        } else {
            self.released.push_back(left);
        }
        carry
    }

    /// A buffer zstd no longer reads, oldest first.
    pub(crate) fn take_released(&mut self) -> Option<Vec<u8>> {
        self.released.pop_front()
    }

    /// Ends decoding: every buffer, held and current, is free; returns the current one and how
    /// much of it is decoded text (the held one, if any, is released first).
    pub(crate) fn finish(mut self) -> (VecDeque<Vec<u8>>, Vec<u8>, usize) {
        if let Some(held) = self.held.take() {
            self.released.push_back(held);
        }
        // The context goes first, though it reads nothing unless called.
        drop(self.context.take());
        (
            std::mem::take(&mut self.released),
            std::mem::take(&mut self.cur),
            self.filled,
        )
    }

    /// Decodes the next piece of text (a block at most) onto the end of the current buffer,
    /// which must have [`BLOCK`] of room; returns its length, 0 at the end of the input. After
    /// an error, which comes after all text decoded before it, nothing more is decoded.
    pub(crate) fn decode_piece(&mut self) -> io::Result<usize> {
        if let Some(err) = self.pending.take() {
            return Err(err);
        }
        if self.failed {
            return Ok(0);
        }
        if self.room() < BLOCK {
            return Err(io::Error::other(
                "zstd: no room for a block (the reader must switch buffers first)",
            ));
        }
        loop {
            match self.frame {
                Frame::Between => {
                    if !self.start_frame()? {
                        return Ok(0);
                    }
                }
                Frame::Skip(left) => {
                    if left == 0 {
                        self.frame = Frame::Between;
                        continue;
                    }
                    let input = self.raw.fill_buf()?;
                    if input.is_empty() {
                        return Err(self.cut());
                    }
                    let n = (input.len() as u64).min(left) as usize;
                    self.raw.consume(n);
                    self.pos += n as u64;
                    self.frame = Frame::Skip(left - n as u64);
                }
                Frame::Direct => {
                    let n = self.direct_step()?;
                    if n > 0 {
                        return Ok(n);
                    }
                }
                Frame::Streamed => {
                    let n = self.streamed_step()?;
                    if n > 0 {
                        return Ok(n);
                    }
                }
            }
        }
    }

    fn cut(&mut self) -> io::Error {
        self.failed = true;
        cut(
            self.pos,
            format!("zstd frame cut short at byte {}", self.pos),
        )
    }

    fn corrupt(&mut self, what: &str) -> io::Error {
        self.failed = true;
        invalid(
            self.pos,
            format!("corrupt zstd data at byte {}: {what}", self.pos),
        )
    }

    /// Appends input to `header` until it holds `want` bytes; false if the input ends first.
    fn gather_header(&mut self, want: usize) -> io::Result<bool> {
        while self.header.len() < want {
            let input = self.raw.fill_buf()?;
            if input.is_empty() {
                return Ok(false);
            }
            let n = input.len().min(want - self.header.len());
            self.header.extend_from_slice(&input[..n]);
            self.raw.consume(n);
            self.pos += n as u64;
        }
        Ok(true)
    }

    /// Reads the next frame's header and starts decoding it; false at a clean end of input.
    fn start_frame(&mut self) -> io::Result<bool> {
        self.header.clear();
        // A new frame reads nothing decoded before it.
        if let Some(held) = self.held.take() {
            self.released.push_back(held);
        }
        let mut want = HEADER_PREFIX;
        let header = loop {
            if !self.gather_header(want)? {
                if self.header.is_empty() {
                    return Ok(false);
                }
                return Err(self.cut());
            }
            let magic = u32::from_le_bytes(self.header[..4].try_into().unwrap_or_default());
            if magic & MAGIC_SKIPPABLE_MASK == MAGIC_SKIPPABLE_START {
                if self.header.len() < 8 {
                    want = 8;
                    continue;
                }
                let len = u32::from_le_bytes(self.header[4..8].try_into().unwrap_or_default());
                self.frame = Frame::Skip(len.into());
                return Ok(true);
            }
            // SAFETY: all-zero is a valid value of this plain C struct.
            let mut header: sys::ZSTD_FrameHeader = unsafe { std::mem::zeroed() };
            // SAFETY: `header` is a valid place to write to; the source is `self.header`, whole.
            let need = unsafe {
                sys::ZSTD_getFrameHeader(
                    &mut header,
                    self.header.as_ptr().cast(),
                    self.header.len(),
                )
            };
            if is_error(need) {
                return Err(self.corrupt(zstd::zstd_safe::get_error_name(need)));
            }
            if need == 0 {
                break header;
            }
            want = need;
        };
        if header.windowSize <= self.max_window
            && let Some(context) = &self.context
        {
            let context = context.0.as_ptr();
            // SAFETY: a valid context; beginning resets it, and it then reads no earlier output.
            let begun = unsafe { sys::ZSTD_decompressBegin(context) };
            if is_error(begun) {
                return Err(self.corrupt(zstd::zstd_safe::get_error_name(begun)));
            }
            self.frame = Frame::Direct;
            let mut at = 0;
            while at < self.header.len() {
                // SAFETY: a valid context.
                let need = unsafe { sys::ZSTD_nextSrcSizeToDecompress(context) };
                let need = need.min(self.header.len() - at);
                let dst = &mut self.cur[self.filled..];
                // SAFETY: the source is `need` bytes of `self.header`; the destination is the
                // free end of the current buffer, which zstd does not write while it reads a
                // header (and, at a frame's start, takes as the start of its window).
                let done = unsafe {
                    sys::ZSTD_decompressContinue(
                        context,
                        dst.as_mut_ptr().cast(),
                        dst.len(),
                        self.header[at..].as_ptr().cast(),
                        need,
                    )
                };
                if is_error(done) {
                    return Err(self.corrupt(zstd::zstd_safe::get_error_name(done)));
                }
                at += need;
            }
            self.last_end = self.cur[self.filled..].as_ptr();
            return Ok(true);
        }
        // A window larger than the buffers hold (or no context): zstd's own streaming decoder.
        if self.stream.is_none() {
            let mut decoder = zstd::stream::raw::Decoder::new().ok();
            if let Some(d) = decoder.as_mut()
                && d.set_parameter(zstd::stream::raw::DParameter::WindowLogMax(
                    ZSTD_WINDOW_LOG_MAX,
                ))
                .is_err()
            {
                decoder = None;
            }
            self.stream = decoder;
        }
        let Some(stream) = self.stream.as_mut() else {
            self.failed = true;
            return Err(invalid(0, "the zstd decoder failed to start".into()));
        };
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        let _ = stream.reinit();
        let mut in_buf = InBuffer::around(&self.header[..]);
        let mut out_buf = OutBuffer::around(&mut self.cur[self.filled..]);
        let result = stream.run(&mut in_buf, &mut out_buf);
        let (consumed, produced) = (in_buf.pos(), out_buf.pos());
        if let Err(e) = result {
            return Err(self.corrupt(&e.to_string()));
        }
        debug_assert!(consumed == self.header.len() && produced == 0);
        self.frame = Frame::Streamed;
        Ok(true)
    }

    /// One step of a frame decoded straight into the buffer: a block header, a block, or the
    /// checksum. Returns the text it decoded.
    fn direct_step(&mut self) -> io::Result<usize> {
        let Some(context) = &self.context else {
            return Err(self.corrupt("no context"));
        };
        let context = context.0.as_ptr();
        // SAFETY: a valid context.
        let need = unsafe { sys::ZSTD_nextSrcSizeToDecompress(context) };
        if need == 0 {
            self.frame = Frame::Between;
            return Ok(0);
        }
        // SAFETY: a valid context.
        let kind = unsafe { sys::ZSTD_nextInputType(context) };
        let in_raw_block = self.raw_block
            && matches!(
                kind,
                sys::ZSTD_nextInputType_e::ZSTDnit_block
                    | sys::ZSTD_nextInputType_e::ZSTDnit_lastBlock
            );
        let input = self.raw.fill_buf()?;
        if input.is_empty() {
            return Err(self.cut());
        }
        // A stored (raw) block is copied as its bytes come, as zstd's streaming decoder does, so
        // that a cut one still hands on what it holds; others are decoded whole.
        let need = if in_raw_block && self.staging.is_empty() {
            need.min(input.len())
        } else {
            need
        };
        let whole = self.staging.is_empty() && input.len() >= need;
        if !whole {
            // Gather the step's bytes across the reader's buffer refills (a block is 128 KiB at
            // most, plus its header; a damaged size is refused by zstd below 2 MiB).
            while self.staging.len() < need {
                let input = self.raw.fill_buf()?;
                if input.is_empty() {
                    return Err(self.cut());
                }
                let n = input.len().min(need - self.staging.len());
                self.staging.extend_from_slice(&input[..n]);
                self.raw.consume(n);
                self.pos += n as u64;
            }
        }
        let src: &[u8] = if whole {
            &self.raw.fill_buf()?[..need]
        } else {
            &self.staging[..need]
        };
        if kind == sys::ZSTD_nextInputType_e::ZSTDnit_blockHeader {
            // Its type: bits 1 and 2 of the first byte, 0 for a stored block.
            self.raw_block = src.first().is_some_and(|b| (b >> 1) & 3 == 0);
        }
        let dst = &mut self.cur[self.filled..];
        // SAFETY: `src` is `need` readable bytes; `dst` is the free end of the current buffer,
        // which zstd writes up to its length. zstd also reads what it wrote before: the current
        // buffer up to `filled` (contiguous with `dst`) and the buffer held before it, both owned
        // here and neither changed nor freed while zstd may read them (`switch`).
        let done = unsafe {
            sys::ZSTD_decompressContinue(
                context,
                dst.as_mut_ptr().cast(),
                dst.len(),
                src.as_ptr().cast(),
                need,
            )
        };
        if whole {
            self.raw.consume(need);
            self.pos += need as u64;
        } else {
            self.staging.clear();
        }
        if is_error(done) {
            return Err(self.corrupt(zstd::zstd_safe::get_error_name(done)));
        }
        self.filled += done;
        self.last_end = self.cur[self.filled..].as_ptr();
        Ok(done)
    }

    /// One call of the streaming decoder, for a frame with a large window.
    fn streamed_step(&mut self) -> io::Result<usize> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        let input = self.raw.fill_buf()?;
        if input.is_empty() {
            return Err(self.cut());
        }
        let Some(stream) = self.stream.as_mut() else {
            return Err(self.corrupt("no decoder"));
        };
        let mut in_buf = InBuffer::around(input);
        let mut out_buf = OutBuffer::around(&mut self.cur[self.filled..]);
        let result = stream.run(&mut in_buf, &mut out_buf);
        let (consumed, produced) = (in_buf.pos(), out_buf.pos());
        self.raw.consume(consumed);
        self.pos += consumed as u64;
        self.filled += produced;
        match result {
            Err(e) => {
                let err = self.corrupt(&e.to_string());
                if produced == 0 {
                    return Err(err);
                }
                self.pending = Some(err);
            }
            // 0: the frame ended and everything it held was flushed.
            Ok(0) => self.frame = Frame::Between,
            Ok(_) => {}
        }
        Ok(produced)
    }
}

impl<R: BufRead> ZstdChunks<R> {
    /// Decodes until `enough` says the text so far is enough, or the input ends, or the buffer
    /// is full; false when an error stopped it, which is then reported by the next call.
    pub(crate) fn decode_head(&mut self, enough: impl Fn(&[u8]) -> bool) -> bool {
        while !enough(self.text()) && self.room() >= BLOCK {
            match self.decode_piece() {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) => {
                    self.pending = Some(e);
                    return false;
                }
            }
        }
        true
    }
}

/// [`ZstdChunks`] read as a plain stream, for a reader that edits what it reads (the
/// pretty-printed logs' re-joiner): the text is copied out of buffers of `chunk` bytes and more,
/// each filled before the next, so that zstd's window (at most `chunk`) is always there.
pub(crate) struct ZstdRead<R> {
    chunks: ZstdChunks<R>,
    served: usize,
    chunk: usize,
}

impl<R: BufRead> ZstdRead<R> {
    /// Serves the text already decoded first. `chunk` must be the `max_window` the reader was
    /// made with.
    pub(crate) fn new(chunks: ZstdChunks<R>, chunk: usize) -> Self {
        ZstdRead {
            chunks,
            served: 0,
            chunk,
        }
    }
}

impl<R: BufRead> io::Read for ZstdRead<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if out.is_empty() {
            return Ok(0);
        }
        loop {
            let text = self.chunks.text();
            if self.served < text.len() {
                let n = out.len().min(text.len() - self.served);
                out[..n].copy_from_slice(&text[self.served..self.served + n]);
                self.served += n;
                return Ok(n);
            }
            if self.chunks.filled() >= self.chunk || self.chunks.room() < BLOCK {
                let mut next = self.chunks.take_released().unwrap_or_default();
                next.resize(self.chunk + BLOCK, 0);
                let filled = self.chunks.filled();
                self.chunks.switch(next, filled);
                self.served = 0;
            }
            if self.chunks.decode_piece()? == 0 {
                return Ok(0);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    const CHUNK: usize = 1 << 20;

    /// Text with matches reaching far back: numbered lines, repeated with changes.
    fn text(len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 100);
        let mut i = 0u64;
        while out.len() < len {
            writeln!(
                out,
                "{{\"Event\":\"SparkListenerTaskEnd\",\"Task ID\":{},\"Stage ID\":{},\"pad\":\"{}\"}}",
                i,
                i % 97,
                "x".repeat((i % 300) as usize)
            )
            .unwrap();
            i += 1;
        }
        out
    }

    fn decode(compressed: &[u8]) -> (Vec<u8>, Option<io::Error>) {
        let chunks = ZstdChunks::new(
            io::BufReader::with_capacity(4096, compressed),
            Vec::new(),
            CHUNK,
        );
        let mut reader = ZstdRead::new(chunks, CHUNK);
        let mut out = Vec::new();
        let mut piece = vec![0u8; 70_000];
        loop {
            match reader.read(&mut piece) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&piece[..n]),
                Err(e) => return (out, Some(e)),
            }
        }
    }

    #[test]
    fn frames_of_every_kind_decode_as_zstd_decodes_them() {
        let plain = text(5 << 20);
        let mut compressed = Vec::new();
        // Spark's kind: level 1, no content size, a 512 KiB window, over many buffers.
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
        encoder.write_all(&plain[..3 << 20]).unwrap();
        compressed.extend(encoder.finish().unwrap());
        // A skippable frame, then small frames with their content size, then one whose window
        // (8 MiB) is larger than a buffer, decoded by the streaming decoder.
        compressed.extend([0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 1, 2, 3]);
        for piece in plain[3 << 20..4 << 20].chunks(100_000) {
            compressed.extend(zstd::encode_all(piece, 3).unwrap());
        }
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), 19).unwrap();
        encoder.window_log(23).unwrap();
        encoder.include_checksum(true).unwrap();
        encoder.write_all(&plain[4 << 20..]).unwrap();
        compressed.extend(encoder.finish().unwrap());
        let (out, error) = decode(&compressed);
        assert!(error.is_none(), "{error:?}");
        assert!(out == plain, "{} bytes of {}", out.len(), plain.len());
    }

    #[test]
    fn a_cut_frame_keeps_what_came_before_and_says_where_the_input_ended() {
        let plain = text(3 << 20);
        let compressed = zstd::stream::encode_all(&plain[..], 1).unwrap();
        let cut_at = compressed.len() * 2 / 3;
        let (out, error) = decode(&compressed[..cut_at]);
        let error = error.expect("a cut is an error");
        assert_eq!(error.kind(), io::ErrorKind::UnexpectedEof);
        assert_eq!(super::super::error_offset(&error), Some(cut_at as u64));
        assert!(out.len() > plain.len() / 2 && plain.starts_with(&out));
    }

    #[test]
    fn damage_keeps_every_block_before_it_and_names_its_offset() {
        let plain = text(3 << 20);
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
        encoder.include_checksum(true).unwrap();
        encoder.write_all(&plain).unwrap();
        let mut compressed = encoder.finish().unwrap();
        let last = compressed.len() - 1;
        compressed[last] ^= 0xFF;
        let (out, error) = decode(&compressed);
        let error = error.expect("a bad checksum is an error");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert_eq!(
            super::super::error_offset(&error),
            Some(compressed.len() as u64)
        );
        assert!(error.to_string().contains("checksum"), "{error}");
        // Every block was decoded into the buffers before the checksum was read.
        assert!(out == plain);
        // Garbage after a good frame is named at the frame's end.
        let mut trailing = zstd::stream::encode_all(&plain[..1000], 1).unwrap();
        let good = trailing.len();
        trailing.extend(b"not zstd at all");
        let (out, error) = decode(&trailing);
        let error = error.expect("garbage is an error");
        assert_eq!(error.kind(), io::ErrorKind::InvalidData);
        assert!(
            error.to_string().contains("Unknown frame descriptor"),
            "{error}"
        );
        assert!(super::super::error_offset(&error).unwrap() >= good as u64);
        assert_eq!(out, &plain[..1000]);
    }

    #[test]
    fn a_window_past_the_limit_is_refused() {
        let plain = text(1 << 20);
        let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
        encoder.window_log(ZSTD_WINDOW_LOG_MAX + 1).unwrap();
        encoder.write_all(&plain).unwrap();
        let compressed = encoder.finish().unwrap();
        let (out, error) = decode(&compressed);
        assert!(out.is_empty());
        assert!(error.expect("refused").to_string().contains("memory"));
    }

    /// Stored blocks (of text that does not compress) come out as their bytes arrive, so a cut
    /// one hands on all it holds: as much as zstd's streaming decoder does, or more (given a
    /// whole block's room, it keeps a cut block's bytes until the block is complete).
    #[test]
    fn a_cut_stored_block_hands_on_what_it_holds_as_the_streaming_decoder_does() {
        let mut state = 0x2545_F491_4F6C_DD1Du64;
        let noise: Vec<u8> = (0..300_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 32) as u8
            })
            .collect();
        let compressed = zstd::stream::encode_all(&noise[..], 1).unwrap();
        for cut_at in [100_000, 200_000, compressed.len() - 1] {
            let (direct, error) = decode(&compressed[..cut_at]);
            assert_eq!(error.unwrap().kind(), io::ErrorKind::UnexpectedEof);
            let mut streamed = Vec::new();
            let failed = super::super::Codec::Zstd
                .decoder(&compressed[..cut_at])
                .read_to_end(&mut streamed);
            assert!(failed.is_err());
            assert!(direct.len() >= streamed.len(), "cut at {cut_at}");
            assert!(direct.len() > cut_at - 1000 && noise.starts_with(&direct));
        }
    }
}
