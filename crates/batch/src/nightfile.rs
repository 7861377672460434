//! The night's file (`nights/DATE.json`) written one application at a time, as each finishes,
//! and read back one at a time: by position, in the index's order, or streamed through from
//! another night's file. A night of any size keeps in memory only what ranking and the summary
//! need of each application (its [`Rank`], where its row is in the file, a hash of its key),
//! about 48 bytes, instead of its whole row.

use std::fs::File;
use std::hash::{Hash, Hasher};
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use sparkdiag_contract::night::{AppTotals, Night, NightApp, Rank};

use crate::files::temporary_path;

/// How a night file is laid out: pretty for a whole night (people read it), compact for a
/// slice (only the merge does). Either is what `serde_json` writes for the whole [`Night`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Pretty,
    Compact,
}

impl Style {
    fn to_vec(self, value: &impl serde::Serialize) -> serde_json::Result<Vec<u8>> {
        match self {
            Style::Pretty => serde_json::to_vec_pretty(value),
            Style::Compact => serde_json::to_vec(value),
        }
    }
}

/// Where one application's row is in the night file, and what the index ranks it by.
#[derive(Debug, Clone, Copy)]
struct Row {
    rank: Rank,
    offset: u64,
    len: u32,
}

/// A night file being written under a temporary name: `add` appends each application's row as
/// it finishes, `finish` writes what comes after the applications and renames it into place.
/// Dropped unfinished (the night failed), it removes the temporary file.
pub(crate) struct NightFileWriter {
    path: PathBuf,
    temporary: PathBuf,
    file: Option<BufWriter<File>>,
    style: Style,
    written: u64,
    /// The night without its applications: its date, unreadable and skipped logs, worst findings.
    pub night: Night,
    pub totals: AppTotals,
    rows: Vec<Row>,
    key_hashes: Vec<u64>,
}

impl NightFileWriter {
    /// Starts the night of `date` in `OUTDIR/nights/DATE.json`.
    pub(crate) fn create(out: &Path, date: &str, style: Style) -> anyhow::Result<Self> {
        let path = out.join("nights").join(format!("{date}.json"));
        let temporary = temporary_path(&path)?;
        let cannot_write = || format!("cannot write {}", temporary.display());
        let dir = temporary.parent().context("a file needs a folder")?;
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
        let file = BufWriter::new(File::create(&temporary).with_context(cannot_write)?);
        let mut writer = NightFileWriter {
            path,
            temporary,
            file: Some(file),
            style,
            written: 0,
            night: Night::new(date),
            totals: AppTotals::default(),
            rows: Vec::new(),
            key_hashes: Vec::new(),
        };
        let (head, _) = writer.split_around_apps()?;
        writer.write(&head)?;
        Ok(writer)
    }

    /// What `serde_json` writes for the night without applications, before and after the `[]`
    /// that stands for them. Only the date comes before, so the head is known from the start.
    fn split_around_apps(&self) -> anyhow::Result<(Vec<u8>, Vec<u8>)> {
        let mut text = self.style.to_vec(&self.night)?;
        let apps = find(&text, b"\"apps\":").context("a night has applications")?;
        let open = apps + find(&text[apps..], b"[]").context("no applications yet")?;
        let tail = text.split_off(open + 2);
        text.truncate(open + 1);
        Ok((text, tail))
    }

