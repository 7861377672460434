//! What a detail block (formatted) or a one-line operator string (tree-only) says about an
//! operator: every field raw, plus the parts rules need, parsed.

use std::fmt;

use serde::Serialize;
use serde::ser::{SerializeMap, Serializer};

use crate::operator::Operator;
use crate::text::{
    find_pair, is_plan_id_token, matching_close, parse_counted_list, parse_list, parse_plan_id,
    rfind_pair, split_args, split_top_level,
};

/// One `Label [n]: value` line of a detail block, kept as printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The label, e.g. `Output`, `Arguments`, `Left keys`, `PushedFilters`, `Condition`.
    pub label: String,
    /// The `[n]` element count printed after the label, if any.
    pub count: Option<usize>,
    /// The value after `: `; continuation lines are appended after a `\n`.
    pub value: String,
    /// 1-based line number (0 for fields taken from a tree line).
    pub line: usize,
}

/// How an exchange distributes rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PartitioningKind {
    /// `hashpartitioning(exprs…, n)`.
    Hash,
    /// `rangepartitioning(sortOrders…, n)`.
    Range,
    /// `RoundRobinPartitioning(n)` (`repartition(n)`).
    RoundRobin,
    /// `SinglePartition`.
    Single,
    /// `UnknownPartitioning(n)`.
    Unknown,
    /// `KeyGroupedPartitioning(...)` (DSv2, 3.3+).
    KeyGrouped,
    /// Anything else ending in `partitioning(...)`, e.g. Databricks
    /// `deltaoptimizedwritepartitioning(...)`.
    Other,
}

/// A parsed partitioning such as `hashpartitioning(ss_item_sk#1, 200)`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Partitioning {
    /// The scheme.
    pub kind: PartitioningKind,
    /// The partitioning expressions (hash keys, range sort orders); empty for round-robin and
    /// single.
    pub expressions: Vec<String>,
    /// The number of partitions, when printed (1 for `SinglePartition`).
    pub num_partitions: Option<u32>,
    /// The text as printed.
    pub text: String,
}

/// Why a shuffle exists (`ShuffleOrigin`, printed after the partitioning).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ShuffleOrigin {
    /// `ENSURE_REQUIREMENTS`: added by the planner for a join, aggregate, window or sort.
    EnsureRequirements,
    /// `REPARTITION_BY_COL`: `repartition(col)` / `DISTRIBUTE BY`.
    RepartitionByCol,
    /// `REPARTITION_BY_NUM`: `repartition(n)` / `repartition(n, col)`.
    RepartitionByNum,
    /// `REBALANCE_PARTITIONS_BY_NONE`: `REBALANCE` hint without columns.
    RebalancePartitionsByNone,
    /// `REBALANCE_PARTITIONS_BY_COL`: `REBALANCE(col)` hint.
    RebalancePartitionsByCol,
    /// `REQUIRED_BY_STATEFUL_OPERATOR` (4.x streaming).
    RequiredByStatefulOperator,
    /// `REPARTITION` (3.1 name of `REPARTITION_BY_COL`).
    Repartition,
    /// `REPARTITION_WITH_NUM` (3.1 name of `REPARTITION_BY_NUM`).
    RepartitionWithNum,
    /// `EXECUTOR_BROADCAST`: Photon's executor-side broadcast.
    ExecutorBroadcast,
    /// Spark 3.0 printed only `noUserSpecifiedNumPartition`; `false` means the user gave the
    /// partition count (`repartition(n)`), `true` is either the planner or `repartition(col)`.
    NoUserSpecifiedNumPartition(bool),
    /// Any other upper-case origin name.
    Other(String),
}

impl ShuffleOrigin {
    /// Parses an origin token; `None` when `token` is not one.
    pub fn parse(token: &str) -> Option<ShuffleOrigin> {
        let token = token.trim();
        let origin = match token {
            "ENSURE_REQUIREMENTS" => ShuffleOrigin::EnsureRequirements,
            "REPARTITION_BY_COL" => ShuffleOrigin::RepartitionByCol,
            "REPARTITION_BY_NUM" => ShuffleOrigin::RepartitionByNum,
            "REBALANCE_PARTITIONS_BY_NONE" => ShuffleOrigin::RebalancePartitionsByNone,
            "REBALANCE_PARTITIONS_BY_COL" => ShuffleOrigin::RebalancePartitionsByCol,
            "REQUIRED_BY_STATEFUL_OPERATOR" => ShuffleOrigin::RequiredByStatefulOperator,
            "REPARTITION" => ShuffleOrigin::Repartition,
            "REPARTITION_WITH_NUM" => ShuffleOrigin::RepartitionWithNum,
            "EXECUTOR_BROADCAST" => ShuffleOrigin::ExecutorBroadcast,
            "true" => ShuffleOrigin::NoUserSpecifiedNumPartition(true),
            "false" => ShuffleOrigin::NoUserSpecifiedNumPartition(false),
            _ if !token.is_empty()
                && token.bytes().all(|b| b.is_ascii_uppercase() || b == b'_') =>
            {
                ShuffleOrigin::Other(token.to_string())
            }
            _ => return None,
        };
        Some(origin)
    }

