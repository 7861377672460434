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

/// How the server runs. [`Config::new`] gives the defaults of `sparkdiag serve`; with the `cli`
/// feature it parses as that command's flags, whose help is these fields' documentation (a test
/// holds the flags' defaults to [`Config::new`]'s).
#[derive(Clone)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Config {
    /// The address to listen on. Anything but loopback also needs --allow-remote.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")
    )]
    pub bind: SocketAddr,
    /// Listen on a non-loopback address: everyone who can reach it can upload and read every
    /// report, and the pages say so.
    #[cfg_attr(feature = "cli", arg(long))]
    pub allow_remote: bool,
    /// Where uploads, reports and unpacked archives are kept (created if missing).
    /// Default: sparkdiag-serve in the system's temporary folder.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "DIR", default_value_os_t = Config::default_data_dir(), hide_default_value = true)
    )]
    pub data_dir: PathBuf,
    /// The largest file accepted (e.g. 2GiB, 500MiB); larger uploads are refused with 413.
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "SIZE", default_value = "2GiB", value_parser = sparkdiag_report::format::parse_size)
    )]
    pub max_upload: u64,
    /// How long uploads and their reports are kept (e.g. 24h, 30m, 7d).
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "DURATION", default_value = "24h", value_parser = sparkdiag_report::format::parse_positive_duration)
    )]
    pub keep: Duration,
    /// Analyses running at once (default: the number of cores, at most 8).
    #[cfg_attr(
        feature = "cli",
        arg(long, value_name = "N", default_value_t = default_workers(), hide_default_value = true, value_parser = at_least_one)
    )]
    pub workers: usize,
    /// Analyses that may wait for a worker; beyond these and the running ones, uploads are
    /// answered 503 with Retry-After, so memory stays bounded by the analyses in flight.
    #[cfg_attr(feature = "cli", arg(long, value_name = "N", default_value_t = 32))]
    pub queue: usize,
    /// Uploads being received at once; one more is refused with 503.
    #[cfg_attr(feature = "cli", arg(skip = MAX_UPLOADS))]
    pub max_uploads: usize,
    /// How long a client may send nothing (its request's headers, or the next bytes of an
    /// upload) before its upload is answered 408 and its connection closed (e.g. 60s, 5m).
    #[cfg_attr(
        feature = "cli",
        arg(long = "client-timeout", value_name = "DURATION", default_value = "60s", value_parser = sparkdiag_report::format::parse_positive_duration)
    )]
    pub idle_timeout: Duration,
    /// The slowest an upload may arrive on average, in bytes a second: an upload may take
    /// `idle_timeout` plus the time its bytes take at this rate, then it is dropped with 408,
    /// so a client that trickles a byte now and then cannot hold an upload's place for ever.
    /// 0: no limit beyond `idle_timeout` between reads.
    #[cfg_attr(feature = "cli", arg(skip = MIN_UPLOAD_RATE))]
    pub min_upload_rate: u64,
    /// Connections open at once; the next waits in the system's queue until one closes.
    #[cfg_attr(feature = "cli", arg(skip = MAX_CONNECTIONS))]
    pub max_connections: usize,
    /// The rules' thresholds, as `analyze --config/--set/--disable` give them.
    #[cfg_attr(feature = "cli", arg(skip))]
    pub rules: sparkdiag_rules::Config,
    /// Money beside the savings, as `analyze --price-per-core-hour/--price-per-gb-hour` give it.
    #[cfg_attr(feature = "cli", arg(skip))]
    pub prices: sparkdiag_analysis::Prices,
    /// Redact every report, as `analyze --redact` does (the upload form otherwise offers it
    /// per upload). Pseudonyms are keyed by SPARKDIAG_REDACT_KEY if set, else by a secret
    /// drawn at start: one host reads the same in every report while the server runs.
    #[cfg_attr(feature = "cli", arg(long))]
    pub redact: bool,
    /// The secret a redacted report's pseudonyms are keyed with, so one host reads the same in
    /// every upload's report. [`Config::new`] draws one at random: pseudonyms then hold for as
    /// long as the server runs, and nobody can check a guess against one; the command line
    /// takes SPARKDIAG_REDACT_KEY's when it is set.
    #[cfg_attr(
        feature = "cli",
        arg(skip = sparkdiag_analysis::redact::key_from_environment().unwrap_or_else(random_secret))
    )]
    pub redact_key: Vec<u8>,
}

const MAX_UPLOADS: usize = 16;
const MAX_CONNECTIONS: usize = 256;

/// Apache's mod_reqtimeout asks 500 bytes a second of a body; 10 KiB a second is still a 2 GiB
/// log in 58 hours, and a trickling client gives up its place sooner.
const MIN_UPLOAD_RATE: u64 = 10 << 10;

/// The number of cores, at most 8.
fn default_workers() -> usize {
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    cores.clamp(1, 8)
}

/// `--workers N`: 0 is taken as 1, so the server always analyses.
#[cfg(feature = "cli")]
fn at_least_one(text: &str) -> Result<usize, String> {
    text.parse::<usize>()
        .map(|n| n.max(1))
        .map_err(|e| e.to_string())
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
        Config {
            bind: SocketAddr::from(([127, 0, 0, 1], 8080)),
            allow_remote: false,
            data_dir,
            max_upload: 2 << 30,
            keep: Duration::from_secs(24 * 3600),
            workers: default_workers(),
            queue: 32,
            max_uploads: MAX_UPLOADS,
            idle_timeout: Duration::from_secs(60),
            min_upload_rate: MIN_UPLOAD_RATE,
            max_connections: MAX_CONNECTIONS,
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

#[cfg(all(test, feature = "cli"))]
mod tests {
    use super::Config;
    use clap::Parser;

    #[derive(Parser)]
    struct Serve {
        #[command(flatten)]
        config: Config,
    }

    /// The defaults `--help` shows are written as text; they must be [`Config::new`]'s.
    #[test]
    fn the_flags_defaults_are_config_news() {
        let parsed = Serve::try_parse_from(["serve"]).unwrap().config;
        // Taken apart whole, so that a field added to `Config` must be added here too.
        let Config {
            bind,
            allow_remote,
            data_dir,
            max_upload,
            keep,
            workers,
            queue,
            max_uploads,
            idle_timeout,
            min_upload_rate,
            max_connections,
            redact,
            // Not flags: the rules' and prices' own flags are `analyze`'s, and the key is drawn
            // at random by both.
            rules: _,
            prices: _,
            redact_key: _,
        } = Config::new(Config::default_data_dir());
        assert_eq!(parsed.bind, bind);
        assert_eq!(parsed.allow_remote, allow_remote);
        assert_eq!(parsed.data_dir, data_dir);
        assert_eq!(parsed.max_upload, max_upload);
        assert_eq!(parsed.keep, keep);
        assert_eq!(parsed.workers, workers);
        assert_eq!(parsed.queue, queue);
        assert_eq!(parsed.max_uploads, max_uploads);
        assert_eq!(parsed.idle_timeout, idle_timeout);
        assert_eq!(parsed.min_upload_rate, min_upload_rate);
        assert_eq!(parsed.max_connections, max_connections);
        assert_eq!(parsed.redact, redact);
        let zero = Serve::try_parse_from(["serve", "--workers", "0"]).unwrap();
        assert_eq!(zero.config.workers, 1, "--workers 0 still analyses");
    }
}
