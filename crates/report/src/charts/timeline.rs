//! The stage timeline: one bar per stage attempt on a time axis, the stages the top finding
//! names outlined and tagged with its rule.

use super::*;

pub(super) struct Bar {
    pub(super) stage_id: i64,
    pub(super) label: String,
    start: f64,
    end: f64,
    status: StageStatus,
    /// Running when the log ended: drawn to the end of the log.
    open: bool,
    /// Named by the focus finding (or failed, when no finding names a stage).
    pub(super) marked: bool,
}

pub(super) fn stage_timeline(
    report: &Report,
    view: &ViewData,
    focus: &Focus,
    names: &StageNames,
) -> Chart {
    let mut chart = Chart::empty("stage-timeline", "Stage timeline");
    let (Some(_), Some(end)) = (view.origin_ms, view.horizon_ms) else {
        chart.caption = "No stage was submitted: there is nothing to place on a timeline.".into();
        return chart;
    };
    // Seconds since the start on the charts' clock, which leaves the clock jumps out.
    let secs = |ms: i64| view.chart_ms(ms).unwrap_or(0) as f64 / 1000.0;
    let mut bars: Vec<Bar> = report
        .stages
        .iter()
        .filter_map(|s| {
            let start = s.submission_ms?;
            let stop = s.completion_ms.unwrap_or(end).max(start);
            Some(Bar {
                stage_id: s.stage_id,
                label: names.label(s.stage_id, s.attempt_id, &s.name),
                start: secs(start),
                end: secs(stop),
                status: s.status,
                open: s.completion_ms.is_none(),
                marked: focus.stage_ids.contains(&s.stage_id),
            })
        })
        .collect();
    if bars.is_empty() {
        chart.caption = "No stage was submitted: there is nothing to place on a timeline.".into();
        return chart;
    }
    let total = bars.len();
    if total > MAX_STAGE_BARS {
        // The marked stages stay whatever their length: they are why the reader is looking.
        bars.sort_by(|a, b| {
            b.marked
                .cmp(&a.marked)
                .then((b.end - b.start).total_cmp(&(a.end - a.start)))
        });
        bars.truncate(MAX_STAGE_BARS);
    }
    bars.sort_by(|a, b| a.start.total_cmp(&b.start));
    let span = bars
        .iter()
        .map(|b| b.end)
        .fold(secs(end), f64::max)
        .max(0.001);
    let marked = bars.iter().any(|b| b.marked);
    // A stage submitted before the application start (clock skew between hosts) widens the
    // axis rather than leaving the chart.
    let first = bars.iter().map(|b| b.start).fold(0.0, f64::min);
    let time = TimeAxis::new(first, span, view.chart_breaks());
    chart.caption = format!(
        "One bar per stage attempt, from submission to completion, in seconds since the \
         application started. Red bars failed; amber bars were still running when the log \
         ended. Gaps between bars are time when no stage ran: the driver was working alone.{}{}{}",
        if marked {
            format!(" Outlined and tagged: {}.", focus.describe())
        } else {
            String::new()
        },
        if total > MAX_STAGE_BARS {
            format!(" The {MAX_STAGE_BARS} longest of {total} stage attempts are shown.")
        } else {
            String::new()
        },
        time.caption()
    );
    chart.drawn(Plot::Timeline(Timeline {
        bars,
        time,
        tag: focus.tag(),
    }))
}

/// Stage attempts as bars on a time axis, in seconds since the application started.
pub(super) struct Timeline {
    pub(super) bars: Vec<Bar>,
    pub(super) time: TimeAxis,
    /// What marked bars are tagged with ("SK001").
    tag: String,
}

impl Timeline {
    pub(super) fn height(&self) -> u32 {
        (110 + 18 * self.bars.len() as u32).clamp(200, 1300)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Timeline { bars, time, tag } = self;
        let x = &time.x;
        let n = bars.len();
        let (first, span) = (x.range().start, x.top());
        // Row 0 is drawn at the top, so the earliest stage reads first.
        let mut c = rows_chart(
            root,
            x,
            RowsLayout {
                caption: "Stage timeline",
                x_desc: time.description(),
                y_desc: "stage.attempt",
                labels: bars.iter().map(|b| b.label.as_str()).collect(),
                label_width: label_area(bars.iter().map(|b| b.label.as_str())),
                visible: 30,
                top_room: time.top_room(),
            },
        )?;
        let min_width = (span - first) * 0.003;
        let colour = |b: &Bar| match (b.status, b.open) {
            (StageStatus::Failed, _) => RED_,
            (_, true) => AMBER,
            _ => BLUE_,
        };
        let extent = |i: usize, b: &Bar| {
            let y = (n - 1 - i) as f64;
            [
                (b.start, y + 0.18),
                (b.end.max(b.start + min_width), y + 0.82),
            ]
        };
        for (kind, label) in [(BLUE_, "completed"), (RED_, "failed"), (AMBER, "running")] {
            let rects: Vec<_> = bars
                .iter()
                .enumerate()
                .filter(|(_, b)| colour(b) == kind)
                .map(|(i, b)| Rectangle::new(extent(i, b), kind.filled()))
                .collect();
            if rects.is_empty() {
                continue;
            }
            c.draw_series(rects)?
                .label(label)
                .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], kind.filled()));
        }
        // The cut goes through the bars but not through the marks on them.
        time.draw_breaks(root, &c)?;
        // The stages the top finding names: outlined, and tagged with its rule beside the bar
        // (on the side with room), so the eye finds them before reading any label.
        for (i, b) in bars.iter().enumerate().filter(|(_, b)| b.marked) {
            let [lo, hi] = extent(i, b);
            c.draw_series([Rectangle::new(
                [(lo.0, lo.1 - 0.1), (hi.0, hi.1 + 0.1)],
                INK.stroke_width(2),
            )])?;
            let y = (n - 1 - i) as f64 + 0.5;
            let width = span - first;
            // Right of the bar when there is room, else left of it, else (a bar across the
            // whole run) inside it, in white.
            let (at, text, anchor, ink) = if hi.0 < first + width * 0.8 {
                (hi.0, format!(" ◀ {tag}"), HPos::Left, INK)
            } else if lo.0 > first + width * 0.15 {
                (lo.0, format!("{tag} ▶ "), HPos::Right, INK)
            } else {
                (lo.0, format!(" {tag}"), HPos::Left, WHITE)
            };
            c.draw_series([Text::new(
                text,
                (at, y),
                (FONT, 12)
                    .into_font()
                    .color(&ink)
                    .pos(Pos::new(anchor, VPos::Center)),
            )])?;
        }
        // Rows run in start order, so late stages sit low and right: the lower left is the
        // corner bars leave empty.
        legend(&mut c, SeriesLabelPosition::LowerLeft)?;
        Ok(())
    }
}
