//! Memory peaks against their limits, per executor and the driver: the heap each JVM reached
//! against the heap it was given and, where process-tree metrics were on, the whole process
//! tree's RSS against the container (heap plus overhead, off-heap and Python memory).

use super::*;

/// A peak above this share of its limit is drawn amber: little headroom left.
const TIGHT_SHARE: f64 = 0.9;

pub(super) fn memory_peaks(report: &Report) -> Chart {
    let mut chart = Chart::empty("memory-peaks", "Memory peaks against limits");
    let Some(m) = &report.memory else {
        chart.caption =
            "The log has no executor memory metrics (Spark 3.0 and later write them).".into();
        return chart;
    };
    let container = m.limits.container_bytes() as f64;
    let mut rows: Vec<MemoryRow> = m
        .executors
        .iter()
        .filter_map(|e| {
            Some(MemoryRow {
                label: truncate(&e.executor_id, 12),
                heap: e.jvm_heap_bytes? as f64,
                heap_limit: e.heap_limit_bytes as f64,
                rss: e.process_tree_jvm_rss_bytes.map(|jvm| {
                    (jvm + e.process_tree_python_rss_bytes.unwrap_or(0)
                        + e.process_tree_other_rss_bytes.unwrap_or(0)) as f64
                }),
                container: (e.executor_id != "driver").then_some(container),
            })
        })
        .collect();
    if rows.is_empty() {
        chart.caption = "No executor reported a heap peak.".into();
        return chart;
    }
    let total = rows.len();
    if total > MAX_CATEGORY_BARS {
        rows.sort_by(|a, b| b.heap.total_cmp(&a.heap));
        rows.truncate(MAX_CATEGORY_BARS);
    }
    chart.caption = format!(
        "Each JVM's peak heap (blue, amber above {:.0}% of its limit) over the heap it was given \
         (grey), and, where process-tree metrics were on, the process tree's peak RSS (dark) \
         against the container limit (dashed).{}",
        TIGHT_SHARE * 100.0,
        if total > MAX_CATEGORY_BARS {
            format!(" The {MAX_CATEGORY_BARS} highest of {total} are shown.")
        } else {
            String::new()
        }
    );
    let top = rows
        .iter()
        .flat_map(|r| {
            [
                r.heap,
                r.heap_limit,
                r.rss.unwrap_or(0.0),
                r.container.unwrap_or(0.0),
            ]
        })
        .fold(1.0, f64::max)
        * 1.1;
    chart.drawn(Plot::MemoryBars(MemoryBars {
        rows,
        x: Axis::linear(0.0, top, 6, Unit::Bytes),
    }))
}

pub(super) struct MemoryRow {
    pub(super) label: String,
    heap: f64,
    heap_limit: f64,
    rss: Option<f64>,
    container: Option<f64>,
}

pub(super) struct MemoryBars {
    pub(super) rows: Vec<MemoryRow>,
    pub(super) x: Axis,
}

impl MemoryBars {
    pub(super) fn height(&self) -> u32 {
        bar_chart_height(self.rows.len(), 40)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let MemoryBars { rows, x } = self;
        let n = rows.len();
        let mut c = rows_chart(
            root,
            x,
            RowsLayout {
                caption: "Memory peaks against limits",
                x_desc: "bytes",
                y_desc: "executor",
                labels: rows.iter().map(|r| r.label.as_str()).collect(),
                label_width: 90,
                visible: n,
                top_room: 0,
            },
        )?;
        for (i, r) in rows.iter().enumerate() {
            let y = (n - 1 - i) as f64;
            c.draw_series([Rectangle::new(
                [(0.0, y + 0.5), (r.heap_limit, y + 0.85)],
                LIGHT.filled(),
            )])?;
            let colour = if r.heap > TIGHT_SHARE * r.heap_limit {
                AMBER
            } else {
                BLUE_
            };
            c.draw_series([Rectangle::new(
                [(0.0, y + 0.5), (r.heap, y + 0.85)],
                colour.filled(),
            )])?;
            c.draw_series([Text::new(
                format!(
                    " heap {}",
                    crate::format::share(r.heap / r.heap_limit.max(1.0), 0)
                ),
                (r.heap_limit.max(r.heap), y + 0.67),
                (FONT, 11)
                    .into_font()
                    .color(&INK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            )])?;
            if let Some(rss) = r.rss {
                c.draw_series([Rectangle::new(
                    [(0.0, y + 0.15), (rss, y + 0.42)],
                    INK.mix(0.7).filled(),
                )])?;
            }
            if let (Some(limit), Some(_)) = (r.container, r.rss) {
                c.draw_series(DashedLineSeries::new(
                    [(limit, y + 0.1), (limit, y + 0.9)],
                    4,
                    3,
                    GREY.stroke_width(1),
                ))?;
            }
        }
        Ok(())
    }
}
