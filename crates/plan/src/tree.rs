//! Reading the indented operator tree shared by every explain mode.
//!
//! A line is `indent branch? codegen? text`: the indent is a run of 3-column groups (`"   "`,
//! `":  "`), the branch marker `+- ` (last child) or `:- ` (other children), the codegen marker
//! `* ` (formatted), `*(k) ` or `*` (non-formatted). The depth of a node is the column of its
//! text divided by 3. A node's parent is the nearest line above with a smaller depth; a jump of
//! two levels marks an inner child (subquery plan, command's logical plan). AQE prints
//! `+- == Final Plan ==` / `+- == Initial Plan ==` header lines under `AdaptiveSparkPlan`; the
//! sub-tree root that follows sits at the header text's column and has no branch marker.

use crate::details::Details;
use crate::error::{ErrorKind, PlanError};
use crate::model::{AqeLabel, PlanKind, PlanNode, Section};
use crate::operator::Operator;
use crate::text::find_pair;

/// One line of input with its 1-based number.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Line<'a> {
    pub no: usize,
    pub text: &'a str,
}

/// An operator id as printed: a number or `unknown`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OpId {
    Known(u32),
    Unknown,
}

impl OpId {
    pub(crate) fn known(self) -> Option<u32> {
        match self {
            OpId::Known(id) => Some(id),
            OpId::Unknown => None,
        }
    }
}

/// Counts the 3-column indent groups and the branch marker; returns the text column and
/// whether a branch marker was present.
fn scan_prefix(line: &str) -> (usize, bool) {
    let bytes = line.as_bytes();
    let mut p = 0;
    loop {
        match bytes.get(p..p + 3) {
            Some(b"+- ") | Some(b":- ") => return (p + 3, true),
            Some(b"   ") | Some(b":  ") | Some(b"|  ") => p += 3,
            _ => return (p, false),
        }
    }
}

/// The `== Final Plan ==` family, after the branch marker.
fn aqe_header(text: &str) -> Option<AqeLabel> {
    match text.trim_end() {
        "== Final Plan ==" => Some(AqeLabel::Final),
        "== Current Plan ==" => Some(AqeLabel::Current),
        "== Initial Plan ==" => Some(AqeLabel::Initial),
        _ => None,
    }
}

/// Splits the codegen marker off: `* ` (formatted), `*(k) `, or `*` glued to the name (the
/// normalised goldens). Returns (starred, stage, rest).
fn split_codegen(text: &str) -> (bool, Option<u32>, &str) {
    let Some(rest) = text.strip_prefix('*') else {
        return (false, None, text);
    };
    if let Some(inner) = rest.strip_prefix('(')
        && let Some(close) = inner.find(')')
        && let Ok(stage) = inner[..close].parse::<u32>()
    {
        let after = &inner[close + 1..];
        return (true, Some(stage), after.strip_prefix(' ').unwrap_or(after));
    }
    (true, None, rest.strip_prefix(' ').unwrap_or(rest))
}

/// Finds the operator id of a formatted tree line: the first `" (" digits|unknown ")"` that
/// ends the line or is followed by a suffix (`, Statistics(…)`, ` (columnarIn=…)`, vendor
/// text). Returns (name part, id, suffix).
pub(crate) fn split_operator_id(text: &str) -> Option<(&str, OpId, &str)> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(found) = find_pair(&bytes[from..], b" (") {
        let pos = from + found;
        let start = pos + 2;
        let mut end = start;
        while end < bytes.len() && bytes[end].is_ascii_digit() {
            end += 1;
        }
        let id = if end > start {
            text[start..end].parse::<u32>().ok().map(OpId::Known)
        } else if text[start..].starts_with("unknown") {
            end = start + "unknown".len();
            Some(OpId::Unknown)
        } else {
            None
        };
        if let Some(id) = id
            && bytes.get(end) == Some(&b')')
        {
            let after = &text[end + 1..];
            if after.is_empty() || after.starts_with(' ') || after.starts_with(',') {
                return Some((&text[..pos], id, after));
            }
        }
        from = pos + 1;
    }
    None
}

/// Is this line a formatted detail-block header, `(12) Exchange …`?
pub(crate) fn is_detail_header(text: &str) -> bool {
    let Some(rest) = text.strip_prefix('(') else {
        return false;
    };
    let Some(close) = find_pair(rest.as_bytes(), b") ") else {
        return false;
    };
    let id = &rest[..close];
    (id == "unknown" || (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())))
        && rest.len() > close + 2
}

enum Entry {
    Node {
        idx: usize,
        depth: usize,
    },
    Header {
        depth: usize,
        label: AqeLabel,
        host: usize,
        has_root: bool,
    },
}

impl Entry {
    fn depth(&self) -> usize {
        match self {
            Entry::Node { depth, .. } | Entry::Header { depth, .. } => *depth,
        }
    }
}

