//! `--redact`: the application's identifying values replaced by pseudonyms before anything is
//! computed from it, so that every view (text, JSON, Markdown, HTML, SARIF, the charts, the
//! night's tables, the MCP answers) is drawn from redacted words alone.
//!
//! Redacting the model rather than each output is what makes "every format" true: a view added
//! later cannot leak what it never sees. What is replaced: application ids and names, host names
//! and IP addresses, user names and e-mail addresses, file system and object store paths (the
//! bucket or host of a URL included), notebook paths, and quoted literals in SQL text and job
//! descriptions (and, word for word, wherever a plan prints them unquoted). A pseudonym says what
//! it replaces (`host-1`, `ip-2`, `user-1`, `s3a://bucket-1/path-3`) and is the same wherever the
//! value appears in one report. Numbers are kept: the metrics are the diagnosis.

use std::collections::HashMap;
use std::sync::LazyLock;

use regex::Regex;
use sparkdiag_contract::Report;
use sparkdiag_eventlog::events::SparkPlanInfo;
use sparkdiag_model::Application;

/// Where `batch --redact` and `serve --redact` read the secret that keys their pseudonyms.
pub const KEY_VARIABLE: &str = "SPARKDIAG_REDACT_KEY";

/// The secret in [`KEY_VARIABLE`], when it is set and not empty.
pub fn key_from_environment() -> Option<Vec<u8>> {
    let secret = std::env::var_os(KEY_VARIABLE)?;
    let bytes = secret.as_encoded_bytes().to_vec();
    (!bytes.is_empty()).then_some(bytes)
}

/// The pseudonyms of one command's reports: each original value is given one and keeps it.
#[derive(Default)]
pub struct Redactor {
    pseudonyms: HashMap<String, String>,
    counts: HashMap<&'static str, usize>,
    /// [`Redactor::keyed`]: pseudonyms drawn from the value and this secret, not counted.
    key: Option<Vec<u8>>,
    /// Values known by where they were found (a host, a user, an application name), replaced
    /// wherever they appear in free text, longest first.
    known: Vec<String>,
    known_pattern: Option<Regex>,
}

/// Object store and file system URLs: the scheme is kept, its authority (a bucket, a host, a
/// container and account) and its path are not.
static URL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b([a-zA-Z][a-zA-Z0-9+.-]{1,10}):(//)?([^\s/'\x22,;\]\)\[(<>]*)(/[^\s'\x22,;\]\)\[(<>]*)?")
        .expect("a valid URL pattern")
});
static EMAIL: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+")
        .expect("a valid e-mail pattern")
});
static IPV4: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(25[0-5]|2[0-4]\d|1?\d?\d)(\.(25[0-5]|2[0-4]\d|1?\d?\d)){3}\b")
        .expect("a valid IPv4 pattern")
});
/// Host names that say they are one by their last label; a Java class name (`java.io.File`,
/// `org.apache.spark`) ends otherwise.
static HOST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.(?:internal|local|lan|localdomain|com|net|org|edu|gov|corp|cloud)\b")
        .expect("a valid host pattern")
});
/// An absolute path of two segments or more, after a space, a bracket, a quote, `=` or `:`
/// (so that `MB/s` or `1/2` are not paths).
static PATH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(^|[\s\[\(='\x22:,])(/[^\s/'\x22,;\]\)\[(<>:]+(?:/[^\s'\x22,;\]\)\[(<>:]*)+)")
        .expect("a valid path pattern")
});
/// A quoted literal in SQL text or a job description.
static QUOTED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"'([^'\n]*)'|\x22([^\x22\n]*)\x22").expect("a valid literal pattern")
});

