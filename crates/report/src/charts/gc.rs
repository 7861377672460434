//! GC time as a share of task run time, per executor: one horizontal bar each, the chart as
//! tall as its bars need.

use super::*;

/// The Spark UI shows an executor's GC time red above a tenth of its task time.
const GC_WARN_PERCENT: f64 = 10.0;

pub(super) fn gc_share(report: &Report) -> Chart {
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
        "JVM garbage-collection time as a share of each executor's task run time. Bars past the \
         dashed {GC_WARN_PERCENT:.0}% line (where the Spark UI turns GC time red) are amber.{}",
        if total > MAX_CATEGORY_BARS {
            format!(" The {MAX_CATEGORY_BARS} highest of {total} executors are shown.")
        } else {
            String::new()
        }
    );
    // Room past the longest bar for its value and the legend-free threshold line.
    let top = rows
        .iter()
        .map(|r| r.1)
        .fold(GC_WARN_PERCENT * 1.3, f64::max)
        * 1.15;
    chart.drawn(Plot::GcBars(GcBars {
        rows,
        x: Axis::linear(0.0, top, 8, Unit::Percent),
    }))
}

/// GC share per executor, in percent.
pub(super) struct GcBars {
    pub(super) rows: Vec<(String, f64)>,
    pub(super) x: Axis,
}

impl GcBars {
    pub(super) fn height(&self) -> u32 {
        bar_chart_height(self.rows.len(), 26)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let GcBars { rows, x } = self;
        let n = rows.len();
        let mut c = rows_chart(
            root,
            x,
            RowsLayout {
                caption: "GC share per executor",
                x_desc: "GC time / task run time (%)",
                y_desc: "executor",
                labels: rows.iter().map(|r| r.0.as_str()).collect(),
                label_width: 90,
                visible: n,
                top_room: 0,
            },
        )?;
        for (i, (_, share)) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            let colour = if *share > GC_WARN_PERCENT {
                AMBER
            } else {
                BLUE_
            };
            c.draw_series([Rectangle::new(
                [(0.0, y + 0.2), (*share, y + 0.8)],
                colour.filled(),
            )])?;
            c.draw_series([Text::new(
                format!(" {}", crate::format::share(*share / 100.0, 1)),
                (*share, y + 0.5),
                (FONT, 12)
                    .into_font()
                    .color(&INK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            )])?;
        }
        c.draw_series(DashedLineSeries::new(
            [(GC_WARN_PERCENT, 0.0), (GC_WARN_PERCENT, n as f64)],
            6,
            4,
            GREY.stroke_width(1),
        ))?;
        Ok(())
    }
}
