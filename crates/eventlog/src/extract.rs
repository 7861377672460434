//! Reads task starts and task ends (nine tenths of a log's bytes) straight from the line, without
//! serde's machinery, several times faster than `serde_json::from_str` on the same events.
//!
//! It is exact by construction: it either returns what `serde_json::from_str` would return, or
//! gives up (`None`) and the caller parses the line with serde_json, so every value and every
//! error message stays serde's. It gives up on whatever it does not handle exactly as serde_json
//! does: a backslash in a string it reads (escapes; one it reads past is checked as serde_json
//! checks it), control characters in strings, numbers that are
//! not plain integers fitting an `i64` (floats, exponents, `-0`), `null` where a value is
//! required, a repeated key, a missing required key, nesting deeper than serde_json's limit, and
//! anything that is not JSON. Keys may come in any order and unknown keys are read past (their
//! values still checked to be JSON), as serde does.
//!
//! [`sql`] and [`scheduler`] read SQL executions' starts and re-plans, stage submissions and
//! completions and job starts the same way, except that a string with escapes (plans and call
//! sites are full of them) is handed to serde_json on its own.

use std::borrow::Cow;
use std::ops::Range;
use std::sync::LazyLock;

pub(crate) mod scheduler;
pub(crate) mod sql;

use crate::events::{
    ExecutorMetrics, InputMetrics, OutputMetrics, ShuffleReadMetrics, ShuffleWriteMetrics, TaskEnd,
    TaskEndReason, TaskInfo, TaskMetrics, TaskStart, Text,
};

/// `SparkListenerTaskEnd`, read as if the bytes in `hole` (the inside of the `Accumulables`
/// array, see [`crate::events::task_accumulables`]) were not there; or `None` to leave the line
/// to serde_json. The line need not be checked for UTF-8 first: every byte the extractor accepts
/// is ASCII outside strings, and each string is checked (see [`Cursor::string`]), so a line that
/// is not UTF-8 on either side of the hole is given up, as serde_json would refuse it.
pub(crate) fn task_end(line: &[u8], hole: Option<Range<usize>>) -> Option<TaskEnd<'_>> {
    const KEYS: &[&[u8]] = &[
        b"Event",
        b"Stage ID",
        b"Stage Attempt ID",
        b"Task Type",
        b"Task End Reason",
        b"Task Info",
        b"Task Executor Metrics",
        b"Task Metrics",
    ];
    let mut cursor = Cursor::new(line, hole);
    let (mut stage_id, mut stage_attempt_id, mut reason, mut task_info) = (None, None, None, None);
    let (mut executor_metrics, mut metrics) = (None, None);
    cursor.members(KEYS, |c, key| {
        match key {
            1 => stage_id = Some(c.read()?),
            2 => stage_attempt_id = Some(c.read()?),
            4 => reason = Some(c.read()?),
            5 => task_info = Some(c.read()?),
            6 => executor_metrics = c.read()?,
            7 => metrics = c.read()?,
            _ => c.skip_value(1)?,
        }
        Some(())
    })?;
    cursor.end()?;
    Some(TaskEnd {
        stage_id: stage_id?,
        stage_attempt_id: stage_attempt_id.unwrap_or_default(),
        reason: reason?,
        task_info: task_info?,
        executor_metrics,
        metrics,
    })
}

/// `SparkListenerTaskStart`, or `None` to leave the line to serde_json. The line must be valid
/// UTF-8.
pub(crate) fn task_start(line: &str) -> Option<TaskStart<'_>> {
    const KEYS: &[&[u8]] = &[b"Event", b"Stage ID", b"Stage Attempt ID", b"Task Info"];
    let mut cursor = Cursor::new(line.as_bytes(), None);
    let (mut stage_id, mut stage_attempt_id, mut task_info) = (None, None, None);
    cursor.members(KEYS, |c, key| {
        match key {
            1 => stage_id = Some(c.read()?),
            2 => stage_attempt_id = Some(c.read()?),
            3 => task_info = Some(c.read()?),
            _ => c.skip_value(1)?,
        }
        Some(())
    })?;
    cursor.end()?;
    Some(TaskStart {
        stage_id: stage_id?,
        stage_attempt_id: stage_attempt_id.unwrap_or_default(),
        task_info: task_info?,
    })
}

/// `,"key":` as one constant, so the comparison compiles to a few word comparisons.
macro_rules! member {
    ($template:ident, $key:literal) => {
        $template.member(concat!(",\"", $key, "\":").as_bytes())
    };
}

/// The value of `key` if it is next, read by its template; `None` if the key is absent.
macro_rules! optional {
    ($template:ident, $key:literal) => {
        if member!($template, $key) {
            Some($template.read()?)
        } else {
            None
        }
    };
}

/// A task start or task end in the layout Spark 3.x and 4.x write (`JsonProtocol`: keys in one
/// order, no whitespace), read by expecting each key in turn with one comparison of a known
/// string, or `None` if the line has any other layout. It reads every value with the same
/// readers as [`task_end`] and [`task_start`], so what it returns is what they return; a key
/// out of its order, an unknown key, whitespace or an optional key it does not expect is given
/// up, and the line goes to [`task_end`] or [`task_start`], then to serde_json.
///
/// Unlike [`task_end`], it needs no [`crate::events::task_accumulables`] search for where the
/// `Accumulables` array starts: it reaches the key in its place (the first occurrence in the
/// line, as no string before it can hold a quote) and searches only for the array's end.
pub(crate) fn task_event_by_template(line: &[u8]) -> Option<TaskEvent<'_>> {
    const TASK: &[u8] = br#"{"Event":"SparkListenerTask"#;
    let rest = line.strip_prefix(TASK)?;
    if let Some(after) = rest.strip_prefix(br#"End""#) {
        let mut cursor = Cursor::new(line, None);
        cursor.pos = line.len() - after.len();
        cursor.find_hole = true;
        // Read into its box in place: built on the stack and boxed, each task end (768 bytes)
        // was copied three or four times on its way (memcpy, 8% of the reading thread).
        let mut event = Box::<TaskEnd>::default();
        task_end_template(&mut cursor, &mut event)?;
        // The hole search must have run at the array: otherwise the general reading would
        // search the whole line for it.
        (cursor.hole.start != usize::MAX).then_some(TaskEvent::End(event))
    } else if let Some(after) = rest.strip_prefix(br#"Start""#) {
        let mut cursor = Cursor::new(line, None);
        cursor.pos = line.len() - after.len();
        task_start_template(&mut cursor).map(TaskEvent::Start)
    } else {
        None
    }
}