/// A plan's comparison with a literal, as a condition prints it: `(site#4 = Cypress Creek)`,
/// `(cast(id#47L as string) = 7)`; the literal is what no `#`, bracket or parenthesis is in.
static COMPARED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r" (=|<=>|>=|<=|>|<|!=|<>) ([^()#\[\],\n]+?)\)").expect("a valid comparison pattern")
});
/// A filter pushed to the source, as the scan prints it: `EqualTo(site,Cypress Creek)`.
static PUSHED: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(EqualTo|EqualNullSafe|GreaterThan|GreaterThanOrEqual|LessThan|LessThanOrEqual|StringStartsWith|StringEndsWith|StringContains)\(([^,()]+),([^()]*)\)")
        .expect("a valid pushed-filter pattern")
});
/// A string function of a column and a literal: `StartsWith(site#4, Cypress Creek)`.
static STRING_MATCH: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"\b(StartsWith|EndsWith|Contains|Like|RLike)\(([^,()]+), ([^()]*)\)")
        .expect("a valid string-match pattern")
});
/// `In(site, [a,b])` and `site#4 IN (a,b)`.
static IN_LIST: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(\bIn\([^,()]+, \[|\bIN \()([^\]\)]*)([\]\)])").expect("a valid IN pattern")
});

/// URL schemes that name a file system or an object store; other `word:` prefixes are text.
const SCHEMES: &[&str] = &[
    "s3", "s3a", "s3n", "gs", "abfs", "abfss", "wasb", "wasbs", "adl", "hdfs", "viewfs", "dbfs",
    "file", "oss", "cos", "cosn", "obs", "jar", "http", "https", "spark", "hive", "jdbc",
];

impl Redactor {
    /// A redactor whose pseudonyms are the same in every run given the same `secret`:
    /// `host-3f9a0c2e71`, the kind and ten hex digits of the value's HMAC-SHA256 under the
    /// secret. What `batch` (a night's reports, matched with earlier nights') and `serve` (each
    /// upload redacted on its own) need: the same host or application reads the same in every
    /// report, whichever was redacted first, without one redactor holding a night's values.
    /// Without the secret, anyone could hash a guess (an address of a /16) and find it.
    pub fn keyed(secret: &[u8]) -> Redactor {
        Redactor {
            key: Some(secret.to_vec()),
            ..Redactor::default()
        }
    }

    /// Redacts `app` in place, with the pseudonyms given to the applications before it; then
    /// [`Redactor::report`] redacts what its report says beside it.
    pub fn application(&mut self, app: &mut Application) {
        self.learn(app);
        self.apply(app);
    }

    /// The values whose kind only their place tells (a host name without dots, an application
    /// name), named first so that free text everywhere finds them.
    fn learn(&mut self, app: &Application) {
        if let Some(id) = &app.id {
            self.know("app-id", id);
        }
        if let Some(name) = &app.name {
            self.know("app", name);
        }
        for key in ["spark.app.name", "spark.app.id"] {
            if let Some(value) = app.spark_properties.get(key) {
                self.know(if key.ends_with("id") { "app-id" } else { "app" }, value);
            }
        }
        for user in app
            .user
            .iter()
            .chain(app.spark_properties.get("user.name"))
            .chain(
                app.spark_properties
                    .get("spark.databricks.clusterUsageTags.clusterOwnerUserId"),
            )
            .chain(
                app.streaming
                    .connect_operations
                    .iter()
                    .filter_map(|o| o.user.as_ref()),
            )
        {
            self.know("user", user);
        }
        for host in app
            .executors
            .iter()
            .map(|e| &e.host)
            .chain(app.spark_properties.get("spark.driver.host"))
        {
            self.know("host", host);
        }
        if let Some(notebook) = &app.databricks_notebook {
            self.know("notebook", notebook);
        }
        // A literal the SQL text quotes, a plan prints bare: `(country#12 = US)`.
        let mut literals = Vec::new();
        let texts = app
            .sql
            .iter()
            .map(|s| &s.description)
            .chain(app.jobs.iter().filter_map(|j| j.description.as_ref()));
        for text in texts {
            for quoted in QUOTED.captures_iter(text) {
                if let Some(inner) = quoted.get(1).or(quoted.get(2)) {
                    literals.push(inner.as_str().to_string());
                }
            }
        }
        for literal in literals {
            // A number or a letter, replaced wherever it stands, would take operator ids and
            // words with it; quoted, it is replaced all the same.
            if literal.chars().count() >= 3 && literal.parse::<f64>().is_err() {
                self.know("literal", &literal);
            }
        }
        let mut known = self.known.clone();
        known.sort_by_key(|k| std::cmp::Reverse(k.len()));
        let alternatives: Vec<String> = known.iter().map(|k| regex::escape(k)).collect();
        self.known_pattern = (!alternatives.is_empty()).then(|| {
            Regex::new(&format!("(?:{})", alternatives.join("|"))).expect("escaped alternatives")
        });
    }

