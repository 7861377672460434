//! `analyze --open`: the HTML page in a file of its own, shown in the user's browser.

use std::path::{Path, PathBuf};

/// Writes `html` to a new file under the system's temporary folder and opens it in the browser:
/// `$BROWSER` (a command, which gets the file's path), else the system's opener. The file is
/// kept: the browser reads it after this process has ended. Gives the file's path.
pub fn open(html: &str) -> std::io::Result<PathBuf> {
    let dir = std::env::temp_dir().join("sparkdiag-reports");
    std::fs::create_dir_all(&dir)?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let file = dir.join(format!("report-{}-{stamp}.html", std::process::id()));
    std::fs::write(&file, html)?;
    launch(&file, &browsers())?;
    Ok(file)
}

/// The commands to try: `$BROWSER`'s, else the system's opener.
fn browsers() -> Vec<String> {
    match std::env::var("BROWSER") {
        // $BROWSER may list several commands separated by ':' (the convention xdg-utils read).
        Ok(list) if !list.trim().is_empty() => list.split(':').map(str::to_string).collect(),
        _ if cfg!(target_os = "macos") => vec!["open".into()],
        _ if cfg!(windows) => vec!["explorer".into()],
        _ => vec!["xdg-open".into()],
    }
}

/// Each of `candidates` (a program and its arguments, `%s` standing for the file, else the file
/// last) until one succeeds; the error names every one tried and where the page is.
fn launch(file: &Path, candidates: &[String]) -> std::io::Result<()> {
    let mut tried = Vec::new();
    for command in candidates {
        let mut words = command.split_whitespace();
        let Some(program) = words.next() else {
            continue;
        };
        let args: Vec<String> = words
            .map(|w| w.replace("%s", &file.display().to_string()))
            .collect();
        let mut cmd = std::process::Command::new(program);
        cmd.args(&args);
        if !command.contains("%s") {
            cmd.arg(file);
        }
        cmd.stdin(std::process::Stdio::null());
        match cmd.status() {
            Ok(status) if status.success() => return Ok(()),
            Ok(status) => tried.push(format!("{program} ({status})")),
            Err(e) => tried.push(format!("{program} ({e})")),
        }
    }
    Err(std::io::Error::other(format!(
        "could not open a browser (tried {}); the report is in {} (set BROWSER to choose one)",
        tried.join(", "),
        file.display()
    )))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn the_first_browser_that_succeeds_opens_the_page_and_failures_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let page = dir.path().join("report.html");
        let copy = dir.path().join("copy.html");
        std::fs::write(&page, "<html></html>").unwrap();
        // `false` fails, then `cp %s COPY` is the browser that works.
        let copying = format!("cp %s {}", copy.display());
        launch(&page, &["false".into(), copying]).unwrap();
        assert_eq!(std::fs::read_to_string(&copy).unwrap(), "<html></html>");
        let err = launch(&page, &["/nonexistent/browser".into()]).unwrap_err();
        let message = err.to_string();
        assert!(message.starts_with("could not open a browser (tried /nonexistent/browser ("));
        assert!(message.contains(&page.display().to_string()), "{message}");
    }
}
