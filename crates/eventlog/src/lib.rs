//! Reads Apache Spark event logs, whatever their shape, as a stream of typed events.
//!
//! # Brief overview
//! - [`discover`] turns a path the user names into [`LogInput`]s: one per application attempt,
//!   each an ordered list of files — a single file, a rolling `eventlog_v2_*` directory, a
//!   Databricks cluster-log folder, the same inside a `.zip`/`.tar.gz`, or `-` for stdin.
//!   [`discover_list`] keeps them in a compact [`LogList`] for a night of many logs.
//! - [`read_log`] streams one input: it sniffs each file's [`Codec`] from its magic bytes (zstd,
//!   lz4-java's LZ4Block, snappy-java, ning LZF, gzip, plain), splits lines, parses each into an
//!   [`Event`] and hands it to a callback. Memory does not grow with the log.
//! - Damage never stops the reading where the rest can be read: the returned [`SourceReport`]
//!   says which lines were malformed, where a stream was cut, which roll files are missing and
//!   which event types were unknown. Only input with nothing readable is a [`ReadError`].
//!
//! # Example
//! ```no_run
//! let inputs = sparkdiag_eventlog::discover("spark-events/app-123.zstd")?;
//! let mut tasks = 0;
//! let report = sparkdiag_eventlog::read_log(&inputs[0], |event| {
//!     if let sparkdiag_eventlog::Event::TaskEnd(_) = event {
//!         tasks += 1;
//!     }
//! })?;
//! println!("{tasks} tasks, complete: {}", report.complete());
//! # Ok::<(), sparkdiag_eventlog::ReadError>(())
//! ```

pub mod codec;
pub mod events;
mod extract;
mod layout;
mod pretty;
mod read;
pub mod store;
pub mod streaming;

use std::fmt;

pub use codec::Codec;
pub use compact_str::CompactString;
pub use events::Event;
pub use layout::{
    ArchiveLimits, ArchiveRefusal, Layout, LogInput, LogList, Part, discover, discover_in_store,
    discover_list, discover_unpacking_into, remove_unpacked_archives,
};
pub use read::{DECODER_THREAD, FileReport, SourceReport, read_log};

/// Input that cannot be read at all, with the file, the byte offset when known, what kind of
/// failure it was, and why.
///
/// The kind says what a caller can do about it (a missing file, refused access, no credentials,
/// a connection cut); the source keeps the underlying error, so nothing is lost to formatting.
#[derive(Debug)]
pub struct ReadError {
    pub kind: ReadErrorKind,
    pub path: String,
    pub offset: Option<u64>,
    pub message: String,
    pub source: Option<Box<dyn std::error::Error + Send + Sync>>,
}

/// What kind of failure a [`ReadError`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// The file, object, bucket or application is not there.
    NotFound,
    /// The file system or the store refused access.
    PermissionDenied,
    /// No credentials were found for a store, or the store rejected them.
    Credentials,
    /// The connection to a store failed, or was cut before everything was read.
    Connection,
    /// Another input or output failure.
    Io,
    /// The bytes are not an event log: neither JSON lines nor a codec Spark writes.
    NotALog,
    /// A compressed stream does not decode from its start.
    Codec,
    /// A folder, prefix or archive that holds no event log, or an archive that was refused.
    NoLog,
    /// A location this build cannot read: an unknown scheme, a malformed URL, an option the
    /// store does not take.
    Unsupported,
}

impl ReadError {
    pub fn new(
        kind: ReadErrorKind,
        path: &str,
        offset: Option<u64>,
        message: impl Into<String>,
    ) -> Self {
        ReadError {
            kind,
            path: path.to_string(),
            offset,
            message: message.into(),
            source: None,
        }
    }

    /// The error that caused this one, shown after the message.
    pub fn with_source(
        mut self,
        source: impl Into<Box<dyn std::error::Error + Send + Sync>>,
    ) -> Self {
        self.source = Some(source.into());
        self
    }

    /// A failed file operation: `doing` is what was being done ("cannot open").
    pub fn io(path: &str, offset: Option<u64>, doing: &str, err: std::io::Error) -> Self {
        let kind = match err.kind() {
            std::io::ErrorKind::NotFound => ReadErrorKind::NotFound,
            std::io::ErrorKind::PermissionDenied => ReadErrorKind::PermissionDenied,
            _ => ReadErrorKind::Io,
        };
        ReadError::new(kind, path, offset, doing).with_source(err)
    }

    pub fn kind(&self) -> ReadErrorKind {
        self.kind
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path)?;
        if let Some(offset) = self.offset {
            write!(f, "at byte {offset}: ")?;
        }
        f.write_str(&self.message)?;
        match &self.source {
            Some(source) => write!(f, ": {source}"),
            None => Ok(()),
        }
    }
}

/// The source is part of the message (callers show `to_string()` alone), so it is not also
/// given as [`std::error::Error::source`], which would print it twice in a chain; it stays in
/// the [`ReadError::source`] field for code that looks at it.
impl std::error::Error for ReadError {}
