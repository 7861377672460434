//! Which files make up each application's log: single files, Spark's rolling directories,
//! Databricks' cluster-log-delivery folders, archives of any of these, and standard input.

use std::collections::HashSet;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::codec::Codec;
use crate::store::Location;
use crate::{ReadError, ReadErrorKind};

mod list;
mod remote;
pub use list::LogList;
pub use remote::discover_in_store;

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
    pub location: Location,
    /// The name shown to the user (inside an archive: `archive.zip!/inner/path`; in a store,
    /// its URL).
    pub display: String,
}

impl Part {
    /// The local file, if the part is one (not standard input, not an object in a store).
    pub fn file(&self) -> Option<&Path> {
        self.location.file()
    }

    /// Its length in bytes, when known without reading it.
    pub fn known_len(&self) -> Option<u64> {
        self.location.known_len()
    }

    /// When it was last written (a file's or an object's last-modified time), when known.
    pub fn modified(&self) -> Option<std::time::SystemTime> {
        self.location.modified()
    }

    /// Its bytes as a stream, and its length when known.
    pub fn open(&self) -> Result<(Box<dyn Read + Send>, Option<u64>), ReadError> {
        self.location.open(&self.display)
    }
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
    /// What the search passed over (links to nothing or in a loop, special files, archive
    /// members that are not plain files or exceed a limit). Not damage to this log: each is
    /// told once, on the first log found, as a warning.
    pub skipped: Vec<String>,
    /// Keeps an extracted archive on disk for as long as the input lives.
    _extracted: Option<Arc<Extracted>>,
}

/// Finds every application log under `path`; `-` is standard input.
///
/// A directory is walked once per real directory (links are followed, but a directory reached
/// again through a link is not read twice, so link loops end). Entries that cannot be read
/// are passed over and reported in [`LogInput::skipped`], so one bad entry never hides the logs
/// beside it. Archives are unpacked under the limits in [`ArchiveLimits`].
pub fn discover(path: &str) -> Result<Vec<LogInput>, ReadError> {
    discover_with(path, None).map(LogList::into_inputs)
}

/// [`discover`], unpacking archives into a new folder under `unpack_into` rather than the
/// system's temporary folder (`sparkdiag serve` keeps everything it writes in its data folder).
pub fn discover_unpacking_into(path: &str, unpack_into: &Path) -> Result<Vec<LogInput>, ReadError> {
    discover_with(path, Some(unpack_into)).map(LogList::into_inputs)
}

/// [`discover`], keeping the logs found in a compact [`LogList`] that gives each back on
/// demand: for a night of many logs held from the search until the last is analysed.
pub fn discover_list(path: &str) -> Result<LogList, ReadError> {
    discover_with(path, None)
}

fn discover_with(path: &str, unpack_into: Option<&Path>) -> Result<LogList, ReadError> {
    let mut found = LogList::new(path);
    if path == "-" {
        found.push(LogInput {
            display: "<stdin>".into(),
            layout: Layout::Stdin,
            parts: vec![Part {
                location: Location::Stdin,
                display: "<stdin>".into(),
            }],
            in_progress: false,
            notes: Vec::new(),
            skipped: Vec::new(),
            _extracted: None,
        });
        return Ok(found);
    }
    if crate::store::scheme(path).is_some() {
        let (store, key) = crate::store::store_for(path)?;
        return remote::discover_with(store, &key, unpack_into);
    }
    let root = Path::new(path);
    let meta = fs::metadata(root).map_err(|e| ReadError::io(path, None, "cannot open", e))?;
    let mut walk = Walk {
        unpack_into: unpack_into.map(Path::to_path_buf),
        ..Walk::default()
    };
    if meta.is_dir() {
        walk.dir(root, path, &None, &mut found, 0)?;
        if found.is_empty() {
            let mut message = "no Spark event log found in this directory".to_string();
            if !walk.skipped.is_empty() {
                message.push_str(&format!(" (passed over: {})", walk.skipped.join("; ")));
            }
            return Err(ReadError::new(ReadErrorKind::NoLog, path, None, message));
        }
    } else {
        walk.file(root, path, &None, &mut found, true)?;
    }
    found.finish(std::mem::take(&mut walk.skipped));
    Ok(found)
}

const MAX_DEPTH: usize = 12;

