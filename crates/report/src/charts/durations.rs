//! The task durations of the stages worth looking at, one dot per task: the stages the top
//! finding names first, then failed stages, then those whose slowest task ran longest past
//! the median.

use super::*;
use crate::{SortedMs, StageTasks};

pub(super) struct Strip {
    pub(super) stage_id: i64,
    pub(super) label: String,
    /// Successful task durations in seconds, sorted.
    durations: Vec<f64>,
    /// Durations of the tasks that failed, in seconds, sorted.
    failed: Vec<f64>,
    /// Named by the focus finding (or failed, when no finding names a stage).
    pub(super) marked: bool,
    /// The stage attempt failed.
    stage_failed: bool,
    /// How far the slowest successful task ran past the median, in seconds: what a skew looks
    /// like.
    excess: f64,
}

impl Strip {
    /// A quantile of the successful durations; `None` when no task succeeded.
    fn quantile(&self, q: f64) -> Option<f64> {
        Some(self.durations[quantile_index(self.durations.len(), q)?])
    }

    fn longest(&self) -> f64 {
        let ok = self.durations.last().copied().unwrap_or(0.0);
        ok.max(self.failed.last().copied().unwrap_or(0.0))
    }
}

/// Where quantile `q` of `len` sorted values is, as the strip draws it; `None` without values.
fn quantile_index(len: usize, q: f64) -> Option<usize> {
    let last = len.checked_sub(1)?;
    Some((last as f64 * q).round() as usize)
}

/// How far the slowest of `ms` ran past their median, in seconds (what a skew looks like), read
/// without unpacking them all: every stage is ranked, a few are drawn.
fn excess_s(ms: &SortedMs) -> f64 {
    let Some(middle) = quantile_index(ms.len(), 0.5) else {
        return 0.0;
    };
    let (mut median, mut max) = (0, 0);
    for (i, d) in ms.iter().enumerate() {
        if i == middle {
            median = d;
        }
        max = d;
    }
    f64::from(max) / 1000.0 - f64::from(median) / 1000.0
}

/// Rows of the chart at least, and at most when the focus and failed stages need more.
const STRIPS: usize = 3;
const MAX_STRIPS: usize = 5;
/// Successful tasks a stage needs for its box (quartiles and median) to be drawn.
const MIN_BOX_TASKS: usize = 5;

/// The stage attempts to draw, in order: those the focus names, those that failed, then the
/// ones whose slowest successful task ran longest past the median (where a skewed or
/// straggling task held the stage open).
pub(super) fn chosen_stages(
    report: &Report,
    view: &ViewData,
    focus: &Focus,
    names: &StageNames,
) -> Vec<Strip> {
    let seconds =
        |ms: &SortedMs| -> Vec<f64> { ms.iter().map(|ms| f64::from(ms) / 1000.0).collect() };
    // Ranked with their durations still packed; only the kept ones are unpacked.
    let mut strips: Vec<(Strip, &StageTasks)> = report
        .stages
        .iter()
        .zip(&view.stages)
        .filter_map(|(s, tasks)| {
            debug_assert_eq!(
                (s.stage_id, s.attempt_id),
                (tasks.stage_id, tasks.attempt_id)
            );
            if tasks.succeeded_ms.is_empty() && tasks.failed_ms.is_empty() {
                return None;
            }
            let strip = Strip {
                stage_id: s.stage_id,
                label: names.label(s.stage_id, s.attempt_id, &s.name),
                durations: Vec::new(),
                failed: Vec::new(),
                marked: focus.stage_ids.contains(&s.stage_id),
                stage_failed: s.status == StageStatus::Failed,
                excess: excess_s(&tasks.succeeded_ms),
            };
            Some((strip, tasks))
        })
        .collect();
    // Focus first (in the order the finding names its stages), then failed stages, then by excess; a stage whose tasks all took the same time says nothing about
    // skew, so it is kept only to fill an otherwise empty chart.
    let rank = |s: &Strip| {
        focus
            .stage_ids
            .iter()
            .position(|&id| id == s.stage_id && s.marked)
            .unwrap_or(usize::MAX)
    };
    strips.sort_by(|(a, _), (b, _)| {
        rank(a)
            .cmp(&rank(b))
            .then(b.stage_failed.cmp(&a.stage_failed))
            .then(b.excess.total_cmp(&a.excess))
    });
    let primary = strips
        .iter()
        .take_while(|(s, _)| s.marked || s.stage_failed)
        .count();
    let keep = primary.clamp(STRIPS, MAX_STRIPS);
    let mut kept: Vec<Strip> = Vec::new();
    for (i, (mut s, tasks)) in strips.into_iter().enumerate() {
        if kept.len() == keep {
            break;
        }
        if i >= primary && s.excess <= 0.0 && !kept.is_empty() {
            continue;
        }
        s.durations = seconds(&tasks.succeeded_ms);
        s.failed = seconds(&tasks.failed_ms);
        kept.push(s);
    }
    kept
}