    fn write(&mut self, bytes: &[u8]) -> anyhow::Result<()> {
        let file = self.file.as_mut().context("the night file is finished")?;
        file.write_all(bytes)
            .with_context(|| format!("cannot write {}", self.temporary.display()))?;
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Makes room for `apps` applications at once: the ranking rows stay all night, and grown
    /// one push at a time they would hold up to twice their 48 bytes per application.
    pub(crate) fn expect(&mut self, apps: usize) {
        self.rows.reserve_exact(apps);
        self.key_hashes.reserve_exact(apps);
    }

    /// Appends `app`, the next application in the order the logs were found.
    pub(crate) fn add(&mut self, app: &NightApp) -> anyhow::Result<()> {
        let mut row = self.style.to_vec(app)?;
        let before: &[u8] = match (self.style, self.rows.is_empty()) {
            (Style::Pretty, true) => b"\n    ",
            (Style::Pretty, false) => b",\n    ",
            (Style::Compact, true) => b"",
            (Style::Compact, false) => b",",
        };
        if self.style == Style::Pretty {
            // Two levels deeper than on its own. A newline in JSON text is only ever between
            // tokens (inside a string it is written `\n`), so every line is indented.
            row = indent(&row, b"    ");
        }
        self.write(before)?;
        let offset = self.written;
        self.write(&row)?;
        self.rows.push(Row {
            rank: app.rank(),
            offset,
            len: u32::try_from(row.len()).context("an application's row over 4 GiB")?,
        });
        self.key_hashes.push(key_hash(&app.key));
        self.totals.add(app);
        Ok(())
    }

    /// Writes the rest of the night (its errors, worst findings and skipped logs, now known)
    /// and puts the file in place.
    pub(crate) fn finish(mut self) -> anyhow::Result<NightFile> {
        let (_, tail) = self.split_around_apps()?;
        let close: &[u8] = match (self.style, self.rows.is_empty()) {
            (Style::Pretty, false) => b"\n  ]",
            _ => b"]",
        };
        self.write(close)?;
        self.write(&tail)?;
        let file = self.file.take().context("the night file is finished")?;
        let cannot_write = || format!("cannot write {}", self.temporary.display());
        file.into_inner()
            .map_err(|e| e.into_error())
            .and_then(|f| f.sync_data())
            .with_context(cannot_write)?;
        std::fs::rename(&self.temporary, &self.path)
            .with_context(|| format!("cannot rename {} into place", self.temporary.display()))?;
        Ok(NightFile {
            path: std::mem::take(&mut self.path),
            night: std::mem::replace(&mut self.night, Night::new("")),
            totals: std::mem::take(&mut self.totals),
            rows: std::mem::take(&mut self.rows),
            key_hashes: std::mem::take(&mut self.key_hashes),
        })
    }
}

impl Drop for NightFileWriter {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            let _ = std::fs::remove_file(&self.temporary);
        }
    }
}

/// A night file written: the night without its applications, what they add up to, and where
/// each one's row is.
pub(crate) struct NightFile {
    pub path: PathBuf,
    /// The night with its `apps` left empty: they are in the file.
    pub night: Night,
    pub totals: AppTotals,
    rows: Vec<Row>,
    key_hashes: Vec<u64>,
}

impl NightFile {
    /// What the batch tells its caller of this night.
    pub(crate) fn summary(self) -> crate::NightSummary {
        crate::NightSummary {
            date: self.night.date,
            file: self.path,
            totals: self.totals,
            errors: self.night.errors,
            in_progress: self.night.in_progress,
        }
    }

    /// Whether `key` may be one of tonight's keys (never false when it is; rarely true when it
    /// is not, which only keeps a run that is never looked up).
    pub(crate) fn key_filter(&mut self) -> impl Fn(&str) -> bool + use<> {
        let mut hashes = std::mem::take(&mut self.key_hashes);
        hashes.sort_unstable();
        hashes.dedup();
        move |key| hashes.binary_search(&key_hash(key)).is_ok()
    }

    /// The applications, read back one at a time: in the order the logs were found, or in the
    /// index's once [`NightFile::rank`] has put them in it.
    pub(crate) fn apps(&self) -> anyhow::Result<impl Iterator<Item = anyhow::Result<NightApp>>> {
        let mut reader = RowReader::open(&self.path)?;
        Ok(self.rows.iter().map(move |row| reader.read(row)))
    }

    /// Puts the applications in the index's order ([`NightApp::rank`]; among equals, the
    /// order they were found).
    pub(crate) fn rank(&mut self) {
        // Rows are appended in the order found, so their offsets keep that order among equals.
        self.rows.sort_unstable_by_key(|row| (row.rank, row.offset));
    }
}

/// Reads rows of one night file by where they are.
struct RowReader {
    path: PathBuf,
    file: File,
    buffer: Vec<u8>,
}

impl RowReader {
    fn open(path: &Path) -> anyhow::Result<Self> {
        Ok(RowReader {
            path: path.to_path_buf(),
            file: File::open(path).with_context(|| format!("cannot read {}", path.display()))?,
            buffer: Vec::new(),
        })
    }

    fn read(&mut self, row: &Row) -> anyhow::Result<NightApp> {
        let at = || format!("{}: byte {}", self.path.display(), row.offset);
        self.buffer.resize(row.len as usize, 0);
        self.file
            .seek(SeekFrom::Start(row.offset))
            .and_then(|_| self.file.read_exact(&mut self.buffer))
            .with_context(|| format!("cannot read {}", at()))?;
        serde_json::from_slice(&self.buffer)
            .with_context(|| format!("{}: expected an application's row", at()))
    }
}

