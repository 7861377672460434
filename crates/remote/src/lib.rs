//! Reads Spark event logs where they live: Amazon S3, Azure Blob Storage and ADLS Gen2, Google
//! Cloud Storage, and a Spark History Server's REST API.
//!
//! Each is a [`sparkdiag_eventlog::store::LogStore`]; [`install`] puts a [`Remote`] registry in
//! front of `sparkdiag_eventlog::discover`, so `s3://…`, `gs://…`, `abfss://…`, `az://…` and a
//! History Server's `http(s)://…/api/v1/applications/…` are found and read exactly as a local
//! path is, by every command.
//!
//! - Objects are read as streams (no copy to disk, memory bounded by a few chunks in flight);
//!   a download cut mid-way is resumed from where it stopped with a ranged read.
//! - Credentials come from each cloud's standard chain (environment, AWS profile files, web
//!   and workload identity, container and instance metadata); endpoints and everything else
//!   from the environment or [`StorageOptions`] (`--storage-option KEY=VALUE`).
//! - Errors say what failed and what to do, with a [`sparkdiag_eventlog::ReadErrorKind`];
//!   no key, token, SAS or signed URL ever appears in one.

mod bridge;
mod cloud;
mod errors;
mod history;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sparkdiag_eventlog::store::{LogStore, StoreRegistry};
use sparkdiag_eventlog::{ReadError, ReadErrorKind};

pub use cloud::known_option;

/// `--storage-option KEY=VALUE` pairs, in the order given; a later one wins. The keys are
/// object_store's (`aws_endpoint`, `azure_storage_account_key`, `google_service_account`,
/// `allow_http`, …; docs/inputs.md lists them) and sparkdiag's own `max_retries` and
/// `retry_timeout`. With the `cli` feature they parse as the flag, whose help is `pairs`'
/// documentation.
#[derive(Debug, Clone, Default)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct StorageOptions {
    /// An option of the store an s3://, gs://, abfss:// or az:// path names (repeatable), e.g.
    /// aws_endpoint=http://127.0.0.1:9000, aws_region=eu-west-1, azure_storage_account_name=acct,
    /// google_service_account=key.json, max_retries=3. Credentials come from each cloud's
    /// usual chain (environment, profile files, instance or workload identity); an option wins
    /// over the environment. docs/inputs.md lists every key.
    #[cfg_attr(
        feature = "cli",
        arg(long = "storage-option", value_name = "KEY=VALUE", value_parser = StorageOptions::parse_pair)
    )]
    pub pairs: Vec<(String, String)>,
}

impl StorageOptions {
    /// Parses one `KEY=VALUE`; the value is never echoed in the error (it may be a secret).
    pub fn parse_pair(text: &str) -> Result<(String, String), String> {
        let (key, value) = text
            .split_once('=')
            .ok_or_else(|| "expected KEY=VALUE, e.g. aws_region=eu-west-1".to_string())?;
        let key = key.trim().to_ascii_lowercase();
        if !known_option(&key) {
            return Err(format!(
                "unknown storage option `{key}`: docs/inputs.md lists the options of each store"
            ));
        }
        Ok((key, value.to_string()))
    }

    fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }
}

/// The stores behind remote URLs, made once per bucket (or container, or server) and shared
/// by every log read from it; the runtime that runs their requests.
pub struct Remote {
    runtime: Arc<tokio::runtime::Runtime>,
    options: StorageOptions,
    stores: Mutex<HashMap<String, Arc<dyn LogStore>>>,
}

impl Remote {
    /// A registry with these options. Its runtime has two threads: requests wait on the
    /// network, not the CPU, and the decoding and parsing threads do the work.
    pub fn new(options: StorageOptions) -> std::io::Result<Remote> {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("sparkdiag-remote")
            .enable_all()
            .build()?;
        Ok(Remote {
            runtime: Arc::new(runtime),
            options,
            stores: Mutex::new(HashMap::new()),
        })
    }
}

