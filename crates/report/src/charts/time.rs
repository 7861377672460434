//! Time axes in seconds since the application's start, its clock jumps left out: the time
//! before and after a jump are drawn side by side, a break cut through the plot where the
//! jump was, labelled with how long it was, so a run of seconds whose clock jumped years is
//! drawn over its seconds, not squashed into a sliver of an axis that reads years.

use super::*;
use sparkdiag_contract::ClockBreak;

/// A time axis of the application's own time, with its breaks.
#[derive(Clone)]
pub(super) struct TimeAxis {
    pub(super) x: Axis,
    /// The seconds of application time the chart covers, from its origin: where the data
    /// ends, which the axis's top tick may pass.
    pub(super) span_s: f64,
    pub(super) cuts: Vec<Cut>,
}

/// Where the chart is cut for a clock jump.
#[derive(Clone)]
pub(super) struct Cut {
    pub(super) at: ClockBreak,
    /// The rows it cuts (`from..to` on the y axis, for a chart of several runs), else all.
    pub(super) rows: Option<(f64, f64)>,
    /// Whose clock jumped ("AFTER"), on a chart of several runs.
    pub(super) run: Option<&'static str>,
}

/// Pixels of plot a break cuts out, either side of where the jump was.
const BREAK_HALF_WIDTH: i32 = 4;

impl TimeAxis {
    /// An axis from `first_s` (0, or earlier for a stage submitted before the application
    /// start) to `span_s`, breaking at each of `breaks`.
    pub(super) fn new(first_s: f64, span_s: f64, breaks: Vec<ClockBreak>) -> TimeAxis {
        let cuts = breaks
            .into_iter()
            .map(|at| Cut {
                at,
                rows: None,
                run: None,
            })
            .collect();
        TimeAxis::with_cuts(first_s, span_s, cuts)
    }

    pub(super) fn with_cuts(first_s: f64, span_s: f64, cuts: Vec<Cut>) -> TimeAxis {
        TimeAxis {
            x: Axis::linear(first_s, span_s, 10, Unit::Seconds),
            span_s,
            cuts,
        }
    }

    /// The axis title: what the ticks count.
    pub(super) fn description(&self) -> &'static str {
        match self.cuts.len() {
            0 => "seconds since application start",
            1 => "seconds since application start, its clock jump left out",
            _ => "seconds since application start, its clock jumps left out",
        }
    }

    /// A sentence for the caption saying what the breaks are, or nothing without any.
    pub(super) fn caption(&self) -> String {
        if self.cuts.is_empty() {
            return String::new();
        }
        let jumps: Vec<String> = self
            .cuts
            .iter()
            .map(|c| &c.at)
            .map(|b| match b.at_ms {
                0 => format!("{} right at the start", jump_length(b.jumped_ms)),
                at => format!(
                    "{} at {} into the run",
                    jump_length(b.jumped_ms),
                    duration(at)
                ),
            })
            .collect();
        format!(
            " The log's clock jumped {} with no event between: the axis leaves {} out (the \
             cut{} through the chart), so it spans the application's own {}.",
            jumps.join(" and "),
            if jumps.len() == 1 { "that" } else { "them" },
            if jumps.len() == 1 { "" } else { "s" },
            duration((self.span_s * 1000.0).round() as i64),
        )
    }

    /// Pixels to keep free above the plot for the breaks' labels.
    pub(super) fn top_room(&self) -> u32 {
        if self.cuts.is_empty() { 0 } else { 20 }
    }

    /// Cuts the plot of `c` at each break: a white band edged with zig-zags from the top of
    /// the plot (or of the rows it cuts) through its x axis (or to the bottom of those rows),
    /// the jump's length over the plot.
    pub(super) fn draw_breaks<DB: DrawingBackend, Y: Ranged<ValueType = f64>>(
        &self,
        root: &DrawingArea<DB, Shift>,
        c: &ChartContext<'_, DB, Cartesian2d<Axis, Y>>,
    ) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let (xr, yr) = c.plotting_area().get_pixel_range();
        let (base_x, base_y) = root.get_base_pixel();
        let (plot_top, plot_bottom) = (yr.start - base_y, yr.end - base_y + 6);
        let font = (FONT, 12).into_font().color(&INK);
        for cut in &self.cuts {
            let b = &cut.at;
            let x_s = b.at_ms as f64 / 1000.0;
            let (top, bottom) = cut.rows.map_or((plot_top, plot_bottom), |(from, to)| {
                let y = |row: f64| c.backend_coord(&(x_s, row)).1 - base_y;
                (y(to), y(from))
            });
            let at = self.x.map(&x_s, (xr.start, xr.end)) - base_x;
            let (left, right) = (at - BREAK_HALF_WIDTH, at + BREAK_HALF_WIDTH);
            root.draw(&Rectangle::new(
                [(left, top), (right, bottom)],
                WHITE.filled(),
            ))?;
            for edge in [left, right] {
                let zigzag: Vec<(i32, i32)> = (top..=bottom)
                    .step_by(5)
                    .enumerate()
                    .map(|(i, y)| (edge + if i % 2 == 0 { -2 } else { 2 }, y))
                    .collect();
                root.draw(&PathElement::new(zigzag, GREY.stroke_width(1)))?;
            }
            // Above the cut, in the room kept over the plot, inside the plot's width.
            let text = format!(
                "{}lock jumped {}: left out",
                cut.run.map_or("c".to_string(), |run| format!("{run}'s c")),
                jump_length(b.jumped_ms)
            );
            let (width, _) = root.estimate_text_size(&text, &font)?;
            let half = width as i32 / 2 + 2;
            let (plot_left, plot_right) = (xr.start - base_x, xr.end - base_x);
            let centre = at.min(plot_right - half).max(plot_left + half);
            root.draw(&Text::new(
                text,
                (centre, plot_top - self.top_room() as i32 / 2),
                font.clone().pos(Pos::new(HPos::Center, VPos::Center)),
            ))?;
        }
        Ok(())
    }
}

/// How long a clock jump was, in days as the source's warning says it ("1918.1 days").
fn jump_length(ms: i64) -> String {
    format!("{:.1} days", ms as f64 / 86_400_000.0)
}

impl Chart {
    /// The seconds of the application's time a chart with a time axis covers (its clock jumps
    /// left out), `None` for a chart without one.
    pub fn time_span_s(&self) -> Option<f64> {
        self.time_axis().map(|t| t.span_s)
    }

    /// Where the chart's time axis breaks for a clock jump, in time order.
    pub fn clock_breaks(&self) -> Vec<ClockBreak> {
        self.time_axis()
            .map_or_else(Vec::new, |t| t.cuts.iter().map(|c| c.at).collect())
    }

    fn time_axis(&self) -> Option<&TimeAxis> {
        match &self.plot {
            Some(Plot::Timeline(p)) => Some(&p.time),
            Some(Plot::Busy(p)) => Some(&p.time),
            Some(Plot::DiffTimelines(p)) => Some(&p.time),
            _ => None,
        }
    }
}
