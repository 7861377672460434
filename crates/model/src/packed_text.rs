//! A plan text held compressed once its SQL execution has ended.

use std::borrow::Cow;

/// Text that is read a few times and held for the whole analysis: a SQL execution's plan texts
/// (a few KB each, two for each of a log's thousands of queries). Plain while its execution
/// runs (an adaptive re-plan replaces it), compressed with zstd once the execution has ended
/// ([`PackedText::pack`]); [`PackedText::text`] gives it back either way.
///
/// No `PartialEq`: the same text plain and packed are different bytes; compare [`PackedText::text`].
#[derive(Clone, Default)]
pub struct PackedText(Repr);

#[derive(Clone)]
enum Repr {
    Plain(Box<str>),
    /// zstd's frame of `len` bytes of UTF-8.
    Packed {
        len: usize,
        bytes: Box<[u8]>,
    },
}

impl Default for Repr {
    fn default() -> Repr {
        Repr::Plain(Box::default())
    }
}

/// Shorter texts are left plain: zstd's frame would weigh about as much as the saving.
const PACK_FROM_BYTES: usize = 256;

/// zstd's fastest level: plan texts repeat their operators and columns, and compress to about
/// a quarter at it.
const LEVEL: i32 = 1;

impl PackedText {
    /// The text, whole.
    pub fn text(&self) -> Cow<'_, str> {
        match &self.0 {
            Repr::Plain(text) => Cow::Borrowed(text),
            Repr::Packed { len, bytes } => {
                // The bytes are this type's own compression of UTF-8 text: only a failing
                // allocation could fail, and then the text reads as empty rather than aborting.
                let unpacked = sparkdiag_contract::packed::decompress(bytes, *len)
                    .ok()
                    .and_then(|bytes| String::from_utf8(bytes).ok())
                    .unwrap_or_default();
                Cow::Owned(unpacked)
            }
        }
    }

    /// Compresses the text, when it is long enough to gain from it and not compressed yet.
    pub fn pack(&mut self) {
        if let Repr::Plain(text) = &self.0
            && text.len() >= PACK_FROM_BYTES
            && let Ok(bytes) = sparkdiag_contract::packed::compress(text.as_bytes(), LEVEL)
            && bytes.len() < text.len()
        {
            self.0 = Repr::Packed {
                len: text.len(),
                bytes: bytes.into_boxed_slice(),
            };
        }
    }
}

impl From<String> for PackedText {
    fn from(text: String) -> PackedText {
        PackedText(Repr::Plain(text.into_boxed_str()))
    }
}

impl std::fmt::Debug for PackedText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&*self.text(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::PackedText;

    /// A real plan text, packed and read back, is the same text in fewer bytes; a short one is
    /// left as it is.
    #[test]
    fn a_packed_plan_text_reads_back_whole() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/plans/");
        let plan = std::fs::read_to_string(format!("{dir}antipattern-many-exchanges.txt")).unwrap();
        let mut packed = PackedText::from(plan.clone());
        packed.pack();
        let super::Repr::Packed { bytes, .. } = &packed.0 else {
            panic!("a plan of {} bytes was left plain", plan.len());
        };
        assert!(
            bytes.len() * 2 < plan.len(),
            "{} of {}",
            bytes.len(),
            plan.len()
        );
        assert_eq!(packed.text(), plan);
        packed.pack();
        assert_eq!(packed.text(), plan, "packed twice");
        let mut short = PackedText::from("== Physical Plan ==\n* Range (1)\n".to_string());
        short.pack();
        assert!(matches!(short.0, super::Repr::Plain(_)));
        assert_eq!(short.text(), "== Physical Plan ==\n* Range (1)\n");
    }
}