pub(super) fn task_durations(
    report: &Report,
    view: &ViewData,
    focus: &Focus,
    names: &StageNames,
) -> Chart {
    let mut chart = Chart::empty("task-durations", "Task durations of the worst stages");
    let strips = chosen_stages(report, view, focus, names);
    if strips.is_empty() {
        chart.caption = "No task finished: there are no durations to compare.".into();
        return chart;
    }
    let summaries: Vec<String> = strips
        .iter()
        .map(|s| {
            let id = s.label.split(' ').next().unwrap_or_default();
            let ok = match (s.quantile(0.0), s.quantile(0.5), s.quantile(1.0)) {
                // Too few tasks for a median to mean much: their range says it all.
                (Some(min), _, Some(max)) if s.durations.len() < MIN_BOX_TASKS => format!(
                    "{} task{} of {} to {}",
                    s.durations.len(),
                    if s.durations.len() == 1 { "" } else { "s" },
                    duration((min * 1000.0) as i64),
                    duration((max * 1000.0) as i64),
                ),
                (_, Some(median), Some(max)) => format!(
                    "{} tasks, median {}, max {}{}",
                    s.durations.len(),
                    duration((median * 1000.0) as i64),
                    duration((max * 1000.0) as i64),
                    if median > 0.0 {
                        format!(" ({:.1}× the median)", max / median)
                    } else {
                        String::new()
                    }
                ),
                _ => "no task succeeded".into(),
            };
            let failed = match s.failed.len() {
                0 => String::new(),
                n => format!(", {n} failed"),
            };
            format!("Stage {id}: {ok}{failed}")
        })
        .collect();
    let marked = strips.iter().any(|s| s.marked);
    chart.caption = format!(
        "Every finished task of the stages worth a look, one dot per task (red crosses \
         failed); the box spans the middle half of the successful tasks (of stages with at \
         least {MIN_BOX_TASKS}), the line is their median. A lone dot far right is a skewed or \
         straggling task.{} {}.",
        if marked {
            format!(" First, shaded: {}.", focus.describe())
        } else {
            " The stages shown are those whose slowest task ran longest past the median.".into()
        },
        summaries.join(". ")
    );
    // Headroom, so the slowest task's dot is not cut by the edge when it falls on a tick.
    let top = strips.iter().map(Strip::longest).fold(0.001f64, f64::max) * 1.04;
    chart.drawn(Plot::Strips(Strips {
        strips,
        x: Axis::linear(0.0, top, 10, Unit::Seconds),
        tag: focus.tag(),
    }))
}

/// The task durations of the chosen stages, in seconds.
pub(super) struct Strips {
    pub(super) strips: Vec<Strip>,
    pub(super) x: Axis,
    tag: String,
}

impl Strips {
    pub(super) fn height(&self) -> u32 {
        140 + 95 * self.strips.len() as u32
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Strips { strips, x, tag } = self;
        let (top, k) = (x.top(), strips.len());
        let mut c = rows_chart(
            root,
            x,
            RowsLayout {
                caption: "Task durations of the worst stages",
                x_desc: "task duration (seconds)",
                y_desc: "stage.attempt",
                labels: strips.iter().map(|s| s.label.as_str()).collect(),
                label_width: label_area(strips.iter().map(|s| s.label.as_str())),
                visible: k,
                top_room: 0,
            },
        )?;
        for (i, s) in strips.iter().enumerate() {
            let y = (k - 1 - i) as f64;
            if s.marked {
                c.draw_series([Rectangle::new(
                    [(0.0, y + 0.04), (top, y + 0.96)],
                    AMBER.mix(0.12).filled(),
                )])?;
                c.draw_series([Text::new(
                    format!("{tag} "),
                    (top, y + 0.93),
                    (FONT, 12)
                        .into_font()
                        .color(&INK)
                        .pos(Pos::new(HPos::Right, VPos::Top)),
                )])?;
            }
            // A box needs enough tasks to have a middle half; fewer are only dots.
            if let (true, Some(q1), Some(q2), Some(q3)) = (
                s.durations.len() >= MIN_BOX_TASKS,
                s.quantile(0.25),
                s.quantile(0.5),
                s.quantile(0.75),
            ) {
                c.draw_series([Rectangle::new(
                    [(q1, y + 0.22), (q3.max(q1 + top * 0.002), y + 0.78)],
                    BLUE_.mix(0.12).filled(),
                )])?;
                c.draw_series([Rectangle::new(
                    [(q1, y + 0.22), (q3, y + 0.78)],
                    BLUE_.stroke_width(1),
                )])?;
                c.draw_series([PathElement::new(
                    [(q2, y + 0.15), (q2, y + 0.85)],
                    BLUE_.stroke_width(3),
                )])?;
            }
            c.draw_series(
                sample(&s.durations, y).map(|p| Circle::new(p, 3, BLUE_.mix(0.55).filled())),
            )?;
            c.draw_series(sample(&s.failed, y).map(|p| Cross::new(p, 4, RED_.stroke_width(2))))?;
        }
        Ok(())
    }
}

/// Sorted durations sampled evenly (which keeps the shape) down to [`MAX_STRIP_POINTS`], the
/// extremes always drawn, each at a fixed pseudo-random height within row `y`: equal
/// durations spread out, and the same log draws the same chart.
fn sample(durations: &[f64], y: f64) -> impl Iterator<Item = (f64, f64)> + '_ {
    let n = durations.len();
    let step = n.div_ceil(MAX_STRIP_POINTS).max(1);
    (0..n)
        .step_by(step)
        .chain((n > 0 && !(n - 1).is_multiple_of(step)).then_some(n.saturating_sub(1)))
        .map(move |j| {
            let jitter = ((j as u64).wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0;
            (durations[j], y + 0.3 + 0.4 * jitter)
        })
}
