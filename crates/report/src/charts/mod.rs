//! The report's charts, drawn with plotters as SVG documents (and PNG images): the stage timeline,
//! busy task slots against executor cores, the task durations of the worst stages, GC share per
//! executor and spill per stage.
//!
//! The HTML view inlines them; `sparkdiag analyze --charts DIR` writes them as files. Charts are
//! built from the report and, for what the JSON does not carry (every task's duration and
//! span), its [`ViewData`]. Each chart keeps its data (`Plot`) and draws it on any plotters backend:
//! SVG for the page, PNG ([`Chart::png`]) for tools that take images. Text is measured and
//! rasterised by ab_glyph with the DejaVu Sans font compiled in, so nothing comes from the
//! system.
//!
//! What a reader should see at a glance decides the layout: every numeric axis is an
//! `Axis` with round ticks that never read the same twice; stage rows are named by
//! `StageNames`, which keep the call site's `file:line`; the stages the top finding names
//! (`Focus`) are outlined on the timeline and come first among the task durations; bar
//! charts are as tall as their bars. [`Chart::axis_labels`], [`Chart::row_labels`] and
//! [`Chart::marked_stages`] say what was drawn, for tests.
//!
//! Text from the log (stage names, executor ids) reaches the SVG through plotters, which escapes
//! `<`, `>`, `&`, `"` and `'` in every `<text>` and attribute it writes; labels are therefore
//! passed to it unescaped, since escaping them first would show `&lt;` to the reader.

use std::error::Error;

use crate::format::{duration, truncate};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use sparkdiag_contract::StageStatus;

use crate::{Report, ViewData};

mod axis;
mod bars;
mod busy;
mod diff;
mod durations;
mod gc;
mod memory;
mod nights;
mod scenarios;
mod spill;
mod streaming;
mod time;
mod timeline;

pub(crate) use axis::short_name;
use axis::{Axis, Unit, stage_label};
use bars::{TimeBar, TimeBars};
use busy::{Busy, cores_busy};
use diff::DiffTimelines;
pub use diff::{DiffBar, diff_bars, diff_timelines, work_colour};
use durations::{Strips, task_durations};
use gc::{GcBars, gc_share};
use memory::{MemoryBars, memory_peaks};
#[cfg(test)]
pub(crate) use nights::MAX_NIGHT_BAR;
use nights::NightBars;
pub use nights::night_bars;
pub use scenarios::scenario_chart;
use spill::{SpillBars, spill};
pub use streaming::query_chart;
use time::{Cut, TimeAxis};
use timeline::{Timeline, stage_timeline};

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
    MemoryBars(MemoryBars),
    Bars(TimeBars),
    Nights(NightBars),
    DiffTimelines(DiffTimelines),
}