/// Limits on unpacking archives, so a hostile archive cannot fill the disk, run for ever or
/// reach outside its folder. Each is far above what a real archive of Spark logs needs.
pub struct ArchiveLimits;

impl ArchiveLimits {
    /// Bytes unpacked from one archive may exceed its own size at most 100 times (after the
    /// first 64 MiB, which are always allowed). Event logs are JSON that deflate shrinks about
    /// 10 times (a real plain log here: 898 KB to 91 KB), and the logs inside are usually still
    /// compressed; zip and gzip bombs expand ~1000 times.
    pub const MAX_RATIO: u64 = 100;
    pub const RATIO_FLOOR: u64 = 64 << 20;
    /// Bytes unpacked in total by one search, nested archives included: 16 GiB.
    pub const MAX_UNPACKED: u64 = 16 << 30;
    /// Members of one archive: 100,000 (a rolling log writes one file per 128 MiB by default).
    pub const MAX_MEMBERS: u64 = 100_000;
    /// An archive inside an archive is unpacked; one inside that is not.
    pub const MAX_NESTING: usize = 2;
}

/// The archive members that are passed over because an archive made that way is hostile (or
/// broken beyond use): [`LogInput::skipped`] and the errors of [`discover`] name them with
/// [`ArchiveRefusal::phrase`], which [`ArchiveRefusal::find`] recognises, so a caller that must
/// refuse such archives outright (`sparkdiag serve`) need not repeat the wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchiveRefusal(&'static str);

impl ArchiveRefusal {
    /// A member named `../x` or `/x` (zip-slip).
    pub const OUTSIDE: ArchiveRefusal = ArchiveRefusal("its path leads outside the archive");
    /// A symbolic or hard link.
    pub const LINK: ArchiveRefusal = ArchiveRefusal("it is a link");
    /// A character or block device, or a pipe.
    pub const DEVICE: ArchiveRefusal = ArchiveRefusal("it is a device or pipe, not a file");
    /// Unpacking reached [`ArchiveLimits::MAX_RATIO`] or [`ArchiveLimits::MAX_UNPACKED`].
    pub const BOMB: ArchiveRefusal = ArchiveRefusal("as a decompression bomb does");

    pub const ALL: [ArchiveRefusal; 4] = [Self::OUTSIDE, Self::LINK, Self::DEVICE, Self::BOMB];

    pub fn phrase(self) -> &'static str {
        self.0
    }

    /// The first refusal `message` (a skipped note or an error) tells of.
    pub fn find(message: &str) -> Option<ArchiveRefusal> {
        Self::ALL.into_iter().find(|r| message.contains(r.0))
    }
}

/// One search's state: the real directories already read, what was passed over, and what
/// archives have unpacked so far.
#[derive(Default)]
struct Walk {
    visited: HashSet<DirId>,
    skipped: Vec<String>,
    unpacked: u64,
    /// Archives being unpacked around the current one.
    nesting: usize,
    /// Where archives are unpacked; the system's temporary folder when `None`.
    unpack_into: Option<PathBuf>,
}