    /// Did the user ask for this shuffle (`repartition`, `DISTRIBUTE BY`, `REBALANCE`), rather
    /// than the planner?
    pub fn is_user_requested(&self) -> bool {
        matches!(
            self,
            ShuffleOrigin::RepartitionByCol
                | ShuffleOrigin::RepartitionByNum
                | ShuffleOrigin::RebalancePartitionsByNone
                | ShuffleOrigin::RebalancePartitionsByCol
                | ShuffleOrigin::Repartition
                | ShuffleOrigin::RepartitionWithNum
                | ShuffleOrigin::NoUserSpecifiedNumPartition(false)
        )
    }
}

impl fmt::Display for ShuffleOrigin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = match self {
            ShuffleOrigin::EnsureRequirements => "ENSURE_REQUIREMENTS",
            ShuffleOrigin::RepartitionByCol => "REPARTITION_BY_COL",
            ShuffleOrigin::RepartitionByNum => "REPARTITION_BY_NUM",
            ShuffleOrigin::RebalancePartitionsByNone => "REBALANCE_PARTITIONS_BY_NONE",
            ShuffleOrigin::RebalancePartitionsByCol => "REBALANCE_PARTITIONS_BY_COL",
            ShuffleOrigin::RequiredByStatefulOperator => "REQUIRED_BY_STATEFUL_OPERATOR",
            ShuffleOrigin::Repartition => "REPARTITION",
            ShuffleOrigin::RepartitionWithNum => "REPARTITION_WITH_NUM",
            ShuffleOrigin::ExecutorBroadcast => "EXECUTOR_BROADCAST",
            ShuffleOrigin::NoUserSpecifiedNumPartition(true) => "noUserSpecifiedNumPartition=true",
            ShuffleOrigin::NoUserSpecifiedNumPartition(false) => {
                "noUserSpecifiedNumPartition=false"
            }
            ShuffleOrigin::Other(text) => text,
        };
        f.write_str(text)
    }
}

impl Serialize for ShuffleOrigin {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

/// Runtime or estimated statistics: `Statistics(sizeInBytes=10.1 KiB, rowCount=431, …)` on an
/// AQE query stage.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Statistics {
    /// `sizeInBytes`, converted from Spark's rounded `10.1 KiB` form.
    pub size_in_bytes: Option<u64>,
    /// `rowCount`, converted from Spark's 3-digit `1.92E+3` form.
    pub row_count: Option<u64>,
    /// Databricks' `isRuntime=` flag.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_runtime: Option<bool>,
    /// The text inside `Statistics(…)`.
    pub text: String,
}

/// What a scan reads and which filters reached it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ScanDetails {
    /// The source format from the name (`parquet`, `orc`, `hive`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<String>,
    /// The table from the name (`spark_catalog.default.store_sales`); `None` for path reads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub table: Option<String>,
    /// `Location`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub location: Option<String>,
    /// `PartitionFilters`. Formatted output omits the line when the list is empty.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partition_filters: Option<Vec<String>>,
    /// `PushedFilters` (data-source filter syntax). Photon prints none: see the raw
    /// `RequiredDataFilters`/`DictionaryFilters` fields.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pushed_filters: Option<Vec<String>>,
    /// `DataFilters` (tree-only output and DSv2).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data_filters: Option<Vec<String>>,
    /// `RequiredDataFilters` (Photon): the filters a `PhotonScan` applies to the rows it reads,
    /// in Spark's expression syntax; Photon prints no `PushedFilters`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub required_data_filters: Option<Vec<String>>,
    /// `DictionaryFilters` (Photon): the filters a `PhotonScan` evaluates on column
    /// dictionaries, skipping data without decoding it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dictionary_filters: Option<Vec<String>>,
    /// `ReadSchema`, e.g. `struct<a:int,b:string>`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub read_schema: Option<String>,
}

