//! The server's own pages: upload and list, progress, errors, and the bar above a report.
//! Every text that came from a client or a log goes through [`escape`].

use std::fmt::Write;
use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use axum::http::StatusCode;

use crate::store::{Job, State};

/// What every page says about the server itself.
pub struct Site<'a> {
    /// The address, when it is not loopback.
    pub shared: Option<SocketAddr>,
    pub data_dir: &'a Path,
    pub keep: Duration,
    pub max_upload: u64,
    /// `serve --redact`: every report is redacted, and the form says so instead of asking.
    pub redact_all: bool,
}

const STYLE: &str = r#"
:root { --ink: #1d2330; --muted: #5d6678; --rule: #d9dde5; --accent: #2456a6; --bad: #a4262c; }
* { box-sizing: border-box; }
body { font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--ink);
       margin: 0; background: #f6f7f9; }
main { max-width: 980px; margin: 0 auto; padding: 24px 28px 48px; }
h1 { font-size: 24px; margin: 8px 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; }
p.lead { color: var(--muted); margin: 0 0 20px; }
a { color: var(--accent); }
.shared { background: #fff4d6; border-bottom: 1px solid #e8cf80; padding: 8px 28px; }
.drop { display: block; border: 2px dashed #9aa6bb; border-radius: 10px; background: #fff;
        padding: 36px 24px; text-align: center; cursor: pointer; }
.drop.over { border-color: var(--accent); background: #eef3fc; }
.drop strong { display: block; font-size: 18px; margin-bottom: 6px; }
.drop input { margin: 14px 0 4px; }
button { font: inherit; padding: 7px 18px; border-radius: 6px; border: 1px solid var(--accent);
         background: var(--accent); color: #fff; cursor: pointer; }
.small { color: var(--muted); font-size: 13px; }
progress { width: 100%; height: 14px; margin-top: 12px; }
table { border-collapse: collapse; width: 100%; background: #fff; }
th, td { text-align: left; padding: 7px 10px; border-bottom: 1px solid var(--rule);
         vertical-align: top; }
th { font-size: 13px; color: var(--muted); font-weight: 600; }
td.when { white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.state-failed { color: var(--bad); }
.box { background: #fff; border: 1px solid var(--rule); border-radius: 8px; padding: 18px 22px; }
.error h1 { color: var(--bad); }
.privacy { margin-top: 40px; }
.privacy li { margin: 4px 0; }
code { font-size: 13px; background: #eceef2; padding: 1px 4px; border-radius: 3px; }
form.diff select { max-width: 360px; }
"#;

pub use sparkdiag_report::format::escape;
use sparkdiag_report::format::{duration, human_bytes};

/// `n` bytes for people: 1.5 KiB, 2.0 GiB.
pub fn bytes(n: u64) -> String {
    human_bytes(i64::try_from(n).unwrap_or(i64::MAX))
}

/// The `--keep` setting written back in the unit it was most likely given in (`1d` as `1 day`):
/// a promise to the uploader, read as a setting, where a measured time uses `format::duration`.
fn period(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{} ms", d.as_millis()),
        s if s % 86400 == 0 => plural(s / 86400, "day"),
        s if s % 3600 == 0 => plural(s / 3600, "hour"),
        s if s % 60 == 0 => plural(s / 60, "minute"),
        s => plural(s, "second"),
    }
}

fn plural(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("1 {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

fn head(out: &mut String, site: &Site, title: &str, refresh: bool) {
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n{}\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        if refresh {
            "<meta http-equiv=\"refresh\" content=\"1\">\n"
        } else {
            ""
        },
        escape(title)
    );
    shared_banner(out, site);
    out.push_str("<main>\n");
}

fn shared_banner(out: &mut String, site: &Site) {
    if let Some(addr) = site.shared {
        let _ = writeln!(
            out,
            "<div class=\"shared\"><strong>Shared server.</strong> It listens on {}: anyone who \
             can reach that address can upload logs and read every report listed here.</div>",
            escape(&addr.to_string())
        );
    }
}

fn foot(out: &mut String) {
    out.push_str("</main>\n</body>\n</html>\n");
}

/// The upload form (a plain HTML form; the script only adds drag and drop and a progress bar),
/// the recent reports, the diff form and what the server promises.
pub fn index(site: &Site, jobs: &[Job]) -> String {
    let mut out = String::new();
    head(
        &mut out,
        site,
        "sparkdiag: analyse a Spark event log",
        false,
    );
    let _ = write!(
        out,
        "<h1>Analyse a Spark event log</h1>\n\
         <p class=\"lead\">Drop a log here and get sparkdiag's report: what slowed or killed the \
         application, ranked by the time fixing it would save. The file is analysed on this \
         machine and sent nowhere.</p>\n\
         <form id=\"upload\" method=\"post\" action=\"/upload\" enctype=\"multipart/form-data\">\n\
         {}\
         <label class=\"drop\" id=\"drop\"><strong>Drop an event log here, or choose it</strong>\
         <span class=\"small\">One log of any codec (plain, zstd, lz4, snappy, lzf, gzip), or a \
         .zip / .tar.gz of a Databricks cluster-log folder or a rolling <code>eventlog_v2_…</code> \
         folder. Up to {}.</span><br>\n\
         <input type=\"file\" name=\"log\" id=\"file\" required></label>\n\
         <p><button type=\"submit\">Analyse</button> \
         <span class=\"small\" id=\"sent\"></span></p>\n\
         <progress id=\"bar\" max=\"1\" value=\"0\" hidden></progress>\n\
         </form>\n",
        redact_choice(site),
        bytes(site.max_upload)
    );
    reports_table(&mut out, jobs);
    diff_form(&mut out, jobs);
    let _ = write!(
        out,
        "<section class=\"privacy small\"><h2>Privacy</h2><ul>\n\
         <li>Nothing leaves this machine: uploads are written to <code>{}</code> and analysed \
         here; the server never fetches anything from the network, and its pages load nothing \
         from elsewhere.</li>\n\
         <li>{}</li>\n\
         <li>Uploads and their reports are deleted {} after the upload.</li>\n\
         <li>The same file uploaded twice is recognised by its SHA-256 and answered from the \
         first analysis.</li></ul></section>\n",
        escape(&site.data_dir.display().to_string()),
        match site.shared {
            None => "It listens on this machine's loopback address only: other machines cannot reach it.".to_string(),
            Some(addr) => format!(
                "It is shared: it listens on {}, so anyone who can reach that address can use it.",
                escape(&addr.to_string())
            ),
        },
        period(site.keep)
    );
    out.push_str(UPLOAD_SCRIPT);
    foot(&mut out);
    out
}

/// The form's redaction: a checkbox, or the server's word that every report is redacted. The
/// checkbox comes before the file in the form, so that the server reads it before the upload.
fn redact_choice(site: &Site) -> &'static str {
    if site.redact_all {
        "<p class=\"small\">Every report here is <strong>redacted</strong>: application names \
         and ids, hosts, IP addresses, users, e-mail addresses, paths and SQL literals are \
         replaced by pseudonyms such as <code>host-3f9a0c2e71</code>.</p>\n"
    } else {
        "<p><label><input type=\"checkbox\" name=\"redact\" value=\"on\"> Redact the report \
         for sharing: application names and ids, hosts, IP addresses, users, e-mail addresses, \
         paths and SQL literals replaced by pseudonyms</label></p>\n"
    }
}

/// Drag and drop onto the form, and the upload sent with a progress bar. Without it, the form
/// posts as any HTML form does.
const UPLOAD_SCRIPT: &str = r#"<script>
(function () {
  var form = document.getElementById('upload'), drop = document.getElementById('drop'),
      file = document.getElementById('file'), bar = document.getElementById('bar'),
      sent = document.getElementById('sent');
  ['dragenter', 'dragover'].forEach(function (e) {
    drop.addEventListener(e, function (ev) { ev.preventDefault(); drop.classList.add('over'); });
  });
  ['dragleave', 'drop'].forEach(function (e) {
    drop.addEventListener(e, function () { drop.classList.remove('over'); });
  });
  drop.addEventListener('drop', function (ev) {
    ev.preventDefault();
    if (ev.dataTransfer.files.length) { file.files = ev.dataTransfer.files; send(); }
  });
  form.addEventListener('submit', function (ev) { ev.preventDefault(); send(); });
  function send() {
    if (!file.files.length) { return; }
    var xhr = new XMLHttpRequest();
    xhr.open('POST', form.action);
    bar.hidden = false;
    xhr.upload.onprogress = function (ev) {
      if (ev.lengthComputable) {
        bar.value = ev.loaded / ev.total;
        sent.textContent = 'Uploading: ' + Math.round(100 * ev.loaded / ev.total) + '%';
      }
    };
    xhr.upload.onload = function () { sent.textContent = 'Uploaded; looking for event logs…'; };
    xhr.onload = function () {
      if (xhr.status < 400) { location.href = xhr.responseURL; return; }
      document.open(); document.write(xhr.responseText); document.close();
    };
    xhr.onerror = function () { sent.textContent = 'The upload failed: the server closed the connection.'; };
    xhr.send(new FormData(form));
  }
})();
</script>
"#;

fn reports_table(out: &mut String, jobs: &[Job]) {
    out.push_str("<h2>Recent reports</h2>\n");
    if jobs.is_empty() {
        out.push_str("<p class=\"small\">None yet.</p>\n");
        return;
    }
    out.push_str(
        "<table>\n<tr><th>Uploaded file</th><th>Application</th><th>Top finding</th>\
         <th class=\"num\">Findings</th><th class=\"num\">Size</th><th>Uploaded</th></tr>\n",
    );
    let now = crate::store::now_ms();
    for job in jobs {
        let redacted = if job.redacted {
            " <span class=\"small\">redacted</span>"
        } else {
            ""
        };
        let link = format!(
            "<a href=\"/r/{}\">{}</a>{redacted}",
            job.id,
            escape(&job.file_name)
        );
        let (app, top, findings) = match &job.state {
            State::Done { apps } => (
                apps.iter()
                    .map(|a| escape(&a.name))
                    .collect::<Vec<_>>()
                    .join("<br>"),
                apps.iter()
                    .map(|a| escape(a.top.as_deref().unwrap_or("no findings")))
                    .collect::<Vec<_>>()
                    .join("<br>"),
                apps.iter().map(|a| a.findings).sum::<usize>().to_string(),
            ),
            State::Failed { message, .. } => (
                "<span class=\"state-failed\">refused</span>".into(),
                format!(
                    "<span class=\"state-failed\">{}</span>",
                    escape(&first_words(message))
                ),
                String::new(),
            ),
            State::Queued => (
                "<em>waiting for a worker</em>".into(),
                String::new(),
                String::new(),
            ),
            State::Running { .. } => ("<em>analysing…</em>".into(), String::new(), String::new()),
        };
        let _ = writeln!(
            out,
            "<tr><td>{link}</td><td>{app}</td><td>{top}</td><td class=\"num\">{findings}</td>\
             <td class=\"num\">{}</td><td class=\"when\">{} ago</td></tr>",
            bytes(job.bytes),
            duration(
                i64::try_from(now.saturating_sub(job.uploaded_ms).max(1000)).unwrap_or(i64::MAX)
            )
        );
    }
    out.push_str("</table>\n");
}

/// A refusal's message, short enough for a table cell.
fn first_words(message: &str) -> String {
    let mut short: String = message.chars().take(160).collect();
    if short.len() < message.len() {
        short.push('…');
    }
    short
}

fn diff_form(out: &mut String, jobs: &[Job]) {
    let done: Vec<&Job> = jobs
        .iter()
        .filter(|j| matches!(&j.state, State::Done { apps } if apps.len() == 1))
        .collect();
    if done.len() < 2 {
        return;
    }
    let options = |selected: usize| {
        done.iter()
            .enumerate()
            .map(|(i, j)| {
                let app = match &j.state {
                    State::Done { apps } => apps[0].name.as_str(),
                    _ => "",
                };
                format!(
                    "<option value=\"{}\"{}>{} ({})</option>",
                    j.id,
                    if i == selected { " selected" } else { "" },
                    escape(&j.file_name),
                    escape(app)
                )
            })
            .collect::<String>()
    };
    let _ = write!(
        out,
        "<h2>Compare two runs</h2>\n\
         <form class=\"diff\" method=\"get\" action=\"/diff\">Before <select name=\"before\">{}</select> \
         after <select name=\"after\">{}</select> <button type=\"submit\">Compare</button></form>\n\
         <p class=\"small\">What changed between the runs, matched work, and whether their \
         outputs agree, as <code>sparkdiag diff</code> shows it.</p>\n",
        options(1),
        options(0)
    );
}

/// A job still queued or running; the page reloads itself every second, without script.
pub fn progress(site: &Site, job: &Job) -> String {
    let mut out = String::new();
    head(
        &mut out,
        site,
        &format!("Analysing {}", job.file_name),
        true,
    );
    let step = match &job.state {
        State::Queued => "Waiting for a free worker…".to_string(),
        State::Running { step } => format!("{}…", capitalised(step)),
        _ => String::new(),
    };
    let _ = write!(
        out,
        "<h1>Analysing {}</h1>\n<div class=\"box\"><p>{}</p>\n<progress></progress>\n\
         <p class=\"small\">{} received. This page reloads itself and shows the report when it is \
         ready. <a href=\"/\">All reports</a></p></div>\n",
        escape(&job.file_name),
        escape(&step),
        bytes(job.bytes)
    );
    foot(&mut out);
    out
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

pub fn error(site: &Site, status: StatusCode, message: &str) -> String {
    let mut out = String::new();
    let what = status.canonical_reason().unwrap_or("Error");
    head(
        &mut out,
        site,
        &format!("{} {what}", status.as_u16()),
        false,
    );
    let _ = write!(
        out,
        "<div class=\"error\"><h1>{} {}</h1>\n<div class=\"box\"><p>{}</p></div>\n\
         <p><a href=\"/\">Upload another file</a></p></div>\n",
        status.as_u16(),
        escape(what),
        escape(message)
    );
    foot(&mut out);
    out
}

const BAR_STYLE: &str = "font:14px/1.5 system-ui,sans-serif;background:#1d2330;color:#fff;\
    padding:8px 28px;display:flex;gap:18px;flex-wrap:wrap";
const BAR_LINK: &str = "color:#cfe0ff";

/// The report page as `analyze --format html` writes it, with a bar on top linking back to the
/// list and to the report's JSON and Markdown.
pub fn framed_report(site: &Site, job: &Job, report: &str) -> String {
    let mut bar = String::new();
    shared_banner(&mut bar, site);
    let _ = writeln!(
        bar,
        "<nav style=\"{BAR_STYLE}\"><a style=\"{BAR_LINK}\" href=\"/\">← All reports</a>\
         <span>{}</span><a style=\"{BAR_LINK}\" href=\"/r/{id}/report.json\">JSON</a>\
         <a style=\"{BAR_LINK}\" href=\"/r/{id}/report.md\">Markdown</a></nav>",
        escape(&job.file_name),
        id = job.id
    );
    after_body(report, &bar)
}

pub fn framed_diff(site: &Site, page: &str) -> String {
    let mut bar = String::new();
    shared_banner(&mut bar, site);
    let _ = writeln!(
        bar,
        "<nav style=\"{BAR_STYLE}\"><a style=\"{BAR_LINK}\" href=\"/\">← All reports</a></nav>"
    );
    after_body(page, &bar)
}

/// `page` with `insert` right after its `<body>` tag (at the start when it has none).
fn after_body(page: &str, insert: &str) -> String {
    let at = page
        .find("<body")
        .and_then(|start| page[start..].find('>').map(|end| start + end + 1))
        .unwrap_or(0);
    let mut out = String::with_capacity(page.len() + insert.len() + 1);
    out.push_str(&page[..at]);
    out.push('\n');
    out.push_str(insert);
    out.push_str(&page[at..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_read_as_people_write_them() {
        assert_eq!(bytes(2 << 30), "2.0 GiB");
        assert_eq!(period(Duration::from_secs(86400)), "1 day");
        assert_eq!(period(Duration::from_secs(7200)), "2 hours");
        assert_eq!(
            escape("<a href='x'>&\"</a>"),
            "&lt;a href=&#39;x&#39;&gt;&amp;&quot;&lt;/a&gt;"
        );
    }

    #[test]
    fn the_bar_goes_inside_the_body() {
        let page = "<html><head><title>t</title></head>\n<body>\n<main>x</main></body></html>";
        let framed = after_body(page, "<nav>bar</nav>");
        assert!(
            framed.contains("<body>\n<nav>bar</nav>\n<main>x"),
            "{framed}"
        );
        assert_eq!(after_body("plain", "<nav>"), "\n<nav>plain");
    }
}