impl Walk {
    fn dir(
        &mut self,
        dir: &Path,
        display: &str,
        extracted: &Option<Arc<Extracted>>,
        found: &mut LogList,
        depth: usize,
    ) -> Result<(), ReadError> {
        if let Some(id) = dir_id(dir)
            && !self.visited.insert(id)
        {
            return Ok(());
        }
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
            let child = format!("{}/{}", display.trim_end_matches('/'), name);
            let is_link = fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink());
            let meta = match fs::metadata(&path) {
                Ok(meta) => meta,
                Err(e) if is_link => {
                    self.skipped
                        .push(format!("{child}: a link to nothing readable ({e})"));
                    continue;
                }
                Err(e) => {
                    self.skipped.push(format!("{child}: cannot read ({e})"));
                    continue;
                }
            };
            if meta.is_dir() {
                if let Err(err) = self.dir(&path, &child, extracted, found, depth + 1) {
                    self.skipped.push(err.to_string());
                }
            } else if meta.is_file() {
                // Inside a directory, a file that cannot be read is passed over; the rest is read.
                if let Err(err) = self.file(&path, &child, extracted, found, false) {
                    self.skipped.push(err.to_string());
                }
            } else {
                self.skipped.push(format!(
                    "{child}: not a regular file (a device, pipe or socket)"
                ));
            }
        }
        Ok(())
    }

    /// Adds a single-file log or an archive. Inside a directory, files that are not logs are
    /// passed over; named directly, they are an error.
    fn file(
        &mut self,
        path: &Path,
        display: &str,
        extracted: &Option<Arc<Extracted>>,
        found: &mut LogList,
        named_directly: bool,
    ) -> Result<(), ReadError> {
        let head = read_head(path, display)?;
        let name = file_name(path);
        if let Some(kind) = archive_kind(path, &head, display)? {
            if self.nesting >= ArchiveLimits::MAX_NESTING {
                return Err(ReadError::new(
                    ReadErrorKind::NoLog,
                    display,
                    None,
                    format!(
                        "an archive nested {} deep is not unpacked (limit {})",
                        self.nesting + 1,
                        ArchiveLimits::MAX_NESTING
                    ),
                ));
            }
            let skipped_before = self.skipped.len();
            let dir = self.extract(path, display, kind)?;
            let before = found.len();
            let holder = Some(Arc::new(dir));
            let root = holder.as_ref().unwrap().path().to_path_buf();
            self.nesting += 1;
            let walked = self.dir(&root, &format!("{display}!"), &holder, found, 0);
            self.nesting -= 1;
            walked?;
            if found.len() == before {
                let mut message = "the archive holds no Spark event log".to_string();
                let passed_over: Vec<String> = self.skipped.drain(skipped_before..).collect();
                if !passed_over.is_empty() {
                    message.push_str(&format!(" (passed over: {})", passed_over.join("; ")));
                }
                return Err(ReadError::new(ReadErrorKind::NoLog, display, None, message));
            }
            return Ok(());
        }
        match Codec::detect(&head, &name) {
            Some(_) => {
                found.push(LogInput {
                    display: display.to_string(),
                    layout: Layout::SingleFile,
                    parts: vec![Part {
                        location: Location::File(path.to_path_buf()),
                        display: display.to_string(),
                    }],
                    in_progress: name.ends_with(".inprogress"),
                    notes: Vec::new(),
                    skipped: Vec::new(),
                    _extracted: extracted.clone(),
                });
                Ok(())
            }
            None if named_directly => Err(not_a_log(display, &head)),
            // Passed over, but named: a log the user expected to see (compressed with a tool
            // Spark does not use, or a driver log mistaken for an event log) must not vanish.
            None => {
                self.skipped.push(format!(
                    "{display}: not a Spark event log{}, so it was not read",
                    describe_non_log(&head)
                ));
                Ok(())
            }
        }
    }
}

/// The error for a file named directly that is not a log.
fn not_a_log(display: &str, head: &[u8]) -> ReadError {
    ReadError::new(
        ReadErrorKind::NotALog,
        display,
        Some(0),
        format!(
            "not a Spark event log: expected JSON lines or a zstd, lz4, snappy, lzf, gzip, bzip2 or xz stream, found bytes {}{}",
            hex(&head[..head.len().min(8)]),
            guess_format(head)
        ),
    )
}

/// What a file inside a folder is when it is not a log: a known format, else its first line.
fn describe_non_log(head: &[u8]) -> String {
    let known = guess_format(head);
    if !known.is_empty() {
        return known.to_string();
    }
    let first_line = head.split(|&b| b == b'\n').next().unwrap_or_default();
    match std::str::from_utf8(first_line) {
        Ok(text) if !text.trim().is_empty() && !text.contains('\0') => {
            let text = text.trim();
            let shown: String = text.chars().take(60).collect();
            let cut = if shown.len() < text.len() { "…" } else { "" };
            format!(" (text, not JSON events; it begins `{shown}{cut}`: a driver or executor log?)")
        }
        _ => format!(" (found bytes {})", hex(&head[..head.len().min(8)])),
    }
}

/// A directory's identity on disk, so that one reached again through a link is recognised.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct DirId(u64, u64);

