//! Stage submissions and completions and job starts read straight from the line, as the task
//! events are. Each carries its stages' `StageInfo` (with every accumulator's final value at a
//! stage's end) and the job's properties, a few KB a line, most of it read past (the RDDs, the
//! long call sites); serde_json took about a tenth of the reading thread's time on them on the
//! read bench's log.
//!
//! The same contract as the rest of the extractor: what it returns is what serde_json returns,
//! or it gives up and the line goes to serde_json. A string with escapes (call sites are stack
//! traces) is read by serde_json on its own, as in [`super::sql`].

use std::borrow::Cow;

use super::{Cursor, MAX_DEPTH};
use crate::events::{
    Accumulable, Event, JobProperties, JobStart, NumberOrText, StageEvent, StageInfo, Text,
};

/// The event `name` read from `line` when it is one this module reads and the line is in a
/// layout it reads exactly; else `None`. As for [`super::sql::event`], the line need not be
/// checked for UTF-8 first.
pub(crate) fn event<'a>(name: &str, line: &'a [u8]) -> Option<Event<'a>> {
    match name {
        "SparkListenerStageSubmitted" => Some(Event::StageSubmitted(Box::new(stage_event(line)?))),
        "SparkListenerStageCompleted" => Some(Event::StageCompleted(Box::new(stage_event(line)?))),
        "SparkListenerJobStart" => Some(Event::JobStart(Box::new(job_start(line)?))),
        _ => None,
    }
}

/// `SparkListenerStageSubmitted` or `SparkListenerStageCompleted`: the stage's info; the
/// submission's `Properties` are read past.
fn stage_event(line: &[u8]) -> Option<StageEvent<'_>> {
    const KEYS: &[&[u8]] = &[b"Event", b"Stage Info"];
    let mut cursor = Cursor::new(line, None);
    let mut stage_info = None;
    cursor.members(KEYS, |c, key| {
        match key {
            1 => stage_info = Some(c.stage_info(1)?),
            _ => c.skip_value(1)?,
        }
        Some(())
    })?;
    cursor.end()?;
    Some(StageEvent {
        stage_info: stage_info?,
    })
}

fn job_start(line: &[u8]) -> Option<JobStart<'_>> {
    const KEYS: &[&[u8]] = &[
        b"Event",
        b"Job ID",
        b"Submission Time",
        b"Stage Infos",
        b"Stage IDs",
        b"Properties",
    ];
    let mut cursor = Cursor::new(line, None);
    let mut start = JobStart {
        job_id: 0,
        submission_time: -1,
        stage_infos: Vec::new(),
        stage_ids: Vec::new(),
        properties: None,
    };
    let mut job_id = None;
    cursor.members(KEYS, |c, key| {
        match key {
            1 => job_id = Some(c.integer()?),
            2 => start.submission_time = c.integer()?,
            3 => start.stage_infos = c.array(|c| c.stage_info(2))?,
            4 => start.stage_ids = c.array(Cursor::integer)?,
            5 => start.properties = Some(c.job_properties()?),
            _ => c.skip_value(1)?,
        }
        Some(())
    })?;
    cursor.end()?;
    start.job_id = job_id?;
    Some(start)
}

