//! S3, Azure and Google Cloud Storage through object_store: which store a URL names, how each
//! is built from the environment, the profile files and `--storage-option`, and the store
//! itself as a [`LogStore`].

use std::io::Read;
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use object_store::aws::{AmazonS3Builder, AmazonS3ConfigKey};
use object_store::azure::{AzureConfigKey, MicrosoftAzureBuilder};
use object_store::gcp::{GoogleCloudStorageBuilder, GoogleConfigKey};
use object_store::path::Path;
use object_store::{
    BackoffConfig, ClientConfigKey, GetOptions, GetRange, ObjectStore, ObjectStoreExt, RetryConfig,
};
use sparkdiag_eventlog::store::{LogStore, ObjectMeta};
use sparkdiag_eventlog::{ReadError, ReadErrorKind};

use crate::StorageOptions;
use crate::bridge::{Stream, block_on};
use crate::errors::{Secrets, classify};

/// Which kind of store a URL names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    S3,
    Azure,
    Gcs,
    HistoryServer,
}

impl Kind {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Kind::S3 => "S3",
            Kind::Azure => "Azure",
            Kind::Gcs => "Google Cloud Storage",
            Kind::HistoryServer => "the History Server",
        }
    }
}

/// A URL split into its store (`root`: scheme and bucket, as written) and the key in it.
pub(crate) struct Target {
    pub kind: Kind,
    pub root: String,
    pub key: String,
}

impl Target {
    pub(crate) fn parse(text: &str) -> Result<Target, ReadError> {
        // Shown in errors before the URL is known to be clean: never its query or credentials.
        let shown = text.split(['?', '#']).next().unwrap_or_default();
        let unsupported =
            |message: String| ReadError::new(ReadErrorKind::Unsupported, shown, None, message);
        let url = url::Url::parse(text)
            .map_err(|e| unsupported(format!("not a URL sparkdiag can read ({e})")))?;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(unsupported(
                "a query string (a SAS token, a signed URL) is not read from the URL, so that it never shows in a report: give the credential in the environment or with --storage-option (docs/inputs.md)"
                    .into(),
            ));
        }
        if url.password().is_some() {
            let shown = format!(
                "{}://{}{}",
                url.scheme(),
                url.host_str().unwrap_or_default(),
                url.path()
            );
            return Err(ReadError::new(
                ReadErrorKind::Unsupported,
                &shown,
                None,
                "credentials are not read from the URL, so that they never show in a report: give them in the environment or with --storage-option (docs/inputs.md)",
            ));
        }
        let host = url.host_str().unwrap_or_default();
        let kind = match url.scheme() {
            "s3" | "s3a" => Kind::S3,
            "gs" => Kind::Gcs,
            "az" | "abfs" | "abfss" | "azure" => Kind::Azure,
            "http" | "https" if url.path().contains("/api/v1/applications") => {
                let (base, rest) = url
                    .path()
                    .split_once("/api/v1/applications")
                    .unwrap_or_default();
                let port = url.port().map(|p| format!(":{p}")).unwrap_or_default();
                return Ok(Target {
                    kind: Kind::HistoryServer,
                    root: format!("{}://{host}{port}{base}/api/v1/applications", url.scheme()),
                    key: rest.trim_matches('/').to_string(),
                });
            }
            "http" | "https" => {
                return Err(unsupported(
                    "an http(s) URL is read as a Spark History Server's REST API (…/api/v1/applications/APP_ID; `--history-server URL APP_ID` makes one); for a bucket, use s3://, gs://, abfss:// or az://"
                        .into(),
                ));
            }
            other => {
                return Err(unsupported(format!(
                    "unknown scheme `{other}://`: sparkdiag reads s3://, gs://, abfss://, abfs://, az:// and a History Server's http(s):// URL"
                )));
            }
        };
        if host.is_empty() {
            return Err(unsupported(format!(
                "no {} after `{}://`",
                if kind == Kind::Azure {
                    "container"
                } else {
                    "bucket"
                },
                url.scheme()
            )));
        }
        // The container of abfss://container@account.dfs.core.windows.net is the URL's user.
        let user = match url.username() {
            "" => String::new(),
            user => format!("{user}@"),
        };
        let key = Path::from_url_path(url.path())
            .map_err(|e| unsupported(format!("not a valid object key ({e})")))?;
        let mut key = key.as_ref().to_string();
        if url.path().ends_with('/') && !key.is_empty() {
            key.push('/');
        }
        Ok(Target {
            kind,
            root: format!("{}://{user}{host}", url.scheme()),
            key,
        })
    }
}

