//! `sparkdiag serve`: a private upload page on this machine. A Spark event log dropped on the
//! page (any input `sparkdiag analyze` reads) is streamed to the data folder as it arrives,
//! analysed by a bounded pool of workers while the page shows progress, and answered with the
//! same HTML report as `analyze --format html`, its JSON and Markdown beside it.
//!
//! What it promises, each checked by the loopback tests in `tests/serve.rs`:
//! - it listens on loopback unless told otherwise ([`Config::allow_remote`]), and then says
//!   on every page that it is shared;
//! - everything it writes stays in [`Config::data_dir`], and is deleted [`Config::keep`] after
//!   the upload;
//! - it never fetches anything: no request names a URL, only uploaded bytes are read;
//! - an upload over [`Config::max_upload`] is refused with 413, an archive that unpacks like a
//!   bomb with 413, one with members outside itself, links or devices with 422, a body that is
//!   not multipart with 400, a client that goes quiet mid-upload with 408, and work beyond the
//!   pool and its queue with 503 and `Retry-After`;
//! - a second upload of the same bytes (SHA-256) is answered from the first analysis;
//! - a redacted upload ([`Config::redact`], or the form's checkbox) is answered with no
//!   original name, host, user, path or SQL literal in any page, JSON or Markdown, and never
//!   shares a report with the same bytes unredacted.
//!
//! ```no_run
//! let mut config = sparkdiag_serve::Config::new("/var/tmp/sparkdiag".into());
//! config.bind = "127.0.0.1:0".parse().unwrap();
//! let server = sparkdiag_serve::start(config)?;
//! println!("http://{}/", server.addr());
//! server.wait()?;
//! # Ok::<(), sparkdiag_serve::Error>(())
//! ```

mod http;
mod pages;
mod pool;
mod store;
mod work;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub use store::Store;

/// How the server runs. [`Config::new`] gives the defaults of `sparkdiag serve`.
#[derive(Clone)]
pub struct Config {
    pub bind: SocketAddr,
    /// Needed to listen on anything but a loopback address: the reports then reach everyone
    /// who can reach the address.
    pub allow_remote: bool,
    /// Uploads, reports and unpacked archives, each in its own sub-folder.
    pub data_dir: PathBuf,
    /// Bytes of one uploaded file.
    pub max_upload: u64,
    /// How long an upload and its report are kept.
    pub keep: Duration,
    /// Analyses running at once.
    pub workers: usize,
    /// Analyses waiting for a worker; one more is refused with 503.
    pub queue: usize,
    /// Uploads being received at once; one more is refused with 503.
    pub max_uploads: usize,
    /// The longest wait for the next bytes of an upload before it is dropped with 408, and the
    /// longest a request's headers may take (or an idle connection may wait for its next
    /// request) before the connection is closed.
    pub idle_timeout: Duration,
    /// The slowest an upload may arrive on average, in bytes a second: an upload may take
    /// `idle_timeout` plus the time its bytes take at this rate, then it is dropped with 408,
    /// so a client that trickles a byte now and then cannot hold an upload's place for ever.
    /// 0: no limit beyond `idle_timeout` between reads.
    pub min_upload_rate: u64,
    /// Connections open at once; the next waits in the system's queue until one closes.
    pub max_connections: usize,
    /// The rules' thresholds, as `analyze --config/--set/--disable` give them.
    pub rules: sparkdiag_rules::Config,
    /// Money beside the savings, as `analyze --price-per-core-hour/--price-per-gb-hour` give it.
    pub prices: sparkdiag_analysis::Prices,
    /// `--redact`: every upload's report pseudonymised (names, hosts, users, paths, SQL
    /// literals), as `analyze --redact` does; without it, the upload form offers it per upload.
    pub redact: bool,
    /// The secret a redacted report's pseudonyms are keyed with, so one host reads the same in
    /// every upload's report. [`Config::new`] draws one at random: pseudonyms then hold for as
    /// long as the server runs, and nobody can check a guess against one.
    pub redact_key: Vec<u8>,
}

/// 32 bytes from the system's randomness, as std's hash maps seed themselves: a secret for
/// this process alone, with no dependency for it.
fn random_secret() -> Vec<u8> {
    use std::hash::BuildHasher;
    (0..4u8)
        .flat_map(|i| {
            std::collections::hash_map::RandomState::new()
                .hash_one(i)
                .to_le_bytes()
        })
        .collect()
}

impl Config {
    pub fn new(data_dir: PathBuf) -> Config {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        Config {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            allow_remote: false,
            data_dir,
            max_upload: 2 << 30,
            keep: Duration::from_secs(24 * 3600),
            workers: cores.clamp(1, 8),
            queue: 32,
            max_uploads: 16,
            idle_timeout: Duration::from_secs(60),
            // Apache's mod_reqtimeout asks 500 bytes a second of a body; 10 KiB a second is
            // still a 2 GiB log in 58 hours, and a trickling client gives up its place sooner.
            min_upload_rate: 10 << 10,
            max_connections: 256,
            rules: sparkdiag_rules::Config::default(),
            prices: Default::default(),
            redact: false,
            redact_key: random_secret(),
        }
    }

    /// Where `sparkdiag serve` keeps its data without `--data-dir`: `sparkdiag-serve` in the
    /// system's temporary folder.
    pub fn default_data_dir() -> PathBuf {
        std::env::temp_dir().join("sparkdiag-serve")
    }

