//! Normalised operator kinds, so rules need not know every spelling (Spark versions, Photon).

use std::fmt;

/// The kind of a plan operator, normalised from its printed name.
///
/// Photon operators map to the Spark operator they replace (`PhotonGroupingAgg` →
/// [`Operator::HashAggregate`], `PhotonTopK` → [`Operator::TakeOrderedAndProject`]). Photon's
/// shuffle is three nodes: `PhotonShuffleExchangeSink` ([`Operator::ShuffleSink`]) →
/// `PhotonShuffleMapStage` → `PhotonShuffleExchangeSource` ([`Operator::ShuffleSource`]); the map
/// stage is the one counted, as [`Operator::Exchange`], or as [`Operator::BroadcastExchange`] when
/// its argument is `EXECUTOR_BROADCAST` (Photon's executor-side broadcast).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Operator {
    /// `AdaptiveSparkPlan`.
    AdaptiveSparkPlan,
    /// A shuffle: `Exchange`, `PhotonShuffleMapStage` (not `EXECUTOR_BROADCAST`),
    /// `PhotonUnionShuffleMapStage`.
    Exchange,
    /// `BroadcastExchange`, `PhotonBroadcastExchange`, `PhotonShuffleMapStage EXECUTOR_BROADCAST`.
    BroadcastExchange,
    /// `ReusedExchange`.
    ReusedExchange,
    /// `ShuffleQueryStage`.
    ShuffleQueryStage,
    /// `BroadcastQueryStage`.
    BroadcastQueryStage,
    /// `TableCacheQueryStage`.
    TableCacheQueryStage,
    /// `ResultQueryStage` (Spark 4.x, Databricks).
    ResultQueryStage,
    /// `AQEShuffleRead` (3.2+), `CustomShuffleReader` (3.0–3.1).
    AqeShuffleRead,
    /// `SortMergeJoin`, `SortMergeJoin(skew=true)`.
    SortMergeJoin,
    /// `ShuffledHashJoin`, `PhotonShuffledHashJoin`, `PhotonShuffleHashJoin`.
    ShuffledHashJoin,
    /// `BroadcastHashJoin`, `PhotonBroadcastHashJoin`, `PhotonHashJoin`.
    BroadcastHashJoin,
    /// `BroadcastNestedLoopJoin`.
    BroadcastNestedLoopJoin,
    /// `CartesianProduct`.
    CartesianProduct,
    /// `HashAggregate`, `PhotonAgg`, `PhotonGroupingAgg`, `PhotonGroupingAggWithRollup`.
    HashAggregate,
    /// `ObjectHashAggregate`.
    ObjectHashAggregate,
    /// `SortAggregate`.
    SortAggregate,
    /// `Sort`.
    Sort,
    /// `TakeOrderedAndProject`, `PhotonTopK`.
    TakeOrderedAndProject,
    /// `CollectLimit`, `GlobalLimit`, `LocalLimit`, `CollectTail`, limits with offsets.
    Limit,
    /// `Project`.
    Project,
    /// `Filter`.
    Filter,
    /// A data-source scan: `Scan <fmt> <table>`, `FileScan`, `BatchScan`, `InMemoryTableScan`,
    /// `Scan hive`, `MicroBatchScan`, `PhotonScan`.
    Scan,
    /// `LocalTableScan`.
    LocalTableScan,
    /// `Range`.
    Range,
    /// `ColumnarToRow`, `PhotonColumnarToRow`.
    ColumnarToRow,
    /// `RowToColumnar`, `PhotonRowToColumnar`.
    RowToColumnar,
    /// `Window`.
    Window,
    /// `WindowGroupLimit` (3.5+).
    WindowGroupLimit,
    /// `Expand`.
    Expand,
    /// `Generate`.
    Generate,
    /// `Union`.
    Union,
    /// `Coalesce`.
    Coalesce,
    /// A Python UDF operator (`BatchEvalPython`, `ArrowEvalPython`, `MapInPandas`, …).
    PythonUdf,
    /// `Execute <Command>`.
    Command,
    /// `WriteFiles` (3.4+).
    WriteFiles,
    /// `Subquery`, `SubqueryBroadcast` (tree-only output).
    Subquery,
    /// `ReusedSubquery` (tree-only output).
    ReusedSubquery,
    /// `PhotonShuffleExchangeSink`: the write side of a Photon shuffle.
    ShuffleSink,
    /// `PhotonShuffleExchangeSource`: the read side of a Photon shuffle.
    ShuffleSource,
    /// Anything else.
    Other,
}