/// Everything known about one operator. Parsed parts are `None` when the operator does not
/// print them; every printed field stays available raw in [`Details::fields`].
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Details {
    /// `Output [n]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub output: Option<Vec<String>>,
    /// `Input [n]`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input: Option<Vec<String>>,
    /// Aggregate grouping keys (`Keys [n]`, `keys=[…]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grouping_keys: Option<Vec<String>>,
    /// Aggregate functions (`Functions [n]`, `functions=[…]`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub functions: Option<Vec<String>>,
    /// Join `Left keys`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub left_keys: Option<Vec<String>>,
    /// Join `Right keys`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub right_keys: Option<Vec<String>>,
    /// Join type (`Inner`, `LeftSemi`, `ExistenceJoin(exists#1)`, …), from `Join type:` (3.4+)
    /// or the tree line (`SortMergeJoin LeftSemi (21)`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub join_type: Option<String>,
    /// `BuildLeft` / `BuildRight` for hash and nested-loop joins.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub build_side: Option<String>,
    /// `Join condition`, `None` when Spark printed `None`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub join_condition: Option<String>,
    /// A `Filter`'s condition.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    /// Sort order of `Sort`, `TakeOrderedAndProject`, `PhotonTopK`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sort_order: Option<Vec<String>>,
    /// `Sort`'s `global` flag (`true` = total order, after a range exchange).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub global_sort: Option<bool>,
    /// Row limit of limits and top-k operators.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<u64>,
    /// Exchange partitioning (on `PhotonShuffleExchangeSink` for Photon).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partitioning: Option<Box<Partitioning>>,
    /// Why the shuffle exists (on `PhotonShuffleMapStage` for Photon).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shuffle_origin: Option<ShuffleOrigin>,
    /// Advisory partition size in bytes (`REBALANCE` with a size, 3.2+).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advisory_partition_size: Option<u64>,
    /// `[plan_id=N]` / `[id=#N]`; `None` when normalised to `x`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub plan_id: Option<u64>,
    /// A broadcast's mode: `HashedRelationBroadcastMode(...)` or `IdentityBroadcastMode`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub broadcast_mode: Option<String>,
    /// `[Reuses operator id: N]` of a `ReusedExchange`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reuses_operator_id: Option<u32>,
    /// Scan details.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scan: Option<Box<ScanDetails>>,
    /// An AQE query stage's id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stage_id: Option<u32>,
    /// Statistics printed for an AQE query stage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub statistics: Option<Box<Statistics>>,
    /// What an `AQEShuffleRead` did: `local`, `coalesced`, `skewed`, `coalesced and skewed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shuffle_read: Option<String>,
    /// An `AdaptiveSparkPlan`'s `isFinalPlan`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_final_plan: Option<bool>,
    /// Every printed field, in order, as `label → value`.
    #[serde(
        serialize_with = "fields_as_map",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub fields: Vec<Field>,
}

fn fields_as_map<S: Serializer>(fields: &[Field], serializer: S) -> Result<S::Ok, S::Error> {
    let mut map = serializer.serialize_map(Some(fields.len()))?;
    let mut seen: Vec<&str> = Vec::with_capacity(fields.len());
    for field in fields {
        let repeats = seen.iter().filter(|&&label| label == field.label).count();
        seen.push(&field.label);
        if repeats == 0 {
            map.serialize_entry(&field.label, &field.value)?;
        } else {
            map.serialize_entry(&format!("{} ({})", field.label, repeats + 1), &field.value)?;
        }
    }
    map.end()
}