#[cfg(unix)]
fn dir_id(dir: &Path) -> Option<DirId> {
    use std::os::unix::fs::MetadataExt;
    fs::metadata(dir).ok().map(|m| DirId(m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn dir_id(dir: &Path) -> Option<DirId> {
    use std::hash::{Hash, Hasher};
    let canonical = fs::canonicalize(dir).ok()?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    canonical.hash(&mut hasher);
    Some(DirId(0, hasher.finish()))
}

fn rolling_dir(
    dir: &Path,
    display: &str,
    extracted: &Option<Arc<Extracted>>,
) -> Result<Option<LogInput>, ReadError> {
    let entries = sorted_entries(dir, display)?.map(|(name, path)| (name, Location::File(path)));
    Ok(
        rolling_log(&file_name(dir), display, entries).map(|mut input| {
            input._extracted = extracted.clone();
            input
        }),
    )
}

/// A rolling log from its folder's entries (name and location, in name order): the
/// `events_<N>_*` files in index order from the last compacted one, with notes on gaps and on
/// the `appstatus_*` marker. `None` when the folder is not a rolling log's.
fn rolling_log(
    dir_name: &str,
    display: &str,
    entries: impl Iterator<Item = (String, Location)>,
) -> Option<LogInput> {
    let mut events: Vec<(u64, String, Location)> = Vec::new();
    let mut status: Option<String> = None;
    for (name, location) in entries {
        if let Some(rest) = name.strip_prefix("events_") {
            if let Some(index) = rest.split('_').next().and_then(|n| n.parse::<u64>().ok()) {
                events.push((index, name, location));
            }
        } else if name.starts_with("appstatus_") {
            status = Some(name);
        }
    }
    if events.is_empty() || !(dir_name.starts_with("eventlog_v2_") || status.is_some()) {
        return None;
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
        .map(|(_, name, location)| Part {
            location,
            display: format!("{}/{}", display.trim_end_matches('/'), name),
        })
        .collect();
    Some(LogInput {
        display: display.to_string(),
        layout: Layout::Rolling,
        parts,
        in_progress,
        notes,
        skipped: Vec::new(),
        _extracted: None,
    })
}

fn databricks_dir(
    dir: &Path,
    display: &str,
    extracted: &Option<Arc<Extracted>>,
) -> Result<Option<LogInput>, ReadError> {
    // `<cluster>/eventlog/` is itself a folder named like the current log file: only files count.
    let entries = sorted_entries(dir, display)?
        .filter(|(_, path)| path.is_file())
        .map(|(name, path)| (name, Location::File(path)));
    Ok(databricks_log(display, entries).map(|mut input| {
        input._extracted = extracted.clone();
        input
    }))
}

/// A Databricks context folder from its files (name and location): roll files
/// `eventlog-YYYY-MM-DD--HH-MM[.gz]` (oldest first by the time in their name), then the current
/// `eventlog`. `None` when the folder holds neither.
fn databricks_log(
    display: &str,
    files: impl Iterator<Item = (String, Location)>,
) -> Option<LogInput> {
    let mut rolls: Vec<(String, Location)> = Vec::new();
    let mut current = None;
    for (name, location) in files {
        if name == "eventlog" {
            current = Some(location);
        } else if let Some(stamp) = name.strip_prefix("eventlog-") {
            let stamp = stamp.trim_end_matches(".gz");
            if is_databricks_stamp(stamp) {
                rolls.push((name, location));
            }
        }
    }
    if current.is_none() && rolls.is_empty() {
        return None;
    }
    // The zero-padded stamp sorts lexically in time order.
    rolls.sort_by(|a, b| a.0.cmp(&b.0));
    let mut parts: Vec<Part> = rolls
        .into_iter()
        .map(|(name, location)| Part {
            location,
            display: format!("{}/{}", display.trim_end_matches('/'), name),
        })
        .collect();
    let mut notes = Vec::new();
    match current {
        Some(location) => parts.push(Part { location, display: format!("{}/eventlog", display.trim_end_matches('/')) }),
        None => notes.push(format!("{display} has roll files but no current `eventlog` file: the newest events may be missing")),
    }
    Some(LogInput {
        display: display.to_string(),
        layout: Layout::Databricks,
        parts,
        in_progress: false,
        notes,
        skipped: Vec::new(),
        _extracted: None,
    })
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

/// An unpacked archive's temporary folder, removed when the last input found in it is dropped,
/// and by [`remove_unpacked_archives`], which a program calls from its own signal handling. A
/// folder left by a run killed outright (SIGKILL) is removed by the next run that unpacks an
/// archive.
#[derive(Debug)]
pub struct Extracted {
    dir: tempfile::TempDir,
}

impl Extracted {
    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Extracted {
    fn drop(&mut self) {
        cleanup::forget(self.dir.path());
    }
}

/// Removes every archive this process has unpacked and not yet dropped.
///
/// For a program's own signal handler (SIGINT, SIGTERM, SIGHUP): a process that dies of a
/// signal runs no destructors, so the folders would stay in the temporary folder until a later
/// run finds them. Which signals to catch, and how to end the process, is the program's choice;
/// this library installs no handler. Safe to call from any thread, and more than once.
pub fn remove_unpacked_archives() {
    cleanup::remove_live();
}

/// The unpacked folders still in use, so that a way out of the process that skips destructors
/// can remove them.
mod cleanup {
    use std::path::{Path, PathBuf};
    use std::sync::Mutex;

    static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

    /// The prefix of every unpacked folder; the process id follows it, so a later run can tell
    /// the folders of dead runs from those of live ones.
    pub const PREFIX: &str = "sparkdiag-archive-";

    /// A new folder named with [`PREFIX`] and this process's id, under `parent` or the system's
    /// temporary folder, once the folders of dead runs are gone.
    pub fn scratch_dir(parent: Option<&Path>) -> std::io::Result<tempfile::TempDir> {
        remove_stale();
        let prefix = format!("{PREFIX}{}-", std::process::id());
        let mut builder = tempfile::Builder::new();
        builder.prefix(&prefix);
        match parent {
            Some(parent) => builder.tempdir_in(parent),
            None => builder.tempdir(),
        }
    }

    pub fn remember(dir: &Path) {
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(dir.to_path_buf());
    }

    pub fn forget(dir: &Path) {
        LIVE.lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|d| d != dir);
    }

    pub fn remove_live() {
        for dir in LIVE.lock().unwrap_or_else(|e| e.into_inner()).drain(..) {
            let _ = std::fs::remove_dir_all(dir);
        }
    }

    /// Removes the unpacked folders of runs that no longer exist (killed with SIGKILL).
    #[cfg(target_os = "linux")]
    pub fn remove_stale() {
        let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
            return;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
                continue;
            };
            let Some(pid) = rest.split('-').next().filter(|p| p.parse::<u32>().is_ok()) else {
                continue;
            };
            if !Path::new("/proc").join(pid).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    pub fn remove_stale() {}
}

/// How far unpacking one archive has got, against [`ArchiveLimits`].
struct Unpacking<'a> {
    display: &'a str,
    archive_len: u64,
    written: u64,
    members: u64,
    walk_unpacked: &'a mut u64,
    skipped: &'a mut Vec<String>,
}

impl Unpacking<'_> {
    /// Why no more may be written, if a limit is reached.
    fn over_limit(&self) -> Option<String> {
        let ratio_room = ArchiveLimits::RATIO_FLOOR
            .max(self.archive_len.saturating_mul(ArchiveLimits::MAX_RATIO));
        if self.written > ratio_room {
            Some(format!(
                "it unpacks to more than {} times its own size, {} (limit {}x after {} MiB)",
                self.written / self.archive_len.max(1),
                ArchiveRefusal::BOMB.phrase(),
                ArchiveLimits::MAX_RATIO,
                ArchiveLimits::RATIO_FLOOR >> 20
            ))
        } else if *self.walk_unpacked > ArchiveLimits::MAX_UNPACKED {
            Some(format!(
                "archives unpacked to more than the {} GiB limit ({})",
                ArchiveLimits::MAX_UNPACKED >> 30,
                ArchiveRefusal::BOMB.phrase()
            ))
        } else {
            None
        }
    }

    /// A member's place under `root`: only plain names, never absolute, never `..`.
    fn target(&mut self, root: &Path, name: &Path) -> Option<PathBuf> {
        use std::path::Component;
        let mut out = root.to_path_buf();
        let mut any = false;
        for part in name.components() {
            match part {
                Component::Normal(p) => {
                    out.push(p);
                    any = true;
                }
                Component::CurDir => {}
                _ => {
                    self.skip(name, ArchiveRefusal::OUTSIDE.phrase());
                    return None;
                }
            }
        }
        any.then_some(out)
    }

    fn skip(&mut self, name: &Path, why: &str) {
        self.skipped.push(format!(
            "{}!/{}: not unpacked: {why}",
            self.display,
            name.display()
        ));
    }

    /// Counts a member; false when there are too many.
    fn next_member(&mut self) -> bool {
        self.members += 1;
        if self.members > ArchiveLimits::MAX_MEMBERS {
            self.skipped.push(format!(
                "{}: holds more than {} members; the rest were not unpacked",
                self.display,
                ArchiveLimits::MAX_MEMBERS
            ));
            return false;
        }
        true
    }

    /// Writes one member, stopping at a limit (the part written is then removed); false when
    /// unpacking must stop.
    fn write(&mut self, target: &Path, name: &Path, mut data: impl Read) -> bool {
        if let Some(parent) = target.parent()
            && let Err(e) = fs::create_dir_all(parent)
        {
            self.skip(name, &format!("cannot create its folder ({e})"));
            return true;
        }
        let mut out = match fs::File::create(target) {
            Ok(f) => f,
            Err(e) => {
                self.skip(name, &format!("cannot create it ({e})"));
                return true;
            }
        };
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match data.read(&mut buf) {
                Ok(0) => return true,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.skipped.push(format!(
                        "{}!/{}: the archive is damaged here ({e}); only its first part was unpacked",
                        self.display,
                        name.display()
                    ));
                    return false;
                }
            };
            self.written += n as u64;
            *self.walk_unpacked += n as u64;
            if let Some(why) = self.over_limit() {
                drop(out);
                let _ = fs::remove_file(target);
                self.skipped.push(format!(
                    "{}: unpacking stopped at {}: {why}",
                    self.display,
                    name.display()
                ));
                return false;
            }
            if let Err(e) = io::Write::write_all(&mut out, &buf[..n]) {
                self.skip(name, &format!("cannot write it ({e})"));
                let _ = fs::remove_file(target);
                return false;
            }
        }
    }
}

impl Walk {
    /// Unpacks an archive into a temporary folder that lives as long as the inputs found in it.
    ///
    /// Archives are unpacked rather than read in place because a rolling log's files must be
    /// read in index order, which a tar stream cannot seek to; the members stay compressed on
    /// disk. Only plain files and folders are unpacked, each inside the folder: links, devices
    /// and pipes are passed over and reported, and the limits of [`ArchiveLimits`] apply.
    fn extract(
        &mut self,
        path: &Path,
        display: &str,
        kind: ArchiveKind,
    ) -> Result<Extracted, ReadError> {
        let dir = cleanup::scratch_dir(self.unpack_into.as_deref()).map_err(|e| {
            ReadError::io(
                display,
                None,
                "cannot create a temporary folder to unpack into",
                e,
            )
        })?;
        cleanup::remember(dir.path());
        let extracted = Extracted { dir };
        let file =
            fs::File::open(path).map_err(|e| ReadError::io(display, None, "cannot open", e))?;
        let archive_len = file.metadata().map(|m| m.len()).unwrap_or(0);
        let mut unpacking = Unpacking {
            display,
            archive_len,
            written: 0,
            members: 0,
            walk_unpacked: &mut self.unpacked,
            skipped: &mut self.skipped,
        };
        let root = extracted.path().to_path_buf();
        match kind {
            ArchiveKind::Zip => unzip(file, &root, &mut unpacking).map_err(|e| {
                ReadError::new(
                    ReadErrorKind::NoLog,
                    display,
                    None,
                    "cannot unpack zip archive",
                )
                .with_source(e)
            })?,
            ArchiveKind::Tar => untar(file, &root, &mut unpacking),
            ArchiveKind::TarGz => untar(
                flate2::read::MultiGzDecoder::new(io::BufReader::new(file)),
                &root,
                &mut unpacking,
            ),
        }
        Ok(extracted)
    }
}

fn unzip(file: fs::File, root: &Path, unpacking: &mut Unpacking<'_>) -> zip::result::ZipResult<()> {
    let mut zip = zip::ZipArchive::new(io::BufReader::new(file))?;
    for i in 0..zip.len() {
        if !unpacking.next_member() {
            break;
        }
        let mut member = match zip.by_index(i) {
            Ok(member) => member,
            Err(e) => {
                unpacking.skipped.push(format!(
                    "{}: member {i} cannot be read ({e})",
                    unpacking.display
                ));
                continue;
            }
        };
        let name = PathBuf::from(member.name().unwrap_or_default().to_string());
        let Some(target) = unpacking.target(root, &name) else {
            continue;
        };
        if member.is_dir() {
            let _ = fs::create_dir_all(&target);
        } else if member.is_symlink() {
            unpacking.skip(&name, ArchiveRefusal::LINK.phrase());
        } else if !unpacking.write(&target, &name, &mut member) {
            break;
        }
    }
    Ok(())
}

fn untar(reader: impl Read, root: &Path, unpacking: &mut Unpacking<'_>) {
    use tar::EntryType;
    let mut archive = tar::Archive::new(reader);
    let entries = match archive.entries() {
        Ok(entries) => entries,
        Err(e) => {
            unpacking.skipped.push(format!(
                "{}: cannot read the tar archive ({e})",
                unpacking.display
            ));
            return;
        }
    };
    for entry in entries {
        let mut entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                unpacking.skipped.push(format!(
                    "{}: the archive is damaged after {} members ({e}); the rest was not unpacked",
                    unpacking.display, unpacking.members
                ));
                return;
            }
        };
        if !unpacking.next_member() {
            return;
        }
        let name = match entry.path() {
            Ok(p) => p.into_owned(),
            Err(e) => {
                unpacking.skipped.push(format!(
                    "{}: a member has an unreadable name ({e})",
                    unpacking.display
                ));
                continue;
            }
        };
        let Some(target) = unpacking.target(root, &name) else {
            continue;
        };
        let go_on = match entry.header().entry_type() {
            EntryType::Regular | EntryType::Continuous => {
                unpacking.write(&target, &name, &mut entry)
            }
            EntryType::Directory => {
                let _ = fs::create_dir_all(&target);
                true
            }
            EntryType::Symlink | EntryType::Link => {
                unpacking.skip(&name, ArchiveRefusal::LINK.phrase());
                true
            }
            EntryType::Char | EntryType::Block | EntryType::Fifo => {
                unpacking.skip(&name, ArchiveRefusal::DEVICE.phrase());
                true
            }
            EntryType::GNUSparse => {
                unpacking.skip(&name, "it is a sparse file");
                true
            }
            // Long names and extended headers are read by the tar crate itself; anything
            // else is no file.
            _ => true,
        };
        if !go_on {
            return;
        }
    }
}