impl Operator {
    /// The kind's name, as used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Operator::AdaptiveSparkPlan => "AdaptiveSparkPlan",
            Operator::Exchange => "Exchange",
            Operator::BroadcastExchange => "BroadcastExchange",
            Operator::ReusedExchange => "ReusedExchange",
            Operator::ShuffleQueryStage => "ShuffleQueryStage",
            Operator::BroadcastQueryStage => "BroadcastQueryStage",
            Operator::TableCacheQueryStage => "TableCacheQueryStage",
            Operator::ResultQueryStage => "ResultQueryStage",
            Operator::AqeShuffleRead => "AQEShuffleRead",
            Operator::SortMergeJoin => "SortMergeJoin",
            Operator::ShuffledHashJoin => "ShuffledHashJoin",
            Operator::BroadcastHashJoin => "BroadcastHashJoin",
            Operator::BroadcastNestedLoopJoin => "BroadcastNestedLoopJoin",
            Operator::CartesianProduct => "CartesianProduct",
            Operator::HashAggregate => "HashAggregate",
            Operator::ObjectHashAggregate => "ObjectHashAggregate",
            Operator::SortAggregate => "SortAggregate",
            Operator::Sort => "Sort",
            Operator::TakeOrderedAndProject => "TakeOrderedAndProject",
            Operator::Limit => "Limit",
            Operator::Project => "Project",
            Operator::Filter => "Filter",
            Operator::Scan => "Scan",
            Operator::LocalTableScan => "LocalTableScan",
            Operator::Range => "Range",
            Operator::ColumnarToRow => "ColumnarToRow",
            Operator::RowToColumnar => "RowToColumnar",
            Operator::Window => "Window",
            Operator::WindowGroupLimit => "WindowGroupLimit",
            Operator::Expand => "Expand",
            Operator::Generate => "Generate",
            Operator::Union => "Union",
            Operator::Coalesce => "Coalesce",
            Operator::PythonUdf => "PythonUdf",
            Operator::Command => "Command",
            Operator::WriteFiles => "WriteFiles",
            Operator::Subquery => "Subquery",
            Operator::ReusedSubquery => "ReusedSubquery",
            Operator::ShuffleSink => "ShuffleSink",
            Operator::ShuffleSource => "ShuffleSource",
            Operator::Other => "Other",
        }
    }

    /// Is this a join operator?
    pub fn is_join(self) -> bool {
        matches!(
            self,
            Operator::SortMergeJoin
                | Operator::ShuffledHashJoin
                | Operator::BroadcastHashJoin
                | Operator::BroadcastNestedLoopJoin
                | Operator::CartesianProduct
        )
    }

    /// Is this an AQE query stage?
    pub fn is_query_stage(self) -> bool {
        matches!(
            self,
            Operator::ShuffleQueryStage
                | Operator::BroadcastQueryStage
                | Operator::TableCacheQueryStage
                | Operator::ResultQueryStage
        )
    }

    /// Classifies a printed operator name (detail-header name or the name part of a one-line
    /// string). Photon names are classified by their Spark equivalent.
    pub fn classify(name: &str) -> Operator {
        let name = name.trim();
        if let Some(base) = name.strip_prefix("Photon") {
            return classify_photon(base);
        }
        let token = first_token(name);
        match token {
            "AdaptiveSparkPlan" => Operator::AdaptiveSparkPlan,
            "Exchange" | "ShuffleExchange" => Operator::Exchange,
            "BroadcastExchange" => Operator::BroadcastExchange,
            "ReusedExchange" => Operator::ReusedExchange,
            "ShuffleQueryStage" => Operator::ShuffleQueryStage,
            "BroadcastQueryStage" => Operator::BroadcastQueryStage,
            "TableCacheQueryStage" => Operator::TableCacheQueryStage,
            "ResultQueryStage" => Operator::ResultQueryStage,
            "AQEShuffleRead" | "CustomShuffleReader" => Operator::AqeShuffleRead,
            "SortMergeJoin" => Operator::SortMergeJoin,
            "ShuffledHashJoin" => Operator::ShuffledHashJoin,
            "BroadcastHashJoin" => Operator::BroadcastHashJoin,
            "BroadcastNestedLoopJoin" => Operator::BroadcastNestedLoopJoin,
            "CartesianProduct" => Operator::CartesianProduct,
            "HashAggregate" => Operator::HashAggregate,
            "ObjectHashAggregate" => Operator::ObjectHashAggregate,
            "SortAggregate" => Operator::SortAggregate,
            "Sort" => Operator::Sort,
            "TakeOrderedAndProject" => Operator::TakeOrderedAndProject,
            "CollectLimit"
            | "GlobalLimit"
            | "LocalLimit"
            | "CollectTail"
            | "GlobalLimitAndOffset"
            | "CollectLimitAndOffset" => Operator::Limit,
            "Project" => Operator::Project,
            "Filter" => Operator::Filter,
            "Scan" | "FileScan" | "BatchScan" | "InMemoryTableScan" | "HiveTableScan"
            | "RowDataSourceScan" | "MicroBatchScan" | "ContinuousScan" => Operator::Scan,
            "LocalTableScan" => Operator::LocalTableScan,
            "Range" => Operator::Range,
            "ColumnarToRow" => Operator::ColumnarToRow,
            "RowToColumnar" => Operator::RowToColumnar,
            "Window" => Operator::Window,
            "WindowGroupLimit" => Operator::WindowGroupLimit,
            "Expand" => Operator::Expand,
            "Generate" => Operator::Generate,
            "Union" => Operator::Union,
            "Coalesce" => Operator::Coalesce,
            "BatchEvalPython"
            | "ArrowEvalPython"
            | "BatchEvalPythonUDTF"
            | "ArrowEvalPythonUDTF"
            | "MapInPandas"
            | "MapInArrow"
            | "PythonMapInArrow"
            | "FlatMapGroupsInPandas"
            | "FlatMapGroupsInArrow"
            | "FlatMapCoGroupsInPandas"
            | "FlatMapCoGroupsInArrow"
            | "AggregateInPandas"
            | "ArrowAggregatePython"
            | "WindowInPandas"
            | "ArrowWindowPython"
            | "FlatMapGroupsInPandasWithState" => Operator::PythonUdf,
            "Execute" => Operator::Command,
            "WriteFiles" => Operator::WriteFiles,
            "Subquery" | "SubqueryBroadcast" => Operator::Subquery,
            "ReusedSubquery" => Operator::ReusedSubquery,
            _ => Operator::Other,
        }
    }
}

