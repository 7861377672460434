//! `batch --redact` and `serve --redact` (issue 49, item 4): every file a night writes (reports,
//! index, night file, Parquet tables read back with polars) and every answer of the server hold
//! none of the originals of logs full of them, and the same job still matches across nights.

/// Planted in `testdata/logs/redact` where no report shows them, redacted or not (a column
/// value only a scan reads, a user name the report does not print): still looked for.
const NOT_SHOWN: &[&str] = &["Springfield Nuclear Plant", "Cypress Creek", "hscorpio"];

#[cfg(feature = "tables")]
mod night {
    use std::path::{Path, PathBuf};
    use std::process::Output;

    use super::NOT_SHOWN;
    use crate::outputs::PLANTED;
    use crate::util::{shared_opt, testdata};

    /// The secret the tests key their pseudonyms with.
    const SECRET: &str = "a test's secret, the same every night";

    /// `sparkdiag ARGS` with `SPARKDIAG_REDACT_KEY` set to `secret` (or unset).
    fn sparkdiag_with_secret(args: &[&str], secret: Option<&str>) -> Output {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_sparkdiag"));
        command.args(args).env_remove("SPARKDIAG_REDACT_KEY");
        if let Some(secret) = secret {
            command.env("SPARKDIAG_REDACT_KEY", secret);
        }
        command.output().expect("run sparkdiag")
    }