/// Every `--storage-option` key some store takes.
pub fn known_option(key: &str) -> bool {
    matches!(key, "max_retries" | "retry_timeout")
        || AmazonS3ConfigKey::from_str(key).is_ok()
        || AzureConfigKey::from_str(key).is_ok()
        || GoogleConfigKey::from_str(key).is_ok()
        || ClientConfigKey::from_str(key).is_ok()
}

/// A bucket or container read through object_store.
pub(crate) struct CloudStore {
    kind: Kind,
    root: String,
    store: Arc<dyn ObjectStore>,
    runtime: Arc<tokio::runtime::Runtime>,
    secrets: Secrets,
}

impl CloudStore {
    pub(crate) fn new(
        kind: Kind,
        root: &str,
        runtime: Arc<tokio::runtime::Runtime>,
        options: &StorageOptions,
    ) -> Result<CloudStore, ReadError> {
        let secrets = Secrets::gather(options);
        let retry = retry_config(options, root)?;
        let built = match kind {
            Kind::S3 => s3(root, options, retry, &secrets),
            Kind::Azure => azure(root, options, retry),
            Kind::Gcs => gcs(root, options, retry),
            Kind::HistoryServer => unreachable!("a History Server is no object store"),
        };
        // Building reads credential files and may start a client: inside the runtime.
        let builder = built?;
        let store = {
            let _entered = runtime.enter();
            builder()
        }
        .map_err(|e| classify(kind, root, &e, &secrets))?;
        Ok(CloudStore {
            kind,
            root: root.to_string(),
            store,
            runtime,
            secrets,
        })
    }

    fn path(&self, key: &str) -> Path {
        Path::from(key.trim_end_matches('/'))
    }

    fn error(&self, key: &str, err: &object_store::Error) -> ReadError {
        classify(self.kind, &self.url(key), err, &self.secrets)
    }
}

fn meta(object: object_store::ObjectMeta) -> ObjectMeta {
    ObjectMeta {
        key: object.location.to_string(),
        len: Some(object.size),
        modified: Some(object.last_modified.into()),
    }
}

