//! What a Databricks Photon plan says about the parts Photon did not run: the
//! `== Photon Explanation ==` trailer Databricks prints after the plan, and the operators of a
//! Photon plan that ran in Spark's own (JVM, row-at-a-time) engine instead.
//!
//! Databricks prints the trailer in `EXPLAIN` output and in the event log's
//! `physicalPlanDescription` (both `SparkListenerSQLExecutionStart` and the adaptive updates of a
//! DBR 13.3 log, `plan-samples/databricks-13.3-photon__…`). Its wording varies by runtime; these
//! are the shapes seen in real output (plan-samples and public notebooks):
//!
//! ```text
//! Photon does not fully support the query because:
//!     Unsupported expression(s): UDF()
//! reference node:
//!     Project [UDF() AS UDF()#46]
//!
//! Photon does not fully support the query because:
//!     UDF(name#2964) is not supported:
//!         The expression `scalaudf` is currently unimplemented.
//! Reference node:
//!     Project [UDF(name#2964) AS UDF(name)#2989]
//!
//! Photon does not fully support the query because:
//!     Unsupported node: LocalTableScan [name#11284, age#11285].
//! ```
//!
//! and `The query is fully supported by Photon.` when it ran all of it.

use crate::model::{Plan, PlanNode};
use crate::operator::Operator;

/// The title of the trailer Databricks appends to a Photon plan.
pub const PHOTON_EXPLANATION: &str = "Photon Explanation";

/// What the `== Photon Explanation ==` trailer says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhotonExplanation {
    /// `The query is fully supported by Photon.`
    pub fully_supported: bool,
    /// What Photon could not run, in the order Databricks printed it.
    pub unsupported: Vec<Unsupported>,
    /// The plan operators Databricks named as holding them (`reference node:`), as printed.
    pub reference_nodes: Vec<String>,
    /// 1-based line of the trailer's header.
    pub line: usize,
}

/// What an entry of the explanation names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnsupportedKind {
    /// An expression: `Unsupported expression(s): …`, `<expression> is not supported: …`.
    Expression,
    /// An operator: `Unsupported node: …`.
    Node,
    /// A line of another shape, kept as it was.
    Other,
}

/// One thing Photon said it could not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unsupported {
    /// An expression, an operator, or a line of another shape.
    pub kind: UnsupportedKind,
    /// `UDF()`, `UDF(name#2964)`, `LocalTableScan [a#1]`, `pivotfirst(…)`.
    pub what: String,
    /// Databricks' reason, when it gave one (`The expression `scalaudf` is currently
    /// unimplemented.`).
    pub why: Option<String>,
}

impl Unsupported {
    /// A user-defined function (Scala, Java, Python or SQL), which Photon does not run: Spark
    /// prints an unnamed one as `UDF(…)`, Databricks calls the expression `scalaudf` or
    /// `pythonudf`, and a Python UDF is its own operator (`BatchEvalPython`, `ArrowEvalPython`).
    pub fn is_udf(&self) -> bool {
        (self.kind == UnsupportedKind::Node
            && Operator::classify(&self.what) == Operator::PythonUdf)
            || self.what.contains("UDF(")
            || self.what.to_ascii_lowercase().contains("pythonudf")
            || self
                .why
                .as_deref()
                .is_some_and(|w| w.to_ascii_lowercase().contains("udf"))
    }

    /// An operator of rows held in the driver (`LocalTableScan`, from a local collection):
    /// nothing is read from storage, and Photon takes the rows over right after it.
    pub fn is_local_rows(&self) -> bool {
        self.kind == UnsupportedKind::Node && self.what.starts_with("LocalTableScan")
    }
}

/// Operators that move or wrap what other operators compute, and do no per-row work worth
/// naming when they run outside Photon: AQE's wrappers, the transitions themselves, commands,
/// reused results, and the collection of a few rows (`CollectLimit` under `show()`).
fn is_plumbing(node: &PlanNode) -> bool {
    matches!(
        node.operator,
        Operator::AdaptiveSparkPlan
            | Operator::ColumnarToRow
            | Operator::RowToColumnar
            | Operator::ShuffleQueryStage
            | Operator::BroadcastQueryStage
            | Operator::TableCacheQueryStage
            | Operator::ResultQueryStage
            | Operator::AqeShuffleRead
            | Operator::ReusedExchange
            | Operator::Subquery
            | Operator::ReusedSubquery
            | Operator::Command
            | Operator::Limit
            | Operator::Coalesce
    ) || node.name.starts_with("InputAdapter")
        || node.name.starts_with("WholeStageCodegen")
}

impl Plan {
    /// The `== Photon Explanation ==` trailer, read; `None` when the text has none (Spark
    /// outside Databricks, a runtime without Photon, or a plan text cut before its end).
    pub fn photon_explanation(&self) -> Option<PhotonExplanation> {
        let trailer = self
            .trailers
            .iter()
            .find(|t| t.title == PHOTON_EXPLANATION)?;
        Some(read_explanation(&trailer.text, trailer.line))
    }

    /// Whether any operator of the plan that runs is Photon's.
    pub fn runs_photon(&self) -> bool {
        self.running_nodes().iter().any(|&i| self.nodes[i].photon)
    }

    /// In a plan Photon runs, the operators that ran in Spark's JVM engine instead, on rows:
    /// every operator of the plan that runs that is not Photon's, leaving out the plumbing
    /// (AQE wrappers, the `ColumnarToRow`/`RowToColumnar` transitions at the boundary, commands,
    /// reused results, limits, `Coalesce`). Empty for a plan without Photon operators: outside
    /// Databricks every operator is Spark's own, and that is no fallback.
    pub fn outside_photon(&self) -> Vec<usize> {
        let running = self.running_nodes();
        if !running.iter().any(|&i| self.nodes[i].photon) {
            return Vec::new();
        }
        running
            .into_iter()
            .filter(|&i| {
                let node = &self.nodes[i];
                !node.photon && !node.inner && !is_plumbing(node)
            })
            .collect()
    }
}

