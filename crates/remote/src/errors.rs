//! What a store's failure means to the user: its kind, what failed and what to do, with every
//! secret taken out.

use std::sync::{Arc, Mutex};

use sparkdiag_eventlog::{ReadError, ReadErrorKind};

use crate::StorageOptions;
use crate::cloud::Kind;

/// Secret values this process knows (from `--storage-option`, the environment, profile
/// files), to be taken out of any text a store's error carries: a server's answer or a client's
/// message may quote a token or a signed URL.
#[derive(Clone, Default)]
pub(crate) struct Secrets(Arc<Mutex<Vec<String>>>);

impl Secrets {
    pub(crate) fn gather(options: &StorageOptions) -> Secrets {
        let secrets = Secrets::default();
        for (key, value) in &options.pairs {
            if is_secret_name(key) {
                secrets.add(Some(value.clone()));
            }
        }
        for (key, value) in std::env::vars() {
            if is_secret_name(&key.to_ascii_lowercase()) {
                secrets.add(Some(value));
            }
        }
        secrets
    }

    pub(crate) fn add(&self, value: Option<String>) {
        // Short values ("true", a region) are no secrets and would blank out ordinary words.
        if let Some(value) = value.filter(|v| v.len() >= 8) {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).push(value);
        }
    }

    /// `text` without any known secret, and without the query of any URL in it (a SAS token
    /// or a signature).
    pub(crate) fn redact(&self, text: &str) -> String {
        let mut out = strip_url_queries(text);
        for secret in self.0.lock().unwrap_or_else(|e| e.into_inner()).iter() {
            out = out.replace(secret.as_str(), "[redacted]");
        }
        out
    }
}

fn is_secret_name(name: &str) -> bool {
    [
        "secret",
        "token",
        "sas",
        "password",
        "account_key",
        "access_key",
        "master_key",
        "service_account_key",
        "signature",
    ]
    .iter()
    .any(|word| name.contains(word))
}

/// Every `http(s)://…?query` in `text` with its query replaced by `?[redacted]`.
fn strip_url_queries(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("http") {
        let (before, from) = rest.split_at(start);
        out.push_str(before);
        let end = from
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | '"' | '\'' | '>' | '<'))
            .unwrap_or(from.len());
        let url = &from[..end];
        match url.split_once('?') {
            Some((base, _)) if url.contains("://") => {
                out.push_str(base);
                out.push_str("?[redacted]");
            }
            _ => out.push_str(url),
        }
        rest = &from[end..];
    }
    out.push_str(rest);
    out
}

/// The text of an error and all its causes, redacted and cut to a readable length.
fn detail(err: &(dyn std::error::Error + 'static), secrets: &Secrets) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let more = cause.to_string();
        if !text.contains(&more) {
            text.push_str(": ");
            text.push_str(&more);
        }
        source = cause.source();
    }
    let text = secrets.redact(&text);
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if text.chars().count() > 400 {
        text.chars().take(400).collect::<String>() + "…"
    } else {
        text
    }
}

/// The cause behind a [`ReadError`]: the store's own words, with secrets taken out.
#[derive(Debug)]
pub(crate) struct Redacted(pub String);

impl std::fmt::Display for Redacted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Redacted {}

/// Whether a connection to the store could not be made or was cut.
fn is_connection_failure(err: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(err);
    while let Some(cause) = source {
        if let Some(http) = cause.downcast_ref::<object_store::client::HttpError>() {
            use object_store::client::HttpErrorKind as K;
            if matches!(
                http.kind(),
                K::Connect | K::Request | K::Timeout | K::Interrupted
            ) {
                return true;
            }
        }
        if let Some(io) = cause.downcast_ref::<std::io::Error>()
            && matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::ConnectionReset
                    | std::io::ErrorKind::ConnectionAborted
                    | std::io::ErrorKind::UnexpectedEof
                    | std::io::ErrorKind::TimedOut
            )
        {
            return true;
        }
        source = cause.source();
    }
    false
}

/// The HTTP status a store answered with, as its error text gives it.
fn status(detail: &str) -> Option<u16> {
    let at = detail.find("status code: ")? + "status code: ".len();
    detail[at..].get(..3)?.parse().ok()
}

/// What each cloud's credential chain looked at, for an error that found nothing.
pub(crate) fn credential_chain(kind: Kind) -> &'static str {
    match kind {
        Kind::S3 => {
            "AWS_ACCESS_KEY_ID with AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), the profile AWS_PROFILE names (else `default`) in ~/.aws/credentials and ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE), AWS_WEB_IDENTITY_TOKEN_FILE with AWS_ROLE_ARN, AWS_CONTAINER_CREDENTIALS_RELATIVE_URI or AWS_CONTAINER_CREDENTIALS_FULL_URI, then the instance metadata service (unless AWS_EC2_METADATA_DISABLED=true); a public bucket needs --storage-option aws_skip_signature=true"
        }
        Kind::Azure => {
            "AZURE_STORAGE_ACCOUNT_KEY, AZURE_STORAGE_SAS_KEY, AZURE_STORAGE_TOKEN, AZURE_STORAGE_CLIENT_ID with AZURE_STORAGE_CLIENT_SECRET and AZURE_STORAGE_TENANT_ID, AZURE_FEDERATED_TOKEN_FILE (workload identity), the Azure CLI (AZURE_USE_AZURE_CLI=true), then managed identity; the account comes from the abfss:// URL or AZURE_STORAGE_ACCOUNT_NAME"
        }
        Kind::Gcs => {
            "GOOGLE_SERVICE_ACCOUNT (a key file) or GOOGLE_SERVICE_ACCOUNT_KEY, GOOGLE_APPLICATION_CREDENTIALS, gcloud's application-default credentials (~/.config/gcloud/application_default_credentials.json), then the instance metadata server"
        }
        Kind::HistoryServer => "nothing: the History Server is read without credentials",
    }
}