impl Plot {
    fn height(&self) -> u32 {
        match self {
            Plot::Timeline(p) => p.height(),
            Plot::Busy(p) => p.height(),
            Plot::Strips(p) => p.height(),
            Plot::GcBars(p) => p.height(),
            Plot::SpillBars(p) => p.height(),
            Plot::MemoryBars(p) => p.height(),
            Plot::Bars(p) => p.height(),
            Plot::Nights(p) => p.height(),
            Plot::DiffTimelines(p) => p.height(),
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
            Plot::MemoryBars(p) => p.draw(root)?,
            Plot::Bars(p) => p.draw(root)?,
            Plot::Nights(p) => p.draw(root)?,
            Plot::DiffTimelines(p) => p.draw(root)?,
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
/// The width each chart is drawn at a second time for a phone (a page under about 640 px
/// wide shows that drawing instead): scaled into a 400 px column, its 12 px labels still read
/// at 9 px, where the 960 px drawing's would shrink to 5 px.
pub const NARROW_WIDTH: u32 = 520;

/// Whether `root` is a narrow drawing: row labels are shortened to fit a smaller label area
/// and every other axis tick is labelled.
fn is_narrow<DB: DrawingBackend>(root: &DrawingArea<DB, Shift>) -> bool {
    root.dim_in_pixel().0 < WIDTH / 4 * 3
}
const FONT: &str = "sans-serif";

const BLUE_: RGBColor = RGBColor(70, 115, 180);
const RED_: RGBColor = RGBColor(200, 55, 55);
const AMBER: RGBColor = RGBColor(225, 145, 35);
const GREY: RGBColor = RGBColor(120, 120, 120);
const LIGHT: RGBColor = RGBColor(225, 225, 225);
const INK: RGBColor = RGBColor(34, 34, 34);

/// Characters of a stage name in a chart's row label: room for "showString at
/// NativeMethodAccessorImpl.java:0", the name Spark gives a `show()`.
const LABEL_CHARS: usize = 46;

/// The pixels a row-label area needs for `labels` at 12 px (DejaVu Sans averages about 6.6 px
/// a character), plus the tick and the rotated axis title: short names leave the plot wide.
fn label_area<'a>(labels: impl Iterator<Item = &'a str>) -> u32 {
    let chars = labels.map(|l| l.chars().count()).max().unwrap_or(0);
    (36 + (chars as f64 * 6.6).ceil() as u32).clamp(80, 340)
}

/// Most bars a chart draws before it keeps only the largest: beyond that the labels cannot be
/// read and the file grows for nothing.
const MAX_STAGE_BARS: usize = 60;
const MAX_CATEGORY_BARS: usize = 40;
/// Points of one stage's strip plot; larger stages are sampled evenly, extremes kept.
const MAX_STRIP_POINTS: usize = 2500;

type DrawResult = Result<(), Box<dyn Error>>;

/// What a chart of labelled rows needs to be laid out: its title, axis texts and row labels.
struct RowsLayout<'a> {
    caption: &'a str,
    x_desc: &'a str,
    y_desc: &'a str,
    /// One per row, top row first.
    labels: Vec<&'a str>,
    /// Width of the row-label area, in pixels.
    label_width: u32,
    /// Rows the y axis has room for (at least `labels.len()`).
    visible: usize,
    /// Pixels kept free between the title and the plot, for notes on the time axis (a clock
    /// jump's label).
    top_room: u32,
}

/// A chart of labelled rows on the x axis `x`, row 0 at the top, its mesh drawn: the set-up the
/// stage timeline, the task-duration strips and the GC and spill bars share.
fn rows_chart<'a, DB: DrawingBackend>(
    root: &'a DrawingArea<DB, Shift>,
    x: &Axis,
    layout: RowsLayout,
) -> Result<ChartContext<'a, DB, Cartesian2d<Axis, Categories>>, Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let n = layout.labels.len();
    let narrow = is_narrow(root);
    // A narrow drawing gives the labels at most a third of its width, each label shortened
    // (its call site's `file:line` kept) to the characters that fit.
    let label_width = if narrow {
        layout.label_width.min(root.dim_in_pixel().0 / 3).max(80)
    } else {
        layout.label_width
    };
    let fit = ((label_width.saturating_sub(36)) as f64 / 6.6) as usize;
    let margin_right = if narrow { 20 } else { 40 };
    let mut builder = ChartBuilder::on(root);
    builder
        .margin(12)
        .margin_right(margin_right)
        .x_label_area_size(44)
        .y_label_area_size(label_width);
    titled(
        &mut builder,
        root,
        layout.caption,
        margin_right,
        layout.top_room,
    )?;
    let mut c = builder.build_cartesian_2d(x.clone(), Categories::rows(n, layout.visible))?;
    let row_of = |y: f64| n.saturating_sub(1 + y.floor().max(0.0) as usize);
    c.configure_mesh()
        .disable_y_mesh()
        .bold_line_style(LIGHT)
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|v| x.tick_label(*v, narrow))
        .y_label_formatter(&|y| {
            layout.labels.get(row_of(*y)).map_or(String::new(), |l| {
                if l.chars().count() > fit {
                    short_name(l, fit)
                } else {
                    l.to_string()
                }
            })
        })
        .x_desc(layout.x_desc)
        .y_desc(layout.y_desc)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()?;
    Ok(c)
}

/// Gives `builder` (its margins set, 12 pixels but on the right) the chart's title: as
/// `.caption()` does, or, with `room` pixels to keep free between the title and the plot (for
/// notes on the time axis), drawn here where plotters would draw it and the plot moved down.
fn titled<DB: DrawingBackend>(
    builder: &mut ChartBuilder<'_, '_, DB>,
    root: &DrawingArea<DB, Shift>,
    title: &str,
    margin_right: u32,
    room: u32,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    if room == 0 {
        builder.caption(title, (FONT, 18));
        return Ok(());
    }
    let below = root
        .margin(12, 12, 12, margin_right)
        .titled(title, (FONT, 18))?;
    let title_height = below.get_base_pixel().1 - root.get_base_pixel().1;
    builder.margin_top(title_height.max(0) as u32 + room);
    Ok(())
}

