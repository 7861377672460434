//! The report's charts, drawn with plotters as SVG documents (and PNG images): the stage timeline,
//! busy task slots against executor cores, the task durations of the worst stages, GC share per
//! executor and spill per stage.
//!
//! The HTML view inlines them; `sparkdiag analyze --charts DIR` writes them as files. Charts are
//! built from the model ([`Application`]) because they need per-task data the JSON contract
//! does not carry. Each chart keeps its data ([`Plot`]) and draws it on any plotters backend:
//! SVG for the page, PNG ([`Chart::png`]) for tools that take images. Text is measured and
//! rasterised by ab_glyph with the DejaVu Sans font compiled in, so nothing comes from the
//! system.
//!
//! Text from the log (stage names, executor ids) reaches the SVG through plotters, which escapes
//! `<`, `>`, `&`, `"` and `'` in every `<text>` and attribute it writes; labels are therefore
//! passed to it unescaped, since escaping them first would show `&lt;` to the reader.

use std::error::Error;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use sparkdiag_model::units::{duration, human_bytes};
use sparkdiag_model::{Application, StageStatus, TaskOutcome};

use crate::Report;

/// One chart: its SVG, or why there is none.
pub struct Chart {
    /// File name without the extension, stable across versions: scripts may pick files by it.
    pub name: &'static str,
    pub title: &'static str,
    /// How to read the chart, or why it is missing. Plain text: escape it before writing HTML.
    pub caption: String,
    pub svg: Option<String>,
    /// What was drawn, kept to draw it again as a bitmap ([`Chart::png`]).
    plot: Option<Plot>,
}

/// The data of a chart, ready to draw on any plotters backend.
enum Plot {
    Timeline(Timeline),
    Busy(Busy),
    Strips(Strips),
    GcBars(GcBars),
    SpillBars(SpillBars),
}

impl Plot {
    fn height(&self) -> u32 {
        match self {
            Plot::Timeline(p) => p.height(),
            Plot::Busy(p) => p.height(),
            Plot::Strips(p) => p.height(),
            Plot::GcBars(p) => p.height(),
            Plot::SpillBars(p) => p.height(),
        }
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        register_font();
        root.fill(&WHITE)?;
        match self {
            Plot::Timeline(p) => p.draw(root)?,
            Plot::Busy(p) => p.draw(root)?,
            Plot::Strips(p) => p.draw(root)?,
            Plot::GcBars(p) => p.draw(root)?,
            Plot::SpillBars(p) => p.draw(root)?,
        }
        root.present()?;
        Ok(())
    }
}

/// plotters measures text (for SVG too) and rasterises it (for PNG) with ab_glyph, which only
/// knows the fonts registered with it: without this every chart with text fails to draw.
fn register_font() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // The embedded font is known good; if it were not, drawing reports the error.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

const WIDTH: u32 = 960;
const FONT: &str = "sans-serif";

const BLUE_: RGBColor = RGBColor(70, 115, 180);
const RED_: RGBColor = RGBColor(200, 55, 55);
const AMBER: RGBColor = RGBColor(225, 145, 35);
const GREY: RGBColor = RGBColor(120, 120, 120);
const LIGHT: RGBColor = RGBColor(225, 225, 225);

/// Most bars a chart draws before it keeps only the largest: beyond that the labels cannot be
/// read and the file grows for nothing.
const MAX_STAGE_BARS: usize = 60;
const MAX_CATEGORY_BARS: usize = 40;
/// Points of one stage's strip plot; larger stages are sampled evenly, extremes kept.
const MAX_STRIP_POINTS: usize = 2500;
/// Time buckets of the utilisation chart: fine enough to show a gap of 1/300 of the run.
const BUCKETS: usize = 300;

type DrawResult = Result<(), Box<dyn Error>>;

/// Every chart of one application, in the order the HTML shows them.
pub fn render_all(report: &Report, app: &Application) -> Vec<Chart> {
    vec![
        stage_timeline(app),
        cores_busy(app),
        task_durations(app),
        gc_share(report),
        spill(report),
    ]
}

impl Chart {
    fn empty(name: &'static str, title: &'static str) -> Chart {
        Chart {
            name,
            title,
            caption: String::new(),
            svg: None,
            plot: None,
        }
    }

    /// A chart with data to draw, drawn as SVG. When plotters fails the caption says so
    /// instead of describing a drawing that is not there, and the report goes on.
    fn drawn(mut self, plot: Plot) -> Chart {
        let mut buf = String::new();
        let ok = {
            let root =
                SVGBackend::with_string(&mut buf, (WIDTH, plot.height())).into_drawing_area();
            plot.draw(&root).is_ok()
        };
        if ok {
            self.svg = Some(buf);
            self.plot = Some(plot);
        } else {
            self.caption = "This chart could not be drawn.".into();
        }
        self
    }