impl LogStore for CloudStore {
    fn url(&self, key: &str) -> String {
        format!("{}/{key}", self.root)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>, ReadError> {
        let path = self.path(prefix);
        let store = self.store.clone();
        let listed = block_on(&self.runtime, async move {
            let prefix = (!path.as_ref().is_empty()).then_some(&path);
            let mut listing = store.list(prefix);
            let mut found = Vec::new();
            while let Some(object) = listing.next().await {
                found.push(meta(object?));
            }
            Ok::<_, object_store::Error>(found)
        });
        listed.map_err(|e| self.error(prefix, &e))
    }

    fn head(&self, key: &str) -> Result<Option<ObjectMeta>, ReadError> {
        let path = self.path(key);
        let store = self.store.clone();
        match block_on(&self.runtime, async move { store.head(&path).await }) {
            Ok(object) => Ok(Some(meta(object))),
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(self.error(key, &e)),
        }
    }

    fn open(&self, object: &ObjectMeta) -> Result<Box<dyn Read + Send>, ReadError> {
        let path = self.path(&object.key);
        let store = self.store.clone();
        let url = self.url(&object.key);
        let (kind, secrets) = (self.kind, self.secrets.clone());
        let shown = url.clone();
        let stream = Stream::start(&self.runtime, object.len, url, move |chunks| async move {
            let body = match store.get_opts(&path, GetOptions::default()).await {
                Ok(result) => result.into_stream(),
                Err(e) => {
                    let _ = chunks.send(Err(classify(kind, &shown, &e, &secrets))).await;
                    return;
                }
            };
            crate::bridge::forward(body, chunks, |e| classify(kind, &shown, &e, &secrets)).await;
        });
        Ok(Box::new(stream))
    }

    fn read_head(&self, object: &ObjectMeta, len: usize) -> Result<Vec<u8>, ReadError> {
        let path = self.path(&object.key);
        let store = self.store.clone();
        let options = GetOptions {
            range: Some(GetRange::Bounded(0..len as u64)),
            ..GetOptions::default()
        };
        let head = block_on(&self.runtime, async move {
            // An empty object has no byte 0 to start a range at.
            if object_is_empty(&store, &path).await? {
                return Ok(bytes::Bytes::new());
            }
            store.get_opts(&path, options).await?.bytes().await
        });
        head.map(|b| b.to_vec())
            .map_err(|e| self.error(&object.key, &e))
    }

    fn read_tail(&self, object: &ObjectMeta, len: usize) -> Result<Vec<u8>, ReadError> {
        let path = self.path(&object.key);
        let store = self.store.clone();
        let known = object.len;
        let tail = block_on(&self.runtime, async move {
            // The listing's length names the range; a bounded one, which every store and
            // emulator answers (not all take a suffix range).
            let size = match known {
                Some(size) => size,
                None => store.head(&path).await?.size,
            };
            if size == 0 {
                return Ok(bytes::Bytes::new());
            }
            let options = GetOptions {
                range: Some(GetRange::Bounded(size.saturating_sub(len as u64)..size)),
                ..GetOptions::default()
            };
            store.get_opts(&path, options).await?.bytes().await
        });
        tail.map(|b| b.to_vec())
            .map_err(|e| self.error(&object.key, &e))
    }
}

async fn object_is_empty(
    store: &Arc<dyn ObjectStore>,
    path: &Path,
) -> Result<bool, object_store::Error> {
    Ok(store.head(path).await?.size == 0)
}

type Build = Box<dyn FnOnce() -> Result<Arc<dyn ObjectStore>, object_store::Error>>;

/// Retries of a failed request or a cut download (resumed where it stopped): object_store's
/// ten over at most three minutes, unless `max_retries` or `retry_timeout` (seconds) say.
fn retry_config(options: &StorageOptions, root: &str) -> Result<RetryConfig, ReadError> {
    let mut retry = RetryConfig {
        backoff: BackoffConfig {
            init_backoff: Duration::from_millis(100),
            max_backoff: Duration::from_secs(15),
            base: 2.,
        },
        ..RetryConfig::default()
    };
    let number = |key: &str| -> Result<Option<u64>, ReadError> {
        options
            .get(key)
            .map(|v| {
                v.parse::<u64>().map_err(|_| {
                    ReadError::new(
                        ReadErrorKind::Unsupported,
                        root,
                        None,
                        format!("--storage-option {key}: expected a whole number"),
                    )
                })
            })
            .transpose()
    };
    if let Some(n) = number("max_retries")? {
        retry.max_retries = n as usize;
    }
    if let Some(s) = number("retry_timeout")? {
        retry.retry_timeout = Duration::from_secs(s);
    }
    Ok(retry)
}

/// Applies the options this store takes; an option of another store is left to it.
fn apply<K: FromStr>(options: &StorageOptions, mut set: impl FnMut(K, &str)) {
    for (key, value) in &options.pairs {
        if let Ok(key) = key.parse::<K>() {
            set(key, value);
        }
    }
}

/// An endpoint given as plain `http://` (an emulator, a private gateway) is used as given.
fn allows_plain_http(endpoint: Option<String>) -> bool {
    endpoint.is_some_and(|e| e.starts_with("http://"))
}

fn s3(
    root: &str,
    options: &StorageOptions,
    retry: RetryConfig,
    secrets: &Secrets,
) -> Result<Build, ReadError> {
    let mut builder = AmazonS3Builder::from_env().with_url(root);
    apply(options, |key: AmazonS3ConfigKey, value| {
        builder = std::mem::take(&mut builder).with_config(key, value);
    });
    let has_keys = builder
        .get_config_value(&AmazonS3ConfigKey::AccessKeyId)
        .is_some();
    if !has_keys && let Some(profile) = aws_profile::load() {
        builder = builder
            .with_access_key_id(profile.access_key_id)
            .with_secret_access_key(profile.secret_access_key);
        if let Some(token) = profile.session_token {
            builder = builder.with_token(token);
        }
        if std::env::var_os("AWS_REGION").is_none()
            && std::env::var_os("AWS_DEFAULT_REGION").is_none()
            && let Some(region) = profile.region
        {
            builder = builder.with_region(region);
        }
        secrets.add(builder.get_config_value(&AmazonS3ConfigKey::SecretAccessKey));
        secrets.add(builder.get_config_value(&AmazonS3ConfigKey::Token));
    }
    let endpoint = builder.get_config_value(&AmazonS3ConfigKey::Endpoint);
    if allows_plain_http(endpoint) {
        builder = builder.with_allow_http(true);
    }
    let skip_signature = builder
        .get_config_value(&AmazonS3ConfigKey::SkipSignature)
        .is_some_and(|v| v == "true");
    let chain_has_something = builder
        .get_config_value(&AmazonS3ConfigKey::AccessKeyId)
        .is_some()
        || skip_signature
        || std::env::var_os("AWS_WEB_IDENTITY_TOKEN_FILE").is_some()
        || std::env::var_os("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI").is_some()
        || std::env::var_os("AWS_CONTAINER_CREDENTIALS_FULL_URI").is_some();
    let metadata_disabled =
        std::env::var("AWS_EC2_METADATA_DISABLED").is_ok_and(|v| v.eq_ignore_ascii_case("true"));
    if !chain_has_something && metadata_disabled {
        return Err(crate::errors::no_credentials(Kind::S3, root));
    }
    let builder = builder.with_retry(retry);
    Ok(Box::new(move || Ok(Arc::new(builder.build()?) as _)))
}

fn azure(root: &str, options: &StorageOptions, retry: RetryConfig) -> Result<Build, ReadError> {
    let mut builder = MicrosoftAzureBuilder::from_env().with_url(root);
    apply(options, |key: AzureConfigKey, value| {
        builder = std::mem::take(&mut builder).with_config(key, value);
    });
    let endpoint = builder.get_config_value(&AzureConfigKey::Endpoint);
    if allows_plain_http(endpoint) {
        builder = builder.with_allow_http(true);
    }
    let builder = builder.with_retry(retry);
    Ok(Box::new(move || Ok(Arc::new(builder.build()?) as _)))
}

fn gcs(root: &str, options: &StorageOptions, retry: RetryConfig) -> Result<Build, ReadError> {
    let mut builder = GoogleCloudStorageBuilder::from_env().with_url(root);
    apply(options, |key: GoogleConfigKey, value| {
        builder = std::mem::take(&mut builder).with_config(key, value);
    });
    let base = builder.get_config_value(&GoogleConfigKey::BaseUrl);
    if allows_plain_http(base) {
        builder = builder.with_config(GoogleConfigKey::Client(ClientConfigKey::AllowHttp), "true");
    }
    let builder = builder.with_retry(retry);
    Ok(Box::new(move || Ok(Arc::new(builder.build()?) as _)))
}

/// The AWS CLI's profile files (`~/.aws/credentials`, then `~/.aws/config`), which object_store
/// does not read: the profile `AWS_PROFILE` names, else `default`.
mod aws_profile {
    use super::PathBuf;