impl Details {
    /// The raw value of the first field labelled `label`.
    pub fn field(&self, label: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|f| f.label == label)
            .map(|f| f.value.as_str())
    }

    /// Fills the parsed parts from the raw fields of a formatted detail block.
    pub(crate) fn interpret_formatted(&mut self, operator: Operator, name: &str) {
        let fields = std::mem::take(&mut self.fields);
        for field in &fields {
            let value = field.value.as_str();
            match field.label.as_str() {
                "Output" => self.output = parse_counted_list(value, field.count),
                "Input" => self.input = parse_counted_list(value, field.count),
                "Keys" => self.grouping_keys = parse_counted_list(value, field.count),
                "Functions" => self.functions = parse_counted_list(value, field.count),
                "Left keys" => self.left_keys = parse_counted_list(value, field.count),
                "Right keys" => self.right_keys = parse_counted_list(value, field.count),
                "Join type" => self.join_type = Some(value.trim().to_string()),
                "Join condition" => self.join_condition = non_none(value),
                "Condition" => self.condition = non_none(value),
                "Arguments" => self.interpret_arguments(operator, name, value),
                _ => {}
            }
        }
        self.fields = fields;
        if operator == Operator::Scan {
            self.scan = Some(Box::new(self.scan_from_fields(name)));
        }
    }

    /// Fills the parsed parts from the arguments of a one-line operator string (tree-only
    /// output), and keeps the arguments as the raw `Arguments` field (plus scan metadata fields).
    pub(crate) fn interpret_one_line(&mut self, operator: Operator, name: &str, args: &str) {
        let args = args.trim();
        match operator {
            Operator::Scan => self.interpret_scan_line(args),
            Operator::SortMergeJoin | Operator::ShuffledHashJoin | Operator::BroadcastHashJoin => {
                self.interpret_keyed_join_line(args)
            }
            Operator::BroadcastNestedLoopJoin => {
                let parts = split_args(args);
                let mut rest: &[&str] = &parts;
                if let Some((first, tail)) = rest.split_first()
                    && is_build_side(first)
                {
                    self.build_side = Some(first.to_string());
                    rest = tail;
                }
                if let Some((first, tail)) = rest.split_first() {
                    self.join_type = Some(first.to_string());
                    rest = tail;
                }
                self.join_condition = join_condition_from(rest);
            }
            Operator::CartesianProduct => self.join_condition = non_empty(args),
            Operator::HashAggregate | Operator::ObjectHashAggregate | Operator::SortAggregate => {
                self.interpret_named_args(args)
            }
            Operator::TakeOrderedAndProject if args.starts_with('(') => {
                self.interpret_named_args(args)
            }
            Operator::Filter if !name.starts_with("Photon") => self.condition = non_empty(args),
            Operator::Project if !name.starts_with("Photon") => self.output = parse_list(args),
            Operator::LocalTableScan => {
                self.output = split_args(args).into_iter().find_map(parse_list);
            }
            Operator::ReusedExchange => {
                self.output = split_args(args).first().and_then(|first| parse_list(first));
            }
            _ => self.interpret_arguments(operator, name, args),
        }
        if !args.is_empty() {
            self.fields.insert(
                0,
                Field {
                    label: "Arguments".to_string(),
                    count: None,
                    value: args.to_string(),
                    line: 0,
                },
            );
        }
        if operator == Operator::Scan {
            self.scan = Some(Box::new(self.scan_from_fields(name)));
        }
    }

    /// Takes join type and build side from a formatted tree line's text after the name
    /// (`Inner BuildRight`), when the detail block did not say.
    pub(crate) fn interpret_tree_args(&mut self, operator: Operator, rest: &str) {
        if !operator.is_join() {
            return;
        }
        for word in rest.split_whitespace() {
            if is_build_side(word) {
                self.build_side.get_or_insert_with(|| word.to_string());
            } else if self.join_type.is_none() {
                self.join_type = Some(word.to_string());
            }
        }
    }

    fn interpret_arguments(&mut self, operator: Operator, name: &str, value: &str) {
        let parts = split_args(value);
        match operator {
            Operator::Exchange | Operator::ShuffleSink => self.interpret_shuffle_args(&parts),
            Operator::BroadcastExchange => {
                self.interpret_shuffle_args(&parts);
                if let Some(first) = parts.first()
                    && !is_plan_id_token(first)
                    && ShuffleOrigin::parse(first).is_none()
                {
                    self.broadcast_mode = Some(first.to_string());
                }
            }
            Operator::Sort => {
                self.sort_order = parts.first().and_then(|p| parse_list(p));
                self.global_sort = parts.get(1).and_then(|p| p.parse().ok());
            }
            Operator::TakeOrderedAndProject => {
                self.limit = parts.first().and_then(|p| p.trim().parse().ok());
                self.sort_order = parts.iter().skip(1).find_map(|p| parse_list(p));
            }
            Operator::Limit => self.limit = parts.first().and_then(|p| p.trim().parse().ok()),
            Operator::ShuffleQueryStage
            | Operator::BroadcastQueryStage
            | Operator::TableCacheQueryStage
            | Operator::ResultQueryStage => {
                self.stage_id = parts.first().and_then(|p| p.trim().parse().ok());
                if let Some(stats) = parts.iter().find_map(|p| parse_statistics(p)) {
                    self.statistics = Some(Box::new(stats));
                }
            }
            Operator::AqeShuffleRead => self.shuffle_read = non_empty(value),
            Operator::AdaptiveSparkPlan => {
                self.is_final_plan = value
                    .trim()
                    .strip_prefix("isFinalPlan=")
                    .and_then(|b| b.parse().ok());
            }
            Operator::HashAggregate if name.starts_with("Photon") => {
                // `[keys], [aggExprs], [aggAttrs], [results], isFinal`; keys omitted when empty.
                let lists: Vec<Vec<String>> = parts.iter().map_while(|p| parse_list(p)).collect();
                match lists.len() {
                    4 => {
                        self.grouping_keys = lists.first().cloned();
                        self.functions = lists.get(1).cloned();
                    }
                    3 => {
                        self.grouping_keys = Some(Vec::new());
                        self.functions = lists.first().cloned();
                    }
                    _ => {}
                }
            }
            Operator::Project if name.starts_with("Photon") && self.output.is_none() => {
                self.output = parse_list(value);
            }
            Operator::Filter if name.starts_with("Photon") && self.condition.is_none() => {
                self.condition = non_empty(value);
            }
            _ => {}
        }
    }

    fn interpret_shuffle_args(&mut self, parts: &[&str]) {
        for (i, part) in parts.iter().enumerate() {
            if is_plan_id_token(part) {
                self.plan_id = parse_plan_id(part);
            } else if i == 0
                && let Some(p) = parse_partitioning(part)
            {
                self.partitioning = Some(Box::new(p));
            } else if self.shuffle_origin.is_none()
                && let Some(origin) = ShuffleOrigin::parse(part)
            {
                self.shuffle_origin = Some(origin);
            } else if let Ok(size) = part.trim().parse::<u64>() {
                self.advisory_partition_size = Some(size);
            }
        }
    }

    /// `[left], [right], Inner, BuildRight[, condition], false[, true]` (hash joins) or
    /// `[left], [right], Inner[, condition]` (sort-merge join).
    fn interpret_keyed_join_line(&mut self, args: &str) {
        let parts = split_args(args);
        let mut rest: &[&str] = &parts;
        if let [left, right, tail @ ..] = rest
            && let (Some(l), Some(r)) = (parse_list(left), parse_list(right))
        {
            self.left_keys = Some(l);
            self.right_keys = Some(r);
            rest = tail;
        }
        if let Some((first, tail)) = rest.split_first() {
            self.join_type = Some(first.to_string());
            rest = tail;
        }
        if let Some((first, tail)) = rest.split_first()
            && is_build_side(first)
        {
            self.build_side = Some(first.to_string());
            rest = tail;
        }
        self.join_condition = join_condition_from(rest);
    }

    /// `(keys=[…], functions=[…], output=[…])` and
    /// `(limit=100, orderBy=[a#1 ASC NULLS FIRST,b#2 DESC NULLS LAST], output=[a#1,b#2])`.
    fn interpret_named_args(&mut self, args: &str) {
        let inner = match args.strip_prefix('(') {
            Some(rest) if matching_close(args, 0) == Some(args.len() - 1) => {
                &rest[..rest.len() - 1]
            }
            _ => return,
        };
        for part in split_args(inner) {
            let Some((key, value)) = part.split_once('=') else {
                continue;
            };
            match key.trim() {
                "keys" => self.grouping_keys = parse_list(value),
                "functions" => self.functions = parse_list(value),
                "output" => self.output = parse_compact_list(value),
                "orderBy" => self.sort_order = parse_compact_list(value),
                "limit" => self.limit = value.trim().parse().ok(),
                _ => {}
            }
        }
    }

    /// `parquet db.t[a#1,b#2] Batched: true, DataFilters: [...], Format: Parquet, …` after the
    /// name has been cut off: output list, then `Key: value` metadata.
    fn interpret_scan_line(&mut self, args: &str) {
        let mut rest = args;
        if args.starts_with('[')
            && let Some(close) = matching_close(args, 0)
        {
            self.output = parse_compact_list(&args[..=close]);
            rest = &args[close + 1..];
        }
        for part in split_args(rest) {
            if let Some((key, value)) = part.split_once(": ")
                && is_label(key)
            {
                self.fields.push(Field {
                    label: key.to_string(),
                    count: None,
                    value: value.to_string(),
                    line: 0,
                });
            }
        }
    }

    fn scan_from_fields(&self, name: &str) -> ScanDetails {
        let (format, table) = scan_format_and_table(name);
        ScanDetails {
            format,
            table,
            location: self.field("Location").map(str::to_string),
            partition_filters: self.field("PartitionFilters").and_then(parse_list),
            pushed_filters: self.field("PushedFilters").and_then(parse_list),
            data_filters: self.field("DataFilters").and_then(parse_list),
            required_data_filters: self.field("RequiredDataFilters").and_then(parse_list),
            dictionary_filters: self.field("DictionaryFilters").and_then(parse_list),
            read_schema: self.field("ReadSchema").map(str::to_string),
        }
    }
}

