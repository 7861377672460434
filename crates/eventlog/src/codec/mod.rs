//! Compression codecs of Spark event logs, recognised from their first bytes.

mod lz4block;
mod lzf;
mod snappy;

use std::fmt;
use std::io::{self, Read};

pub use lz4block::Lz4BlockReader;
pub use lzf::LzfReader;
pub use snappy::XerialSnappyReader;

/// How an event-log file is compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    /// Uncompressed JSON lines.
    Plain,
    /// A sequence of standard zstd frames (Spark's default since 3.2).
    Zstd,
    /// lz4-java's `LZ4Block` framing.
    Lz4,
    /// snappy-java's framing.
    Snappy,
    /// ning compress-lzf chunks.
    Lzf,
    /// gzip, possibly several members (Databricks roll files).
    Gzip,
    /// bzip2, which Spark does not write but users do (`bzip2 app-1`), possibly several streams.
    Bzip2,
    /// xz, likewise written by hand (`xz app-1`), possibly several streams.
    Xz,
}

impl Codec {
    pub fn name(self) -> &'static str {
        match self {
            Codec::Plain => "plain",
            Codec::Zstd => "zstd",
            Codec::Lz4 => "lz4",
            Codec::Snappy => "snappy",
            Codec::Lzf => "lzf",
            Codec::Gzip => "gzip",
            Codec::Bzip2 => "bzip2",
            Codec::Xz => "xz",
        }
    }

    /// Recognises a codec from the first bytes of a file, or failing that from its name.
    ///
    /// Magic bytes win because users rename files; the name only decides when the head says
    /// nothing, e.g. an empty file.
    pub fn detect(head: &[u8], file_name: &str) -> Option<Codec> {
        Self::from_magic(head).or_else(|| {
            if head.is_empty() {
                Self::from_name(file_name)
            } else {
                None
            }
        })
    }

    pub fn from_magic(head: &[u8]) -> Option<Codec> {
        const ZSTD: &[u8] = &[0x28, 0xB5, 0x2F, 0xFD];
        if head.starts_with(ZSTD) {
            Some(Codec::Zstd)
        } else if head.starts_with(&[0x1F, 0x8B]) {
            Some(Codec::Gzip)
        } else if head.len() >= 4 && head.starts_with(b"BZh") && (b'1'..=b'9').contains(&head[3]) {
            Some(Codec::Bzip2)
        } else if head.starts_with(&[0xFD, b'7', b'z', b'X', b'Z', 0x00]) {
            Some(Codec::Xz)
        } else if head.starts_with(b"LZ4Block") {
            Some(Codec::Lz4)
        } else if head.starts_with(snappy::MAGIC) {
            Some(Codec::Snappy)
        } else if head.len() >= 3 && head.starts_with(b"ZV") && head[2] <= 1 {
            Some(Codec::Lzf)
        } else if first_non_space(head) == Some(b'{') {
            Some(Codec::Plain)
        } else {
            None
        }
    }

    pub fn from_name(file_name: &str) -> Option<Codec> {
        let name = file_name
            .trim_end_matches(".inprogress")
            .trim_end_matches(".compact");
        match name.rsplit_once('.').map(|(_, ext)| ext) {
            Some("zstd" | "zst") => Some(Codec::Zstd),
            Some("lz4") => Some(Codec::Lz4),
            Some("snappy") => Some(Codec::Snappy),
            Some("lzf") => Some(Codec::Lzf),
            Some("gz") => Some(Codec::Gzip),
            Some("bz2") => Some(Codec::Bzip2),
            Some("xz") => Some(Codec::Xz),
            Some("json" | "jsonl" | "log") | None => Some(Codec::Plain),
            _ => None,
        }
    }

    /// Wraps a raw byte stream in this codec's decoder.
    pub fn decoder<'r>(self, raw: impl io::BufRead + Send + 'r) -> Box<dyn Read + Send + 'r> {
        match self {
            Codec::Plain => Box::new(raw),
            Codec::Zstd => Box::new(ZstdFrames::new(raw)),
            Codec::Lz4 => Box::new(Blocks::new(Lz4BlockReader::new(raw))),
            Codec::Snappy => Box::new(Blocks::new(XerialSnappyReader::new(raw))),
            Codec::Lzf => Box::new(Blocks::new(LzfReader::new(raw))),
            Codec::Gzip => Box::new(flate2::bufread::MultiGzDecoder::new(raw)),
            Codec::Bzip2 => Box::new(bzip2::bufread::MultiBzDecoder::new(raw)),
            Codec::Xz => Box::new(xz_decoder(raw, XZ_MEMORY_LIMIT_KIB)),
        }
    }
}

impl fmt::Display for Codec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A decoder of Spark's block framings: it yields the output one whole block at a time.
pub trait BlockDecoder {
    /// Decodes the next non-empty block into `block`; returns false at a clean end of input.
    fn next_block(&mut self, block: &mut Vec<u8>) -> io::Result<bool>;
}

