//! Which files make up each application's log: single files, Spark's rolling directories,
//! Databricks' cluster-log-delivery folders, archives of any of these, and standard input.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::ReadError;
use crate::codec::Codec;

/// How an application's log is laid out on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// One file, `<appId>[.codec][.inprogress]`.
    SingleFile,
    /// `eventlog_v2_<appId>/events_<N>_<appId>[.codec]` plus an `appstatus_*` marker.
    Rolling,
    /// Databricks: `eventlog` plus `eventlog-YYYY-MM-DD--HH-MM.gz` roll files.
    Databricks,
    /// Standard input.
    Stdin,
}

impl Layout {
    pub fn name(self) -> &'static str {
        match self {
            Layout::SingleFile => "single-file",
            Layout::Rolling => "rolling",
            Layout::Databricks => "databricks",
            Layout::Stdin => "stdin",
        }
    }
}

/// One file of a log, in the order its events were written.
#[derive(Debug, Clone)]
pub struct Part {
    /// `None` for standard input.
    pub path: Option<PathBuf>,
    /// The name shown to the user (inside an archive: `archive.zip!/inner/path`).
    pub display: String,
}

/// Everything needed to read one application attempt's log.
#[derive(Debug, Clone)]
pub struct LogInput {
    /// What the user named, or the folder that holds the parts.
    pub display: String,
    pub layout: Layout,
    pub parts: Vec<Part>,
    /// The writer had not finished: `.inprogress` name or `appstatus_*.inprogress` marker.
    pub in_progress: bool,
    /// Damage found from the file names alone (gaps in a rolling log, a missing marker).
    pub notes: Vec<String>,
    /// Keeps an extracted archive on disk for as long as the input lives.
    _extracted: Option<Arc<tempfile::TempDir>>,
}

/// Finds every application log under `path`; `-` is standard input.
pub fn discover(path: &str) -> Result<Vec<LogInput>, ReadError> {
    if path == "-" {
        return Ok(vec![LogInput {
            display: "<stdin>".into(),
            layout: Layout::Stdin,
            parts: vec![Part {
                path: None,
                display: "<stdin>".into(),
            }],
            in_progress: false,
            notes: Vec::new(),
            _extracted: None,
        }]);
    }
    let root = Path::new(path);
    let meta = fs::metadata(root).map_err(|e| ReadError::io(path, None, "cannot open", e))?;
    let mut found = Vec::new();
    if meta.is_dir() {
        walk_dir(root, path, &None, &mut found, 0)?;
        if found.is_empty() {
            return Err(ReadError::new(
                path,
                None,
                "no Spark event log found in this directory",
            ));
        }
    } else {
        add_file(root, path, &None, &mut found, true)?;
    }
    Ok(found)
}

const MAX_DEPTH: usize = 12;

fn walk_dir(
    dir: &Path,
    display: &str,
    extracted: &Option<Arc<tempfile::TempDir>>,
    found: &mut Vec<LogInput>,
    depth: usize,
) -> Result<(), ReadError> {
    if let Some(input) = rolling_dir(dir, display, extracted)? {
        found.push(input);
        return Ok(());
    }
    if let Some(input) = databricks_dir(dir, display, extracted)? {
        found.push(input);
        return Ok(());
    }
    if depth >= MAX_DEPTH {
        return Ok(());
    }
    for (name, path) in sorted_entries(dir, display)? {
        if name.starts_with('.') || name.starts_with('_') {
            continue;
        }
        let child_display = format!("{}/{}", display.trim_end_matches('/'), name);
        if path.is_dir() {
            walk_dir(&path, &child_display, extracted, found, depth + 1)?;
        } else {
            add_file(&path, &child_display, extracted, found, false)?;
        }
    }
    Ok(())
}

/// Adds a single-file log or an archive. Inside a directory, files that are not logs are passed
/// over; named directly, they are an error.
fn add_file(
    path: &Path,
    display: &str,
    extracted: &Option<Arc<tempfile::TempDir>>,
    found: &mut Vec<LogInput>,
    named_directly: bool,
) -> Result<(), ReadError> {
    let head = read_head(path, display)?;
    let name = file_name(path);
    if let Some(kind) = archive_kind(path, &head, display)? {
        let dir = extract(path, display, kind)?;
        let before = found.len();
        let holder = Some(Arc::new(dir));
        let root = holder.as_ref().unwrap().path().to_path_buf();
        walk_dir(&root, &format!("{display}!"), &holder, found, 0)?;
        if found.len() == before {
            return Err(ReadError::new(
                display,
                None,
                "the archive holds no Spark event log",
            ));
        }
        return Ok(());
    }
    match Codec::detect(&head, &name) {
        Some(_) => {
            found.push(LogInput {
                display: display.to_string(),
                layout: Layout::SingleFile,
                parts: vec![Part {
                    path: Some(path.to_path_buf()),
                    display: display.to_string(),
                }],
                in_progress: name.ends_with(".inprogress"),
                notes: Vec::new(),
                _extracted: extracted.clone(),
            });
            Ok(())
        }
        None if named_directly => Err(ReadError::new(
            display,
            Some(0),
            format!(
                "not a Spark event log: expected JSON lines or a zstd, lz4, snappy, lzf or gzip stream, found bytes {}{}",
                hex(&head[..head.len().min(8)]),
                guess_format(&head)
            ),
        )),
        None => Ok(()),
    }
}

