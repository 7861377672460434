//! The routes: the upload page, the upload itself (streamed to disk), each report with its
//! progress, its JSON and Markdown, and the diff of two uploads.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use axum::body::Body;
use axum::extract::multipart::MultipartRejection;
use axum::extract::{DefaultBodyLimit, Multipart, Path, Query};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use sha2::Digest;
use tokio::io::AsyncWriteExt;
use tokio::sync::Semaphore;

use crate::Config;
use crate::pages;
use crate::pool::Pool;
use crate::store::{self, Job, State as JobState, Store};
use crate::work::{self, Refused};

/// Everything a request handler shares.
#[derive(Clone)]
pub struct State {
    pub config: Arc<Config>,
    pub addr: SocketAddr,
    pub store: Arc<Store>,
    /// One permit per upload being received.
    uploads: Arc<Semaphore>,
    /// One permit per analysis queued or running: workers + queue.
    admitted: Arc<Semaphore>,
    /// The threads analyses and diffs run on, `workers` of them.
    pool: Arc<Pool>,
}

impl State {
    pub fn new(config: Config, addr: SocketAddr, store: Store, pool: Pool) -> State {
        State {
            uploads: Arc::new(Semaphore::new(config.max_uploads)),
            admitted: Arc::new(Semaphore::new(config.workers + config.queue)),
            pool: Arc::new(pool),
            config: Arc::new(config),
            addr,
            store: Arc::new(store),
        }
    }

    fn page(&self) -> pages::Site<'_> {
        pages::Site {
            shared: self.config.is_shared().then_some(self.addr),
            data_dir: self.store.root(),
            keep: self.config.keep,
            max_upload: self.config.max_upload,
            redact_all: self.config.redact,
        }
    }
}

pub fn router(state: State) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/upload", post(upload))
        .route("/r/{id}", get(report))
        .route("/r/{id}/report.json", get(report_json))
        .route("/r/{id}/report.md", get(report_markdown))
        .route("/r/{id}/status", get(status))
        .route("/diff", get(diff))
        .fallback(not_found)
        // The whole body too, so form fields other than the file, which are skipped, cannot
        // stream for ever.
        .layer(DefaultBodyLimit::max(
            usize::try_from(state.config.max_upload.saturating_add(MULTIPART_SLACK))
                .unwrap_or(usize::MAX),
        ))
        .with_state(state)
}

/// Multipart framing around the file: headers, boundaries and the form's other fields.
const MULTIPART_SLACK: u64 = 64 << 10;
/// What a 503 asks the client to wait, in seconds.
const RETRY_AFTER: &str = "5";

async fn index(axum::extract::State(state): axum::extract::State<State>) -> Response {
    let jobs = state.store.jobs();
    let mut response = html(StatusCode::OK, pages::index(&state.page(), &jobs));
    // The upload page's one inline script: drag and drop, and the upload's progress bar.
    response.headers_mut().insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; \
             connect-src 'self'; form-action 'self'; base-uri 'none'",
        ),
    );
    response
}

async fn not_found(axum::extract::State(state): axum::extract::State<State>) -> Response {
    error_page(&state, &Refused::new(404, "no such page"))
}

async fn upload(
    axum::extract::State(state): axum::extract::State<State>,
    headers: HeaderMap,
    multipart: Result<Multipart, MultipartRejection>,
) -> Response {
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > state.config.max_upload + MULTIPART_SLACK) {
        return error_page(&state, &too_large(&state));
    }
    let Ok(_receiving) = state.uploads.clone().try_acquire_owned() else {
        return busy(&state, Busy::Uploads);
    };
    if state.admitted.available_permits() == 0 {
        return busy(&state, Busy::Analyses);
    }
    let multipart = match multipart {
        Ok(m) => m,
        Err(e) => {
            return error_page(
                &state,
                &Refused::new(
                    400,
                    format!(
                        "expected a multipart/form-data upload with the file in field `log`: {e}"
                    ),
                ),
            );
        }
    };
    let received = match receive(&state, multipart).await {
        Ok(r) => r,
        Err(refused) => return error_page(&state, &refused),
    };
    // On a task of its own: a client that hangs up now must not cancel it half way, leaving a
    // job that never finishes.
    match tokio::spawn(admit(state.clone(), received)).await {
        Ok(Ok(id)) => redirect(&format!("/r/{id}")),
        Ok(Err(refused)) => error_page(&state, &refused),
        Err(e) => error_page(
            &state,
            &Refused::new(500, format!("the upload stopped: {e}")),
        ),
    }
}