/// Serves a [`BlockDecoder`]'s blocks through [`Read`].
pub struct Blocks<D> {
    decoder: D,
    block: Vec<u8>,
    pos: usize,
}

impl<D: BlockDecoder> Blocks<D> {
    pub fn new(decoder: D) -> Self {
        Blocks {
            decoder,
            block: Vec::new(),
            pos: 0,
        }
    }
}

impl<D: BlockDecoder> Read for Blocks<D> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.pos == self.block.len() {
            if !self.decoder.next_block(&mut self.block)? {
                return Ok(0);
            }
            self.pos = 0;
        }
        let n = out.len().min(self.block.len() - self.pos);
        out[..n].copy_from_slice(&self.block[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// Largest zstd window accepted: 2^27 = 128 MiB, zstd's own default limit for decoding. Spark
/// writes level-1 frames with windows of a few MiB; a frame asking for more is refused rather
/// than allowed to reserve gigabytes.
pub const ZSTD_WINDOW_LOG_MAX: u32 = 27;

/// Most memory an xz block's dictionary may ask for, in KiB: 128 MiB, as for zstd's window.
/// `xz -9` asks for 64 MiB; a header claiming gigabytes is refused rather than allocated.
pub const XZ_MEMORY_LIMIT_KIB: u32 = 128 << 10;

/// An xz reader over every stream of the file, refusing blocks that need more than `limit_kib`.
fn xz_decoder<'r>(
    raw: impl io::BufRead + Send + 'r,
    limit_kib: u32,
) -> lzma_rust2::XzReader<impl io::BufRead + Send + 'r> {
    lzma_rust2::XzReader::new_mem_limit(raw, true, limit_kib)
}

/// zstd's largest block (`ZSTD_BLOCKSIZE_MAX`).
const ZSTD_BLOCK: usize = 128 << 10;

/// zstd frames, decoded with the streaming API so that every byte a damaged frame yields before
/// its damage is handed on (as `zstd -dc` writes it) instead of being lost with the error.
struct ZstdFrames<R> {
    raw: R,
    decoder: Option<zstd::stream::raw::Decoder<'static>>,
    /// Compressed bytes consumed so far: where an error happened.
    pos: u64,
    /// Inside a frame that has not ended yet (so input ending here is a cut).
    in_frame: bool,
    /// An error met after some output was returned, reported on the next call.
    pending: Option<io::Error>,
    /// After an error nothing more is decoded.
    failed: bool,
    /// Decoded bytes not yet handed out: `buf[start..end]`.
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl<R: io::BufRead> ZstdFrames<R> {
    fn new(raw: R) -> Self {
        let mut decoder = zstd::stream::raw::Decoder::new().ok();
        if let Some(d) = decoder.as_mut()
            && d.set_parameter(zstd::stream::raw::DParameter::WindowLogMax(
                ZSTD_WINDOW_LOG_MAX,
            ))
            .is_err()
        {
            decoder = None;
        }
        Self {
            raw,
            decoder,
            pos: 0,
            in_frame: false,
            pending: None,
            failed: false,
            buf: Vec::new(),
            start: 0,
            end: 0,
        }
    }
}

impl<R: io::BufRead> Read for ZstdFrames<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        if self.start == self.end {
            if out.len() >= ZSTD_BLOCK {
                // Room for a whole block: decode straight into it, sparing a copy.
                let n = self.decode_into(Target::Caller(&mut out[..ZSTD_BLOCK]))?;
                return match (n, self.pending.take()) {
                    (0, Some(err)) => Err(err),
                    (n, pending) => {
                        self.pending = pending;
                        Ok(n)
                    }
                };
            }
            self.end = self.decode_into(Target::Own)?;
            self.start = 0;
        }
        if self.start == self.end {
            return match self.pending.take() {
                Some(err) => Err(err),
                None => Ok(0),
            };
        }
        let n = out.len().min(self.end - self.start);
        out[..n].copy_from_slice(&self.buf[self.start..self.start + n]);
        self.start += n;
        Ok(n)
    }
}

/// Where [`ZstdFrames`] decodes to: the caller's buffer when it has a block's room, else its own.
enum Target<'a> {
    Caller(&'a mut [u8]),
    Own,
}

