//! Structured Streaming's listener events, as `StreamingQueryListenerBus` posts them to the
//! Spark listener bus and the event log writes them (Jackson, camelCase; Spark 2.1 onwards, the
//! History Server replays them since 3.1, SPARK-31953; `QueryIdleEvent` since 3.5).
//!
//! A log without them (`spark.eventLog.enabled` off for the SQL listener events, or a Spark
//! before 2.1) still shows each micro-batch's jobs (job property `sql.streaming.queryId`,
//! `streaming.sql.batchId`), but not its trigger, its duration's parts, its rates or its state.

use serde::de::{self, IgnoredAny};
use serde::{Deserialize, Deserializer};

use crate::events::Text;

/// The class every streaming query event's name starts with.
pub const PREFIX: &str = "org.apache.spark.sql.streaming.StreamingQueryListener$";

/// One streaming query event.
#[derive(Debug)]
pub enum QueryEvent<'a> {
    Started(QueryStarted<'a>),
    Progress(Box<QueryProgress<'a>>),
    Idle(QueryIdle<'a>),
    Terminated(QueryTerminated<'a>),
}

#[derive(Debug, Deserialize)]
pub struct QueryStarted<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(rename = "runId", borrow)]
    pub run_id: Text<'a>,
    #[serde(borrow, default)]
    pub name: Option<Text<'a>>,
    /// ISO-8601, `2020-07-29T10:56:55.947Z`.
    #[serde(borrow, default)]
    pub timestamp: Option<Text<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct QueryIdle<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(rename = "runId", borrow)]
    pub run_id: Text<'a>,
    #[serde(borrow, default)]
    pub timestamp: Option<Text<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct QueryTerminated<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(rename = "runId", borrow)]
    pub run_id: Text<'a>,
    /// The exception's text when the query failed; `null` when it was stopped.
    #[serde(borrow, default)]
    pub exception: Option<Text<'a>>,
    #[serde(rename = "errorClassOnException", borrow, default)]
    pub error_class: Option<Text<'a>>,
}

#[derive(Debug, Deserialize)]
struct ProgressEnvelope<'a> {
    #[serde(borrow)]
    progress: QueryProgress<'a>,
}

/// `StreamingQueryProgress`: one micro-batch (or, with no new data, one trigger that did none).
#[derive(Debug, Deserialize)]
pub struct QueryProgress<'a> {
    #[serde(borrow)]
    pub id: Text<'a>,
    #[serde(rename = "runId", borrow)]
    pub run_id: Text<'a>,
    #[serde(borrow, default)]
    pub name: Option<Text<'a>>,
    #[serde(borrow, default)]
    pub timestamp: Option<Text<'a>>,
    #[serde(rename = "batchId", default)]
    pub batch_id: i64,
    /// Since 3.1; before it, `durationMs.triggerExecution` is the batch's time.
    #[serde(rename = "batchDuration", default)]
    pub batch_duration: Option<i64>,
    #[serde(rename = "durationMs", default)]
    pub duration_ms: Vec2<i64>,
    /// `avg`, `max`, `min`, `watermark`: ISO-8601 strings.
    #[serde(rename = "eventTime", borrow, default)]
    pub event_time: Vec2<Text<'a>>,
    #[serde(rename = "stateOperators", borrow, default)]
    pub state_operators: Vec<StateOperator<'a>>,
    #[serde(borrow, default)]
    pub sources: Vec<Source<'a>>,
    #[serde(borrow, default)]
    pub sink: Option<Sink<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct StateOperator<'a> {
    #[serde(rename = "operatorName", borrow, default)]
    pub operator_name: Option<Text<'a>>,
    #[serde(rename = "numRowsTotal", default)]
    pub num_rows_total: i64,
    #[serde(rename = "numRowsUpdated", default)]
    pub num_rows_updated: i64,
    #[serde(rename = "numRowsRemoved", default)]
    pub num_rows_removed: Option<i64>,
    #[serde(rename = "memoryUsedBytes", default)]
    pub memory_used_bytes: i64,
    /// `numLateInputs` in 3.0 and 3.1, `numRowsDroppedByWatermark` since 3.2.
    #[serde(rename = "numRowsDroppedByWatermark", alias = "numLateInputs", default)]
    pub num_rows_dropped_by_watermark: Option<i64>,
    #[serde(rename = "numShufflePartitions", default)]
    pub num_shuffle_partitions: Option<i64>,
    #[serde(rename = "numStateStoreInstances", default)]
    pub num_state_store_instances: Option<i64>,
    #[serde(rename = "customMetrics", default)]
    pub custom_metrics: IgnoredAny,
}