impl<'a> Cursor<'a> {
    /// A stage's `StageInfo`, `depth` levels of objects and arrays down.
    fn stage_info(&mut self, depth: usize) -> Option<StageInfo<'a>> {
        const KEYS: &[&[u8]] = &[
            b"Stage ID",
            b"Stage Attempt ID",
            b"Stage Name",
            b"Number of Tasks",
            b"Parent IDs",
            b"Submission Time",
            b"Completion Time",
            b"Failure Reason",
            b"Details",
            b"Accumulables",
        ];
        if depth + 2 > MAX_DEPTH {
            return None;
        }
        let mut info = StageInfo {
            stage_id: 0,
            attempt_id: 0,
            name: Cow::Borrowed(""),
            num_tasks: 0,
            parent_ids: Vec::new(),
            submission_time: None,
            completion_time: None,
            failure_reason: None,
            details: None,
            accumulables: Vec::new(),
        };
        let mut stage_id = None;
        self.members(KEYS, |c, key| {
            match key {
                0 => stage_id = Some(c.integer()?),
                1 => info.attempt_id = c.integer()?,
                2 => info.name = c.any_text()?,
                3 => info.num_tasks = c.integer()?,
                4 => info.parent_ids = c.array(Cursor::integer)?,
                5 => info.submission_time = c.read()?,
                6 => info.completion_time = c.read()?,
                7 => info.failure_reason = c.optional(Cursor::any_text)?,
                8 => info.details = c.optional(Cursor::any_text)?,
                9 => info.accumulables = c.array(|c| c.accumulable(depth + 2))?,
                _ => c.skip_value(depth + 1)?,
            }
            Some(())
        })?;
        info.stage_id = stage_id?;
        Some(info)
    }

    /// One accumulator's final value in a stage (`AccumulableInfo`), `depth` levels down.
    fn accumulable(&mut self, depth: usize) -> Option<Accumulable<'a>> {
        const KEYS: &[&[u8]] = &[b"ID", b"Name", b"Value", b"Metadata"];
        let (mut id, mut name, mut value, mut metadata) = (None, None, None, None);
        self.members(KEYS, |c, key| {
            match key {
                0 => id = Some(c.integer()?),
                1 => name = c.optional(Cursor::any_text)?,
                2 => value = c.optional(Cursor::number_or_text)?,
                3 => metadata = c.optional(Cursor::any_text)?,
                _ => c.skip_value(depth + 1)?,
            }
            Some(())
        })?;
        Some(Accumulable {
            id: id?,
            name,
            value,
            metadata,
        })
    }

    /// An accumulator's value as [`NumberOrText`] reads it: here an integer or a string; a
    /// float, a list or anything else gives up.
    fn number_or_text(&mut self) -> Option<NumberOrText<'a>> {
        match self.peek()? {
            b'"' => self.any_text().map(NumberOrText::Text),
            _ => self.integer().map(NumberOrText::Integer),
        }
    }

    /// A job's `Properties` (`#[serde(default)]`): the ones the model reads; the others are
    /// read past.
    fn job_properties(&mut self) -> Option<JobProperties<'a>> {
        const KEYS: &[&[u8]] = &[
            b"spark.job.description",
            b"spark.jobGroup.id",
            b"spark.sql.execution.id",
            b"callSite.short",
            b"spark.scheduler.pool",
            b"spark.databricks.notebook.path",
            b"spark.databricks.job.runId",
            b"spark.databricks.job.id",
            b"spark.databricks.job.type",
            b"sql.streaming.queryId",
            b"streaming.sql.batchId",
            b"spark.streaming.internal.batchTime",
            b"spark.job.tags",
        ];
        let mut p = JobProperties::default();
        self.members(KEYS, |c, key| {
            let text = |c: &mut Self| c.optional(Cursor::any_text);
            let field: &mut Option<Text<'a>> = match key {
                0 => &mut p.description,
                1 => &mut p.job_group,
                2 => &mut p.sql_execution_id,
                3 => &mut p.call_site,
                4 => &mut p.scheduler_pool,
                5 => &mut p.databricks_notebook,
                6 => &mut p.databricks_job_run,
                7 => &mut p.databricks_job_id,
                8 => &mut p.databricks_job_type,
                9 => &mut p.streaming_query_id,
                10 => &mut p.streaming_batch_id,
                11 => &mut p.dstream_batch_time,
                12 => &mut p.job_tags,
                _ => return c.skip_value(2),
            };
            *field = text(c)?;
            Some(())
        })?;
        Some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{damaged, read_both_ways, real_lines};

    const PREFIXES: [&[u8]; 3] = [
        br#"{"Event":"SparkListenerStageSubmitted""#,
        br#"{"Event":"SparkListenerStageCompleted""#,
        br#"{"Event":"SparkListenerJobStart""#,
    ];

    /// What the extractor and serde_json make of a line, as `Debug` text.
    fn both(line: &[u8]) -> (Option<String>, Option<String>) {
        if line.starts_with(PREFIXES[2]) {
            read_both_ways(line, super::job_start)
        } else {
            read_both_ways(line, super::stage_event)
        }
    }

    #[test]
    fn reads_every_real_stage_and_job_line_as_serde_does() {
        let mut counts = [(0, 0); 3];
        for line in real_lines() {
            let Some(kind) = PREFIXES.iter().position(|p| line.starts_with(p)) else {
                continue;
            };
            counts[kind].0 += 1;
            let (fast, serde) = both(line);
            if fast.is_some() {
                counts[kind].1 += 1;
                assert_eq!(fast, serde, "{}", String::from_utf8_lossy(line));
            }
        }
        for (kind, (lines, read)) in counts.into_iter().enumerate() {
            assert!(lines > 1_000, "{kind}: {lines} lines");
            // Spark 2.x to 4.x, Databricks and Photon: nearly all are read.
            assert!(read * 100 >= lines * 95, "{kind}: {read} of {lines} read");
        }
    }

    /// The shortest real stage completion and job start with escapes, each byte replaced by
    /// JSON's structural and troublesome bytes, and cut at every length: whatever the extractor
    /// accepts, serde_json accepts as the same.
    #[test]
    fn accepts_nothing_from_damaged_stage_and_job_lines_that_serde_would_not() {
        let mut accepted_damage = 0;
        for prefix in &PREFIXES[1..] {
            let line = real_lines()
                .iter()
                .filter(|l| l.starts_with(prefix) && l.contains(&b'\\'))
                .min_by_key(|l| l.len())
                .expect("a line of the kind among the logs");
            accepted_damage += damaged(line, |damaged| {
                let (fast, serde) = both(damaged);
                if fast.is_some() {
                    assert_eq!(fast, serde, "{}", String::from_utf8_lossy(damaged));
                }
                fast.is_some()
            });
        }
        assert!(accepted_damage > 100, "{accepted_damage}");
    }
}
