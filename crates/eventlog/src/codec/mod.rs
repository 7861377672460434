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

/// zstd frames, with a failure to start the decoder reported as a read error instead of at open.
struct ZstdFrames<'r> {
    state: Result<
        zstd::stream::read::Decoder<'r, Box<dyn io::BufRead + Send + 'r>>,
        Option<io::Error>,
    >,
}

impl<'r> ZstdFrames<'r> {
    fn new(raw: impl io::BufRead + Send + 'r) -> Self {
        let boxed: Box<dyn io::BufRead + Send + 'r> = Box::new(raw);
        Self {
            state: zstd::stream::read::Decoder::with_buffer(boxed).map_err(Some),
        }
    }
}

impl Read for ZstdFrames<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        match &mut self.state {
            Ok(decoder) => decoder.read(out),
            Err(err) => Err(err
                .take()
                .unwrap_or_else(|| invalid("zstd decoder failed to start".into()))),
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

fn cut(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, message)
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

#[cfg(test)]
mod tests {
    use super::*;

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
