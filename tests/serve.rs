//! `sparkdiag serve` over loopback: every promise of the upload page, checked with raw HTTP
//! requests (so malformed and cut-off bodies can be sent), and once in headless Chromium.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use sparkdiag_serve::{Config, Server};

use crate::util::{real_plain_log, testdata};

/// A server on a free loopback port with its data folder in a new temporary folder; `tweak`
/// changes the configuration first.
fn server(tweak: impl FnOnce(&mut Config)) -> (tempfile::TempDir, Server) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path().join("data"));
    config.bind = "127.0.0.1:0".parse().unwrap();
    config.workers = 2;
    tweak(&mut config);
    let server = sparkdiag_serve::start(config).unwrap_or_else(|e| panic!("{e}"));
    (dir, server)
}

pub(crate) struct Reply {
    pub status: u16,
    pub head: String,
    pub body: String,
}

impl Reply {
    pub fn header(&self, name: &str) -> Option<String> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name)
                .then(|| value.trim().to_string())
        })
    }
}

/// Sends `request` as is and reads the whole reply (every request says `Connection: close`).
pub(crate) fn send(addr: SocketAddr, request: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    // The server may answer (413, 503) and close before the whole body is sent.
    let _ = stream.write_all(request);
    read_reply(&mut stream)
}

pub(crate) fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut bytes = Vec::new();
    let _ = stream.read_to_end(&mut bytes);
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no HTTP status in {text:?}"));
    Reply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

pub(crate) fn get(addr: SocketAddr, path: &str) -> Reply {
    send(
        addr,
        format!("GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n").as_bytes(),
    )
}

pub(crate) const BOUNDARY: &str = "sparkdiag-test-boundary-7MA4YWxkTrZu0gW";

/// A multipart/form-data body with one file field `log`.
pub(crate) fn form(file_name: &str, bytes: &[u8]) -> Vec<u8> {
    let mut body = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"log\"; filename=\"{file_name}\"\r\n\
         Content-Type: application/octet-stream\r\n\r\n"
    )
    .into_bytes();
    body.extend_from_slice(bytes);
    body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
    body
}

pub(crate) fn post_head(addr: SocketAddr, length: usize) -> Vec<u8> {
    format!(
        "POST /upload HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nContent-Length: {length}\r\n\r\n"
    )
    .into_bytes()
}

pub(crate) fn upload(addr: SocketAddr, file_name: &str, bytes: &[u8]) -> Reply {
    let body = form(file_name, bytes);
    let mut request = post_head(addr, body.len());
    request.extend_from_slice(&body);
    send(addr, &request)
}

/// The report id an upload was redirected to.
pub(crate) fn id_of(reply: &Reply) -> String {
    assert_eq!(reply.status, 303, "{}\n{}", reply.head, reply.body);
    let location = reply.header("location").unwrap();
    location.strip_prefix("/r/").unwrap().to_string()
}