fn classify_photon(base: &str) -> Operator {
    match first_token(base) {
        "ShuffleMapStage" | "UnionShuffleMapStage" => Operator::Exchange,
        "ShuffleExchangeSink" | "UnionShuffleExchangeSink" => Operator::ShuffleSink,
        "ShuffleExchangeSource" | "UnionShuffleExchangeSource" => Operator::ShuffleSource,
        "BroadcastExchange" => Operator::BroadcastExchange,
        "BroadcastHashJoin" | "HashJoin" => Operator::BroadcastHashJoin,
        "ShuffledHashJoin" | "ShuffleHashJoin" => Operator::ShuffledHashJoin,
        "BroadcastNestedLoopJoin" => Operator::BroadcastNestedLoopJoin,
        "Agg" | "GroupingAgg" | "GroupingAggWithRollup" => Operator::HashAggregate,
        "Sort" => Operator::Sort,
        "TopK" => Operator::TakeOrderedAndProject,
        "GlobalLimit" | "LocalLimit" => Operator::Limit,
        "Project" => Operator::Project,
        "Filter" => Operator::Filter,
        "Scan" | "JsonScan" => Operator::Scan,
        "Range" => Operator::Range,
        "ColumnarToRow" => Operator::ColumnarToRow,
        "RowToColumnar" => Operator::RowToColumnar,
        "Window" => Operator::Window,
        "Expand" => Operator::Expand,
        "Generate" => Operator::Generate,
        "Union" => Operator::Union,
        "SubqueryBroadcast" => Operator::Subquery,
        _ => Operator::Other,
    }
}

/// The leading identifier of a name: up to a space, `(` or `[`.
fn first_token(name: &str) -> &str {
    let end = name.find([' ', '(', '[']).unwrap_or(name.len());
    &name[..end]
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_spark_and_photon_names() {
        assert_eq!(Operator::classify("Exchange"), Operator::Exchange);
        assert_eq!(
            Operator::classify("SortMergeJoin(skew=true)"),
            Operator::SortMergeJoin
        );
        assert_eq!(
            Operator::classify("Scan parquet spark_catalog.default.store_sales"),
            Operator::Scan
        );
        assert_eq!(Operator::classify("PhotonScan parquet "), Operator::Scan);
        assert_eq!(
            Operator::classify("PhotonGroupingAgg"),
            Operator::HashAggregate
        );
        assert_eq!(
            Operator::classify("PhotonShuffleMapStage"),
            Operator::Exchange
        );
        assert_eq!(Operator::classify("PhotonResultStage"), Operator::Other);
        // The names rules read on Databricks, each as the Spark operator it replaces.
        for (photon, spark) in [
            ("PhotonWindow", Operator::Window),
            ("PhotonSort", Operator::Sort),
            ("PhotonTopK", Operator::TakeOrderedAndProject),
            ("PhotonShuffleExchangeSink", Operator::ShuffleSink),
            ("PhotonShuffleExchangeSource", Operator::ShuffleSource),
            ("PhotonBroadcastExchange", Operator::BroadcastExchange),
            ("PhotonBroadcastHashJoin", Operator::BroadcastHashJoin),
            ("PhotonShuffledHashJoin", Operator::ShuffledHashJoin),
            (
                "PhotonBroadcastNestedLoopJoin",
                Operator::BroadcastNestedLoopJoin,
            ),
            ("PhotonAgg", Operator::HashAggregate),
            ("PhotonProject", Operator::Project),
            ("PhotonFilter", Operator::Filter),
            ("PhotonColumnarToRow", Operator::ColumnarToRow),
            ("PhotonRowToColumnar", Operator::RowToColumnar),
        ] {
            assert_eq!(Operator::classify(photon), spark, "{photon}");
        }
        assert_eq!(
            Operator::classify("Execute InsertIntoHadoopFsRelationCommand"),
            Operator::Command
        );
        assert_eq!(
            Operator::classify("HashAggregate(keys=[a#1])"),
            Operator::HashAggregate
        );
    }
}