/// Builds one tree from its lines (no blank lines inside), appending the nodes to `nodes`.
/// Returns the root's index.
pub(crate) fn build_tree(
    lines: &[Line<'_>],
    kind: PlanKind,
    section: Section,
    nodes: &mut Vec<PlanNode>,
) -> Result<usize, PlanError> {
    let mut stack: Vec<Entry> = Vec::new();
    let mut root: Option<usize> = None;
    for line in lines {
        let (col, branch) = scan_prefix(line.text);
        let rest = &line.text[col..];
        if rest.starts_with(' ') || rest.is_empty() {
            return Err(PlanError::new(
                line.no,
                ErrorKind::Indentation,
                "indentation in steps of three columns",
                line.text,
            ));
        }
        let depth = col / 3;

        if let Some(label) = aqe_header(rest) {
            while stack.last().is_some_and(|top| top.depth() >= depth) {
                stack.pop();
            }
            let host = match stack.last() {
                Some(Entry::Node { idx, depth: d }) if d + 1 == depth => *idx,
                _ => {
                    return Err(PlanError::new(
                        line.no,
                        ErrorKind::Indentation,
                        "an `== … Plan ==` header directly under an AdaptiveSparkPlan line",
                        line.text,
                    ));
                }
            };
            stack.push(Entry::Header {
                depth,
                label,
                host,
                has_root: false,
            });
            continue;
        }

        let (starred, stage, text) = split_codegen(rest);
        let mut node = new_node(line, kind, section, starred, stage, text)?;

        while let Some(top) = stack.last() {
            let pop = match top {
                Entry::Node { depth: d, .. } => *d >= depth,
                Entry::Header {
                    depth: d, has_root, ..
                } => *d > depth || (*d == depth && *has_root),
            };
            if !pop {
                break;
            }
            stack.pop();
        }

        let idx = nodes.len();
        match stack.last_mut() {
            None => {
                if root.is_some() {
                    return Err(PlanError::new(
                        line.no,
                        ErrorKind::Indentation,
                        "a child line (`+- `/`:- `) below the root; a tree has one root",
                        line.text,
                    ));
                }
                root = Some(idx);
                nodes.push(node);
            }
            Some(Entry::Header {
                depth: d,
                label,
                host,
                has_root,
            }) => {
                if *d != depth {
                    return Err(PlanError::new(
                        line.no,
                        ErrorKind::Indentation,
                        "the root of an AQE sub-tree at the column of its `== … Plan ==` header",
                        line.text,
                    ));
                }
                *has_root = true;
                let host = *host;
                let label = *label;
                node.parent = Some(host);
                node.aqe_label = Some(label);
                let host_node = &mut nodes[host];
                if label == AqeLabel::Initial && !host_node.children.is_empty() {
                    host_node.initial_plan = Some(idx);
                    node.section = Section::InitialPlan;
                } else {
                    host_node.children.push(idx);
                    node.section = host_node.section;
                }
                nodes.push(node);
            }
            Some(Entry::Node {
                idx: parent,
                depth: d,
            }) => {
                let parent = *parent;
                if !branch {
                    return Err(PlanError::new(
                        line.no,
                        ErrorKind::Indentation,
                        "a `+- ` or `:- ` branch marker before a child operator",
                        line.text,
                    ));
                }
                match depth - *d {
                    1 => {}
                    2 => node.inner = true,
                    _ => {
                        return Err(PlanError::new(
                            line.no,
                            ErrorKind::Indentation,
                            "a child at most two levels deeper than the line above it",
                            line.text,
                        ));
                    }
                }
                node.parent = Some(parent);
                node.section = nodes[parent].section;
                nodes[parent].children.push(idx);
                nodes.push(node);
            }
        }
        stack.push(Entry::Node { idx, depth });
    }
    root.ok_or_else(|| {
        let (no, text) = lines.first().map_or((0, "end of text"), |l| (l.no, l.text));
        PlanError::new(no, ErrorKind::EmptyTree, "an operator line", text)
    })
}

fn new_node(
    line: &Line<'_>,
    kind: PlanKind,
    section: Section,
    starred: bool,
    stage: Option<u32>,
    text: &str,
) -> Result<PlanNode, PlanError> {
    let (name, id, details) = match kind {
        PlanKind::Formatted => {
            let Some((name, id, suffix)) = split_operator_id(text) else {
                return Err(PlanError::new(
                    line.no,
                    ErrorKind::MissingOperatorId,
                    "an operator line ending in `(id)`",
                    line.text,
                ));
            };
            let mut details = Details::default();
            if let Some(stats) = crate::details::parse_statistics(suffix) {
                details.statistics = Some(Box::new(stats));
            }
            (name.to_string(), id.known(), details)
        }
        PlanKind::TreeOnly => {
            let (name, args) = crate::oneline::split_name(text);
            let operator = Operator::classify(name);
            let mut details = Details::default();
            details.interpret_one_line(operator, name, args);
            (name.to_string(), None, details)
        }
    };
    let operator = Operator::classify(&name);
    Ok(PlanNode {
        id,
        photon: name.starts_with("Photon"),
        operator,
        name,
        codegen_stage: stage,
        whole_stage_codegen: starred,
        children: Vec::new(),
        parent: None,
        inner: false,
        initial_plan: None,
        aqe_label: None,
        section,
        line: line.no,
        tree_text: text.to_string(),
        details,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Vec<Line<'_>> {
        text.lines()
            .enumerate()
            .map(|(i, text)| Line { no: i + 1, text })
            .collect()
    }

    #[test]
    fn operator_ids() {
        assert_eq!(
            split_operator_id("BroadcastHashJoin Inner BuildRight (8)"),
            Some(("BroadcastHashJoin Inner BuildRight", OpId::Known(8), ""))
        );
        assert_eq!(
            split_operator_id("ShuffleQueryStage (30), Statistics(sizeInBytes=1.0 B)"),
            Some((
                "ShuffleQueryStage",
                OpId::Known(30),
                ", Statistics(sizeInBytes=1.0 B)"
            ))
        );
        assert_eq!(
            split_operator_id("PhotonScan parquet  (1)"),
            Some(("PhotonScan parquet ", OpId::Known(1), ""))
        );
        assert_eq!(
            split_operator_id("Scan JDBCRelation(t) [numPartitions=1] (1)"),
            Some(("Scan JDBCRelation(t) [numPartitions=1]", OpId::Known(1), ""))
        );
        assert_eq!(
            split_operator_id("HashAggregate (unknown)").map(|t| t.1),
            Some(OpId::Unknown)
        );
        assert_eq!(split_operator_id("Range (0, 100, step=1, splits=8)"), None);
        assert_eq!(split_operator_id("Filter (99999999999)"), None);
    }

    #[test]
    fn detail_headers() {
        assert!(is_detail_header("(12) Exchange"));
        assert!(is_detail_header("(unknown) HashAggregate"));
        assert!(!is_detail_header("(a) x"));
        assert!(!is_detail_header("(12)"));
    }

    #[test]
    fn aqe_headers_make_final_the_child_and_keep_initial_aside() {
        let text = "AdaptiveSparkPlan (5)\n+- == Final Plan ==\n   * HashAggregate (4)\n   +- ShuffleQueryStage (3)\n      +- Exchange (2)\n         +- Range (1)\n+- == Initial Plan ==\n   HashAggregate (6)\n   +- Exchange (2)\n      +- Range (1)";
        let mut nodes = Vec::new();
        let root =
            build_tree(&lines(text), PlanKind::Formatted, Section::Main, &mut nodes).unwrap();
        assert_eq!(root, 0);
        assert_eq!(nodes[0].children, vec![1]);
        assert_eq!(nodes[1].aqe_label, Some(AqeLabel::Final));
        assert!(nodes[1].whole_stage_codegen);
        let initial = nodes[0].initial_plan.unwrap();
        assert_eq!(nodes[initial].id, Some(6));
        assert_eq!(nodes[initial].section, Section::InitialPlan);
        assert_eq!(nodes[initial + 2].section, Section::InitialPlan);
    }

    #[test]
    fn inner_children_two_levels_deeper() {
        let text = "Execute CreateViewCommand (1)\n   +- CreateViewCommand (2)\n         +- Project (5)\n            +- SubqueryAlias (4)";
        let mut nodes = Vec::new();
        build_tree(&lines(text), PlanKind::Formatted, Section::Main, &mut nodes).unwrap();
        assert!(nodes[1].inner && nodes[2].inner && !nodes[3].inner);
        assert_eq!(nodes[2].parent, Some(1));
    }

    #[test]
    fn bad_indentation_is_an_error_with_the_line() {
        let text = "Sort (3)\n+- Exchange (2)\n            +- Range (1)";
        let mut nodes = Vec::new();
        let err =
            build_tree(&lines(text), PlanKind::Formatted, Section::Main, &mut nodes).unwrap_err();
        assert_eq!((err.line, err.kind), (3, ErrorKind::Indentation));
    }

    #[test]
    fn codegen_markers() {
        assert_eq!(
            split_codegen("*(2) HashAggregate(x)"),
            (true, Some(2), "HashAggregate(x)")
        );
        assert_eq!(split_codegen("* Sort (3)"), (true, None, "Sort (3)"));
        assert_eq!(split_codegen("*Filter x"), (true, None, "Filter x"));
        assert_eq!(split_codegen("Exchange"), (false, None, "Exchange"));
    }
}