/// Waits for job `id` to finish, then returns its page.
pub(crate) fn finished(addr: SocketAddr, id: &str) -> Reply {
    let start = Instant::now();
    loop {
        let status = get(addr, &format!("/r/{id}/status"));
        assert_eq!(status.status, 200, "{}", status.body);
        if status.body.contains("\"state\":\"done\"")
            || status.body.contains("\"state\":\"failed\"")
        {
            return get(addr, &format!("/r/{id}"));
        }
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "job {id} did not finish: {}",
            status.body
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every file under `dir`, recursively.
pub(crate) fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            out.extend(files_under(&path));
        } else {
            out.push(path);
        }
    }
    out
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_real_log_becomes_the_analyze_report_with_its_json_and_markdown() {
    let (_dir, server) = server(|_| {});
    let addr = server.addr();
    let path = testdata("logs/patterns/skew-join");
    let path = std::fs::read_dir(&path)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let bytes = std::fs::read(&path).unwrap();
    let name = path.file_name().unwrap().to_str().unwrap();

    let id = id_of(&upload(addr, name, &bytes));
    assert_eq!(
        id,
        sha256_hex(&bytes),
        "reports are named by the upload's SHA-256"
    );
    let page = finished(addr, &id);
    assert_eq!(page.status, 200, "{}", page.body);

    // The same analysis as `sparkdiag analyze`, from the same shared step.
    let config = sparkdiag_rules::Config::default();
    let inputs = sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap();
    let expected =
        sparkdiag_analysis::analyze(&inputs[0], &sparkdiag_analysis::Options::new(&config))
            .unwrap()
            .report;
    let top = &expected.findings[0].finding.title;
    assert!(
        page.body.contains("<h1>sparkdiag-pattern skew-join</h1>"),
        "{}",
        page.body
    );
    // Text in backticks is set as code on the page: the title's words after the last one.
    let words = top.rsplit('`').next().unwrap();
    assert!(
        page.body.contains(&sparkdiag_serve_escape(words)),
        "the top finding {top:?} is on the page"
    );
    assert!(page.body.contains(&format!("href=\"/r/{id}/report.json\"")));

    let json = get(addr, &format!("/r/{id}/report.json"));
    assert_eq!(json.status, 200);
    assert_eq!(
        json.header("content-type").as_deref(),
        Some("application/json")
    );
    let json: serde_json::Value = serde_json::from_str(&json.body).unwrap();
    let codes = |findings: &serde_json::Value| -> Vec<String> {
        findings
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["rule"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        codes(&json["findings"]),
        codes(&serde_json::to_value(&expected).unwrap()["findings"])
    );
    assert_eq!(
        json["source"]["inputs"][0], name,
        "the report names the file as uploaded"
    );
    let markdown = get(addr, &format!("/r/{id}/report.md"));
    assert_eq!(markdown.status, 200);
    assert!(markdown.body.contains(top.as_str()), "{}", markdown.body);

    // The same bytes again, under another name: answered from the first analysis.
    let again = upload(addr, "copy-of-the-log", &bytes);
    assert_eq!(id_of(&again), id);
    let list = get(addr, "/");
    assert_eq!(
        list.body.matches(&format!("href=\"/r/{id}\"")).count(),
        1,
        "one report, listed once"
    );
    // The page is a plain HTML form first: it posts the file the way these tests do.
    assert!(
        list.body.contains(
            "<form id=\"upload\" method=\"post\" action=\"/upload\" enctype=\"multipart/form-data\">"
        ) && list.body.contains("<input type=\"file\" name=\"log\""),
        "{}",
        list.body
    );
}

#[test]
fn a_restarted_server_still_has_its_reports() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let start = || {
        let mut config = Config::new(data.clone());
        config.bind = "127.0.0.1:0".parse().unwrap();
        sparkdiag_serve::start(config).unwrap()
    };
    let first = start();
    let id = id_of(&upload(
        first.addr(),
        "local-1796049337368",
        &real_plain_log(),
    ));
    let before = finished(first.addr(), &id);
    assert_eq!(before.status, 200);
    drop(first);
    // A partial upload left by a killed server is removed on the next start.
    std::fs::write(data.join("incoming/7.part"), b"half an upload").unwrap();
    let second = start();
    let after = get(second.addr(), &format!("/r/{id}"));
    assert_eq!(after.status, 200);
    assert_eq!(after.body, before.body);
    assert!(files_under(&data.join("incoming")).is_empty());
    assert_eq!(
        id_of(&upload(second.addr(), "again", &real_plain_log())),
        id
    );
    drop(second);
    // A server stopped while the analysis ran leaves the upload and no report: the next start
    // analyses it again instead of forgetting it.
    std::fs::remove_dir_all(data.join("reports").join(&id)).unwrap();
    let third = start();
    let again = finished(third.addr(), &id);
    assert_eq!(again.status, 200);
    assert_eq!(again.body, before.body);
    assert!(data.join("reports").join(&id).join("job.json").is_file());
}

/// What the pages write for `text` (the HTML report escapes `'` and `"` too).
fn sparkdiag_serve_escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

