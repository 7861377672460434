//! Axes a person reads at a glance, and labels that say where a stage came from.
//!
//! plotters picks tick positions by itself and formats them with whatever precision the label
//! formatter gives, so a 0.5 s axis read "0.0 0.1 0.1 0.2 0.2" and a spill axis "19.1 MiB
//! 38.1 MiB 57.2 MiB". [`Axis`] chooses the ticks here instead: steps of 1, 2 or 5 × 10^n of the
//! unit (seconds, or the largest binary byte unit that fits), each label printed with just
//! enough decimals for its step, so no two read the same.

use crate::format::human_bytes;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::prelude::Ranged;

/// What an axis measures, which decides its round steps and how a tick reads.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Unit {
    Seconds,
    Bytes,
    Percent,
    Count,
}

/// A continuous axis (linear or logarithmic) with round ticks chosen here.
#[derive(Clone)]
pub(super) struct Axis {
    lo: f64,
    hi: f64,
    log: bool,
    unit: Unit,
    /// Bytes per label unit (1024^k), for byte axes; 1 otherwise.
    scale: f64,
    /// Decimals every label of this axis is printed with.
    decimals: usize,
    ticks: Vec<f64>,
}

const BYTE_UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];

/// The smallest step of 1, 2 or 5 × 10^n that cuts `span` into at most `target` pieces.
pub(crate) fn round_step(span: f64, target: usize) -> f64 {
    let raw = (span / target.max(1) as f64).max(f64::MIN_POSITIVE);
    let magnitude = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * magnitude)
        .find(|&step| step >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
}

/// Decimals that print every multiple of `step` exactly enough to tell neighbours apart.
fn decimals_for(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().max(0.0) as usize
    }
}

impl Axis {
    /// `lo..hi` cut into at most about `target` round steps; the top is raised to the next
    /// tick so the end of the axis is labelled too.
    pub(super) fn linear(lo: f64, hi: f64, target: usize, unit: Unit) -> Axis {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        let scale = match unit {
            Unit::Bytes => byte_scale(hi.max(lo.abs())),
            _ => 1.0,
        };
        let mut step = round_step((hi - lo) / scale, target) * scale;
        if matches!(unit, Unit::Bytes | Unit::Count) {
            // Bytes and task slots come whole.
            step = step.max(1.0);
        }
        let decimals = decimals_for(step / scale);
        let first = (lo / step).floor() as i64;
        let last = (hi / step - 1e-9).ceil() as i64;
        let ticks: Vec<f64> = (first..=last).map(|k| k as f64 * step).collect();
        Axis {
            lo: first as f64 * step,
            hi: last as f64 * step,
            log: false,
            unit,
            scale,
            decimals,
            ticks,
        }
    }

    /// A logarithmic byte axis over `lo..hi` (both above zero), ticked at 1, 10 and 100 of
    /// each binary unit, or only at the units when that would crowd the axis.
    pub(super) fn log_bytes(lo: f64, hi: f64) -> Axis {
        let (lo, hi) = (lo.max(1.0), hi.max(lo.max(1.0) * 2.0));
        let candidates = |decades: &[f64]| -> Vec<f64> {
            (0..BYTE_UNITS.len())
                .flat_map(|k| decades.iter().map(move |d| 1024f64.powi(k as i32) * d))
                .filter(|v| *v >= lo && *v <= hi)
                .collect()
        };
        let mut ticks = candidates(&[1.0, 10.0, 100.0]);
        if ticks.len() > 8 {
            ticks = candidates(&[1.0]);
        }
        Axis {
            lo,
            hi,
            log: true,
            unit: Unit::Bytes,
            scale: 0.0,
            decimals: 0,
            ticks,
        }
    }

    pub(super) fn top(&self) -> f64 {
        self.hi
    }

    /// How the tick at `v` reads.
    pub(super) fn label(&self, v: f64) -> String {
        let d = self.decimals;
        match self.unit {
            // A log axis spans units, so each tick names its own.
            Unit::Bytes if self.log => human_round_bytes(v),
            Unit::Bytes if v == 0.0 => "0".into(),
            Unit::Bytes => format!("{:.d$} {}", v / self.scale, unit_name(self.scale)),
            Unit::Percent => format!("{v:.d$}%"),
            Unit::Seconds | Unit::Count => format!("{v:.d$}"),
        }
    }