/// Reads the night file at `path`, handing each application to `on_app` as it is read, and
/// returns the night without them: a night's file is never held whole.
pub(crate) fn read_night(
    path: &Path,
    on_app: impl FnMut(NightApp) -> anyhow::Result<()>,
) -> anyhow::Result<Night> {
    let file = File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
    let mut failed = None;
    let mut reader = serde_json::Deserializer::from_reader(std::io::BufReader::new(file));
    let night = reader
        .deserialize_map(NightVisitor {
            on_app,
            failed: &mut failed,
        })
        .and_then(|night| reader.end().map(|()| night));
    if let Some(error) = failed {
        return Err(error.context(format!("{}", path.display())));
    }
    night.with_context(|| format!("{}: not a night written by sparkdiag batch", path.display()))
}

/// Reads a [`Night`] as its derived `Deserialize` would, except that its applications go one by
/// one to `on_app`; an error `on_app` returns is kept in `failed` and stops the reading.
struct NightVisitor<'a, F> {
    on_app: F,
    failed: &'a mut Option<anyhow::Error>,
}

impl<'de, F: FnMut(NightApp) -> anyhow::Result<()>> Visitor<'de> for NightVisitor<'_, F> {
    type Value = Night;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a night: date, apps, errors, worst_findings")
    }

    fn visit_map<M: MapAccess<'de>>(mut self, mut map: M) -> Result<Night, M::Error> {
        use serde::de::Error;
        let mut night = Night::new("");
        let (mut date, mut apps, mut errors, mut worst) = (false, false, false, false);
        while let Some(key) = map.next_key::<String>()? {
            match key.as_str() {
                "date" => {
                    night.date = map.next_value()?;
                    date = true;
                }
                "apps" => {
                    map.next_value_seed(AppsSeed {
                        on_app: &mut self.on_app,
                        failed: self.failed,
                    })?;
                    apps = true;
                }
                "errors" => {
                    night.errors = map.next_value()?;
                    errors = true;
                }
                "worst_findings" => {
                    night.worst_findings = map.next_value()?;
                    worst = true;
                }
                "in_progress" => night.in_progress = map.next_value()?,
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        for (present, field) in [
            (date, "date"),
            (apps, "apps"),
            (errors, "errors"),
            (worst, "worst_findings"),
        ] {
            if !present {
                return Err(M::Error::missing_field(field));
            }
        }
        Ok(night)
    }
}

struct AppsSeed<'a, F> {
    on_app: &'a mut F,
    failed: &'a mut Option<anyhow::Error>,
}

impl<'de, F: FnMut(NightApp) -> anyhow::Result<()>> DeserializeSeed<'de> for AppsSeed<'_, F> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'de, F: FnMut(NightApp) -> anyhow::Result<()>> Visitor<'de> for AppsSeed<'_, F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a list of applications")
    }

    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<(), S::Error> {
        while let Some(app) = seq.next_element::<NightApp>()? {
            if let Err(error) = (self.on_app)(app) {
                *self.failed = Some(error);
                return Err(serde::de::Error::custom("stopped"));
            }
        }
        Ok(())
    }
}

