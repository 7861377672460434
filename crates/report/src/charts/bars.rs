//! Horizontal bars of time, one per labelled row, each with its time written beside it: what
//! the what-if's core scenarios and `diff`'s runtimes and matched queries draw.

use super::*;

/// One row of a [`TimeBars`] chart.
pub(super) struct TimeBar {
    pub(super) label: String,
    pub(super) ms: i64,
    pub(super) colour: RGBColor,
    /// Drawn pale with its outline: an estimate beside measurements.
    pub(super) pale: bool,
    /// Written after the bar's time: " (today)".
    pub(super) note: &'static str,
}

pub(super) struct TimeBars {
    pub(super) caption: &'static str,
    pub(super) x_desc: &'static str,
    pub(super) y_desc: &'static str,
    pub(super) rows: Vec<TimeBar>,
    pub(super) x: Axis,
}

impl TimeBars {
    /// Bars on an axis with room past the longest for its label.
    pub(super) fn new(
        caption: &'static str,
        x_desc: &'static str,
        y_desc: &'static str,
        rows: Vec<TimeBar>,
    ) -> TimeBars {
        let longest = rows.iter().map(|r| r.ms.max(0)).max().unwrap_or(0) as f64 / 1000.0;
        TimeBars {
            caption,
            x_desc,
            y_desc,
            x: Axis::linear(0.0, longest.max(0.001) * 1.25, 8, Unit::Seconds),
            rows,
        }
    }

    pub(super) fn height(&self) -> u32 {
        bar_chart_height(self.rows.len(), 28)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let n = self.rows.len();
        let mut c = rows_chart(
            root,
            &self.x,
            RowsLayout {
                caption: self.caption,
                x_desc: self.x_desc,
                y_desc: self.y_desc,
                labels: self.rows.iter().map(|r| r.label.as_str()).collect(),
                label_width: label_area(self.rows.iter().map(|r| r.label.as_str())),
                visible: n,
                top_room: 0,
            },
        )?;
        for (i, r) in self.rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let seconds = r.ms.max(0) as f64 / 1000.0;
            let extent = [(0.0, y + 0.2), (seconds, y + 0.8)];
            if r.pale {
                c.draw_series([Rectangle::new(extent, r.colour.mix(0.3).filled())])?;
                c.draw_series([Rectangle::new(extent, r.colour.stroke_width(1))])?;
            } else {
                c.draw_series([Rectangle::new(extent, r.colour.filled())])?;
            }
            c.draw_series([Text::new(
                format!(" {}{}", duration(r.ms), r.note),
                (seconds, y + 0.5),
                (FONT, 12)
                    .into_font()
                    .color(&INK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            )])?;
        }
        Ok(())
    }
}
