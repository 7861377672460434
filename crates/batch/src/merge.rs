//! A night spread over machines: each `batch --slice K/N` writes its share of the night into
//! its own folder, and `batch --merge` joins the N folders into the one night a single `batch`
//! over every log would have written: the same tables row for row (in slice order, not in the
//! order the logs were found), the same reports under the same names, one night file, and the
//! index page and regressions computed once, over the whole night.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::files::{fresh_apps_dir, put_apps_dir_in_place, write_atomic};
use crate::night::keep_worst;
use crate::nightfile::{NightFile, NightFileWriter, Style, read_night};

/// One slice of a night: the applications at positions `index`, `index + of`, ...
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Slice {
    pub index: usize,
    pub of: usize,
}

impl Slice {
    /// Whether the item at `position` of everything found belongs to this slice.
    pub(crate) fn holds(self, position: usize) -> bool {
        position % self.of == self.index
    }
}

impl std::str::FromStr for Slice {
    type Err = String;

    /// `K/N` with K < N, e.g. `0/8`.
    fn from_str(text: &str) -> Result<Slice, String> {
        let parsed = text.split_once('/').and_then(|(k, n)| {
            Some(Slice {
                index: k.trim().parse().ok()?,
                of: n.trim().parse().ok()?,
            })
        });
        match parsed {
            Some(slice) if slice.index < slice.of => Ok(slice),
            _ => Err(format!(
                "`{text}`: expected K/N with 0 <= K < N, e.g. 0/8 for the first of 8 slices"
            )),
        }
    }
}

/// What a slice leaves beside its night, so that a merge can tell that it has every slice of
/// one night, once. Not `.json`: the history reads every night file there.
fn marker(outdir: &Path, date: &str) -> PathBuf {
    outdir.join("nights").join(format!("{date}.slice"))
}

fn night_file(outdir: &Path, date: &str) -> PathBuf {
    outdir.join("nights").join(format!("{date}.json"))
}

/// Writes a slice's marker; the tables, reports and night file are already in `outdir`.
pub(crate) fn write_slice_marker(outdir: &Path, date: &str, slice: Slice) -> anyhow::Result<()> {
    write_atomic(&marker(outdir, date), &serde_json::to_string(&slice)?)
}

/// Joins the slices in `slice_dirs` (the OUTDIRs of `batch --slice K/N` for every K of one N)
/// into `out`: tables, reports and the night file, which it returns for the index and the
/// history. Each slice's night is streamed into the merged one, an application at a time.
pub(crate) fn merge(slice_dirs: &[String], out: &Path, date: &str) -> anyhow::Result<NightFile> {
    let mut slices = Vec::new();
    for dir in slice_dirs {
        let dir = Path::new(dir);
        let path = marker(dir, date);
        let text = std::fs::read_to_string(&path).with_context(|| {
            format!(
                "{}: no slice of the night {date} here (written by `sparkdiag batch --slice K/N --date {date}`)",
                dir.display()
            )
        })?;
        let slice: Slice = serde_json::from_str(&text)
            .with_context(|| format!("{}: not a slice marker", path.display()))?;
        if same_folder(dir, out) {
            anyhow::bail!(
                "{}: the merged night must go to its own OUTDIR, not into one of its slices",
                dir.display()
            );
        }
        slices.push((slice, dir));
    }
    slices.sort_by_key(|(slice, _)| slice.index);
    check_complete(&slices)?;

    let (apps_rel, apps_dir) = fresh_apps_dir(out, date)?;
    let mut tables = sparkdiag_tables::NightWriter::create(out, date)?;
    let mut merged = NightFileWriter::create(out, date, Style::Pretty)?;
    for (_, dir) in &slices {
        let part = read_night(&night_file(dir, date), |app| merged.add(&app))?;
        tables.append_night(dir, date)?;
        move_reports(&dir.join(&apps_rel), &apps_dir)?;
        let night = &mut merged.night;
        night.errors.extend(part.errors);
        night.in_progress.extend(part.in_progress);
        // Each slice kept its own worst; the night's worst are among them.
        night.worst_findings.extend(part.worst_findings);
        keep_worst(&mut night.worst_findings);
    }
    tables.finish()?;
    put_apps_dir_in_place(out, date)?;
    merged.finish()
}

/// Slices `0/N` to `N-1/N`, each once: a night with a slice missing would look complete.
fn check_complete(slices: &[(Slice, &Path)]) -> anyhow::Result<()> {
    let of = slices.first().map_or(0, |(s, _)| s.of);
    for (position, (slice, dir)) in slices.iter().enumerate() {
        if slice.of != of {
            anyhow::bail!(
                "{} is slice {}/{}, but the first is one of {of}: slices of different splits",
                dir.display(),
                slice.index,
                slice.of
            );
        }
        if slice.index != position {
            if slice.index < position {
                anyhow::bail!(
                    "slice {}/{of} is there twice (again in {}); nothing was merged",
                    slice.index,
                    dir.display()
                );
            }
            anyhow::bail!("slice {position}/{of} is missing; nothing was merged");
        }
    }
    if slices.len() != of {
        anyhow::bail!("slice {}/{of} is missing; nothing was merged", slices.len());
    }
    Ok(())
}

/// Moves every report of a slice into the merged night's folder (a rename on one filesystem;
/// a copy and delete across filesystems). The names are unique across slices: each holds the
/// log's position among all the night's logs.
fn move_reports(from: &Path, to: &Path) -> anyhow::Result<()> {
    let entries =
        std::fs::read_dir(from).with_context(|| format!("cannot list {}", from.display()))?;
    for entry in entries {
        let source = entry
            .with_context(|| format!("cannot list {}", from.display()))?
            .path();
        let target = to.join(source.file_name().context("a report has a name")?);
        if std::fs::rename(&source, &target).is_err() {
            std::fs::copy(&source, &target).with_context(|| {
                format!("cannot copy {} to {}", source.display(), target.display())
            })?;
            std::fs::remove_file(&source)
                .with_context(|| format!("cannot remove {}", source.display()))?;
        }
    }
    Ok(())
}

fn same_folder(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slices(splits: &[(usize, usize)]) -> Vec<(Slice, &'static Path)> {
        splits
            .iter()
            .map(|&(index, of)| (Slice { index, of }, Path::new("out/slice")))
            .collect()
    }

    #[test]
    fn a_slice_is_k_of_n_with_k_below_n() {
        assert_eq!("1/8".parse(), Ok(Slice { index: 1, of: 8 }));
        assert_eq!(" 0 / 2 ".parse(), Ok(Slice { index: 0, of: 2 }));
        for bad in ["8/8", "1", "a/b", "-1/2", "0/0"] {
            let error = bad.parse::<Slice>().unwrap_err();
            assert!(error.contains("expected K/N"), "{bad}: {error}");
        }
    }

    #[test]
    fn a_merge_needs_every_slice_once() {
        assert!(check_complete(&slices(&[(0, 3), (1, 3), (2, 3)])).is_ok());
        let error = |s: &[(usize, usize)]| check_complete(&slices(s)).unwrap_err().to_string();
        assert_eq!(
            error(&[(0, 3), (2, 3)]),
            "slice 1/3 is missing; nothing was merged"
        );
        assert_eq!(
            error(&[(0, 3), (1, 3)]),
            "slice 2/3 is missing; nothing was merged"
        );
        assert_eq!(
            error(&[(0, 2), (0, 2), (1, 2)]),
            "slice 0/2 is there twice (again in out/slice); nothing was merged"
        );
        assert!(error(&[(0, 2), (1, 3)]).contains("slices of different splits"));
    }
}