fn rolling_dir(
    dir: &Path,
    display: &str,
    extracted: &Option<Arc<tempfile::TempDir>>,
) -> Result<Option<LogInput>, ReadError> {
    let dir_name = file_name(dir);
    let entries = sorted_entries(dir, display)?;
    let mut events: Vec<(u64, String, PathBuf)> = Vec::new();
    let mut status: Option<String> = None;
    for (name, path) in &entries {
        if let Some(rest) = name.strip_prefix("events_") {
            if let Some(index) = rest.split('_').next().and_then(|n| n.parse::<u64>().ok()) {
                events.push((index, name.clone(), path.clone()));
            }
        } else if name.starts_with("appstatus_") {
            status = Some(name.clone());
        }
    }
    if events.is_empty() || !(dir_name.starts_with("eventlog_v2_") || status.is_some()) {
        return Ok(None);
    }
    events.sort_by_key(|(index, _, _)| *index);
    let mut notes = Vec::new();
    // A compacted file replaces every file up to its own index.
    if let Some(pos) = events
        .iter()
        .rposition(|(_, name, _)| name.contains(".compact"))
    {
        events.drain(..pos);
    }
    for pair in events.windows(2) {
        let (a, b) = (pair[0].0, pair[1].0);
        if b != a + 1 {
            let missing = if b == a + 2 {
                format!("events_{}", a + 1)
            } else {
                format!("events_{}..events_{}", a + 1, b - 1)
            };
            notes.push(format!("{missing} missing from {display}: the events between the neighbouring files are lost"));
        }
    }
    if events[0].0 > 1 && !events[0].1.contains(".compact") {
        notes.push(format!(
            "{display} starts at events_{}: earlier roll files are missing",
            events[0].0
        ));
    }
    let in_progress = match &status {
        Some(name) => name.ends_with(".inprogress"),
        None => {
            notes.push(format!(
                "{display} has no appstatus_* file; Spark writes one for every rolling log"
            ));
            true
        }
    };
    let parts = events
        .into_iter()
        .map(|(_, name, path)| Part {
            path: Some(path),
            display: format!("{}/{}", display.trim_end_matches('/'), name),
        })
        .collect();
    Ok(Some(LogInput {
        display: display.to_string(),
        layout: Layout::Rolling,
        parts,
        in_progress,
        notes,
        _extracted: extracted.clone(),
    }))
}

/// A Databricks context folder: roll files `eventlog-YYYY-MM-DD--HH-MM[.gz]` (oldest first by the
/// time in their name), then the current `eventlog`.
fn databricks_dir(
    dir: &Path,
    display: &str,
    extracted: &Option<Arc<tempfile::TempDir>>,
) -> Result<Option<LogInput>, ReadError> {
    let entries = sorted_entries(dir, display)?;
    let mut rolls: Vec<(String, PathBuf)> = Vec::new();
    let mut current = None;
    // `<cluster>/eventlog/` is itself a folder named like the current log file: only files count.
    for (name, path) in entries.into_iter().filter(|(_, p)| p.is_file()) {
        if name == "eventlog" {
            current = Some(path);
        } else if let Some(stamp) = name.strip_prefix("eventlog-") {
            let stamp = stamp.trim_end_matches(".gz");
            if is_databricks_stamp(stamp) {
                rolls.push((name.clone(), path));
            }
        }
    }
    if current.is_none() && rolls.is_empty() {
        return Ok(None);
    }
    // The zero-padded stamp sorts lexically in time order.
    rolls.sort();
    let mut parts: Vec<Part> = rolls
        .into_iter()
        .map(|(name, path)| Part {
            path: Some(path),
            display: format!("{}/{}", display.trim_end_matches('/'), name),
        })
        .collect();
    let mut notes = Vec::new();
    match current {
        Some(path) => parts.push(Part { path: Some(path), display: format!("{}/eventlog", display.trim_end_matches('/')) }),
        None => notes.push(format!("{display} has roll files but no current `eventlog` file: the newest events may be missing")),
    }
    Ok(Some(LogInput {
        display: display.to_string(),
        layout: Layout::Databricks,
        parts,
        in_progress: false,
        notes,
        _extracted: extracted.clone(),
    }))
}