    /// Whether the pages must say the server is shared.
    fn is_shared(&self) -> bool {
        !self.bind.ip().is_loopback()
    }
}

/// Why the server could not start.
#[derive(Debug)]
pub struct Error(String);

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Error {}

/// A running server; dropping it stops it.
pub struct Server {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Server {
    /// The address it listens on (the port the system chose when the configured one is 0).
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Serves until the process is stopped.
    pub fn wait(mut self) -> Result<(), Error> {
        if let Some(thread) = self.thread.take() {
            thread
                .join()
                .map_err(|_| Error("the server stopped on an internal error".into()))?;
        }
        Ok(())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `sparkdiag serve`: starts the server, says on standard error where to open it, and serves
/// until the process is stopped.
pub fn serve_until_stopped(config: Config) -> Result<(), Error> {
    let data_dir = config.data_dir.clone();
    let server = start(config)?;
    eprintln!(
        "sparkdiag serve: open http://{}/ (data in {}; Ctrl-C stops)",
        server.addr(),
        data_dir.display()
    );
    server.wait()
}

/// Checks `config`, prepares the data folder, binds, and serves on a thread of its own.
pub fn start(config: Config) -> Result<Server, Error> {
    if config.is_shared() && !config.allow_remote {
        return Err(Error(format!(
            "{} is not a loopback address: anyone who can reach it could upload logs and read \
             every report. Pass --allow-remote to share the server on purpose, or bind 127.0.0.1.",
            config.bind
        )));
    }
    if config.workers == 0 || config.max_uploads == 0 || config.max_connections == 0 {
        return Err(Error(
            "workers, max_uploads and max_connections must be at least 1".into(),
        ));
    }
    let store = Store::open(&config.data_dir).map_err(|e| {
        Error(format!(
            "{}: cannot prepare the data folder: {e}",
            config.data_dir.display()
        ))
    })?;
    let listener = std::net::TcpListener::bind(config.bind)
        .map_err(|e| Error(format!("cannot listen on {}: {e}", config.bind)))?;
    let addr = listener
        .local_addr()
        .map_err(|e| Error(format!("cannot listen on {}: {e}", config.bind)))?;
    listener
        .set_nonblocking(true)
        .map_err(|e| Error(format!("cannot listen on {addr}: {e}")))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        // Uploads written to disk and archives unpacked; analyses have threads of their own.
        .max_blocking_threads(config.max_uploads + 4)
        .enable_all()
        .thread_name("sparkdiag-serve")
        .build()
        .map_err(|e| Error(format!("cannot start the server's threads: {e}")))?;
    let pool = pool::Pool::new(config.workers)
        .map_err(|e| Error(format!("cannot start the analysis workers: {e}")))?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let state = http::State::new(config, addr, store, pool);
    let thread = std::thread::Builder::new()
        .name("sparkdiag-serve".into())
        .spawn(move || {
            runtime.block_on(async move {
                let listener = match tokio::net::TcpListener::from_std(listener) {
                    Ok(l) => l,
                    Err(e) => {
                        eprintln!("sparkdiag serve: cannot listen on {addr}: {e}");
                        return;
                    }
                };
                tokio::spawn(store::sweep(state.clone()));
                tokio::spawn(http::resume_interrupted(state.clone()));
                let limits = ConnectionLimits {
                    header_timeout: state.config.idle_timeout,
                    max_connections: state.config.max_connections,
                };
                let serve = serve_connections(listener, http::router(state), limits);
                tokio::select! {
                    result = serve => if let Err(e) = result {
                        eprintln!("sparkdiag serve: {e}");
                    },
                    _ = stopped => {}
                }
            });
            // Analyses still running are left to finish on their own threads, briefly.
            runtime.shutdown_timeout(Duration::from_secs(2));
        })
        .map_err(|e| Error(format!("cannot start the server's thread: {e}")))?;
    Ok(Server {
        addr,
        stop: Some(stop),
        thread: Some(thread),
    })
}

/// What bounds the connections a client can hold.
struct ConnectionLimits {
    /// The longest a request's headers may take, and an idle connection may wait for its next.
    header_timeout: Duration,
    max_connections: usize,
}

/// Accepts connections and serves each on its own task, at most `max_connections` at once.
/// Not `axum::serve`: it sets no timer, so a client sending its headers a byte a minute would
/// hold a socket for ever; hyper's header timeout needs one.
async fn serve_connections(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    limits: ConnectionLimits,
) -> std::io::Result<()> {
    use hyper_util::rt::{TokioIo, TokioTimer};
    let open = std::sync::Arc::new(tokio::sync::Semaphore::new(limits.max_connections));
    loop {
        // At the limit, new connections wait in the listen queue until one closes, rather
        // than each taking a file descriptor and a task.
        let Ok(slot) = open.clone().acquire_owned().await else {
            return Ok(());
        };
        let stream = match listener.accept().await {
            Ok((stream, _)) => stream,
            Err(e) => {
                // Out of file descriptors and the like pass: wait (as axum does), then accept again.
                eprintln!("sparkdiag serve: cannot accept a connection: {e}");
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
        };
        let service = hyper_util::service::TowerToHyperService::new(router.clone());
        let header_timeout = limits.header_timeout;
        tokio::spawn(async move {
            let _slot = slot;
            // A client that hangs up or is too slow ends only its own connection.
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                // A client that sends the whole upload and hangs up without waiting for the
                // answer still has it analysed: without this, hyper ends the request at the
                // end of its input, before the upload's last bytes are read from the buffer.
                .half_close(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
