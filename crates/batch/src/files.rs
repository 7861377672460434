//! Files written so that a crash or a re-run never leaves a half-written or mixed night.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The night's report folder under `out`: relative (`apps/DATE`, what the night file and index
/// link to), and the folder the reports are written into until the night is complete, empty
/// (`apps/.DATE.partial`, left over by a run that was killed, is emptied first). The reports of
/// an earlier run of the date stay in place, and linked from its index page, until
/// [`put_apps_dir_in_place`] replaces them with this run's.
pub(crate) fn fresh_apps_dir(out: &Path, date: &str) -> anyhow::Result<(String, PathBuf)> {
    let apps_rel = format!("apps/{date}");
    let partial = partial_apps_dir(out, date);
    if partial.exists() {
        std::fs::remove_dir_all(&partial)
            .with_context(|| format!("cannot clear {}", partial.display()))?;
    }
    std::fs::create_dir_all(&partial)
        .with_context(|| format!("cannot create {}", partial.display()))?;
    Ok((apps_rel, partial))
}

/// Where [`fresh_apps_dir`]'s reports are written until the night is complete; hidden.
fn partial_apps_dir(out: &Path, date: &str) -> PathBuf {
    out.join("apps").join(format!(".{date}.partial"))
}

/// Replaces the date's reports with the ones this run wrote, once all are written: the old
/// folder is renamed aside, the new one renamed into place, then the old one removed, so
/// `apps/DATE` is missing only between two renames.
pub(crate) fn put_apps_dir_in_place(out: &Path, date: &str) -> anyhow::Result<()> {
    let partial = partial_apps_dir(out, date);
    let apps_dir = out.join("apps").join(date);
    let replaced = out.join("apps").join(format!(".{date}.replaced"));
    if replaced.exists() {
        std::fs::remove_dir_all(&replaced)
            .with_context(|| format!("cannot clear {}", replaced.display()))?;
    }
    if apps_dir.exists() {
        std::fs::rename(&apps_dir, &replaced)
            .with_context(|| format!("cannot move {} aside", apps_dir.display()))?;
    }
    std::fs::rename(&partial, &apps_dir)
        .with_context(|| format!("cannot rename {} into place", partial.display()))?;
    if replaced.exists() {
        std::fs::remove_dir_all(&replaced)
            .with_context(|| format!("cannot remove {}", replaced.display()))?;
    }
    Ok(())
}

/// Writes under a temporary name and renames, so a crash never leaves a half-written file.
pub(crate) fn write_atomic(path: &Path, contents: &str) -> anyhow::Result<()> {
    write_atomic_with(path, |file| Ok(file.write_all(contents.as_bytes())?))
}

/// The name `path` is written under until it is complete: beside it, hidden, so the rename is
/// on one filesystem.
pub(crate) fn temporary_path(path: &Path) -> anyhow::Result<PathBuf> {
    let dir = path.parent().context("a file needs a folder")?;
    Ok(dir.join(format!(
        ".{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("out")
    )))
}

/// [`write_atomic`] for contents that `write` streams into the file.
pub(crate) fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    let tmp = temporary_path(path)?;
    let dir = tmp.parent().context("a file needs a folder")?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let cannot_write = || format!("cannot write {}", tmp.display());
    let mut file = std::io::BufWriter::new(std::fs::File::create(&tmp).with_context(cannot_write)?);
    write(&mut file).with_context(cannot_write)?;
    file.into_inner()
        .map_err(|e| e.into_error())
        .with_context(cannot_write)?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("cannot rename {} into place", tmp.display()))?;
    Ok(())
}