    /// `sparkdiag batch DIRS -o OUT --date DATE EXTRA...`, which must succeed: what it said.
    fn night(dirs: &[PathBuf], out: &Path, date: &str, extra: &[&str]) -> String {
        let mut args = vec![
            "batch",
            "--no-config",
            "-o",
            out.to_str().unwrap(),
            "--date",
            date,
        ];
        args.extend(dirs.iter().map(|d| d.to_str().unwrap()));
        args.extend_from_slice(extra);
        let run = sparkdiag_with_secret(&args, Some(SECRET));
        assert!(
            run.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&run.stderr)
        );
        String::from_utf8_lossy(&run.stdout).into_owned()
    }

    /// Every string in a Parquet file, read with a real reader (pages are compressed, so a byte
    /// search can miss a value): each text column's values and each list of texts' items.
    fn parquet_text(path: &Path) -> String {
        use polars::prelude::*;
        use polars_io::prelude::*;
        let frame = ParquetReader::new(std::fs::File::open(path).unwrap())
            .finish()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let mut text = String::new();
        for series in frame.materialized_column_iter() {
            let mut series = series.clone();
            while let DataType::List(_) = series.dtype() {
                series = series
                    .explode(ExplodeOptions {
                        empty_as_null: true,
                        keep_nulls: true,
                    })
                    .unwrap();
            }
            if series.dtype() == &DataType::String {
                for value in series.str().unwrap().iter().flatten() {
                    text.push_str(value);
                    text.push('\n');
                }
            }
        }
        text
    }

    /// Every file under `out`: its path below `out`, then its text (Parquet read as a table).
    fn everything_written(out: &Path) -> (String, String) {
        let (mut all, mut parquet) = (String::new(), String::new());
        for file in walk(out) {
            all += &file.strip_prefix(out).unwrap().to_string_lossy();
            all.push('\n');
            if file.extension().is_some_and(|e| e == "parquet") {
                parquet += &parquet_text(&file);
            } else {
                all += &String::from_utf8_lossy(&std::fs::read(&file).unwrap());
            }
        }
        all += &parquet;
        (all, parquet)
    }

    /// What the logs the tests read hold, as an analyst's report shows it: hosts, addresses,
    /// application ids and names, users, paths and the folders the logs lie in.
    fn originals() -> Vec<String> {
        let mut originals: Vec<String> = PLANTED.iter().map(|s| s.to_string()).collect();
        originals.extend(
            [
                "local-1796546863717",
                "local-1796049428891",
                "eventlog_v2_",
                "0101-123456-abcdefgh",
                "192.0.2.2",
                "sparkdiag-fixture",
            ]
            .map(String::from),
        );
        // Where the logs were found: the night lists its logs by path.
        originals.push(testdata("logs").display().to_string());
        originals
    }

    /// Other tools' real logs: EMR and Databricks hosts, IP addresses, ids, names and paths.
    const SHARED_ORIGINALS: &[&str] = &[
        "ip-10-0-2-184",
        "10.77.243.103",
        "job-bank",
        "Text Similarity",
        "Databricks Shell",
        "application_1640227485896_0002",
        "app-20220304222044-0000",
    ];

    #[test]
    fn a_redacted_night_writes_none_of_the_originals_in_any_file() {
        let tmp = tempfile::tempdir().unwrap();
        let mut dirs: Vec<PathBuf> = ["redact", "multi", "archives", "databricks"]
            .iter()
            .map(|d| testdata(&format!("logs/{d}")))
            .collect();
        let mut originals = originals();
        let shared = ["emr.zip", "databricks.zip"]
            .map(|z| shared_opt(&format!("real-world/spark_log_parser/tests/logs/{z}")));
        if let [Some(emr), Some(databricks)] = shared {
            dirs.extend([emr, databricks]);
            originals.extend(SHARED_ORIGINALS.iter().map(|s| s.to_string()));
        }

        // The test can fail: without --redact the night's files show the originals, the tables
        // (read as tables) among them.
        let plain = tmp.path().join("plain");
        night(&dirs, &plain, "2026-12-01", &[]);
        let (written, tables) = everything_written(&plain);
        for original in originals
            .iter()
            .filter(|o| !NOT_SHOWN.contains(&o.as_str()))
        {
            assert!(
                written.contains(original),
                "without --redact the night shows {original}"
            );
        }
        for value in [
            "Payroll for Globex Corporation",
            "192.0.2.2",
            "hank.scorpio",
        ] {
            assert!(tables.contains(value), "the plain tables hold {value}");
        }

        let redacted = tmp.path().join("redacted");
        let said = night(&dirs, &redacted, "2026-12-01", &["--redact"]);
        let (written, tables) = everything_written(&redacted);
        for original in &originals {
            assert!(!written.contains(original), "--redact leaves {original}");
            assert!(!said.contains(original), "batch says {original}");
        }
        // Each kind is named, and one value has one pseudonym in every file: an application's
        // name in the night file is the one in its report and in the tables.
        for kind in [
            "app-",
            "app-id-",
            "host-",
            "input-",
            "literal-",
            "s3a://bucket-",
        ] {
            assert!(written.contains(kind), "--redact writes {kind}");
        }
        let nightfile: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(redacted.join("nights/2026-12-01.json")).unwrap(),
        )
        .unwrap();
        let apps = nightfile["apps"].as_array().unwrap();
        assert!(apps.len() >= 6, "{nightfile}");
        for app in apps {
            let name = app["name"].as_str().unwrap();
            assert!(name.starts_with("app-"), "{name}");
            assert!(
                tables.contains(name),
                "the tables name {name} as the night does"
            );
            let report =
                std::fs::read_to_string(redacted.join(app["report"].as_str().unwrap())).unwrap();
            assert!(report.contains(name), "its report names {name}");
            let input = app["input"].as_str().unwrap();
            assert!(input.starts_with("input-"), "{input}");
            assert!(tables.contains(input), "the tables' source is {input}");
        }
        // The findings stay: redaction changes names, not the diagnosis.
        let findings = |dir: &Path| {
            let night: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(dir.join("nights/2026-12-01.json")).unwrap(),
            )
            .unwrap();
            let mut codes: Vec<String> = night["apps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a["findings"].to_string())
                .collect();
            codes.sort();
            codes
        };
        assert_eq!(findings(&redacted), findings(&plain));
    }

    /// The same job on two nights (`causes/base`, then `causes/partitions`: slower by a setting)
    /// keeps its pseudonym, so the second night still finds its regression; another secret gives
    /// other pseudonyms; no secret, no redacted night.
    #[test]
    fn a_redacted_job_keeps_its_pseudonym_across_nights_and_its_regression() {
        let tmp = tempfile::tempdir().unwrap();
        let (base, slower) = (
            testdata("logs/causes/base"),
            testdata("logs/causes/partitions"),
        );
        let key_of = |out: &Path, date: &str| -> String {
            let night: serde_json::Value = serde_json::from_str(
                &std::fs::read_to_string(out.join(format!("nights/{date}.json"))).unwrap(),
            )
            .unwrap();
            night["apps"][0]["key"].as_str().unwrap().to_string()
        };
        // The test can fail: unredacted, the job is matched by its own name.
        let plain = tmp.path().join("plain");
        night(std::slice::from_ref(&base), &plain, "2026-11-01", &[]);
        let said = night(std::slice::from_ref(&slower), &plain, "2026-11-02", &[]);
        assert!(
            said.contains("regressed: orders-nightly — runtime"),
            "{said}"
        );

        let out = tmp.path().join("redacted");
        night(
            std::slice::from_ref(&base),
            &out,
            "2026-11-01",
            &["--redact"],
        );
        let said = night(
            std::slice::from_ref(&slower),
            &out,
            "2026-11-02",
            &["--redact"],
        );
        let key = key_of(&out, "2026-11-01");
        assert!(key.starts_with("app-"), "{key}");
        assert_eq!(
            key_of(&out, "2026-11-02"),
            key,
            "one job, one key every night"
        );
        assert!(
            said.contains(&format!("regressed: {key} — runtime")),
            "the regression is found on the pseudonym: {said}"
        );
        // The diff it suggests names the logs by pseudonym, and how to run it.
        assert!(
            said.contains("`sparkdiag diff --redact` of the two logs (input-"),
            "{said}"
        );
        let (written, _) = everything_written(&out);
        assert!(!written.contains("orders-nightly") && !said.contains("orders-nightly"));
        assert!(written.contains(&key));

        // Another secret, other pseudonyms: they are keyed, not a plain hash anyone can compute.
        let other = tmp.path().join("other");
        let mut args = vec!["batch", "--no-config", "--redact", "--date", "2026-11-01"];
        args.extend(["-o", other.to_str().unwrap(), base.to_str().unwrap()]);
        let run = sparkdiag_with_secret(&args, Some("another secret"));
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        assert_ne!(key_of(&other, "2026-11-01"), key);
        // Without a secret the night is refused, naming the variable, and nothing is written.
        let none = tmp.path().join("none");
        let mut args = vec!["batch", "--no-config", "--redact"];
        args.extend(["-o", none.to_str().unwrap(), base.to_str().unwrap()]);
        let run = sparkdiag_with_secret(&args, None);
        assert_eq!(run.status.code(), Some(2));
        assert!(String::from_utf8_lossy(&run.stderr).contains("SPARKDIAG_REDACT_KEY"));
        assert!(!none.exists());
    }

    /// Keyed pseudonyms do not depend on which machine met a value first: the slices of a
    /// redacted night, merged, write the reports one redacted batch writes, byte for byte.
    #[test]
    fn redacted_slices_merge_into_the_reports_of_one_redacted_night() {
        let tmp = tempfile::tempdir().unwrap();
        let dirs: Vec<PathBuf> = ["redact", "multi", "databricks"]
            .iter()
            .map(|d| testdata(&format!("logs/{d}")))
            .collect();
        let one = tmp.path().join("one");
        night(&dirs, &one, "2026-12-01", &["--redact"]);
        let slices: Vec<PathBuf> = (0..2).map(|k| tmp.path().join(format!("s{k}"))).collect();
        for (k, slice) in slices.iter().enumerate() {
            let k = format!("{k}/2");
            night(&dirs, slice, "2026-12-01", &["--redact", "--slice", &k]);
        }
        let merged = tmp.path().join("merged");
        night(&slices, &merged, "2026-12-01", &["--redact", "--merge"]);
        let reports = |out: &Path| -> Vec<(String, Vec<u8>)> {
            let mut files: Vec<(String, Vec<u8>)> = walk(&out.join("apps"))
                .into_iter()
                .map(|f| {
                    let name = f.strip_prefix(out).unwrap().display().to_string();
                    (name, std::fs::read(&f).unwrap())
                })
                .collect();
            files.sort();
            files
        };
        let (one, merged) = (reports(&one), reports(&merged));
        assert_eq!(one.len(), 8, "four applications, HTML and JSON each");
        assert!(
            one == merged,
            "the merged slices' reports differ from one night's"
        );
    }

    fn walk(dir: &Path) -> Vec<PathBuf> {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                files.extend(walk(&path));
            } else {
                files.push(path);
            }
        }
        files
    }
}