    fn know(&mut self, kind: &'static str, value: &str) {
        let value = value.trim();
        // Empty, or a word every log has (`root`, `local`), would replace what is no secret.
        if value.is_empty() || matches!(value, "localhost" | "driver" | "unknown" | "null") {
            return;
        }
        if IPV4.is_match(value) && IPV4.find(value).is_some_and(|m| m.len() == value.len()) {
            self.pseudonym("ip", value);
        } else {
            self.pseudonym(kind, value);
        }
        if !self.known.iter().any(|k| k == value) {
            self.known.push(value.to_string());
        }
    }

    /// The pseudonym of `value`, given on first sight: `host-1`, `host-2`, ...
    fn pseudonym(&mut self, kind: &'static str, value: &str) -> String {
        if let Some(name) = self.pseudonyms.get(value) {
            return name.clone();
        }
        let name = match &self.key {
            Some(key) => format!("{kind}-{}", keyed_digest(key, value)),
            None => {
                let n = self.counts.entry(kind).or_default();
                *n += 1;
                format!("{kind}-{n}")
            }
        };
        self.pseudonyms.insert(value.to_string(), name.clone());
        name
    }

    /// Free text with every value of the kinds above replaced.
    pub fn text(&mut self, text: &str) -> String {
        if text.is_empty() {
            return String::new();
        }
        let mut out = self.replace_known(text);
        out = self.replace(&URL, &out, |r, c| {
            let scheme = &c[1];
            if !SCHEMES.contains(&scheme.to_ascii_lowercase().as_str()) {
                return c[0].to_string();
            }
            let slashes = c.get(2).map_or("", |m| m.as_str());
            let authority = &c[3];
            let authority = if authority.is_empty() || authority.starts_with("bucket-") {
                authority.to_string()
            } else {
                r.pseudonym("bucket", authority)
            };
            let path = c
                .get(4)
                .map(|p| p.as_str())
                .filter(|p| p.len() > 1)
                .map(|p| r.path(p))
                .unwrap_or_default();
            format!("{scheme}:{slashes}{authority}{path}")
        });
        out = self.replace(&EMAIL, &out, |r, c| r.pseudonym("email", &c[0]));
        out = self.replace(&IPV4, &out, |r, c| r.pseudonym("ip", &c[0]));
        out = self.replace(&HOST, &out, |r, c| r.pseudonym("host", &c[0]));
        self.replace(&PATH, &out, |r, c| format!("{}{}", &c[1], r.path(&c[2])))
    }

