//! The data folder: what was uploaded, what each analysis came to, and their deletion after
//! `keep`. Every path the server writes is built here, from a SHA-256 id in hex or a counter,
//! never from a name a client sent.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

/// One upload and where its analysis stands.
#[derive(Clone, Serialize, Deserialize)]
pub struct Job {
    /// SHA-256 of the uploaded bytes, in hex.
    pub id: String,
    /// The uploaded file's own name, as shown (made safe for the disk separately).
    pub file_name: String,
    pub bytes: u64,
    /// Milliseconds since 1970 when the upload finished.
    pub uploaded_ms: u64,
    pub state: State,
    /// Pseudonymised: its report and everything said of it (`file_name` too) hold no original.
    #[serde(default)]
    pub redacted: bool,
}

#[derive(Clone, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum State {
    Queued,
    Running { step: String },
    Done { apps: Vec<AppSummary> },
    Failed { status: u16, message: String },
}

/// What the list of reports shows of one analysed application.
#[derive(Clone, Serialize, Deserialize)]
pub struct AppSummary {
    pub name: String,
    pub findings: usize,
    /// The title of the finding ranked first.
    pub top: Option<String>,
}

/// The data folder and the jobs in it.
pub struct Store {
    root: PathBuf,
    jobs: Mutex<HashMap<String, Job>>,
    next_incoming: AtomicU64,
    /// Uploads kept but not analysed when an earlier run stopped, to analyse again.
    interrupted: Mutex<Vec<Job>>,
}

const INCOMING: &str = "incoming";
const UPLOADS: &str = "uploads";
const REPORTS: &str = "reports";
const UNPACKED: &str = "unpacked";
const JOB_FILE: &str = "job.json";
/// Beside each kept upload: its job as admitted, so a restart can analyse it again.
const UPLOAD_FILE: &str = "upload.json";