/// What [`task_event_by_template`] read.
#[derive(Debug)]
pub(crate) enum TaskEvent<'a> {
    Start(TaskStart<'a>),
    /// Boxed as [`crate::Event::TaskEnd`] holds it.
    End(Box<TaskEnd<'a>>),
}

/// The members after `"Event"`, in Spark's order, read into `event` (as its default has
/// them); the cursor is past the event name.
fn task_end_template<'a>(c: &mut Cursor<'a>, event: &mut TaskEnd<'a>) -> Option<()> {
    let mut t = Template::after_event_name(c);
    let (stage_id, stage_attempt_id) = t.stage()?;
    // Read as a string, not past as any value: an object here could hold `"Accumulables":[`,
    // which the general reading would take for the task's own array.
    if member!(t, "Task Type") {
        t.read::<Text>()?;
    }
    let has_reason = member!(t, "Task End Reason");
    if has_reason {
        t.read_into(&mut event.reason)?;
    }
    let has_task_info = member!(t, "Task Info");
    if has_task_info {
        t.read_into(&mut event.task_info)?;
    }
    // Absent or `null`, either is `None`.
    if member!(t, "Task Executor Metrics") {
        t.read_into(&mut event.executor_metrics)?;
    }
    if member!(t, "Task Metrics") {
        t.read_into(&mut event.metrics)?;
    }
    t.close_line()?;
    event.stage_id = stage_id?;
    event.stage_attempt_id = stage_attempt_id;
    (has_reason && has_task_info).then_some(())
}

fn task_start_template<'a>(c: &mut Cursor<'a>) -> Option<TaskStart<'a>> {
    let mut t = Template::after_event_name(c);
    let (stage_id, stage_attempt_id) = t.stage()?;
    let task_info = optional!(t, "Task Info");
    t.close_line()?;
    Some(TaskStart {
        stage_id: stage_id?,
        stage_attempt_id,
        task_info: task_info?,
    })
}

/// An object read member by member in a fixed order: each key is tried once, in its place, and
/// skipped when absent; after the last, the object must end. Any member out of order, unknown
/// or repeated, and any whitespace, makes the reading give up.
struct Template<'c, 'a> {
    cursor: &'c mut Cursor<'a>,
    /// No member has been read yet: the next key comes without a comma.
    first: bool,
}

impl<'c, 'a> Template<'c, 'a> {
    /// A task event's members, after `{"Event":"…"` (read by the caller).
    fn after_event_name(cursor: &'c mut Cursor<'a>) -> Self {
        Template {
            cursor,
            first: false,
        }
    }

    /// `"Stage ID"` and `"Stage Attempt ID"` (0 when absent), with which task events begin.
    fn stage(&mut self) -> Option<(Option<i64>, i64)> {
        let stage_id = optional!(self, "Stage ID");
        let stage_attempt_id = optional!(self, "Stage Attempt ID").unwrap_or(0);
        Some((stage_id, stage_attempt_id))
    }

    /// The end of the event's object, which must end the line.
    fn close_line(self) -> Option<()> {
        let bytes = self.cursor.bytes;
        let end = self.cursor.pos + 1;
        (bytes.get(self.cursor.pos) == Some(&b'}') && end == bytes.len()).then_some(())
    }

    fn open(cursor: &'c mut Cursor<'a>) -> Option<Self> {
        (cursor.bytes.get(cursor.pos) == Some(&b'{')).then(|| cursor.pos += 1)?;
        Some(Template {
            cursor,
            first: true,
        })
    }

    /// Whether `key` (written `,"key":`) is next, and if so moves past it.
    #[inline(always)]
    fn member(&mut self, key: &[u8]) -> bool {
        // Each branch compares a constant of its own length once inlined, so the comparison
        // unrolls; with the length chosen at run time it looped (3% of the reading).
        let found = if self.first {
            self.cursor.eat_bytes(&key[1..])
        } else {
            self.cursor.eat_bytes(key)
        };
        if found {
            self.first = false;
        }
        found
    }

    fn read<T: Templated<'a>>(&mut self) -> Option<T> {
        T::template(self.cursor)
    }

    /// [`Template::read`] into `place`, which holds its type's default.
    fn read_into<T: Templated<'a>>(&mut self, place: &mut T) -> Option<()> {
        T::template_into(self.cursor, place)
    }

    /// Reads past a value the model does not use, checking that it is JSON; most are one digit.
    #[inline(always)]
    fn skip(&mut self) -> Option<()> {
        let c = &mut *self.cursor;
        if let Some(&[b'0'..=b'9', b',' | b'}']) = c.bytes.get(c.pos..c.pos + 2) {
            c.pos += 1;
            return Some(());
        }
        c.skip_value(1)
    }

    /// A task's `Accumulables`: in a task end, the array's inside is the hole, found here.
    fn accumulables(&mut self) -> Option<()> {
        let c = &mut *self.cursor;
        if c.find_hole {
            if c.bytes.get(c.pos) != Some(&b'[') {
                return None;
            }
            let start = c.pos + 1;
            c.hole = start..crate::events::task_accumulables_end(c.bytes, start)?;
            c.find_hole = false;
        }
        c.skip_value(1)
    }

    fn close(self) -> Option<()> {
        let at = self.cursor.bytes.get(self.cursor.pos);
        (at == Some(&b'}')).then(|| self.cursor.pos += 1)
    }
}

/// A value read in Spark's layout: scalars as [`Field`] reads them, objects by their template.
trait Templated<'a>: Sized {
    fn template(cursor: &mut Cursor<'a>) -> Option<Self>;

    /// [`Templated::template`] into `place`, which holds the type's default: a struct is read
    /// field by field where it will stay instead of being built and then moved there.
    #[inline(always)]
    fn template_into(cursor: &mut Cursor<'a>, place: &mut Self) -> Option<()> {
        *place = Self::template(cursor)?;
        Some(())
    }
}

macro_rules! templated_as_field {
    ($($type:ty),*) => {
        $(impl<'a> Templated<'a> for $type {
            #[inline(always)]
            fn template(cursor: &mut Cursor<'a>) -> Option<Self> {
                <$type as Field<'a>>::read(cursor)
            }
        })*
    };
}
templated_as_field!(bool, Text<'a>);

impl<'a> Templated<'a> for i64 {
    /// Most of a task's metrics are one digit (mostly 0) before a `,` or `}`: read here, in
    /// line, the call and the general checks cost several times the digit itself.
    #[inline(always)]
    fn template(cursor: &mut Cursor<'a>) -> Option<Self> {
        if let Some(&[digit @ b'0'..=b'9', b',' | b'}']) =
            cursor.bytes.get(cursor.pos..cursor.pos + 2)
        {
            cursor.pos += 1;
            return Some(i64::from(digit - b'0'));
        }
        cursor.integer()
    }
}

impl<'a, T: Templated<'a> + Default> Templated<'a> for Option<T> {
    fn template(cursor: &mut Cursor<'a>) -> Option<Self> {
        if cursor.bytes.get(cursor.pos) == Some(&b'n') {
            return cursor.eat_literal(b"null").map(|()| None);
        }
        T::template(cursor).map(Some)
    }

    fn template_into(cursor: &mut Cursor<'a>, place: &mut Self) -> Option<()> {
        if cursor.bytes.get(cursor.pos) == Some(&b'n') {
            *place = None;
            return cursor.eat_literal(b"null");
        }
        T::template_into(cursor, place.insert(T::default()))
    }
}

