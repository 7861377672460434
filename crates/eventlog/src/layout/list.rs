//! The logs one search found, kept compactly: a night of tens of thousands of logs holds this
//! list from the search until its last log is analysed, so each log costs its name relative to
//! the searched folder and 8 bytes, not a [`LogInput`] (137 bytes in the night's list) with its
//! whole name, and each of its files' path and name besides.

use std::ffi::OsStr;
use std::path::PathBuf;

use super::{Layout, LogInput, Part};
use crate::store::Location;

/// Every log a search found, in the order found; [`LogList::get`] gives each back as the
/// [`LogInput`] the search made, field for field.
///
/// A log whose files are where their names say (nearly every log: a single file, a rolling or
/// Databricks folder) is stored as its name after the searched folder's, then each file's name
/// after the log's, separated by NUL (which no file name holds). The rest (unpacked from an
/// archive, named with notes on its damage, or whose file paths differ from their names) are
/// kept whole.
#[derive(Debug, Default)]
pub struct LogList {
    /// `<searched path>/`: how the names of the logs found under it begin.
    prefix: String,
    names: String,
    logs: Vec<Stored>,
    /// The logs kept whole, by their place in the list, in order.
    whole: Vec<(usize, LogInput)>,
    /// What the search passed over; told on the first log, as [`LogInput::skipped`] says.
    skipped: Vec<String>,
    /// Every log as pushed, to check that each comes back as it was.
    #[cfg(test)]
    pushed: Vec<LogInput>,
}

/// One log of the list: where its names end in `names`, its layout, and its flags.
#[derive(Debug, Clone, Copy)]
struct Stored {
    end: u32,
    layout: Layout,
    flags: u8,
}

const IN_PROGRESS: u8 = 1;
/// The stored name follows the searched folder's name and `/`.
const UNDER_PREFIX: u8 = 2;
/// The log is in `whole`; it has no names in `names`.
const WHOLE: u8 = 4;

impl LogList {
    pub(super) fn new(searched: &str) -> Self {
        LogList {
            prefix: format!("{}/", searched.trim_end_matches('/')),
            ..LogList::default()
        }
    }

    /// How many logs were found.
    pub fn len(&self) -> usize {
        self.logs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.logs.is_empty()
    }

    pub(super) fn push(&mut self, input: LogInput) {
        #[cfg(test)]
        self.pushed.push(input.clone());
        let start = self.names.len();
        // Past 4 GiB of names, the rest are kept whole rather than lost.
        let stored = self
            .push_names(&input)
            .and_then(|under_prefix| Some((u32::try_from(self.names.len()).ok()?, under_prefix)));
        let in_progress = if input.in_progress { IN_PROGRESS } else { 0 };
        match stored {
            Some((end, under_prefix)) => self.logs.push(Stored {
                end,
                layout: input.layout,
                flags: in_progress | if under_prefix { UNDER_PREFIX } else { 0 },
            }),
            None => {
                self.names.truncate(start);
                self.logs.push(Stored {
                    // Every earlier end fitted, so this one does.
                    end: start as u32,
                    layout: input.layout,
                    flags: in_progress | WHOLE,
                });
                self.whole.push((self.logs.len() - 1, input));
            }
        }
    }

    /// Appends `input`'s names if they give back its files exactly; whether its name was stored
    /// after the prefix, or `None` (and some names appended) if it must be kept whole.
    fn push_names(&mut self, input: &LogInput) -> Option<bool> {
        let plain = input._extracted.is_none()
            && input.notes.is_empty()
            && input.skipped.is_empty()
            && input.layout != Layout::Stdin
            && !input.parts.is_empty()
            && !input.display.contains('\0');
        if !plain {
            return None;
        }
        let under_prefix = match input.display.strip_prefix(&self.prefix) {
            Some(rest) if !rest.is_empty() => {
                self.names.push_str(rest);
                true
            }
            _ => {
                self.names.push_str(&input.display);
                false
            }
        };
        let at_its_name = |part: &Part| {
            part.file()
                .is_some_and(|p| p.as_os_str() == OsStr::new(&part.display))
        };
        if let [only] = input.parts.as_slice()
            && only.display == input.display
        {
            return at_its_name(only).then_some(under_prefix);
        }
        let folder = folder_prefix(&input.display);
        for part in &input.parts {
            let name = part.display.strip_prefix(&folder)?;
            if name.is_empty() || name.contains('\0') || !at_its_name(part) {
                return None;
            }
            self.names.push('\0');
            self.names.push_str(name);
        }
        Some(under_prefix)
    }