#[test]
fn a_rolling_log_in_a_tar_gz_is_unpacked_inside_the_data_folder_only() {
    let (dir, server) = server(|_| {});
    let addr = server.addr();
    let bytes = std::fs::read(testdata(
        "logs/archives/eventlog_v2_local-1796049428891.tar.gz",
    ))
    .unwrap();
    let id = id_of(&upload(
        addr,
        "eventlog_v2_local-1796049428891.tar.gz",
        &bytes,
    ));
    let page = finished(addr, &id);
    assert_eq!(page.status, 200, "{}", page.body);
    assert!(page.body.contains("<h1>"), "a report");
    let outside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, ["data"], "nothing beside the data folder");
    let stray: Vec<_> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(&format!("sparkdiag-archive-{}-", std::process::id()))
        })
        .filter(|e| {
            files_under(&e.path())
                .iter()
                .any(|f| f.to_string_lossy().contains("1796049428891"))
        })
        .collect();
    assert!(
        stray.is_empty(),
        "the archive was unpacked in the system's temporary folder"
    );
}

#[test]
fn an_upload_over_the_cap_is_refused_with_413_before_and_while_it_arrives() {
    let (dir, server) = server(|c| c.max_upload = 64 << 10);
    let addr = server.addr();
    // Declared too large: refused on the headers, before any byte of the body.
    let reply = send(addr, &post_head(addr, 1 << 30));
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert!(
        reply
            .body
            .contains("larger than this server&#39;s limit of 64.0 KiB"),
        "{}",
        reply.body
    );
    // Sent without a length (chunked): refused when the file passes the cap.
    let body = form("big.log", &real_plain_log().repeat(2));
    let mut request = format!(
        "POST /upload HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    for chunk in body.chunks(16 << 10) {
        request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        request.extend_from_slice(chunk);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    let reply = send(addr, &request);
    assert_eq!(reply.status, 413, "{}", reply.body);
    // A field other than the file, sent without a length and without end: stopped at the cap
    // on the whole body.
    let mut request = format!(
        "POST /upload HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: multipart/form-data; boundary={BOUNDARY}\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    .into_bytes();
    let field = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\n{}",
        "x".repeat(200 << 10)
    );
    request.extend_from_slice(format!("{:x}\r\n", field.len()).as_bytes());
    request.extend_from_slice(field.as_bytes());
    request.extend_from_slice(b"\r\n");
    let reply = send(addr, &request);
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert!(
        files_under(&dir.path().join("data")).is_empty(),
        "the refused part is removed: {:?}",
        files_under(&dir.path().join("data"))
    );
    // Under the cap is fine.
    assert_eq!(get(addr, "/").status, 200);
}

#[test]
fn a_zip_bomb_is_refused_with_413_and_leaves_nothing() {
    use zip::write::SimpleFileOptions;
    let (dir, server) = server(|_| {});
    let addr = server.addr();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("app-1", stored).unwrap();
    zip.write_all(&real_plain_log()).unwrap();
    // 100 MiB of zeros in about 100 KB: past the 64 MiB any archive may unpack, and 100 times
    // the archive's size.
    let deflated =
        SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("zeros", deflated).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..100 {
        zip.write_all(&zeros).unwrap();
    }
    let bytes = zip.finish().unwrap().into_inner();
    let reply = upload(addr, "bomb.zip", &bytes);
    assert_eq!(reply.status, 413, "{}", reply.body);
    assert!(reply.body.contains("decompression bomb"), "{}", reply.body);
    assert!(
        reply.body.contains("bomb.zip"),
        "names the upload: {}",
        reply.body
    );
    assert!(
        !reply.body.contains(dir.path().to_str().unwrap()),
        "no paths on disk"
    );
    let data = dir.path().join("data");
    let left: Vec<_> = files_under(&data)
        .into_iter()
        .filter(|f| !f.ends_with("job.json"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
    // The same bomb again is refused from the record of the first, without unpacking.
    assert_eq!(upload(addr, "bomb-again.zip", &bytes).status, 413);
}

/// A tar of the real log plus one hostile member, its name written into the header directly
/// (the tar crate refuses to write `..` itself).
fn tar_with_member(name: &str, kind: tar::EntryType, link: &str) -> Vec<u8> {
    crate::util::tar_with(|builder| {
        let mut header = tar::Header::new_gnu();
        header.set_entry_type(kind);
        header.set_mode(0o644);
        let content: &[u8] = if kind == tar::EntryType::Regular {
            b"planted\n"
        } else {
            b""
        };
        header.set_size(content.len() as u64);
        if !link.is_empty() {
            header.set_link_name(link).unwrap();
        }
        header.as_old_mut().name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_cksum();
        builder.append(&header, content).unwrap();
    })
}

#[test]
fn archives_with_members_outside_links_or_devices_are_refused_with_422() {
    let (dir, server) = server(|_| {});
    let addr = server.addr();
    let planted = format!("{}/planted-by-serve-test", dir.path().display());
    let cases = [
        (
            "slip.tar",
            tar_with_member("../../planted-by-serve-test", tar::EntryType::Regular, ""),
            "its path leads outside the archive",
        ),
        (
            "absolute.tar",
            tar_with_member(&planted, tar::EntryType::Regular, ""),
            "its path leads outside the archive",
        ),
        (
            "link.tar",
            tar_with_member("logs/app-2", tar::EntryType::Symlink, "/etc/passwd"),
            "it is a link",
        ),
        (
            "device.tar",
            tar_with_member("logs/app-3", tar::EntryType::Char, ""),
            "it is a device or pipe",
        ),
    ];
    for (name, bytes, why) in cases {
        let reply = upload(addr, name, &bytes);
        assert_eq!(reply.status, 422, "{name}: {}", reply.body);
        assert!(reply.body.contains(why), "{name}: {}", reply.body);
        assert!(reply.body.contains(name), "{name}: {}", reply.body);
    }
    // A zip-slip member in a zip too.
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    zip.start_file("app-1", options).unwrap();
    zip.write_all(&real_plain_log()).unwrap();
    zip.start_file("../../planted-by-serve-test", options)
        .unwrap();
    zip.write_all(b"planted\n").unwrap();
    let reply = upload(addr, "slip.zip", &zip.finish().unwrap().into_inner());
    assert_eq!(reply.status, 422, "{}", reply.body);

    assert!(!Path::new(&planted).exists());
    let outside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, ["data"], "nothing written beside the data folder");
    let planted_inside: Vec<_> = files_under(&dir.path().join("data"))
        .into_iter()
        .filter(|f| f.to_string_lossy().contains("planted"))
        .collect();
    assert!(planted_inside.is_empty(), "{planted_inside:?}");
    // A file name with a path in it is stored under the upload's own folder.
    let id = id_of(&upload(
        addr,
        "../../../evil/local-1796049337368",
        &real_plain_log(),
    ));
    assert_eq!(finished(addr, &id).status, 200);
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "still only the data folder"
    );
}

#[test]
fn malformed_bodies_cut_and_stalled_uploads_are_answered_and_the_server_goes_on() {
    let (dir, server) = server(|c| c.idle_timeout = Duration::from_millis(500));
    let addr = server.addr();
    // Not multipart at all.
    let reply = send(
        addr,
        format!(
            "POST /upload HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
             Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
        )
        .as_bytes(),
    );
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(reply.body.contains("multipart/form-data"), "{}", reply.body);
    // Multipart in name only: no boundary line ever comes.
    let garbage = b"this is not a multipart body\r\n";
    let mut request = post_head(addr, garbage.len());
    request.extend_from_slice(garbage);
    let reply = send(addr, &request);
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(
        reply.body.contains("malformed") || reply.body.contains("no file"),
        "{}",
        reply.body
    );
    // A form without the file field.
    let other = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n--{BOUNDARY}--\r\n"
    );
    let mut request = post_head(addr, other.len());
    request.extend_from_slice(other.as_bytes());
    let reply = send(addr, &request);
    assert_eq!(reply.status, 400, "{}", reply.body);
    assert!(reply.body.contains("no file"), "{}", reply.body);
    // An empty file.
    assert_eq!(upload(addr, "empty", b"").status, 400);

    // A client that stops mid-upload and hangs up.
    let body = form("cut.log", &real_plain_log());
    let mut stream = TcpStream::connect(addr).unwrap();
    stream.write_all(&post_head(addr, body.len())).unwrap();
    stream.write_all(&body[..body.len() / 2]).unwrap();
    drop(stream);
    // A client that stops mid-upload and stays connected: dropped after the idle limit.
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    stream.write_all(&post_head(addr, body.len())).unwrap();
    stream.write_all(&body[..body.len() / 2]).unwrap();
    let reply = read_reply(&mut stream);
    assert_eq!(reply.status, 408, "{}", reply.body);
    assert!(reply.body.contains("stopped sending"), "{}", reply.body);

    // A client that sends half its headers and stays connected: the connection is closed after
    // the same limit (it would otherwise hold a socket for as long as the client likes).
    let mut stream = TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream
        .write_all(format!("GET / HTTP/1.1\r\nHost: {addr}\r\nX-Slow: ").as_bytes())
        .unwrap();
    let mut answer = Vec::new();
    match stream.read_to_end(&mut answer) {
        Ok(_) => assert!(
            answer.is_empty() || answer.starts_with(b"HTTP/1.1 408"),
            "{}",
            String::from_utf8_lossy(&answer)
        ),
        Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
    }

    // Still serving, and nothing half-written is left.
    let id = id_of(&upload(addr, "local-1796049337368", &real_plain_log()));
    assert_eq!(finished(addr, &id).status, 200);
    let start = Instant::now();
    while !files_under(&dir.path().join("data/incoming")).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "a partial upload was left"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A 503 that says what the server had no room for and when to try again.
fn assert_busy(reply: &Reply, limit: &str) {
    assert_eq!(reply.status, 503, "{}", reply.body);
    assert_eq!(reply.header("retry-after").as_deref(), Some("5"));
    let says = format!("busy ({limit} at once at most)");
    assert!(reply.body.contains(&says), "{}", reply.body);
}

#[test]
fn uploads_beyond_the_limit_get_503_with_retry_after() {
    let (dir, server) = server(|c| {
        c.max_uploads = 1;
        c.idle_timeout = Duration::from_secs(30);
    });
    let addr = server.addr();
    // One upload in progress (stalled) holds the only slot: its file in the incoming folder
    // shows that the server is receiving it.
    let body = form("slow.log", &real_plain_log());
    let sent = 1000;
    let mut slow = TcpStream::connect(addr).unwrap();
    slow.write_all(&post_head(addr, body.len())).unwrap();
    slow.write_all(&body[..sent]).unwrap();
    let start = Instant::now();
    while files_under(&dir.path().join("data/incoming")).is_empty() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the upload never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let reply = upload(addr, "second.log", &real_plain_log());
    assert_busy(&reply, "1 upload");
    // The first one finishes; the slot is free again.
    slow.write_all(&body[sent..]).unwrap();
    slow.set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    let first = read_reply(&mut slow);
    let id = id_of(&first);
    assert_eq!(finished(addr, &id).status, 200);
    let other_log = std::fs::read(testdata("logs/single/zstd/local-1796049355449.zstd")).unwrap();
    assert_eq!(
        upload(addr, "local-1796049355449.zstd", &other_log).status,
        303
    );
}

#[test]
fn an_upload_that_finds_the_analysis_queue_full_gets_503_and_may_be_sent_again() {
    // One worker and no queue: a second analysis has nowhere to wait.
    let (_dir, server) = server(|c| {
        c.workers = 1;
        c.queue = 0;
    });
    let addr = server.addr();
    // Thirty real applications in one archive keep the only worker busy for seconds, far longer
    // than one small upload takes.
    let mut builder = tar::Builder::new(Vec::new());
    for copy in ["a", "b"] {
        builder
            .append_dir_all(copy, testdata("logs/patterns"))
            .unwrap();
    }
    let archive = builder.into_inner().unwrap();
    let first = id_of(&upload(addr, "patterns.tar", &archive));
    let small = std::fs::read(testdata("logs/single/zstd/local-1796049355449.zstd")).unwrap();
    let refused = upload(addr, "local-1796049355449.zstd", &small);
    let first_then = get(addr, &format!("/r/{first}/status")).body;
    assert!(
        !first_then.contains("\"state\":\"done\""),
        "the archive's analysis ended before the second upload; the test proves nothing: {first_then}"
    );
    assert_busy(&refused, "1 analysis");
    // The refusal is not remembered: once the worker is free, the same file is analysed.
    assert_eq!(finished(addr, &first).status, 200);
    let second = id_of(&upload(addr, "local-1796049355449.zstd", &small));
    let page = finished(addr, &second);
    assert_eq!(page.status, 200);
    assert!(page.body.contains("local-1796049355449"), "{}", page.body);
}

/// The real plain log with a hostile application name.
fn log_named(name: &str) -> Vec<u8> {
    let text = String::from_utf8(real_plain_log()).unwrap();
    text.lines()
        .map(|line| {
            if line.contains("\"Event\":\"SparkListenerApplicationStart\"") {
                let mut event: serde_json::Value = serde_json::from_str(line).unwrap();
                event["App Name"] = name.into();
                format!("{event}\n")
            } else {
                format!("{line}\n")
            }
        })
        .collect::<String>()
        .into_bytes()
}

#[test]
fn every_page_escapes_what_came_from_the_log_and_the_file_name() {
    let (_dir, server) = server(|_| {});
    let addr = server.addr();
    let hostile = "<script>alert(1)</script>";
    let file_name = "<img src=x onerror=alert(2)>";
    let id = id_of(&upload(addr, file_name, &log_named(hostile)));
    let report = finished(addr, &id);
    assert_eq!(report.status, 200, "{}", report.body);
    let list = get(addr, "/");
    for page in [&report, &list] {
        assert!(!page.body.contains(hostile), "{}", page.body);
        assert!(!page.body.contains("<img src=x"), "{}", page.body);
        assert!(page.body.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(page.body.contains("&lt;img src=x onerror=alert(2)&gt;"));
    }
    // And should anything slip through, the report page may run no script at all.
    let policy = report.header("content-security-policy").unwrap();
    assert!(
        policy.contains("default-src 'none'") && !policy.contains("script-src"),
        "{policy}"
    );
}

#[test]
fn uploads_and_reports_are_deleted_after_keep() {
    let keep = Duration::from_secs(5);
    let (dir, server) = server(|c| c.keep = keep);
    let addr = server.addr();
    let before_upload = Instant::now();
    let id = id_of(&upload(addr, "local-1796049337368", &real_plain_log()));
    assert_eq!(finished(addr, &id).status, 200);
    let data = dir.path().join("data");
    assert!(!files_under(&data.join("uploads")).is_empty());
    assert!(!files_under(&data.join("reports")).is_empty());
    loop {
        let gone = get(addr, &format!("/r/{id}")).status == 404
            && files_under(&data.join("uploads")).is_empty()
            && files_under(&data.join("reports")).is_empty();
        if gone {
            break;
        }
        assert!(
            before_upload.elapsed() < keep + Duration::from_secs(20),
            "still there 20 s after --keep"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(before_upload.elapsed() >= keep, "deleted before --keep");
    assert!(!get(addr, "/").body.contains(&id), "and no longer listed");
}

#[test]
fn no_request_makes_the_server_fetch_anything() {
    // A listener standing in for the network: nothing may connect to it.
    let canary = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    canary.set_nonblocking(true).unwrap();
    let url = format!("http://{}/log", canary.local_addr().unwrap());
    let (_dir, server) = server(|_| {});
    let addr = server.addr();
    assert_eq!(get(addr, &format!("/?url={url}")).status, 200);
    assert_eq!(get(addr, &format!("/upload?url={url}")).status, 405);
    assert_eq!(
        upload(addr, &url, url.as_bytes()).status,
        422,
        "a URL is not a log"
    );
    let id = id_of(&upload(addr, "local-1796049337368", &log_named(&url)));
    assert_eq!(finished(addr, &id).status, 200);
    let form_with_url = format!(
        "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"url\"\r\n\r\n{url}\r\n--{BOUNDARY}--\r\n"
    );
    let mut request = post_head(addr, form_with_url.len());
    request.extend_from_slice(form_with_url.as_bytes());
    assert_eq!(send(addr, &request).status, 400);
    std::thread::sleep(Duration::from_millis(300));
    assert!(
        matches!(canary.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the server connected out"
    );
}

#[test]
fn a_shared_address_needs_allow_remote_and_then_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = Config::new(dir.path().join("data"));
    config.bind = "0.0.0.0:0".parse().unwrap();
    let err = sparkdiag_serve::start(config.clone())
        .err()
        .expect("refused")
        .to_string();
    assert!(err.contains("--allow-remote"), "{err}");
    config.allow_remote = true;
    let server = sparkdiag_serve::start(config).unwrap();
    let port = server.addr().port();
    let page = get(SocketAddr::from(([127, 0, 0, 1], port)), "/");
    assert!(page.body.contains("Shared server"), "{}", page.body);
    let (_dir, local) = server_default();
    assert!(!get(local.addr(), "/").body.contains("Shared server"));
}

fn server_default() -> (tempfile::TempDir, Server) {
    server(|_| {})
}

#[test]
fn two_uploads_are_compared_as_sparkdiag_diff_does() {
    let (_dir, server) = server(|_| {});
    let addr = server.addr();
    let mut ids = Vec::new();
    for name in [
        "loop-serial/local-1796117427923.zstd",
        "loop-threadpool/local-1796117371922.zstd",
    ] {
        let bytes = std::fs::read(testdata(&format!("logs/diff/{name}"))).unwrap();
        let id = id_of(&upload(addr, name.rsplit('/').next().unwrap(), &bytes));
        assert_eq!(finished(addr, &id).status, 200);
        ids.push(id);
    }
    let list = get(addr, "/");
    assert!(
        list.body.contains("action=\"/diff\""),
        "the list offers the comparison"
    );
    let page = get(addr, &format!("/diff?before={}&after={}", ids[0], ids[1]));
    assert_eq!(page.status, 200, "{}", page.body);
    let cli = crate::util::sparkdiag(&[
        "diff",
        testdata("logs/diff/loop-serial/local-1796117427923.zstd")
            .to_str()
            .unwrap(),
        testdata("logs/diff/loop-threadpool/local-1796117371922.zstd")
            .to_str()
            .unwrap(),
        "--format",
        "html",
    ]);
    let cli = String::from_utf8(cli.stdout).unwrap();
    let title = |html: &str| {
        let start = html.find("<h1>").unwrap();
        html[start..start + html[start..].find("</h1>").unwrap()].to_string()
    };
    assert_eq!(title(&page.body), title(&cli));
    assert_eq!(get(addr, "/diff?before=x&after=y").status, 404);
}

/// Chromium driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: messages
/// are JSON, each ended by a NUL byte, written to the browser's fd 3 and read from its fd 4).
struct Browser {
    child: std::process::Child,
    to_browser: std::process::ChildStdin,
    from_browser: std::sync::mpsc::Receiver<serde_json::Value>,
    next_id: u64,
    _profile: tempfile::TempDir,
}

impl Browser {
    fn start(chromium: &Path) -> Browser {
        use std::process::{Command, Stdio};
        let profile = tempfile::tempdir().unwrap();
        // The shell hands our pipes to the browser as fds 3 and 4.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg("exec \"$0\" \"$@\" 3<&0 4>&1 </dev/null >/dev/null")
            .arg(chromium)
            .args(crate::html::CHROMIUM_QUIET)
            .args([
                "--remote-debugging-pipe",
                &format!("--user-data-dir={}", profile.path().display()),
                "about:blank",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start chromium");
        let to_browser = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let (send, from_browser) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut pending = Vec::new();
            let mut buf = [0u8; 64 << 10];
            while let Ok(n) = stdout.read(&mut buf) {
                if n == 0 {
                    break;
                }
                pending.extend_from_slice(&buf[..n]);
                while let Some(end) = pending.iter().position(|&b| b == 0) {
                    let message: Vec<u8> = pending.drain(..=end).collect();
                    if let Ok(value) = serde_json::from_slice(&message[..end])
                        && send.send(value).is_err()
                    {
                        return;
                    }
                }
            }
        });
        Browser {
            child,
            to_browser,
            from_browser,
            next_id: 0,
            _profile: profile,
        }
    }

    /// Calls `method`, in `session` when given, and returns its result or error.
    fn call(
        &mut self,
        method: &str,
        params: serde_json::Value,
        session: Option<&str>,
    ) -> Result<serde_json::Value, String> {
        self.next_id += 1;
        let id = self.next_id;
        let mut message = serde_json::json!({"id": id, "method": method, "params": params});
        if let Some(session) = session {
            message["sessionId"] = session.into();
        }
        let mut bytes = serde_json::to_vec(&message).unwrap();
        bytes.push(0);
        self.to_browser
            .write_all(&bytes)
            .expect("write to chromium");
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let reply = self
                .from_browser
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("chromium did not answer {method} within 60 s"));
            if reply["id"] == id {
                return match reply.get("error") {
                    Some(error) => Err(error.to_string()),
                    None => Ok(reply["result"].clone()),
                };
            }
        }
    }

    /// Evaluates `expression` in the page; errors (a page being replaced) come back as `Err`.
    fn eval(&mut self, session: &str, expression: &str) -> Result<serde_json::Value, String> {
        let result = self.call(
            "Runtime.evaluate",
            serde_json::json!({"expression": expression, "returnByValue": true}),
            Some(session),
        )?;
        if result.get("exceptionDetails").is_some() {
            return Err(result.to_string());
        }
        Ok(result["result"]["value"].clone())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Polls `check` every 200 ms until it is `Ok`, failing after `limit` with its last `Err`.
fn eventually(limit: Duration, mut check: impl FnMut() -> Result<(), String>) {
    let start = Instant::now();
    while let Err(why) = check() {
        assert!(start.elapsed() < limit, "after {limit:?}: {why}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

/// The whole path a user takes: open the page in Chromium, choose the real Databricks-layout
/// zip, press Analyse, wait for the report, and read the top finding on screen.
#[test]
fn chromium_uploads_a_databricks_zip_through_the_page_and_shows_the_top_finding() {
    let Some(chromium) = crate::html::chromium() else {
        return;
    };
    let zip = testdata("logs/archives/0101-123456-abcdefgh.zip");
    let config = sparkdiag_rules::Config::default();
    let inputs = sparkdiag_eventlog::discover(zip.to_str().unwrap()).unwrap();
    assert_eq!(inputs.len(), 1);
    let expected =
        sparkdiag_analysis::analyze(&inputs[0], &sparkdiag_analysis::Options::new(&config))
            .unwrap()
            .report;
    let top = expected.findings[0].finding.title.clone();

    let (_dir, server) = server(|_| {});
    let addr = server.addr();
    let mut browser = Browser::start(&chromium);
    let target = browser
        .call(
            "Target.createTarget",
            serde_json::json!({"url": format!("http://{addr}/")}),
            None,
        )
        .unwrap();
    let attached = browser
        .call(
            "Target.attachToTarget",
            serde_json::json!({"targetId": target["targetId"], "flatten": true}),
            None,
        )
        .unwrap();
    let session = attached["sessionId"].as_str().unwrap().to_string();
    eventually(Duration::from_secs(60), || {
        let ready = browser
            .eval(&session, "document.readyState + ' ' + location.pathname")
            .map(|v| v.as_str().unwrap_or("").to_string())
            .unwrap_or_default();
        match ready.as_str() {
            "complete /" => Ok(()),
            _ => Err(format!("the upload page did not load: {ready}")),
        }
    });
    let document = browser
        .call("DOM.getDocument", serde_json::json!({}), Some(&session))
        .unwrap();
    let input = browser
        .call(
            "DOM.querySelector",
            serde_json::json!({"nodeId": document["root"]["nodeId"], "selector": "input[type=file]"}),
            Some(&session),
        )
        .unwrap();
    browser
        .call(
            "DOM.setFileInputFiles",
            serde_json::json!({"nodeId": input["nodeId"], "files": [zip.to_str().unwrap()]}),
            Some(&session),
        )
        .unwrap();
    browser
        .eval(
            &session,
            "document.querySelector('button[type=submit]').click(); true",
        )
        .unwrap();
    let mut seen = String::new();
    let mut path = String::new();
    eventually(Duration::from_secs(120), || {
        if let Ok(v) = browser.eval(&session, "location.pathname") {
            path = v.as_str().unwrap_or("").to_string();
        }
        if let Ok(v) = browser.eval(&session, "document.body ? document.body.innerText : ''") {
            seen = v.as_str().unwrap_or("").to_string();
        }
        match seen.contains(&top) {
            true => Ok(()),
            false => Err(format!(
                "the top finding {top:?} is not on the page:\n{seen}"
            )),
        }
    });
    assert!(
        path.starts_with("/r/"),
        "on the report's own address: {path}"
    );
    assert!(seen.contains("JSON") && seen.contains("Markdown"), "{seen}");
    assert!(
        !seen.contains("Analysing"),
        "the progress page is gone: {seen}"
    );
}
