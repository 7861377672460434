//! Which files the server may read: only those inside the folders given with `--root` and the
//! folders the client names as its MCP roots. A path is checked as written (so `../` cannot
//! climb out), then with every link resolved (so a link cannot point out), and every link in
//! a folder it names is checked too, because finding logs in a folder follows links.

use std::path::{Component, Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// The folders that may be read.
pub struct Roots {
    /// From `--root`, canonical.
    fixed: Vec<PathBuf>,
    /// Remote prefixes (`s3://bucket/logs/`) that may be read; none unless given.
    remote: Vec<String>,
    client: Mutex<ClientRoots>,
    changed: Condvar,
}

#[derive(Default)]
struct ClientRoots {
    roots: Vec<PathBuf>,
    /// A `roots/list` request to the client is unanswered: a call waits a moment for it.
    pending: bool,
}

/// How long a call waits for the client's answer to `roots/list` before going on without it.
const ROOTS_WAIT: Duration = Duration::from_secs(3);

/// Links followed and entries looked at when checking a folder's links; a larger folder is
/// refused rather than read unchecked.
const MAX_ENTRIES: usize = 200_000;
/// As deep as finding logs goes (`sparkdiag_eventlog`'s walk stops at 12).
const MAX_DEPTH: usize = 13;

impl Roots {
    /// `dirs` are the `--root` folders; each must exist.
    pub fn new(dirs: &[PathBuf]) -> Result<Roots, String> {
        let mut fixed = Vec::new();
        for dir in dirs {
            let canonical = dir
                .canonicalize()
                .map_err(|e| format!("--root {}: {e}", dir.display()))?;
            if !canonical.is_dir() {
                return Err(format!("--root {}: not a folder", dir.display()));
            }
            fixed.push(canonical);
        }
        Ok(Roots {
            fixed,
            remote: Vec::new(),
            client: Mutex::new(ClientRoots::default()),
            changed: Condvar::new(),
        })
    }

    /// Also these remote prefixes (`--allow-prefix`), each a folder: `s3://b/logs` allows
    /// `s3://b/logs/…`, not `s3://b/logs-other`.
    pub fn allowing_remote(mut self, prefixes: Vec<String>) -> Roots {
        self.remote = prefixes
            .into_iter()
            .map(|p| format!("{}/", p.trim_end_matches('/')))
            .collect();
        self
    }

    /// `None` when `path` is not a URL (a local path, for [`Roots::resolve`]); else the URL
    /// when it is under an allowed prefix, or why it may not be read.
    pub fn remote(&self, path: &str) -> Option<Result<String, String>> {
        let (scheme, rest) = path.split_once("://")?;
        // A file URL names a local file: the roots decide, as for any path.
        if scheme.eq_ignore_ascii_case("file")
            || scheme.len() < 2
            || !scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
        {
            return None;
        }
        if self.remote.is_empty() {
            return Some(Err(format!(
                "{scheme}://…: this server reads no remote logs; start it with --allow-prefix {scheme}://BUCKET/PREFIX/ to allow some"
            )));
        }
        let climbs = rest
            .split('/')
            .any(|segment| segment == ".." || segment == ".");
        let folder = format!("{}/", path.trim_end_matches('/'));
        if climbs || !self.remote.iter().any(|p| folder.starts_with(p.as_str())) {
            return Some(Err(format!(
                "{}: outside the remote prefixes this server may read ({})",
                path.split(['?', '#']).next().unwrap_or_default(),
                self.remote.join(", ")
            )));
        }
        Some(Ok(path.to_string()))
    }

    pub fn expect_client_roots(&self) {
        self.client
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .pending = true;
    }

    /// The client's roots (`file://` URIs), replacing any it named before. Roots that do not
    /// exist or are not `file://` are left out, and named in the returned notes.
    pub fn set_client_roots(&self, uris: &[String]) -> Vec<String> {
        let mut notes = Vec::new();
        let mut roots = Vec::new();
        for uri in uris {
            let Some(path) = file_uri_path(uri) else {
                notes.push(format!("root {uri}: not a file:// URI, left out"));
                continue;
            };
            match path.canonicalize() {
                Ok(p) if p.is_dir() => roots.push(p),
                Ok(_) => notes.push(format!("root {uri}: not a folder, left out")),
                Err(e) => notes.push(format!("root {uri}: {e}, left out")),
            }
        }
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        client.roots = roots;
        client.pending = false;
        self.changed.notify_all();
        notes
    }

    /// The client did not answer `roots/list` (or answered with an error).
    pub fn client_roots_failed(&self) {
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        client.pending = false;
        self.changed.notify_all();
    }

    /// Every folder that may be read now.
    pub fn all(&self) -> Vec<PathBuf> {
        let mut client = self.client.lock().unwrap_or_else(|e| e.into_inner());
        if client.pending {
            client = self
                .changed
                .wait_timeout_while(client, ROOTS_WAIT, |c| c.pending)
                .map(|(guard, _)| guard)
                .unwrap_or_else(|e| e.into_inner().0);
        }
        let mut all = self.fixed.clone();
        all.extend(client.roots.iter().cloned());
        all
    }

    /// The canonical path `path` names, when it lies inside a root and so does everything
    /// it links to. A relative path is taken from the first root.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        let roots = self.all();
        if roots.is_empty() {
            return Err(
                "no folder may be read: start the server with --root FOLDER (or have the client send its MCP roots)"
                    .into(),
            );
        }
        let named = file_uri_path(path).unwrap_or_else(|| PathBuf::from(path));
        let absolute = if named.is_absolute() {
            named
        } else {
            roots[0].join(named)
        };
        let outside = || {
            format!(
                "{path}: outside the folders this server may read ({}); it reads only under --root and the client's roots",
                roots
                    .iter()
                    .map(|r| r.display().to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        // As written first: `..` that climbs out is refused before anything is looked up,
        // so a refusal says nothing about whether the file exists.
        let lexical = normalize(&absolute);
        if !roots.iter().any(|r| lexical.starts_with(r)) && !lexically_inside(&lexical, &roots) {
            return Err(outside());
        }
        let canonical = absolute
            .canonicalize()
            .map_err(|e| format!("{path}: cannot open ({e})"))?;
        if !inside(&canonical, &roots) {
            return Err(format!(
                "{} (it is a link to {})",
                outside(),
                canonical.display()
            ));
        }
        if canonical.is_dir() {
            check_links(&canonical, &roots, path)?;
        }
        Ok(canonical)
    }

    /// `path` (a file the log search found) is inside a root or under `also` (the folder
    /// archives are unpacked into).
    pub fn check_found(&self, path: &Path, also: &Path) -> Result<(), String> {
        let canonical = path
            .canonicalize()
            .map_err(|e| format!("{}: cannot open ({e})", path.display()))?;
        if canonical.starts_with(also) || inside(&canonical, &self.all()) {
            Ok(())
        } else {
            Err(format!(
                "{}: outside the folders this server may read (reached through a link)",
                path.display()
            ))
        }
    }
}

fn inside(path: &Path, roots: &[PathBuf]) -> bool {
    roots.iter().any(|r| path.starts_with(r))
}

/// A root given through a link (`/tmp` on macOS) is canonical, but a path written under the
/// link's own name is not yet: compare it once its existing prefix is resolved.
fn lexically_inside(lexical: &Path, roots: &[PathBuf]) -> bool {
    let mut prefix = lexical.to_path_buf();
    let mut rest = Vec::new();
    while !prefix.exists() {
        match (prefix.file_name(), prefix.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name.to_os_string());
                prefix = parent.to_path_buf();
            }
            _ => return false,
        }
    }
    let Ok(mut resolved) = prefix.canonicalize() else {
        return false;
    };
    for name in rest.iter().rev() {
        resolved.push(name);
    }
    inside(&resolved, roots)
}

/// `path` with `.` and `..` taken out, without looking at the disk.
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Every link under `dir` points inside the roots: the log search follows links.
fn check_links(dir: &Path, roots: &[PathBuf], named: &str) -> Result<(), String> {
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    let mut visited = std::collections::HashSet::new();
    while let Some((folder, depth)) = stack.pop() {
        if depth > MAX_DEPTH || !visited.insert(folder.clone()) {
            continue;
        }
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > MAX_ENTRIES {
                return Err(format!(
                    "{named}: more than {MAX_ENTRIES} entries to check; name a smaller folder"
                ));
            }
            let path = entry.path();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if kind.is_symlink() {
                if let Ok(target) = path.canonicalize() {
                    if !inside(&target, roots) {
                        return Err(format!(
                            "{named}: {} is a link to {}, outside the folders this server may read; refused",
                            path.display(),
                            target.display()
                        ));
                    }
                    if target.is_dir() {
                        stack.push((target, depth + 1));
                    }
                }
            } else if kind.is_dir() {
                stack.push((path, depth + 1));
            }
        }
    }
    Ok(())
}

