//! Spark's `.snappy` framing: snappy-java's `SnappyOutputStream`, not the Snappy framing format.
//!
//! A 16-byte header (`\x82SNAPPY\0`, version, compatible version, both big-endian) is followed by
//! chunks, each a big-endian length and one raw Snappy block. A length whose bytes are the start of
//! the magic begins a concatenated stream.

use std::io::{self, Read};

use super::{BlockDecoder, cut, fill, invalid, read_exact_growing};

pub const MAGIC: &[u8; 8] = b"\x82SNAPPY\0";
const HEADER_LEN: usize = 16;
/// Largest decoded chunk accepted: 64 MiB. snappy-java writes chunks of its block size, 32 KiB
/// by default (`spark.io.compression.snappy.blockSize`); 2048 times that leaves room for any
/// configured size while a chunk's claimed length cannot reserve gigabytes.
pub const MAX_CHUNK: usize = 64 << 20;
/// The longest one Snappy element can expand: a 3-byte copy yields at most 64 bytes.
const MAX_RATIO: usize = 22;

/// Decodes a snappy-java stream.
pub struct XerialSnappyReader<R> {
    inner: R,
    decoder: snap::raw::Decoder,
    compressed: Vec<u8>,
    offset: u64,
    header_read: bool,
}

impl<R: Read> XerialSnappyReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            decoder: snap::raw::Decoder::new(),
            compressed: Vec::new(),
            offset: 0,
            header_read: false,
        }
    }

    fn read_header(&mut self, already: &[u8]) -> io::Result<()> {
        let mut header = [0u8; HEADER_LEN];
        header[..already.len()].copy_from_slice(already);
        let at = self.offset;
        if fill(&mut self.inner, &mut header[already.len()..])? < HEADER_LEN - already.len() {
            return Err(cut(
                at,
                format!("snappy stream header cut short at byte {at}"),
            ));
        }
        if &header[..8] != MAGIC {
            return Err(invalid(
                at,
                format!("expected the snappy-java header (\\x82SNAPPY\\0) at byte {at}"),
            ));
        }
        self.offset += HEADER_LEN as u64;
        Ok(())
    }
}

impl<R: Read> BlockDecoder for XerialSnappyReader<R> {
    fn next_block(&mut self, block: &mut Vec<u8>) -> io::Result<bool> {
        if !self.header_read {
            self.read_header(&[])?;
            self.header_read = true;
        }
        loop {
            let mut len_bytes = [0u8; 4];
            let got = fill(&mut self.inner, &mut len_bytes)?;
            let at = self.offset;
            if got == 0 {
                return Ok(false);
            }
            if got < 4 {
                return Err(cut(
                    at,
                    format!("snappy chunk length cut short at byte {at}"),
                ));
            }
            if len_bytes == MAGIC[..4] {
                self.read_header(&len_bytes)?;
                continue;
            }
            let len = i32::from_be_bytes(len_bytes);
            if len < 0 || len as usize > snap::raw::max_compress_len(MAX_CHUNK) {
                return Err(invalid(
                    at,
                    format!("corrupt snappy chunk length {len} at byte {at}"),
                ));
            }
            let len = len as usize;
            self.offset += 4 + len as u64;
            if read_exact_growing(&mut self.inner, &mut self.compressed, len)? < len {
                return Err(cut(at, format!("snappy chunk at byte {at} cut short")));
            }
            let original = snap::raw::decompress_len(&self.compressed)
                .map_err(|e| invalid(at, format!("corrupt snappy chunk at byte {at}: {e}")))?;
            // A chunk's varint can claim gigabytes; no real chunk decodes to more than the
            // chunk cap, nor can Snappy's format expand more than MAX_RATIO times.
            if original > MAX_CHUNK || original > MAX_RATIO * len + 16 {
                return Err(invalid(
                    at,
                    format!("snappy chunk at byte {at} claims {original} bytes from {len}"),
                ));
            }
            block.resize(original, 0);
            self.decoder
                .decompress(&self.compressed, block)
                .map_err(|e| invalid(at, format!("corrupt snappy chunk at byte {at}: {e}")))?;
            if original == 0 {
                continue;
            }
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream(chunks: &[&[u8]]) -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.extend(1i32.to_be_bytes());
        out.extend(1i32.to_be_bytes());
        for chunk in chunks {
            let c = snap::raw::Encoder::new().compress_vec(chunk).unwrap();
            out.extend((c.len() as i32).to_be_bytes());
            out.extend(c);
        }
        out
    }

    fn decode(bytes: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        crate::codec::Blocks::new(XerialSnappyReader::new(bytes)).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn reads_chunks_and_concatenated_streams() {
        let mut bytes = stream(&[b"line one\n", b"line two\n"]);
        bytes.extend(stream(&[b"next stream\n"]));
        assert_eq!(
            decode(&bytes).unwrap(),
            b"line one\nline two\nnext stream\n"
        );
    }

    #[test]
    fn a_cut_chunk_is_unexpected_eof() {
        let bytes = stream(&[b"line one that is long enough\n"]);
        let err = decode(&bytes[..bytes.len() - 2]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        assert!(err.to_string().contains("byte 16"), "{err}");
    }

    #[test]
    fn a_chunk_claiming_gigabytes_is_rejected_without_allocating() {
        let mut bytes = stream(&[]);
        // A 4-byte raw snappy block whose varint length claims ~2.9 GB.
        bytes.extend(4i32.to_be_bytes());
        bytes.extend([0xFF, 0xFF, 0xFF, 0x0A]);
        let err = decode(&bytes).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{err}");
    }
}