    pub(crate) struct Profile {
        pub access_key_id: String,
        pub secret_access_key: String,
        pub session_token: Option<String>,
        pub region: Option<String>,
    }

    pub(crate) fn load() -> Option<Profile> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        let credentials = std::env::var_os("AWS_SHARED_CREDENTIALS_FILE")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws/credentials")))?;
        let config = std::env::var_os("AWS_CONFIG_FILE")
            .map(PathBuf::from)
            .or_else(|| home.as_ref().map(|h| h.join(".aws/config")));
        let name = std::env::var("AWS_PROFILE").unwrap_or_else(|_| "default".into());
        let from_credentials = section(&std::fs::read_to_string(credentials).ok()?, &name);
        let config_section = if name == "default" {
            name.clone()
        } else {
            format!("profile {name}")
        };
        let from_config = config
            .and_then(|c| std::fs::read_to_string(c).ok())
            .map(|text| section(&text, &config_section))
            .unwrap_or_default();
        let get = |key: &str| {
            from_credentials
                .iter()
                .chain(&from_config)
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        Some(Profile {
            access_key_id: get("aws_access_key_id")?,
            secret_access_key: get("aws_secret_access_key")?,
            session_token: get("aws_session_token"),
            region: get("region"),
        })
    }

    /// The `key = value` lines of `[name]` in an INI file.
    fn section(text: &str, name: &str) -> Vec<(String, String)> {
        let mut inside = false;
        let mut found = Vec::new();
        for line in text.lines().map(str::trim) {
            if let Some(header) = line.strip_prefix('[').and_then(|l| l.strip_suffix(']')) {
                inside = header.trim() == name;
            } else if inside && let Some((key, value)) = line.split_once('=') {
                found.push((key.trim().to_ascii_lowercase(), value.trim().to_string()));
            }
        }
        found
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn a_profile_is_read_from_its_section() {
            let text = "[default]\naws_access_key_id = A\n\n[work]\naws_access_key_id=B\naws_secret_access_key = S\n";
            let work = super::section(text, "work");
            assert_eq!(
                work,
                [
                    ("aws_access_key_id".into(), "B".into()),
                    ("aws_secret_access_key".into(), "S".into())
                ]
            );
            assert_eq!(super::section(text, "default").len(), 1);
            assert!(super::section(text, "none").is_empty());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(url: &str) -> (Kind, String, String) {
        let t = Target::parse(url).unwrap_or_else(|e| panic!("{url}: {e}"));
        (t.kind, t.root, t.key)
    }

    /// Both Azure forms keep the whole key (object_store 0.12 dropped the first segment of
    /// `az://` paths).
    #[test]
    fn each_cloud_url_names_its_store_and_key() {
        assert_eq!(
            parsed("s3://bucket/cluster-logs/app-1.zstd"),
            (
                Kind::S3,
                "s3://bucket".into(),
                "cluster-logs/app-1.zstd".into()
            )
        );
        assert_eq!(
            parsed("s3a://bucket/logs/"),
            (Kind::S3, "s3a://bucket".into(), "logs/".into())
        );
        assert_eq!(
            parsed("gs://bucket"),
            (Kind::Gcs, "gs://bucket".into(), String::new())
        );
        assert_eq!(
            parsed("abfss://logs@acct.dfs.core.windows.net/a/b/eventlog"),
            (
                Kind::Azure,
                "abfss://logs@acct.dfs.core.windows.net".into(),
                "a/b/eventlog".into()
            )
        );
        assert_eq!(
            parsed("az://logs/a/b/eventlog"),
            (Kind::Azure, "az://logs".into(), "a/b/eventlog".into())
        );
        assert_eq!(
            parsed("http://127.0.0.1:18080/api/v1/applications/app-1"),
            (
                Kind::HistoryServer,
                "http://127.0.0.1:18080/api/v1/applications".into(),
                "app-1".into()
            )
        );
    }

    #[test]
    fn secrets_in_a_url_are_refused_and_never_shown() {
        for url in [
            "az://logs/app?sv=2024&sig=TOPSECRET",
            "s3://AKIA:TOPSECRET@bucket/app",
            "https://acct.blob.core.windows.net/logs/app?sig=TOPSECRET",
        ] {
            let err = match Target::parse(url) {
                Err(err) => err,
                Ok(_) => panic!("{url} accepted"),
            };
            assert_eq!(err.kind, ReadErrorKind::Unsupported);
            assert!(!err.to_string().contains("TOPSECRET"), "{err}");
        }
    }
}
