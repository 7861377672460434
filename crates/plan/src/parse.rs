//! Finding the plans in a text and parsing each one.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::details::{Details, Field, ShuffleOrigin, parse_field_line};
use crate::error::{ErrorKind, PlanError};
use crate::model::{
    AqeLabel, Plan, PlanKind, PlanNode, PlanWarning, Section, Subplan, Subquery, Trailer,
    WarningKind,
};
use crate::operator::Operator;
use crate::text::{count_list, strip_truncation_marker};
use crate::tree::{Line, build_tree, is_detail_header, split_operator_id};

const PHYSICAL_HEADER: &str = "== Physical Plan ==";
const SUBQUERIES_HEADER: &str = "===== Subqueries =====";
const OPTIMIZED_OUT_HEADER: &str = "===== Adaptively Optimized Out Exchanges =====";

/// Parses every physical plan in `text`. See the crate documentation.
pub fn parse_plans(text: &str) -> Result<Vec<Plan>, PlanError> {
    // Sized up front: a log's plans are tens of kilobytes, and growing the vector copied it
    // over and over.
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let mut lines: Vec<Line<'_>> = Vec::with_capacity(newlines + 1);
    lines.extend(text.split('\n').enumerate().map(|(i, t)| Line {
        no: i + 1,
        text: t.strip_suffix('\r').unwrap_or(t),
    }));
    let headers: Vec<usize> = lines
        .iter()
        .enumerate()
        .filter(|(_, l)| l.text.trim() == PHYSICAL_HEADER)
        .map(|(i, _)| i)
        .collect();

    if headers.is_empty() {
        return parse_headerless(&lines).map(|plan| vec![plan]);
    }
    let mut plans = Vec::with_capacity(headers.len());
    for &h in &headers {
        let start = h + 1;
        let end = plan_end(&lines, start);
        plans.push(parse_one(&lines[start..end], lines[h].no)?);
    }
    Ok(plans)
}

