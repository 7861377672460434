//! `sparkdiag plan`'s analysis: physical-plan text on its own, without an event log.

use sparkdiag_plan::Plan;
use sparkdiag_rules::{Config, Finding};

/// Why plan text could not be analysed, naming the input.
#[derive(Debug)]
pub struct PlanTextError(pub String);

impl std::fmt::Display for PlanTextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for PlanTextError {}

/// Parses the plans in `bytes` (what df.explain() or EXPLAIN FORMATTED printed; `shown` names
/// the input in errors) and runs the plan rules over them.
pub fn analyze_plan_text(
    bytes: Vec<u8>,
    shown: &str,
    config: &Config,
) -> Result<(Vec<Plan>, Vec<Finding>), PlanTextError> {
    let text = plan_text(bytes, shown)?;
    let plans =
        sparkdiag_plan::parse_plans(&text).map_err(|e| PlanTextError(format!("{shown}: {e}")))?;
    let facts = sparkdiag_facts::Facts::of_plans(plans);
    let findings = sparkdiag_rules::analyze_plans(&facts, config);
    Ok((facts.plans.into_iter().map(|p| p.plan).collect(), findings))
}

/// `sparkdiag plan FILE`: the plan text in `file` (`-` reads standard input, named `<stdin>`
/// in errors) analysed with the default thresholds and each `--set CODE.KEY=VALUE` in
/// `overrides`; no config file is read, since the text has no project around it.
pub fn analyze_plan_file(
    file: &str,
    overrides: &[String],
) -> Result<(Vec<Plan>, Vec<Finding>), PlanTextError> {
    let (bytes, shown) = if file == "-" {
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin(), &mut bytes)
            .map_err(|e| PlanTextError(format!("cannot read standard input: {e}")))?;
        (bytes, "<stdin>")
    } else {
        let bytes =
            std::fs::read(file).map_err(|e| PlanTextError(format!("{file}: cannot read: {e}")))?;
        (bytes, file)
    };
    let config = Config::without_files(overrides, &[]).map_err(|e| PlanTextError(e.to_string()))?;
    analyze_plan_text(bytes, shown, &config)
}

/// The bytes of `sparkdiag plan`'s input as text. An event log given by mistake (compressed,
/// or JSON lines of Spark events) is named as one, with the command that reads it.
fn plan_text(bytes: Vec<u8>, shown: &str) -> Result<String, PlanTextError> {
    use sparkdiag_eventlog::Codec;
    let head = &bytes[..bytes.len().min(4096)];
    let event_log = match Codec::from_magic(head) {
        Some(Codec::Plain) => head
            .windows(b"\"Event\":".len())
            .any(|w| w == b"\"Event\":"),
        Some(_) => true,
        None => false,
    };
    if event_log {
        let what = match Codec::from_magic(head) {
            Some(Codec::Plain) | None => "a Spark event log".to_string(),
            Some(codec) => format!("a {} Spark event log", codec.name()),
        };
        let path = if shown == "<stdin>" { "-" } else { shown };
        return Err(PlanTextError(format!(
            "{shown}: this looks like {what}, not plan text; `sparkdiag analyze {path}` reads it \
             (and checks the plans inside it)"
        )));
    }
    String::from_utf8(bytes).map_err(|e| {
        PlanTextError(format!(
            "{shown}: not UTF-8 text (at byte {}); `sparkdiag plan` reads what df.explain() or \
             EXPLAIN FORMATTED prints",
            e.utf8_error().valid_up_to()
        ))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plan_file_is_read_with_its_overrides_and_named_when_it_cannot_be() {
        let file = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../testdata/plans/antipattern-many-exchanges.txt"
        );
        let codes = |overrides: &[&str]| {
            let overrides: Vec<String> = overrides.iter().map(|s| s.to_string()).collect();
            let (plans, findings) = analyze_plan_file(file, &overrides).unwrap();
            assert!(!plans.is_empty());
            findings.iter().map(|f| f.rule).collect::<Vec<_>>()
        };
        assert!(codes(&[]).contains(&"EX001"), "{:?}", codes(&[]));
        assert!(!codes(&["EX001.max_exchanges=1000"]).contains(&"EX001"));
        let missing = analyze_plan_file("no/such/plan.txt", &[]).unwrap_err();
        assert!(
            missing
                .to_string()
                .starts_with("no/such/plan.txt: cannot read: "),
            "{missing}"
        );
        let bad = analyze_plan_file(file, &["EX001.no_such_key=1".into()]).unwrap_err();
        assert!(bad.to_string().contains("no_such_key"), "{bad}");
    }

    #[test]
    fn an_event_log_or_binary_is_named_not_parsed() {
        let config = Config::default();
        let error = |bytes: &[u8]| {
            analyze_plan_text(bytes.to_vec(), "in.txt", &config)
                .unwrap_err()
                .to_string()
        };
        assert!(
            error(b"{\"Event\":\"SparkListenerLogStart\",\"Spark Version\":\"4.0.0\"}\n")
                .contains("this looks like a Spark event log")
        );
        assert!(error(&[0x28, 0xb5, 0x2f, 0xfd, 0, 0]).contains("zstd"));
        assert!(error(&[b'=', 0xff, 0xfe]).contains("not UTF-8 text (at byte 1)"));
    }
}