fn key_hash(key: &str) -> u64 {
    // Fixed keys: the same key hashes the same in every night.
    let mut hasher = std::hash::DefaultHasher::new();
    key.hash(&mut hasher);
    hasher.finish()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn indent(text: &[u8], by: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len() + text.len() / 8);
    for &byte in text {
        out.push(byte);
        if byte == b'\n' {
            out.extend_from_slice(by);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn app(key: &str, failed_jobs: usize, impact_ms: i64, findings: &[&str]) -> NightApp {
        NightApp {
            name: format!("{key} \"quoted\"\nwith a newline"),
            core_ms: 2_000,
            impact_ms,
            worst_severity: Some("high".into()),
            jobs: 2,
            failed_jobs,
            ..sparkdiag_contract::night::testing::app(key, 1_000, findings)
        }
    }

    fn night_of(apps: Vec<NightApp>) -> Night {
        Night {
            apps,
            errors: vec![sparkdiag_contract::night::NightError {
                input: "logs/bad".into(),
                error: "byte 0: not a Spark event log".into(),
            }],
            worst_findings: vec![sparkdiag_contract::night::NightFinding {
                app: "costly".into(),
                rule: "SK001".into(),
                severity: "high".into(),
                title: "Stage 3: one task ran 40x the median".into(),
                impact_ms: 9,
                report: "apps/costly.html".into(),
                saves: "~9 ms".into(),
            }],
            in_progress: vec!["logs/running.inprogress".into()],
            ..Night::new("2026-11-29")
        }
    }

    /// Writes `night` one application at a time, as a batch does.
    fn written(dir: &Path, night: &Night, style: Style) -> NightFile {
        let mut writer = NightFileWriter::create(dir, &night.date, style).unwrap();
        for app in &night.apps {
            writer.add(app).unwrap();
        }
        writer.night.errors = night.errors.clone();
        writer.night.worst_findings = night.worst_findings.clone();
        writer.night.in_progress = night.in_progress.clone();
        writer.finish().unwrap()
    }

    #[test]
    fn a_night_written_one_app_at_a_time_is_what_serde_json_writes_whole() {
        let dir = tempfile::tempdir().unwrap();
        for apps in [
            vec![],
            vec![app("a", 0, 5, &["SK001", "DR002"])],
            vec![app("a", 0, 5, &[]), app("b", 1, 0, &["SK001"])],
        ] {
            let night = night_of(apps);
            for style in [Style::Pretty, Style::Compact] {
                let file = written(dir.path(), &night, style);
                let text = std::fs::read(&file.path).unwrap();
                assert_eq!(
                    String::from_utf8(text).unwrap(),
                    String::from_utf8(style.to_vec(&night).unwrap()).unwrap(),
                    "{style:?}"
                );
                assert!(!temporary_path(&file.path).unwrap().exists());
                assert_eq!(file.totals, AppTotals::of(&night.apps));
            }
        }
    }

    #[test]
    fn rows_come_back_found_in_order_and_ranked_and_streamed() {
        let dir = tempfile::tempdir().unwrap();
        let night = night_of(vec![
            app("cheap", 0, 1, &[]),
            app("costly", 0, 9, &["SK001"]),
            app("lost-a-job", 1, 0, &[]),
            app("cheap-too", 0, 1, &[]),
        ]);
        let mut file = written(dir.path(), &night, Style::Pretty);
        let keys = |apps: Vec<anyhow::Result<NightApp>>| -> Vec<String> {
            apps.into_iter().map(|a| a.unwrap().key).collect()
        };
        assert_eq!(
            keys(file.apps().unwrap().collect()),
            ["cheap", "costly", "lost-a-job", "cheap-too"]
        );
        let is_tonights = file.key_filter();
        assert!(is_tonights("costly") && !is_tonights("elsewhere"));
        let expected: Vec<String> = sparkdiag_report::fleet::ranked_apps(&night)
            .iter()
            .map(|a| a.key.clone())
            .collect();
        file.rank();
        assert_eq!(keys(file.apps().unwrap().collect()), expected);

        let mut streamed = Vec::new();
        let rest = read_night(&file.path, |app| {
            streamed.push(app.key);
            Ok(())
        })
        .unwrap();
        assert_eq!(streamed, ["cheap", "costly", "lost-a-job", "cheap-too"]);
        // Everything but the applications, as the derived reading of the whole file gives it.
        let mut whole: Night = serde_json::from_slice(&std::fs::read(&file.path).unwrap()).unwrap();
        assert_eq!(whole.apps.len(), 4);
        whole.apps.clear();
        assert_eq!(
            serde_json::to_value(&rest).unwrap(),
            serde_json::to_value(&whole).unwrap()
        );
        assert_eq!(rest.errors.len(), 1);
        assert_eq!(rest.worst_findings.len(), 1);
        assert_eq!(rest.in_progress, ["logs/running.inprogress"]);
    }

    #[test]
    fn a_broken_night_file_is_named_with_where_it_broke() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("2026-11-28.json");
        std::fs::write(
            &path,
            "{\"date\": \"2026-11-28\", \"apps\": [{\"key\": 3}]}",
        )
        .unwrap();
        let error = format!("{:#}", read_night(&path, |_| Ok(())).unwrap_err());
        assert!(error.contains("2026-11-28.json: not a night written by sparkdiag batch"));
        assert!(error.contains("line 1 column"), "{error}");
        std::fs::write(&path, "{\"date\": \"2026-11-28\", \"apps\": []}").unwrap();
        let error = format!("{:#}", read_night(&path, |_| Ok(())).unwrap_err());
        assert!(error.contains("missing field `errors`"), "{error}");
        // A failure of the caller's is passed on as it is.
        let night = night_of(vec![app("a", 0, 0, &[])]);
        let file = written(dir.path(), &night, Style::Compact);
        let error = read_night(&file.path, |_| anyhow::bail!("disk full")).unwrap_err();
        assert_eq!(error.root_cause().to_string(), "disk full");
    }

    #[test]
    fn an_unfinished_night_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let mut writer = NightFileWriter::create(dir.path(), "2026-11-29", Style::Pretty).unwrap();
        writer.add(&app("a", 0, 0, &[])).unwrap();
        drop(writer);
        assert_eq!(
            std::fs::read_dir(dir.path().join("nights"))
                .unwrap()
                .count(),
            0
        );
    }
}
