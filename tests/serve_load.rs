//! `sparkdiag serve` as a process under load and bad clients (issue 53): 32 uploads of the read
//! bench's large log at once, clients that trickle their headers or body, go quiet or hang up
//! mid-upload, and (behind `--ignored`) a soak of mixed requests. Each checks the real
//! process's memory (`/proc/PID/status`) and open files (`/proc/PID/fd`), and that nothing is
//! left in the data folder but the uploads and reports it keeps.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

use crate::serve::{
    BOUNDARY, files_under, finished, form, get, id_of, post_head, read_reply, send, upload,
};
use crate::util::{real_plain_log, testdata};

/// A `sparkdiag serve` process on a free loopback port, its data folder in a temporary folder.
pub(crate) struct Served {
    child: Child,
    pub addr: SocketAddr,
    pub data: PathBuf,
    _dir: tempfile::TempDir,
    /// What it wrote on standard error, for the failure messages.
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Served {
    /// Starts the binary with `extra` flags (and `--workers 2` unless they set it); waits for
    /// its address.
    pub(crate) fn start(extra: &[&str]) -> Served {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        let workers: &[&str] = if extra.contains(&"--workers") {
            &[]
        } else {
            &["--workers", "2"]
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_sparkdiag"))
            .args(["serve", "--bind", "127.0.0.1:0", "--data-dir"])
            .arg(&data)
            .args(workers)
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start sparkdiag serve");
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let first = lines
            .next()
            .and_then(Result::ok)
            .unwrap_or_else(|| panic!("sparkdiag serve said nothing: {:?}", child.try_wait()));
        let addr: SocketAddr = first
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split('/').next())
            .and_then(|addr| addr.parse().ok())
            .unwrap_or_else(|| panic!("no address in {first:?}"));
        let stderr = Arc::new(Mutex::new(vec![first]));
        let kept = stderr.clone();
        std::thread::spawn(move || {
            for line in lines.map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Served {
            child,
            addr,
            data: data.canonicalize().unwrap(),
            _dir: dir,
            stderr,
        }
    }

    fn status_kib(&self, field: &str) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix(field))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .unwrap_or_else(|| panic!("no {field} in /proc/PID/status"))
    }

    /// Resident memory now, in KiB.
    pub(crate) fn rss_kib(&self) -> u64 {
        self.status_kib("VmRSS:")
    }

    /// The most resident memory so far, in KiB.
    pub(crate) fn peak_kib(&self) -> u64 {
        self.status_kib("VmHWM:")
    }

    /// File descriptors open now: sockets, files, pipes.
    pub(crate) fn open_files(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .unwrap()
            .count()
    }

    /// The server's threads whose name begins `sparkdiag-analysis` (cut by the system to 15
    /// bytes), each with its CPU time in clock ticks. Threads started from a worker without a
    /// name of their own inherit its name, so only before the first analysis are these the
    /// workers alone.
    pub(crate) fn analysis_threads(&self) -> std::collections::BTreeMap<String, u64> {
        let tasks = format!("/proc/{}/task", self.child.id());
        std::fs::read_dir(&tasks)
            .unwrap()
            .filter_map(|task| {
                let task = task.ok()?;
                let stat = std::fs::read_to_string(task.path().join("stat")).ok()?;
                let (name, fields) = stat.split_once('(')?.1.rsplit_once(')')?;
                if !name.starts_with("sparkdiag-analy") {
                    return None;
                }
                // After the name: the state, then utime and stime are the 12th and 13th.
                let fields: Vec<&str> = fields.split_whitespace().collect();
                let ticks = fields[11].parse::<u64>().ok()? + fields[12].parse::<u64>().ok()?;
                Some((task.file_name().to_string_lossy().into_owned(), ticks))
            })
            .collect()
    }

    /// Files in the folders that hold work in progress: partial uploads and unpacked archives.
    pub(crate) fn work_in_progress(&self) -> Vec<PathBuf> {
        let mut files = files_under(&self.data.join("incoming"));
        files.extend(files_under(&self.data.join("unpacked")));
        files
    }

    /// Waits up to `limit` for `check` to hold, then says what the server printed.
    pub(crate) fn eventually(&self, limit: Duration, what: &str, mut check: impl FnMut() -> bool) {
        let start = Instant::now();
        while !check() {
            assert!(
                start.elapsed() < limit,
                "{what} not within {limit:?}; the server said:\n{}",
                self.stderr.lock().unwrap().join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub(crate) fn alive(&mut self) -> bool {
        self.child.try_wait().unwrap().is_none()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The read bench's large log at its smallest (one pass over the real rolling fixture, 29 MB
/// of text), as zstd in two frames: the events up to the application's start, then the rest.
/// The first frame is made again for each client with its own application name, so every
/// upload is different bytes (a new analysis, not the first one's answer) while the 29 MB are
/// compressed once.
pub(crate) struct LargeLog {
    head: String,
    rest_zstd: Vec<u8>,
    pub text_bytes: usize,
}

impl LargeLog {
    pub(crate) fn generate() -> LargeLog {
        let mut text = Vec::new();
        // Any size above zero is one pass.
        crate::large_log::write(&testdata("logs/rolling/zstd"), &mut text, 1).unwrap();
        let text = String::from_utf8(text).unwrap();
        let event = text
            .find("\"Event\":\"SparkListenerApplicationStart\"")
            .unwrap();
        let split = event + text[event..].find('\n').unwrap() + 1;
        LargeLog {
            head: text[..split].to_string(),
            rest_zstd: zstd::encode_all(&text.as_bytes()[split..], 1).unwrap(),
            text_bytes: text.len(),
        }
    }

    /// The log as client `n` uploads it: its application is named `load-N`.
    pub(crate) fn for_client(&self, n: usize) -> Vec<u8> {
        let head = self.head.replacen(
            "\"App Name\":\"sparkdiag-fixture rolling/zstd\"",
            &format!("\"App Name\":\"load-{n}\""),
            1,
        );
        assert_ne!(head, self.head, "the fixture's application name moved");
        let mut bytes = zstd::encode_all(head.as_bytes(), 1).unwrap();
        bytes.extend_from_slice(&self.rest_zstd);
        bytes
    }
}

/// Uploads `bytes` until the server takes it, waiting as each 503's `Retry-After` asks; the
/// report's id and how many times it was asked to wait.
pub(crate) fn upload_until_taken(addr: SocketAddr, name: &str, bytes: &[u8]) -> (String, usize) {
    let mut refused = 0;
    loop {
        let reply = upload(addr, name, bytes);
        if reply.status != 503 {
            return (id_of(&reply), refused);
        }
        let wait: u64 = reply
            .header("retry-after")
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| panic!("a 503 without Retry-After: {}", reply.head));
        assert!(reply.body.contains("busy"), "{}", reply.body);
        refused += 1;
        assert!(refused < 100, "{name}: refused 100 times");
        std::thread::sleep(Duration::from_secs(wait));
    }
}

/// How many analyses run now, from the front page's list: one snapshot of every job, so two
/// jobs are never counted across a change of worker. Only once every upload has its answer
/// (until then an upload being looked into for logs shows as analysing too).
fn analysing(addr: SocketAddr) -> usize {
    get(addr, "/").body.matches("<em>analysing…</em>").count()
}

/// How many of `ids` have finished (done or refused).
fn finished_count(addr: SocketAddr, ids: &[String]) -> usize {
    ids.iter()
        .filter(|id| {
            let status = get(addr, &format!("/r/{id}/status")).body;
            status.contains("\"state\":\"done\"") || status.contains("\"state\":\"failed\"")
        })
        .count()
}

const CLIENTS: usize = 32;

/// 32 clients upload the large log at once, each with its own application name; every one gets
/// its report, never more than the two workers analyse at once, refusals say when to come back,
/// and the server ends where it started: no partial upload, no unpacked file, its open files
/// as before.
#[test]
fn thirty_two_uploads_of_the_large_log_at_once_are_each_analysed_two_at_a_time() {
    let log = Arc::new(LargeLog::generate());
    let mut served = Served::start(&[]);
    let addr = served.addr;
    assert_eq!(get(addr, "/").status, 200);
    let files_before = served.open_files();
    let rss_before = served.rss_kib();

    let barrier = Arc::new(Barrier::new(CLIENTS));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|n| {
            let (log, barrier) = (log.clone(), barrier.clone());
            std::thread::spawn(move || {
                let bytes = log.for_client(n);
                barrier.wait();
                upload_until_taken(addr, &format!("load-{n}.zstd"), &bytes)
            })
        })
        .collect();
    // While the uploads arrive and the analyses run: how many run at once, and the memory.
    let mut ids: Vec<String> = Vec::new();
    let mut refusals = 0;
    let mut most_at_once = 0;
    let mut clients = clients.into_iter().peekable();
    let start = Instant::now();
    loop {
        while let Some(client) = clients.next_if(|c| c.is_finished()) {
            let (id, refused) = client.join().unwrap();
            ids.push(id);
            refusals += refused;
        }
        let taken = ids.len() == CLIENTS;
        if taken {
            let now = analysing(addr);
            most_at_once = most_at_once.max(now);
            assert!(now <= 2, "{now} analyses at once with 2 workers");
        }
        let done = finished_count(addr, &ids);
        if taken && done == CLIENTS {
            break;
        }
        assert!(served.alive(), "the server died");
        assert!(
            start.elapsed() < Duration::from_secs(900),
            "{} of {CLIENTS} uploads taken and {done} analysed in 900 s",
            ids.len()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), CLIENTS, "every upload its own analysis");
    for (n, id) in ids.iter().enumerate().take(4) {
        let page = finished(addr, id);
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains("load-"), "report {n}: {}", page.body);
    }
    assert_eq!(most_at_once, 2, "the two workers were never both busy");
    served.eventually(Duration::from_secs(30), "the data folder emptied", || {
        served.work_in_progress().is_empty()
    });
    served.eventually(Duration::from_secs(30), "the connections closed", || {
        served.open_files() <= files_before
    });
    eprintln!(
        "serve load: {CLIENTS} uploads of {:.1} MB ({:.1} MB zstd), {refusals} answered 503 first; \
         RSS {} MiB before, peak {} MiB, {} MiB after; open files {files_before} before, {} after",
        log.text_bytes as f64 / 1e6,
        log.for_client(0).len() as f64 / 1e6,
        rss_before >> 10,
        served.peak_kib() >> 10,
        served.rss_kib() >> 10,
        served.open_files()
    );
}

/// With one worker and a queue of one, eight clients upload the large log at once: no more are
/// taken than the two places plus what finished meanwhile, the rest are answered 503 with
/// `Retry-After` and a page saying the server is busy, and every analysis runs on the one
/// worker thread. Then the server recovers: each refused client, coming back as `Retry-After`
/// asks, is taken and analysed; a new upload is taken at once; nothing is left in progress and
/// the open files are as before.
#[test]
fn uploads_beyond_the_workers_and_their_queue_get_503_until_there_is_room() {
    const AT_ONCE: usize = 8;
    let log = Arc::new(LargeLog::generate());
    let mut served = Served::start(&["--workers", "1", "--queue", "1"]);
    let addr = served.addr;
    assert_eq!(get(addr, "/").status, 200);
    let files_before = served.open_files();
    // A thread names itself once it runs, which on a busy machine can be after the server
    // answers.
    served.eventually(Duration::from_secs(30), "the worker thread named", || {
        !served.analysis_threads().is_empty()
    });
    let workers = served.analysis_threads();
    assert_eq!(workers.len(), 1, "one worker thread for --workers 1");
    let (worker, &ticks_before) = workers.iter().next().unwrap();

    let barrier = Arc::new(Barrier::new(AT_ONCE));
    let clients: Vec<_> = (0..AT_ONCE)
        .map(|n| {
            let (log, barrier) = (log.clone(), barrier.clone());
            std::thread::spawn(move || {
                let bytes = log.for_client(n);
                barrier.wait();
                upload(addr, &format!("load-{n}.zstd"), &bytes)
            })
        })
        .collect();
    let replies: Vec<_> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    let taken: Vec<String> = replies
        .iter()
        .filter(|r| r.status == 303)
        .map(id_of)
        .collect();
    let finished_meanwhile = finished_count(addr, &taken);
    let refused: Vec<usize> = (0..AT_ONCE).filter(|&n| replies[n].status == 503).collect();
    assert_eq!(
        taken.len() + refused.len(),
        AT_ONCE,
        "answers other than 303 and 503: {:?}",
        replies.iter().map(|r| r.status).collect::<Vec<_>>()
    );
    assert!(
        taken.len() <= 2 + finished_meanwhile,
        "{} uploads taken with room for 2 and {finished_meanwhile} finished",
        taken.len()
    );
    assert!(!refused.is_empty(), "no upload was refused");
    for &n in &refused {
        let reply = &replies[n];
        assert_eq!(
            reply.header("retry-after").as_deref(),
            Some("5"),
            "{}",
            reply.head
        );
        assert!(
            reply.body.contains("busy (2 analyses at once at most)"),
            "{}",
            reply.body
        );
    }

    // The refused come back as asked, each while the worker goes on.
    let again: Vec<_> = refused
        .iter()
        .map(|&n| {
            let log = log.clone();
            std::thread::spawn(move || {
                upload_until_taken(addr, &format!("load-{n}.zstd"), &log.for_client(n))
            })
        })
        .collect();
    let mut ids = taken;
    for client in again {
        ids.push(client.join().unwrap().0);
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), AT_ONCE, "every upload its own analysis");
    // Every upload taken, so what shows as analysing runs on the worker: one at a time.
    let mut most_at_once = 0;
    while finished_count(addr, &ids) < AT_ONCE {
        let now = analysing(addr);
        assert!(now <= 1, "{now} analyses at once with one worker");
        most_at_once = most_at_once.max(now);
        assert!(served.alive(), "the server died");
        std::thread::sleep(Duration::from_millis(100));
    }
    for id in &ids {
        let page = finished(addr, id);
        assert_eq!(page.status, 200, "{}", page.body);
        assert!(page.body.contains("load-"), "{}", page.body);
    }
    let ticks_after = served.analysis_threads()[worker];
    assert!(
        ticks_after > ticks_before,
        "the worker thread did no work: {ticks_before} then {ticks_after} ticks"
    );

    // Room again: a new upload is taken at once, and the server is as it started.
    let fresh = upload(addr, "again.log", &real_plain_log());
    assert_eq!(finished(addr, &id_of(&fresh)).status, 200);
    assert!(served.alive(), "the server died");
    served.eventually(Duration::from_secs(30), "the data folder emptied", || {
        served.work_in_progress().is_empty()
    });
    served.eventually(Duration::from_secs(30), "the connections closed", || {
        served.open_files() <= files_before
    });
    eprintln!(
        "serve full: {AT_ONCE} uploads at once with room for 2: {} taken, {} answered 503 \
         ({finished_meanwhile} finished meanwhile); at most {most_at_once} analysing once all \
         were taken; the worker thread's CPU {} ticks",
        AT_ONCE - refused.len(),
        refused.len(),
        ticks_after - ticks_before
    );
}

/// Writes `bytes` a few at a time, `every` apart, until the server closes the connection or
/// `limit` passes; how long the server let it go on.
fn trickle(stream: &mut TcpStream, bytes: &[u8], every: Duration, limit: Duration) -> Duration {
    let start = Instant::now();
    for chunk in bytes.chunks(1).cycle() {
        if stream.write_all(chunk).is_err() || start.elapsed() > limit {
            break;
        }
        // A reply (408) or the end of the connection: the server gave up on it.
        stream.set_nonblocking(true).unwrap();
        let mut byte = [0u8; 1];
        let closed =
            !matches!(stream.peek(&mut byte), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock);
        stream.set_nonblocking(false).unwrap();
        if closed {
            break;
        }
        std::thread::sleep(every);
    }
    start.elapsed()
}

/// Clients that trickle their headers or their upload, go quiet, hold an idle connection or hang
/// up half way (with `--client-timeout 1s`): each is dropped within its limit, every partial
/// upload is deleted, the server's open files come back to what they were, and it goes on
/// answering.
#[test]
fn slow_quiet_and_vanishing_clients_are_dropped_and_leave_nothing_behind() {
    let mut served = Served::start(&["--client-timeout", "1s"]);
    let addr = served.addr;
    assert_eq!(get(addr, "/").status, 200);
    let files_before = served.open_files();
    let log = real_plain_log();
    let body = form("local-1796049337368", &log);

    // Headers a byte every 100 ms: closed after the header limit though bytes keep coming.
    let mut slow_headers = TcpStream::connect(addr).unwrap();
    let request = format!(
        "GET / HTTP/1.1\r\nHost: {addr}\r\nX-Padding: {}",
        "x".repeat(500)
    );
    let lasted = trickle(
        &mut slow_headers,
        request.as_bytes(),
        Duration::from_millis(100),
        Duration::from_secs(20),
    );
    assert!(
        lasted < Duration::from_secs(10),
        "headers trickled for {lasted:?}"
    );

    // An upload a byte every 50 ms (20 bytes a second): dropped for its rate, with 408.
    let mut slow_body = TcpStream::connect(addr).unwrap();
    slow_body.write_all(&post_head(addr, body.len())).unwrap();
    let lasted = trickle(
        &mut slow_body,
        &body,
        Duration::from_millis(50),
        Duration::from_secs(20),
    );
    assert!(
        lasted < Duration::from_secs(10),
        "body trickled for {lasted:?}"
    );
    slow_body
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let reply = read_reply(&mut slow_body);
    assert_eq!(reply.status, 408, "{}", reply.body);
    assert!(
        reply.body.contains("slower than 10.0 KiB/s"),
        "{}",
        reply.body
    );

    // Half an upload, then nothing: 408 after the limit.
    let mut quiet = TcpStream::connect(addr).unwrap();
    quiet
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    quiet.write_all(&post_head(addr, body.len())).unwrap();
    quiet.write_all(&body[..body.len() / 2]).unwrap();
    let reply = read_reply(&mut quiet);
    assert_eq!(reply.status, 408, "{}", reply.body);
    assert!(reply.body.contains("stopped sending"), "{}", reply.body);

    // A connection that never sends a request is closed too.
    let mut idle = TcpStream::connect(addr).unwrap();
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut nothing = Vec::new();
    let start = Instant::now();
    let _ = idle.read_to_end(&mut nothing);
    assert!(
        start.elapsed() < Duration::from_secs(9),
        "an idle connection was held {:?}",
        start.elapsed()
    );

    // Eight clients hang up half way through the large log, one after the whole file without
    // reading the answer: the halves are deleted, the whole one is analysed.
    let large = LargeLog::generate();
    for n in 0..8 {
        let body = form(&format!("cut-{n}.zstd"), &large.for_client(n));
        let mut stream = TcpStream::connect(addr).unwrap();
        stream.write_all(&post_head(addr, body.len())).unwrap();
        stream
            .write_all(&body[..body.len() * (n + 1) / 10])
            .unwrap();
    }
    let whole = large.for_client(99);
    let body = form("whole.zstd", &whole);
    let mut request = post_head(addr, body.len());
    request.extend_from_slice(&body);
    let mut gone = TcpStream::connect(addr).unwrap();
    gone.write_all(&request).unwrap();
    drop(gone);
    served.eventually(
        Duration::from_secs(30),
        "the partial uploads deleted",
        || served.work_in_progress().is_empty(),
    );
    let id = {
        use sha2::Digest;
        sha2::Sha256::digest(&whole)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    served.eventually(
        Duration::from_secs(300),
        "the whole upload analysed",
        || {
            get(addr, &format!("/r/{id}/status"))
                .body
                .contains("\"state\":\"done\"")
        },
    );
    let uploads: Vec<PathBuf> = files_under(&served.data.join("uploads"))
        .into_iter()
        .filter(|p| !p.ends_with("upload.json"))
        .collect();
    assert_eq!(
        uploads.len(),
        1,
        "only the whole upload is kept: {uploads:?}"
    );

    // Still answering; the connections of every client above are closed.
    assert!(served.alive());
    let fresh = upload(addr, "again.log", &log);
    assert_eq!(finished(addr, &id_of(&fresh)).status, 200);
    served.eventually(Duration::from_secs(30), "the connections closed", || {
        served.open_files() <= files_before
    });
}

/// What the soak's requests were answered, by HTTP status (0: the client hung up or never
/// finished its headers, so no answer was read).
type Tally = Mutex<std::collections::BTreeMap<u16, usize>>;

fn count(tally: &Tally, status: u16) {
    *tally.lock().unwrap().entry(status).or_default() += 1;
}

/// An upload the server may refuse while busy: 303 or 503 with `Retry-After`.
fn counted_upload(addr: SocketAddr, name: &str, bytes: &[u8], tally: &Tally) -> Option<String> {
    let reply = upload(addr, name, bytes);
    count(tally, reply.status);
    match reply.status {
        303 => Some(id_of(&reply)),
        503 => {
            assert!(reply.header("retry-after").is_some(), "{}", reply.head);
            None
        }
        other => panic!("{name}: {other}: {}", reply.body),
    }
}

/// One mixed request of the soak, chosen by `n`.
fn soak_request(
    addr: SocketAddr,
    n: usize,
    logs: &[(String, Vec<u8>)],
    ids: &Mutex<Vec<String>>,
    tally: &Tally,
) {
    let (name, bytes) = &logs[n % logs.len()];
    match n % 10 {
        // New bytes every time: the log with its application named after the request.
        0 | 1 => {
            let text = String::from_utf8_lossy(bytes).replacen(
                "\"App Name\":\"",
                &format!("\"App Name\":\"soak-{n} "),
                1,
            );
            if let Some(id) = counted_upload(addr, name, text.as_bytes(), tally) {
                ids.lock().unwrap().push(id);
            }
        }
        // The same bytes again, answered from the first analysis until it is swept after
        // --keep; or a tar of a log, unpacked into the data folder each time it is analysed.
        2 => {
            let id = if n % 20 == 2 {
                counted_upload(addr, name, bytes, tally)
            } else {
                counted_upload(addr, "logs.tar", &crate::util::tar_with(|_| {}), tally)
            };
            ids.lock().unwrap().extend(id);
        }
        3 => {
            let reply = get(addr, "/");
            assert_eq!(reply.status, 200);
            count(tally, reply.status);
        }
        4 | 5 => {
            let id = ids.lock().unwrap().last().cloned();
            if let Some(id) = id {
                for path in ["", "/status", "/report.json", "/report.md"] {
                    let reply = get(addr, &format!("/r/{id}{path}"));
                    // Swept after --keep, or not finished yet.
                    assert!(
                        [200, 404].contains(&reply.status),
                        "{path}: {}",
                        reply.status
                    );
                    count(tally, reply.status);
                }
            }
        }
        6 => {
            // Half an upload, then hang up.
            let body = form(name, bytes);
            let mut stream = TcpStream::connect(addr).unwrap();
            let _ = stream.write_all(&post_head(addr, body.len()));
            let _ = stream.write_all(&body[..body.len() / 2]);
            count(tally, 0);
        }
        7 => {
            // Not multipart; then a form with no file: 400, or 503 when the server is full
            // (it refuses before reading the body).
            let reply = send(
                addr,
                format!(
                    "POST /upload HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
                     Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{{}}"
                )
                .as_bytes(),
            );
            assert!([400, 503].contains(&reply.status), "{}", reply.status);
            count(tally, reply.status);
            let other = format!(
                "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhi\r\n--{BOUNDARY}--\r\n"
            );
            let mut request = post_head(addr, other.len());
            request.extend_from_slice(other.as_bytes());
            let reply = send(addr, &request);
            assert!([400, 503].contains(&reply.status), "{}", reply.status);
            count(tally, reply.status);
        }
        8 => {
            // A diff of the last two reports, or a page that is not there.
            let pair: Vec<String> = ids.lock().unwrap().iter().rev().take(2).cloned().collect();
            let reply = match pair.as_slice() {
                [after, before] => get(addr, &format!("/diff?before={before}&after={after}")),
                _ => get(addr, "/no/such/page"),
            };
            assert!(
                [200, 404, 422, 503].contains(&reply.status),
                "{}",
                reply.status
            );
            count(tally, reply.status);
        }
        _ => {
            // Headers that never end: the server closes the connection after the limit.
            let mut stream = TcpStream::connect(addr).unwrap();
            let _ = stream.write_all(format!("GET / HTTP/1.1\r\nHost: {addr}\r\nX-").as_bytes());
            std::thread::spawn(move || {
                let mut rest = Vec::new();
                let _ = stream.read_to_end(&mut rest);
            });
            count(tally, 0);
        }
    }
}

/// Real plain logs for the soak's uploads, whose application name can be changed in place.
fn soak_logs() -> Vec<(String, Vec<u8>)> {
    [
        "logs/single/plain/local-1796049337368",
        "logs/failed/local-1796049483373",
    ]
    .iter()
    .map(|rel| {
        let path = testdata(rel);
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        (name, std::fs::read(&path).unwrap())
    })
    .collect()
}

/// `SPARKDIAG_SOAK_S` seconds (default 600) of mixed requests from 8 clients at once: uploads
/// new and repeated, report pages, diffs, refusals, clients that hang up or never finish their
/// headers, with `--keep 20s` so reports are swept as they would be over days. The server's
/// memory and open files at the end are within a margin of what they were after the first
/// tenth, and nothing half-done is left. `.ci/run` runs it once, for 120 s.
#[test]
#[ignore = "a soak of minutes: cargo test --test integration -- --ignored soak"]
fn soak_of_mixed_requests_shows_no_growth_in_memory_or_open_files() {
    let seconds: u64 = std::env::var("SPARKDIAG_SOAK_S")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(600);
    let mut served = Served::start(&["--client-timeout", "2s", "--keep", "20s"]);
    let addr = served.addr;
    assert_eq!(get(addr, "/").status, 200);
    let (idle_rss, idle_files) = (served.rss_kib(), served.open_files());
    let logs = Arc::new(soak_logs());
    assert!(logs.len() >= 2, "{} logs", logs.len());
    let ids = Arc::new(Mutex::new(Vec::new()));
    let tally: Arc<Tally> = Arc::default();
    let requests = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let clients: Vec<_> = (0..8)
        .map(|client| {
            let (logs, ids, requests, tally) =
                (logs.clone(), ids.clone(), requests.clone(), tally.clone());
            std::thread::spawn(move || {
                let mut n = client;
                while Instant::now() < deadline {
                    soak_request(addr, n, &logs, &ids, &tally);
                    requests.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    n += 8;
                }
            })
        })
        .collect();
    let warm = Instant::now() + Duration::from_secs(seconds / 10);
    let mut samples: Vec<(f64, u64, usize)> = Vec::new();
    let start = Instant::now();
    let mut warm_sample = None;
    while Instant::now() < deadline {
        assert!(served.alive(), "the server died");
        let sample = (
            start.elapsed().as_secs_f64(),
            served.rss_kib(),
            served.open_files(),
        );
        if warm_sample.is_none() && Instant::now() >= warm {
            warm_sample = Some(sample);
        }
        samples.push(sample);
        std::thread::sleep(Duration::from_secs(1));
    }
    for client in clients {
        client.join().unwrap();
    }
    // Quiet again: the slow clients' connections time out, the queue drains.
    served.eventually(Duration::from_secs(120), "the queue drained", || {
        served.work_in_progress().is_empty()
    });
    std::thread::sleep(Duration::from_secs(5));
    let (_, warm_rss, warm_files) = warm_sample.unwrap();
    let (end_rss, end_files) = (served.rss_kib(), served.open_files());
    let requests = requests.load(std::sync::atomic::Ordering::Relaxed);
    let max_rss = samples.iter().map(|s| s.1).max().unwrap();
    let max_files = samples.iter().map(|s| s.2).max().unwrap();
    eprintln!(
        "soak: {seconds} s, {requests} requests from 8 clients, {} uploads taken; \
         RSS {} MiB idle at the start, {} MiB after warm-up, {} MiB at most, {} MiB at the end \
         (peak {} MiB); open files {idle_files} idle at the start, {warm_files} after warm-up, \
         {max_files} at most, {end_files} at the end; \
         files left in progress: {}; answers by status (0: none read): {:?}",
        ids.lock().unwrap().len(),
        idle_rss >> 10,
        warm_rss >> 10,
        max_rss >> 10,
        end_rss >> 10,
        served.peak_kib() >> 10,
        served.work_in_progress().len(),
        tally.lock().unwrap()
    );
    assert!(requests > seconds as usize, "only {requests} requests");
    assert!(
        end_files <= idle_files,
        "open files grew from {idle_files} (idle at the start) to {end_files} (idle at the end)"
    );
    // Memory the allocator keeps for its arenas moves a little; a leak grows with the requests.
    assert!(
        end_rss <= warm_rss + warm_rss / 4 + 8 * 1024,
        "RSS grew from {warm_rss} KiB to {end_rss} KiB"
    );
    assert_eq!(get(addr, "/").status, 200);
}
