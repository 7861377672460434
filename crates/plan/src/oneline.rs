//! Splitting a tree-only line (`simpleString`: `nodeName + " " + argString`) into name and
//! arguments.

/// Splits `HashAggregate(keys=[…])`, `Exchange hashpartitioning(…), …`,
/// `FileScan parquet db.t[a#1] Batched: …`, `Execute InsertIntoHadoopFsRelationCommand …`,
/// `SortMergeJoin(skew=true) [a], [b], Inner` into `(name, arguments)`.
pub(crate) fn split_name(text: &str) -> (&str, &str) {
    let ident_end = text
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(text.len());
    let ident = &text[..ident_end];
    let after = &text[ident_end..];

    // `Scan parquet db.t[...]`, `FileScan …`, `PhotonScan …`, `BatchScan t[...]`,
    // `Scan ExistingRDD[...]`: the name runs to the output list.
    if matches!(
        ident,
        "Scan" | "FileScan" | "PhotonScan" | "BatchScan" | "PhotonJsonScan"
    ) && after.starts_with(' ')
    {
        let end = text.find('[').unwrap_or(text.len());
        return (text[..end].trim_end(), &text[end..]);
    }
    // `Execute <CommandName> args`.
    if ident == "Execute"
        && let Some(rest) = after.strip_prefix(' ')
    {
        let cmd_end = rest.find(' ').map_or(text.len(), |i| ident_end + 1 + i);
        return (&text[..cmd_end], text[cmd_end..].trim_start());
    }
    // `SortMergeJoin(skew=true) …`, `ShuffledHashJoin(skew=true) …`.
    if let Some(rest) = after.strip_prefix("(skew=true)") {
        let end = ident_end + "(skew=true)".len();
        return (&text[..end], rest.trim_start());
    }
    if ident.is_empty() {
        // Not an identifier at all: keep the whole text as the name.
        return (text.trim_end(), "");
    }
    (ident, after.trim_start())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_the_usual_shapes() {
        assert_eq!(
            split_name("HashAggregate(keys=[], functions=[count(1)])"),
            ("HashAggregate", "(keys=[], functions=[count(1)])")
        );
        assert_eq!(
            split_name("Exchange SinglePartition, ENSURE_REQUIREMENTS, [plan_id=x]"),
            (
                "Exchange",
                "SinglePartition, ENSURE_REQUIREMENTS, [plan_id=x]"
            )
        );
        assert_eq!(
            split_name("FileScan parquet spark_catalog.default.t[v#x] Batched: true"),
            (
                "FileScan parquet spark_catalog.default.t",
                "[v#x] Batched: true"
            )
        );
        assert_eq!(
            split_name("Execute InsertIntoHadoopFsRelationCommand file:/x, false"),
            (
                "Execute InsertIntoHadoopFsRelationCommand",
                "file:/x, false"
            )
        );
        assert_eq!(
            split_name("SortMergeJoin(skew=true) [a#1], [b#2], Inner"),
            ("SortMergeJoin(skew=true)", "[a#1], [b#2], Inner")
        );
        assert_eq!(split_name("ColumnarToRow"), ("ColumnarToRow", ""));
        assert_eq!(split_name("WriteFiles"), ("WriteFiles", ""));
        assert_eq!(split_name("Execute"), ("Execute", ""));
    }
}