/// Splits `Scan parquet spark_catalog.default.t` into format and table.
fn scan_format_and_table(name: &str) -> (Option<String>, Option<String>) {
    let name = name.trim();
    let rest = ["PhotonScan ", "FileScan ", "Scan "]
        .iter()
        .find_map(|prefix| name.strip_prefix(prefix));
    let Some(rest) = rest else {
        return (None, None);
    };
    let mut words = rest.splitn(2, ' ');
    let format = words.next().filter(|w| !w.is_empty()).map(str::to_string);
    let table = words
        .next()
        .map(str::trim)
        .filter(|t| !t.is_empty() && !t.starts_with('['))
        .map(str::to_string);
    (format, table)
}

/// A condition assembled from the remaining join arguments, without Spark's trailing flags.
fn join_condition_from(rest: &[&str]) -> Option<String> {
    let mut rest = rest;
    while let Some((last, head)) = rest.split_last() {
        if *last == "true" || *last == "false" {
            rest = head;
        } else {
            break;
        }
    }
    if rest.is_empty() {
        None
    } else {
        Some(rest.join(", "))
    }
}

fn is_build_side(word: &str) -> bool {
    word == "BuildLeft" || word == "BuildRight"
}

fn non_none(value: &str) -> Option<String> {
    let value = value.trim();
    if value.is_empty() || value == "None" {
        None
    } else {
        Some(value.to_string())
    }
}

