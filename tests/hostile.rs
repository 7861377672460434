//! Hostile and broken input: every case ends with a clear answer, in bounded memory, reading
//! nothing outside what was named. Each test is one probe of issue 11, made from a real Spark log
//! where a log is needed; the hostile bytes are generated here rather than committed.

use std::io::Write;
use std::path::Path;

use sparkdiag_eventlog::{Codec, discover, read_log};

use crate::util::{load, load_all, sparkdiag, sparkdiag_ok, testdata};

use crate::util::{lines, real_plain_log as real_log, tar_with, write};

fn events_in(log: &[u8]) -> u64 {
    lines(log)
        .iter()
        .filter(|l| l.starts_with(b"{\"Event\""))
        .count() as u64
}

/// Reads one input fully; the error as text when reading fails.
fn read_all(path: &Path) -> Result<sparkdiag_eventlog::SourceReport, String> {
    let inputs = discover(path.to_str().unwrap()).map_err(|e| e.to_string())?;
    assert_eq!(inputs.len(), 1, "{}", path.display());
    read_log(&inputs[0], |_| {}).map_err(|e| e.to_string())
}

// --- 1. timestamps in any order ---

#[test]
fn an_application_that_ends_before_it_starts_is_read_and_reported() {
    let log = real_log();
    let mut out = Vec::new();
    for line in lines(&log) {
        if line.starts_with(br#"{"Event":"SparkListenerApplicationEnd""#) {
            // Ends a day before any other event: a clock that stepped back, or a joined log.
            out.extend_from_slice(
                b"{\"Event\":\"SparkListenerApplicationEnd\",\"Timestamp\":1000}\n",
            );
        } else {
            out.extend_from_slice(line);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "app", &out);
    let (source, app) = load(&path);
    assert!(source.complete(), "{:?}", source.warnings);
    assert!(app.end_ms.unwrap() < app.start_ms.unwrap());
    assert_eq!(app.duration_ms(), Some(0));
    assert_eq!(app.job_and_driver_time_ms(), (0, 0));
    let out = sparkdiag(&["analyze", path.to_str().unwrap(), "--format", "json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

// --- 2. deep and long plan conditions ---

/// The real plan of a filter Spark did not push down, with its condition replaced.
fn filter_plan(condition: &str) -> String {
    let text =
        std::fs::read_to_string(testdata("plans/antipattern-filter-not-pushed.txt")).unwrap();
    let line = text
        .lines()
        .find(|l| l.starts_with("Condition : "))
        .unwrap()
        .to_string();
    text.replace(&line, &format!("Condition : {condition}"))
}

/// PL006's findings on a plan, computed on a thread with a 256 KiB stack: any recursion as deep
/// as the condition would overflow it and abort the test binary.
fn pl006_on_a_small_stack(text: String) -> Vec<String> {
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(move || {
            let plans = sparkdiag_plan::parse_plans(&text).unwrap();
            let findings = sparkdiag_rules::analyze_plans(
                &sparkdiag_facts::Facts::of_plans(plans),
                &sparkdiag_rules::Config::default(),
            );
            findings
                .into_iter()
                .filter(|f| f.rule == "PL006")
                .map(|f| f.title)
                .collect()
        })
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn a_left_deep_and_chain_of_15000_conditions_is_split_without_recursion() {
    // Spark prints `a AND b AND c` as `((a AND b) AND c)`.
    let n = 15_000;
    let mut condition = String::new();
    condition.push_str(&"(".repeat(n - 1));
    condition.push_str("(cast(customer_id#47L as string) = 0)");
    for i in 1..n {
        condition.push_str(&format!(" AND (cast(customer_id#47L as string) = {i}))"));
    }
    let titles = pl006_on_a_small_stack(filter_plan(&condition));
    assert_eq!(titles.len(), 1, "{titles:?}");
    let conjuncts = titles[0]
        .matches("cast(customer_id#47L as string) = ")
        .count();
    assert_eq!(conjuncts, n, "every conjunct is found once");
    assert!(titles[0].contains(&format!("= {}`", n - 1)));
}

#[test]
fn a_condition_in_100000_nested_parentheses_is_unwrapped() {
    let depth = 100_000;
    let condition = format!(
        "{}cast(customer_id#47L as string) = 7{}",
        "(".repeat(depth),
        ")".repeat(depth)
    );
    let titles = pl006_on_a_small_stack(filter_plan(&condition));
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert!(
        titles[0].contains("`cast(customer_id#47L as string) = 7`"),
        "{}",
        titles[0]
    );
}

#[test]
fn a_condition_on_a_column_with_an_accented_name_is_read() {
    // Found by the `plan` fuzz target: a name like `prénom#12` cut a character in two.
    let titles = pl006_on_a_small_stack(filter_plan(
        "(isnotnull(prénom#47L) AND (cast(prénom#47L as string) = 7))",
    ));
    assert_eq!(titles.len(), 1, "{titles:?}");
    assert!(
        titles[0].contains("`cast(prénom#47L as string) = 7`"),
        "{}",
        titles[0]
    );
}

#[test]
fn a_truncation_marker_after_a_wide_character_is_no_panic() {
    // Found by the `plan` fuzz target (a 165-byte input, kept whole): invalid UTF-8 and U+07FF
    // right before "more characters" made the marker's parser slice inside a character.
    let input: &[u8] = b"== Physical Plan ==\x0aAdapt\x00veSparkPlan (7)\x0a+- HashAggregate (6)\x0a   +- E\x15\x00xcAEgreg0, 1) AS total#6]\x0a\x0a(\xc9\xd6\xdf\xbf more characters\x0aputOut [3]5Y\x0aArguments: isFinalPlan=false\x0a\x0a\x0a";
    let text = String::from_utf8_lossy(input);
    // Its fourth line is no operator: a clear error naming that line, not a panic.
    let error = sparkdiag_plan::parse_plans(&text).unwrap_err().to_string();
    assert!(error.contains("line 4"), "{error}");
}

// --- 3. a line with no end ---

/// Writes the real log with a line of `len` zeros after its line `at`, in pieces (the hostile
/// line is never whole in memory); returns the line's offset in the decoded text.
fn write_with_long_line(out: &mut impl Write, at: usize, len: usize) -> usize {
    let log = real_log();
    let all = lines(&log);
    let offset: usize = all[..at].iter().map(|l| l.len()).sum();
    out.write_all(&all[..at].concat()).unwrap();
    let zeros = vec![0u8; 1 << 20];
    let mut left = len;
    while left > 0 {
        let n = left.min(zeros.len());
        out.write_all(&zeros[..n]).unwrap();
        left -= n;
    }
    out.write_all(b"\n").unwrap();
    out.write_all(&all[at..].concat()).unwrap();
    offset
}

#[test]
fn a_zstd_line_of_300_mib_of_zeros_is_skipped_and_located() {
    let log = real_log();
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
    let offset = write_with_long_line(&mut encoder, 40, 300 << 20);
    let compressed = encoder.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let source = read_all(&write(dir.path(), "app.zstd", &compressed)).unwrap();
    assert_eq!(source.events(), events_in(&log), "every real event is read");
    assert_eq!(source.malformed_lines, 1);
    assert!(!source.complete());
    let warning = source
        .warnings
        .iter()
        .find(|w| w.contains("limit on one event"))
        .expect("the long line is reported");
    assert!(
        warning.contains(&format!("line 41 (byte {offset})"))
            && warning.contains(&format!("is {} bytes long", (300 << 20) + 1))
            && warning.contains("128 MiB"),
        "{warning}"
    );
}

#[test]
fn a_gzip_bomb_of_one_endless_line_stops_after_the_skip_limit() {
    // 1.1 GiB of zeros and no newline at all, about 1.1 MB of gzip.
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..(1 << 10) + 100 {
        encoder.write_all(&zeros).unwrap();
    }
    let bomb = encoder.finish().unwrap();
    let dir = tempfile::tempdir().unwrap();
    let source = read_all(&write(dir.path(), "app.gz", &bomb)).unwrap();
    assert_eq!(source.events(), 0);
    assert!(source.gaps && source.malformed_lines == 1);
    assert!(
        source
            .warnings
            .iter()
            .any(|w| w.contains("line 1 (byte 0) is at least")),
        "{:?}",
        source.warnings
    );
    assert!(
        source
            .warnings
            .iter()
            .any(|w| w.contains("no newline within 1024 MiB of line 1")),
        "{:?}",
        source.warnings
    );
}

// --- 4. lengths claimed before the data ---

#[test]
fn an_lz4_block_claiming_2_gib_is_refused_at_its_header() {
    // lz4-java's header: magic, token (LZ4, level 15), compressed and original length, checksum.
    let mut bytes = b"LZ4Block".to_vec();
    bytes.push(0x2F);
    bytes.extend(i32::MAX.to_le_bytes());
    bytes.extend((1i32 << 25).to_le_bytes());
    bytes.extend([0u8; 4]);
    bytes.extend([0x55u8; 100]);
    let dir = tempfile::tempdir().unwrap();
    let err = read_all(&write(dir.path(), "app.lz4", &bytes)).unwrap_err();
    assert!(
        err.contains("app.lz4: at byte 0") && err.contains("corrupt lz4 block header"),
        "{err}"
    );

    // The largest block lz4-java writes (32 MiB), with only 100 bytes of it present: a cut,
    // read as far as the bytes go.
    bytes[9..13].copy_from_slice(&(1i32 << 25).to_le_bytes());
    let err = read_all(&write(dir.path(), "cut.lz4", &bytes)).unwrap_err();
    assert!(err.contains("lz4 block at byte 0 cut short"), "{err}");
}

#[test]
fn snappy_chunks_claiming_more_than_their_format_allows_are_refused() {
    let header = b"\x82SNAPPY\0\0\0\0\x01\0\0\0\x01";
    let dir = tempfile::tempdir().unwrap();

    // A 30-byte stream whose chunk length claims 2 GiB.
    let mut bytes = header.to_vec();
    bytes.extend(i32::MAX.to_be_bytes());
    bytes.extend([0u8; 10]);
    let err = read_all(&write(dir.path(), "a.snappy", &bytes)).unwrap_err();
    assert!(
        err.contains("at byte 16") && err.contains("corrupt snappy chunk length"),
        "{err}"
    );

    // A chunk of 6 bytes whose varint claims 4 GiB of output.
    let mut bytes = header.to_vec();
    bytes.extend(6i32.to_be_bytes());
    bytes.extend([0xFF, 0xFF, 0xFF, 0xFF, 0x0F, 0x00]);
    let err = read_all(&write(dir.path(), "b.snappy", &bytes)).unwrap_err();
    assert!(err.contains("claims 4294967295 bytes from 6"), "{err}");

    // A length within the limit but data that stops: a cut, not an allocation of the claim.
    let mut bytes = header.to_vec();
    bytes.extend((60i32 << 20).to_be_bytes());
    bytes.extend([0u8; 10]);
    let err = read_all(&write(dir.path(), "c.snappy", &bytes)).unwrap_err();
    assert!(err.contains("snappy chunk at byte 16 cut short"), "{err}");
}

// --- 5. directories and archives ---

#[cfg(unix)]
#[test]
fn links_in_a_loop_and_to_nothing_are_passed_over_and_the_log_beside_them_is_read() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "app-1", &real_log());
    for name in ["a", "b", "c"] {
        std::os::unix::fs::symlink(".", dir.path().join(name)).unwrap();
    }
    std::os::unix::fs::symlink(dir.path().join("gone"), dir.path().join("dangling")).unwrap();
    let apps = load_all(dir.path());
    assert_eq!(apps.len(), 1, "the directory is read once, through no link");
    let (source, _) = &apps[0];
    assert!(source.complete(), "{:?}", source.warnings);
    assert!(
        source
            .warnings
            .iter()
            .any(|w| w.contains("/dangling: a link to nothing readable")),
        "{:?}",
        source.warnings
    );
    sparkdiag_ok(&["analyze", dir.path().to_str().unwrap(), "--format", "json"]);
}

#[test]
fn a_tar_link_out_of_the_archive_and_device_members_are_not_followed() {
    let outside = tempfile::tempdir().unwrap();
    let secret = write(outside.path(), "other-app", &real_log());
    let tar = tar_with(|b| {
        for (name, kind, target) in [
            (
                "logs/app-2",
                tar::EntryType::Symlink,
                secret.to_str().unwrap(),
            ),
            ("logs/app-3", tar::EntryType::Link, "../../../etc/passwd"),
            ("logs/app-4", tar::EntryType::Fifo, ""),
            ("logs/app-5", tar::EntryType::Char, ""),
        ] {
            let mut header = tar::Header::new_ustar();
            header.set_entry_type(kind);
            header.set_size(0);
            if !target.is_empty() {
                header.set_link_name(target).unwrap();
            }
            header.set_cksum();
            b.append_data(&mut header, name, std::io::empty()).unwrap();
        }
    });
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "logs.tar", &tar);
    let apps = load_all(&path);
    assert_eq!(apps.len(), 1, "only the real member is a log");
    let warnings = &apps[0].0.warnings;
    for (name, why) in [
        ("app-2", "link"),
        ("app-3", "link"),
        ("app-4", "device or pipe"),
        ("app-5", "device or pipe"),
    ] {
        assert!(
            warnings
                .iter()
                .any(|w| w.contains(&format!("logs/{name}: not unpacked: it is a {why}"))),
            "{name}: {warnings:?}"
        );
    }
}

#[test]
fn a_zip_bomb_stops_at_the_ratio_limit_and_leaves_nothing_behind() {
    use zip::write::SimpleFileOptions;
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    zip.start_file("app-1", stored).unwrap();
    zip.write_all(&real_log()).unwrap();
    // 200 MiB of zeros in about 200 KB: over the 64 MiB every archive may unpack, and over
    // 100 times the archive's size.
    let deflated = SimpleFileOptions::default()
        .compression_method(zip::CompressionMethod::Deflated)
        .large_file(false);
    zip.start_file("zeros", deflated).unwrap();
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..200 {
        zip.write_all(&zeros).unwrap();
    }
    let bytes = zip.finish().unwrap().into_inner();
    assert!(bytes.len() < 2 << 20);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "bomb.zip", &bytes);
    let inputs = discover(path.to_str().unwrap()).unwrap();
    assert_eq!(inputs.len(), 1);
    assert!(
        inputs[0]
            .skipped
            .iter()
            .any(|w| w.contains("unpacking stopped at zeros") && w.contains("decompression bomb")),
        "{:?}",
        inputs[0].skipped
    );
    let unpacked = inputs[0].parts[0].file().unwrap().to_path_buf();
    let folder = unpacked.parent().unwrap().to_path_buf();
    assert!(!folder.join("zeros").exists(), "the cut member is removed");
    let report = read_log(&inputs[0], |_| {}).unwrap();
    assert!(report.complete());
    drop(inputs);
    assert!(!folder.exists(), "the unpacked folder goes with the inputs");
}

#[test]
fn archives_nest_two_deep_and_no_deeper() {
    fn zip_of(name: &str, bytes: &[u8]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let options = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        zip.start_file(name, options).unwrap();
        zip.write_all(bytes).unwrap();
        zip.finish().unwrap().into_inner()
    }
    let inner = zip_of("app-1", &real_log());
    let middle = zip_of("inner.zip", &inner);
    let dir = tempfile::tempdir().unwrap();
    let two = write(dir.path(), "two.zip", &middle);
    assert_eq!(load_all(&two).len(), 1, "a zip in a zip is read");
    let three = write(dir.path(), "three.zip", &zip_of("middle.zip", &middle));
    let err = discover(three.to_str().unwrap()).unwrap_err().to_string();
    assert!(
        err.contains("three.zip") && err.contains("holds no Spark event log"),
        "{err}"
    );
}

// --- 6. reading what can be read ---

#[test]
fn a_corrupt_zstd_frame_keeps_every_byte_decoded_before_the_damage() {
    let log = real_log();
    let mut encoder = zstd::stream::Encoder::new(Vec::new(), 1).unwrap();
    encoder.include_checksum(true).unwrap();
    encoder.write_all(&log).unwrap();
    let mut bytes = encoder.finish().unwrap();
    // Damage the frame's checksum: every block decodes, then the frame fails.
    let last = bytes.len() - 1;
    bytes[last] ^= 0xFF;
    let dir = tempfile::tempdir().unwrap();
    let source = read_all(&write(dir.path(), "app.zstd", &bytes)).unwrap();
    // zstd checks a frame's checksum before it hands out the last block, so all but that block
    // (at most 128 KiB) is read, as `zstd -dc` writes it.
    let kept = log.len() - (128 << 10);
    assert!(
        source.files[0].decoded_bytes >= kept as u64,
        "{} of {} bytes",
        source.files[0].decoded_bytes,
        log.len()
    );
    assert!(source.events() >= events_in(&log[..kept]));
    assert!(source.gaps && !source.complete());
    let warning = source
        .warnings
        .iter()
        .find(|w| w.contains("corrupt zstd data"))
        .expect("the damage is reported");
    let at: usize = warning
        .split("corrupt zstd data at byte ")
        .nth(1)
        .and_then(|rest| rest.split(',').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{warning}"));
    assert!(
        at + 4 >= bytes.len() && at <= bytes.len(),
        "the offset is the checksum's, at the end: {warning}"
    );
}

#[test]
fn a_decode_error_names_its_real_offset() {
    // Damage the second lz4 block of a real log.
    let real = std::fs::read(testdata("logs/single/lz4/local-1796049372297.lz4")).unwrap();
    let first_len = 21 + i32::from_le_bytes(real[9..13].try_into().unwrap()) as usize;
    let mut bytes = real.clone();
    bytes[first_len] = b'X';
    let dir = tempfile::tempdir().unwrap();
    let source = read_all(&write(dir.path(), "app.lz4", &bytes)).unwrap();
    let warning = source
        .warnings
        .iter()
        .find(|w| w.contains("corrupt lz4 data"))
        .expect("the damage is reported");
    assert!(
        warning.contains(&format!("at byte {first_len},"))
            && warning.contains(&format!("header (\"LZ4Block\") at byte {first_len}")),
        "{warning}"
    );
}

#[test]
fn an_empty_file_is_unusable_whatever_its_codec() {
    // Nothing read is not a report: exit 2, naming the file and what was found (issue 49).
    let dir = tempfile::tempdir().unwrap();
    for name in [
        "app",
        "app.lz4",
        "app.lzf",
        "app.gz",
        "app.zstd",
        "app.snappy",
    ] {
        let path = write(dir.path(), name, b"");
        let out = crate::util::sparkdiag(&["analyze", path.to_str().unwrap(), "--format", "json"]);
        assert_eq!(out.status.code(), Some(2), "{name}");
        assert!(out.stdout.is_empty(), "{name}: no report");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains(name) && stderr.contains("the file is empty (0 bytes)"),
            "{name}: {stderr}"
        );
    }
}

#[test]
fn every_line_twice_and_a_second_application_start_are_reported() {
    let log = real_log();
    let doubled: Vec<u8> = lines(&log)
        .iter()
        .flat_map(|l| [*l, *l])
        .flatten()
        .copied()
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let source = read_all(&write(dir.path(), "twice", &doubled)).unwrap();
    // Every event that Spark writes once (tasks, jobs, stages, executors, queries, the app).
    let once = [
        "SparkListenerLogStart",
        "SparkListenerApplicationStart",
        "SparkListenerApplicationEnd",
        "SparkListenerEnvironmentUpdate",
        "SparkListenerJobStart",
        "SparkListenerJobEnd",
        "SparkListenerStageSubmitted",
        "SparkListenerStageCompleted",
        "SparkListenerTaskStart",
        "SparkListenerTaskEnd",
        "SparkListenerExecutorAdded",
        "SparkListenerExecutorRemoved",
        "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart",
        "org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd",
    ];
    let n = lines(&log)
        .iter()
        .filter(|l| {
            once.iter()
                .any(|name| l.starts_with(format!("{{\"Event\":\"{name}\"").as_bytes()))
        })
        .count();
    assert!(n > 100);
    assert!(
        source.warnings.iter().any(|w| w.contains(&format!(
            "{n} line(s) repeat the line just before them byte for byte, first at"
        ))),
        "{:?}",
        source.warnings
    );

    let joined = [log.as_slice(), log.as_slice()].concat();
    let source = read_all(&write(dir.path(), "joined", &joined)).unwrap();
    let start = lines(&log)
        .iter()
        .position(|l| l.starts_with(br#"{"Event":"SparkListenerApplicationStart""#))
        .unwrap();
    assert!(
        source.warnings.iter().any(|w| w.contains(&format!(
            "line {} (byte {}) is a second SparkListenerApplicationStart",
            lines(&log).len() + start + 1,
            log.len() + lines(&log)[..start].iter().map(|l| l.len()).sum::<usize>()
        ))),
        "{:?}",
        source.warnings
    );
}

#[test]
fn no_real_log_is_taken_for_a_duplicated_one() {
    // Databricks writes runs of identical empty SparkListenerDriverAccumUpdates lines.
    let mut paths = vec![
        testdata("logs/single/plain/local-1796049337368"),
        testdata("logs/failed/local-1796049483373"),
    ];
    if let Some(sample) = crate::util::shared_opt(
        "plan-samples/databricks-13.3-photon__spark-rapids-tools-nds_q88__exec26__selected-events.jsonl",
    ) {
        paths.push(sample);
    }
    if let Some(dir) = crate::util::shared_opt("spark-conformance/spark-events") {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() {
                paths.push(path);
            }
        }
    }
    for path in paths {
        let Ok(source) = read_all(&path) else {
            continue;
        };
        assert!(
            !source
                .warnings
                .iter()
                .any(|w| w.contains("repeat") || w.contains("second SparkListenerApplicationStart")),
            "{}: {:?}",
            path.display(),
            source.warnings
        );
    }
}

// --- cut at every byte ---

/// One real log per codec, the compressed ones first.
const CODEC_LOGS: [(&str, Codec); 5] = [
    ("logs/single/zstd/local-1796049355449.zstd", Codec::Zstd),
    ("logs/single/lz4/local-1796049372297.lz4", Codec::Lz4),
    (
        "logs/single/snappy/local-1796049387285.snappy",
        Codec::Snappy,
    ),
    ("logs/single/lzf/local-1796049407914.lzf", Codec::Lzf),
    ("logs/single/plain/local-1796049337368", Codec::Plain),
];

#[test]
fn a_real_log_of_every_codec_cut_anywhere_reads_what_precedes_the_cut() {
    let dir = tempfile::tempdir().unwrap();
    for &(rel, codec) in &CODEC_LOGS {
        let bytes = std::fs::read(testdata(rel)).unwrap();
        let whole = read_all(&testdata(rel)).unwrap();
        assert!(whole.complete());
        // Every byte of the first 256 (headers), then a hundred cuts spread over the file;
        // the decoders are cut at every byte of their first blocks in the test below.
        let cuts = (1..256).chain((256..bytes.len()).step_by(bytes.len() / 100));
        let path = dir.path().join(format!("cut.{}", codec.name()));
        let mut last_events = 0;
        for cut in cuts {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            match read_all(&path) {
                Ok(source) => {
                    assert!(
                        !source.complete(),
                        "{rel} cut at {cut} claims to be complete"
                    );
                    assert!(
                        source.events() >= last_events && source.events() < whole.events(),
                        "{rel} cut at {cut}: {} events",
                        source.events()
                    );
                    last_events = source.events();
                }
                Err(err) => {
                    assert_eq!(last_events, 0, "{rel} cut at {cut}: {err}");
                    assert!(err.contains("cut.") && err.contains("at byte"), "{err}");
                }
            }
        }
    }
}

#[test]
fn every_codec_cut_through_its_first_blocks_decodes_a_prefix_and_says_cut() {
    use std::io::Read;
    // Plain text has no blocks to cut through.
    for &(rel, codec) in &CODEC_LOGS[..4] {
        let bytes = std::fs::read(testdata(rel)).unwrap();
        let mut whole = Vec::new();
        codec
            .decoder(bytes.as_slice())
            .read_to_end(&mut whole)
            .unwrap();
        // 32 KiB holds the stream header, the first whole block of every codec (lzf's real
        // first chunk is 29,122 bytes) and the start of the next one: every byte of the first
        // 8 KiB, then every fifth.
        let (mut longest, mut cut_short) = (0, 0);
        for cut in (1..8 << 10).chain((8 << 10..32 << 10).step_by(5)) {
            let mut out = Vec::new();
            let result = codec.decoder(&bytes[..cut]).read_to_end(&mut out);
            assert!(
                whole.starts_with(&out),
                "{rel} cut at {cut}: decoded bytes that are not the log's"
            );
            assert!(out.len() >= longest, "{rel} cut at {cut}: less than before");
            longest = out.len();
            // A cut between two blocks or frames is a clean, shorter stream; any other is
            // reported as cut short, never as corrupt.
            if let Err(err) = result {
                assert_eq!(
                    err.kind(),
                    std::io::ErrorKind::UnexpectedEof,
                    "{rel} cut at {cut}: {err}"
                );
                cut_short += 1;
            }
        }
        assert!(
            cut_short > 13_000,
            "{rel}: only {cut_short} cuts were reported"
        );
        assert!(longest > 0, "{rel}: the first block decodes whole");
    }
}

/// Every threshold of every rule set to 0 and to a huge value (`--set CODE.key=N`), on logs of
/// each kind: no rule panics whatever a user sets (a `min_batches=0` once subtracted past 0).
#[test]
fn no_threshold_a_user_sets_makes_a_rule_panic() {
    let logs: Vec<_> = [
        "logs/streaming/idle",
        "logs/streaming/behind_files",
        "logs/streaming/dstreams",
        "logs/patterns/skew-join",
        "logs/memory/metaspace",
        "logs/failed",
    ]
    .iter()
    .map(|rel| crate::util::load(&crate::util::testdata(rel)).1)
    .collect();
    let facts: Vec<sparkdiag_facts::Facts> = logs.iter().map(sparkdiag_facts::Facts::of).collect();
    let mut runs = 0;
    for rule in sparkdiag_rules::all_rules() {
        for t in rule.thresholds {
            for value in ["0", "1e12"] {
                let mut config = sparkdiag_rules::Config::default();
                config
                    .set_from_arg(&format!("{}.{}={value}", rule.code, t.key))
                    .unwrap_or_else(|e| panic!("{}.{}: {e}", rule.code, t.key));
                for (app, facts) in logs.iter().zip(&facts) {
                    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                        sparkdiag_rules::analyze(app, facts, &config)
                    }));
                    assert!(
                        caught.is_ok(),
                        "{}.{}={value} panics on {:?}",
                        rule.code,
                        t.key,
                        app.name
                    );
                    runs += 1;
                }
            }
        }
    }
    assert!(runs > 500, "{runs} runs");
}
