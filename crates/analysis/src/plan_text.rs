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