    /// The same chart as a PNG image, with the embedded DejaVu Sans for its text; `None` when
    /// there is no chart or it could not be drawn.
    pub fn png(&self) -> Option<Vec<u8>> {
        let plot = self.plot.as_ref()?;
        let (width, height) = (WIDTH, plot.height());
        let mut rgb = vec![0u8; width as usize * height as usize * 3];
        {
            let root = BitMapBackend::with_buffer(&mut rgb, (width, height)).into_drawing_area();
            plot.draw(&root).ok()?;
        }
        let mut out = Vec::new();
        let mut encoder = png::Encoder::new(&mut out, width, height);
        encoder.set_color(png::ColorType::Rgb);
        encoder.set_depth(png::BitDepth::Eight);
        let mut writer = encoder.write_header().ok()?;
        writer.write_image_data(&rgb).ok()?;
        writer.finish().ok()?;
        Some(out)
    }
}

/// Where the time axes start: the application start, or the earliest time seen.
fn origin(app: &Application) -> Option<i64> {
    app.start_ms
        .or_else(|| app.stages.iter().filter_map(|s| s.submission_ms).min())
        .or_else(|| app.tasks.iter().map(|t| t.launch_ms).min())
}

/// Where the time axes end: the application end, the last event, or the last time seen.
fn horizon(app: &Application) -> Option<i64> {
    let seen = app
        .stages
        .iter()
        .filter_map(|s| s.completion_ms.or(s.submission_ms))
        .chain(
            app.tasks
                .iter()
                .map(|t| t.launch_ms.saturating_add(i64::from(t.duration_ms))),
        )
        .max();
    match (app.effective_end_ms(), seen) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// Seconds, with a decimal only where the axis is short enough to need one.
fn seconds_label(v: f64, span: f64) -> String {
    if span < 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.0}")
    }
}

/// The first line of `s`, cut to `max` characters with an ellipsis.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or_default().trim();
    if line.chars().count() <= max {
        line.to_string()
    } else {
        format!(
            "{}…",
            line.chars().take(max.saturating_sub(1)).collect::<String>()
        )
    }
}

/// An axis of `n` categories, category `i` spanning `i..i + 1`, labelled at the centre of
/// every few categories so that at most about `max_labels` labels are drawn and none overlap.
/// (plotters' own `WithKeyPoints` cannot take a label formatter.)
struct Categories {
    n: f64,
    ticks: Vec<f64>,
}

/// Bar charts reserve room for at least this many bars, so two bars are not drawn as wide
/// blocks across the whole chart.
const MIN_BAR_SLOTS: usize = 8;

impl Categories {
    /// Rows of a vertical axis, row 0 drawn at the top (at `n - 1`): labels count from there,
    /// so the first row is always labelled.
    fn rows(n: usize, max_labels: usize) -> Categories {
        let mut axis = Categories::at_least(n, max_labels, 1);
        let step = n.div_ceil(max_labels.max(1)).max(1);
        axis.ticks = (0..n)
            .step_by(step)
            .map(|i| (n - 1 - i) as f64 + 0.5)
            .collect();
        axis
    }

    /// `n` categories on an axis as wide as `slots` of them (when that is more).
    fn at_least(n: usize, max_labels: usize, slots: usize) -> Categories {
        let step = n.div_ceil(max_labels.max(1)).max(1);
        Categories {
            n: n.max(slots).max(1) as f64,
            ticks: (0..n).step_by(step).map(|i| i as f64 + 0.5).collect(),
        }
    }
}

impl Ranged for Categories {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        RangedCoordf64::from(0.0..self.n).map(value, limit)
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Light points draw the fine grid, which categories do not need.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.clone()
        }
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.n
    }
}

// ---------------------------------------------------------------------------------------------
// a. Stage timeline

struct Bar {
    label: String,
    start: f64,
    end: f64,
    status: StageStatus,
    /// Running when the log ended: drawn to the end of the log.
    open: bool,
}