impl<'a> Templated<'a> for ExecutorMetrics {
    fn template(cursor: &mut Cursor<'a>) -> Option<Self> {
        let mut value = ExecutorMetrics::default();
        Self::template_into(cursor, &mut value)?;
        Some(value)
    }

    fn template_into(cursor: &mut Cursor<'a>, value: &mut Self) -> Option<()> {
        let mut t = Template::open(cursor)?;
        value.each_member(&mut t)?;
        t.close()
    }
}

/// Reads one integer member of a struct listed by a macro elsewhere ([`ExecutorMetrics`]), its
/// key a constant. A method always inlined, not a closure: the closure was called once a key (23
/// calls a task end), with the key's length unknown to the comparison.
pub(crate) trait MemberReader {
    fn member(&mut self, key: &'static [u8], value: &mut i64) -> Option<()>;
}

impl MemberReader for Template<'_, '_> {
    #[inline(always)]
    fn member(&mut self, key: &'static [u8], value: &mut i64) -> Option<()> {
        if Template::member(self, key) {
            *value = self.read()?;
        }
        Some(())
    }
}

/// A struct whose serde derive has `#[serde(default)]`, read two ways from one list of its keys
/// in Spark's order, each read into a field or read past as any JSON value (`_`, and the two
/// values the template reads its own way: the task's `Accumulables`, `Push Based Shuffle`):
///
/// - as a [`Field`], by the general extractor: keys in any order, missing keys keep their
///   default, unknown keys are read past, a repeated listed key gives up;
/// - as [`Templated`]: the listed keys in their order, each at most once, nothing else.
macro_rules! spark_struct {
    ($type:ident $(<$life:lifetime>)? { $($key:literal => $field:tt),* $(,)? }) => {
        impl<'a> Field<'a> for $type $(<$life>)? {
            #[allow(unused_mut)]
            fn read(cursor: &mut Cursor<'a>) -> Option<Self> {
                const KEYS: &[&[u8]] = &[$($key.as_bytes()),*];
                let mut value = Self::default();
                cursor.members(KEYS, |c, place| {
                    let mut i = 0;
                    $(
                        if place == i {
                            spark_struct!(@general c, value, $field);
                            return Some(());
                        }
                        i += 1;
                    )*
                    let _ = i;
                    None
                })?;
                Some(value)
            }
        }

        impl<'a> Templated<'a> for $type $(<$life>)? {
            fn template(cursor: &mut Cursor<'a>) -> Option<Self> {
                let mut value = Self::default();
                Self::template_into(cursor, &mut value)?;
                Some(value)
            }

            // A struct read only to be checked has no field to set.
            #[allow(unused_variables)]
            fn template_into(cursor: &mut Cursor<'a>, value: &mut Self) -> Option<()> {
                let mut t = Template::open(cursor)?;
                $(
                    if member!(t, $key) {
                        spark_struct!(@template t, value, $field);
                    }
                )*
                t.close()
            }
        }
    };
    (@general $c:ident, $value:ident, _) => {
        $c.skip_value(1)?
    };
    (@general $c:ident, $value:ident, hole) => {
        $c.skip_value(1)?
    };
    (@general $c:ident, $value:ident, push_based_shuffle) => {
        $c.skip_value(1)?
    };
    (@general $c:ident, $value:ident, $field:ident) => {
        $value.$field = $c.read()?
    };
    (@template $t:ident, $value:ident, _) => {
        $t.skip()?
    };
    (@template $t:ident, $value:ident, hole) => {
        $t.accumulables()?
    };
    (@template $t:ident, $value:ident, push_based_shuffle) => {
        $t.read::<PushBasedShuffle>()?
    };
    (@template $t:ident, $value:ident, $field:ident) => {
        $t.read_into(&mut $value.$field)?
    };
}

spark_struct!(TaskInfo<'a> {
    "Task ID" => task_id,
    "Index" => index,
    "Attempt" => attempt,
    "Partition ID" => partition_id,
    "Launch Time" => launch_time,
    "Executor ID" => executor_id,
    "Host" => host,
    "Locality" => locality,
    "Speculative" => speculative,
    "Getting Result Time" => getting_result_time,
    "Finish Time" => finish_time,
    "Failed" => failed,
    "Killed" => killed,
    "Accumulables" => hole,
});

// In the order of Spark's `JsonProtocol.taskEndReasonToJson`. `Accumulator Updates` (of killed
// and failed tasks) is not listed: an object inside it could hold `"Accumulables":[`, which the
// general reading would take for the task's own array, so the template must not read past it.
spark_struct!(TaskEndReason<'a> {
    "Reason" => reason,
    "Shuffle ID" => shuffle_id,
    "Class Name" => class_name,
    "Description" => description,
    "Stack Trace" => _,
    "Full Stack Trace" => full_stack_trace,
    "Kill Reason" => kill_reason,
    "Message" => message,
    "Executor ID" => executor_id,
    "Exit Caused By App" => exit_caused_by_app,
    "Loss Reason" => loss_reason,
});

spark_struct!(TaskMetrics {
    "Executor Deserialize Time" => executor_deserialize_time,
    "Executor Deserialize CPU Time" => executor_deserialize_cpu_time,
    "Executor Run Time" => executor_run_time,
    "Executor CPU Time" => executor_cpu_time,
    "Peak Execution Memory" => peak_execution_memory,
    "Peak On Heap Execution Memory" => _,
    "Peak Off Heap Execution Memory" => _,
    "Result Size" => result_size,
    "JVM GC Time" => jvm_gc_time,
    "Result Serialization Time" => result_serialization_time,
    "Memory Bytes Spilled" => memory_bytes_spilled,
    "Disk Bytes Spilled" => disk_bytes_spilled,
    "Shuffle Read Metrics" => shuffle_read,
    "Shuffle Write Metrics" => shuffle_write,
    "Input Metrics" => input,
    "Output Metrics" => output,
    "Updated Blocks" => _,
});

spark_struct!(ShuffleReadMetrics {
    "Remote Blocks Fetched" => remote_blocks_fetched,
    "Local Blocks Fetched" => local_blocks_fetched,
    "Fetch Wait Time" => fetch_wait_time,
    "Remote Bytes Read" => remote_bytes_read,
    "Remote Bytes Read To Disk" => remote_bytes_read_to_disk,
    "Local Bytes Read" => local_bytes_read,
    "Total Records Read" => total_records_read,
    "Remote Requests Duration" => _,
    "Push Based Shuffle" => push_based_shuffle,
});