/// A directory's entries as (name, path), sorted by name. Only the names are held while the
/// caller goes through them (a folder of a night's logs can hold tens of thousands); each path
/// is made when its entry's turn comes, the same path `read_dir` would give.
fn sorted_entries(
    dir: &Path,
    display: &str,
) -> Result<impl Iterator<Item = (String, PathBuf)>, ReadError> {
    let mut names = Vec::new();
    let reader =
        fs::read_dir(dir).map_err(|e| ReadError::io(display, None, "cannot list directory", e))?;
    for entry in reader {
        let entry = entry.map_err(|e| ReadError::io(display, None, "cannot list directory", e))?;
        names.push(entry.file_name());
    }
    // By the name as shown, then (for names that are not UTF-8 and show alike) by the path.
    names.sort_by(|a, b| {
        a.to_string_lossy()
            .cmp(&b.to_string_lossy())
            .then_with(|| dir.join(a).cmp(&dir.join(b)))
    });
    let dir = dir.to_path_buf();
    Ok(names
        .into_iter()
        .map(move |name| (name.to_string_lossy().into_owned(), dir.join(name))))
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

    #[test]
    fn the_cleanup_hook_removes_an_archive_still_in_use() {
        let archive = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/logs/archives/eventlog_v2_local-1796049428891.tar.gz"
        );
        let into = tempfile::tempdir().unwrap();
        let inputs = discover_unpacking_into(archive, into.path()).unwrap();
        let part = inputs[0].parts[0].file().unwrap().to_path_buf();
        assert!(part.starts_with(into.path()) && part.exists(), "{part:?}");
        remove_unpacked_archives();
        // The inputs are still alive, as in a process stopped mid-run: the hook alone removed it.
        assert!(!part.exists(), "{part:?} left behind");
        assert_eq!(std::fs::read_dir(into.path()).unwrap().count(), 0);
        drop(inputs);
    }
}
