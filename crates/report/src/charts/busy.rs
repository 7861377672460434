//! Busy task slots against the cores the executors offered, over time.

use super::*;

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

pub(super) fn cores_busy(report: &Report, view: &ViewData) -> Chart {
    let mut chart = Chart::empty("cores-busy", "Executor cores busy over time");
    let Some(span_ms) = view.chart_span_ms() else {
        chart.caption = "The log has no tasks: no core was ever busy.".into();
        return chart;
    };
    if view.busy_slots.is_empty() {
        chart.caption = "The log has no tasks: no core was ever busy.".into();
        return chart;
    }
    // Seconds since the start on the charts' clock, which leaves the clock jumps out, as the
    // busy slots do.
    let secs = |ms: i64| view.chart_ms(ms).unwrap_or(0) as f64 / 1000.0;
    let span = (span_ms as f64 / 1000.0).max(0.001);
    let time = TimeAxis::new(0.0, span, view.chart_breaks());
    let busy = view.busy_slots.clone();
    let buckets = busy.len();
    // The driver offers cores only in local mode, where it is the one that runs tasks.
    let offering = || {
        report
            .executors
            .iter()
            .filter(|e| e.executor_id != "driver" || e.total_tasks + e.completed_tasks > 0)
    };
    // An executor added, by the log's clock, after every task had ended although it ran
    // some: its events carry another clock's time (the log's clock jumped), so when it
    // offered its cores is not known.
    let last_busy_s = busy
        .iter()
        .rposition(|&b| b > 0.0)
        .map(|i| (i + 1) as f64 * span / buckets as f64);
    let misplaced = !view.clock_jumps.is_empty()
        && last_busy_s.is_some_and(|last| {
            offering().any(|e| {
                e.total_tasks + e.completed_tasks > 0
                    && e.added_ms.is_some_and(|added| secs(added) >= last)
            })
        });
    let capacity_changes: Vec<(f64, f64)> = offering()
        .filter(|_| !misplaced)
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
        (!capacity_changes.is_empty()).then(|| bucket_average(capacity_changes, span, buckets));
    let busy_total: f64 = busy.iter().sum();
    let cap_total: f64 = capacity.as_ref().map_or(0.0, |c| c.iter().sum());
    chart.caption = format!(
        "Task slots in use (tasks running at once, averaged over slices of {}) against the cores \
         the executors offered. Tasks count from launch to finish as the log records them, so \
         short overlaps can rise above the cores.{} Flat stretches at zero are time when only the driver worked.{}",
        duration((span * 1000.0 / buckets as f64).round().max(1.0) as i64),
        if misplaced {
            " The executors were added, by the log's clock, after the tasks they ran had ended: \
             their events carry the time of a clock that jumped, so the cores they offered \
             cannot be placed in time and are not drawn."
                .into()
        } else if cap_total > 0.0 {
            format!(
                " On average {:.0}% of the cores were busy.",
                100.0 * busy_total / cap_total
            )
        } else {
            " The log does not say how many cores the executors had.".into()
        },
        time.caption()
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
        time,
        y: Axis::linear(0.0, top, 8, Unit::Count),
    }))
}

/// Busy task slots and executor cores, averaged per time bucket.
pub(super) struct Busy {
    busy: Vec<f64>,
    capacity: Option<Vec<f64>>,
    span: f64,
    pub(super) time: TimeAxis,
    pub(super) y: Axis,
}

impl Busy {
    pub(super) fn height(&self) -> u32 {
        380
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let Busy {
            busy,
            capacity,
            span,
            time,
            y,
        } = self;
        let x = &time.x;
        let span = *span;
        let width = span / busy.len().max(1) as f64;
        let steps = |values: &[f64]| -> Vec<(f64, f64)> {
            values
                .iter()
                .enumerate()
                .flat_map(|(i, &v)| [(i as f64 * width, v), ((i + 1) as f64 * width, v)])
                .collect()
        };
        let narrow = is_narrow(root);
        let margin_right = if narrow { 20 } else { 40 };
        let mut builder = ChartBuilder::on(root);
        builder
            .margin(12)
            .margin_right(margin_right)
            .x_label_area_size(44)
            .y_label_area_size(60);
        titled(
            &mut builder,
            root,
            "Executor cores busy over time",
            margin_right,
            time.top_room(),
        )?;
        let mut c = builder.build_cartesian_2d(x.clone(), y.clone())?;
        c.configure_mesh()
            .bold_line_style(LIGHT)
            .light_line_style(TRANSPARENT)
            .x_label_formatter(&|v| x.tick_label(*v, narrow))
            .y_label_formatter(&|v| y.label(*v))
            .x_desc(time.description())
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
        time.draw_breaks(root, &c)?;
        legend(&mut c, SeriesLabelPosition::UpperRight)?;
        Ok(())
    }
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
}