/// Spark 3.2+'s `Push Based Shuffle` metrics inside `Shuffle Read Metrics`, which the model does
/// not read: its keys compared in place cost less than scanning each as a string.
#[derive(Default)]
struct PushBasedShuffle;

spark_struct!(PushBasedShuffle {
    "Corrupt Merged Block Chunks" => _,
    "Merged Fetch Fallback Count" => _,
    "Merged Remote Blocks Fetched" => _,
    "Merged Local Blocks Fetched" => _,
    "Merged Remote Chunks Fetched" => _,
    "Merged Local Chunks Fetched" => _,
    "Merged Remote Bytes Read" => _,
    "Merged Local Bytes Read" => _,
    "Merged Remote Requests Duration" => _,
});

spark_struct!(ShuffleWriteMetrics {
    "Shuffle Bytes Written" => bytes_written,
    "Shuffle Write Time" => write_time,
    "Shuffle Records Written" => records_written,
});

spark_struct!(InputMetrics {
    "Bytes Read" => bytes_read,
    "Records Read" => records_read,
});

spark_struct!(OutputMetrics {
    "Bytes Written" => bytes_written,
    "Records Written" => records_written,
});

/// serde_json's default recursion limit: deeper input is its error, not ours to judge.
const MAX_DEPTH: usize = 100;

/// A position in one line of JSON.
struct Cursor<'a> {
    bytes: &'a [u8],
    pos: usize,
    /// Bytes read as if absent: reaching its start right after a `[` jumps to its end.
    hole: Range<usize>,
    /// The hole is not known yet: the template finds it at the task's `Accumulables`.
    find_hole: bool,
}