fn stage_timeline(app: &Application) -> Chart {
    let mut chart = Chart::empty("stage-timeline", "Stage timeline");
    let (Some(t0), Some(end)) = (origin(app), horizon(app)) else {
        chart.caption = "No stage was submitted: there is nothing to place on a timeline.".into();
        return chart;
    };
    let secs = |ms: i64| ms.saturating_sub(t0) as f64 / 1000.0;
    let mut bars: Vec<Bar> = app
        .stages
        .iter()
        .filter_map(|s| {
            let start = s.submission_ms?;
            let stop = s.completion_ms.unwrap_or(end).max(start);
            Some(Bar {
                label: format!("{}.{} {}", s.stage_id, s.attempt_id, truncate(&s.name, 20)),
                start: secs(start),
                end: secs(stop),
                status: s.status,
                open: s.completion_ms.is_none(),
            })
        })
        .collect();
    if bars.is_empty() {
        chart.caption = "No stage was submitted: there is nothing to place on a timeline.".into();
        return chart;
    }
    let total = bars.len();
    if total > MAX_STAGE_BARS {
        bars.sort_by(|a, b| (b.end - b.start).total_cmp(&(a.end - a.start)));
        bars.truncate(MAX_STAGE_BARS);
    }
    bars.sort_by(|a, b| a.start.total_cmp(&b.start));
    let span = bars
        .iter()
        .map(|b| b.end)
        .fold(secs(end), f64::max)
        .max(0.001);
    chart.caption = format!(
        "One bar per stage attempt, from submission to completion, in seconds since the \
         application started. Red bars failed; amber bars were still running when the log \
         ended. Gaps between bars are time when no stage ran: the driver was working alone.{}",
        if total > MAX_STAGE_BARS {
            format!(" The {MAX_STAGE_BARS} longest of {total} stage attempts are shown.")
        } else {
            String::new()
        }
    );
    // A stage submitted before the application start (clock skew between hosts) widens the
    // axis rather than leaving the chart.
    let first = bars.iter().map(|b| b.start).fold(0.0, f64::min);
    chart.drawn(Plot::Timeline(Timeline { bars, first, span }))
}

/// Stage attempts as bars on a time axis, in seconds since the application started.
struct Timeline {
    bars: Vec<Bar>,
    first: f64,
    span: f64,
}