fn non_empty(value: &str) -> Option<String> {
    let value = value.trim();
    if value.is_empty() {
        None
    } else {
        Some(value.to_string())
    }
}

/// A list printed with `,` and no space (`output=[a#1,b#2]`, scan output lists).
fn parse_compact_list(value: &str) -> Option<Vec<String>> {
    let inner = value.trim().strip_prefix('[')?.strip_suffix(']')?;
    if inner.trim().is_empty() {
        return Some(Vec::new());
    }
    let mut parts = Vec::new();
    let mut depth: usize = 0;
    let mut start = 0;
    for (i, b) in inner.bytes().enumerate() {
        match b {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => {
                parts.push(inner[start..i].trim().to_string());
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(inner[start..].trim().to_string());
    Some(parts)
}

/// Parses `hashpartitioning(a#1, 200)`, `SinglePartition`, `RoundRobinPartitioning(10)`, ….
pub fn parse_partitioning(text: &str) -> Option<Partitioning> {
    let text = text.trim();
    if text == "SinglePartition" {
        return Some(Partitioning {
            kind: PartitioningKind::Single,
            expressions: Vec::new(),
            num_partitions: Some(1),
            text: text.to_string(),
        });
    }
    let open = text.find('(')?;
    let fname = &text[..open];
    if matching_close(text, open) != Some(text.len() - 1) {
        return None;
    }
    let lower = fname.to_ascii_lowercase();
    if !lower.ends_with("partitioning") {
        return None;
    }
    let inner = &text[open + 1..text.len() - 1];
    let mut args: Vec<String> = split_top_level(inner, true)
        .into_iter()
        .map(|a| a.trim().to_string())
        .filter(|a| !a.is_empty())
        .collect();
    let kind = match lower.as_str() {
        "hashpartitioning" => PartitioningKind::Hash,
        "rangepartitioning" => PartitioningKind::Range,
        "roundrobinpartitioning" => PartitioningKind::RoundRobin,
        "unknownpartitioning" => PartitioningKind::Unknown,
        "keygroupedpartitioning" => PartitioningKind::KeyGrouped,
        _ => PartitioningKind::Other,
    };
    let num_partitions = match args.last().map(|a| a.parse::<u32>()) {
        Some(Ok(n)) if kind != PartitioningKind::KeyGrouped => {
            args.pop();
            Some(n)
        }
        _ => None,
    };
    Some(Partitioning {
        kind,
        expressions: args,
        num_partitions,
        text: text.to_string(),
    })
}

/// Parses the first `Statistics(…)` in `text`.
pub fn parse_statistics(text: &str) -> Option<Statistics> {
    let start = text.find("Statistics(")?;
    let open = start + "Statistics".len();
    let close = matching_close(text, open)?;
    let inner = &text[open + 1..close];
    let mut stats = Statistics {
        size_in_bytes: None,
        row_count: None,
        is_runtime: None,
        text: inner.to_string(),
    };
    for part in split_args(inner) {
        if let Some(size) = part.strip_prefix("sizeInBytes=") {
            stats.size_in_bytes = parse_byte_size(size);
        } else if let Some(rows) = part.strip_prefix("rowCount=") {
            stats.row_count = rows
                .trim()
                .parse::<f64>()
                .ok()
                .filter(|r| r.is_finite() && *r >= 0.0)
                .map(|r| r.round() as u64);
        } else if let Some(flag) = part.strip_prefix("isRuntime=") {
            stats.is_runtime = flag.trim().parse().ok();
        }
    }
    Some(stats)
}

/// `10.1 KiB` → 10342 (Spark's `Utils.bytesToString` in reverse; rounding loss included).
fn parse_byte_size(text: &str) -> Option<u64> {
    let text = text.trim();
    let (number, unit) = match text.split_once(' ') {
        Some((n, u)) => (n, u.trim()),
        None => (text, "B"),
    };
    let factor: f64 = match unit {
        "B" => 1.0,
        "KiB" => 1024.0,
        "MiB" => 1024.0 * 1024.0,
        "GiB" => 1024.0 * 1024.0 * 1024.0,
        "TiB" => 1024f64.powi(4),
        "PiB" => 1024f64.powi(5),
        "EiB" => 1024f64.powi(6),
        _ => return None,
    };
    let value: f64 = number.parse().ok()?;
    if !value.is_finite() || value < 0.0 {
        return None;
    }
    // `as` saturates for values beyond u64::MAX.
    Some((value * factor).round() as u64)
}

/// A detail-block label: starts upper-case, then letters, digits, spaces or `_`.
pub(crate) fn is_label(label: &str) -> bool {
    // Bytes, not chars: every allowed character is ASCII, and a non-ASCII one fails on its
    // first byte.
    let bytes = label.as_bytes();
    matches!(bytes.first(), Some(b) if b.is_ascii_uppercase())
        && bytes.len() <= 48
        && bytes
            .iter()
            .all(|&b| b.is_ascii_alphanumeric() || b == b' ' || b == b'_')
        && !label.ends_with(' ')
        && find_pair(bytes, b"  ").is_none()
}

/// `rsplit_once(" [")`, without setting up a substring searcher for every field line.
fn rsplit_once_space_bracket(text: &str) -> Option<(&str, &str)> {
    let at = rfind_pair(text.as_bytes(), b" [")?;
    // Both bytes are ASCII, so `at` and `at + 2` are char boundaries.
    Some((&text[..at], &text[at + 2..]))
}

/// Parses one field line of a detail block: `Label [n]: value`, `Label: value`,
/// `Condition : value`, and the normalised golden form `Location [not included …]…`.
pub(crate) fn parse_field_line(line: &str, line_no: usize) -> Option<Field> {
    if let Some(colon) = line.find(':') {
        let head = line[..colon].trim_end();
        let after = &line[colon + 1..];
        if after.is_empty() || after.starts_with(' ') {
            let value = after.strip_prefix(' ').unwrap_or(after);
            let (label, count) = match head.strip_suffix(']').and_then(rsplit_once_space_bracket) {
                Some((label, digits)) => match digits.parse::<usize>() {
                    Ok(n) => (label, Some(n)),
                    Err(_) => (head, None),
                },
                None => (head, None),
            };
            if is_label(label) {
                return Some(Field {
                    label: label.to_string(),
                    count,
                    value: value.to_string(),
                    line: line_no,
                });
            }
        }
    }
    let rest = line.strip_prefix("Location ")?;
    Some(Field {
        label: "Location".to_string(),
        count: None,
        value: rest.to_string(),
        line: line_no,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_lines() {
        let f = parse_field_line("Output [2]: [key#x, val#x]", 3).unwrap();
        assert_eq!(
            (f.label.as_str(), f.count, f.value.as_str()),
            ("Output", Some(2), "[key#x, val#x]")
        );
        let f = parse_field_line("Condition : (isnotnull(a#1) AND (a#1 > 0))", 1).unwrap();
        assert_eq!(f.label, "Condition");
        assert_eq!(f.value, "(isnotnull(a#1) AND (a#1 > 0))");
        let f = parse_field_line("Keys: []", 1).unwrap();
        assert_eq!(
            (f.label.as_str(), f.count, f.value.as_str()),
            ("Keys", None, "[]")
        );
        let f = parse_field_line(
            "Location [not included in comparison]/{warehouse_dir}/t]",
            1,
        )
        .unwrap();
        assert_eq!(f.label, "Location");
        assert!(parse_field_line("[L]: foo", 1).is_none());
        assert!(parse_field_line("continuation of a literal", 1).is_none());
    }

    #[test]
    fn partitionings() {
        let p = parse_partitioning("hashpartitioning(ss_item_sk#1, ss_store_sk#2, 200)").unwrap();
        assert_eq!(p.kind, PartitioningKind::Hash);
        assert_eq!(p.expressions, vec!["ss_item_sk#1", "ss_store_sk#2"]);
        assert_eq!(p.num_partitions, Some(200));
        let p = parse_partitioning("rangepartitioning(key#x ASC NULLS FIRST, 4)").unwrap();
        assert_eq!(p.kind, PartitioningKind::Range);
        assert_eq!(p.num_partitions, Some(4));
        let p = parse_partitioning("RoundRobinPartitioning(10)").unwrap();
        assert_eq!(
            (p.kind, p.num_partitions),
            (PartitioningKind::RoundRobin, Some(10))
        );
        assert_eq!(
            parse_partitioning("SinglePartition")
                .unwrap()
                .num_partitions,
            Some(1)
        );
        assert!(parse_partitioning("ENSURE_REQUIREMENTS").is_none());
        assert!(parse_partitioning("hashpartitioning(a#1, 2").is_none());
    }

    #[test]
    fn exchange_arguments_in_every_version() {
        let mut d = Details::default();
        d.interpret_arguments(
            Operator::Exchange,
            "Exchange",
            "hashpartitioning(a#1, 200), REPARTITION_BY_COL, [plan_id=42]",
        );
        assert_eq!(d.shuffle_origin, Some(ShuffleOrigin::RepartitionByCol));
        assert_eq!(d.plan_id, Some(42));
        assert!(d.shuffle_origin.as_ref().unwrap().is_user_requested());

        let mut d = Details::default();
        d.interpret_arguments(
            Operator::Exchange,
            "Exchange",
            "SinglePartition, true, [id=#19]",
        );
        assert_eq!(
            d.shuffle_origin,
            Some(ShuffleOrigin::NoUserSpecifiedNumPartition(true))
        );
        assert_eq!(d.plan_id, Some(19));

        let mut d = Details::default();
        d.interpret_arguments(
            Operator::Exchange,
            "Exchange",
            "RoundRobinPartitioning(8), REBALANCE_PARTITIONS_BY_NONE, 67108864, [plan_id=1]",
        );
        assert_eq!(d.advisory_partition_size, Some(67108864));
    }

    #[test]
    fn statistics() {
        let s = parse_statistics(
            "ShuffleQueryStage (30), Statistics(sizeInBytes=10.1 KiB, rowCount=1.92E+3, ColumnStat: N/A, isRuntime=true)",
        )
        .unwrap();
        assert_eq!(s.size_in_bytes, Some(10342));
        assert_eq!(s.row_count, Some(1920));
        assert_eq!(s.is_runtime, Some(true));
    }

    #[test]
    fn one_line_join_and_aggregate() {
        let mut d = Details::default();
        d.interpret_one_line(
            Operator::BroadcastHashJoin,
            "BroadcastHashJoin",
            "[i1#10], [i2#26], Inner, BuildRight, (a#1 > b#2), false",
        );
        assert_eq!(d.left_keys, Some(vec!["i1#10".to_string()]));
        assert_eq!(d.join_type.as_deref(), Some("Inner"));
        assert_eq!(d.build_side.as_deref(), Some("BuildRight"));
        assert_eq!(d.join_condition.as_deref(), Some("(a#1 > b#2)"));

        let mut d = Details::default();
        d.interpret_one_line(
            Operator::HashAggregate,
            "HashAggregate",
            "(keys=[k#1], functions=[partial_max(v#2)], output=[k#1,max#9])",
        );
        assert_eq!(d.grouping_keys, Some(vec!["k#1".to_string()]));
        assert_eq!(d.output, Some(vec!["k#1".to_string(), "max#9".to_string()]));
    }

    #[test]
    fn one_line_scan() {
        let mut d = Details::default();
        d.interpret_one_line(
            Operator::Scan,
            "FileScan parquet spark_catalog.default.t",
            "[v#x] Batched: true, DataFilters: [isnotnull(v#x)], Format: Parquet, Location: InMemoryFileIndex(1 paths)[file:/a], PartitionFilters: [], PushedFilters: [IsNotNull(v)], ReadSchema: struct<v:int>",
        );
        let scan = d.scan.unwrap();
        assert_eq!(scan.format.as_deref(), Some("parquet"));
        assert_eq!(scan.table.as_deref(), Some("spark_catalog.default.t"));
        assert_eq!(scan.partition_filters, Some(vec![]));
        assert_eq!(scan.pushed_filters, Some(vec!["IsNotNull(v)".to_string()]));
        assert_eq!(scan.read_schema.as_deref(), Some("struct<v:int>"));
        assert_eq!(d.output, Some(vec!["v#x".to_string()]));
    }
}
