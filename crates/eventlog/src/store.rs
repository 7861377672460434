//! Where a log's bytes live, and the one interface every source that is not a local file
//! implements.
//!
//! Local files and standard input are read here directly ([`Location::File`],
//! [`Location::Stdin`]). Anything else — an object store (S3, Azure, Google Cloud Storage), a
//! Spark History Server — is a [`LogStore`]: it lists the objects under a prefix with their
//! lengths and last-modified times, and opens one as a stream. Layout detection (single file,
//! rolling folder, Databricks folder, archive) runs over that listing exactly as it runs over a
//! directory, so every source finds the same logs in the same shapes.
//!
//! The reading crate has no network code: a program that reads remote logs installs a
//! [`StoreRegistry`] once ([`set_store_registry`]), as DataFusion's object store registry does,
//! and [`crate::discover`] asks it for the store behind any `scheme://` location.

use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use crate::{ReadError, ReadErrorKind};

/// Where one file of a log is.
#[derive(Clone)]
pub enum Location {
    /// A file on this machine (an unpacked archive's member too).
    File(PathBuf),
    /// Standard input.
    Stdin,
    /// An object in a [`LogStore`].
    Object(StoredObject),
}

/// An object and the store that holds it.
#[derive(Clone)]
pub struct StoredObject {
    pub store: Arc<dyn LogStore>,
    pub meta: ObjectMeta,
}

/// One object of a listing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectMeta {
    /// The object's key in its store, e.g. `cluster-logs/0101-x/eventlog/.../eventlog`.
    pub key: String,
    /// Its length in bytes, when the store says.
    pub len: Option<u64>,
    pub modified: Option<SystemTime>,
}

/// A source of logs that is not a local file: it lists and opens objects by key.
///
/// Keys are `/`-separated; a folder is the prefix its objects' keys share. Errors name the
/// object (or prefix) by its URL and say what to do; none carries a secret.
pub trait LogStore: Send + Sync {
    /// The URL of `key` in this store, as the user would write it (`s3://bucket/key`). It names
    /// files in reports and errors, so it never holds a credential.
    fn url(&self, key: &str) -> String;

    /// Every object whose key starts with `prefix`, in any order. A prefix that is a folder
    /// ends with `/`; the empty prefix is the whole store.
    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, ReadError>;

    /// The object at exactly `key`, or `None` when there is none (a folder's prefix, say).
    fn head(&self, key: &str) -> Result<Option<ObjectMeta>, ReadError>;

    /// The object's bytes as a stream, from its first byte. Memory held by the stream must not
    /// grow with the object: read in bounded pieces.
    fn open(&self, object: &ObjectMeta) -> Result<Box<dyn Read + Send>, ReadError>;

    /// The object's first `len` bytes (or all of a shorter one), to tell its codec or archive
    /// kind. The default reads them from [`LogStore::open`]; stores with ranged reads do better.
    fn read_head(&self, object: &ObjectMeta, len: usize) -> Result<Vec<u8>, ReadError> {
        let mut head = Vec::with_capacity(len);
        self.open(object)?
            .take(len as u64)
            .read_to_end(&mut head)
            .map_err(|e| ReadError::io(&self.url(&object.key), Some(0), "cannot read", e))?;
        Ok(head)
    }

    /// The object's last `len` bytes (or all of a shorter one): how a log ends tells whether
    /// its application ended, without reading all of it. The default streams the object and
    /// keeps the last `len` bytes; stores with ranged reads do better.
    fn read_tail(&self, object: &ObjectMeta, len: usize) -> Result<Vec<u8>, ReadError> {
        let url = self.url(&object.key);
        keep_tail(self.open(object)?, len, &url, 0)
    }
}

