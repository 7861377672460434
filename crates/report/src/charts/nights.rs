//! The fleet index's charts: one vertical bar per night (runtime, findings), each labelled with
//! its value when there are few, the latest always; dates along the bottom.

use super::*;

/// Widest a night's bar is drawn, in pixels: with one or two nights a bar is a bar, not the
/// whole chart.
pub(crate) const MAX_NIGHT_BAR: f64 = 48.0;

/// Nights whose bars all say their value; with more, only the latest does.
const LABELLED_NIGHTS: usize = 12;

/// Pixels between the chart's left edge and the plot: margin and the y label area.
const NIGHT_PLOT_LEFT: u32 = 12 + 64;
const NIGHT_PLOT_RIGHT: u32 = 24;

/// A bar per night of `values` (`(date, value)`, oldest first) on a round y axis in `unit`;
/// `label` writes a value as its bar says it, `whole` says the values are counts.
pub fn night_bars(
    title: &'static str,
    unit: &str,
    values: &[(String, f64)],
    whole: bool,
    label: &dyn Fn(f64) -> String,
) -> Chart {
    let mut chart = Chart::empty("nights", title);
    if values.is_empty() {
        chart.caption = "No night has been recorded yet.".into();
        return chart;
    }
    let max = values.iter().map(|v| v.1).fold(0.0f64, f64::max);
    // Headroom above the tallest bar for its value label.
    let reach = if max > 0.0 { max * 1.12 } else { 1.0 };
    let y = Axis::linear(
        0.0,
        reach,
        4,
        if whole { Unit::Count } else { Unit::Seconds },
    );
    chart.drawn(Plot::Nights(NightBars {
        title,
        unit: unit.to_string(),
        dates: values.iter().map(|v| v.0.clone()).collect(),
        values: values.iter().map(|v| v.1).collect(),
        labels: values.iter().map(|v| label(v.1)).collect(),
        y,
    }))
}

pub(super) struct NightBars {
    title: &'static str,
    unit: String,
    dates: Vec<String>,
    values: Vec<f64>,
    /// Each value as its bar says it.
    labels: Vec<String>,
    pub(super) y: Axis,
}

impl NightBars {
    pub(super) fn height(&self) -> u32 {
        240
    }

    /// Slots on the x axis: one a night, and empty ones to the right when so few nights would
    /// draw bars wider than [`MAX_NIGHT_BAR`].
    fn slots(&self) -> usize {
        let plot = f64::from(WIDTH - NIGHT_PLOT_LEFT - NIGHT_PLOT_RIGHT);
        let fewest = (plot * 0.7 / MAX_NIGHT_BAR).ceil() as usize;
        self.values.len().max(fewest)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let n = self.values.len();
        let label_every = (n / 10).max(1);
        let labelled: Vec<usize> = (0..n)
            .filter(|i| i % label_every == 0 || i + 1 == n)
            .collect();
        let x = Categories {
            n: self.slots() as f64,
            ticks: labelled.iter().map(|&i| i as f64 + 0.5).collect(),
        };
        let mut c = ChartBuilder::on(root)
            .caption(self.title, (FONT, 16))
            .margin(12)
            .margin_right(NIGHT_PLOT_RIGHT)
            .x_label_area_size(30)
            .y_label_area_size(NIGHT_PLOT_LEFT - 12)
            .build_cartesian_2d(x, self.y.clone())?;
        c.configure_mesh()
            .disable_x_mesh()
            .bold_line_style(LIGHT)
            .light_line_style(TRANSPARENT)
            .x_label_formatter(&|v| {
                let date = self.dates.get(v.floor().max(0.0) as usize);
                date.map_or(String::new(), |d| d.get(5..).unwrap_or(d).to_string())
            })
            .y_label_formatter(&|v| self.y.label(*v))
            .y_desc(self.unit.as_str())
            .label_style((FONT, 12))
            .axis_desc_style((FONT, 13))
            .draw()?;
        for (i, v) in self.values.iter().enumerate() {
            let x = i as f64;
            c.draw_series([Rectangle::new(
                [(x + 0.15, 0.0), (x + 0.85, *v)],
                BLUE_.filled(),
            )])?;
            // Every bar says its value when there are few; with many, the latest night does.
            if n <= LABELLED_NIGHTS || i + 1 == n {
                c.draw_series([Text::new(
                    self.labels[i].clone(),
                    (x + 0.5, *v),
                    (FONT, 12)
                        .into_font()
                        .color(&INK)
                        .pos(Pos::new(HPos::Center, VPos::Bottom)),
                )])?;
            }
        }
        Ok(())
    }
}
