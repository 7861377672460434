//! Logs read where they live, from real servers on 127.0.0.1 that tests/remote/servers.py
//! starts and fills with committed logs: moto's S3, Azurite, gcp-storage-emulator (behind its
//! adapter) and a Spark History Server from PySpark. Each report must equal the one of the same
//! log read from disk; each failure must say what failed, exit 2 and print no secret.
//!
//! The emulators are installed by .ci/run under target/emulators (SPARKDIAG_EMULATORS); without
//! them a test says so in one line and is skipped, except under CI, where it fails.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::OnceLock;

use serde_json::Value;

use crate::util::{repo, testdata};

/// A server the harness started; it stops when this process's end closes the pipe.
struct Server {
    _harness: Child,
    info: Value,
}

impl Server {
    fn get(&self, key: &str) -> String {
        self.info[key].as_str().unwrap_or_default().to_string()
    }
}

fn emulators() -> PathBuf {
    std::env::var_os("SPARKDIAG_EMULATORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("target/emulators"))
}

/// Starts `kind` with `args`, or says why it cannot (skip, or fail under CI).
fn start(kind: &str, args: &[&str]) -> Option<Server> {
    let installed = match kind {
        "azure" => emulators().join("node_modules/.bin/azurite-blob").exists(),
        "gcs" => emulators().join("venv/bin/gcp-storage-emulator").exists(),
        "shs" => Command::new("python3")
            .args(["-c", "import pyspark"])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success()),
        // s3, and the proxy that cuts connections to it.
        _ => emulators().join("venv/bin/moto_server").exists(),
    };
    if !installed {
        let message = if kind == "shs" {
            "shs: PySpark is not installed (.ci/run installs it)".to_string()
        } else {
            format!(
                "{kind}: the emulators are not installed under {} (.ci/run installs them)",
                emulators().display()
            )
        };
        if std::env::var_os("CI").is_some() {
            panic!("CI is set but {message}");
        }
        let _ = writeln!(std::io::stderr(), "skipped: {message}");
        return None;
    }
    let mut harness = Command::new("python3")
        .arg(repo().join("tests/remote/servers.py"))
        .arg(kind)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start tests/remote/servers.py");
    let mut line = String::new();
    BufReader::new(harness.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let info: Value = serde_json::from_str(&line)
        .unwrap_or_else(|e| panic!("{kind}: the harness did not start its server ({e}): {line}"));
    Some(Server {
        _harness: harness,
        info,
    })
}

/// The folders of testdata/logs every store holds, under the same names.
const UPLOADED: &[&str] = &["multi", "databricks"];

fn shared(cell: &'static OnceLock<Option<Server>>, kind: &str) -> Option<&'static Server> {
    cell.get_or_init(|| {
        let root = testdata("logs");
        let mut args = vec![root.to_str().unwrap()];
        args.extend(UPLOADED);
        start(kind, &args)
    })
    .as_ref()
}

fn s3() -> Option<&'static Server> {
    static S3: OnceLock<Option<Server>> = OnceLock::new();
    shared(&S3, "s3")
}

fn azure() -> Option<&'static Server> {
    static AZURE: OnceLock<Option<Server>> = OnceLock::new();
    shared(&AZURE, "azure")
}

fn gcs() -> Option<&'static Server> {
    static GCS: OnceLock<Option<Server>> = OnceLock::new();
    shared(&GCS, "gcs")
}

/// A History Server over testdata/logs/multi (a zstd log and a rolling one).
fn history_server() -> Option<&'static Server> {
    static SHS: OnceLock<Option<Server>> = OnceLock::new();
    SHS.get_or_init(|| start("shs", &[testdata("logs/multi").to_str().unwrap()]))
        .as_ref()
}

/// sparkdiag with only the cloud variables given (none of the machine's own).
fn run(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_sparkdiag"));
    for (key, _) in std::env::vars() {
        if ["AWS_", "AZURE_", "AZURITE_", "GOOGLE_"]
            .iter()
            .any(|p| key.starts_with(p))
        {
            command.env_remove(key);
        }
    }
    command.env(
        "HOME",
        std::env::temp_dir().join("sparkdiag-remote-no-home"),
    );
    command.env("AWS_EC2_METADATA_DISABLED", "true");
    command.envs(env.iter().copied());
    command.args(args).output().expect("run sparkdiag")
}