/// The last `len` bytes of `reader`, which starts at byte `start` of `shown`; it holds at
/// most twice `len` and one read's chunk.
fn keep_tail(
    mut reader: impl Read,
    len: usize,
    shown: &str,
    start: u64,
) -> Result<Vec<u8>, ReadError> {
    let mut tail = Vec::new();
    let mut chunk = vec![0; 64 << 10];
    let mut offset = start;
    loop {
        let read = match reader.read(&mut chunk) {
            Ok(0) => break,
            Ok(read) => read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(failure_of(e, shown, offset)),
        };
        offset += read as u64;
        tail.extend_from_slice(&chunk[..read]);
        if tail.len() > 2 * len {
            tail.drain(..tail.len() - len);
        }
    }
    let cut = tail.len().saturating_sub(len);
    tail.drain(..cut);
    Ok(tail)
}

impl fmt::Debug for StoredObject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.store.url(&self.meta.key))
    }
}

impl fmt::Debug for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Location::File(path) => f.debug_tuple("File").field(path).finish(),
            Location::Stdin => f.write_str("Stdin"),
            Location::Object(object) => f.debug_tuple("Object").field(object).finish(),
        }
    }
}

impl Location {
    /// The local file, if this is one.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Location::File(path) => Some(path),
            _ => None,
        }
    }

    /// The length in bytes, when known without reading (not for standard input).
    pub fn known_len(&self) -> Option<u64> {
        match self {
            Location::File(path) => std::fs::metadata(path).ok().map(|m| m.len()),
            Location::Stdin => None,
            Location::Object(object) => object.meta.len,
        }
    }

    /// When it was last written, when known.
    pub fn modified(&self) -> Option<SystemTime> {
        match self {
            Location::File(path) => std::fs::metadata(path).and_then(|m| m.modified()).ok(),
            Location::Stdin => None,
            Location::Object(object) => object.meta.modified,
        }
    }

    /// The last `len` bytes (all of a shorter file); `shown` names it in errors. Standard input
    /// has no end to read before it is read: `None`.
    pub fn read_tail(&self, shown: &str, len: usize) -> Result<Option<Vec<u8>>, ReadError> {
        match self {
            Location::File(path) => {
                use std::io::{Seek, SeekFrom};
                let mut file =
                    File::open(path).map_err(|e| ReadError::io(shown, None, "cannot open", e))?;
                let size = file
                    .metadata()
                    .map_err(|e| ReadError::io(shown, None, "cannot open", e))?
                    .len();
                let from = size.saturating_sub(len as u64);
                file.seek(SeekFrom::Start(from))
                    .map_err(|e| ReadError::io(shown, Some(from), "cannot seek", e))?;
                keep_tail(file, len, shown, from).map(Some)
            }
            Location::Stdin => Ok(None),
            Location::Object(object) => object.store.read_tail(&object.meta, len).map(Some),
        }
    }

    /// The bytes as a stream, and the length when known; `shown` names it in errors.
    pub fn open(&self, shown: &str) -> Result<(Box<dyn Read + Send>, Option<u64>), ReadError> {
        match self {
            Location::File(path) => {
                let file =
                    File::open(path).map_err(|e| ReadError::io(shown, None, "cannot open", e))?;
                let len = file.metadata().ok().map(|m| m.len());
                Ok((Box::new(file), len))
            }
            Location::Stdin => Ok((Box::new(io::stdin()), None)),
            Location::Object(object) => Ok((object.store.open(&object.meta)?, object.meta.len)),
        }
    }
}

/// How a store's stream fails: its [`ReadError`] (a cut connection, refused access) inside the
/// `io::Error` that [`Read`] must return, so the reader can give it back whole with
/// `failure_of` rather than take it for damage in the log.
pub fn store_failure(err: ReadError) -> io::Error {
    io::Error::other(err)
}

/// Whether a read error is a store's own failure (made by [`store_failure`]).
pub(crate) fn is_store_failure(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<ReadError>())
}