impl<'a> Cursor<'a> {
    fn new(bytes: &'a [u8], hole: Option<Range<usize>>) -> Self {
        Cursor {
            bytes,
            pos: 0,
            hole: hole.unwrap_or(usize::MAX..usize::MAX),
            find_hole: false,
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    #[inline(always)]
    fn skip_whitespace(&mut self) {
        // Spark writes no whitespace: one comparison (every byte above the space is not
        // whitespace) settles nearly every call.
        if self.bytes.get(self.pos).is_some_and(|&b| b > b' ') {
            return;
        }
        while let Some(b' ' | b'\n' | b'\t' | b'\r') = self.bytes().get(self.pos) {
            self.pos += 1;
        }
    }

    /// Whether `expected` comes next, byte for byte; if so, moves past it.
    #[inline(always)]
    fn eat_bytes(&mut self, expected: &[u8]) -> bool {
        let found = self
            .bytes
            .get(self.pos..self.pos + expected.len())
            .is_some_and(|next| same_bytes(next, expected));
        if found {
            self.pos += expected.len();
        }
        found
    }

    /// The next byte after whitespace, not consumed.
    fn peek(&mut self) -> Option<u8> {
        self.skip_whitespace();
        self.bytes().get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    fn eat_literal(&mut self, literal: &[u8]) -> Option<()> {
        self.skip_whitespace();
        self.bytes()[self.pos..]
            .starts_with(literal)
            .then(|| self.pos += literal.len())
    }

    /// Only whitespace may follow the value, as `serde_json::from_str` requires.
    fn end(&mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }

    fn read<T: Field<'a>>(&mut self) -> Option<T> {
        T::read(self)
    }

    /// A string without escapes or control characters, borrowed from the line and valid UTF-8
    /// (Spark's strings are nearly all ASCII: only a string holding other bytes is checked).
    fn string(&mut self) -> Option<&'a [u8]> {
        self.text().map(str::as_bytes)
    }

    /// [`Cursor::string`] as text. An ASCII string, nearly all of Spark's, is taken as it is:
    /// `str::from_utf8` on each of a task's few short strings cost more than reading them
    /// (over a hundred instructions a call, 4% of the reading).
    fn text(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let rest = &self.bytes[self.pos..];
        // Eight bytes at a time up to the word that may hold the end or a non-ASCII byte, then
        // byte by byte.
        let mut len = 0;
        loop {
            let Some(word) = rest.get(len..len + 8) else {
                len += rest[len..]
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b))?;
                break;
            };
            let special = ascii_string_ends(word_at(word, 0));
            if special != 0 {
                len += special.trailing_zeros() as usize / 8;
                break;
            }
            len += 8;
        }
        let text = if rest[len] >= 0x80 {
            len += rest[len..]
                .iter()
                .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
            std::str::from_utf8(&rest[..len]).ok()?
        } else {
            let ascii = &rest[..len];
            debug_assert!(ascii.is_ascii());
            // SAFETY: every byte of `ascii` was found to be below 0x80 (by `ascii_string_ends`
            // on each word, or the byte loop's range), and ASCII is valid UTF-8.
            unsafe { std::str::from_utf8_unchecked(ascii) }
        };
        if rest[len] != b'"' {
            return None;
        }
        self.pos += len + 1;
        Some(text)
    }

    /// An integer as serde_json reads one into an `i64`.
    fn integer(&mut self) -> Option<i64> {
        self.skip_whitespace();
        let rest = &self.bytes[self.pos..];
        // Most of a task's metrics are one digit (mostly 0) before a `,` or `}`.
        if let [digit @ b'0'..=b'9', b',' | b'}', ..] = rest {
            self.pos += 1;
            return Some(i64::from(digit - b'0'));
        }
        let negative = rest.first() == Some(&b'-');
        let start = usize::from(negative);
        let (value, end) = match rest.get(start..start + 16) {
            // Sixteen bytes ahead, as for every integer but those near a line's end: one or two
            // words settle numbers of up to 15 digits (times in milliseconds have 13, CPU times
            // in nanoseconds 8 to 12) without a loop.
            Some(bytes) => {
                let first = word_at(bytes, 0) ^ (ONES * u64::from(b'0'));
                let digits = leading_digits(first);
                if digits < 8 {
                    (leading_value(first, digits), start + digits)
                } else {
                    let second = word_at(bytes, 8) ^ (ONES * u64::from(b'0'));
                    let more = leading_digits(second);
                    if more == 8 {
                        Self::long_integer(rest, start)?
                    } else {
                        let value =
                            eight_digits(first) * POWERS_OF_TEN[more] + leading_value(second, more);
                        (value, start + 8 + more)
                    }
                }
            }
            None => Self::long_integer(rest, start)?,
        };
        let digits = end - start;
        if digits == 0 || (digits > 1 && rest[start] == b'0') {
            return None;
        }
        if let Some(b'.' | b'e' | b'E') = rest.get(end) {
            return None;
        }
        self.pos += end;
        match negative {
            // serde_json reads `-0` as a float.
            true if value == 0 => None,
            true => i64::try_from(value).ok().map(|v| -v),
            false => i64::try_from(value).ok(),
        }
    }

    /// The digits of `rest` from `start` and where they end, eight at a time while eight bytes
    /// remain, then byte by byte: numbers of 16 digits or more, and those near a line's end.
    /// Up to 19 digits cannot overflow a `u64` (whose largest value has 20), so the loop needs
    /// no overflow checks; a longer number is left to serde_json.
    fn long_integer(rest: &[u8], start: usize) -> Option<(u64, usize)> {
        let mut value: u64 = 0;
        let mut end = start;
        let mut stopped = false;
        while let Some(bytes) = rest.get(end..end + 8) {
            let values = word_at(bytes, 0) ^ (ONES * u64::from(b'0'));
            let digits = leading_digits(values);
            if end - start + digits > 19 {
                return None;
            }
            value = value * POWERS_OF_TEN[digits] + leading_value(values, digits);
            end += digits;
            if digits < 8 {
                stopped = true;
                break;
            }
        }
        while let Some(&byte) = rest.get(end).filter(|_| !stopped) {
            let digit = byte.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            if end - start == 19 {
                return None;
            }
            value = value * 10 + u64::from(digit);
            end += 1;
        }
        Some((value, end))
    }

    /// `{ "key": value, ... }`, calling `member` at each key to read the key and its value.
    fn object(&mut self, mut member: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(b'{')?;
        if self.peek()? == b'}' {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.skip_whitespace();
            member(self)?;
            match self.peek()? {
                b',' => self.pos += 1,
                b'}' => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A key and its colon.
    fn key(&mut self) -> Option<&'a [u8]> {
        let key = self.string()?;
        self.eat(b':')?;
        Some(key)
    }

    /// The key `expected` and its colon, written as Spark writes them, if they are next.
    fn eat_key(&mut self, expected: &[u8]) -> bool {
        let n = expected.len();
        let Some(rest) = self.bytes.get(self.pos..self.pos + n + 3) else {
            return false;
        };
        let found = rest[0] == b'"'
            && same_bytes(&rest[1..=n], expected)
            && rest[n + 1] == b'"'
            && rest[n + 2] == b':';
        if found {
            self.pos += n + 3;
        }
        found
    }

    /// An object of a struct whose fields are `keys`: `read` is called with the field's place
    /// in `keys` and the cursor at its value. Unknown keys are read past; a repeated known key
    /// gives up, as it is serde's "duplicate field" error.
    ///
    /// Spark writes keys in one order, so the key after the last one read is tried first, in
    /// place, before the key is scanned and looked up.
    fn members(
        &mut self,
        keys: &[&[u8]],
        mut read: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        let mut seen: u64 = 0;
        let mut next = 0;
        self.object(|c| {
            let place = match keys.get(next) {
                Some(expected) if c.eat_key(expected) => next,
                _ => {
                    let key = c.key()?;
                    match keys
                        .iter()
                        .position(|k| k.len() == key.len() && same_bytes(k, key))
                    {
                        Some(place) => place,
                        None => return c.skip_value(1),
                    }
                }
            };
            if seen & (1 << place) != 0 {
                return None;
            }
            seen |= 1 << place;
            next = place + 1;
            read(c, place)
        })
    }

    /// A string as serde_json reads one into a `Cow<str>` it may borrow: borrowed when it holds
    /// no escapes, else checked as [`Cursor::skip_string`] checks it and unescaped by serde_json
    /// from the string's own bytes.
    pub(super) fn any_text(&mut self) -> Option<Cow<'a, str>> {
        let start = self.pos;
        if let Some(text) = self.text() {
            return Some(Cow::Borrowed(text));
        }
        self.pos = start;
        self.skip_whitespace();
        let start = self.pos;
        self.skip_string()?;
        serde_json::from_slice::<String>(&self.bytes[start..self.pos])
            .ok()
            .map(Cow::Owned)
    }

    /// `null` as `None`, else the value `read` reads, as serde reads an `Option`.
    pub(super) fn optional<T>(
        &mut self,
        read: impl FnOnce(&mut Self) -> Option<T>,
    ) -> Option<Option<T>> {
        if self.peek()? == b'n' {
            return self.eat_literal(b"null").map(|()| None);
        }
        read(self).map(Some)
    }

    /// `[ value, ... ]`, each value read by `item`.
    pub(super) fn array<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Option<T>,
    ) -> Option<Vec<T>> {
        self.eat(b'[')?;
        let mut items = Vec::new();
        if self.peek()? == b']' {
            self.pos += 1;
            return Some(items);
        }
        loop {
            items.push(item(self)?);
            match self.peek()? {
                b',' => self.pos += 1,
                b']' => {
                    self.pos += 1;
                    // Held whole for the application (`vec_to_size` in serde's reading).
                    items.shrink_to_fit();
                    return Some(items);
                }
                _ => return None,
            }
        }
    }

    /// Reads past a string, escapes and all, checking it as serde_json checks a string it reads
    /// past (each escape one of JSON's, `\u` with four hex digits, no control characters) and
    /// for UTF-8, which serde_json checks of the whole line.
    fn skip_string(&mut self) -> Option<()> {
        self.eat(b'"')?;
        let start = self.pos;
        let mut ascii = true;
        loop {
            let rest = self.bytes.get(self.pos..)?;
            let len = match rest.get(..8) {
                Some(word) => match ascii_string_ends(word_at(word, 0)) {
                    0 => {
                        self.pos += 8;
                        continue;
                    }
                    special => special.trailing_zeros() as usize / 8,
                },
                None => rest
                    .iter()
                    .position(|&b| b == b'"' || b == b'\\' || !(0x20..0x80).contains(&b))?,
            };
            self.pos += len;
            match self.bytes[self.pos] {
                b'"' => break,
                b'\\' => {
                    let escape = self.bytes.get(self.pos + 1)?;
                    self.pos += 2;
                    match escape {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            let hex = self.bytes.get(self.pos..self.pos + 4)?;
                            if !hex.iter().all(u8::is_ascii_hexdigit) {
                                return None;
                            }
                            self.pos += 4;
                        }
                        _ => return None,
                    }
                }
                0x80.. => {
                    ascii = false;
                    self.pos += 1;
                }
                _ => return None,
            }
        }
        if !ascii {
            std::str::from_utf8(&self.bytes[start..self.pos]).ok()?;
        }
        self.pos += 1;
        Some(())
    }

    /// Reads past one value of any kind, checking that it is JSON as serde_json would.
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'"' => self.skip_string(),
            b'{' => self.object(|c| {
                c.key()?;
                c.skip_value(depth + 1)
            }),
            b'[' => {
                self.pos += 1;
                if self.pos == self.hole.start {
                    self.pos = self.hole.end;
                }
                if self.peek()? == b']' {
                    self.pos += 1;
                    return Some(());
                }
                loop {
                    self.skip_value(depth + 1)?;
                    match self.peek()? {
                        b',' => self.pos += 1,
                        b']' => {
                            self.pos += 1;
                            return Some(());
                        }
                        _ => return None,
                    }
                }
            }
            b't' => self.eat_literal(b"true"),
            b'f' => self.eat_literal(b"false"),
            b'n' => self.eat_literal(b"null"),
            _ => self.integer().map(drop),
        }
    }
}