/// An upload written to the incoming folder, removed when dropped unless moved on.
struct Incoming {
    path: PathBuf,
    file_name: String,
    bytes: u64,
    id: String,
    kept: bool,
    /// To be pseudonymised: the server redacts every upload, or the form asked.
    redacted: bool,
}

impl Drop for Incoming {
    fn drop(&mut self) {
        if !self.kept {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Streams the form's `log` file to disk, hashing it on the way; nothing is held whole. A
/// `redact` field before it (the form's checkbox) asks for this upload to be redacted.
async fn receive(state: &State, mut multipart: Multipart) -> Result<Incoming, Refused> {
    let mut redact_asked = false;
    let malformed = |e: axum::extract::multipart::MultipartError| {
        if e.status() == StatusCode::PAYLOAD_TOO_LARGE {
            return too_large(state);
        }
        Refused::new(
            400,
            format!("the upload's multipart body is malformed: {e}"),
        )
    };
    let pace = Pace::new(&state.config);
    loop {
        let wait = pace.wait(0).ok_or_else(|| too_slow(state))?;
        let next = tokio::time::timeout(wait, multipart.next_field()).await;
        let mut field = match next {
            Err(_) => return Err(pace.timed_out(state, wait)),
            Ok(Err(e)) => return Err(malformed(e)),
            Ok(Ok(None)) => {
                return Err(Refused::new(
                    400,
                    "the form holds no file: choose one in the field `log`",
                ));
            }
            Ok(Ok(Some(field))) => field,
        };
        if field.name() == Some("redact") {
            let value = tokio::time::timeout(wait, field.text())
                .await
                .map_err(|_| pace.timed_out(state, wait))?
                .map_err(malformed)?;
            // A checkbox sends `on`; anything but an explicit no asks for it.
            redact_asked = !matches!(value.trim(), "" | "0" | "off" | "false" | "no");
            continue;
        }
        if field.name() != Some("log") {
            continue;
        }
        let redacted = state.config.redact || redact_asked;
        let sent = field.file_name().unwrap_or("upload");
        // The name a file was sent with often is the application's id or name.
        let file_name = if redacted {
            store::redacted_name(sent)
        } else {
            sent.to_string()
        };
        let mut incoming = Incoming {
            path: state.store.incoming_path(),
            file_name,
            bytes: 0,
            id: String::new(),
            kept: false,
            redacted,
        };
        let mut file = tokio::fs::File::create(&incoming.path)
            .await
            .map_err(|e| Refused::new(500, format!("cannot write the upload: {e}")))?;
        let mut hash = sha2::Sha256::new();
        loop {
            let wait = pace.wait(incoming.bytes).ok_or_else(|| too_slow(state))?;
            let chunk = match tokio::time::timeout(wait, field.chunk()).await {
                Err(_) => return Err(pace.timed_out(state, wait)),
                Ok(Err(e)) => return Err(malformed(e)),
                Ok(Ok(None)) => break,
                Ok(Ok(Some(chunk))) => chunk,
            };
            incoming.bytes += chunk.len() as u64;
            if incoming.bytes > state.config.max_upload {
                return Err(too_large(state));
            }
            hash.update(&chunk);
            file.write_all(&chunk)
                .await
                .map_err(|e| Refused::new(500, format!("cannot write the upload: {e}")))?;
        }
        file.flush()
            .await
            .map_err(|e| Refused::new(500, format!("cannot write the upload: {e}")))?;
        if incoming.bytes == 0 {
            return Err(Refused::new(
                400,
                format!("{}: the file is empty", incoming.file_name),
            ));
        }
        let mut digest = hash.finalize();
        if incoming.redacted {
            // The same bytes redacted are another report than unredacted: another id.
            digest = sha2::Sha256::new()
                .chain_update(b"sparkdiag redacted upload\0")
                .chain_update(digest)
                .finalize();
        }
        incoming.id = digest.iter().map(|b| format!("{b:02x}")).collect();
        return Ok(incoming);
    }
}

/// How long an upload may wait for its next bytes: never more than `idle_timeout` at once, and
/// in all no more than `idle_timeout` plus what the bytes received so far earn at
/// `min_upload_rate` (as Apache's `mod_reqtimeout` extends a body's time by its rate).
struct Pace {
    started: std::time::Instant,
    idle: std::time::Duration,
    min_rate: u64,
}

impl Pace {
    fn new(config: &Config) -> Pace {
        Pace {
            started: std::time::Instant::now(),
            idle: config.idle_timeout,
            min_rate: config.min_upload_rate,
        }
    }

    /// The wait for the next bytes after `received`, or `None` when the upload is out of time.
    fn wait(&self, received: u64) -> Option<std::time::Duration> {
        if self.min_rate == 0 {
            return Some(self.idle);
        }
        let earned = std::time::Duration::from_secs_f64(received as f64 / self.min_rate as f64);
        let left = (self.idle + earned).checked_sub(self.started.elapsed())?;
        (!left.is_zero()).then_some(left.min(self.idle))
    }

    /// Why a wait of `wait` that ran out ended the upload: it stopped, or it was too slow.
    fn timed_out(&self, state: &State, wait: std::time::Duration) -> Refused {
        if wait < self.idle {
            too_slow(state)
        } else {
            stalled(state)
        }
    }
}

/// Answers a known upload from its first analysis; otherwise finds the logs in it (refusing
/// hostile archives before anything is queued), and queues the analysis.
async fn admit(state: State, mut incoming: Incoming) -> Result<String, Refused> {
    let id = incoming.id.clone();
    let job = Job {
        id: id.clone(),
        file_name: incoming.file_name.clone(),
        bytes: incoming.bytes,
        uploaded_ms: store::now_ms(),
        state: JobState::Running {
            step: "looking for event logs in the upload".into(),
        },
        redacted: incoming.redacted,
    };
    let kept = Job {
        state: JobState::Queued,
        ..job.clone()
    };
    // A place in the queue first, and only then the job: a job inserted and swept again when
    // no place was free let an upload of the same file join it in between (and be sent to a
    // job that vanished), or be inserted anew and moved into the directory the sweep then
    // deleted (a soak of mixed requests caught "cannot open" on such an upload).
    let admitted = state.admitted.clone().try_acquire_owned();
    let known = match &admitted {
        Ok(_) => state.store.insert_new(job).err(),
        Err(_) => state.store.job(&id),
    };
    if let Some(existing) = known {
        return match existing.state {
            // A file refused is refused again without unpacking it again; a failure of the
            // server's own (a full disk) is not remembered.
            JobState::Failed { status, message } => {
                if status >= 500 {
                    state.store.sweep_one(&id);
                }
                Err(Refused::new(status, message))
            }
            _ => Ok(id),
        };
    }
    let Ok(admitted) = admitted else {
        // Nothing was kept, so the same file can be sent again later.
        return Err(busy_refusal(&state, Busy::Analyses));
    };
    let upload = state
        .store
        .upload_path(&id, &store::disk_name(&incoming.file_name));
    let moved = std::fs::create_dir_all(state.store.upload_dir(&id))
        .and_then(|()| std::fs::rename(&incoming.path, &upload))
        .and_then(|()| state.store.keep_upload(&kept));
    if let Err(e) = moved {
        let refused = Refused::new(500, format!("cannot keep the upload: {e}"));
        let _ = state.store.finish(&id, failed(&refused));
        return Err(refused);
    }
    incoming.kept = true;
    let redacted = incoming.redacted;
    analyse_upload(
        state,
        id,
        upload,
        incoming.file_name.clone(),
        redacted,
        admitted,
    )
    .await
}

/// Queues again the uploads whose analysis an earlier run of the server did not finish (it was
/// stopped or killed), oldest first, each when there is room in the queue.
pub async fn resume_interrupted(state: State) {
    for job in state.store.take_interrupted() {
        let Ok(admitted) = state.admitted.clone().acquire_owned().await else {
            return;
        };
        let upload = state
            .store
            .upload_path(&job.id, &store::disk_name(&job.file_name));
        let id = job.id.clone();
        if let Err(refused) = analyse_upload(
            state.clone(),
            job.id,
            upload,
            job.file_name,
            job.redacted,
            admitted,
        )
        .await
        {
            eprintln!("sparkdiag serve: upload {id} again: {}", refused.message);
        }
    }
}

/// Finds the logs in a kept upload (refusing hostile archives before anything is queued) and
/// queues their analysis; `admitted` is its place in the queue.
async fn analyse_upload(
    state: State,
    id: String,
    upload: PathBuf,
    shown: String,
    redacted: bool,
    admitted: tokio::sync::OwnedSemaphorePermit,
) -> Result<String, Refused> {
    let unpack_into = state.store.unpack_dir();
    let redaction = redacted.then(|| work::Redaction::new(&state.config.redact_key));
    let found = {
        let (upload, shown) = (upload.clone(), shown.clone());
        let redaction = redaction.clone();
        tokio::task::spawn_blocking(move || {
            work::find_logs(&upload, &shown, &unpack_into)
                .map_err(|refused| work::Redaction::refusal(redaction.as_ref(), refused))
        })
        .await
    };
    let inputs = match found {
        Ok(Ok(inputs)) => inputs,
        Ok(Err(refused)) => {
            let _ = state.store.finish(&id, failed(&refused));
            let _ = std::fs::remove_dir_all(state.store.upload_dir(&id));
            return Err(refused);
        }
        Err(e) => {
            let refused = Refused::new(500, format!("the analysis stopped: {e}"));
            let _ = state.store.finish(&id, failed(&refused));
            return Err(refused);
        }
    };
    state.store.set_state(&id, JobState::Queued);
    let job_id = id.clone();
    tokio::spawn(async move {
        let _admitted = admitted;
        let store = state.store.clone();
        let config = state.config.clone();
        let id = job_id.clone();
        let done = state
            .pool
            .run(move || {
                let analysed = (|| {
                    let progress = |step: String| store.set_state(&id, JobState::Running { step });
                    let analyses =
                        work::analyze(&inputs, &shown, &config, redaction.as_ref(), progress)?;
                    drop(inputs);
                    let views = work::render(&analyses)?;
                    let dir = store.report_dir(&id);
                    let write = |name: &str, text: &str| {
                        std::fs::create_dir_all(&dir)
                            .and_then(|()| std::fs::write(dir.join(name), text))
                            .map_err(|e| Refused::new(500, format!("cannot write the report: {e}")))
                    };
                    write("report.html", &views.html)?;
                    write("report.json", &views.json)?;
                    write("report.md", &views.markdown)?;
                    Ok::<_, Refused>(views.apps)
                })();
                // Recorded on the worker, before it takes the next job: recorded after it, on
                // the runtime, a busy machine showed one more analysis running than workers.
                let state_now = match analysed {
                    Ok(apps) => JobState::Done { apps },
                    Err(refused) => failed(&refused),
                };
                store.finish(&id, state_now)
            })
            .await;
        let recorded = match done {
            Some(recorded) => recorded,
            // It panicked: the worker goes on, and the job is recorded as failed here.
            None => state.store.finish(
                &job_id,
                failed(&Refused::new(
                    500,
                    "the analysis stopped on an internal error",
                )),
            ),
        };
        if let Err(e) = recorded {
            eprintln!("sparkdiag serve: cannot record job {job_id}: {e}");
        }
    });
    Ok(id)
}

fn failed(refused: &Refused) -> JobState {
    JobState::Failed {
        status: refused.status,
        message: refused.message.clone(),
    }
}

async fn report(
    axum::extract::State(state): axum::extract::State<State>,
    Path(id): Path<String>,
) -> Response {
    let Some(job) = known(&state, &id) else {
        return error_page(
            &state,
            &Refused::new(
                404,
                "no such report (it may have been deleted after --keep)",
            ),
        );
    };
    match &job.state {
        JobState::Queued | JobState::Running { .. } => {
            html(StatusCode::OK, pages::progress(&state.page(), &job))
        }
        JobState::Failed { status, message } => {
            error_page(&state, &Refused::new(*status, message.clone()))
        }
        JobState::Done { .. } => {
            match std::fs::read_to_string(state.store.report_dir(&id).join("report.html")) {
                Ok(page) => html(
                    StatusCode::OK,
                    pages::framed_report(&state.page(), &job, &page),
                ),
                Err(_) => error_page(&state, &Refused::new(404, "the report has been deleted")),
            }
        }
    }
}

async fn report_json(state: axum::extract::State<State>, id: Path<String>) -> Response {
    report_file(state, id, "report.json", "application/json").await
}

async fn report_markdown(state: axum::extract::State<State>, id: Path<String>) -> Response {
    // As plain text, so a browser shows it to copy rather than saving it.
    report_file(state, id, "report.md", "text/plain; charset=utf-8").await
}

async fn report_file(
    axum::extract::State(state): axum::extract::State<State>,
    Path(id): Path<String>,
    name: &str,
    content_type: &'static str,
) -> Response {
    let done = known(&state, &id).is_some_and(|j| matches!(j.state, JobState::Done { .. }));
    let text = done
        .then(|| std::fs::read(state.store.report_dir(&id).join(name)).ok())
        .flatten();
    match text {
        Some(bytes) => (
            [
                (header::CONTENT_TYPE, HeaderValue::from_static(content_type)),
                (
                    header::X_CONTENT_TYPE_OPTIONS,
                    HeaderValue::from_static("nosniff"),
                ),
            ],
            bytes,
        )
            .into_response(),
        None => error_page(
            &state,
            &Refused::new(404, "no such report, or it is not finished"),
        ),
    }
}

/// Where job `id` stands, as JSON: `{"state": "queued" | "running" | "done" | "failed", …}`.
async fn status(
    axum::extract::State(state): axum::extract::State<State>,
    Path(id): Path<String>,
) -> Response {
    match known(&state, &id) {
        Some(job) => (
            [(header::CONTENT_TYPE, "application/json")],
            serde_json::to_string(&job).unwrap_or_default(),
        )
            .into_response(),
        None => error_page(&state, &Refused::new(404, "no such report")),
    }
}

#[derive(serde::Deserialize)]
struct DiffQuery {
    before: String,
    after: String,
}

async fn diff(
    axum::extract::State(state): axum::extract::State<State>,
    query: Result<Query<DiffQuery>, axum::extract::rejection::QueryRejection>,
) -> Response {
    let Ok(Query(q)) = query else {
        return error_page(
            &state,
            &Refused::new(400, "choose two reports to compare (before and after)"),
        );
    };
    let upload_of = |id: &str| -> Option<(PathBuf, String, bool)> {
        let job = known(&state, id).filter(|j| matches!(j.state, JobState::Done { .. }))?;
        let path = state
            .store
            .upload_path(id, &store::disk_name(&job.file_name));
        Some((path, job.file_name, job.redacted))
    };
    let (Some(before), Some(after)) = (upload_of(&q.before), upload_of(&q.after)) else {
        return error_page(
            &state,
            &Refused::new(
                404,
                "both reports must exist and be finished to compare them",
            ),
        );
    };
    let Ok(_admitted) = state.admitted.clone().try_acquire_owned() else {
        return busy(&state, Busy::Analyses);
    };
    let unpack_into = state.store.unpack_dir();
    let config = state.config.clone();
    // Either side redacted, both are, with one set of pseudonyms.
    let redaction =
        (config.redact || before.2 || after.2).then(|| work::Redaction::new(&config.redact_key));
    let page = state
        .pool
        .run(move || {
            work::diff(
                (&before.0, &before.1),
                (&after.0, &after.1),
                &unpack_into,
                &config,
                redaction.as_ref(),
            )
        })
        .await;
    match page {
        Some(Ok(page)) => html(StatusCode::OK, pages::framed_diff(&state.page(), &page)),
        Some(Err(refused)) => error_page(&state, &refused),
        None => error_page(
            &state,
            &Refused::new(500, "the diff stopped on an internal error"),
        ),
    }
}

/// The job `id` names, when `id` is a job id at all.
fn known(state: &State, id: &str) -> Option<Job> {
    store::is_id(id).then(|| state.store.job(id)).flatten()
}

fn too_large(state: &State) -> Refused {
    Refused::new(
        413,
        format!(
            "the file is larger than this server's limit of {} (sparkdiag serve --max-upload)",
            pages::bytes(state.config.max_upload)
        ),
    )
}

fn stalled(state: &State) -> Refused {
    Refused::new(
        408,
        format!(
            "the upload stopped sending for {} s and was dropped; send it again",
            state.config.idle_timeout.as_secs_f64()
        ),
    )
}

fn too_slow(state: &State) -> Refused {
    Refused::new(
        408,
        format!(
            "the upload arrived slower than {}/s on average and was dropped; send it again",
            pages::bytes(state.config.min_upload_rate)
        ),
    )
}

/// What a busy server has no room for.
#[derive(Clone, Copy)]
enum Busy {
    Uploads,
    Analyses,
}

fn busy_refusal(state: &State, what: Busy) -> Refused {
    let (limit, one, many) = match what {
        Busy::Uploads => (state.config.max_uploads, "upload", "uploads"),
        Busy::Analyses => (
            state.config.workers + state.config.queue,
            "analysis",
            "analyses",
        ),
    };
    let noun = if limit == 1 { one } else { many };
    Refused::new(
        503,
        format!("the server is busy ({limit} {noun} at once at most); try again in a few seconds"),
    )
}

fn busy(state: &State, what: Busy) -> Response {
    let mut response = error_page(state, &busy_refusal(state, what));
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER));
    response
}

fn error_page(state: &State, refused: &Refused) -> Response {
    let status = StatusCode::from_u16(refused.status).unwrap_or(StatusCode::BAD_REQUEST);
    let mut response = html(
        status,
        pages::error(&state.page(), status, &refused.message),
    );
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from_static(RETRY_AFTER));
    }
    response
}

fn html(status: StatusCode, page: String) -> Response {
    let mut response = Response::new(Body::from(page));
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    // The pages load nothing from anywhere and run no script: should anything from a log
    // slip past the escaping, the browser still would not run it.
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src data:; \
             form-action 'self'; base-uri 'none'",
        ),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

fn redirect(to: &str) -> Response {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(location) = HeaderValue::from_str(to) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    response
}