/// The [`ReadError`] a failed read of `shown` is: the store's own, or else an I/O error at
/// `offset`.
pub(crate) fn failure_of(err: io::Error, shown: &str, offset: u64) -> ReadError {
    if !is_store_failure(&err) {
        return ReadError::io(shown, Some(offset), "cannot read", err);
    }
    match err.into_inner().map(|inner| inner.downcast::<ReadError>()) {
        Some(Ok(failure)) => *failure,
        Some(Err(other)) => {
            ReadError::new(ReadErrorKind::Io, shown, Some(offset), "cannot read").with_source(other)
        }
        None => ReadError::new(ReadErrorKind::Io, shown, Some(offset), "cannot read"),
    }
}

/// Finds the store behind a URL: the seam through which a program adds remote sources.
pub trait StoreRegistry: Send + Sync {
    /// The store that holds `url` and the key of `url` in it (empty for the store's root), or
    /// an error saying why it cannot be reached (an unknown scheme, missing credentials).
    fn store_for(&self, url: &str) -> Result<(Arc<dyn LogStore>, String), ReadError>;
}

static REGISTRY: OnceLock<Box<dyn StoreRegistry>> = OnceLock::new();

/// Installs the registry [`crate::discover`] asks for every `scheme://` location. A program
/// installs one at start (the `sparkdiag` binary does when built with its `remote` feature);
/// a second call is refused and gives the registry back.
pub fn set_store_registry(registry: Box<dyn StoreRegistry>) -> Result<(), Box<dyn StoreRegistry>> {
    REGISTRY.set(registry)
}

/// The store behind `url`, from the installed registry.
pub(crate) fn store_for(url: &str) -> Result<(Arc<dyn LogStore>, String), ReadError> {
    match REGISTRY.get() {
        Some(registry) => registry.store_for(url),
        None => Err(ReadError::new(
            ReadErrorKind::Unsupported,
            url,
            None,
            format!(
                "this build of sparkdiag reads local files only; reading {}:// needs the `remote` feature (cargo install sparkdiag --features remote)",
                scheme(url).unwrap_or_default()
            ),
        )),
    }
}

/// The scheme of `text` when it is a URL (`s3://...`): letters, digits, `+`, `-` or `.` before
/// `://`, at least two of them so a Windows drive (`C:\`) is never taken for one.
pub fn scheme(text: &str) -> Option<&str> {
    let (scheme, _) = text.split_once("://")?;
    let valid = scheme.len() >= 2
        && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    valid.then_some(scheme)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        assert_eq!(scheme("s3://bucket/key"), Some("s3"));
        assert_eq!(
            scheme("abfss://logs@acct.dfs.core.windows.net/x"),
            Some("abfss")
        );
        assert_eq!(scheme("http://127.0.0.1:18080"), Some("http"));
        for path in ["/tmp/logs", "C://x", "logs/app-1", "-", "a b://x", "://x"] {
            assert_eq!(scheme(path), None, "{path}");
        }
    }

    /// The tail of a file longer than it, of a shorter one, and of a stream read in chunks
    /// smaller and larger than it.
    #[test]
    fn a_tail_is_the_last_bytes_asked_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let bytes: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        std::fs::write(&path, &bytes).unwrap();
        let file = Location::File(path);
        assert_eq!(
            file.read_tail("log", 1000).unwrap().unwrap(),
            &bytes[bytes.len() - 1000..]
        );
        assert_eq!(file.read_tail("log", 300_000).unwrap().unwrap(), bytes);
        for len in [0, 10, 70_000, 200_000, 500_000] {
            let tail = keep_tail(&bytes[..], len, "log", 0).unwrap();
            assert_eq!(tail, &bytes[bytes.len().saturating_sub(len)..], "{len}");
        }
        assert_eq!(Location::Stdin.read_tail("-", 10).unwrap(), None);
    }

    #[test]
    fn without_a_registry_a_url_says_which_feature_reads_it() {
        // No test in this crate installs a registry.
        let err = match store_for("gs://bucket/logs") {
            Err(err) => err,
            Ok(_) => panic!("a store without a registry"),
        };
        assert_eq!(err.kind, ReadErrorKind::Unsupported);
        assert!(err.to_string().contains("gs://"), "{err}");
        assert!(err.to_string().contains("--features remote"), "{err}");
    }
}