impl StoreRegistry for Remote {
    fn store_for(&self, url: &str) -> Result<(Arc<dyn LogStore>, String), ReadError> {
        let target = cloud::Target::parse(url)?;
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(store) = stores.get(&target.root) {
            return Ok((store.clone(), target.key));
        }
        let store: Arc<dyn LogStore> = match target.kind {
            cloud::Kind::HistoryServer => Arc::new(history::HistoryServer::new(
                &target.root,
                self.runtime.clone(),
                &self.options,
            )?),
            kind => Arc::new(cloud::CloudStore::new(
                kind,
                &target.root,
                self.runtime.clone(),
                &self.options,
            )?),
        };
        stores.insert(target.root.clone(), store.clone());
        Ok((store, target.key))
    }
}

/// Installs a [`Remote`] registry with `options` for this process's `discover`.
pub fn install(options: StorageOptions) -> Result<(), ReadError> {
    let remote = Remote::new(options).map_err(|e| {
        ReadError::new(
            ReadErrorKind::Io,
            "remote storage",
            None,
            "cannot start the threads that read remote logs",
        )
        .with_source(e)
    })?;
    sparkdiag_eventlog::store::set_store_registry(Box::new(remote)).map_err(|_| {
        ReadError::new(
            ReadErrorKind::Unsupported,
            "remote storage",
            None,
            "a registry of stores is already installed",
        )
    })
}

/// The History Server location of one application (`APP_ID`, or `APP_ID/ATTEMPT`), or of all
/// of them (`None`): what `--history-server URL` turns into a path.
pub fn history_server_path(server: &str, app: Option<&str>) -> String {
    let base = server.trim_end_matches('/');
    let base = base
        .strip_suffix("/api/v1/applications")
        .or_else(|| base.strip_suffix("/api/v1"))
        .unwrap_or(base);
    match app {
        Some(app) => format!("{base}/api/v1/applications/{}", app.trim_matches('/')),
        None => format!("{base}/api/v1/applications"),
    }
}

/// The path of each application `--history-server URL` names: those of `apps` (ids), or, with
/// none, every application the server lists.
pub fn history_server_paths(server: &str, apps: &[String]) -> Vec<String> {
    if apps.is_empty() {
        return vec![history_server_path(server, None)];
    }
    apps.iter()
        .map(|app| history_server_path(server, Some(app)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_history_servers_paths_are_the_ids_given_or_every_application() {
        let server = "http://history:18080/";
        assert_eq!(
            history_server_paths(server, &[]),
            ["http://history:18080/api/v1/applications"]
        );
        let ids = ["app-1".to_string(), "app-2/1".to_string()];
        assert_eq!(
            history_server_paths(server, &ids),
            [
                "http://history:18080/api/v1/applications/app-1",
                "http://history:18080/api/v1/applications/app-2/1"
            ]
        );
    }

    #[test]
    fn options_are_checked_and_their_values_never_echoed() {
        assert_eq!(
            StorageOptions::parse_pair("AWS_Region=eu-west-1").unwrap(),
            ("aws_region".to_string(), "eu-west-1".to_string())
        );
        let err = StorageOptions::parse_pair("aws_secret_acces_key=TOPSECRET").unwrap_err();
        assert!(
            err.contains("aws_secret_acces_key") && !err.contains("TOPSECRET"),
            "{err}"
        );
        let err = StorageOptions::parse_pair("TOPSECRET").unwrap_err();
        assert!(!err.contains("TOPSECRET"), "{err}");
    }

    #[test]
    fn a_history_server_path_is_made_from_its_address() {
        for server in [
            "http://h:18080",
            "http://h:18080/",
            "http://h:18080/api/v1",
            "http://h:18080/api/v1/applications/",
        ] {
            assert_eq!(
                history_server_path(server, Some("app-1")),
                "http://h:18080/api/v1/applications/app-1"
            );
            assert_eq!(
                history_server_path(server, None),
                "http://h:18080/api/v1/applications"
            );
        }
    }
}
