//! Packed columns of task figures: millions of tasks' durations kept beside the model in a byte
//! or two each, and the one way sparkdiag compresses a block in memory ([`compress`],
//! [`decompress`]), which the model's folded stages use too.

use std::cell::RefCell;

thread_local! {
    // One zstd context a thread, kept: making one (ZSTD_createCCtx and ZSTD_createDCtx, which
    // clear their tables) took 5 % of `analyze`'s CPU on the read bench's log, more than
    // compressing a stage's columns, when each block made its own.
    static COMPRESSOR: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static DECOMPRESSOR: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// `bytes` compressed at zstd `level` with this thread's context.
pub fn compress(bytes: &[u8], level: i32) -> std::io::Result<Vec<u8>> {
    COMPRESSOR.with(|cell| match cell.try_borrow_mut() {
        Ok(mut kept) => {
            let compressor = match kept.as_mut() {
                Some(compressor) => {
                    compressor.set_compression_level(level)?;
                    compressor
                }
                None => kept.insert(zstd::bulk::Compressor::new(level)?),
            };
            compressor.compress(bytes)
        }
        Err(_) => zstd::bulk::compress(bytes, level),
    })
}

/// What [`compress`] made of `len` bytes, back, with this thread's context.
pub fn decompress(bytes: &[u8], len: usize) -> std::io::Result<Vec<u8>> {
    DECOMPRESSOR.with(|cell| match cell.try_borrow_mut() {
        Ok(mut kept) => {
            let decompressor = match kept.as_mut() {
                Some(decompressor) => decompressor,
                None => kept.insert(zstd::bulk::Decompressor::new()?),
            };
            decompressor.decompress(bytes, len)
        }
        Err(_) => zstd::bulk::decompress(bytes, len),
    })
}

/// A column of one figure a task (durations, bytes; never negative) as LEB128 variable-length
/// integers: one or two bytes a task for most durations, where millions of tasks must fit beside
/// the model. A stage's tasks do the same work, so their figures repeat: once there are enough
/// of them to outweigh zstd's frame they are kept compressed (durations about half a byte a task
/// on the memory bench's real tasks), and read back far faster than a replay or a rule then
/// spends on each value. A clone shares the bytes, so the what-if's replay graph holds the
/// rules' durations instead of a second copy of them.
#[derive(Debug, Clone, Default)]
pub struct Varints {
    count: usize,
    /// The LEB128 bytes' length when `bytes` holds them compressed; `None` when it holds them
    /// as they are.
    compressed_from: Option<usize>,
    bytes: std::sync::Arc<[u8]>,
}

/// Fewer LEB128 bytes than this are kept as they are: zstd's frame would weigh more than the
/// saving, and every reading would decompress them for nothing.
const COMPRESS_FROM_BYTES: usize = 1024;

impl Varints {
    pub fn new(values: impl Iterator<Item = i64>) -> Varints {
        let mut bytes = Vec::new();
        let mut count = 0;
        for d in values {
            let mut value = d.max(0) as u64;
            while value >= 0x80 {
                bytes.push(value as u8 | 0x80);
                value >>= 7;
            }
            bytes.push(value as u8);
            count += 1;
        }
        if bytes.len() >= COMPRESS_FROM_BYTES
            && let Ok(compressed) = compress(&bytes, 3)
            && compressed.len() < bytes.len() / 8 * 7
        {
            return Varints {
                count,
                compressed_from: Some(bytes.len()),
                bytes: compressed.into(),
            };
        }
        Varints {
            count,
            compressed_from: None,
            bytes: bytes.into(),
        }
    }

    /// How many values.
    pub fn len(&self) -> usize {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Bytes held.
    pub fn stored_bytes(&self) -> usize {
        self.bytes.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        let bytes: std::borrow::Cow<'_, [u8]> = match self.compressed_from {
            None => (&*self.bytes).into(),
            Some(len) => decompress(&self.bytes, len)
                .expect("the values were compressed by this process")
                .into(),
        };
        let mut at = 0;
        std::iter::from_fn(move || {
            let mut value = 0u64;
            let mut shift = 0;
            while let Some(&byte) = bytes.get(at) {
                at += 1;
                value |= u64::from(byte & 0x7f) << shift;
                if byte < 0x80 {
                    return Some(value as i64);
                }
                shift += 7;
            }
            None
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Varints;

    #[test]
    fn durations_read_back_as_written_in_a_byte_or_two_each() {
        let written = [0, 1, 127, 128, 16_383, 16_384, u32::MAX as i64];
        let durations = Varints::new(written.into_iter());
        assert_eq!(durations.iter().collect::<Vec<_>>(), written);
        assert_eq!(durations.len(), written.len());
        assert_eq!(durations.stored_bytes(), 1 + 1 + 1 + 2 + 2 + 3 + 5);
    }

    /// A large stage's durations, as real stages have them (few distinct values), are kept
    /// compressed and read back the same; varied ones never take more than as they are.
    #[test]
    fn a_large_stages_durations_are_kept_compressed_when_that_saves_memory() {
        let repetitive: Vec<i64> = (0..100_000).map(|i| [12, 15, 15, 17, 300][i % 5]).collect();
        let durations = Varints::new(repetitive.iter().copied());
        assert!(durations.iter().eq(repetitive.iter().copied()));
        assert!(durations.stored_bytes() < repetitive.len() / 10);
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let varied: Vec<i64> = (0..100_000)
            .map(|_| {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 40) as i64
            })
            .collect();
        let durations = Varints::new(varied.iter().copied());
        assert!(durations.iter().eq(varied.iter().copied()));
        let leb128_bytes: usize = varied
            .iter()
            .map(|&d| (64 - d.leading_zeros() as usize).div_ceil(7).max(1))
            .sum();
        assert!(durations.stored_bytes() <= leb128_bytes);
    }
}