impl<R: io::BufRead> ZstdFrames<R> {
    /// Decodes into a whole block-sized buffer, as the zstd tool does, and returns how many
    /// bytes came out (0 at the end or after an error, which is then pending). Given less
    /// room, zstd can be mid-flush when it meets damage and drop what it had not flushed; given
    /// room for a whole frame, it decodes it in one go and keeps none of it when the frame's
    /// end is bad.
    fn decode_into(&mut self, target: Target<'_>) -> io::Result<usize> {
        use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
        if self.failed {
            return Ok(0);
        }
        let Some(decoder) = self.decoder.as_mut() else {
            self.failed = true;
            self.pending = Some(invalid(0, "the zstd decoder failed to start".into()));
            return Ok(0);
        };
        let out: &mut [u8] = match target {
            Target::Caller(out) => out,
            Target::Own => {
                if self.buf.is_empty() {
                    self.buf = vec![0u8; ZSTD_BLOCK];
                }
                &mut self.buf
            }
        };
        loop {
            let input = self.raw.fill_buf()?;
            if input.is_empty() {
                if self.in_frame {
                    self.failed = true;
                    self.pending = Some(cut(
                        self.pos,
                        format!("zstd frame cut short at byte {}", self.pos),
                    ));
                }
                return Ok(0);
            }
            let mut in_buf = InBuffer::around(input);
            let mut out_buf = OutBuffer::around(&mut *out);
            let result = decoder.run(&mut in_buf, &mut out_buf);
            let (consumed, produced) = (in_buf.pos(), out_buf.pos());
            self.raw.consume(consumed);
            self.pos += consumed as u64;
            match result {
                Err(e) => {
                    self.failed = true;
                    self.pending = Some(invalid(
                        self.pos,
                        format!("corrupt zstd data at byte {}: {e}", self.pos),
                    ));
                    return Ok(produced);
                }
                // 0: a frame ended and everything it held was flushed; the next may start.
                Ok(hint) => self.in_frame = hint != 0,
            }
            if produced > 0 {
                return Ok(produced);
            }
        }
    }
}

fn first_non_space(bytes: &[u8]) -> Option<u8> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    bytes.iter().copied().find(|b| !b.is_ascii_whitespace())
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read.
fn fill(reader: &mut impl Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match reader.read(&mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// A decoding failure with the byte offset in the compressed file where it was found, carried
/// inside an [`io::Error`] so the reader can say where a file broke.
#[derive(Debug)]
pub struct DecodeError {
    pub offset: u64,
    pub message: String,
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for DecodeError {}

/// The compressed-file offset a decoder attached to `err`, if any.
pub fn error_offset(err: &io::Error) -> Option<u64> {
    err.get_ref()
        .and_then(|e| e.downcast_ref::<DecodeError>())
        .map(|e| e.offset)
}

/// Reads exactly `len` bytes into `buf` (replacing its contents) unless the input ends first;
/// returns how many were read. The buffer grows only as bytes arrive, so a length a damaged
/// header claims costs nothing until the data is really there.
fn read_exact_growing(reader: &mut impl Read, buf: &mut Vec<u8>, len: usize) -> io::Result<usize> {
    buf.clear();
    // What is already allocated is reused; beyond it, reading doubles the buffer as it fills.
    loop {
        match (&mut *reader)
            .take((len - buf.len()) as u64)
            .read_to_end(buf)
        {
            Ok(_) => return Ok(buf.len()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn cut(offset: u64, message: String) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        DecodeError { offset, message },
    )
}

fn invalid(offset: u64, message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, DecodeError { offset, message })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An xz stream whose dictionary needs more than the limit is an error, not an allocation.
    #[test]
    fn an_xz_dictionary_past_the_limit_is_refused() {
        let line = b"{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"4.3.0\"}\n";
        let mut child = match std::process::Command::new("xz")
            .args(["-6", "-c"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
        {
            Ok(child) => child,
            Err(_) if std::env::var_os("CI").is_none() => {
                eprintln!("skipped: no xz on PATH to make the stream");
                return;
            }
            Err(e) => panic!("xz is needed under CI: {e}"),
        };
        use std::io::Write;
        child.stdin.take().unwrap().write_all(line).unwrap();
        let xz = child.wait_with_output().unwrap().stdout;
        // `xz -6` writes an 8 MiB dictionary.
        let mut out = Vec::new();
        let refused = xz_decoder(&xz[..], 1024).read_to_end(&mut out);
        assert!(
            refused.is_err(),
            "read {} bytes under a 1 MiB limit",
            out.len()
        );
        out.clear();
        Codec::Xz.decoder(&xz[..]).read_to_end(&mut out).unwrap();
        assert_eq!(out, line);
    }

    #[test]
    fn magic_bytes_win_over_the_file_name() {
        assert_eq!(
            Codec::detect(&[0x28, 0xB5, 0x2F, 0xFD, 0], "app.lz4"),
            Some(Codec::Zstd)
        );
        assert_eq!(
            Codec::detect(b"{\"Event\":\"x\"}", "app.zstd"),
            Some(Codec::Plain)
        );
        assert_eq!(Codec::detect(b"", "events_1_app.zstd"), Some(Codec::Zstd));
        assert_eq!(Codec::detect(b"\x89PNG\r\n", "app.zstd"), None);
        assert_eq!(
            Codec::from_name("app.snappy.inprogress"),
            Some(Codec::Snappy)
        );
        assert_eq!(
            Codec::from_name("events_3_app.lz4.compact"),
            Some(Codec::Lz4)
        );
    }
}