    /// How the tick at `v` reads on a drawing that is `narrow`, where only every other tick
    /// (the first included) is labelled, so labels as wide as `10.0 GiB` do not run together.
    pub(super) fn tick_label(&self, v: f64, narrow: bool) -> String {
        let index = self
            .ticks
            .iter()
            .position(|t| (t - v).abs() <= f64::EPSILON * t.abs().max(1.0));
        match index {
            Some(i) if narrow && i % 2 == 1 => String::new(),
            _ => self.label(v),
        }
    }

    /// Every tick's label, in order: what the chart prints along this axis.
    pub(super) fn labels(&self) -> Vec<String> {
        self.ticks.iter().map(|&v| self.label(v)).collect()
    }
}

/// The largest binary unit (1024^k bytes) that `max` reaches, so labels stay short.
fn byte_scale(max: f64) -> f64 {
    let mut scale = 1.0;
    while scale * 1024.0 <= max && scale < 1024f64.powi(4) {
        scale *= 1024.0;
    }
    scale
}

fn unit_name(scale: f64) -> &'static str {
    let k = scale.log(1024.0).round() as usize;
    BYTE_UNITS[k.min(BYTE_UNITS.len() - 1)]
}

/// A tick of a log byte axis, which is always a whole number of some unit.
fn human_round_bytes(v: f64) -> String {
    let scale = byte_scale(v);
    let n = v / scale;
    if (n - n.round()).abs() < 1e-6 {
        format!("{:.0} {}", n, unit_name(scale))
    } else {
        human_bytes(v as i64)
    }
}

impl Ranged for Axis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let fraction = if self.log {
            (value.max(self.lo).ln() - self.lo.ln()) / (self.hi.ln() - self.lo.ln())
        } else {
            (value - self.lo) / (self.hi - self.lo)
        };
        limit.0 + (fraction * f64::from(limit.1 - limit.0)).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        super::bold_only(hint, &self.ticks)
    }

    fn range(&self) -> std::ops::Range<f64> {
        self.lo..self.hi
    }
}

/// `"<stage>.<attempt> <name>"`, the name shortened to about `max` characters as
/// [`short_name`] does.
pub(super) fn stage_label(stage_id: i64, attempt_id: i64, name: &str, max: usize) -> String {
    format!("{stage_id}.{attempt_id} {}", short_name(name, max))
}

/// A stage name ("collect at /home/me/jobs/etl/daily.py:42") shortened to about `max`
/// characters so that the call site's `file:line` survives: the folders go first ("…/"),
/// then the words of the operation, whole words at a time. Never cuts inside a word or the
/// `file:line`; a name with no call site is cut after its last whole word that fits.
pub(crate) fn short_name(name: &str, max: usize) -> String {
    let line = name.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= max {
        return line.to_string();
    }
    let Some(at) = line.rfind(" at ") else {
        return cut_words(line, max).unwrap_or_else(|| super::truncate(line, max));
    };
    let (op, place) = (&line[..at], &line[at + 4..]);
    // As many of the innermost folders as fit beside the whole operation, at least none.
    let folders: Vec<&str> = place.split(['/', '\\']).collect();
    let file = folders.len() - 1;
    let tail_from = |k: usize| {
        if k == 0 {
            format!(" at {place}")
        } else {
            format!(" at …/{}", folders[k..].join("/"))
        }
    };
    let fits = |k: usize| op.chars().count() + tail_from(k).chars().count() <= max;
    let keep = (1..=file).find(|&k| fits(k)).unwrap_or(file);
    let tail = if file == 0 {
        tail_from(0)
    } else {
        tail_from(keep)
    };
    let room = max.saturating_sub(tail.chars().count());
    if op.chars().count() <= room {
        return format!("{op}{tail}");
    }
    // When not even the first word of the operation fits, an ellipsis stands for it.
    let op = cut_words(op, room).unwrap_or_else(|| "…".to_string());
    format!("{op}{tail}")
}