#[cfg(feature = "serve")]
mod serve {
    use std::net::SocketAddr;

    use crate::serve::{BOUNDARY, finished, get, id_of, post_head, send, upload};
    use crate::util::testdata;

    fn server(redact: bool) -> (tempfile::TempDir, sparkdiag_serve::Server) {
        let dir = tempfile::tempdir().unwrap();
        let mut config = sparkdiag_serve::Config::new(dir.path().join("data"));
        config.bind = "127.0.0.1:0".parse().unwrap();
        config.workers = 2;
        config.redact = redact;
        let server = sparkdiag_serve::start(config).unwrap_or_else(|e| panic!("{e}"));
        (dir, server)
    }

    /// A log's bytes and the name it is sent with (which names the application).
    fn log(dir: &str) -> (Vec<u8>, String) {
        let file = std::fs::read_dir(testdata(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .find(|p| p.is_file())
            .unwrap();
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        (std::fs::read(file).unwrap(), name)
    }

    /// The upload form with the redact checkbox ticked, before the file as the page sends it.
    fn upload_redacted(addr: SocketAddr, file_name: &str, bytes: &[u8]) -> String {
        let mut body = format!(
            "--{BOUNDARY}\r\nContent-Disposition: form-data; name=\"redact\"\r\n\r\non\r\n\
             --{BOUNDARY}\r\nContent-Disposition: form-data; name=\"log\"; filename=\"{file_name}\"\r\n\
             Content-Type: application/octet-stream\r\n\r\n"
        )
        .into_bytes();
        body.extend_from_slice(bytes);
        body.extend_from_slice(format!("\r\n--{BOUNDARY}--\r\n").as_bytes());
        let mut request = post_head(addr, body.len());
        request.extend_from_slice(&body);
        id_of(&send(addr, &request))
    }

    /// Everything the server answers of two uploads: each report's page, JSON, Markdown and
    /// status, the list of reports, and their diff.
    fn answers(addr: SocketAddr, ids: [&str; 2]) -> String {
        let mut all = String::new();
        for id in ids {
            let page = finished(addr, id);
            assert_eq!(page.status, 200, "{}", page.body);
            all += &page.body;
            for path in ["report.json", "report.md", "status"] {
                let reply = get(addr, &format!("/r/{id}/{path}"));
                assert_eq!(reply.status, 200, "{path}: {}", reply.body);
                all += &reply.body;
            }
        }
        all += &get(addr, "/").body;
        let diff = get(addr, &format!("/diff?before={}&after={}", ids[0], ids[1]));
        assert_eq!(diff.status, 200, "{}", diff.body);
        all + &diff.body
    }

    /// What the two logs hold that a report shows: the planted values, ids, names, hosts.
    fn originals() -> Vec<&'static str> {
        let mut originals = crate::outputs::PLANTED.to_vec();
        originals.extend([
            "local-1796546863717",
            "local-1796049570994",
            "192.0.2.",
            "7007",
        ]);
        originals
    }

    #[test]
    fn a_redacted_server_answers_no_original_and_the_checkbox_redacts_one_upload() {
        let (payroll, payroll_name) = log("logs/redact");
        let (other, other_name) = log("logs/multi");
        let originals = originals();

        // The test can fail: unredacted, the answers show the originals.
        let (_dir, plain) = server(false);
        let addr = plain.addr();
        let ids = [
            id_of(&upload(addr, &payroll_name, &payroll)),
            id_of(&upload(addr, &other_name, &other)),
        ];
        let said = answers(addr, [&ids[0], &ids[1]]);
        for original in originals
            .iter()
            .filter(|o| !crate::redact::NOT_SHOWN.contains(o))
        {
            assert!(
                said.contains(original),
                "unredacted, the server shows {original}"
            );
        }
        // The page offers redaction per upload, before the file in the form.
        let form = get(addr, "/").body;
        let (checkbox, file) = (form.find("name=\"redact\""), form.find("name=\"log\""));
        assert!(checkbox.is_some() && checkbox < file, "{form}");

        // The checkbox: the same bytes redacted are another report, with none of the originals.
        let redacted = [
            upload_redacted(addr, &payroll_name, &payroll),
            upload_redacted(addr, &other_name, &other),
        ];
        assert!(!ids.contains(&redacted[0]), "redacted is another report");
        let status = get(addr, &format!("/r/{}/status", redacted[0])).body;
        let said = answers(addr, [&redacted[0], &redacted[1]]);
        // The list of reports shows the unredacted uploads too; their own answers are left out.
        let report_of = |id: &str| {
            let mut all = finished(addr, id).body;
            for path in ["report.json", "report.md", "status"] {
                all += &get(addr, &format!("/r/{id}/{path}")).body;
            }
            all
        };
        let own = report_of(&redacted[0])
            + &report_of(&redacted[1])
            + &get(
                addr,
                &format!("/diff?before={}&after={}", redacted[0], redacted[1]),
            )
            .body;
        for original in &originals {
            assert!(
                !own.contains(original),
                "a redacted upload's answer has {original}"
            );
        }
        assert!(status.contains("\"redacted\":true"), "{status}");
        assert!(
            own.contains("app-") && own.contains("literal-"),
            "pseudonyms say their kind"
        );
        assert!(
            said.contains(&payroll_name),
            "the unredacted upload is still listed"
        );
        drop(plain);

        // `serve --redact`: every answer, the list of reports included, holds none.
        let (_dir, server) = server(true);
        let addr = server.addr();
        let form = get(addr, "/").body;
        assert!(form.contains("Every report here is <strong>redacted</strong>"));
        let ids = [
            id_of(&upload(addr, &payroll_name, &payroll)),
            id_of(&upload(addr, &other_name, &other)),
        ];
        let said = answers(addr, [&ids[0], &ids[1]]);
        for original in &originals {
            assert!(
                !said.contains(original),
                "serve --redact answers {original}"
            );
        }
        assert!(
            said.contains("upload.zstd</a> <span class=\"small\">redacted</span>"),
            "the list says which reports are redacted, by a neutral name"
        );
    }
}
