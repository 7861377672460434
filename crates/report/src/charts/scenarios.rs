//! The what-if section's chart: the replay's predicted wall clock at each core count, one
//! horizontal bar per count, today's darker, each bar labelled with its time.

use super::*;
use sparkdiag_whatif::{WhatIf, cores};

/// Predicted wall clock by executor cores, for the what-if section; no chart without a core
/// scenario.
pub fn scenario_chart(w: &WhatIf) -> Chart {
    let mut chart = Chart::empty("whatif-cores", "Predicted wall clock by executor cores");
    let rows: Vec<ScenarioRow> = w
        .scenarios
        .iter()
        .filter(|s| !s.is_a_fix())
        .map(|s| ScenarioRow {
            label: cores(s.cores),
            seconds: s.predicted_ms.max(0) as f64 / 1000.0,
            today: s.cores == w.cores_today,
        })
        .collect();
    if rows.is_empty() {
        chart.caption = "The replay ran no core scenario.".into();
        return chart;
    }
    chart.caption = "The replay's wall clock with each number of executor cores, the log's own \
                     tasks kept; today's cores are the dark bar."
        .into();
    // Room past the longest bar for its label.
    let longest = rows.iter().map(|r| r.seconds).fold(0.001, f64::max);
    chart.drawn(Plot::Scenarios(ScenarioBars {
        x: Axis::linear(0.0, longest * 1.25, 8, Unit::Seconds),
        rows,
    }))
}

pub(super) struct ScenarioRow {
    pub(super) label: String,
    seconds: f64,
    today: bool,
}

/// One bar per core scenario, top row first.
pub(super) struct ScenarioBars {
    pub(super) rows: Vec<ScenarioRow>,
    pub(super) x: Axis,
}

impl ScenarioBars {
    pub(super) fn height(&self) -> u32 {
        bar_chart_height(self.rows.len(), 28)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let ScenarioBars { rows, x } = self;
        let n = rows.len();
        let mut c = rows_chart(
            root,
            x,
            RowsLayout {
                caption: "Predicted wall clock by executor cores",
                x_desc: "predicted wall clock (s)",
                y_desc: "executor cores",
                labels: rows.iter().map(|r| r.label.as_str()).collect(),
                label_width: label_area(rows.iter().map(|r| r.label.as_str())),
                visible: n,
            },
        )?;
        for (i, r) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let colour = if r.today { INK } else { GREY };
            c.draw_series([Rectangle::new(
                [(0.0, y + 0.2), (r.seconds, y + 0.8)],
                colour.filled(),
            )])?;
            c.draw_series([Text::new(
                format!(
                    " {}{}",
                    duration((r.seconds * 1000.0).round() as i64),
                    if r.today { " (today)" } else { "" }
                ),
                (r.seconds, y + 0.5),
                (FONT, 12)
                    .into_font()
                    .color(&INK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            )])?;
        }
        Ok(())
    }
}