/// `YYYY-MM-DD--HH-MM`.
fn is_databricks_stamp(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 17
        && b.iter().enumerate().all(|(i, c)| match i {
            4 | 7 | 10 | 11 | 14 => *c == b'-',
            _ => c.is_ascii_digit(),
        })
}

#[derive(Debug, Clone, Copy)]
enum ArchiveKind {
    Zip,
    Tar,
    TarGz,
}

fn archive_kind(path: &Path, head: &[u8], display: &str) -> Result<Option<ArchiveKind>, ReadError> {
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Ok(Some(ArchiveKind::Zip));
    }
    if is_tar_header(head) {
        return Ok(Some(ArchiveKind::Tar));
    }
    if head.starts_with(&[0x1F, 0x8B]) {
        // A gzip file is a Databricks roll file unless it unpacks to a tar header.
        let file =
            fs::File::open(path).map_err(|e| ReadError::io(display, None, "cannot open", e))?;
        let mut inner = Vec::with_capacity(512);
        let _ = flate2::read::MultiGzDecoder::new(file)
            .take(512)
            .read_to_end(&mut inner);
        if is_tar_header(&inner) {
            return Ok(Some(ArchiveKind::TarGz));
        }
    }
    Ok(None)
}

fn is_tar_header(block: &[u8]) -> bool {
    block.len() >= 262 && &block[257..262] == b"ustar"
}

/// Unpacks an archive into a temporary folder that lives as long as the inputs found in it.
///
/// Archives are unpacked rather than read in place because a rolling log's files must be read in
/// index order, which a tar stream cannot seek to; the members stay compressed on disk.
fn extract(path: &Path, display: &str, kind: ArchiveKind) -> Result<tempfile::TempDir, ReadError> {
    let dir = tempfile::Builder::new()
        .prefix("sparkdiag-archive-")
        .tempdir()
        .map_err(|e| {
            ReadError::io(
                display,
                None,
                "cannot create a temporary folder to unpack into",
                e,
            )
        })?;
    let file = fs::File::open(path).map_err(|e| ReadError::io(display, None, "cannot open", e))?;
    let result = match kind {
        ArchiveKind::Zip => zip::ZipArchive::new(file)
            .and_then(|mut zip| zip.extract(dir.path()))
            .map_err(|e| format!("cannot unpack zip archive: {e}")),
        ArchiveKind::Tar => tar::Archive::new(file)
            .unpack(dir.path())
            .map_err(|e| format!("cannot unpack tar archive: {e}")),
        ArchiveKind::TarGz => {
            tar::Archive::new(flate2::read::MultiGzDecoder::new(io::BufReader::new(file)))
                .unpack(dir.path())
                .map_err(|e| format!("cannot unpack tar.gz archive: {e}"))
        }
    };
    result.map_err(|message| ReadError::new(display, None, message))?;
    Ok(dir)
}

fn sorted_entries(dir: &Path, display: &str) -> Result<Vec<(String, PathBuf)>, ReadError> {
    let mut entries = Vec::new();
    let reader =
        fs::read_dir(dir).map_err(|e| ReadError::io(display, None, "cannot list directory", e))?;
    for entry in reader {
        let entry = entry.map_err(|e| ReadError::io(display, None, "cannot list directory", e))?;
        entries.push((
            entry.file_name().to_string_lossy().into_owned(),
            entry.path(),
        ));
    }
    entries.sort();
    Ok(entries)
}

fn read_head(path: &Path, display: &str) -> Result<Vec<u8>, ReadError> {
    let file = fs::File::open(path).map_err(|e| ReadError::io(display, None, "cannot open", e))?;
    let mut head = Vec::with_capacity(512);
    file.take(512)
        .read_to_end(&mut head)
        .map_err(|e| ReadError::io(display, Some(0), "cannot read", e))?;
    Ok(head)
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect::<Vec<_>>()
        .join(" ")
}

fn guess_format(head: &[u8]) -> &'static str {
    if head.starts_with(b"\x89PNG") {
        " (a PNG image)"
    } else if head.starts_with(b"%PDF") {
        " (a PDF document)"
    } else if head.starts_with(b"BZh") {
        " (bzip2, which Spark does not write)"
    } else if head.starts_with(&[0xFD, b'7', b'z', b'X', b'Z']) {
        " (xz, which Spark does not write)"
    } else if head.starts_with(&[0x04, 0x22, 0x4D, 0x18]) {
        " (the standard LZ4 frame format; Spark writes lz4-java's LZ4Block framing)"
    } else if head.starts_with(b"\xFF\x06\x00\x00sNaPpY") {
        " (the standard Snappy framing; Spark writes snappy-java's framing)"
    } else if head.is_empty() {
        " (an empty file)"
    } else {
        ""
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn databricks_stamps() {
        assert!(is_databricks_stamp("2026-11-29--10-00"));
        assert!(!is_databricks_stamp("2026-11-29-10-00"));
        assert!(!is_databricks_stamp("latest"));
    }
}