/// No credentials anywhere in the chain.
pub(crate) fn no_credentials(kind: Kind, shown: &str) -> ReadError {
    ReadError::new(
        ReadErrorKind::Credentials,
        shown,
        None,
        format!(
            "no {} credentials found; looked for {}",
            kind.name(),
            credential_chain(kind)
        ),
    )
}

/// A store's failure as a [`ReadError`] naming `shown`.
pub(crate) fn classify(
    kind: Kind,
    shown: &str,
    err: &object_store::Error,
    secrets: &Secrets,
) -> ReadError {
    let detail = detail(err, secrets);
    let lower = detail.to_ascii_lowercase();
    let (container, object) = match kind {
        Kind::Azure => ("container or account", "blob"),
        _ => ("bucket", "object"),
    };
    let no_bucket = [
        "nosuchbucket",
        "containernotfound",
        "bucket does not exist",
        "the specified container does not exist",
    ]
    .iter()
    .any(|w| lower.contains(w));
    let (read_kind, message) = match err {
        object_store::Error::NotFound { .. } if no_bucket => (
            ReadErrorKind::NotFound,
            format!("no such {container}: check its name (and the region or account)"),
        ),
        object_store::Error::NotFound { .. } => (
            ReadErrorKind::NotFound,
            format!("no such {object}: check the name"),
        ),
        object_store::Error::PermissionDenied { .. } => {
            (ReadErrorKind::PermissionDenied, denied(kind))
        }
        object_store::Error::Unauthenticated { .. } => (
            ReadErrorKind::Credentials,
            format!(
                "the credentials were rejected (expired, or for another account); they come from {}",
                credential_chain(kind)
            ),
        ),
        object_store::Error::UnknownConfigurationKey { key, .. } => (
            ReadErrorKind::Unsupported,
            format!(
                "{} takes no option `{key}` (docs/inputs.md lists each store's)",
                kind.name()
            ),
        ),
        _ if no_bucket || status(&detail) == Some(404) => (
            ReadErrorKind::NotFound,
            format!("no such {container}: check its name (and the region or account)"),
        ),
        _ if status(&detail) == Some(403) => (ReadErrorKind::PermissionDenied, denied(kind)),
        _ if status(&detail) == Some(401) => (
            ReadErrorKind::Credentials,
            format!(
                "the credentials were rejected (expired, or for another account); they come from {}",
                credential_chain(kind)
            ),
        ),
        _ if lower.contains("credential")
            || (lower.contains("token") && lower.contains("fetch")) =>
        {
            (
                ReadErrorKind::Credentials,
                format!(
                    "no usable {} credentials; looked for {}",
                    kind.name(),
                    credential_chain(kind)
                ),
            )
        }
        _ if is_connection_failure(err) => (
            ReadErrorKind::Connection,
            format!(
                "cannot reach {} or the connection was cut (after retries): check the network, the endpoint and any proxy, then run again",
                kind.name()
            ),
        ),
        _ => (ReadErrorKind::Io, format!("{} failed", kind.name())),
    };
    ReadError::new(read_kind, shown, None, message).with_source(Redacted(detail))
}

fn denied(kind: Kind) -> String {
    match kind {
        Kind::S3 => "access denied: these credentials may not read it; check the IAM policy (s3:ListBucket on the bucket, s3:GetObject on the keys) and the bucket policy".into(),
        Kind::Azure => "access denied: these credentials may not read it; check the key or SAS (read and list permissions), or the role assignment (Storage Blob Data Reader)".into(),
        Kind::Gcs => "access denied: these credentials may not read it; check the IAM role on the bucket (Storage Object Viewer)".into(),
        Kind::HistoryServer => "access denied by the History Server (its ACLs: spark.history.ui.acls.enable)".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_lose_their_queries_and_known_secrets_their_values() {
        let secrets = Secrets::default();
        secrets.add(Some("wJalrXUtnFEMI/K7MDENG".into()));
        let text = "error sending request for url (https://acct.blob.core.windows.net/c/b?sv=2024&sig=abc%2F) key wJalrXUtnFEMI/K7MDENG";
        let clean = secrets.redact(text);
        assert_eq!(
            clean,
            "error sending request for url (https://acct.blob.core.windows.net/c/b?[redacted]) key [redacted]"
        );
    }

    #[test]
    fn a_status_is_read_from_the_error_text() {
        assert_eq!(
            status("Server returned non-2xx status code: 403 Forbidden: <Error>"),
            Some(403)
        );
        assert_eq!(status("Connection refused"), None);
    }
}
