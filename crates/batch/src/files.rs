//! Files written so that a crash or a re-run never leaves a half-written or mixed night.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;

/// The night's report folder under `out`, relative and full, emptied: the night is written
/// afresh, so a re-run replaces it instead of adding to it.
pub(crate) fn fresh_apps_dir(out: &Path, date: &str) -> anyhow::Result<(String, PathBuf)> {
    let apps_rel = format!("apps/{date}");
    let apps_dir = out.join(&apps_rel);
    if apps_dir.exists() {
        std::fs::remove_dir_all(&apps_dir)
            .with_context(|| format!("cannot clear {}", apps_dir.display()))?;
    }
    std::fs::create_dir_all(&apps_dir)
        .with_context(|| format!("cannot create {}", apps_dir.display()))?;
    Ok((apps_rel, apps_dir))
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