fn ok(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = run(args, env);
    assert_eq!(
        out.status.code(),
        Some(0),
        "sparkdiag {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// The JSON report of `path` read from disk, every mention of testdata/logs/ written ROOT/.
fn local_report(rel: &str) -> String {
    let root = format!("{}/", testdata("logs").display());
    let path = format!("{root}{rel}");
    ok(&["analyze", &path, "--format", "json"], &[]).replace(&root, "ROOT/")
}

/// The report of the same log at `url` (`base` + rel), `base` written ROOT/.
fn remote_report(base: &str, rel: &str, extra: &[&str], env: &[(&str, &str)]) -> String {
    let url = format!("{base}{rel}");
    let mut args = vec!["analyze", url.as_str(), "--format", "json"];
    args.extend(extra);
    ok(&args, env).replace(base, "ROOT/")
}

/// A single zstd log, a rolling folder, a Databricks folder with its gzip rolls, and a prefix
/// holding two applications.
const LOGS: &[&str] = &[
    "multi/local-1796049570994.zstd",
    "multi/eventlog_v2_local-1796049586006",
    "databricks/0101-123456-abcdefgh",
    "multi/",
];

const AWS_SECRET: &str = "moto-secret-key-never-printed";

fn aws_env(server: &Server) -> Vec<(&'static str, String)> {
    vec![
        ("AWS_ACCESS_KEY_ID", "moto-key".into()),
        ("AWS_SECRET_ACCESS_KEY", AWS_SECRET.into()),
        ("AWS_REGION", "us-east-1".into()),
        ("AWS_ENDPOINT", server.get("endpoint")),
    ]
}

fn env_refs<'a>(env: &'a [(&'static str, String)]) -> Vec<(&'static str, &'a str)> {
    env.iter().map(|(k, v)| (*k, v.as_str())).collect()
}

#[test]
fn s3_logs_report_as_the_same_logs_on_disk() {
    let Some(server) = s3() else { return };
    let env = aws_env(server);
    for rel in LOGS {
        let remote = remote_report("s3://logs/", rel, &[], &env_refs(&env));
        assert_eq!(remote, local_report(rel), "s3://logs/{rel}");
        assert!(!remote.contains(AWS_SECRET));
    }
}

/// The AWS CLI's profile file alone, the way a laptop has its credentials.
#[test]
fn s3_credentials_come_from_a_profile_file() {
    let Some(server) = s3() else { return };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("credentials");
    std::fs::write(
        &file,
        format!("[default]\naws_access_key_id = other\n\n[ci]\naws_access_key_id = moto-key\naws_secret_access_key = {AWS_SECRET}\nregion = us-east-1\n"),
    )
    .unwrap();
    let rel = LOGS[0];
    let remote = remote_report(
        "s3://logs/",
        rel,
        &[],
        &[
            ("AWS_SHARED_CREDENTIALS_FILE", file.to_str().unwrap()),
            ("AWS_PROFILE", "ci"),
            ("AWS_ENDPOINT", &server.get("endpoint")),
        ],
    );
    assert_eq!(remote, local_report(rel));
}

/// Both Azure forms, the Hadoop one (abfss://container@account.dfs.core.windows.net/) and
/// fsspec's (az://container/), keep every segment of the key.
#[test]
fn azure_logs_report_as_the_same_logs_on_disk_in_both_url_forms() {
    let Some(server) = azure() else { return };
    let env = [
        ("AZURE_STORAGE_USE_EMULATOR", "true"),
        ("AZURITE_BLOB_STORAGE_URL", &*server.get("endpoint")),
    ];
    for base in [
        "abfss://logs@devstoreaccount1.dfs.core.windows.net/",
        "az://logs/",
    ] {
        for rel in [LOGS[1], LOGS[2]] {
            let remote = remote_report(base, rel, &[], &env);
            assert_eq!(remote, local_report(rel), "{base}{rel}");
        }
    }
}

/// The emulator's endpoint and no signing, as `--storage-option`s.
fn gcs_options(server: &Server) -> [String; 4] {
    [
        "--storage-option".into(),
        format!("google_base_url={}", server.get("endpoint")),
        "--storage-option".into(),
        "google_skip_signature=true".into(),
    ]
}

/// GCS with everything given as --storage-option.
#[test]
fn gcs_logs_report_as_the_same_logs_on_disk() {
    let Some(server) = gcs() else { return };
    let options = gcs_options(server);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    for rel in [LOGS[0], LOGS[3]] {
        let remote = remote_report("gs://logs/", rel, &options, &[]);
        assert_eq!(remote, local_report(rel), "gs://logs/{rel}");
    }
}

/// `analyze --history-server URL APP_ID` reads the zip the server streams; its report equals
/// the log's own (the server's zip holds the same file under the same name).
#[test]
fn a_history_server_application_reports_as_its_log_on_disk() {
    let Some(server) = history_server() else {
        return;
    };
    let url = server.get("url");
    for (app, rel) in [
        ("local-1796049570994", "local-1796049570994.zstd"),
        ("local-1796049586006", "eventlog_v2_local-1796049586006"),
    ] {
        let remote = ok(
            &["analyze", "--history-server", &url, app, "--format", "json"],
            &[],
        );
        let base = format!("{url}/api/v1/applications/{app}!/");
        let remote = remote.replace(&base, "ROOT/multi/").replace(
            &format!("{url}/api/v1/applications/{app}"),
            &format!("ROOT/multi/{rel}"),
        );
        assert_eq!(remote, local_report(&format!("multi/{rel}")), "{app}");
    }
    let missing = run(
        &["analyze", "--history-server", &url, "app-that-is-not-there"],
        &[],
    );
    assert_eq!(missing.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&missing.stderr);
    assert!(stderr.contains("has no such application"), "{stderr}");
}

/// `batch --history-server URL --since`: every application it lists, and only those updated
/// within the window (the server's lastUpdated, kept on the unpacked files).
#[test]
fn batch_reads_every_application_a_history_server_lists_since_a_time() {
    let Some(server) = history_server() else {
        return;
    };
    let url = server.get("url");
    let out = tempfile::tempdir().unwrap();
    let night = |since: &str, dir: &Path| {
        ok(
            &[
                "batch",
                "--history-server",
                &url,
                "-o",
                dir.to_str().unwrap(),
                "--date",
                "2026-12-01",
                "--since",
                since,
            ],
            &[],
        )
    };
    let all = night("100000d", &out.path().join("all"));
    assert!(all.starts_with("2 application(s) analysed"), "{all}");
    let none = night("1s", &out.path().join("none"));
    assert!(none.starts_with("0 application(s) analysed"), "{none}");
}

/// `batch` over a prefix is the nightly report over cluster-log delivery: the same
/// applications as over the folder, with the same reports.
#[test]
fn batch_over_an_s3_prefix_matches_batch_over_the_folder() {
    let Some(server) = s3() else { return };
    let env = aws_env(server);
    let out = tempfile::tempdir().unwrap();
    let (remote_out, local_out) = (out.path().join("remote"), out.path().join("local"));
    let args = |input: &str, dir: &Path| {
        vec![
            "batch".to_string(),
            input.to_string(),
            "-o".into(),
            dir.display().to_string(),
            "--date".into(),
            "2026-12-01".into(),
            "--since".into(),
            "1h".into(),
        ]
    };
    let local_input = testdata("logs/multi").display().to_string();
    let remote_summary = ok(
        &args("s3://logs/multi/", &remote_out)
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>(),
        &env_refs(&env),
    );
    // Objects were uploaded just now: --since 1h keeps them by their Last-Modified. The same
    // folder on disk is read without --since (its files are as old as the checkout).
    let mut local_args = args(&local_input, &local_out);
    local_args.truncate(6);
    let local_summary = ok(
        &local_args.iter().map(String::as_str).collect::<Vec<_>>(),
        &[],
    );
    let head = |s: &str| s.split(" in ").next().unwrap_or_default().to_string();
    assert_eq!(head(&remote_summary), head(&local_summary));
    assert!(
        remote_summary.starts_with("2 application(s)"),
        "{remote_summary}"
    );
    let reports = |dir: &Path, input: &str| {
        let apps = dir.join("apps/2026-12-01");
        let mut found: Vec<(String, String)> = std::fs::read_dir(&apps)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .map(|p| {
                let text = std::fs::read_to_string(&p).unwrap().replace(input, "ROOT");
                (p.file_name().unwrap().to_string_lossy().into_owned(), text)
            })
            .collect();
        found.sort();
        found
    };
    let remote_reports = reports(&remote_out, "s3://logs/multi");
    assert_eq!(remote_reports.len(), 2);
    assert_eq!(remote_reports, reports(&local_out, &local_input));
}

fn failure(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = run(args, env);
    assert_eq!(
        out.status.code(),
        Some(2),
        "sparkdiag {args:?} should fail with 2: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn missing_credentials_name_the_variables_looked_for() {
    let Some(server) = s3() else { return };
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report.json");
    let stderr = failure(
        &[
            "analyze",
            "s3://logs/multi/",
            "-o",
            report.to_str().unwrap(),
        ],
        &[("AWS_ENDPOINT", &server.get("endpoint"))],
    );
    assert!(stderr.contains("no S3 credentials found"), "{stderr}");
    for variable in [
        "AWS_ACCESS_KEY_ID",
        "AWS_PROFILE",
        "AWS_WEB_IDENTITY_TOKEN_FILE",
    ] {
        assert!(stderr.contains(variable), "{variable}: {stderr}");
    }
    assert!(!report.exists(), "a report was written");
}

#[test]
fn no_such_bucket_no_such_key_and_an_empty_prefix_say_what_to_check() {
    let Some(server) = s3() else { return };
    let env = aws_env(server);
    let env = env_refs(&env);
    let stderr = failure(&["analyze", "s3://no-such-bucket/app-1"], &env);
    assert!(stderr.contains("no such bucket"), "{stderr}");
    for missing in [
        "s3://logs/multi/app-that-is-not-there",
        "s3://logs/empty-prefix/",
    ] {
        let stderr = failure(&["analyze", missing], &env);
        assert!(
            stderr.contains("check the bucket and the prefix"),
            "{stderr}"
        );
    }
    assert!(!stderr.contains(AWS_SECRET));
}

/// Azurite refuses a wrong account key (403): access denied, and the key is never printed.
#[test]
fn a_refused_key_is_access_denied_and_never_printed() {
    let Some(server) = azure() else { return };
    // A well-formed key that is not the account's.
    let wrong_key = "c3BhcmtkaWFnLXdyb25nLWtleS1uZXZlci1wcmludGVkLTEyMzQ1Njc4OTA=";
    let option = format!("azure_storage_account_key={wrong_key}");
    let stderr = failure(
        &["analyze", "az://logs/multi/", "--storage-option", &option],
        &[
            ("AZURE_STORAGE_USE_EMULATOR", "true"),
            ("AZURITE_BLOB_STORAGE_URL", &*server.get("endpoint")),
        ],
    );
    assert!(stderr.contains("access denied"), "{stderr}");
    assert!(!stderr.contains(wrong_key), "{stderr}");
}

/// A proxy in front of moto cuts every response after 16 KiB: after its retries the read
/// fails with exit 2 and writes nothing; cut only once, the download resumes where it stopped
/// and the report is the log's own.
#[test]
fn a_connection_cut_mid_read_fails_cleanly_or_resumes() {
    let Some(server) = s3() else { return };
    let moto = server.get("endpoint");
    let target = moto.trim_start_matches("http://");
    let rel = LOGS[0];
    let out = tempfile::tempdir().unwrap();
    let report = out.path().join("report.json");
    let Some(always) = start("cut", &[target, "always"]) else {
        return;
    };
    let mut env = aws_env(server);
    env[3].1 = always.get("endpoint");
    let url = format!("s3://logs/{rel}");
    let stderr = failure(
        &[
            "analyze",
            &url,
            "-o",
            report.to_str().unwrap(),
            "--storage-option",
            "max_retries=2",
        ],
        &env_refs(&env),
    );
    assert!(stderr.contains("connection was cut"), "{stderr}");
    assert!(!report.exists(), "a report was written");
    assert!(!stderr.contains(AWS_SECRET));
    let Some(once) = start("cut", &[target, "once"]) else {
        return;
    };
    env[3].1 = once.get("endpoint");
    let remote = remote_report("s3://logs/", rel, &[], &env_refs(&env));
    assert_eq!(remote, local_report(rel));
}

/// The UTC date `days_ago` days before now, as `--modified-on` takes it (from `date`, not from
/// sparkdiag's own calendar).
#[cfg(feature = "tables")]
fn utc_date(days_ago: u32) -> String {
    let out = Command::new("date")
        .args(["-u", "-d", &format!("{days_ago} days ago"), "+%F"])
        .output()
        .expect("run date");
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

/// A store of `kind` holding, under `fresh/`, logs uploaded just now: a Databricks folder whose
/// application ended, one whose live `eventlog` has no end yet, a rolling folder still marked
/// in progress (`appstatus_*.inprogress`), and a finished single log. With the UTC date they
/// were uploaded on, or `None` (said why) when there is no server or midnight fell between.
#[cfg(feature = "tables")]
fn fresh_store(kind: &str) -> Option<(Server, String, std::time::Instant)> {
    let root = tempfile::tempdir().unwrap();
    let fresh = root.path().join("fresh");
    crate::batch::copy_dir(
        &testdata("logs/databricks"),
        &fresh.join("databricks-ended"),
    );
    crate::batch::databricks_without_its_end(&fresh.join("databricks-live"));
    crate::batch::copy_dir(
        &testdata("logs/killed/rolling"),
        &fresh.join("rolling-live"),
    );
    std::fs::create_dir_all(fresh.join("single")).unwrap();
    std::fs::copy(
        testdata("logs/multi/local-1796049570994.zstd"),
        fresh.join("single/local-1796049570994.zstd"),
    )
    .unwrap();
    let before = utc_date(0);
    // Every object is uploaded by the time the harness answers.
    let server = start(kind, &[root.path().to_str().unwrap(), "fresh"])?;
    let uploaded = std::time::Instant::now();
    let today = utc_date(0);
    if today != before {
        let _ = writeln!(
            std::io::stderr(),
            "skipped: midnight UTC fell during the upload"
        );
        return None;
    }
    Some((server, today, uploaded))
}

/// Over a prefix of objects the live and the killed are told apart by each log's newest
/// Last-Modified, as on disk: a Databricks folder (no `.inprogress` name) without its
/// application's end and a rolling folder marked in progress, both written just now, are
/// skipped as live under `--stale-after 1h` while the logs that ended are analysed; two
/// seconds later, under `--stale-after 1s`, the two are counted killed or incomplete.
/// `--modified-on` picks them all by their upload date and none the day before. (moto and the
/// other emulators cannot backdate an object, so the date is today's.)
#[cfg(feature = "tables")]
fn live_and_stale_logs_on_a_store(
    today: &str,
    uploaded: std::time::Instant,
    base: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) {
    let prefix = format!("{base}fresh");
    let out = tempfile::tempdir().unwrap();
    let night = |modified_on: &str, stale_after: &str| {
        let dir = out.path().join(format!("{modified_on}-{stale_after}"));
        let mut args = vec![
            "batch",
            prefix.as_str(),
            "-o",
            dir.to_str().unwrap(),
            "--modified-on",
            modified_on,
            "--stale-after",
            stale_after,
        ];
        args.extend(extra);
        ok(&args, env);
        crate::batch::night_logs(&dir, modified_on, &prefix)
    };
    let pair = |dir: &str, outcome: &str| (dir.to_string(), outcome.to_string());

    let (analysed, skipped) = night(today, "1h");
    assert_eq!(
        analysed,
        [
            pair("databricks-ended", "succeeded"),
            pair("single", "succeeded")
        ],
        "{prefix}"
    );
    assert_eq!(skipped, ["databricks-live", "rolling-live"], "{prefix}");

    let day_before = utc_date(1);
    let (analysed, skipped) = night(&day_before, "1h");
    assert!(
        analysed.is_empty() && skipped.is_empty(),
        "{prefix}: {analysed:?} {skipped:?}"
    );

    // Last-Modified is whole seconds, never later than the upload.
    let aged = std::time::Duration::from_secs(2);
    if let Some(left) = aged.checked_sub(uploaded.elapsed()) {
        std::thread::sleep(left);
    }
    let (analysed, skipped) = night(today, "1s");
    assert!(skipped.is_empty(), "{prefix}: {skipped:?}");
    assert_eq!(
        analysed,
        [
            pair("databricks-ended", "succeeded"),
            pair("databricks-live", "killed_or_incomplete"),
            pair("rolling-live", "killed_or_incomplete"),
            pair("single", "succeeded"),
        ],
        "{prefix}"
    );
}

#[cfg(feature = "tables")]
#[test]
fn s3_logs_are_live_or_killed_by_their_newest_last_modified() {
    let Some((server, today, uploaded)) = fresh_store("s3") else {
        return;
    };
    let env = aws_env(&server);
    live_and_stale_logs_on_a_store(&today, uploaded, "s3://logs/", &[], &env_refs(&env));
}

#[cfg(feature = "tables")]
#[test]
fn azure_logs_are_live_or_killed_by_their_newest_last_modified() {
    let Some((server, today, uploaded)) = fresh_store("azure") else {
        return;
    };
    let endpoint = server.get("endpoint");
    let env = [
        ("AZURE_STORAGE_USE_EMULATOR", "true"),
        ("AZURITE_BLOB_STORAGE_URL", endpoint.as_str()),
    ];
    live_and_stale_logs_on_a_store(&today, uploaded, "az://logs/", &[], &env);
}

#[cfg(feature = "tables")]
#[test]
fn gcs_logs_are_live_or_killed_by_their_newest_last_modified() {
    let Some((server, today, uploaded)) = fresh_store("gcs") else {
        return;
    };
    let options = gcs_options(&server);
    let options: Vec<&str> = options.iter().map(String::as_str).collect();
    live_and_stale_logs_on_a_store(&today, uploaded, "gs://logs/", &options, &[]);
}
