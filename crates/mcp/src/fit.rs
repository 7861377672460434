//! The size cap on every answer: an assistant's context is small, and a log's stages, tasks or
//! plan nodes can run to megabytes. Each tool already pages or takes the top N; this is the
//! last guard, which cuts whatever is still too large and says what it cut.

use serde_json::Value;

/// The largest text any response carries (a tool's answer, a resource, a prompt).
pub const MAX_TEXT_BYTES: usize = 64 * 1024;

/// Room kept for the notes of what was cut.
const NOTES_ROOM: usize = 4 * 1024;

/// `value` as compact JSON of at most `cap` bytes. Until it fits, the largest array (by its
/// JSON size) loses its second half, or, when no array has two elements left, the longest
/// string is cut in half; each cut is noted in the answer's `omitted` list (`path: kept K of
/// N`), so the reader knows the answer is partial and which argument (`top`, `limit`,
/// `offset`) gets the rest.
pub fn fit(mut value: Value, cap: usize) -> String {
    let mut notes: Vec<(String, usize, usize)> = Vec::new();
    for _ in 0..256 {
        let text = serde_json::to_string(&value).unwrap_or_default();
        if text.len() <= cap {
            return text;
        }
        let excess = text.len() - cap.saturating_sub(NOTES_ROOM).min(text.len());
        if !cut_once(&mut value, &mut notes, excess) {
            break;
        }
        if let Value::Object(map) = &mut value {
            let mut omitted: Vec<Value> = match map.remove("omitted") {
                Some(Value::Array(items)) => items
                    .into_iter()
                    .filter(|v| !v.as_str().is_some_and(|s| s.starts_with("size cap: ")))
                    .collect(),
                _ => Vec::new(),
            };
            for (path, kept, of) in &notes {
                omitted.push(Value::String(format!(
                    "size cap: {path}: kept {kept} of {of} (answers are capped at {} KiB; narrow the question or page with offset/top)",
                    cap / 1024
                )));
            }
            map.insert("omitted".into(), Value::Array(omitted));
        }
    }
    serde_json::json!({
        "error": format!("the answer does not fit in {} KiB even when cut; ask for less", cap / 1024)
    })
    .to_string()
}

fn json_len(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// The largest cuttable node: (JSON size, path, is an array).
fn largest(value: &Value, path: &str, best: &mut Option<(usize, String, bool)>) {
    match value {
        Value::Array(items) => {
            if items.len() >= 2 {
                let len = json_len(value);
                if best.as_ref().is_none_or(|b| len > b.0) {
                    *best = Some((len, path.to_string(), true));
                }
            }
            for (i, item) in items.iter().enumerate() {
                largest(item, &format!("{path}[{i}]"), best);
            }
        }
        Value::Object(map) => {
            for (key, item) in map {
                if key == "omitted" {
                    continue;
                }
                let child = if path.is_empty() {
                    key.clone()
                } else {
                    format!("{path}.{key}")
                };
                largest(item, &child, best);
            }
        }
        // A long string is cut only when it is larger than every array.
        Value::String(s) if s.len() > 256 && best.as_ref().is_none_or(|b| s.len() > b.0) => {
            *best = Some((s.len(), path.to_string(), false));
        }
        _ => {}
    }
}

fn node_at<'a>(value: &'a mut Value, path: &str) -> Option<&'a mut Value> {
    let mut node = value;
    for part in split_path(path) {
        node = match part {
            Part::Key(k) => node.get_mut(k)?,
            Part::Index(i) => node.get_mut(i)?,
        };
    }
    Some(node)
}

enum Part<'a> {
    Key(&'a str),
    Index(usize),
}

fn split_path(path: &str) -> Vec<Part<'_>> {
    let mut parts = Vec::new();
    for segment in path.split('.').filter(|s| !s.is_empty()) {
        let (key, rest) = match segment.find('[') {
            Some(at) => (&segment[..at], &segment[at..]),
            None => (segment, ""),
        };
        if !key.is_empty() {
            parts.push(Part::Key(key));
        }
        for index in rest.split('[').filter(|s| !s.is_empty()) {
            if let Ok(i) = index.trim_end_matches(']').parse() {
                parts.push(Part::Index(i));
            }
        }
    }
    parts
}

fn cut_once(value: &mut Value, notes: &mut Vec<(String, usize, usize)>, excess: usize) -> bool {
    let mut best = None;
    largest(value, "", &mut best);
    let Some((size, path, is_array)) = best else {
        return false;
    };
    let Some(node) = node_at(value, &path) else {
        return false;
    };
    match node {
        Value::Array(items) if is_array => {
            let of = notes
                .iter()
                .find(|n| n.0 == path)
                .map(|n| n.2)
                .unwrap_or(items.len());
            // Keep the share of the array that would fit, at most half, at least one.
            let keep = (items.len() * size.saturating_sub(excess) / size.max(1))
                .min(items.len() / 2)
                .max(1);
            items.truncate(keep);
            match notes.iter_mut().find(|n| n.0 == path) {
                Some(note) => note.1 = keep,
                None => notes.push((path, keep, of)),
            }
            true
        }
        Value::String(s) => {
            let mut at = s.len() / 2;
            while !s.is_char_boundary(at) {
                at -= 1;
            }
            let cut = s.len() - at;
            s.truncate(at);
            s.push_str(&format!(" … [{cut} more bytes cut by the size cap]"));
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_large_array_is_cut_and_the_cut_is_noted() {
        let rows: Vec<Value> = (0..10_000)
            .map(|i| serde_json::json!({"stage_id": i, "name": "count at Etl.scala:31"}))
            .collect();
        let text = fit(
            serde_json::json!({"stages": rows, "total": 10_000}),
            16 * 1024,
        );
        assert!(text.len() <= 16 * 1024, "{}", text.len());
        let back: Value = serde_json::from_str(&text).unwrap();
        let kept = back["stages"].as_array().unwrap().len();
        assert!(kept > 10 && kept < 10_000);
        assert_eq!(back["stages"][0]["stage_id"], 0, "the first rows are kept");
        let note = back["omitted"][0].as_str().unwrap();
        assert!(
            note.contains(&format!("stages: kept {kept} of 10000")),
            "{note}"
        );
    }

    #[test]
    fn a_long_string_is_cut_on_a_character_boundary() {
        let text = fit(serde_json::json!({"message": "é".repeat(50_000)}), 8 * 1024);
        assert!(text.len() <= 8 * 1024);
        let back: Value = serde_json::from_str(&text).unwrap();
        assert!(
            back["message"]
                .as_str()
                .unwrap()
                .contains("cut by the size cap")
        );
    }

    #[test]
    fn a_small_answer_is_untouched() {
        let value = serde_json::json!({"a": [1, 2, 3]});
        assert_eq!(fit(value.clone(), 1024), value.to_string());
    }
}