/// The series' legend in `corner`, on a pale box that keeps the data under it readable.
fn legend<'a, DB: DrawingBackend + 'a, CT: CoordTranslate>(
    c: &mut ChartContext<'a, DB, CT>,
    corner: SeriesLabelPosition,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    c.configure_series_labels()
        .position(corner)
        .background_style(WHITE.mix(0.85))
        .border_style(LIGHT)
        .label_font((FONT, 12))
        .draw()?;
    Ok(())
}

/// The tick positions an axis gives plotters: `ticks` for the bold grid and labels, none for
/// the light grid, which these charts do without.
fn bold_only<Hint: KeyPointHint>(hint: Hint, ticks: &[f64]) -> Vec<f64> {
    if hint.weight().allow_light_points() {
        Vec::new()
    } else {
        ticks.to_vec()
    }
}

/// Every chart of one application, in the order the HTML shows them.
pub fn render_all(report: &Report, view: &ViewData) -> Vec<Chart> {
    let focus = Focus::of(report);
    let names = StageNames::of(report);
    vec![
        stage_timeline(report, view, &focus, &names),
        cores_busy(report, view),
        task_durations(report, view, &focus, &names),
        gc_share(report),
        spill(report, &focus, &names),
        memory_peaks(report),
    ]
}

/// Writes `NAME.svg` and `NAME.png` into `dir` (created if missing) for each chart with data
/// of each report; prefixed `N-` (1-based) when there are several reports, so their files do
/// not overwrite each other. Errors name the file.
pub fn write_files(dir: &std::path::Path, apps: &[crate::analyze::App]) -> std::io::Result<()> {
    let named = |what: &str, path: &std::path::Path, e: std::io::Error| {
        std::io::Error::new(e.kind(), format!("cannot {what} {}: {e}", path.display()))
    };
    std::fs::create_dir_all(dir).map_err(|e| named("create", dir, e))?;
    let drawn = apps.iter().filter_map(|app| Some((app.report, app.view?)));
    for (i, (report, view)) in drawn.enumerate() {
        let prefix = if apps.len() > 1 {
            format!("{}-", i + 1)
        } else {
            String::new()
        };
        for chart in render_all(report, view) {
            let Some(svg) = &chart.svg else { continue };
            let file = dir.join(format!("{prefix}{}.svg", chart.name));
            std::fs::write(&file, svg).map_err(|e| named("write", &file, e))?;
            let file = dir.join(format!("{prefix}{}.png", chart.name));
            let png = chart
                .png()
                .ok_or_else(|| std::io::Error::other(format!("cannot draw {}", file.display())))?;
            std::fs::write(&file, png).map_err(|e| named("write", &file, e))?;
        }
    }
    Ok(())
}

/// How a chart's row names a stage: `"2.0 collect at …/etl/daily.py:42"`, the call site's
/// `file:line` always kept. A stage whose call site is a frame of the JDK's reflection or
/// thread pools (`$anonfun$withThreadLocalCaptured$1 at CompletableFuture.java:1768`, what
/// Spark records for work submitted from a thread or through py4j) says nothing of the user's
/// code; its job's description, when the user set one, does.
pub(crate) struct StageNames {
    descriptions: std::collections::HashMap<i64, String>,
}

/// Call-site files that are the JDK's plumbing, never the user's code.
const PLUMBING: [&str; 6] = [
    "CompletableFuture.java",
    "NativeMethodAccessorImpl.java",
    "DirectMethodHandleAccessor.java",
    "ThreadPoolExecutor.java",
    "ForkJoinTask.java",
    "Thread.java",
];

impl StageNames {
    pub(crate) fn of(report: &Report) -> StageNames {
        let mut descriptions = std::collections::HashMap::new();
        for job in &report.jobs {
            let Some(text) = job.description.as_deref().map(str::trim) else {
                continue;
            };
            if text.is_empty() {
                continue;
            }
            // Spark's UI renders descriptions as HTML (streaming batches are links).
            let text = crate::format::plain_text(text);
            for &id in &job.stage_ids {
                descriptions.entry(id).or_insert_with(|| text.clone());
            }
        }
        StageNames { descriptions }
    }