/// The high bit of each of eight bytes that is a quote, a backslash, a control character or not
/// ASCII (the classic "has a zero byte" test on the word and on its XOR with the quote and the
/// backslash, and the high bits). Bytes after the first such byte may be flagged wrongly (the
/// subtraction's borrow runs upward), but the lowest flag is always the first such byte.
fn ascii_string_ends(word: u64) -> u64 {
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    let below = |v: u64, n: u64| v.wrapping_sub(ONES * n) & !v & HIGH_BITS;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    below(quote, 1) | below(backslash, 1) | below(word, 0x20) | (word & HIGH_BITS)
}

const ONES: u64 = 0x0101_0101_0101_0101;
const POWERS_OF_TEN: [u64; 9] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
];

/// How many of the eight bytes, from the first, are digits, given the bytes XORed with `'0'`
/// (a digit is then 0 to 9; every other byte has a high nibble or is 10 to 15 and overflows it
/// when 6 is added). A carry out of a byte only reaches later bytes, so the first is exact.
fn leading_digits(values: u64) -> usize {
    let not_digits = (values.wrapping_add(ONES * 6) | values) & (ONES * 0xf0);
    not_digits.trailing_zeros() as usize / 8
}

/// The number written by eight digit values, the first in the lowest byte (leading zeros for
/// fewer digits): pairs, then fours, then all eight combined by multiplication.
fn eight_digits(values: u64) -> u64 {
    let pairs = values.wrapping_mul(10).wrapping_add(values >> 8);
    let low = pairs & 0x0000_00ff_0000_00ff;
    let high = (pairs >> 16) & 0x0000_00ff_0000_00ff;
    low.wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(high.wrapping_mul(1 + (10_000 << 32)))
        >> 32
}

/// The number written by the first `digits` of eight digit values (see [`eight_digits`]).
#[inline(always)]
fn leading_value(values: u64, digits: usize) -> u64 {
    match digits {
        0 => 0,
        _ => eight_digits(values << (8 * (8 - digits))),
    }
}

/// The eight bytes of `bytes` from `at`, as one little-endian word.
#[inline(always)]
fn word_at(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

/// Whether two slices of the same length hold the same bytes. Keys are compared eight bytes at
/// a time, the last word overlapping the one before, because a call to `memcmp` on a key of 5 to
/// 30 bytes cost more than the comparison itself (5% of the parsing threads' time in a profile).
#[inline(always)]
fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    if n < 8 {
        return a.iter().zip(b).all(|(x, y)| x == y);
    }
    let mut at = 0;
    while at + 8 < n {
        if word_at(a, at) != word_at(b, at) {
            return false;
        }
        at += 8;
    }
    word_at(a, n - 8) == word_at(b, n - 8)
}

/// A value the extractor reads exactly as its serde `Deserialize` would.
trait Field<'a>: Sized {
    fn read(cursor: &mut Cursor<'a>) -> Option<Self>;
}

impl<'a> Field<'a> for i64 {
    fn read(cursor: &mut Cursor<'a>) -> Option<Self> {
        cursor.integer()
    }
}

impl<'a> Field<'a> for bool {
    fn read(cursor: &mut Cursor<'a>) -> Option<Self> {
        match cursor.peek()? {
            b't' => cursor.eat_literal(b"true").map(|()| true),
            b'f' => cursor.eat_literal(b"false").map(|()| false),
            _ => None,
        }
    }
}

impl<'a> Field<'a> for Text<'a> {
    fn read(cursor: &mut Cursor<'a>) -> Option<Self> {
        cursor.text().map(Cow::Borrowed)
    }
}

impl<'a, T: Field<'a>> Field<'a> for Option<T> {
    fn read(cursor: &mut Cursor<'a>) -> Option<Self> {
        cursor.optional(T::read)
    }
}

impl<'a> Field<'a> for ExecutorMetrics {
    fn read(cursor: &mut Cursor<'a>) -> Option<Self> {
        static KEYS: LazyLock<Vec<&[u8]>> = LazyLock::new(|| {
            ExecutorMetrics::NAMES
                .iter()
                .map(|n| n.as_bytes())
                .collect()
        });
        let mut value = ExecutorMetrics::default();
        cursor.members(&KEYS, |c, place| {
            *value.metric_mut(place)? = c.integer()?;
            Some(())
        })?;
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::path::{Path, PathBuf};

    use crate::Codec;
    use crate::events::{Event, TaskEnd, TaskStart, parse_line, strip_task_accumulables};

    /// Every line of every log committed under `testdata/logs` (all codecs), decoded.
    pub(super) fn real_lines() -> &'static [Vec<u8>] {
        static LINES: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
        LINES.get_or_init(read_real_lines)
    }

