//! The bounded blocking bridge: object_store and the History Server's client are async, the
//! reader is a blocking `Read` on its own thread. A task on the store's runtime pulls the
//! download's chunks into a channel of a few chunks; the reader takes them as it decodes, so
//! the network runs ahead of the decoder by at most that much.

use std::future::Future;
use std::io::{self, Read};

use bytes::Bytes;
use futures_util::{Stream as FuturesStream, StreamExt};
use sparkdiag_eventlog::store::store_failure;
use sparkdiag_eventlog::{ReadError, ReadErrorKind};
use tokio::runtime::Runtime;
use tokio::sync::mpsc;

/// Chunks in flight between the download and the reader. A chunk is what the HTTP client read
/// at once (at most a few hundred KiB), so a download holds at most a few MiB.
const IN_FLIGHT: usize = 16;

/// What the download task sends: the next chunk, or why there is none.
pub(crate) type Chunk = Result<Bytes, ReadError>;

/// Runs `work` on the store's runtime and waits for it, from a thread outside the runtime.
pub(crate) fn block_on<F: Future + Send + 'static>(runtime: &Runtime, work: F) -> F::Output
where
    F::Output: Send + 'static,
{
    runtime.block_on(work)
}

/// Sends each chunk of `body` on, mapping its error; stops when the reader has gone.
pub(crate) async fn forward<E>(
    mut body: impl FuturesStream<Item = Result<Bytes, E>> + Unpin,
    chunks: mpsc::Sender<Chunk>,
    error: impl Fn(E) -> ReadError,
) {
    while let Some(chunk) = body.next().await {
        let failed = chunk.is_err();
        if chunks.send(chunk.map_err(&error)).await.is_err() || failed {
            return;
        }
    }
}

/// One object's bytes as a blocking `Read`.
pub(crate) struct Stream {
    chunks: mpsc::Receiver<Chunk>,
    current: Bytes,
    read: u64,
    len: Option<u64>,
    url: String,
    task: tokio::task::JoinHandle<()>,
}

impl Stream {
    /// Starts `download`, which sends the object's chunks (or its error) and returns at the
    /// end. `len`, when known, tells a download that ended early from a whole one.
    pub(crate) fn start<F, Fut>(
        runtime: &Runtime,
        len: Option<u64>,
        url: String,
        download: F,
    ) -> Stream
    where
        F: FnOnce(mpsc::Sender<Chunk>) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let (sender, chunks) = mpsc::channel(IN_FLIGHT);
        let task = runtime.spawn(download(sender));
        Stream {
            chunks,
            current: Bytes::new(),
            read: 0,
            len,
            url,
            task,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.current.is_empty() {
            match self.chunks.blocking_recv() {
                Some(Ok(chunk)) => self.current = chunk,
                Some(Err(failure)) => return Err(store_failure(failure)),
                None => match self.len {
                    Some(len) if self.read < len => {
                        return Err(store_failure(ReadError::new(
                            ReadErrorKind::Connection,
                            &self.url,
                            Some(self.read),
                            format!(
                                "the download ended after {} of its {len} bytes: run again, or copy the log down first",
                                self.read
                            ),
                        )));
                    }
                    _ => return Ok(0),
                },
            }
        }
        let n = self.current.len().min(buf.len());
        buf[..n].copy_from_slice(&self.current[..n]);
        bytes::Buf::advance(&mut self.current, n);
        self.read += n as u64;
        Ok(n)
    }
}

impl Drop for Stream {
    /// A reader that stops early (an unreadable log, a stopped run) ends its download.
    fn drop(&mut self) {
        self.task.abort();
    }
}
