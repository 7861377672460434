//! SQL executions' starts and adaptive re-plans read straight from the line, as the task events
//! are. Each holds a whole physical plan (its text and its tree, about 8 KB a line on the read
//! bench's log), and serde_json took about 15 instructions a byte on them: after the task events,
//! the largest share of the reading thread's time.
//!
//! The same contract as the task events' extractor: what it returns is what serde_json returns,
//! or it gives up and the line goes to serde_json. Plans are full of escaped strings (the plan's
//! text is one line of `\n`s), so a string with a backslash that is read is handed to
//! serde_json on its own (its bytes alone, quotes included): every escape is read by serde_json
//! itself.

use std::borrow::Cow;
use std::collections::BTreeMap;

use compact_str::CompactString;

use super::{Cursor, MAX_DEPTH};
use crate::events::{
    Event, SparkPlanInfo, SqlAdaptiveExecutionUpdate, SqlExecutionStart, SqlMetricInfo,
    known_metric_name,
};

/// The event `name` (its name without `org.apache.spark.sql.execution.ui.`) read from `line`
/// when it is one this module reads and the line is in a layout it reads exactly; else `None`.
///
/// The line need not be checked for UTF-8 first: as for the task events, every byte accepted
/// outside a string is ASCII, and every string read or read past is checked (by
/// [`Cursor::text`], or by serde_json for one with escapes).
pub(crate) fn event<'a>(name: &str, line: &'a [u8]) -> Option<Event<'a>> {
    match name {
        "SparkListenerSQLAdaptiveExecutionUpdate" => Some(Event::SqlAdaptiveExecutionUpdate(
            Box::new(adaptive_update(line)?),
        )),
        "SparkListenerSQLExecutionStart" => {
            Some(Event::SqlExecutionStart(Box::new(execution_start(line)?)))
        }
        _ => None,
    }
}

/// `SparkListenerSQLAdaptiveExecutionUpdate`, or `None` to leave the line to serde_json.
fn adaptive_update(line: &[u8]) -> Option<SqlAdaptiveExecutionUpdate<'_>> {
    const KEYS: &[&[u8]] = &[
        b"Event",
        b"executionId",
        b"physicalPlanDescription",
        b"sparkPlanInfo",
    ];
    let mut cursor = Cursor::new(line, None);
    let (mut execution_id, mut description, mut plan) = (None, None, None);
    cursor.members(KEYS, |c, key| {
        match key {
            1 => execution_id = Some(c.integer()?),
            2 => description = Some(c.any_text()?),
            3 => plan = Some(c.plan_info(1)?),
            _ => c.skip_value(1)?,
        }
        Some(())
    })?;
    cursor.end()?;
    Some(SqlAdaptiveExecutionUpdate {
        execution_id: execution_id?,
        physical_plan_description: description.unwrap_or_default(),
        spark_plan_info: plan,
    })
}

/// `SparkListenerSQLExecutionStart`, or `None` to leave the line to serde_json.
fn execution_start(line: &[u8]) -> Option<SqlExecutionStart<'_>> {
    const KEYS: &[&[u8]] = &[
        b"Event",
        b"executionId",
        b"rootExecutionId",
        b"description",
        b"details",
        b"physicalPlanDescription",
        b"sparkPlanInfo",
        b"time",
    ];
    let mut cursor = Cursor::new(line, None);
    let mut start = SqlExecutionStart {
        execution_id: 0,
        root_execution_id: None,
        description: Cow::Borrowed(""),
        details: Cow::Borrowed(""),
        physical_plan_description: Cow::Borrowed(""),
        spark_plan_info: None,
        time: 0,
    };
    let mut execution_id = None;
    cursor.members(KEYS, |c, key| {
        match key {
            1 => execution_id = Some(c.integer()?),
            2 => start.root_execution_id = c.read()?,
            3 => start.description = c.any_text()?,
            4 => start.details = c.any_text()?,
            5 => start.physical_plan_description = c.any_text()?,
            6 => start.spark_plan_info = Some(c.plan_info(1)?),
            7 => start.time = c.integer()?,
            _ => c.skip_value(1)?,
        }
        Some(())
    })?;
    cursor.end()?;
    start.execution_id = execution_id?;
    Some(start)
}