    fn label(&self, stage_id: i64, attempt_id: i64, name: &str) -> String {
        match self.descriptions.get(&stage_id) {
            Some(description) if is_plumbing(name) => {
                stage_label(stage_id, attempt_id, description, LABEL_CHARS)
            }
            _ => stage_label(stage_id, attempt_id, name, LABEL_CHARS),
        }
    }
}

/// Whether a stage name's call site (`op at File.java:N`) is a JDK plumbing frame.
pub fn is_plumbing(name: &str) -> bool {
    let first = name.lines().next().unwrap_or_default();
    first.rsplit_once(" at ").is_some_and(|(_, place)| {
        let file = place.rsplit(['/', '\\']).next().unwrap_or(place);
        PLUMBING.iter().any(|p| {
            file.strip_prefix(p)
                .is_some_and(|rest| rest.starts_with(':'))
        })
    })
}

/// The stages the charts point the reader at: those named by the highest-ranked finding about
/// particular stages, or, when no finding is, the stages that failed. A finding that names
/// every stage of an application of several (a query-wide one, such as a join strategy over
/// the whole plan) points at nothing in particular, so the next one is taken.
pub(crate) struct Focus {
    /// The finding's rule code, `None` when the focus is the failed stages.
    pub(crate) rule: Option<&'static str>,
    pub(crate) stage_ids: Vec<i64>,
}

impl Focus {
    pub(crate) fn of(report: &Report) -> Focus {
        let mut all: Vec<i64> = report.stages.iter().map(|s| s.stage_id).collect();
        all.sort_unstable();
        all.dedup();
        let particular = |ids: &[i64]| {
            !ids.is_empty() && (all.len() <= 2 || !all.iter().all(|id| ids.contains(id)))
        };
        if let Some(f) = report
            .findings
            .iter()
            .find(|f| particular(&f.finding.scope.stage_ids))
        {
            let mut stage_ids = f.finding.scope.stage_ids.clone();
            let mut seen = std::collections::HashSet::new();
            stage_ids.retain(|id| seen.insert(*id));
            return Focus {
                rule: Some(f.finding.rule),
                stage_ids,
            };
        }
        let mut failed: Vec<i64> = report
            .stages
            .iter()
            .filter(|s| s.status == StageStatus::Failed)
            .map(|s| s.stage_id)
            .collect();
        failed.dedup();
        Focus {
            rule: None,
            stage_ids: failed,
        }
    }

    /// What a marked stage is tagged with on a chart.
    fn tag(&self) -> String {
        self.rule.unwrap_or("failed").to_string()
    }