/// Reads the trailer's lines. An entry starts at the indentation of the first entry; a line
/// indented deeper belongs to the entry above it (its reason); `reference node:` starts the list
/// of operators Databricks pointed at, which an entry's line ends again (runtimes that print one
/// reference per entry).
fn read_explanation(text: &str, line: usize) -> PhotonExplanation {
    let mut explanation = PhotonExplanation {
        fully_supported: false,
        unsupported: Vec::new(),
        reference_nodes: Vec::new(),
        line,
    };
    let mut in_references = false;
    let mut entry_indent: Option<usize> = None;
    for raw in text.lines() {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            continue;
        }
        let lower = trimmed.to_ascii_lowercase();
        if lower.contains("fully supported by photon") {
            explanation.fully_supported = true;
            continue;
        }
        if lower.starts_with("photon does not fully support the query") {
            in_references = false;
            continue;
        }
        if let Some(rest) = lower.strip_prefix("reference node") {
            in_references = true;
            let after = rest.trim_start_matches('s').trim_start_matches(':').trim();
            if !after.is_empty() {
                let at = trimmed.len() - after.len();
                explanation.reference_nodes.push(trimmed[at..].to_string());
            }
            continue;
        }
        let indent = raw.len() - raw.trim_start().len();
        let starts_entry = entry(trimmed).is_some();
        if in_references && !starts_entry {
            explanation.reference_nodes.push(trimmed.to_string());
            continue;
        }
        in_references = false;
        let deeper = entry_indent.is_some_and(|at| indent > at);
        match explanation.unsupported.last_mut() {
            Some(last) if deeper => {
                let why = last.why.get_or_insert_with(String::new);
                if !why.is_empty() {
                    why.push(' ');
                }
                why.push_str(trimmed);
            }
            _ => {
                entry_indent.get_or_insert(indent);
                explanation
                    .unsupported
                    .push(entry(trimmed).unwrap_or(Unsupported {
                        kind: UnsupportedKind::Other,
                        what: trimmed.to_string(),
                        why: None,
                    }));
            }
        }
    }
    explanation
}

/// An entry line: `Unsupported expression(s): X`, `Unsupported node: X.`, `X is not supported:
/// [reason]`.
fn entry(line: &str) -> Option<Unsupported> {
    let what = |s: &str| s.trim().trim_end_matches('.').trim().to_string();
    for (prefix, kind) in [
        ("Unsupported expression(s):", UnsupportedKind::Expression),
        ("Unsupported expressions:", UnsupportedKind::Expression),
        ("Unsupported expression:", UnsupportedKind::Expression),
        ("Unsupported node:", UnsupportedKind::Node),
    ] {
        if let Some(rest) = line.strip_prefix(prefix) {
            return Some(Unsupported {
                kind,
                what: what(rest),
                why: None,
            });
        }
    }
    let at = line.find(" is not supported")?;
    let why = line[at + " is not supported".len()..]
        .trim_start_matches(':')
        .trim();
    Some(Unsupported {
        kind: UnsupportedKind::Expression,
        what: line[..at].trim().to_string(),
        why: (!why.is_empty()).then(|| why.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shapes Databricks prints, each as a public notebook or README recorded it
    /// (indentation as printed: tabs, or spaces where the page re-indented them).
    #[test]
    fn reads_each_shape_of_the_explanation() {
        let scala = read_explanation(
            "Photon does not fully support the query because:\n\tUDF(name#2964) is not supported:\n\t\tThe expression `scalaudf` is currently unimplemented.\nReference node:\n\tProject [UDF(name#2964) AS UDF(name)#2989]",
            1,
        );
        assert!(!scala.fully_supported);
        assert_eq!(
            scala.unsupported,
            [Unsupported {
                kind: UnsupportedKind::Expression,
                what: "UDF(name#2964)".into(),
                why: Some("The expression `scalaudf` is currently unimplemented.".into()),
            }]
        );
        assert!(scala.unsupported[0].is_udf());
        assert_eq!(
            scala.reference_nodes,
            ["Project [UDF(name#2964) AS UDF(name)#2989]"]
        );

        let local = read_explanation(
            "Photon does not fully support the query because:\n        Unsupported node: LocalTableScan [name#11284, age#11285, city#11286].\n\nReference node:\n        LocalTableScan [name#11284, age#11285, city#11286]",
            1,
        );
        assert_eq!(local.unsupported.len(), 1);
        assert_eq!(local.unsupported[0].kind, UnsupportedKind::Node);
        assert_eq!(
            local.unsupported[0].what,
            "LocalTableScan [name#11284, age#11285, city#11286]"
        );
        assert!(local.unsupported[0].is_local_rows() && !local.unsupported[0].is_udf());
        let python =
            entry("Unsupported node: BatchEvalPython [score_udf(amount#12)#40], [pythonUDF0#41].");
        assert!(python.is_some_and(|u| u.is_udf()));

        let sample = read_explanation(
            "  Photon does not fully support the query because:\n  Unsupported node: Sample 0.0, 0.01, false, 8646570776163936710\nreference node:\n  Sample 0.0, 0.01, false, 8646570776163936710",
            1,
        );
        assert_eq!(
            sample.unsupported[0].what,
            "Sample 0.0, 0.01, false, 8646570776163936710"
        );
        assert_eq!(sample.reference_nodes.len(), 1);

        let full = read_explanation("The query is fully supported by Photon.", 1);
        assert!(full.fully_supported && full.unsupported.is_empty());
    }
}
