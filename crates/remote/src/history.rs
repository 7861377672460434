//! A Spark History Server as a store: its REST API lists the applications
//! (`/api/v1/applications`) and streams each one's event logs as a zip
//! (`/api/v1/applications/{id}[/{attempt}]/logs`), which is unpacked as any archive is.

use std::io::Read;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde::Deserialize;
use sparkdiag_eventlog::store::{LogStore, ObjectMeta};
use sparkdiag_eventlog::{ReadError, ReadErrorKind};

use crate::StorageOptions;
use crate::bridge::{Stream, block_on};
use crate::errors::Redacted;

/// One application as `/api/v1/applications` lists it (the fields read here).
#[derive(Deserialize)]
struct Application {
    id: String,
    #[serde(default)]
    attempts: Vec<Attempt>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Attempt {
    attempt_id: Option<String>,
    last_updated_epoch: Option<u64>,
}

pub(crate) struct HistoryServer {
    /// `http(s)://host:port[/proxy-base]/api/v1/applications`.
    root: String,
    client: reqwest::Client,
    runtime: Arc<tokio::runtime::Runtime>,
}

impl HistoryServer {
    pub(crate) fn new(
        root: &str,
        runtime: Arc<tokio::runtime::Runtime>,
        _options: &StorageOptions,
    ) -> Result<HistoryServer, ReadError> {
        let client = {
            let _entered = runtime.enter();
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(10))
                .build()
        }
        .map_err(|e| {
            ReadError::new(ReadErrorKind::Io, root, None, "cannot make an HTTP client")
                .with_source(Redacted(e.to_string()))
        })?;
        Ok(HistoryServer {
            root: root.to_string(),
            client,
            runtime,
        })
    }

    /// The JSON at `url`, or what failed.
    fn get_json<T: serde::de::DeserializeOwned + Send + 'static>(
        &self,
        url: String,
    ) -> Result<T, Failure> {
        let client = self.client.clone();
        let answer = block_on(&self.runtime, async move {
            let response = client.get(&url).send().await?;
            let status = response.status();
            let body = response.bytes().await?;
            Ok::<_, reqwest::Error>((status, body))
        });
        let (status, body) = answer.map_err(Failure::Request)?;
        if !status.is_success() {
            return Err(Failure::Status(status.as_u16()));
        }
        serde_json::from_slice(&body).map_err(|e| Failure::Answer(e.to_string()))
    }

    fn error(&self, shown: &str, failure: Failure) -> ReadError {
        server_error(&self.root, shown, failure)
    }

    /// One entry per attempt for applications with numbered attempts (YARN, Kubernetes with
    /// retries): `APP/ATTEMPT`; else one per application.
    fn entries(app: &Application) -> Vec<ObjectMeta> {
        let modified = |attempts: &mut dyn Iterator<Item = &Attempt>| {
            attempts
                .filter_map(|a| a.last_updated_epoch)
                .max()
                .map(|ms| SystemTime::UNIX_EPOCH + Duration::from_millis(ms))
        };
        if app.attempts.iter().any(|a| a.attempt_id.is_some()) {
            app.attempts
                .iter()
                .map(|attempt| ObjectMeta {
                    key: format!(
                        "{}/{}",
                        app.id,
                        attempt.attempt_id.as_deref().unwrap_or_default()
                    ),
                    len: None,
                    modified: modified(&mut std::iter::once(attempt)),
                })
                .collect()
        } else {
            vec![ObjectMeta {
                key: app.id.clone(),
                len: None,
                modified: modified(&mut app.attempts.iter()),
            }]
        }
    }
}

enum Failure {
    Request(reqwest::Error),
    Status(u16),
    Answer(String),
}

impl LogStore for HistoryServer {
    fn url(&self, key: &str) -> String {
        if key.is_empty() {
            self.root.clone()
        } else {
            format!("{}/{key}", self.root)
        }
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, ReadError> {
        let apps: Vec<Application> = self
            .get_json(self.root.clone())
            .map_err(|f| self.error(&self.url(prefix), f))?;
        Ok(apps
            .iter()
            .flat_map(Self::entries)
            .filter(|entry| entry.key.starts_with(prefix))
            .collect())
    }

    fn head(&self, key: &str) -> Result<Option<ObjectMeta>, ReadError> {
        let app_id = key.split('/').next().unwrap_or_default();
        let app: Application = self
            .get_json(format!("{}/{app_id}", self.root))
            .map_err(|f| self.error(&self.url(key), f))?;
        let entries = Self::entries(&app);
        if let Some(entry) = entries.iter().find(|e| e.key == key) {
            return Ok(Some(entry.clone()));
        }
        if key == app_id {
            // An application with numbered attempts is a folder of them.
            return Ok(None);
        }
        Err(self.error(&self.url(key), Failure::Status(404)))
    }

    fn open(&self, object: &ObjectMeta) -> Result<Box<dyn Read + Send>, ReadError> {
        let url = format!("{}/{}/logs", self.root, object.key);
        let shown = self.url(&object.key);
        let client = self.client.clone();
        let root = self.root.clone();
        let stream = Stream::start(
            &self.runtime,
            None,
            shown.clone(),
            move |chunks| async move {
                let response = match client.get(&url).send().await {
                    Ok(r) if r.status().is_success() => r,
                    Ok(r) => {
                        let failure = Failure::Status(r.status().as_u16());
                        let _ = chunks.send(Err(server_error(&root, &shown, failure))).await;
                        return;
                    }
                    Err(e) => {
                        let _ = chunks
                            .send(Err(server_error(&root, &shown, Failure::Request(e))))
                            .await;
                        return;
                    }
                };
                crate::bridge::forward(response.bytes_stream(), chunks, |e| {
                    server_error(&root, &shown, Failure::Request(e))
                })
                .await;
            },
        );
        Ok(Box::new(stream))
    }
}

/// What a failed request to the server at `root` means.
fn server_error(root: &str, shown: &str, failure: Failure) -> ReadError {
    let server = root.trim_end_matches("/api/v1/applications");
    match failure {
        Failure::Status(404) => ReadError::new(
            ReadErrorKind::NotFound,
            shown,
            None,
            format!(
                "the History Server at {server} has no such application: check the id (`sparkdiag batch --history-server {server}` reads every one it lists)"
            ),
        ),
        Failure::Status(status @ (401 | 403)) => ReadError::new(
            ReadErrorKind::PermissionDenied,
            shown,
            None,
            format!(
                "the History Server refused access (HTTP {status}): its ACLs (spark.history.ui.acls.enable) or an authenticating proxy in front of it"
            ),
        ),
        Failure::Status(status) => ReadError::new(
            ReadErrorKind::Io,
            shown,
            None,
            format!("the History Server answered HTTP {status}"),
        ),
        Failure::Request(e) => ReadError::new(
            ReadErrorKind::Connection,
            shown,
            None,
            format!(
                "cannot reach the History Server at {server}, or the connection was cut: is it running, and is that its address and port?"
            ),
        )
        .with_source(Redacted(e.to_string())),
        Failure::Answer(e) => ReadError::new(
            ReadErrorKind::Io,
            shown,
            None,
            format!(
                "the answer is not the History Server's REST API (is {server} a Spark History Server?)"
            ),
        )
        .with_source(Redacted(e)),
    }
}