/// The path of a `file://` URI (percent-escapes decoded), or `None` for anything else.
pub fn file_uri_path(uri: &str) -> Option<PathBuf> {
    let rest = uri.strip_prefix("file://")?;
    // `file://localhost/x` and `file:///x` both name `/x`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?, 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_decoded() {
        assert_eq!(
            file_uri_path("file:///home/me/spark%20logs"),
            Some(PathBuf::from("/home/me/spark logs"))
        );
        assert_eq!(file_uri_path("https://example.com/x"), None);
    }

    #[test]
    fn dot_dot_links_and_absolute_paths_out_of_a_root_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("logs")).unwrap();
        std::fs::write(root.join("logs/app"), "x").unwrap();
        std::fs::write(tmp.path().join("secret"), "x").unwrap();
        let roots = Roots::new(std::slice::from_ref(&root)).unwrap();
        assert!(roots.resolve("logs/app").is_ok());
        assert!(roots.resolve("../secret").unwrap_err().contains("outside"));
        assert!(
            roots
                .resolve("/etc/passwd")
                .unwrap_err()
                .contains("outside")
        );
        assert!(
            roots
                .resolve("logs/../../secret")
                .unwrap_err()
                .contains("outside")
        );
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(tmp.path().join("secret"), root.join("link")).unwrap();
            assert!(
                roots
                    .resolve("link")
                    .unwrap_err()
                    .contains("it is a link to")
            );
            // A folder holding a link out is refused as a whole, since the search follows links.
            assert!(roots.resolve(".").unwrap_err().contains("is a link to"));
        }
    }

    /// Remote logs are read only under a prefix given: none by default, and a prefix is a
    /// folder (no sibling that shares its first letters, no `..` out of it).
    #[test]
    fn remote_paths_are_read_only_under_an_allowed_prefix() {
        let tmp = tempfile::tempdir().unwrap();
        let local = Roots::new(&[tmp.path().to_path_buf()]).unwrap();
        assert!(local.remote("/var/log/app-1").is_none());
        assert!(local.remote("file:///var/log/app-1").is_none());
        let refused = local.remote("s3://bucket/logs/app-1").unwrap().unwrap_err();
        assert!(refused.contains("--allow-prefix"), "{refused}");
        let allowed = Roots::new(&[tmp.path().to_path_buf()])
            .unwrap()
            .allowing_remote(vec!["s3://bucket/logs".into()]);
        assert_eq!(
            allowed.remote("s3://bucket/logs/app-1").unwrap().unwrap(),
            "s3://bucket/logs/app-1"
        );
        assert!(allowed.remote("s3://bucket/logs").unwrap().is_ok());
        for outside in [
            "s3://bucket/logs-other/app-1",
            "s3://bucket/logs/../secret/app",
            "gs://bucket/logs/app-1",
        ] {
            assert!(allowed.remote(outside).unwrap().is_err(), "{outside}");
        }
    }
}