    /// An absolute path, segment by segment (`/path-1/path-2/path-3.csv.gz`): the same directory
    /// has the same pseudonym wherever it is named, so a table's folder stays the prefix of its
    /// files, and the extensions that say how a file is stored or compressed stay, since the
    /// analysis reads them (a gzip file cannot be split). A segment already a pseudonym stays.
    fn path(&mut self, path: &str) -> String {
        path.split('/')
            .map(|segment| {
                if segment.is_empty() || is_pseudonym(segment, "path") {
                    return segment.to_string();
                }
                let (name, extensions) = split_storage_extensions(segment);
                if name.is_empty() {
                    return segment.to_string();
                }
                format!("{}{extensions}", self.pseudonym("path", name))
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// SQL text, a plan or a job description: free text, and its literals (quoted, or compared
    /// with a column where a plan prints them bare).
    pub fn sql(&mut self, text: &str) -> String {
        let literal = |r: &mut Redactor, value: &str| -> String {
            let value = value.trim();
            if value.starts_with("literal-") || matches!(value, "null" | "true" | "false") {
                value.to_string()
            } else {
                r.pseudonym("literal", value)
            }
        };
        let text = self.replace(&COMPARED, text, |r, c| {
            format!(" {} {})", &c[1], literal(r, &c[2]))
        });
        let text = self.replace(&PUSHED, &text, |r, c| {
            format!("{}({},{})", &c[1], &c[2], literal(r, &c[3]))
        });
        let text = self.replace(&STRING_MATCH, &text, |r, c| {
            format!("{}({}, {})", &c[1], &c[2], literal(r, &c[3]))
        });
        let text = self.replace(&IN_LIST, &text, |r, c| {
            let values: Vec<String> = c[2].split(',').map(|v| literal(r, v)).collect();
            format!("{}{}{}", &c[1], values.join(","), &c[3])
        });
        let text = self.replace(&QUOTED, &text, |r, c| {
            let (quote, inner) = match c.get(1) {
                Some(inner) => ('\'', inner.as_str()),
                None => ('"', c.get(2).map_or("", |m| m.as_str())),
            };
            if inner.starts_with("literal-") {
                return c[0].to_string();
            }
            format!("{quote}{}{quote}", r.pseudonym("literal", inner))
        });
        self.text(&text)
    }

    fn replace_known(&mut self, text: &str) -> String {
        let Some(pattern) = self.known_pattern.clone() else {
            return text.to_string();
        };
        let word = |c: Option<char>| c.is_some_and(|c| c.is_alphanumeric() || c == '_');
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for m in pattern.find_iter(text) {
            // Whole values only: `host-1` inside `ghost-12` is no host.
            let before = text[..m.start()].chars().next_back();
            let after = text[m.end()..].chars().next();
            let first = m.as_str().chars().next();
            let end = m.as_str().chars().next_back();
            if (word(before) && word(first)) || (word(after) && word(end)) {
                continue;
            }
            out.push_str(&text[last..m.start()]);
            out.push_str(&self.pseudonym("value", m.as_str()));
            last = m.end();
        }
        out.push_str(&text[last..]);
        out
    }

    fn replace(
        &mut self,
        pattern: &Regex,
        text: &str,
        mut with: impl FnMut(&mut Redactor, &regex::Captures) -> String,
    ) -> String {
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for c in pattern.captures_iter(text) {
            let whole = c.get(0).expect("a match");
            out.push_str(&text[last..whole.start()]);
            out.push_str(&with(self, &c));
            last = whole.end();
        }
        out.push_str(&text[last..]);
        out
    }

    fn apply(&mut self, app: &mut Application) {
        let text = |r: &mut Redactor, s: &mut String| *s = r.text(s);
        let sql = |r: &mut Redactor, s: &mut String| *s = r.sql(s);
        for field in [
            &mut app.id,
            &mut app.name,
            &mut app.user,
            &mut app.databricks_notebook,
        ]
        .into_iter()
        .flatten()
        {
            text(self, field);
        }
        if let Some(run) = &mut app.databricks_job_run {
            for id in run.job_id.iter_mut() {
                text(self, id);
            }
            text(self, &mut run.run_id);
        }
        let properties = std::mem::take(&mut app.spark_properties);
        app.spark_properties = properties
            .into_iter()
            .map(|(key, value)| {
                let key = self.text(&key);
                let value = if key.contains("description") || key.contains("sql") {
                    self.sql(&value)
                } else {
                    self.text(&value)
                };
                (key, value)
            })
            .collect();
        for job in &mut app.jobs {
            text(self, &mut job.name);
            for field in [&mut job.failure, &mut job.job_group, &mut job.call_site]
                .into_iter()
                .flatten()
            {
                text(self, field);
            }
            if let Some(description) = &mut job.description {
                sql(self, description);
            }
        }
        for stage in &mut app.stages {
            text(self, &mut stage.name);
            if let Some(reason) = &mut stage.failure_reason {
                text(self, reason);
            }
        }
        for failure in &mut app.task_failures {
            for field in [
                &mut failure.message,
                &mut failure.root_cause,
                &mut failure.exception_class,
            ]
            .into_iter()
            .flatten()
            {
                text(self, field);
            }
        }
        for executor in &mut app.executors {
            text(self, &mut executor.host);
            if let Some(reason) = &mut executor.removed_reason {
                text(self, reason);
            }
        }
        for execution in &mut app.sql {
            sql(self, &mut execution.description);
            // In the order they were always redacted: pseudonyms are numbered as met.
            let packed = |this: &mut Self, packed: &mut sparkdiag_model::PackedText| {
                let mut text = packed.text().into_owned();
                sql(this, &mut text);
                let mut redacted = sparkdiag_model::PackedText::from(text);
                redacted.pack();
                *packed = redacted;
            };
            packed(self, &mut execution.details);
            packed(self, &mut execution.plan_description);
            if let Some(error) = &mut execution.error {
                sql(self, error);
            }
            if let Some(text) = &mut execution.final_plan_description {
                packed(self, text);
            }
            for plan in [&mut execution.plan, &mut execution.final_plan]
                .into_iter()
                .flatten()
            {
                self.plan(plan);
            }
        }
        for query in &mut app.streaming.queries {
            for field in [&mut query.name, &mut query.sink].into_iter().flatten() {
                text(self, field);
            }
            for source in &mut query.sources {
                text(self, source);
            }
            if let Some(end) = &mut query.terminated
                && let Some(exception) = &mut end.exception
            {
                text(self, exception);
            }
        }
        for operation in &mut app.streaming.connect_operations {
            if let Some(user) = &mut operation.user {
                text(self, user);
            }
        }
    }

    fn plan(&mut self, plan: &mut SparkPlanInfo) {
        plan.simple_string = self.sql(&plan.simple_string);
        for value in plan.metadata.values_mut() {
            *value = self.sql(value);
        }
        for child in &mut plan.children {
            self.plan(child);
        }
    }

    /// What the report says beside the application: the paths of its inputs and of the config
    /// files read, and the reading's warnings (which name them).
    pub fn report(&mut self, report: &mut Report) {
        let source = &mut report.source;
        for input in &mut source.inputs {
            *input = self.input_path(input);
        }
        for file in &mut source.files {
            file.path = self.input_path(&file.path);
        }
        for warning in &mut source.warnings {
            *warning = self.text(warning);
        }
        for file in &mut source.config.files {
            *file = self.input_path(file);
        }
        let config = &mut report.source.config;
        for from in config
            .thresholds
            .iter_mut()
            .map(|t| &mut t.from)
            .chain(config.disabled.iter_mut().map(|d| &mut d.from))
        {
            if !from.starts_with("--") {
                *from = self.input_path(from);
            }
        }
    }

    /// A path the user named: every part of it is theirs, relative or not.
    pub fn input_path(&mut self, path: &str) -> String {
        if path.is_empty() || path == "-" || path.starts_with("input-") {
            return path.to_string();
        }
        self.pseudonym("input", path)
    }
}

/// The first ten hex digits of HMAC-SHA256(`key`, `value`) (RFC 2104): 40 bits, so that a
/// night's thousands of values do not share one, short enough to read.
fn keyed_digest(key: &[u8], value: &str) -> String {
    use sha2::{Digest, Sha256};
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(value.as_bytes())
        .finalize();
    let outer = Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize();
    outer[..5].iter().map(|b| format!("{b:02x}")).collect()
}

/// `segment` is a pseudonym of `kind` (`path-3`, or keyed `path-3f9a0c2e71`), with the storage
/// extensions a path's pseudonym keeps.
fn is_pseudonym(segment: &str, kind: &str) -> bool {
    let (name, _) = split_storage_extensions(segment);
    name.strip_prefix(kind)
        .and_then(|rest| rest.strip_prefix('-'))
        .is_some_and(|id| !id.is_empty() && id.chars().all(|c| c.is_ascii_hexdigit()))
}

/// The extensions that say how a file is stored and compressed, which the analysis reads and a
/// pseudonym keeps: `part-0.csv.gz` is `("part-0", ".csv.gz")`.
fn split_storage_extensions(segment: &str) -> (&str, &str) {
    const STORAGE: [&str; 16] = [
        "gz", "gzip", "bz2", "zst", "zstd", "lz4", "snappy", "xz", "deflate", "csv", "tsv", "json",
        "txt", "parquet", "orc", "avro",
    ];
    let mut name = segment;
    while let Some((stem, extension)) = name.rsplit_once('.') {
        if stem.is_empty() || !STORAGE.contains(&extension.to_ascii_lowercase().as_str()) {
            break;
        }
        name = stem;
    }
    (name, &segment[name.len()..])
}

#[cfg(test)]
mod tests {
    use super::Redactor;

    #[test]
    fn keyed_pseudonyms_are_the_hmac_of_the_value_and_differ_by_secret() {
        // RFC 4231 test case 2: HMAC-SHA256("Jefe", "what do ya want for nothing?").
        assert_eq!(
            super::keyed_digest(b"Jefe", "what do ya want for nothing?"),
            "5bdcc146bf"
        );
        let text = "lost executor on ip-10-0-4-17.ec2.internal";
        let night = Redactor::keyed(b"secret").text(text);
        assert_eq!(
            night,
            Redactor::keyed(b"secret").text(text),
            "same every run"
        );
        assert!(night.starts_with("lost executor on host-"), "{night}");
        assert_ne!(night, Redactor::keyed(b"other").text(text));
    }

    #[test]
    fn each_kind_is_named_and_keeps_its_pseudonym() {
        let mut r = Redactor::default();
        let text = r.text(
            "FetchFailed(BlockManagerId(3, 10.0.4.17, 7337)) from ip-10-0-4-17.ec2.internal \
             reading s3a://acme-raw/2026/orders.parquet for ops@acme.com in /home/alice/job.py",
        );
        assert_eq!(
            text,
            "FetchFailed(BlockManagerId(3, ip-1, 7337)) from host-1 reading \
             s3a://bucket-1/path-1/path-2.parquet for email-1 in /path-3/path-4/path-5"
        );
        // A folder keeps its pseudonym in its files' paths, and a file keeps how it is stored.
        assert_eq!(
            r.text("s3a://acme-raw/2026/orders.parquet/part-00000.snappy.parquet"),
            "s3a://bucket-1/path-1/path-2.parquet/path-6.snappy.parquet"
        );
        assert_eq!(
            r.text("/data/in/day.csv.gz"),
            "/path-7/path-8/path-9.csv.gz"
        );
        assert_eq!(
            r.text("10.0.4.17 again"),
            "ip-1 again",
            "one value, one pseudonym"
        );
    }

    #[test]
    fn what_only_looks_like_a_secret_stays() {
        let mut r = Redactor::default();
        for text in [
            "java.io.FileNotFoundException at org.apache.spark.rdd.RDD",
            "read 12 MB/s, 1/2 of the tasks",
            "collect at workload.py:107",
            "spark.sql.shuffle.partitions",
        ] {
            assert_eq!(r.text(text), text);
        }
    }

    #[test]
    fn a_plans_literals_go_and_its_structure_stays() {
        let mut r = Redactor::default();
        assert_eq!(
            r.sql("Filter ((site#4 = Springfield) OR (cast(pay#5 as string) = 7007))"),
            "Filter ((site#4 = literal-1) OR (cast(pay#5 as string) = literal-2))"
        );
        assert_eq!(
            r.sql("PushedFilters: [IsNotNull(site), EqualTo(site,Springfield)]"),
            "PushedFilters: [IsNotNull(site), EqualTo(site,literal-1)]"
        );
        assert_eq!(
            r.sql("SELECT * FROM t WHERE city = 'Springfield'"),
            "SELECT * FROM t WHERE city = 'literal-1'"
        );
    }
}