    fn read_real_lines() -> Vec<Vec<u8>> {
        fn walk(dir: &Path, files: &mut Vec<PathBuf>) {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    walk(&path, files);
                } else {
                    files.push(path);
                }
            }
        }
        let mut files = Vec::new();
        walk(
            &Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/logs"),
            &mut files,
        );
        let mut lines = Vec::new();
        for path in files {
            let raw = std::fs::read(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy();
            let Some(codec) = Codec::detect(&raw, &name) else {
                continue;
            };
            let mut text = Vec::new();
            if codec.decoder(&raw[..]).read_to_end(&mut text).is_err() {
                continue;
            }
            lines.extend(text.split(|&b| b == b'\n').map(<[u8]>::to_vec));
        }
        lines
    }

    fn serde_task_end(line: &[u8]) -> Option<String> {
        let mut stripped = line.to_vec();
        let len = strip_task_accumulables(&mut stripped);
        let text = std::str::from_utf8(&stripped[..len]).ok()?;
        serde_json::from_str::<TaskEnd>(text)
            .ok()
            .map(|e| format!("{e:?}"))
    }

    fn fast_task_end(line: &[u8]) -> Option<String> {
        let hole = crate::events::task_accumulables(line);
        super::task_end(line, hole).map(|e| format!("{e:?}"))
    }

    /// A task end line is damaged with its `Accumulables` cut out: the template, which finds
    /// the array itself, reads it as `[]`.
    fn by_template(line: &[u8]) -> Option<String> {
        match super::task_event_by_template(line)? {
            super::TaskEvent::End(e) => Some(format!("{e:?}")),
            super::TaskEvent::Start(e) => Some(format!("{e:?}")),
        }
    }

    fn fast_task_start(line: &[u8]) -> Option<String> {
        super::task_start(std::str::from_utf8(line).ok()?).map(|e| format!("{e:?}"))
    }

    fn serde_task_start(line: &[u8]) -> Option<String> {
        let text = std::str::from_utf8(line).ok()?;
        serde_json::from_str::<TaskStart>(text)
            .ok()
            .map(|e| format!("{e:?}"))
    }

    #[test]
    fn reads_every_real_task_line_as_serde_does() {
        let lines = real_lines();
        let (mut ends, mut starts, mut ends_read, mut starts_read) = (0, 0, 0, 0);
        for line in lines {
            if line.starts_with(br#"{"Event":"SparkListenerTaskEnd""#) {
                ends += 1;
                // Killed applications' logs end in a cut line, which neither may accept.
                let expected = serde_task_end(line);
                if let Some(fast) = fast_task_end(line) {
                    ends_read += 1;
                    assert_eq!(Some(fast), expected);
                }
                let via_line = match parse_line(line) {
                    Ok(Event::TaskEnd(e)) => Some(format!("{e:?}")),
                    _ => None,
                };
                assert_eq!(via_line, expected);
            } else if line.starts_with(br#"{"Event":"SparkListenerTaskStart""#) {
                starts += 1;
                let expected = serde_task_start(line);
                if let Some(fast) = fast_task_start(line) {
                    starts_read += 1;
                    assert_eq!(Some(fast), expected);
                }
            }
        }
        assert!(
            ends > 10_000 && starts > 10_000,
            "{ends} ends, {starts} starts"
        );
        // Only failed tasks (stack traces with escapes) are left to serde_json.
        assert!(
            ends_read * 100 >= ends * 97,
            "{ends_read} of {ends} task ends read"
        );
        assert!(
            starts_read + 3 >= starts,
            "{starts_read} of {starts} task starts read"
        );
    }

    /// What the extractor's `read` and serde_json make of `line`, each as `Debug` text.
    pub(super) fn read_both_ways<'a, T>(
        line: &'a [u8],
        read: impl FnOnce(&'a [u8]) -> Option<T>,
    ) -> (Option<String>, Option<String>)
    where
        T: std::fmt::Debug + serde::Deserialize<'a>,
    {
        let by_serde = std::str::from_utf8(line)
            .ok()
            .and_then(|text| serde_json::from_str::<T>(text).ok());
        (
            read(line).map(|e| format!("{e:?}")),
            by_serde.map(|e| format!("{e:?}")),
        )
    }

    /// JSON's structural and troublesome bytes, put in place of each byte of a line in turn;
    /// `\xc3` begins a two-byte UTF-8 character, so alone or before ASCII it is not UTF-8.
    const DAMAGE: &[u8] = b"\"\\{}[],:0-.e nu\x01\xc3\xff";

    /// `line` cut at every length, then with each byte replaced by each of [`DAMAGE`], each such
    /// line handed to `check`; how many of them `check` accepted.
    pub(super) fn damaged(line: &[u8], mut check: impl FnMut(&[u8]) -> bool) -> usize {
        let mut accepted = 0;
        for len in 0..line.len() {
            accepted += usize::from(check(&line[..len]));
        }
        for i in 0..line.len() {
            for &byte in DAMAGE {
                let mut damaged = line.to_vec();
                damaged[i] = byte;
                accepted += usize::from(check(&damaged));
            }
        }
        accepted
    }

    /// Each byte of real task lines replaced by JSON's structural and troublesome bytes, and each
    /// line cut at every length: whatever the extractor accepts, serde_json accepts as the same.
    #[test]
    fn accepts_nothing_from_damaged_lines_that_serde_would_not() {
        let lines = real_lines();
        let mut samples: Vec<Vec<u8>> = Vec::new();
        let task_end = br#"{"Event":"SparkListenerTaskEnd""#;
        let mut pick = |keep: &dyn Fn(&[u8]) -> bool| {
            let line = lines.iter().find(|l| keep(l)).unwrap();
            // Damage inside the Accumulables array is read by neither: spare the test that time.
            let mut line = line.clone();
            let len = strip_task_accumulables(&mut line);
            line.truncate(len);
            samples.push(line);
        };
        pick(&|l| l.starts_with(br#"{"Event":"SparkListenerTaskStart""#));
        pick(&|l| l.starts_with(task_end) && l.windows(9).any(|w| w == br#""Success""#));
        pick(&|l| l.starts_with(task_end) && !l.windows(9).any(|w| w == br#""Success""#));
        let mut accepted_damage = 0;
        let accepted_by_template = std::cell::Cell::new(0);
        for line in &samples {
            let is_end = line.starts_with(br#"{"Event":"SparkListenerTaskEnd""#);
            let check = |damaged: &[u8]| {
                let (fast, serde) = if is_end {
                    (fast_task_end(damaged), serde_task_end(damaged))
                } else {
                    (fast_task_start(damaged), serde_task_start(damaged))
                };
                if fast.is_some() {
                    assert_eq!(fast, serde, "{}", String::from_utf8_lossy(damaged));
                }
                let by_template = by_template(damaged);
                if by_template.is_some() {
                    assert_eq!(by_template, serde, "{}", String::from_utf8_lossy(damaged));
                    accepted_by_template.set(accepted_by_template.get() + 1);
                }
                fast.is_some()
            };
            accepted_damage += damaged(line, &check);
            for i in 0..line.len() {
                let mut inserted = line.clone();
                inserted.insert(i, b' ');
                check(&inserted);
            }
        }
        // Some damage is still JSON (a digit for a digit): the comparison above was exercised.
        assert!(accepted_damage > 100);
        assert!(accepted_by_template.get() > 100);
    }

    /// The first byte that may end a string is found exactly, whatever follows it.
    #[test]
    fn finds_the_first_byte_that_may_end_a_string() {
        let specials: Vec<u8> = (0..0x20).chain([b'"', b'\\']).chain(0x80..=0xff).collect();
        for &special in &specials {
            for place in 0..8 {
                for &after in specials.iter().chain(b"a\"") {
                    let mut word = *b"abcdefgh";
                    word[place] = special;
                    word[(place + 1).min(7)..].fill(if place == 7 { special } else { after });
                    let flags = super::ascii_string_ends(u64::from_le_bytes(word));
                    assert_eq!(flags.trailing_zeros() as usize / 8, place, "{word:?}");
                }
            }
        }
        for text in [*b"Task ID ", *b"~ !#[]{}"] {
            assert_eq!(super::ascii_string_ends(u64::from_le_bytes(text)), 0);
        }
    }

    /// Integers of every length, with every byte after them, read as serde_json reads them
    /// into an `i64` wherever the eight-byte steps fall, or given up.
    #[test]
    fn reads_integers_as_serde_does() {
        let mut numbers: Vec<String> = vec!["0".into(), "-0".into(), "00".into(), "-".into()];
        for digits in 1..=21 {
            let nines = "9".repeat(digits);
            let mixed: String = (0..digits)
                .map(|i| char::from(b'1' + (i * 7 % 9) as u8))
                .collect();
            numbers.extend([
                nines.clone(),
                format!("-{nines}"),
                mixed.clone(),
                format!("0{mixed}"),
            ]);
            numbers.push(format!("1{}", "0".repeat(digits - 1)));
        }
        numbers.extend(
            [
                "9223372036854775807",
                "9223372036854775808",
                "-9223372036854775808",
            ]
            .map(String::from),
        );
        let mut read = 0;
        for number in &numbers {
            for after in ["", ",", "}", ".5", "e3", "E3", "x", " ", ",\"a\":1}"] {
                for pad in 0..9 {
                    let text = format!("{number}{after}{}", " ".repeat(pad));
                    let mut cursor = super::Cursor::new(text.as_bytes(), None);
                    let fast = cursor.integer();
                    let end = text.len() - after.len() - pad;
                    let serde = serde_json::from_str::<i64>(&text[..end])
                        .ok()
                        .filter(|_| !text[..end].contains(['.', 'e', 'E']) && &text[..end] != "-0");
                    let expected = match after.as_bytes().first() {
                        Some(b'.' | b'e' | b'E') => None,
                        _ => serde,
                    };
                    // i64::MIN is given up (its magnitude is no i64), which is allowed.
                    if !(fast.is_none() && number == "-9223372036854775808") {
                        assert_eq!(fast, expected, "{text:?}");
                    }
                    if fast.is_some() {
                        assert_eq!(cursor.pos, end, "{text:?}");
                        read += 1;
                    }
                }
            }
        }
        assert!(read > 1000, "{read}");
    }

    #[test]
    fn compares_keys_of_every_length_as_memcmp_does() {
        let key = b"Remote Bytes Read To Disk Remote Bytes";
        for len in 0..key.len() {
            let a = &key[..len];
            assert!(super::same_bytes(a, a));
            assert!(!super::same_bytes(a, &key[..len.saturating_sub(1)]) || len == 0);
            for at in 0..len {
                let mut b = a.to_vec();
                b[at] ^= 0x20;
                assert!(!super::same_bytes(a, &b), "{len} {at}");
            }
        }
    }

    /// Non-ASCII text in a string is read when it is UTF-8 and given up when it is not, wherever
    /// it falls in the eight-byte words of the scan.
    #[test]
    fn reads_utf8_strings_and_gives_up_on_invalid_bytes() {
        for pad in 0..9 {
            let host = format!("{}h\u{e9}te", "x".repeat(pad));
            let line = format!(
                r#"{{"Event":"SparkListenerTaskEnd","Stage ID":1,"Task End Reason":{{"Reason":"Success"}},"Task Info":{{"Host":"{host}"}}}}"#
            );
            let read = fast_task_end(line.as_bytes());
            assert_eq!(read, serde_task_end(line.as_bytes()));
            assert!(read.unwrap().contains(&host));
            let mut bad = line.into_bytes();
            let at = bad
                .windows(2)
                .position(|w| w == "\u{e9}".as_bytes())
                .unwrap();
            bad[at + 1] = b'x';
            assert_eq!(fast_task_end(&bad), None);
            assert_eq!(serde_task_end(&bad), None);
        }
    }

    /// Text that looks like the task's `Accumulables` before the task's own array: the general
    /// reading cuts the first one out, so the template must leave such a line to it.
    #[test]
    fn leaves_lines_with_an_earlier_accumulables_key_to_the_general_reading() {
        let line = br#"{"Event":"SparkListenerTaskEnd","Stage ID":1,"Task End Reason":{"Reason":"TaskKilled","Accumulator Updates":[{"Accumulables":[1]}]},"Task Info":{"Task ID":2,"Accumulables":[]},"Task Metrics":{"JVM GC Time":5}}"#;
        assert!(super::task_event_by_template(line).is_none());
        let in_type = br#"{"Event":"SparkListenerTaskEnd","Stage ID":1,"Task Type":{"Accumulables":[1]},"Task End Reason":{"Reason":"Success"},"Task Info":{"Task ID":2,"Accumulables":[]}}"#;
        assert!(super::task_event_by_template(in_type).is_none());
        let plain = br#"{"Event":"SparkListenerTaskEnd","Stage ID":1,"Task End Reason":{"Reason":"TaskKilled","Kill Reason":"another attempt succeeded"},"Task Info":{"Task ID":2,"Accumulables":[{"ID":1}]},"Task Metrics":{"JVM GC Time":5}}"#;
        assert_eq!(by_template(plain), serde_task_end(plain));
        assert!(by_template(plain).is_some());
    }

    #[test]
    fn gives_up_where_serde_reads_differently() {
        let cases: &[&[u8]] = &[
            br#"{"Event":"SparkListenerTaskStart","Stage ID":-0,"Task Info":{}}"#,
            br#"{"Event":"SparkListenerTaskStart","Stage ID":1.0,"Task Info":{}}"#,
            br#"{"Event":"SparkListenerTaskStart","Stage ID":01,"Task Info":{}}"#,
            br#"{"Event":"SparkListenerTaskStart","Stage ID":9223372036854775808,"Task Info":{}}"#,
            br#"{"Event":"SparkListenerTaskStart","Stage ID":1,"Stage ID":1,"Task Info":{}}"#,
            br#"{"Event":"SparkListenerTaskStart","Stage ID":1,"Task Info":{"Host":"a\"b"}}"#,
            br#"{"Event":"SparkListenerTaskStart","Stage ID":1,"Task Info":{"Index":1,"Index":2}}"#,
            br#"{"Event":"SparkListenerTaskStart","Stage ID":1,"Task Info":{"Index":null}}"#,
            br#"{"Event":"SparkListenerTaskStart","Stage ID":1,"Task Info":{},}"#,
            br#"{"Event":"SparkListenerTaskStart","Stage ID":1,"Task Info":{}} x"#,
            br#"{"Event":"SparkListenerTaskStart","Task Info":{}}"#,
        ];
        for case in cases {
            assert_eq!(
                fast_task_start(case),
                None,
                "{}",
                String::from_utf8_lossy(case)
            );
        }
        let fine = br#" { "Event" : "SparkListenerTaskStart" , "Stage ID" : -3 , "X" : [ { } , [ ] , null , true , 1 ] , "Task Info" : { "Partition ID" : null , "Host" : "h" } } "#;
        assert_eq!(fast_task_start(fine), serde_task_start(fine));
        assert!(fast_task_start(fine).is_some());
    }
}