    /// Ends the search: what it passed over goes with the first log, and the spare capacity
    /// of a list kept all night is given back.
    pub(super) fn finish(&mut self, skipped: Vec<String>) {
        self.skipped = skipped;
        self.names.shrink_to_fit();
        self.logs.shrink_to_fit();
        self.whole.shrink_to_fit();
    }

    /// The `i`th log found, as the search made it.
    ///
    /// # Panics
    /// If `i` is not below [`LogList::len`].
    pub fn get(&self, i: usize) -> LogInput {
        let stored = self.logs[i];
        let mut input = if stored.flags & WHOLE != 0 {
            let at = self
                .whole
                .binary_search_by_key(&i, |(at, _)| *at)
                .expect("a log kept whole is in the list of whole logs");
            self.whole[at].1.clone()
        } else {
            self.by_names(i, stored)
        };
        if i == 0 {
            input.skipped = self.skipped.clone();
        }
        input
    }

    fn by_names(&self, i: usize, stored: Stored) -> LogInput {
        let start = if i == 0 {
            0
        } else {
            self.logs[i - 1].end as usize
        };
        let mut names = self.names[start..stored.end as usize].split('\0');
        let name = names.next().unwrap_or_default();
        let display = if stored.flags & UNDER_PREFIX != 0 {
            format!("{}{name}", self.prefix)
        } else {
            name.to_string()
        };
        let folder = folder_prefix(&display);
        let mut parts: Vec<Part> = names
            .map(|name| {
                let display = format!("{folder}{name}");
                Part {
                    location: Location::File(PathBuf::from(&display)),
                    display,
                }
            })
            .collect();
        if parts.is_empty() {
            parts.push(Part {
                location: Location::File(PathBuf::from(&display)),
                display: display.clone(),
            });
        }
        LogInput {
            display,
            layout: stored.layout,
            parts,
            in_progress: stored.flags & IN_PROGRESS != 0,
            notes: Vec::new(),
            skipped: Vec::new(),
            _extracted: None,
        }
    }

    /// Every log, as the search made it.
    pub fn into_inputs(self) -> Vec<LogInput> {
        (0..self.len()).map(|i| self.get(i)).collect()
    }
}

/// How the names of the files inside the log folder `display` begin, as the search writes them.
fn folder_prefix(display: &str) -> String {
    format!("{}/", display.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// Every committed log, in every layout (single files, rolling and Databricks folders, logs
    /// cut short with notes, archives), comes back from the list as the search made it.
    #[test]
    fn every_log_comes_back_as_found() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/logs");
        for searched in [root.display().to_string(), format!("{}/", root.display())] {
            let list = super::super::discover_with(&searched, None).unwrap();
            assert!(list.len() > 50, "{} logs", list.len());
            for (i, pushed) in list.pushed.iter().enumerate() {
                let mut expected = pushed.clone();
                if i == 0 {
                    expected.skipped = list.skipped.clone();
                }
                assert_eq!(
                    format!("{:?}", list.get(i)),
                    format!("{expected:?}"),
                    "log {i}"
                );
            }
            let layouts = |layout| list.logs.iter().filter(|s| s.layout == layout).count();
            assert!(layouts(Layout::Rolling) > 0 && layouts(Layout::Databricks) > 0);
            // Only the logs unpacked from the two archives or with notes are kept whole...
            let whole_but_plain: Vec<&str> = list
                .whole
                .iter()
                .filter(|(_, l)| l._extracted.is_none() && l.notes.is_empty())
                .map(|(_, l)| l.display.as_str())
                .collect();
            assert!(whole_but_plain.is_empty(), "{whole_but_plain:?}");
            assert!(
                list.whole.len() < list.len() / 4,
                "{} whole",
                list.whole.len()
            );
            // ...and the rest by their names after the searched folder.
            let relative = list.logs.iter().filter(|s| s.flags & UNDER_PREFIX != 0);
            assert_eq!(relative.count(), list.len() - list.whole.len());
            assert!(!list.names.contains(&*root.display().to_string()));
        }
    }

    /// A file named directly is its own name, not under any folder.
    #[test]
    fn a_log_named_directly_keeps_its_whole_name() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/logs/multi");
        let file = root.join("local-1796049570994.zstd").display().to_string();
        let list = super::super::discover_with(&file, None).unwrap();
        assert_eq!(list.len(), 1);
        let input = list.get(0);
        assert_eq!(input.display, file);
        assert_eq!(input.parts[0].file(), Some(Path::new(&file)));
        assert!(list.whole.is_empty());
    }
}