impl<'a> Cursor<'a> {
    /// A plan node (`SparkPlanInfo`, `#[serde(default)]`: any key may be missing) and its
    /// children, `depth` levels of objects and arrays down.
    fn plan_info(&mut self, depth: usize) -> Option<SparkPlanInfo> {
        const KEYS: &[&[u8]] = &[
            b"nodeName",
            b"simpleString",
            b"children",
            b"metadata",
            b"metrics",
        ];
        // serde_json's own limit counts each object and array; giving up early is always safe.
        if depth + 2 > MAX_DEPTH {
            return None;
        }
        let mut node = SparkPlanInfo::default();
        self.members(KEYS, |c, key| {
            match key {
                0 => node.node_name = CompactString::from(c.any_text()?),
                1 => node.simple_string = c.any_text()?.into_owned(),
                2 => node.children = c.array(|c| c.plan_info(depth + 2))?,
                3 => node.metadata = c.string_map()?,
                4 => node.metrics = c.array(|c| c.metric_info(depth + 2))?,
                _ => c.skip_value(depth + 1)?,
            }
            Some(())
        })?;
        Some(node)
    }

    /// A plan node's `metadata`: strings by name; a repeated name keeps its last value, as
    /// serde's map does.
    fn string_map(&mut self) -> Option<BTreeMap<String, String>> {
        let mut map = BTreeMap::new();
        self.object(|c| {
            let key = c.any_text()?.into_owned();
            c.eat(b':')?;
            map.insert(key, c.any_text()?.into_owned());
            Some(())
        })?;
        Some(map)
    }

    /// One SQL metric of a plan node (`#[serde(default)]`), `depth` levels down; its
    /// `metricType` is read past.
    fn metric_info(&mut self, depth: usize) -> Option<SqlMetricInfo> {
        const KEYS: &[&[u8]] = &[b"name", b"accumulatorId"];
        let mut metric = SqlMetricInfo::default();
        self.members(KEYS, |c, key| {
            match key {
                0 => {
                    let name = c.any_text()?;
                    metric.name =
                        known_metric_name(&name).unwrap_or_else(|| CompactString::from(name));
                }
                1 => metric.accumulator_id = c.integer()?,
                _ => c.skip_value(depth + 1)?,
            }
            Some(())
        })?;
        Some(metric)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{damaged, read_both_ways, real_lines};

    const UPDATE: &[u8] =
        br#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLAdaptiveExecutionUpdate""#;
    const START: &[u8] =
        br#"{"Event":"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart""#;

    /// What the extractor and serde_json make of a line, as `Debug` text.
    fn both(line: &[u8]) -> (Option<String>, Option<String>) {
        if line.starts_with(UPDATE) {
            read_both_ways(line, super::adaptive_update)
        } else {
            read_both_ways(line, super::execution_start)
        }
    }

    #[test]
    fn reads_every_real_plan_line_as_serde_does() {
        let (mut lines, mut read, mut escaped) = (0, 0, 0);
        for line in real_lines() {
            if !line.starts_with(UPDATE) && !line.starts_with(START) {
                continue;
            }
            lines += 1;
            let (fast, serde) = both(line);
            if fast.is_some() {
                read += 1;
                escaped += usize::from(line.contains(&b'\\'));
                assert_eq!(fast, serde, "{}", String::from_utf8_lossy(line));
            }
        }
        assert!(lines > 1_000, "{lines} plan lines");
        // Spark 3.x and 4.x, Databricks and Photon write the same layout: all are read.
        assert!(
            read * 100 >= lines * 99,
            "{read} of {lines} plan lines read"
        );
        assert!(escaped * 2 > read, "{escaped} of {read} with escapes");
    }

    /// The shortest real re-plan with escapes, each byte replaced by JSON's structural and
    /// troublesome bytes, and cut at every length: whatever the extractor accepts, serde_json
    /// accepts as the same.
    #[test]
    fn accepts_nothing_from_damaged_plan_lines_that_serde_would_not() {
        let line = real_lines()
            .iter()
            .filter(|l| l.starts_with(UPDATE) && l.contains(&b'\\'))
            .min_by_key(|l| l.len())
            .expect("a re-plan among the logs");
        let accepted_damage = damaged(line, |damaged| {
            let (fast, serde) = both(damaged);
            if fast.is_some() {
                assert_eq!(fast, serde, "{}", String::from_utf8_lossy(damaged));
            }
            fast.is_some()
        });
        assert!(accepted_damage > 100, "{accepted_damage}");
    }
}