impl Timeline {
    fn height(&self) -> u32 {
        (110 + 18 * self.bars.len() as u32).clamp(240, 1300)
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Timeline { bars, first, span } = self;
        let (first, span, n) = (*first, *span, bars.len());
        let mut c = ChartBuilder::on(root)
            .caption("Stage timeline", (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(190)
            .build_cartesian_2d(first..span * 1.02, Categories::rows(n, 30))?;
        // Row 0 is drawn at the top, so the earliest stage reads first.
        let row_of = |y: f64| n.saturating_sub(1 + y.floor().max(0.0) as usize);
        c.configure_mesh()
            .disable_y_mesh()
            .bold_line_style(LIGHT)
            .light_line_style(TRANSPARENT)
            .x_labels(10)
            .x_label_formatter(&|v| seconds_label(*v, span))
            .y_label_formatter(&|y| {
                bars.get(row_of(*y))
                    .map_or(String::new(), |b| b.label.clone())
            })
            .x_desc("seconds since application start")
            .y_desc("stage.attempt")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        let min_width = span * 0.003;
        let colour = |b: &Bar| match (b.status, b.open) {
            (StageStatus::Failed, _) => RED_,
            (_, true) => AMBER,
            _ => BLUE_,
        };
        for (kind, label) in [(BLUE_, "completed"), (RED_, "failed"), (AMBER, "running")] {
            let rects: Vec<_> = bars
                .iter()
                .enumerate()
                .filter(|(_, b)| colour(b) == kind)
                .map(|(i, b)| {
                    let y = (n - 1 - i) as f64;
                    Rectangle::new(
                        [
                            (b.start, y + 0.18),
                            (b.end.max(b.start + min_width), y + 0.82),
                        ],
                        kind.filled(),
                    )
                })
                .collect();
            if rects.is_empty() {
                continue;
            }
            c.draw_series(rects)?
                .label(label)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], kind.filled()));
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(LIGHT)
            .label_font((FONT, 12))
            .draw()?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// b. Busy task slots against executor cores

/// The average of a step function over `buckets` equal slices of `0..span`: `changes` are
/// (time, delta) pairs, the level starting at 0.
fn bucket_average(mut changes: Vec<(f64, f64)>, span: f64, buckets: usize) -> Vec<f64> {
    changes.sort_by(|a, b| a.0.total_cmp(&b.0));
    let width = span / buckets as f64;
    let mut area = vec![0.0; buckets];
    let (mut level, mut at) = (0.0f64, 0.0f64);
    let mut add = |from: f64, to: f64, level: f64| {
        if level == 0.0 || to <= from {
            return;
        }
        let first = ((from / width) as usize).min(buckets - 1);
        let last = ((to / width) as usize).min(buckets - 1);
        for (b, slot) in area.iter_mut().enumerate().take(last + 1).skip(first) {
            let lo = from.max(b as f64 * width);
            let hi = to.min((b + 1) as f64 * width);
            if hi > lo {
                *slot += level * (hi - lo);
            }
        }
    };
    for (t, delta) in changes {
        let t = t.clamp(0.0, span);
        add(at, t, level);
        level += delta;
        at = t;
    }
    add(at, span, level);
    area.into_iter().map(|a| a / width).collect()
}

fn cores_busy(app: &Application) -> Chart {
    let mut chart = Chart::empty("cores-busy", "Executor cores busy over time");
    let (Some(t0), Some(end)) = (origin(app), horizon(app)) else {
        chart.caption = "The log has no tasks: no core was ever busy.".into();
        return chart;
    };
    if app.tasks.is_empty() {
        chart.caption = "The log has no tasks: no core was ever busy.".into();
        return chart;
    }
    let secs = |ms: i64| ms.saturating_sub(t0) as f64 / 1000.0;
    let span = secs(end).max(0.001);
    let busy_changes: Vec<(f64, f64)> = app
        .tasks
        .iter()
        .flat_map(|t| {
            let start = secs(t.launch_ms);
            [
                (start, 1.0),
                (start + f64::from(t.duration_ms) / 1000.0, -1.0),
            ]
        })
        .collect();
    let busy = bucket_average(busy_changes, span, BUCKETS);
    // The driver offers cores only in local mode, where it is the one that runs tasks.
    let capacity_changes: Vec<(f64, f64)> = app
        .executors
        .iter()
        .filter(|e| e.id != "driver" || e.total_tasks + e.completed_tasks > 0)
        .filter_map(|e| {
            let cores = e.cores? as f64;
            let added = e.added_ms.map_or(0.0, secs);
            let mut v = vec![(added, cores)];
            if let Some(removed) = e.removed_ms {
                v.push((secs(removed), -cores));
            }
            Some(v)
        })
        .flatten()
        .collect();
    let capacity =
        (!capacity_changes.is_empty()).then(|| bucket_average(capacity_changes, span, BUCKETS));
    let busy_total: f64 = busy.iter().sum();
    let cap_total: f64 = capacity.as_ref().map_or(0.0, |c| c.iter().sum());
    chart.caption = format!(
        "Task slots in use (tasks running at once, averaged over slices of {}) against the cores \
         the executors offered. Tasks count from launch to finish as the log records them, so \
         short overlaps can rise above the cores.{} Flat stretches at zero are time when only the driver worked.",
        duration((span * 1000.0 / BUCKETS as f64).round().max(1.0) as i64),
        if cap_total > 0.0 {
            format!(
                " On average {:.0}% of the cores were busy.",
                100.0 * busy_total / cap_total
            )
        } else {
            " The log does not say how many cores the executors had.".into()
        }
    );
    let top = busy
        .iter()
        .chain(capacity.iter().flatten())
        .fold(1.0f64, |a, &b| a.max(b))
        // Headroom above the busiest moment keeps the legend off the data.
        * 1.4;
    chart.drawn(Plot::Busy(Busy {
        busy,
        capacity,
        span,
        top,
    }))
}

/// Busy task slots and executor cores, averaged per time bucket.
struct Busy {
    busy: Vec<f64>,
    capacity: Option<Vec<f64>>,
    span: f64,
    top: f64,
}

impl Busy {
    fn height(&self) -> u32 {
        380
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Busy {
            busy,
            capacity,
            span,
            top,
        } = self;
        let (span, top) = (*span, *top);
        let width = span / busy.len().max(1) as f64;
        let steps = |values: &[f64]| -> Vec<(f64, f64)> {
            values
                .iter()
                .enumerate()
                .flat_map(|(i, &v)| [(i as f64 * width, v), ((i + 1) as f64 * width, v)])
                .collect()
        };
        let mut c = ChartBuilder::on(root)
            .caption("Executor cores busy over time", (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(0f64..span, 0f64..top)?;
        c.configure_mesh()
            .bold_line_style(LIGHT)
            .light_line_style(TRANSPARENT)
            .x_labels(10)
            // One label per whole slot on small executors, so no two labels read the same.
            .y_labels((top.floor() as usize + 1).clamp(2, 8))
            .x_label_formatter(&|v| seconds_label(*v, span))
            .y_label_formatter(&|v| {
                if v.fract().abs() < 1e-9 {
                    format!("{v:.0}")
                } else {
                    format!("{v:.1}")
                }
            })
            .x_desc("seconds since application start")
            .y_desc("task slots (cores)")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        c.draw_series(AreaSeries::new(steps(busy), 0.0, BLUE_.mix(0.35)).border_style(BLUE_))?
            .label("busy task slots")
            .legend(|(x, y)| {
                Rectangle::new([(x, y - 5), (x + 12, y + 5)], BLUE_.mix(0.5).filled())
            });
        if let Some(capacity) = &capacity {
            c.draw_series(LineSeries::new(steps(capacity), GREY.stroke_width(2)))?
                .label("executor cores")
                .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], GREY.stroke_width(2)));
        }
        c.configure_series_labels()
            .position(SeriesLabelPosition::UpperRight)
            .background_style(WHITE.mix(0.85))
            .border_style(LIGHT)
            .label_font((FONT, 12))
            .draw()?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// c. Task durations of the worst stages

struct Strip {
    label: String,
    /// Successful task durations in seconds, sorted.
    durations: Vec<f64>,
}

impl Strip {
    fn quantile(&self, q: f64) -> f64 {
        let i = ((self.durations.len() - 1) as f64 * q).round() as usize;
        self.durations[i]
    }
}

/// The stages whose slowest task ran longest past the median: where a skewed or straggling
/// task held the stage open.
fn worst_stages(app: &Application, count: usize) -> Vec<Strip> {
    let mut strips: Vec<(u64, Strip)> = app
        .stages
        .iter()
        .filter_map(|s| {
            let mut d: Vec<u32> = app
                .stage_tasks(s)
                .iter()
                .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics)
                .map(|t| t.duration_ms)
                .collect();
            if d.is_empty() {
                return None;
            }
            d.sort_unstable();
            let excess = u64::from(d[d.len() - 1] - d[d.len() / 2]);
            Some((
                excess,
                Strip {
                    label: format!("{}.{} {}", s.stage_id, s.attempt_id, truncate(&s.name, 18)),
                    durations: d.into_iter().map(|ms| f64::from(ms) / 1000.0).collect(),
                },
            ))
        })
        .collect();
    // A stage whose tasks all took the same time says nothing about skew; show it only when
    // there is nothing else.
    if strips.iter().any(|(excess, _)| *excess > 0) {
        strips.retain(|(excess, _)| *excess > 0);
    }
    strips.sort_by_key(|(excess, _)| std::cmp::Reverse(*excess));
    strips.into_iter().take(count).map(|(_, s)| s).collect()
}

fn task_durations(app: &Application) -> Chart {
    let mut chart = Chart::empty("task-durations", "Task durations of the worst stages");
    let strips = worst_stages(app, 3);
    if strips.is_empty() {
        chart.caption = "No task finished successfully: there are no durations to compare.".into();
        return chart;
    }
    let summaries: Vec<String> = strips
        .iter()
        .map(|s| {
            let (median, max) = (s.quantile(0.5), s.quantile(1.0));
            format!(
                "stage {}: {} tasks, median {}, max {}{}",
                s.label.split(' ').next().unwrap_or_default(),
                s.durations.len(),
                duration((median * 1000.0) as i64),
                duration((max * 1000.0) as i64),
                if median > 0.0 {
                    format!(" ({:.1}× the median)", max / median)
                } else {
                    String::new()
                }
            )
        })
        .collect();
    chart.caption = format!(
        "Every successful task of the {} stage(s) whose slowest task ran longest past the \
         median, one dot per task; the box spans the middle half, the line is the median. A \
         lone dot far right is a skewed or straggling task. {}.",
        strips.len(),
        summaries.join("; ")
    );
    let top = strips
        .iter()
        .map(|s| s.quantile(1.0))
        .fold(0.001f64, f64::max)
        * 1.05;
    chart.drawn(Plot::Strips(Strips { strips, top }))
}

/// The successful task durations of the worst stages, in seconds.
struct Strips {
    strips: Vec<Strip>,
    top: f64,
}

impl Strips {
    fn height(&self) -> u32 {
        140 + 95 * self.strips.len() as u32
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Strips { strips, top } = self;
        let (top, k) = (*top, strips.len());
        let mut c = ChartBuilder::on(root)
            .caption("Task durations of the worst stages", (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(190)
            .build_cartesian_2d(0f64..top, Categories::rows(k, k))?;
        let row_of = |y: f64| k.saturating_sub(1 + y.floor().max(0.0) as usize);
        c.configure_mesh()
            .disable_y_mesh()
            .bold_line_style(LIGHT)
            .light_line_style(TRANSPARENT)
            .x_labels(10)
            .x_label_formatter(&|v| seconds_label(*v, top))
            .y_label_formatter(&|y| {
                strips
                    .get(row_of(*y))
                    .map_or(String::new(), |s| s.label.clone())
            })
            .x_desc("task duration (seconds)")
            .y_desc("stage.attempt")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        for (i, s) in strips.iter().enumerate() {
            let y = (k - 1 - i) as f64;
            let (q1, q2, q3) = (s.quantile(0.25), s.quantile(0.5), s.quantile(0.75));
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
            let n = s.durations.len();
            let step = n.div_ceil(MAX_STRIP_POINTS).max(1);
            // Sorted durations sampled evenly keep the shape; the extremes are always drawn.
            let picked = (0..n)
                .step_by(step)
                .chain(((n - 1) % step != 0).then_some(n - 1))
                .map(|j| {
                    // A fixed pseudo-random jitter spreads equal durations without randomness.
                    let jitter = ((j as u64).wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0;
                    (s.durations[j], y + 0.3 + 0.4 * jitter)
                });
            c.draw_series(picked.map(|p| Circle::new(p, 3, RED_.mix(0.45).filled())))?;
        }
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// d. GC share per executor

/// The Spark UI shows an executor's GC time red above a tenth of its task time.
const GC_WARN_PERCENT: f64 = 10.0;

fn gc_share(report: &Report) -> Chart {
    let mut chart = Chart::empty("gc-share", "GC share per executor");
    let mut rows: Vec<(String, f64)> = report
        .executors
        .iter()
        .filter(|e| e.run_time_ms > 0)
        .map(|e| {
            (
                truncate(&e.executor_id, 12),
                (100.0 * e.jvm_gc_time_ms as f64 / e.run_time_ms as f64).max(0.0),
            )
        })
        .collect();
    if rows.is_empty() {
        chart.caption = "No executor ran a task with metrics: there is no GC time to show.".into();
        return chart;
    }
    let total = rows.len();
    if total > MAX_CATEGORY_BARS {
        rows.sort_by(|a, b| b.1.total_cmp(&a.1));
        rows.truncate(MAX_CATEGORY_BARS);
    }
    // Executor ids are numbers after "driver": order them as numbers, not as text.
    rows.sort_by_key(|(id, _)| (id.parse::<u64>().ok(), id.clone()));
    chart.caption = format!(
        "JVM garbage-collection time as a share of each executor's task run time. Bars over the \
         dashed {GC_WARN_PERCENT:.0}% line (where the Spark UI turns GC time red) are amber.{}",
        if total > MAX_CATEGORY_BARS {
            format!(" The {MAX_CATEGORY_BARS} highest of {total} executors are shown.")
        } else {
            String::new()
        }
    );
    let top = rows
        .iter()
        .map(|r| r.1)
        .fold(GC_WARN_PERCENT * 1.3, f64::max)
        * 1.1;
    chart.drawn(Plot::GcBars(GcBars { rows, top }))
}

/// GC share per executor, in percent.
struct GcBars {
    rows: Vec<(String, f64)>,
    top: f64,
}

impl GcBars {
    fn height(&self) -> u32 {
        380
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let GcBars { rows, top } = self;
        let (top, n) = (*top, rows.len());
        let mut c = ChartBuilder::on(root)
            .caption("GC share per executor", (FONT, 18))
            .margin(12)
            .x_label_area_size(44)
            .y_label_area_size(60)
            .build_cartesian_2d(Categories::at_least(n, 24, MIN_BAR_SLOTS), 0f64..top)?;
        c.configure_mesh()
            .disable_x_mesh()
            .bold_line_style(LIGHT)
            .light_line_style(TRANSPARENT)
            .y_labels(8)
            .x_label_formatter(&|x| {
                rows.get(x.floor().max(0.0) as usize)
                    .map_or(String::new(), |r| r.0.clone())
            })
            .y_label_formatter(&|v| format!("{v:.0}%"))
            .x_desc("executor")
            .y_desc("GC time / task run time (%)")
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        c.draw_series(rows.iter().enumerate().map(|(i, (_, share))| {
            let colour = if *share > GC_WARN_PERCENT {
                AMBER
            } else {
                BLUE_
            };
            Rectangle::new(
                [(i as f64 + 0.2, 0.0), (i as f64 + 0.8, *share)],
                colour.filled(),
            )
        }))?;
        c.draw_series(DashedLineSeries::new(
            [
                (0.0, GC_WARN_PERCENT),
                (n.max(MIN_BAR_SLOTS) as f64, GC_WARN_PERCENT),
            ],
            6,
            4,
            GREY.stroke_width(1),
        ))?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// e. Spill per stage

/// A bar chart switches to a log scale when its values span at least this factor.
const LOG_SCALE_SPAN: f64 = 100.0;

fn spill(report: &Report) -> Chart {
    let mut chart = Chart::empty("spill", "Spill per stage");
    let mut rows: Vec<(String, f64, f64)> = report
        .stages
        .iter()
        .filter(|s| s.memory_spill_bytes > 0 || s.disk_spill_bytes > 0)
        .map(|s| {
            (
                format!("{}.{}", s.stage_id, s.attempt_id),
                s.memory_spill_bytes as f64,
                s.disk_spill_bytes as f64,
            )
        })
        .collect();
    if rows.is_empty() {
        chart.caption =
            "No stage spilled: memory and disk spill are zero in every stage attempt.".into();
        return chart;
    }
    let total = rows.len();
    if total > MAX_CATEGORY_BARS {
        rows.sort_by(|a, b| (b.1 + b.2).total_cmp(&(a.1 + a.2)));
        rows.truncate(MAX_CATEGORY_BARS);
    }
    let values = rows.iter().flat_map(|r| [r.1, r.2]).filter(|v| *v > 0.0);
    let (lo, hi) = values.fold((f64::MAX, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let log = hi / lo >= LOG_SCALE_SPAN;
    chart.caption = format!(
        "Bytes each stage attempt spilled: memory spill is the size of the data in memory before \
         it was written out, disk spill its size on disk.{}{}",
        if log {
            " The scale is logarithmic: the values span orders of magnitude."
        } else {
            ""
        },
        if total > MAX_CATEGORY_BARS {
            format!(" The {MAX_CATEGORY_BARS} largest of {total} spilling stages are shown.")
        } else {
            String::new()
        }
    );
    chart.drawn(Plot::SpillBars(SpillBars { rows, lo, hi, log }))
}

/// Memory and disk spill per stage attempt, in bytes.
struct SpillBars {
    rows: Vec<(String, f64, f64)>,
    lo: f64,
    hi: f64,
    log: bool,
}

impl SpillBars {
    fn height(&self) -> u32 {
        380
    }

    fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let SpillBars { rows, lo, hi, log } = self;
        let (lo, hi, log, n) = (*lo, *hi, *log, rows.len());
        let x = || Categories::at_least(n, 24, MIN_BAR_SLOTS);
        let builder = |root| {
            let mut b = ChartBuilder::on(root);
            b.caption("Spill per stage", (FONT, 18))
                .margin(12)
                .x_label_area_size(44)
                .y_label_area_size(80);
            b
        };
        if log {
            let floor = lo / 2.0;
            let mut c = builder(root).build_cartesian_2d(x(), (floor..hi * 2.0).log_scale())?;
            spill_mesh(&mut c, rows)?;
            spill_bars(&mut c, rows, floor)?;
        } else {
            let mut c = builder(root).build_cartesian_2d(x(), 0f64..hi * 1.1)?;
            spill_mesh(&mut c, rows)?;
            spill_bars(&mut c, rows, 0.0)?;
        }
        Ok(())
    }
}

fn spill_mesh<'a, DB, Y>(
    c: &mut ChartContext<'a, DB, Cartesian2d<Categories, Y>>,
    rows: &[(String, f64, f64)],
) -> DrawResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    c.configure_mesh()
        .disable_x_mesh()
        .bold_line_style(LIGHT)
        .light_line_style(TRANSPARENT)
        .y_labels(8)
        .x_label_formatter(&|x| {
            rows.get(x.floor().max(0.0) as usize)
                .map_or(String::new(), |r| r.0.clone())
        })
        .y_label_formatter(&|v| human_bytes(*v as i64))
        .x_desc("stage.attempt")
        .y_desc("bytes spilled")
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()?;
    Ok(())
}

fn spill_bars<'a, DB, Y>(
    c: &mut ChartContext<'a, DB, Cartesian2d<Categories, Y>>,
    rows: &[(String, f64, f64)],
    floor: f64,
) -> DrawResult
where
    DB: DrawingBackend + 'a,
    DB::ErrorType: 'static,
    Y: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    for (offset, colour, label, pick) in [
        (0.15, BLUE_, "memory spill", 1usize),
        (0.5, AMBER, "disk spill", 2usize),
    ] {
        c.draw_series(rows.iter().enumerate().filter_map(|(i, r)| {
            let v = if pick == 1 { r.1 } else { r.2 };
            (v > 0.0).then(|| {
                let x = i as f64 + offset;
                Rectangle::new([(x, floor), (x + 0.35, v)], colour.filled())
            })
        }))?
        .label(label)
        .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
    }
    c.configure_series_labels()
        .position(SeriesLabelPosition::UpperRight)
        .background_style(WHITE.mix(0.85))
        .border_style(LIGHT)
        .label_font((FONT, 12))
        .draw()?;
    Ok(())
}

/// A report of an application read from nowhere, for tests of the views.
#[cfg(test)]
pub(crate) fn report_of(app: &Application) -> Report {
    let source = sparkdiag_eventlog::SourceReport {
        input: String::new(),
        layout: sparkdiag_eventlog::Layout::Stdin,
        files: Vec::new(),
        in_progress: false,
        saw_application_end: false,
        truncated: false,
        gaps: false,
        malformed_lines: 0,
        unknown_events: Default::default(),
        ignored_events: Default::default(),
        warnings: Vec::new(),
    };
    Report::new(&[], &source, app, Vec::new(), 0, None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_average_integrates_a_step_function() {
        // One slot busy for the first half, two for the second: averages 1 and 2 per half.
        let avg = bucket_average(vec![(0.0, 1.0), (5.0, 1.0), (10.0, -2.0)], 10.0, 2);
        assert_eq!(avg, vec![1.0, 2.0]);
        // A change inside a bucket is weighted by how long it lasted there.
        let avg = bucket_average(vec![(2.5, 1.0), (7.5, -1.0)], 10.0, 2);
        assert_eq!(avg, vec![0.5, 0.5]);
    }

    #[test]
    fn plotters_escapes_text_itself() {
        // So labels are passed unescaped: escaping them first would print `&amp;lt;`.
        register_font();
        let mut svg = String::new();
        {
            let root = SVGBackend::with_string(&mut svg, (100, 100)).into_drawing_area();
            root.draw(&Text::new("<b>&'\"", (10, 10), (FONT, 12)))
                .unwrap();
            root.present().unwrap();
        }
        assert!(svg.contains("&lt;b&gt;&amp;&apos;&quot;"), "{svg}");
        assert!(!svg.contains("<b>"));
    }

    #[test]
    fn an_empty_application_has_no_charts_and_says_why() {
        let app = Application::default();
        let report = report_of(&app);
        for chart in render_all(&report, &app) {
            assert!(chart.svg.is_none(), "{}", chart.name);
            assert!(!chart.caption.is_empty(), "{}", chart.name);
        }
    }

    /// An application of completed stages, built from events as the reader would (so new
    /// model fields need no change here), with the given (memory, disk) spill per stage.
    fn app_of(spills: &[(i64, i64)], end_ms: Option<i64>) -> Application {
        let mut builder = sparkdiag_model::ApplicationBuilder::default();
        let mut lines = vec![
            r#"{"Event":"SparkListenerApplicationStart","App Name":"t","Timestamp":0}"#.to_string(),
        ];
        for (id, _) in spills.iter().enumerate() {
            let info = format!(
                r#""Stage Info":{{"Stage ID":{id},"Stage Name":"<stage {id}>","Number of Tasks":0,"Submission Time":{},"Completion Time":{}}}"#,
                1000 * id,
                1000 * id + 500
            );
            lines.push(format!(
                r#"{{"Event":"SparkListenerStageSubmitted",{info}}}"#
            ));
            lines.push(format!(
                r#"{{"Event":"SparkListenerStageCompleted",{info}}}"#
            ));
        }
        if let Some(end) = end_ms {
            lines.push(format!(
                r#"{{"Event":"SparkListenerApplicationEnd","Timestamp":{end}}}"#
            ));
        }
        for line in &lines {
            builder.on_event(sparkdiag_eventlog::events::parse_event(line.as_bytes()).unwrap());
        }
        let mut app = builder.finish();
        assert_eq!(app.stages.len(), spills.len());
        for (stage, &(memory, disk)) in app.stages.iter_mut().zip(spills) {
            stage.totals.memory_bytes_spilled = memory;
            stage.totals.disk_bytes_spilled = disk;
        }
        app
    }

    #[test]
    fn spill_spanning_orders_of_magnitude_is_drawn_on_a_log_scale() {
        let app = app_of(&[(2 << 30, 1 << 30), (0, 0), (4096, 0)], None);
        let chart = spill(&report_of(&app));
        assert!(chart.caption.contains("logarithmic"), "{}", chart.caption);
        let svg = chart.svg.expect("drawn");
        // Only the stages that spilled get a label.
        assert!(
            svg.contains(">\n0.0\n<") && svg.contains(">\n2.0\n<"),
            "{svg}"
        );
        assert!(!svg.contains(">\n1.0\n<"));

        let even = app_of(&[(2000, 1000)], None);
        assert!(!spill(&report_of(&even)).caption.contains("logarithmic"));
    }

    #[test]
    fn stages_without_tasks_still_get_a_timeline() {
        let app = app_of(&[(0, 0), (0, 0)], Some(5000));
        let report = report_of(&app);
        let charts = render_all(&report, &app);
        assert!(
            charts[0]
                .svg
                .as_deref()
                .unwrap()
                .contains("&lt;stage 1&gt;")
        );
        assert!(charts[1].svg.is_none(), "no tasks, no utilisation");
        assert!(charts[2].svg.is_none(), "no tasks, no durations");
    }

    #[test]
    fn every_drawn_chart_is_also_a_png() {
        let app = app_of(&[(2 << 30, 1 << 30), (4096, 0)], Some(5000));
        let report = report_of(&app);
        for chart in render_all(&report, &app) {
            match (&chart.svg, chart.png()) {
                (Some(_), Some(png)) => assert!(png.starts_with(b"\x89PNG\r\n"), "{}", chart.name),
                (None, None) => {}
                (svg, png) => panic!(
                    "{}: svg {} png {}",
                    chart.name,
                    svg.is_some(),
                    png.is_some()
                ),
            }
        }
        let timeline = &render_all(&report, &app)[0];
        assert!(timeline.png().is_some(), "the timeline has data");
    }

    #[test]
    fn truncate_cuts_at_characters_not_bytes() {
        assert_eq!(truncate("ééééé", 3), "éé…");
        assert_eq!(truncate("short\nsecond line", 10), "short");
    }
}