impl Store {
    /// Creates the sub-folders, removes what an earlier run left half done (partial uploads,
    /// unpacked archives), loads the finished jobs, and queues again the uploads whose analysis
    /// the earlier run did not finish ([`Store::take_interrupted`]).
    pub fn open(root: &Path) -> io::Result<Store> {
        std::fs::create_dir_all(root)?;
        let root = root.canonicalize()?;
        for sub in [INCOMING, UNPACKED] {
            let _ = std::fs::remove_dir_all(root.join(sub));
        }
        for sub in [INCOMING, UPLOADS, REPORTS, UNPACKED] {
            std::fs::create_dir_all(root.join(sub))?;
        }
        let mut jobs = HashMap::new();
        for entry in std::fs::read_dir(root.join(REPORTS))?.flatten() {
            let job = std::fs::read(entry.path().join(JOB_FILE))
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Job>(&bytes).ok())
                .filter(|job| is_id(&job.id) && entry.file_name().to_str() == Some(&job.id));
            match job {
                Some(job) => {
                    jobs.insert(job.id.clone(), job);
                }
                None => {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let mut interrupted = Vec::new();
        for entry in std::fs::read_dir(root.join(UPLOADS))?.flatten() {
            let name = entry.file_name();
            let Some(id) = name.to_str() else {
                let _ = std::fs::remove_dir_all(entry.path());
                continue;
            };
            if jobs.contains_key(id) {
                continue;
            }
            let unfinished = std::fs::read(entry.path().join(UPLOAD_FILE))
                .ok()
                .and_then(|bytes| serde_json::from_slice::<Job>(&bytes).ok())
                .filter(|job| is_id(&job.id) && job.id == id)
                .filter(|job| entry.path().join(disk_name(&job.file_name)).is_file());
            match unfinished {
                Some(mut job) => {
                    job.state = State::Queued;
                    jobs.insert(job.id.clone(), job.clone());
                    interrupted.push(job);
                }
                None => {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        Ok(Store {
            root,
            jobs: Mutex::new(jobs),
            next_incoming: AtomicU64::new(0),
            interrupted: Mutex::new(interrupted),
        })
    }

    /// Records beside a kept upload what is needed to analyse it again after a restart.
    pub fn keep_upload(&self, job: &Job) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(job).map_err(io::Error::other)?;
        std::fs::write(self.upload_dir(&job.id).join(UPLOAD_FILE), bytes)
    }

    /// The uploads an earlier run kept but did not finish analysing, oldest first; each is
    /// handed out once.
    pub fn take_interrupted(&self) -> Vec<Job> {
        let mut jobs =
            std::mem::take(&mut *self.interrupted.lock().unwrap_or_else(|e| e.into_inner()));
        jobs.sort_by_key(|job| job.uploaded_ms);
        jobs
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// A new file name for an upload being received.
    pub fn incoming_path(&self) -> PathBuf {
        let n = self.next_incoming.fetch_add(1, Ordering::Relaxed);
        self.root.join(INCOMING).join(format!("{n}.part"))
    }

    /// Where archives are unpacked while they are analysed.
    pub fn unpack_dir(&self) -> PathBuf {
        self.root.join(UNPACKED)
    }

    /// The uploaded file of job `id`, named `disk_name`.
    pub fn upload_path(&self, id: &str, disk_name: &str) -> PathBuf {
        self.root.join(UPLOADS).join(id).join(disk_name)
    }

    pub fn upload_dir(&self, id: &str) -> PathBuf {
        self.root.join(UPLOADS).join(id)
    }

    pub fn report_dir(&self, id: &str) -> PathBuf {
        self.root.join(REPORTS).join(id)
    }

    pub fn job(&self, id: &str) -> Option<Job> {
        self.lock().get(id).cloned()
    }

    /// The jobs, newest first.
    pub fn jobs(&self) -> Vec<Job> {
        let mut jobs: Vec<Job> = self.lock().values().cloned().collect();
        jobs.sort_by(|a, b| b.uploaded_ms.cmp(&a.uploaded_ms).then(a.id.cmp(&b.id)));
        jobs
    }

    /// Adds `job` unless one with its id exists; the existing one otherwise.
    pub fn insert_new(&self, job: Job) -> Result<(), Job> {
        let mut jobs = self.lock();
        if let Some(existing) = jobs.get(&job.id) {
            return Err(existing.clone());
        }
        jobs.insert(job.id.clone(), job);
        Ok(())
    }

    pub fn set_state(&self, id: &str, state: State) {
        if let Some(job) = self.lock().get_mut(id) {
            job.state = state;
        }
    }

    /// Records a finished job on disk, so a restart still lists it.
    pub fn finish(&self, id: &str, state: State) -> io::Result<()> {
        self.set_state(id, state);
        let Some(job) = self.job(id) else {
            return Ok(());
        };
        let dir = self.report_dir(id);
        std::fs::create_dir_all(&dir)?;
        let bytes = serde_json::to_vec_pretty(&job).map_err(io::Error::other)?;
        std::fs::write(dir.join(JOB_FILE), bytes)
    }

    /// Forgets job `id` and deletes its files.
    pub fn sweep_one(&self, id: &str) {
        // The files go while the jobs are held: an upload of the same file arriving meanwhile
        // would otherwise be inserted anew, moved into this upload directory and deleted with it.
        let mut jobs = self.lock();
        let _ = std::fs::remove_dir_all(self.report_dir(id));
        let _ = std::fs::remove_dir_all(self.upload_dir(id));
        jobs.remove(id);
    }

    /// Deletes every finished job uploaded more than `keep` ago, with its files, and partial
    /// uploads as old. Jobs still queued or running are left to finish first.
    pub fn sweep(&self, keep: Duration) {
        let now = now_ms();
        let expired: Vec<String> = self
            .lock()
            .values()
            .filter(|job| matches!(job.state, State::Done { .. } | State::Failed { .. }))
            .filter(|job| u128::from(now.saturating_sub(job.uploaded_ms)) >= keep.as_millis())
            .map(|job| job.id.clone())
            .collect();
        for id in expired {
            self.sweep_one(&id);
        }
        for sub in [INCOMING, UNPACKED] {
            let Ok(entries) = std::fs::read_dir(self.root.join(sub)) else {
                continue;
            };
            for entry in entries.flatten() {
                let old = entry
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| t.elapsed().ok())
                    .is_some_and(|age| age >= keep);
                if old {
                    let path = entry.path();
                    let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
                }
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Job>> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs [`Store::sweep`] for as long as the server runs, often enough that nothing outlives
/// `keep` by more than a quarter of it (at most a minute).
pub async fn sweep(state: crate::http::State) {
    let keep = state.config.keep;
    let every = (keep / 4).clamp(Duration::from_millis(100), Duration::from_secs(60));
    loop {
        let store = state.store.clone();
        let _ = tokio::task::spawn_blocking(move || store.sweep(keep)).await;
        tokio::time::sleep(every).await;
    }
}

/// What a redacted upload is called instead of the name it was sent with (which is often the
/// application's id or name): `upload`, and of its extensions only those that say a codec or
/// an archive, which the page shows as a hint of what was sent.
pub fn redacted_name(sent: &str) -> String {
    const KNOWN: &[&str] = &[
        "zstd",
        "zst",
        "lz4",
        "snappy",
        "lzf",
        "gz",
        "gzip",
        "zip",
        "tar",
        "tgz",
        "json",
        "log",
        "txt",
        "inprogress",
    ];
    let last = sent.rsplit(['/', '\\']).next().unwrap_or_default();
    // A Databricks log's name says only when it was rolled, and tells the reader its layout.
    if last == "eventlog" || last.starts_with("eventlog-") {
        return last.to_string();
    }
    let parts: Vec<&str> = last.split('.').skip(1).collect();
    let mut kept: Vec<&str> = parts
        .into_iter()
        .rev()
        .take_while(|part| KNOWN.contains(&part.to_ascii_lowercase().as_str()))
        .collect();
    kept.reverse();
    std::iter::once("upload")
        .chain(kept)
        .collect::<Vec<_>>()
        .join(".")
}

/// A job id: 64 lowercase hex digits, and so safe as a folder name.
pub fn is_id(text: &str) -> bool {
    text.len() == 64 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The uploaded file's name made safe to write: its last component, letters, digits, `.`, `-`
/// and `_` only, not starting with a dot, at most 120 bytes. The name matters to the reader
/// (`.zstd`, `.inprogress`, `eventlog-…gz`), so it is kept as far as it is safe.
pub fn disk_name(sent: &str) -> String {
    let last = sent.rsplit(['/', '\\']).next().unwrap_or("");
    let mut name: String = last
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_') {
                c
            } else {
                '_'
            }
        })
        .collect();
    while name.starts_with('.') {
        name.remove(0);
    }
    name.truncate(120);
    if name.is_empty() {
        "upload".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_from_clients_cannot_leave_the_upload_folder() {
        assert_eq!(
            redacted_name("C:\\logs\\application_1640227485896_0002.json.zstd"),
            "upload.json.zstd"
        );
        assert_eq!(redacted_name("payroll.globex.tar.gz"), "upload.tar.gz");
        assert_eq!(redacted_name("eventlog_v2_app-2022"), "upload");
        assert_eq!(disk_name("../../etc/passwd"), "passwd");
        assert_eq!(disk_name("C:\\x\\..\\app.zstd"), "app.zstd");
        assert_eq!(disk_name(".."), "upload");
        assert_eq!(disk_name("/"), "upload");
        assert_eq!(disk_name(".hidden"), "hidden");
        assert_eq!(disk_name("<script>.lz4"), "_script_.lz4");
        assert_eq!(
            disk_name("eventlog-2026-01-01--10-00.gz"),
            "eventlog-2026-01-01--10-00.gz"
        );
        assert!(is_id(&"a".repeat(64)));
        assert!(!is_id(&format!("../{}", "a".repeat(61))));
        assert!(!is_id(&"A".repeat(64)));
    }
}
