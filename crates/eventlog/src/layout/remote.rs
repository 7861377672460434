//! Layout detection over a store's listing: the logs under a prefix are found in the same shapes
//! as under a local folder (single files, rolling folders, Databricks folders, archives), by the
//! same rules.

use std::collections::BTreeMap;
use std::io::{self, Read};
use std::path::Path;
use std::sync::Arc;

use super::{
    ArchiveKind, LogInput, LogList, MAX_DEPTH, Walk, cleanup, databricks_log, describe_non_log,
    is_tar_header, not_a_log, rolling_log,
};
use crate::codec::Codec;
use crate::store::{Location, LogStore, ObjectMeta, StoredObject};
use crate::{Layout, Part, ReadError, ReadErrorKind};

/// Bytes read from the start of each object to tell its codec or archive kind: enough for a
/// tar header inside a gzip stream.
const HEAD: usize = 4096;

/// Every application log at `key` in `store`: the object itself when `key` names one, else
/// everything under the folder `key` names (the whole store for an empty key).
pub fn discover_in_store(store: Arc<dyn LogStore>, key: &str) -> Result<Vec<LogInput>, ReadError> {
    discover_with(store, key, None).map(LogList::into_inputs)
}

pub(super) fn discover_with(
    store: Arc<dyn LogStore>,
    key: &str,
    unpack_into: Option<&Path>,
) -> Result<LogList, ReadError> {
    let shown = store.url(key);
    let mut found = LogList::new(&shown);
    let mut walk = StoreWalk {
        store: store.clone(),
        local: Walk {
            unpack_into: unpack_into.map(Path::to_path_buf),
            ..Walk::default()
        },
    };
    if !key.is_empty()
        && !key.ends_with('/')
        && let Some(object) = store.head(key)?
    {
        walk.object(&object, &shown, &mut found, true)?;
        found.finish(std::mem::take(&mut walk.local.skipped));
        return Ok(found);
    }
    let prefix = match key.trim_end_matches('/') {
        "" => String::new(),
        folder => format!("{folder}/"),
    };
    let objects = store.list(&prefix)?;
    if objects.is_empty() {
        return Err(ReadError::new(
            ReadErrorKind::NotFound,
            &shown,
            None,
            "no object has this name and none is under it as a folder: check the bucket and the prefix (an empty prefix, or a typo)",
        ));
    }
    let mut root = Folder::default();
    for object in objects {
        // Owned: the object moves into the tree under it.
        let Some(relative) = object.key.strip_prefix(&prefix).map(str::to_owned) else {
            continue;
        };
        root.insert(&relative, object);
    }
    walk.folder(&root, key_name(&prefix), &shown, &mut found, 0)?;
    if found.is_empty() {
        let mut message = "no Spark event log found under this prefix".to_string();
        if !walk.local.skipped.is_empty() {
            message.push_str(&format!(
                " (passed over: {})",
                walk.local.skipped.join("; ")
            ));
        }
        return Err(ReadError::new(ReadErrorKind::NoLog, &shown, None, message));
    }
    found.finish(std::mem::take(&mut walk.local.skipped));
    Ok(found)
}

/// The last segment of a key or prefix: a folder's name.
fn key_name(key: &str) -> &str {
    key.trim_end_matches('/')
        .rsplit('/')
        .next()
        .unwrap_or_default()
}

/// A listing as folders: the objects directly in it, and its sub-folders, each by name.
#[derive(Default)]
struct Folder {
    objects: BTreeMap<String, ObjectMeta>,
    folders: BTreeMap<String, Folder>,
}

impl Folder {
    fn insert(&mut self, relative: &str, object: ObjectMeta) {
        match relative.split_once('/') {
            // A folder marker (`logs/`), or an empty name between two slashes: no object.
            Some(("", _)) => {}
            None if relative.is_empty() => {}
            Some((folder, rest)) => self
                .folders
                .entry(folder.to_string())
                .or_default()
                .insert(rest, object),
            None => {
                self.objects.insert(relative.to_string(), object);
            }
        }
    }
}

/// One search of a store, with a local walk for the archives it downloads and unpacks.
struct StoreWalk {
    store: Arc<dyn LogStore>,
    local: Walk,
}

