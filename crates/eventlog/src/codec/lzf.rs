//! Spark's `.lzf` framing: ning compress-lzf chunks (`ZV`, type byte, big-endian lengths).
//!
//! `ZV\x00 <len u16>` holds stored bytes, `ZV\x01 <compressed u16> <original u16>` one LZF block.
//! The LZF block decoder is written here because no maintained crate offers it (`lzf` is marked
//! deprecated); it is the liblzf token format, bounds-checked on every copy.

use std::io::{self, Read};

use super::{BlockDecoder, cut, fill, invalid};

/// Decodes a stream of ning LZF chunks.
pub struct LzfReader<R> {
    inner: R,
    compressed: Vec<u8>,
    offset: u64,
}

impl<R: Read> LzfReader<R> {
    pub fn new(inner: R) -> Self {
        Self {
            inner,
            compressed: Vec::new(),
            offset: 0,
        }
    }
}

impl<R: Read> BlockDecoder for LzfReader<R> {
    fn next_block(&mut self, block: &mut Vec<u8>) -> io::Result<bool> {
        loop {
            let mut head = [0u8; 5];
            let at = self.offset;
            let got = fill(&mut self.inner, &mut head)?;
            if got == 0 {
                return Ok(false);
            }
            if got < 5 {
                return Err(cut(at, format!("lzf chunk header cut short at byte {at}")));
            }
            if &head[..2] != b"ZV" || head[2] > 1 {
                return Err(invalid(
                    at,
                    format!("expected an lzf chunk header (\"ZV\") at byte {at}"),
                ));
            }
            let first = usize::from(u16::from_be_bytes([head[3], head[4]]));
            let (stored, compressed_len, original_len) = if head[2] == 0 {
                (true, first, first)
            } else {
                let mut more = [0u8; 2];
                if fill(&mut self.inner, &mut more)? < 2 {
                    return Err(cut(at, format!("lzf chunk header cut short at byte {at}")));
                }
                (false, first, usize::from(u16::from_be_bytes(more)))
            };
            self.offset += if stored { 5 } else { 7 } + compressed_len as u64;
            self.compressed.resize(compressed_len, 0);
            if fill(&mut self.inner, &mut self.compressed)? < compressed_len {
                return Err(cut(at, format!("lzf chunk at byte {at} cut short")));
            }
            if stored {
                std::mem::swap(block, &mut self.compressed);
            } else {
                block.resize(original_len, 0);
                decompress(&self.compressed, block)
                    .map_err(|why| invalid(at, format!("corrupt lzf chunk at byte {at}: {why}")))?;
            }
            if block.is_empty() {
                continue;
            }
            return Ok(true);
        }
    }
}

/// Decodes one LZF block into `out`, which must be exactly the original length.
fn decompress(input: &[u8], out: &mut [u8]) -> Result<(), &'static str> {
    let (mut ip, mut op) = (0usize, 0usize);
    while ip < input.len() {
        let ctrl = usize::from(input[ip]);
        ip += 1;
        if ctrl < 32 {
            // A literal run of ctrl + 1 bytes.
            let len = ctrl + 1;
            let src = input
                .get(ip..ip + len)
                .ok_or("literal runs past the input")?;
            out.get_mut(op..op + len)
                .ok_or("literal runs past the output")?
                .copy_from_slice(src);
            ip += len;
            op += len;
        } else {
            // A back reference: length in the top 3 bits (7 = extended), offset in 13 bits.
            let mut len = ctrl >> 5;
            if len == 7 {
                len += usize::from(*input.get(ip).ok_or("reference runs past the input")?);
                ip += 1;
            }
            len += 2;
            let low = usize::from(*input.get(ip).ok_or("reference runs past the input")?);
            ip += 1;
            let distance = ((ctrl & 0x1F) << 8) + low + 1;
            if distance > op {
                return Err("reference points before the start of the block");
            }
            if op + len > out.len() {
                return Err("reference runs past the output");
            }
            // Byte by byte: the source may overlap the bytes being written.
            for i in 0..len {
                out[op + i] = out[op + i - distance];
            }
            op += len;
        }
    }
    if op != out.len() {
        return Err("block is shorter than its header says");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(bytes: &[u8]) -> io::Result<Vec<u8>> {
        let mut out = Vec::new();
        crate::codec::Blocks::new(LzfReader::new(bytes)).read_to_end(&mut out)?;
        Ok(out)
    }

    #[test]
    fn decodes_stored_and_compressed_chunks() {
        // "abcabcabc\n": literal "abc", a back reference of length 6 at distance 3, literal "\n".
        let block = [2, b'a', b'b', b'c', (4 << 5), 2, 0, b'\n'];
        let mut bytes = b"ZV\x01".to_vec();
        bytes.extend((block.len() as u16).to_be_bytes());
        bytes.extend(10u16.to_be_bytes());
        bytes.extend(block);
        bytes.extend(b"ZV\x00\x00\x03hi\n");
        assert_eq!(decode(&bytes).unwrap(), b"abcabcabc\nhi\n");
    }

    #[test]
    fn rejects_references_before_the_start_and_cut_chunks() {
        let mut bytes = b"ZV\x01\x00\x02\x00\x05".to_vec();
        bytes.extend([(3 << 5), 9]);
        assert_eq!(
            decode(&bytes).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        assert_eq!(
            decode(b"ZV\x00\x00\x09abc").unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
    }
}
