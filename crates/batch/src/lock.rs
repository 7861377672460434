//! One batch at a time in an output folder. Two nights written into one folder at once would
//! interleave: each empties and fills `apps/DATE`, and the last to rename its tables wins
//! whatever the other analysed. The lock is the operating system's (`flock` on Unix,
//! `LockFileEx` on Windows) on `OUTDIR/.sparkdiag-batch.lock`, so a run killed with `kill -9`
//! leaves no stale lock behind: the system releases it with the process.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::Path;

use anyhow::Context;

/// The lock file's name in the output folder (hidden: no reader of the tables lists it).
pub(crate) const LOCK_FILE: &str = ".sparkdiag-batch.lock";

/// Held for the whole run; dropping it (or the process ending in any way) releases the folder.
pub(crate) struct OutputLock {
    _file: File,
}

/// Takes the output folder `out` for this run (creating it), or says which run holds it.
pub(crate) fn lock_output(out: &Path, date: &str) -> anyhow::Result<OutputLock> {
    std::fs::create_dir_all(out).with_context(|| format!("cannot create {}", out.display()))?;
    let path = out.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .with_context(|| format!("cannot open the lock file {}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let by = if holder.is_empty() {
                String::new()
            } else {
                format!(" ({holder})")
            };
            anyhow::bail!(
                "{} is being written by another sparkdiag batch{by}; two runs on one output \
                 folder would mix their nights, so this one wrote nothing. Wait for the other to \
                 finish, or give this one another -o folder",
                out.display()
            );
        }
        Err(TryLockError::Error(e)) => {
            return Err(e).with_context(|| format!("cannot lock {}", path.display()));
        }
    }
    // Who holds it, for the message of a run refused meanwhile.
    let holder = format!("pid {}, night {date}\n", std::process::id());
    file.set_len(0)
        .and_then(|()| file.rewind())
        .and_then(|()| file.write_all(holder.as_bytes()))
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(OutputLock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_run_on_a_locked_folder_is_refused_until_the_first_ends() {
        let out = tempfile::tempdir().unwrap();
        let first = lock_output(out.path(), "2026-12-01").unwrap();
        let refused = lock_output(out.path(), "2026-12-02")
            .err()
            .expect("a second lock on one folder")
            .to_string();
        assert!(
            refused.contains("is being written by another sparkdiag batch")
                && refused.contains(&format!("pid {}, night 2026-12-01", std::process::id()))
                && refused.contains("wrote nothing"),
            "{refused}"
        );
        drop(first);
        let again = lock_output(out.path(), "2026-12-02");
        assert!(again.is_ok(), "{:?}", again.err());
    }
}