enum Entry<'a> {
    Object(&'a ObjectMeta),
    Folder(&'a Folder),
}

impl StoreWalk {
    fn location(&self, object: &ObjectMeta) -> Location {
        Location::Object(StoredObject {
            store: self.store.clone(),
            meta: object.clone(),
        })
    }

    fn folder(
        &mut self,
        folder: &Folder,
        name: &str,
        display: &str,
        found: &mut LogList,
        depth: usize,
    ) -> Result<(), ReadError> {
        let objects = || {
            folder
                .objects
                .iter()
                .map(|(name, object)| (name.clone(), self.location(object)))
        };
        if let Some(input) = rolling_log(name, display, objects()) {
            found.push(input);
            return Ok(());
        }
        if let Some(input) = databricks_log(display, objects()) {
            found.push(input);
            return Ok(());
        }
        if depth >= MAX_DEPTH {
            return Ok(());
        }
        let mut entries: Vec<(&String, Entry<'_>)> = folder
            .objects
            .iter()
            .map(|(name, object)| (name, Entry::Object(object)))
            .chain(
                folder
                    .folders
                    .iter()
                    .map(|(name, folder)| (name, Entry::Folder(folder))),
            )
            .collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        for (name, entry) in entries {
            if name.starts_with('.') || name.starts_with('_') {
                continue;
            }
            let child = format!("{}/{}", display.trim_end_matches('/'), name);
            let walked = match entry {
                Entry::Folder(sub) => self.folder(sub, name, &child, found, depth + 1),
                Entry::Object(object) => self.object(object, &child, found, false),
            };
            // Inside a folder, what cannot be read is passed over; the rest is read.
            if let Err(err) = walked {
                if stops_the_search(err.kind) {
                    return Err(err);
                }
                self.local.skipped.push(err.to_string());
            }
        }
        Ok(())
    }

    /// Adds a single-object log, or downloads an archive and adds the logs inside it. Inside a
    /// folder, objects that are not logs are passed over; named directly, they are an error.
    fn object(
        &mut self,
        object: &ObjectMeta,
        display: &str,
        found: &mut LogList,
        named_directly: bool,
    ) -> Result<(), ReadError> {
        let head = self.store.read_head(object, HEAD)?;
        let name = key_name(&object.key);
        if archive_kind(&head).is_some() {
            return self.archive(object, name, display, found, named_directly);
        }
        match Codec::detect(&head[..head.len().min(512)], name) {
            Some(_) => {
                found.push(LogInput {
                    display: display.to_string(),
                    layout: Layout::SingleFile,
                    parts: vec![Part {
                        location: self.location(object),
                        display: display.to_string(),
                    }],
                    in_progress: name.ends_with(".inprogress"),
                    notes: Vec::new(),
                    skipped: Vec::new(),
                    _extracted: None,
                });
                Ok(())
            }
            None if named_directly => Err(not_a_log(display, &head)),
            None => {
                self.local.skipped.push(format!(
                    "{display}: not a Spark event log{}, so it was not read",
                    describe_non_log(&head)
                ));
                Ok(())
            }
        }
    }

    /// An archive is unpacked as a local one is (a rolling log's files must be read in index
    /// order, which a zip or tar stream cannot seek to), so it is first copied to a temporary
    /// folder that goes as soon as it is unpacked.
    fn archive(
        &mut self,
        object: &ObjectMeta,
        name: &str,
        display: &str,
        found: &mut LogList,
        named_directly: bool,
    ) -> Result<(), ReadError> {
        let download = cleanup::scratch_dir(self.local.unpack_into.as_deref()).map_err(|e| {
            ReadError::io(
                display,
                None,
                "cannot create a temporary folder to download the archive into",
                e,
            )
        })?;
        cleanup::remember(download.path());
        let copied = download
            .path()
            .join(if name.is_empty() { "archive" } else { name });
        let copy = (|| {
            let mut file = std::fs::File::create(&copied)
                .map_err(|e| ReadError::io(display, None, "cannot create a temporary copy", e))?;
            let mut reader = self.store.open(object)?;
            copy_from_store(&mut reader, &mut file, display)
        })();
        let before = found.len();
        let walked = copy.and_then(|()| {
            self.local
                .file(&copied, display, &None, found, named_directly)
        });
        // The unpacked files are as old as the archive, not as the unpacking, so that
        // `batch --since` keeps or leaves them by the object's own last-modified time.
        if let Some(modified) = object.modified {
            for i in before..found.len() {
                for part in &found.get(i).parts {
                    if let Some(file) = part.file()
                        && let Ok(file) = std::fs::File::options().write(true).open(file)
                    {
                        let _ = file.set_modified(modified);
                    }
                }
            }
        }
        cleanup::forget(download.path());
        drop(download);
        walked
    }
}

/// Copies a store's stream into a file; a failed read is the store's failure (a cut
/// connection), a failed write the disk's.
fn copy_from_store(
    reader: &mut dyn Read,
    file: &mut std::fs::File,
    display: &str,
) -> Result<(), ReadError> {
    let mut buf = vec![0u8; 256 << 10];
    let mut copied = 0u64;
    loop {
        let n = match reader.read(&mut buf) {
            Ok(0) => return Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(crate::store::failure_of(e, display, copied)),
        };
        io::Write::write_all(file, &buf[..n])
            .map_err(|e| ReadError::io(display, None, "cannot write the temporary copy", e))?;
        copied += n as u64;
    }
}

/// Failures of the store itself, which stop the search: every other object would fail alike.
fn stops_the_search(kind: ReadErrorKind) -> bool {
    matches!(
        kind,
        ReadErrorKind::Credentials | ReadErrorKind::PermissionDenied | ReadErrorKind::Connection
    )
}

/// The archive an object's first bytes show, if any (a gzip stream is one when it unpacks to
/// a tar header).
fn archive_kind(head: &[u8]) -> Option<ArchiveKind> {
    if head.starts_with(b"PK\x03\x04") || head.starts_with(b"PK\x05\x06") {
        return Some(ArchiveKind::Zip);
    }
    if is_tar_header(head) {
        return Some(ArchiveKind::Tar);
    }
    if head.starts_with(&[0x1F, 0x8B]) {
        let mut inner = Vec::with_capacity(512);
        // The head ends mid-stream: what decoded before the end is enough.
        let _ = flate2::read::MultiGzDecoder::new(head)
            .take(512)
            .read_to_end(&mut inner);
        if is_tar_header(&inner) {
            return Some(ArchiveKind::TarGz);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    /// A store over a local folder, listing it as an object store lists a bucket: flat keys,
    /// no folders of their own.
    struct FolderStore(PathBuf);

    impl FolderStore {
        fn walk(&self, dir: &Path, out: &mut Vec<ObjectMeta>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    self.walk(&path, out);
                } else {
                    out.push(self.meta(&path));
                }
            }
        }

        fn meta(&self, path: &Path) -> ObjectMeta {
            let key = path.strip_prefix(&self.0).unwrap().to_str().unwrap();
            let meta = std::fs::metadata(path).unwrap();
            ObjectMeta {
                key: key.to_string(),
                len: Some(meta.len()),
                modified: meta.modified().ok(),
            }
        }
    }

    impl LogStore for FolderStore {
        fn url(&self, key: &str) -> String {
            format!("mem://logs/{key}")
        }

        fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, ReadError> {
            let mut out = Vec::new();
            self.walk(&self.0, &mut out);
            out.retain(|o| o.key.starts_with(prefix));
            Ok(out)
        }

        fn head(&self, key: &str) -> Result<Option<ObjectMeta>, ReadError> {
            let path = self.0.join(key);
            Ok(path.is_file().then(|| self.meta(&path)))
        }

        fn open(&self, object: &ObjectMeta) -> Result<Box<dyn Read + Send>, ReadError> {
            let file = std::fs::File::open(self.0.join(&object.key))
                .map_err(|e| ReadError::io(&object.key, None, "cannot open", e))?;
            Ok(Box::new(file))
        }
    }

    fn logs() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/logs")
    }

    /// Each log as the search found it, named after the searched root: its layout, its parts'
    /// names, whether it is in progress, its notes.
    fn shape(inputs: &[LogInput], root: &str) -> Vec<String> {
        inputs
            .iter()
            .map(|input| {
                let parts: Vec<&str> = input
                    .parts
                    .iter()
                    .map(|p| p.display.strip_prefix(root).unwrap_or(&p.display))
                    .collect();
                let notes = input.notes.join("|").replace(root, "");
                format!(
                    "{} {:?} {parts:?} {} {notes}",
                    input.layout.name(),
                    input.display.strip_prefix(root),
                    input.in_progress
                )
            })
            .collect()
    }

    /// Every committed log is found in a store as in the folder: the same logs in the same
    /// layouts with the same parts in the same order, archives unpacked alike.
    #[test]
    fn a_store_holds_the_same_logs_as_the_folder() {
        let root = logs();
        let local = crate::discover(root.to_str().unwrap()).unwrap();
        let stored = discover_in_store(Arc::new(FolderStore(root.clone())), "").unwrap();
        assert!(local.len() > 50, "{} logs", local.len());
        let local_shape = shape(&local, &format!("{}/", root.display()));
        let stored_shape = shape(&stored, "mem://logs/");
        assert_eq!(local_shape.len(), stored_shape.len());
        for (a, b) in local_shape.iter().zip(&stored_shape) {
            assert_eq!(a, b);
        }
        let in_archives = stored.iter().filter(|i| i._extracted.is_some()).count();
        assert!(in_archives > 0, "no archive was unpacked");
    }

    #[test]
    fn an_object_named_directly_and_a_sub_folder_are_found() {
        let store: Arc<dyn LogStore> = Arc::new(FolderStore(logs()));
        let single = discover_in_store(store.clone(), "multi/local-1796049570994.zstd").unwrap();
        assert_eq!(single.len(), 1);
        assert_eq!(single[0].layout, Layout::SingleFile);
        assert_eq!(
            single[0].display,
            "mem://logs/multi/local-1796049570994.zstd"
        );
        let rolling = discover_in_store(store.clone(), "rolling/zstd/").unwrap();
        assert!(rolling.iter().all(|i| i.layout == Layout::Rolling));
        assert!(!rolling.is_empty());
    }

    #[test]
    fn an_empty_prefix_says_what_to_check() {
        let store: Arc<dyn LogStore> = Arc::new(FolderStore(logs()));
        let err = match discover_in_store(store.clone(), "no-such-prefix/") {
            Err(err) => err,
            Ok(found) => panic!("found {} logs", found.len()),
        };
        assert_eq!(err.kind, ReadErrorKind::NotFound);
        assert!(
            err.to_string().starts_with("mem://logs/no-such-prefix/: "),
            "{err}"
        );
        assert!(
            err.to_string().contains("check the bucket and the prefix"),
            "{err}"
        );
    }
}