/// `text` cut after the last whole word that fits in `max` characters with an ellipsis, or
/// `None` when not even the first word fits.
fn cut_words(text: &str, max: usize) -> Option<String> {
    if text.chars().count() <= max {
        return Some(text.to_string());
    }
    let room = max.saturating_sub(1);
    let head: String = text.chars().take(room).collect();
    // A cut right before a space still ends a word.
    let next_is_break = text.chars().nth(room).is_some_and(char::is_whitespace);
    let kept = if next_is_break {
        head.trim_end()
    } else {
        head[..head.rfind(char::is_whitespace)?].trim_end()
    };
    (!kept.is_empty()).then(|| format!("{kept}…"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unique(labels: &[String]) -> bool {
        let mut seen = labels.to_vec();
        seen.sort();
        seen.dedup();
        seen.len() == labels.len()
    }

    #[test]
    fn steps_are_one_two_or_five_times_a_power_of_ten() {
        assert_eq!(round_step(0.5, 10), 0.05);
        assert_eq!(round_step(17.0, 10), 2.0);
        assert_eq!(round_step(430.0, 8), 100.0);
        assert_eq!(round_step(1.0, 10), 0.1);
    }

    #[test]
    fn a_short_time_axis_has_round_distinct_labels() {
        // The failed log's task durations: 0.28 s at most, once labelled 0.0 0.1 0.1 0.2 0.2.
        for top in [0.28, 0.5, 0.9, 3.3, 17.0, 95.0, 1234.0] {
            let axis = Axis::linear(0.0, top, 10, Unit::Seconds);
            let labels = axis.labels();
            assert!(unique(&labels), "{top}: {labels:?}");
            assert!(axis.top() >= top, "{top}: the data fits");
            assert!(labels.len() >= 3 && labels.len() <= 12, "{top}: {labels:?}");
        }
        assert_eq!(
            Axis::linear(0.0, 0.28, 10, Unit::Seconds).labels(),
            ["0.00", "0.05", "0.10", "0.15", "0.20", "0.25", "0.30"]
        );
    }

    #[test]
    fn byte_ticks_are_round_in_the_largest_unit() {
        // 60 MB of spill once read 19.1 / 38.1 / 57.2 MiB.
        let axis = Axis::linear(0.0, 60_000_000.0, 6, Unit::Bytes);
        assert_eq!(
            axis.labels(),
            [
                "0", "10 MiB", "20 MiB", "30 MiB", "40 MiB", "50 MiB", "60 MiB"
            ]
        );
        let gib = Axis::linear(0.0, 1.6 * 1024f64.powi(3), 8, Unit::Bytes).labels();
        assert!(
            unique(&gib) && gib.iter().skip(1).all(|l| l.ends_with(" GiB")),
            "{gib:?}"
        );
        let log = Axis::log_bytes(3000.0, 3e9).labels();
        assert!(
            unique(&log) && log.contains(&"1 MiB".to_string()),
            "{log:?}"
        );
        assert!(log.iter().all(|l| !l.contains('.')), "{log:?}");
    }

    #[test]
    fn stage_names_keep_their_file_and_line() {
        let name = "collect at /tmp/spark-gen/testdata/gen/patterns/failed_job.py:57";
        assert_eq!(short_name(name, 30), "collect at …/failed_job.py:57");
        // Inner folders stay while they fit.
        assert_eq!(
            short_name(name, 45),
            "collect at …/gen/patterns/failed_job.py:57"
        );
        // The operation gives way before the call site does, a whole word at a time.
        assert_eq!(
            short_name("showString at NativeMethodAccessorImpl.java:0", 30),
            "… at NativeMethodAccessorImpl.java:0"
        );
        assert_eq!(
            short_name("count distinct rows at /home/me/etl/daily.py:120", 33),
            "count distinct… at …/daily.py:120"
        );
        assert_eq!(short_name("short at x.py:1", 30), "short at x.py:1");
        assert_eq!(
            cut_words("mapPartitions over many rows", 18).as_deref(),
            Some("mapPartitions…")
        );
        assert_eq!(cut_words("mapPartitions", 5), None);
        assert_eq!(short_name("mapPartitionsWithIndex", 8), "mapPart…");
    }
}
