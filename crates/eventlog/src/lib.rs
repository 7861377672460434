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
pub mod streaming;

use std::fmt;

pub use codec::Codec;
pub use events::Event;
pub use layout::{
    ArchiveLimits, ArchiveRefusal, Layout, LogInput, LogList, Part, discover, discover_list,
    discover_unpacking_into, remove_unpacked_archives,
};
pub use read::{DECODER_THREAD, FileReport, SourceReport, read_log};

/// Input that cannot be read at all, with the file, the byte offset when known, and why.
#[derive(Debug)]
pub struct ReadError {
    pub path: String,
    pub offset: Option<u64>,
    pub message: String,
}

impl ReadError {
    pub fn new(path: &str, offset: Option<u64>, message: impl Into<String>) -> Self {
        ReadError {
            path: path.to_string(),
            offset,
            message: message.into(),
        }
    }

    pub(crate) fn io(path: &str, offset: Option<u64>, doing: &str, err: std::io::Error) -> Self {
        ReadError::new(path, offset, format!("{doing}: {err}"))
    }
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.offset {
            Some(offset) => write!(f, "{}: at byte {offset}: {}", self.path, self.message),
            None => write!(f, "{}: {}", self.path, self.message),
        }
    }
}

impl std::error::Error for ReadError {}