    /// Which stages are marked and why, for a caption.
    fn describe(&self) -> String {
        let ids: Vec<String> = self.stage_ids.iter().map(i64::to_string).collect();
        let stages = format!(
            "stage{} {}",
            if ids.len() > 1 { "s" } else { "" },
            ids.join(", ")
        );
        match self.rule {
            Some(rule) => {
                format!("{stages}, which the top finding about particular stages ({rule}) names")
            }
            None => format!("{stages}, which failed"),
        }
    }
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
            self.svg = Some(labelled(&buf, self.title));
            self.plot = Some(plot);
        } else {
            self.caption = "This chart could not be drawn.".into();
        }
        self
    }

    /// The tick labels along each numeric axis, as drawn (x first): no two on one axis read
    /// the same.
    pub fn axis_labels(&self) -> Vec<Vec<String>> {
        match &self.plot {
            Some(Plot::Timeline(p)) => vec![p.time.x.labels()],
            Some(Plot::Busy(p)) => vec![p.time.x.labels(), p.y.labels()],
            Some(Plot::Strips(p)) => vec![p.x.labels()],
            Some(Plot::GcBars(p)) => vec![p.x.labels()],
            Some(Plot::SpillBars(p)) => vec![p.x.labels()],
            Some(Plot::MemoryBars(p)) => vec![p.x.labels()],
            Some(Plot::Bars(p)) => vec![p.x.labels()],
            Some(Plot::Nights(p)) => vec![p.y.labels()],
            Some(Plot::DiffTimelines(p)) => vec![p.time.x.labels()],
            None => Vec::new(),
        }
    }

    /// The label of each row of a chart with one row per stage or executor, top row first.
    pub fn row_labels(&self) -> Vec<String> {
        match &self.plot {
            Some(Plot::Timeline(p)) => p.bars.iter().map(|b| b.label.clone()).collect(),
            Some(Plot::Strips(p)) => p.strips.iter().map(|s| s.label.clone()).collect(),
            Some(Plot::GcBars(p)) => p.rows.iter().map(|r| r.0.clone()).collect(),
            Some(Plot::SpillBars(p)) => p.rows.iter().map(|r| r.label.clone()).collect(),
            Some(Plot::MemoryBars(p)) => p.rows.iter().map(|r| r.label.clone()).collect(),
            Some(Plot::Bars(p)) => p.rows.iter().map(|r| r.label.clone()).collect(),
            Some(Plot::DiffTimelines(p)) => p.labels.clone(),
            Some(Plot::Busy(_) | Plot::Nights(_)) | None => Vec::new(),
        }
    }

    /// The stages the chart marks (outlined, shaded or tagged), in row order, each once.
    pub fn marked_stages(&self) -> Vec<i64> {
        let mut ids: Vec<i64> = match &self.plot {
            Some(Plot::Timeline(p)) => p
                .bars
                .iter()
                .filter(|b| b.marked)
                .map(|b| b.stage_id)
                .collect(),
            Some(Plot::Strips(p)) => p
                .strips
                .iter()
                .filter(|s| s.marked)
                .map(|s| s.stage_id)
                .collect(),
            Some(Plot::SpillBars(p)) => p
                .rows
                .iter()
                .filter(|r| r.marked)
                .map(|r| r.stage_id)
                .collect(),
            _ => Vec::new(),
        };
        let mut seen = std::collections::HashSet::new();
        ids.retain(|id| seen.insert(*id));
        ids
    }

    /// The same chart drawn [`NARROW_WIDTH`] wide, for a phone; `None` when there is no chart
    /// or it could not be drawn.
    pub fn narrow_svg(&self) -> Option<String> {
        let plot = self.plot.as_ref()?;
        let mut buf = String::new();
        let ok = {
            let root = SVGBackend::with_string(&mut buf, (NARROW_WIDTH, plot.height()))
                .into_drawing_area();
            plot.draw(&root).is_ok()
        };
        ok.then(|| labelled(&buf, self.title))
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

/// plotters' SVG with what a screen reader announces: `role="img"` and an `aria-label` on the
/// `<svg>`, and a `<title>` (which browsers also show on hover) as its first child.
fn labelled(svg: &str, title: &str) -> String {
    let title = crate::format::escape(title);
    let Some(rest) = svg.strip_prefix("<svg ") else {
        return svg.to_string();
    };
    let Some(end) = rest.find('>') else {
        return svg.to_string();
    };
    format!(
        "<svg role=\"img\" aria-label=\"{title}\" {}>\n<title>{title}</title>{}",
        &rest[..end],
        &rest[end + 1..]
    )
}

/// An axis of `n` categories, category `i` spanning `i..i + 1`, labelled at the centre of
/// every few categories so that at most about `max_labels` labels are drawn and none overlap.
/// (plotters' own `WithKeyPoints` cannot take a label formatter.)
struct Categories {
    n: f64,
    ticks: Vec<f64>,
}

/// A horizontal bar chart as tall as its `n` rows of `row` pixels need, plus its title and
/// axis: one bar is a short chart, not a tall empty one.
fn bar_chart_height(n: usize, row: u32) -> u32 {
    (110 + row * n as u32).clamp(150, 1300)
}

impl Categories {
    /// Rows of a vertical axis, row 0 drawn at the top (at `n - 1`): labels count from there,
    /// so the first row is always labelled.
    fn rows(n: usize, max_labels: usize) -> Categories {
        let step = n.div_ceil(max_labels.max(1)).max(1);
        Categories {
            n: n.max(1) as f64,
            ticks: (0..n)
                .step_by(step)
                .map(|i| (n - 1 - i) as f64 + 0.5)
                .collect(),
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
        bold_only(hint, &self.ticks)
    }

    fn range(&self) -> std::ops::Range<f64> {
        0.0..self.n
    }
}

#[cfg(test)]
pub(crate) fn report_of(app: &sparkdiag_model::Application) -> Report {
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
    let facts = sparkdiag_facts::Facts::of(app);
    let replayed = sparkdiag_whatif::replayed(app, &facts, Vec::new());
    sparkdiag_analysis::assemble::report(&[], &source, app, &facts, replayed, &Default::default())
}

/// A sparkline of `values` (two or more), 100 by 20 pixels, the last point marked, `label`
/// as its title: drawn on plotters' SVG backend alone, with no chart around it, so a thousand
/// such rows cost a few hundred bytes each.
pub fn sparkline(values: &[i64], label: &str) -> String {
    if values.len() < 2 {
        return String::new();
    }
    let low = values.iter().copied().min().unwrap_or(0);
    let high = values.iter().copied().max().unwrap_or(0);
    let span = (high - low).max(1) as f64;
    let step = 96.0 / (values.len() - 1) as f64;
    let point = |i: usize, v: i64| {
        (
            (2.0 + i as f64 * step).round() as i32,
            (18.0 - (v - low) as f64 / span * 16.0).round() as i32,
        )
    };
    let points: Vec<(i32, i32)> = values
        .iter()
        .enumerate()
        .map(|(i, &v)| point(i, v))
        .collect();
    let last = points[points.len() - 1];
    let mut buf = String::new();
    let drawn = {
        let root = SVGBackend::with_string(&mut buf, (100, 20)).into_drawing_area();
        root.draw(&PathElement::new(points, BLUE_.stroke_width(1)))
            .and_then(|()| root.draw(&Circle::new(last, 2, BLUE_.filled())))
            .and_then(|()| root.present())
            .is_ok()
    };
    if !drawn {
        return String::new();
    }
    labelled(&buf, label).replacen("<svg ", "<svg class=\"spark\" ", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let app = sparkdiag_model::Application::default();
        let report = report_of(&app);
        for chart in render_all(&report, &sparkdiag_analysis::assemble::view_data(&app)) {
            assert!(chart.svg.is_none(), "{}", chart.name);
            assert!(!chart.caption.is_empty(), "{}", chart.name);
        }
    }

    /// An application of completed stages, built from events as the reader would (so new
    /// model fields need no change here), with the given (memory, disk) spill per stage.
    fn app_of(spills: &[(i64, i64)], end_ms: Option<i64>) -> sparkdiag_model::Application {
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
        let report = report_of(&app);
        let chart = spill(&report, &Focus::of(&report), &StageNames::of(&report));
        assert!(chart.caption.contains("logarithmic"), "{}", chart.caption);
        let svg = chart.svg.expect("drawn");
        // Only the stages that spilled get a label.
        assert!(
            svg.contains(">\n0.0 &lt;stage 0&gt;\n<") && svg.contains(">\n2.0 &lt;stage 2&gt;\n<"),
            "{svg}"
        );
        assert!(!svg.contains("stage 1&gt;"));

        let even = report_of(&app_of(&[(2000, 1000)], None));
        assert!(
            !spill(&even, &Focus::of(&even), &StageNames::of(&even))
                .caption
                .contains("logarithmic")
        );
    }

    #[test]
    fn stages_without_tasks_still_get_a_timeline() {
        let app = app_of(&[(0, 0), (0, 0)], Some(5000));
        let report = report_of(&app);
        let charts = render_all(&report, &sparkdiag_analysis::assemble::view_data(&app));
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
        for chart in render_all(&report, &sparkdiag_analysis::assemble::view_data(&app)) {
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
        let timeline = &render_all(&report, &sparkdiag_analysis::assemble::view_data(&app))[0];
        assert!(timeline.png().is_some(), "the timeline has data");
    }

    #[test]
    fn jdk_plumbing_call_sites_are_told_apart_from_the_users() {
        assert!(is_plumbing(
            "$anonfun$withThreadLocalCaptured$1 at CompletableFuture.java:1768"
        ));
        assert!(is_plumbing("showString at NativeMethodAccessorImpl.java:0"));
        assert!(!is_plumbing("collect at /a/b/workload.py:12"));
        assert!(!is_plumbing("run at MyThread.java:3"));
        assert!(!is_plumbing("count at Thread.javadoc"));
    }
}