#[derive(Debug, Deserialize)]
pub struct Source<'a> {
    #[serde(borrow, default)]
    pub description: Text<'a>,
    #[serde(rename = "numInputRows", default)]
    pub num_input_rows: i64,
    #[serde(rename = "inputRowsPerSecond", default, deserialize_with = "rate")]
    pub input_rows_per_second: Option<f64>,
    #[serde(rename = "processedRowsPerSecond", default, deserialize_with = "rate")]
    pub processed_rows_per_second: Option<f64>,
    /// Per-source figures (`avgOffsetsBehindLatest`, `maxOffsetsBehindLatest` on Kafka), all
    /// strings.
    #[serde(borrow, default)]
    pub metrics: Vec2<Text<'a>>,
}

#[derive(Debug, Deserialize)]
pub struct Sink<'a> {
    #[serde(borrow, default)]
    pub description: Text<'a>,
    /// `-1` when the sink does not count its rows (DSv1 sinks).
    #[serde(rename = "numOutputRows", default)]
    pub num_output_rows: Option<i64>,
}

/// A JSON object's entries in order, without a map's allocation per entry.
#[derive(Debug)]
pub struct Vec2<V>(pub Vec<(String, V)>);

impl<V> Default for Vec2<V> {
    fn default() -> Self {
        Vec2(Vec::new())
    }
}

impl<V> Vec2<V> {
    pub fn get(&self, key: &str) -> Option<&V> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for Vec2<V> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> de::Visitor<'de> for Visit<V> {
            type Value = Vec2<V>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object or null")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Vec2(Vec::new()))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Vec2(Vec::new()))
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, Option<V>>()? {
                    if let Some(v) = v {
                        out.push((k, v));
                    }
                }
                Ok(Vec2(out))
            }
        }
        d.deserialize_any(Visit(std::marker::PhantomData))
    }
}

/// A rate as Jackson writes a double: a number, or `"NaN"` / `"Infinity"` as a string (the
/// first batch's input rate has no interval to divide by). Those are `None`.
fn rate<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Rate<'a> {
        Number(f64),
        Text(#[serde(borrow)] Text<'a>),
    }
    Ok(match Option::<Rate>::deserialize(d)? {
        Some(Rate::Number(n)) if n.is_finite() => Some(n),
        Some(Rate::Text(t)) => t.parse::<f64>().ok().filter(|n| n.is_finite()),
        _ => None,
    })
}

/// Reads a line whose event name is `PREFIX` + `suffix`; `None` for a suffix Spark does not
/// write (a user's own `StreamingQueryListener.Event` subclass).
pub fn parse<'a>(suffix: &str, line: &'a str) -> Option<Result<QueryEvent<'a>, serde_json::Error>> {
    Some(match suffix {
        "QueryStartedEvent" => serde_json::from_str(line).map(QueryEvent::Started),
        "QueryProgressEvent" => serde_json::from_str::<ProgressEnvelope>(line)
            .map(|e| QueryEvent::Progress(Box::new(e.progress))),
        "QueryIdleEvent" => serde_json::from_str(line).map(QueryEvent::Idle),
        "QueryTerminatedEvent" => serde_json::from_str(line).map(QueryEvent::Terminated),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_progress_line_of_spark_3_1_reads_with_its_nan_rate() {
        let line = r#"{"Event":"org.apache.spark.sql.streaming.StreamingQueryListener$QueryProgressEvent","progress":{"id":"8d26","runId":"e225","name":null,"timestamp":"2020-07-29T10:56:56.015Z","batchId":0,"batchDuration":7110,"durationMs":{"triggerExecution":7109,"queryPlanning":439,"getBatch":21,"latestOffset":3524,"addBatch":3011,"walCommit":35},"eventTime":{},"stateOperators":[{"numRowsTotal":1,"numRowsUpdated":1,"memoryUsedBytes":776,"numLateInputs":0,"customMetrics":{"stateOnCurrentVersionSizeBytes":488}}],"sources":[{"description":"KafkaV2[Subscribe[test5]]","startOffset":null,"endOffset":"{\"test5\":{\"0\":48279}}","numInputRows":3,"inputRowsPerSecond":"NaN","processedRowsPerSecond":0.42194092827004215}],"sink":{"description":"ConsoleTable","numOutputRows":1},"observedMetrics":{}}}"#;
        let Some(Ok(QueryEvent::Progress(p))) = parse("QueryProgressEvent", line) else {
            panic!("not read");
        };
        assert_eq!(p.batch_id, 0);
        assert_eq!(p.batch_duration, Some(7110));
        assert_eq!(p.duration_ms.get("latestOffset"), Some(&3524));
        assert_eq!(p.sources[0].input_rows_per_second, None);
        assert_eq!(
            p.sources[0].processed_rows_per_second,
            Some(0.42194092827004215)
        );
        assert_eq!(p.state_operators[0].num_rows_dropped_by_watermark, Some(0));
        assert_eq!(p.sink.unwrap().num_output_rows, Some(1));
    }

    #[test]
    fn a_user_event_subclass_is_not_read_as_spark_s() {
        assert!(parse("MyEvent", "{}").is_none());
    }
}
