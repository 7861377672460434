//! Memory and disk spill per stage attempt: a pair of horizontal bars per stage, the chart as
//! tall as its bars need.

use super::*;

/// A bar chart switches to a log scale when its values span at least this factor.
const LOG_SCALE_SPAN: f64 = 100.0;

pub(super) struct SpillRow {
    pub(super) stage_id: i64,
    pub(super) label: String,
    memory: f64,
    disk: f64,
    pub(super) marked: bool,
}

pub(super) fn spill(report: &Report, focus: &Focus, names: &StageNames) -> Chart {
    let mut chart = Chart::empty("spill", "Spill per stage");
    let mut rows: Vec<SpillRow> = report
        .stages
        .iter()
        .filter(|s| s.memory_spill_bytes > 0 || s.disk_spill_bytes > 0)
        .map(|s| SpillRow {
            stage_id: s.stage_id,
            label: names.label(s.stage_id, s.attempt_id, &s.name),
            memory: s.memory_spill_bytes as f64,
            disk: s.disk_spill_bytes as f64,
            marked: focus.rule.is_some() && focus.stage_ids.contains(&s.stage_id),
        })
        .collect();
    if rows.is_empty() {
        chart.caption =
            "No stage spilled: memory and disk spill are zero in every stage attempt.".into();
        return chart;
    }
    let total = rows.len();
    if total > MAX_CATEGORY_BARS {
        rows.sort_by(|a, b| (b.memory + b.disk).total_cmp(&(a.memory + a.disk)));
        rows.truncate(MAX_CATEGORY_BARS);
    }
    let values = rows
        .iter()
        .flat_map(|r| [r.memory, r.disk])
        .filter(|v| *v > 0.0);
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
    // Room right of the longest bar for the legend.
    let x = if log {
        Axis::log_bytes(lo / 2.0, hi * 8.0)
    } else {
        Axis::linear(0.0, hi * 1.3, 6, Unit::Bytes)
    };
    chart.drawn(Plot::SpillBars(SpillBars {
        rows,
        x,
        tag: focus.tag(),
    }))
}

/// Memory and disk spill per stage attempt, in bytes.
pub(super) struct SpillBars {
    pub(super) rows: Vec<SpillRow>,
    pub(super) x: Axis,
    tag: String,
}

impl SpillBars {
    pub(super) fn height(&self) -> u32 {
        bar_chart_height(self.rows.len(), 40)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let SpillBars { rows, x, tag } = self;
        let n = rows.len();
        let floor = x.range().start;
        let mut c = rows_chart(
            root,
            x,
            RowsLayout {
                caption: "Spill per stage",
                x_desc: "bytes spilled",
                y_desc: "stage.attempt",
                labels: rows.iter().map(|r| r.label.as_str()).collect(),
                label_width: label_area(rows.iter().map(|r| r.label.as_str())),
                visible: n,
                top_room: 0,
            },
        )?;
        // Memory spill in the upper half of each row, disk spill in the lower.
        for (offset, colour, label, disk) in [
            (0.52, BLUE_, "memory spill", false),
            (0.14, AMBER, "disk spill", true),
        ] {
            c.draw_series(rows.iter().enumerate().filter_map(|(i, r)| {
                let v = if disk { r.disk } else { r.memory };
                (v > 0.0).then(|| {
                    let y = (n - 1 - i) as f64 + offset;
                    Rectangle::new([(floor, y), (v, y + 0.34)], colour.filled())
                })
            }))?
            .label(label)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], colour.filled()));
        }
        for (i, r) in rows.iter().enumerate().filter(|(_, r)| r.marked) {
            c.draw_series([Text::new(
                format!(" ◀ {tag}"),
                (r.memory.max(r.disk), (n - 1 - i) as f64 + 0.5),
                (FONT, 12)
                    .into_font()
                    .color(&INK)
                    .pos(Pos::new(HPos::Left, VPos::Center)),
            )])?;
        }
        legend(&mut c, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
}
