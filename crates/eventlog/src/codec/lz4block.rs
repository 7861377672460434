//! Spark's `.lz4` framing: lz4-java's `LZ4BlockOutputStream`, which is not the LZ4 frame format.
//!
//! Each block is a 21-byte little-endian header (`"LZ4Block"`, token, compressed length, original
//! length, masked XXHash32 of the original bytes) followed by a raw LZ4 block or stored bytes. An
//! all-zero RAW header ends one stream; Spark reads on past it, so concatenated streams are valid.

use std::io::{self, Read};

use super::{BlockDecoder, cut, fill, invalid, read_exact_growing};

const MAGIC: &[u8; 8] = b"LZ4Block";
const HEADER_LEN: usize = 21;
const METHOD_RAW: u8 = 0x10;
const METHOD_LZ4: u8 = 0x20;
const CHECKSUM_SEED: u32 = 0x9747_b28c;

/// Decodes an lz4-java block stream, verifying every block's checksum.
pub struct Lz4BlockReader<R> {
    inner: R,
    compressed: Vec<u8>,
    /// Offset in the compressed input of the next header, for error messages.
    offset: u64,
}

impl<R: Read> Lz4BlockReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            compressed: Vec::new(),
            offset: 0,
        }
    }
}

impl<R: Read> BlockDecoder for Lz4BlockReader<R> {
    /// Loads the next non-empty block; returns false at a clean end of input.
    fn next_block(&mut self, block: &mut Vec<u8>) -> io::Result<bool> {
        loop {
            let mut header = [0u8; HEADER_LEN];
            let got = fill(&mut self.inner, &mut header)?;
            if got == 0 {
                return Ok(false);
            }
            let at = self.offset;
            if got < HEADER_LEN {
                return Err(cut(at, format!("lz4 block header cut short at byte {at}")));
            }
            if &header[..8] != MAGIC {
                return Err(invalid(
                    at,
                    format!("expected an lz4 block header (\"LZ4Block\") at byte {at}"),
                ));
            }
            let token = header[8];
            let method = token & 0xF0;
            let level = u32::from(token & 0x0F);
            let compressed_len = i32::from_le_bytes(header[9..13].try_into().unwrap());
            let original_len = i32::from_le_bytes(header[13..17].try_into().unwrap());
            let checksum = u32::from_le_bytes(header[17..21].try_into().unwrap());
            // lz4-java's block size is 2^(10 + level) bytes, at most 32 MiB (level 15); the
            // compressed form is never longer than LZ4's worst case for that size. A header
            // claiming more is corrupt, and nothing is allocated for it.
            let max_len = 1i64 << (10 + level);
            let max_compressed = max_len + max_len / 255 + 16;
            if (method != METHOD_RAW && method != METHOD_LZ4)
                || compressed_len < 0
                || original_len < 0
                || i64::from(original_len) > max_len
                || i64::from(compressed_len) > max_compressed
                || (original_len == 0) != (compressed_len == 0)
                || (method == METHOD_RAW && original_len != compressed_len)
            {
                return Err(invalid(
                    at,
                    format!("corrupt lz4 block header at byte {at}"),
                ));
            }
            let (compressed_len, original_len) = (compressed_len as usize, original_len as usize);
            self.offset += HEADER_LEN as u64 + compressed_len as u64;
            if original_len == 0 {
                // End-of-stream mark; another stream may follow.
                continue;
            }
            if read_exact_growing(&mut self.inner, &mut self.compressed, compressed_len)?
                < compressed_len
            {
                return Err(cut(at, format!("lz4 block at byte {at} cut short")));
            }
            block.resize(original_len, 0);
            if method == METHOD_RAW {
                block.copy_from_slice(&self.compressed);
            } else {
                let n = lz4_flex::block::decompress_into(&self.compressed, block)
                    .map_err(|e| invalid(at, format!("corrupt lz4 block at byte {at}: {e}")))?;
                if n != original_len {
                    return Err(invalid(
                        at,
                        format!(
                            "lz4 block at byte {at} decodes to {n} bytes, header says {original_len}"
                        ),
                    ));
                }
            }
            let actual = twox_hash::XxHash32::oneshot(CHECKSUM_SEED, block) & 0x0FFF_FFFF;
            if actual != checksum {
                return Err(invalid(
                    at,
                    format!("lz4 block at byte {at} fails its checksum"),
                ));
            }
            return Ok(true);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a block exactly as lz4-java lays it out.
    fn block(data: &[u8], compress: bool) -> Vec<u8> {
        let payload = if compress {
            lz4_flex::block::compress(data)
        } else {
            data.to_vec()
        };
        let token = if compress { METHOD_LZ4 } else { METHOD_RAW } | 5;
        let mut out = MAGIC.to_vec();
        out.push(token);
        out.extend((payload.len() as i32).to_le_bytes());
        out.extend((data.len() as i32).to_le_bytes());
        out.extend((twox_hash::XxHash32::oneshot(CHECKSUM_SEED, data) & 0x0FFF_FFFF).to_le_bytes());
        out.extend(payload);
        out
    }

    fn end_mark() -> Vec<u8> {
        let mut out = MAGIC.to_vec();
        out.push(METHOD_RAW | 5);
        out.extend([0u8; 12]);
        out
    }

    fn decode(bytes: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        crate::codec::Blocks::new(Lz4BlockReader::new(bytes)).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn reads_concatenated_streams_with_raw_and_compressed_blocks() {
        let mut bytes = block(b"hello hello hello hello\n", true);
        bytes.extend(block(b"raw\n", false));
        bytes.extend(end_mark());
        bytes.extend(block(b"second stream\n", true));
        bytes.extend(end_mark());
        assert_eq!(
            decode(&bytes).unwrap(),
            b"hello hello hello hello\nraw\nsecond stream\n"
        );
    }

    #[test]
    fn a_cut_block_is_unexpected_eof_and_a_bad_checksum_is_invalid() {
        let bytes = block(b"some text that compresses some text", true);
        let err = decode(&bytes[..bytes.len() - 3]).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
        let mut bad = bytes.clone();
        let last = bad.len() - 1;
        bad[17] ^= 1;
        let err = decode(&bad).unwrap_err();
        assert_eq!(
            err.kind(),
            io::ErrorKind::InvalidData,
            "{err} (last byte {last})"
        );
        assert!(err.to_string().contains("checksum"));
    }

    #[test]
    fn rejects_lengths_above_the_block_level_before_allocating() {
        let mut bytes = MAGIC.to_vec();
        bytes.push(METHOD_LZ4 | 5);
        bytes.extend(100i32.to_le_bytes());
        bytes.extend(i32::MAX.to_le_bytes());
        bytes.extend([0u8; 4]);
        let err = decode(&bytes).unwrap_err();
        assert!(
            err.to_string()
                .contains("corrupt lz4 block header at byte 0"),
            "{err}"
        );
    }
}