/// A text without `== Physical Plan ==` is accepted when it starts with a formatted tree (a
/// root line ending in `(id)`), e.g. a tree copied without its header.
fn parse_headerless(lines: &[Line<'_>]) -> Result<Plan, PlanError> {
    let Some(first) = lines.iter().position(|l| !l.text.trim().is_empty()) else {
        return Err(PlanError::new(
            1,
            ErrorKind::NoPlan,
            "a `== Physical Plan ==` section",
            "end of text",
        ));
    };
    let line = lines[first];
    let trimmed = line.text.trim_start();
    if trimmed.starts_with('{') || trimmed.starts_with('[') {
        return Err(PlanError::new(
            line.no,
            ErrorKind::NotPlanText,
            "plan text (`== Physical Plan ==` …), not JSON: event logs and `sparkPlanInfo` are read elsewhere",
            line.text,
        ));
    }
    let looks_formatted =
        !line.text.starts_with(' ') && split_operator_id(strip_codegen_marker(line.text)).is_some();
    if !looks_formatted {
        return Err(PlanError::new(
            line.no,
            ErrorKind::NoPlan,
            "a `== Physical Plan ==` section or a formatted plan tree",
            line.text,
        ));
    }
    let end = plan_end(lines, first);
    parse_one(&lines[first..end], line.no)
}

fn strip_codegen_marker(text: &str) -> &str {
    text.strip_prefix("* ").unwrap_or(text)
}

/// Where the plan that starts at `start` ends: at the next plan, the next logical-plan header
/// of an extended explain, the next `-- !query` block of a `.sql.out` golden, or a codegen dump.
fn plan_end(lines: &[Line<'_>], start: usize) -> usize {
    lines
        .iter()
        .enumerate()
        .skip(start)
        .find(|(_, l)| is_terminator(l.text))
        .map_or(lines.len(), |(i, _)| i)
}

fn is_terminator(text: &str) -> bool {
    let t = text.trim_end();
    t.trim_start() == PHYSICAL_HEADER
        || t.starts_with("-- !query")
        || (t.starts_with("== ") && t.ends_with(" Logical Plan =="))
        || (t.starts_with("Found ") && t.ends_with(" WholeStageCodegen subtrees."))
}

/// `== Photon Explanation ==`, `== Optimizer Statistics (…) ==`, `== Extended Information (…) ==`.
fn trailer_title(text: &str) -> Option<&str> {
    let t = text.trim_end();
    let inner = t.strip_prefix("== ")?.strip_suffix(" ==")?;
    (!inner.is_empty() && !inner.starts_with('=')).then_some(inner)
}

fn is_blank(line: &Line<'_>) -> bool {
    line.text.trim().is_empty()
}

/// Lines that end a tree: blank lines, section headers, trailers, detail headers (formatted).
fn ends_tree(line: &Line<'_>, kind: PlanKind) -> bool {
    is_blank(line)
        || line.text.starts_with("=====")
        || trailer_title(line.text).is_some()
        || line.text.starts_with("Subquery:")
        || line.text.starts_with("Subplan:")
        || (kind == PlanKind::Formatted && is_detail_header(line.text))
}

/// A detail block as read, before it is joined to its tree nodes.
struct Block<'a> {
    /// Borrowed from the text: most nodes keep the tree line's name, which is the same.
    name: &'a str,
    codegen: Option<u32>,
    reuses: Option<u32>,
    fields: Vec<Field>,
    line: usize,
    /// Tree nodes still to be joined to this block; the last one takes its name and fields
    /// instead of copying them.
    uses: usize,
}

fn parse_one(body: &[Line<'_>], header_no: usize) -> Result<Plan, PlanError> {
    // Spark's `... <n> more characters` marker: keep what precedes the cut line.
    let cut = body
        .iter()
        .position(|l| strip_truncation_marker(l.text).is_some());
    let truncated = cut.is_some();
    let body = &body[..cut.unwrap_or(body.len())];

    let start = body.iter().position(|l| !is_blank(l));
    let first = match start {
        Some(i) if !ends_tree(&body[i], PlanKind::TreeOnly) => i,
        _ => {
            let (no, text) = start.map_or((header_no + 1, "end of text"), |i| {
                (body[i].no, body[i].text)
            });
            return Err(PlanError::new(
                no,
                ErrorKind::EmptyTree,
                "an operator line after `== Physical Plan ==`",
                text,
            ));
        }
    };
    let kind = tree_kind(body[first].text);
    let tree_end = body[first..]
        .iter()
        .position(|l| ends_tree(l, kind))
        .map_or(body.len(), |p| first + p);

    // A node is large enough that each growth of the vector copies kilobytes (and sends glibc
    // to consolidate its free lists); the main tree's lines are nearly always all of them.
    let mut nodes = Vec::with_capacity(tree_end - first);
    let root = build_tree(&body[first..tree_end], kind, Section::Main, &mut nodes)?;
    let mut plan = Plan {
        kind,
        line: header_no,
        nodes,
        root,
        is_final_plan: None,
        aqe_label: None,
        subqueries: Vec::new(),
        optimized_out: Vec::new(),
        trailers: Vec::new(),
        truncated,
        warnings: Vec::new(),
    };

    let blocks = parse_sections(&body[tree_end..], &mut plan)?;
    match kind {
        PlanKind::Formatted => attach_details(&mut plan, blocks),
        PlanKind::TreeOnly => number_tree_only(&mut plan),
    }
    for node in &mut plan.nodes {
        refine_operator(node);
    }
    check_reuses(&mut plan);
    set_aqe_state(&mut plan);
    plan.warnings.sort_by_key(|w| w.line);
    // A node is close to a kilobyte, and the plan rules hold an event log's plans 64
    // executions at a time: the room the vector grew into is given back.
    plan.nodes.shrink_to_fit();
    Ok(plan)
}

/// Formatted when the root line carries an `(id)`.
fn tree_kind(root_line: &str) -> PlanKind {
    let text = root_line.trim_start();
    let text = text.strip_prefix("+- ").unwrap_or(text);
    let text = strip_codegen_marker(text);
    if split_operator_id(text).is_some() {
        PlanKind::Formatted
    } else {
        PlanKind::TreeOnly
    }
}

enum Area {
    Details,
    Subqueries,
    OptimizedOut,
    Trailer,
}

/// Reads everything after the main tree: detail blocks, the subquery and optimized-out
/// sections with their trees, and trailers. Returns the detail blocks by id.
fn parse_sections<'a>(
    rest: &[Line<'a>],
    plan: &mut Plan,
) -> Result<BTreeMap<u32, Block<'a>>, PlanError> {
    let mut blocks: BTreeMap<u32, Block<'a>> = BTreeMap::new();
    let mut current: Option<(Option<u32>, Block<'a>)> = None;
    // The fields of the block being read. One buffer for all blocks, so that each block's own
    // vector is allocated once at its final size.
    let mut open_fields: Vec<Field> = Vec::new();
    let mut area = Area::Details;
    let mut prev_blank = true;
    let mut j = 0;
    while j < rest.len() {
        let line = rest[j];
        let text = line.text;
        if is_blank(&line) {
            prev_blank = true;
            j += 1;
            continue;
        }
        if let Some(title) = trailer_title(text) {
            finish_block(&mut current, &mut open_fields, &mut blocks, plan);
            plan.trailers.push(Trailer {
                title: title.to_string(),
                text: String::new(),
                line: line.no,
            });
            area = Area::Trailer;
            j += 1;
            continue;
        }
        if let Area::Trailer = area {
            if let Some(trailer) = plan.trailers.last_mut() {
                // Keep blank lines inside a trailer, drop them at its end.
                let gap = rest[..j].iter().rev().take_while(|l| is_blank(l)).count();
                let lead = if trailer.text.is_empty() { 0 } else { gap + 1 };
                for _ in 0..lead {
                    trailer.text.push('\n');
                }
                trailer.text.push_str(text);
            }
            j += 1;
            continue;
        }
        if text.trim_end() == SUBQUERIES_HEADER {
            finish_block(&mut current, &mut open_fields, &mut blocks, plan);
            area = Area::Subqueries;
            prev_blank = true;
            j += 1;
            continue;
        }
        if text.trim_end() == OPTIMIZED_OUT_HEADER {
            finish_block(&mut current, &mut open_fields, &mut blocks, plan);
            area = Area::OptimizedOut;
            prev_blank = true;
            j += 1;
            continue;
        }
        let entry_header = match area {
            Area::Subqueries => text.starts_with("Subquery:"),
            Area::OptimizedOut => text.starts_with("Subplan:"),
            _ => false,
        };
        if entry_header {
            finish_block(&mut current, &mut open_fields, &mut blocks, plan);
            let section = match area {
                Area::Subqueries => {
                    plan.subqueries.push(parse_subquery_header(&line)?);
                    Section::Subquery(plan.subqueries.len() - 1)
                }
                _ => {
                    plan.optimized_out.push(parse_subplan_header(&line)?);
                    Section::OptimizedOut(plan.optimized_out.len() - 1)
                }
            };
            j += 1;
            let tree_start = j;
            while j < rest.len() && !ends_tree(&rest[j], PlanKind::Formatted) {
                j += 1;
            }
            if j > tree_start {
                let root = build_tree(
                    &rest[tree_start..j],
                    PlanKind::Formatted,
                    section,
                    &mut plan.nodes,
                )?;
                match section {
                    Section::Subquery(k) => plan.subqueries[k].root = Some(root),
                    Section::OptimizedOut(k) => plan.optimized_out[k].root = Some(root),
                    _ => {}
                }
            }
            prev_blank = false;
            continue;
        }
        if prev_blank && is_detail_header(text) {
            finish_block(&mut current, &mut open_fields, &mut blocks, plan);
            current = Some(parse_detail_header(&line));
            prev_blank = false;
            j += 1;
            continue;
        }
        match current.as_mut() {
            Some(_) => match parse_field_line(text, line.no) {
                Some(field) => open_fields.push(field),
                None => match open_fields.last_mut() {
                    Some(last) => {
                        last.value.push('\n');
                        last.value.push_str(text);
                    }
                    None => open_fields.push(Field {
                        label: "Text".to_string(),
                        count: None,
                        value: text.to_string(),
                        line: line.no,
                    }),
                },
            },
            None => plan.warnings.push(PlanWarning {
                line: line.no,
                kind: WarningKind::StrayLine,
                message: format!("line outside any detail block or section: {}", short(text)),
            }),
        }
        prev_blank = false;
        j += 1;
    }
    finish_block(&mut current, &mut open_fields, &mut blocks, plan);
    Ok(blocks)
}

fn short(text: &str) -> String {
    match text.char_indices().nth(60) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

/// `(12) Exchange [codegen id : 3] [Reuses operator id: 5]` (suffixes optional).
fn parse_detail_header<'a>(line: &Line<'a>) -> (Option<u32>, Block<'a>) {
    let text = line.text;
    let (id_text, rest) = text
        .strip_prefix('(')
        .and_then(|r| r.split_once(") "))
        .unwrap_or(("unknown", text));
    let id = id_text.parse::<u32>().ok();
    let mut name = rest;
    let mut reuses = None;
    if let Some(head) = name.strip_suffix(']')
        && let Some((before, target)) = head.rsplit_once(" [Reuses operator id: ")
    {
        reuses = target.trim().parse().ok();
        name = before;
    }
    let mut codegen = None;
    if let Some(head) = name.strip_suffix(']')
        && let Some((before, stage)) = head.rsplit_once(" [codegen id : ")
        && let Ok(stage) = stage.trim().parse()
    {
        codegen = Some(stage);
        name = before;
    }
    (
        id,
        Block {
            name,
            codegen,
            reuses,
            fields: Vec::new(),
            line: line.no,
            uses: 0,
        },
    )
}

fn finish_block<'a>(
    current: &mut Option<(Option<u32>, Block<'a>)>,
    open_fields: &mut Vec<Field>,
    blocks: &mut BTreeMap<u32, Block<'a>>,
    plan: &mut Plan,
) {
    let Some((id, mut block)) = current.take() else {
        return;
    };
    // Moved into a vector of exactly their number; the buffer keeps its room for the next block.
    block.fields = Vec::with_capacity(open_fields.len());
    block.fields.append(open_fields);
    for field in &block.fields {
        if let Some(n) = field.count
            && let Some(len) = count_list(&field.value)
            && n != len
        {
            plan.warnings.push(PlanWarning {
                line: field.line,
                kind: WarningKind::ListCountMismatch,
                message: format!("`{} [{n}]` lists {len} elements", field.label),
            });
        }
    }
    let Some(id) = id else { return };
    if blocks.contains_key(&id) {
        plan.warnings.push(PlanWarning {
            line: block.line,
            kind: WarningKind::DuplicateDetails,
            message: format!("a second detail block for operator ({id}); the first one is kept"),
        });
        return;
    }
    blocks.insert(id, block);
}

fn malformed(line: &Line<'_>, expected: &str) -> PlanError {
    PlanError::new(line.no, ErrorKind::MalformedSection, expected, line.text)
}

/// `Subquery:<i> Hosting operator id = <id|unknown> Hosting Expression = <expr>`.
fn parse_subquery_header(line: &Line<'_>) -> Result<Subquery, PlanError> {
    const EXPECTED: &str =
        "`Subquery:<i> Hosting operator id = <id> Hosting Expression = <expression>`";
    let rest = line
        .text
        .strip_prefix("Subquery:")
        .ok_or_else(|| malformed(line, EXPECTED))?;
    let (index, rest) = rest
        .split_once(" Hosting operator id = ")
        .ok_or_else(|| malformed(line, EXPECTED))?;
    let index: u32 = index
        .trim()
        .parse()
        .map_err(|_| malformed(line, EXPECTED))?;
    let (host, expr) = match rest.split_once(" Hosting Expression =") {
        Some((host, expr)) => (host, expr.strip_prefix(' ').unwrap_or(expr)),
        None => return Err(malformed(line, EXPECTED)),
    };
    let host = host.trim();
    let hosting_operator_id = match host {
        "unknown" => None,
        _ => Some(host.parse().map_err(|_| malformed(line, EXPECTED))?),
    };
    Ok(Subquery {
        index,
        hosting_operator_id,
        hosting_expression: expr.to_string(),
        root: None,
        line: line.no,
    })
}

/// `Subplan:<i>`.
fn parse_subplan_header(line: &Line<'_>) -> Result<Subplan, PlanError> {
    let index = line
        .text
        .strip_prefix("Subplan:")
        .and_then(|r| r.trim().parse().ok())
        .ok_or_else(|| malformed(line, "`Subplan:<i>`"))?;
    Ok(Subplan {
        index,
        root: None,
        line: line.no,
    })
}

/// Joins every tree node to the detail block of its id, checks names both ways.
fn attach_details(plan: &mut Plan, mut blocks: BTreeMap<u32, Block<'_>>) {
    for id in plan.nodes.iter().filter_map(|node| node.id) {
        if let Some(block) = blocks.get_mut(&id) {
            block.uses += 1;
        }
    }
    let mut warned_missing = HashSet::new();
    let mut warned_mismatch = HashSet::new();
    let mut tree_ids = HashSet::new();
    for node in &mut plan.nodes {
        let tree_name = std::mem::take(&mut node.name);
        let Some(id) = node.id else {
            let (name, rest) = split_tree_name(&tree_name, None);
            node.name = name.to_string();
            node.operator = Operator::classify(&node.name);
            node.details.interpret_tree_args(node.operator, rest);
            continue;
        };
        tree_ids.insert(id);
        let Some(block) = blocks.get_mut(&id) else {
            if warned_missing.insert(id) {
                plan.warnings.push(PlanWarning {
                    line: node.line,
                    kind: WarningKind::MissingDetails,
                    message: format!(
                        "operator ({id}) {} has no detail block",
                        tree_name.trim_end()
                    ),
                });
            }
            let (name, rest) = split_tree_name(&tree_name, None);
            node.name = name.to_string();
            node.operator = Operator::classify(&node.name);
            node.details.interpret_tree_args(node.operator, rest);
            continue;
        };
        let (name, rest) = split_tree_name(&tree_name, Some(block.name));
        if name.trim_end() != block.name.trim_end() && warned_mismatch.insert(id) {
            plan.warnings.push(PlanWarning {
                line: node.line,
                kind: WarningKind::NameMismatch,
                message: format!(
                    "tree line says `{}` but detail block ({id}) says `{}`",
                    tree_name.trim_end(),
                    block.name.trim_end()
                ),
            });
        }
        // The last node drawn with this id takes the block's fields; the ones before it (AQE
        // re-draws) copy them.
        block.uses -= 1;
        let fields = if block.uses == 0 {
            let mut fields = std::mem::take(&mut block.fields);
            // What a copy would have held: the plans stay in memory, so no spare room (the
            // vector itself was built at its size).
            for field in &mut fields {
                field.value.shrink_to_fit();
            }
            fields
        } else {
            block.fields.clone()
        };
        node.operator = Operator::classify(block.name);
        if node.codegen_stage.is_none() {
            node.codegen_stage = block.codegen;
        }
        let tree_stats = node.details.statistics.take();
        let mut details = Details {
            fields,
            reuses_operator_id: block.reuses,
            ..Details::default()
        };
        details.interpret_formatted(node.operator, block.name);
        details.interpret_tree_args(node.operator, rest);
        if details.statistics.is_none() {
            details.statistics = tree_stats;
        }
        node.details = details;
        // The tree line nearly always names the operator exactly as its block does: its string
        // is kept rather than a copy made.
        node.name = if tree_name == block.name {
            tree_name
        } else {
            block.name.to_string()
        };
    }
    for (id, block) in &blocks {
        if !tree_ids.contains(id) {
            plan.warnings.push(PlanWarning {
                line: block.line,
                kind: WarningKind::OrphanDetails,
                message: format!(
                    "detail block ({id}) {} belongs to no tree line",
                    block.name.trim_end()
                ),
            });
        }
    }
}

/// Splits a formatted tree line's name part into the operator name and what follows it (join
/// type and build side: `BroadcastHashJoin Inner BuildRight`). With the detail block's name
/// known, the tree text must start with it; otherwise joins keep only their first word.
fn split_tree_name<'a>(tree_name: &'a str, block_name: Option<&str>) -> (&'a str, &'a str) {
    if let Some(block_name) = block_name {
        let wanted = block_name.trim_end();
        if let Some(rest) = tree_name.strip_prefix(wanted)
            && (rest.is_empty() || rest.starts_with(' '))
        {
            // Keep the block's exact spelling (trailing space of `Scan parquet `).
            let name_len =
                if tree_name.len() >= block_name.len() && tree_name.starts_with(block_name) {
                    block_name.len()
                } else {
                    wanted.len()
                };
            return (&tree_name[..name_len], rest.trim());
        }
        return (tree_name, "");
    }
    if Operator::classify(tree_name).is_join()
        && let Some((first, rest)) = tree_name.split_once(' ')
    {
        return (first, rest.trim());
    }
    (tree_name, "")
}

/// Tree-only output prints no ids: number the nodes in Spark's order (post-order, children left
/// to right, from 1) so that JSON can name children by id.
fn number_tree_only(plan: &mut Plan) {
    let mut roots = vec![plan.root];
    roots.extend(plan.nodes.iter().filter_map(|n| n.initial_plan));
    let mut next: u32 = 1;
    for root in roots {
        // Iterative post-order: (node, children visited?).
        let mut stack = vec![(root, false)];
        while let Some((idx, expanded)) = stack.pop() {
            let Some(node) = plan.nodes.get(idx) else {
                continue;
            };
            if node.id.is_some() {
                continue;
            }
            if expanded {
                plan.nodes[idx].id = Some(next);
                next = next.saturating_add(1);
            } else {
                stack.push((idx, true));
                for &child in node.children.iter().rev() {
                    stack.push((child, false));
                }
            }
        }
    }
}

/// Photon's shuffle map stage with `EXECUTOR_BROADCAST` is a broadcast, not a shuffle.
fn refine_operator(node: &mut PlanNode) {
    if node.operator == Operator::Exchange
        && node.photon
        && node.details.shuffle_origin == Some(ShuffleOrigin::ExecutorBroadcast)
    {
        node.operator = Operator::BroadcastExchange;
    }
}

fn check_reuses(plan: &mut Plan) {
    let ids: HashMap<u32, usize> = plan
        .nodes
        .iter()
        .enumerate()
        .filter_map(|(i, n)| n.id.map(|id| (id, i)))
        .collect();
    let mut warned = HashSet::new();
    for node in &plan.nodes {
        if let Some(target) = node.details.reuses_operator_id
            && !ids.contains_key(&target)
            && warned.insert(target)
        {
            plan.warnings.push(PlanWarning {
                line: node.line,
                kind: WarningKind::UnresolvedReuse,
                message: format!("`Reuses operator id: {target}` names no operator of this plan"),
            });
        }
    }
}

/// `is_final_plan` and the AQE label from the outermost `AdaptiveSparkPlan`: its
/// `isFinalPlan=` argument, else the header above its running tree (`Final Plan` → true,
/// `Current Plan` / `Initial Plan` → false).
fn set_aqe_state(plan: &mut Plan) {
    let Some(asp) = plan.outermost_adaptive() else {
        return;
    };
    let node = &plan.nodes[asp];
    let label = node
        .children
        .first()
        .and_then(|&c| plan.nodes.get(c))
        .and_then(|c| c.aqe_label);
    plan.aqe_label = label;
    plan.is_final_plan = node.details.is_final_plan.or(match label {
        Some(AqeLabel::Final) => Some(true),
        Some(AqeLabel::Current) | Some(AqeLabel::Initial) => Some(false),
        None => None,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_name_split() {
        assert_eq!(
            split_tree_name(
                "BroadcastHashJoin Inner BuildRight",
                Some("BroadcastHashJoin")
            ),
            ("BroadcastHashJoin", "Inner BuildRight")
        );
        assert_eq!(
            split_tree_name("PhotonScan parquet ", Some("PhotonScan parquet ")),
            ("PhotonScan parquet ", "")
        );
        assert_eq!(
            split_tree_name("SortMergeJoin LeftSemi", None),
            ("SortMergeJoin", "LeftSemi")
        );
        assert_eq!(
            split_tree_name("SortMergeJoin", Some("Sort")),
            ("SortMergeJoin", "")
        );
    }

    #[test]
    fn empty_and_json_inputs_are_errors() {
        assert_eq!(parse_plans("").unwrap_err().kind, ErrorKind::NoPlan);
        assert_eq!(
            parse_plans("{\"Event\":1}").unwrap_err().kind,
            ErrorKind::NotPlanText
        );
        let err = parse_plans("== Physical Plan ==\n\n").unwrap_err();
        assert_eq!((err.kind, err.line), (ErrorKind::EmptyTree, 2));
    }

    #[test]
    fn subquery_headers() {
        let line = Line {
            no: 3,
            text: "Subquery:2 Hosting operator id = 1 Hosting Expression = Subquery scalar-subquery#x, [id=#x]",
        };
        let s = parse_subquery_header(&line).unwrap();
        assert_eq!((s.index, s.hosting_operator_id), (2, Some(1)));
        assert_eq!(s.hosting_expression, "Subquery scalar-subquery#x, [id=#x]");
        let bad = Line {
            no: 4,
            text: "Subquery:x Hosting",
        };
        assert_eq!(
            parse_subquery_header(&bad).unwrap_err().kind,
            ErrorKind::MalformedSection
        );
    }

    /// Spark 3.1 formatted AQE output numbers only the current plan; Initial-Plan nodes print
    /// as `(unknown)` and have no detail block.
    #[test]
    fn spark_3_1_unknown_ids_in_the_initial_plan() {
        let text = "\
== Physical Plan ==
AdaptiveSparkPlan (5)
+- == Final Plan ==
   * HashAggregate (4)
   +- ShuffleQueryStage (3)
      +- Exchange (2)
         +- * LocalTableScan (1)
+- == Initial Plan ==
   HashAggregate (unknown)
   +- Exchange (unknown)
      +- LocalTableScan (unknown)


(1) LocalTableScan [codegen id : 1]
Output [1]: [a#1]
Arguments: [a#1]

(2) Exchange
Input [1]: [a#1]
Arguments: hashpartitioning(a#1, 200), ENSURE_REQUIREMENTS, [id=#20]

(3) ShuffleQueryStage
Output [1]: [a#1]
Arguments: 0

(4) HashAggregate [codegen id : 2]
Input [1]: [a#1]
Keys [1]: [a#1]
Functions: []
Aggregate Attributes: []
Results [1]: [a#1]

(5) AdaptiveSparkPlan
Output [1]: [a#1]
Arguments: isFinalPlan=true
";
        let plan = parse_plans(text).unwrap().remove(0);
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        assert_eq!((plan.is_final_plan, plan.exchanges()), (Some(true), 1));
        let initial = plan.initial_nodes();
        assert_eq!(initial.len(), 3);
        assert!(initial.iter().all(|&i| plan.nodes[i].id.is_none()));
        assert_eq!(plan.nodes[initial[1]].operator, Operator::Exchange);
        let json = serde_json::to_value(&plan).unwrap();
        assert_eq!(json["initial_plan"]["root"], serde_json::Value::Null);
        assert_eq!(json["initial_plan"]["nodes"][1]["name"], "Exchange");
    }

    /// Spark 3.5+: an exchange AQE removed from the tree but still reused.
    #[test]
    fn adaptively_optimized_out_exchanges() {
        let text = "\
== Physical Plan ==
AdaptiveSparkPlan (6)
+- == Final Plan ==
   * BroadcastHashJoin Inner BuildRight (5)
   :- * LocalTableScan (1)
   +- BroadcastQueryStage (3)
      +- ReusedExchange (2)
+- == Initial Plan ==
   BroadcastHashJoin Inner BuildRight (4)
   :- LocalTableScan (1)
   +- BroadcastExchange (7)
      +- LocalTableScan (8)


(1) LocalTableScan [codegen id : 1]
Output [1]: [a#1]
Arguments: [a#1]

(2) ReusedExchange [Reuses operator id: 7]
Output [1]: [b#2]

(3) BroadcastQueryStage
Output [1]: [b#2]
Arguments: 1

(4) BroadcastHashJoin
Left keys [1]: [a#1]
Right keys [1]: [b#2]
Join type: Inner
Join condition: None

(5) BroadcastHashJoin [codegen id : 1]
Left keys [1]: [a#1]
Right keys [1]: [b#2]
Join type: Inner
Join condition: None

(6) AdaptiveSparkPlan
Output [1]: [a#1]
Arguments: isFinalPlan=true

===== Adaptively Optimized Out Exchanges =====

Subplan:1
BroadcastExchange (7)
+- LocalTableScan (8)


(7) BroadcastExchange
Input [1]: [b#2]
Arguments: HashedRelationBroadcastMode(List(input[0, int, true]),false), [plan_id=9]

(8) LocalTableScan
Output [1]: [b#2]
Arguments: [b#2]
";
        let plan = parse_plans(text).unwrap().remove(0);
        assert!(plan.warnings.is_empty(), "{:?}", plan.warnings);
        assert_eq!(plan.optimized_out.len(), 1);
        let root = plan.optimized_out[0].root.unwrap();
        assert_eq!(plan.nodes[root].id, Some(7));
        assert_eq!(plan.nodes[root].section, Section::OptimizedOut(0));
        // The reused broadcast ran once, as a query stage the ReusedExchange reads.
        assert_eq!(
            (plan.broadcast_exchanges(), plan.reused_exchanges()),
            (1, 1)
        );
        assert_eq!(
            plan.node_by_id(5).unwrap().details.build_side.as_deref(),
            Some("BuildRight")
        );
    }

    #[test]
    fn truncated_text_keeps_what_precedes_the_cut() {
        let text = "== Physical Plan ==\n* Sort (2)\n+- Exchange (1)\n\n\n(1) Exchange\nInput [1]: [a#1]\nArguments: SinglePart... 120 more characters\n";
        let plans = parse_plans(text).unwrap();
        assert!(plans[0].truncated);
        assert_eq!(plans[0].nodes.len(), 2);
    }
}
