//! A Structured Streaming query's batches: duration against the trigger interval, input against
//! processed rate, and the state's rows, each over the batch ids, one panel above the other.

use super::*;
use sparkdiag_contract::streaming::QueryOut;

const PANEL_HEIGHT: u32 = 250;

/// The chart of one query's batches; `None` with fewer than two batches to draw.
pub fn query_chart(q: &QueryOut) -> Option<Chart> {
    if q.batches.len() < 2 {
        return None;
    }
    let mut chart = Chart::empty("streaming-query", "Streaming query batches");
    let stateful = q.batches.iter().any(|b| !b.state_operators.is_empty());
    chart.caption = format!(
        "Each batch of the query by batch id: its duration{}, its input and processed rates{}.",
        if q.trigger_interval_ms.is_some() {
            " against the trigger interval (dashed)"
        } else {
            ""
        },
        if stateful {
            ", and the rows its state held"
        } else {
            ""
        }
    );
    let mut buf = String::new();
    let panels = if stateful { 3 } else { 2 };
    let ok = {
        let root =
            SVGBackend::with_string(&mut buf, (WIDTH, PANEL_HEIGHT * panels)).into_drawing_area();
        draw(&root, q, panels as usize).is_ok()
    };
    if ok {
        chart.svg = Some(labelled(&buf, chart.title));
    } else {
        chart.caption = "This chart could not be drawn.".into();
    }
    Some(chart)
}

fn draw<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    q: &QueryOut,
    panels: usize,
) -> DrawResult
where
    DB::ErrorType: 'static,
{
    register_font();
    root.fill(&WHITE)?;
    let areas = root.split_evenly((panels, 1));
    let first = q.batches.first().map_or(0, |b| b.batch_id) as f64;
    let last = q.batches.last().map_or(1, |b| b.batch_id) as f64;
    let x = Axis::linear(first, last.max(first + 1.0), 10, Unit::Count);
    let seconds = |ms: i64| ms as f64 / 1000.0;
    // Durations, with the trigger.
    let durations: Vec<(f64, f64)> = q
        .batches
        .iter()
        .filter_map(|b| Some((b.batch_id as f64, seconds(b.duration_ms?))))
        .collect();
    let top = durations
        .iter()
        .map(|p| p.1)
        .chain(q.trigger_interval_ms.map(seconds))
        .fold(0.0, f64::max);
    let y = Axis::linear(0.0, top * 1.1, 6, Unit::Seconds);
    let mut c = panel(&areas[0], "Batch duration", &x, &y, "seconds")?;
    c.draw_series(LineSeries::new(durations.clone(), BLUE_.stroke_width(2)))?
        .label("batch duration")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], BLUE_.stroke_width(2)));
    c.draw_series(durations.iter().map(|&p| Circle::new(p, 3, BLUE_.filled())))?;
    if let Some(t) = q.trigger_interval_ms.map(seconds) {
        c.draw_series(DashedLineSeries::new(
            [(first, t), (last.max(first + 1.0), t)],
            6,
            4,
            RED_.stroke_width(2),
        ))?
        .label("trigger interval")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], RED_.stroke_width(2)));
    }
    legend(&mut c, SeriesLabelPosition::UpperLeft)?;
    // Rates.
    let rate = |f: fn(&sparkdiag_contract::streaming::BatchOut) -> Option<f64>| -> Vec<(f64, f64)> {
        q.batches
            .iter()
            .filter_map(|b| Some((b.batch_id as f64, f(b)?)))
            .collect()
    };
    let input = rate(|b| b.input_rows_per_second);
    let processed = rate(|b| b.processed_rows_per_second);
    let top = input
        .iter()
        .chain(&processed)
        .map(|p| p.1)
        .fold(1.0, f64::max);
    let y = Axis::linear(0.0, top * 1.1, 6, Unit::Count);
    let mut c = panel(
        &areas[1],
        "Input and processed rate",
        &x,
        &y,
        "rows per second",
    )?;
    c.draw_series(LineSeries::new(input, AMBER.stroke_width(2)))?
        .label("input rows/s")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], AMBER.stroke_width(2)));
    c.draw_series(LineSeries::new(processed, BLUE_.stroke_width(2)))?
        .label("processed rows/s")
        .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], BLUE_.stroke_width(2)));
    legend(&mut c, SeriesLabelPosition::UpperLeft)?;
    if panels == 3 {
        let state: Vec<(f64, f64)> = q
            .batches
            .iter()
            .filter(|b| !b.state_operators.is_empty())
            .map(|b| {
                (
                    b.batch_id as f64,
                    b.state_operators.iter().map(|s| s.rows_total).sum::<i64>() as f64,
                )
            })
            .collect();
        let top = state.iter().map(|p| p.1).fold(1.0, f64::max);
        let y = Axis::linear(0.0, top * 1.1, 6, Unit::Count);
        let mut c = panel(&areas[2], "State rows", &x, &y, "rows in state")?;
        c.draw_series(LineSeries::new(state, GREY.stroke_width(2)))?
            .label("state rows (all operators)")
            .legend(|(x, y)| PathElement::new([(x, y), (x + 12, y)], GREY.stroke_width(2)));
        legend(&mut c, SeriesLabelPosition::UpperLeft)?;
    }
    root.present()?;
    Ok(())
}

fn panel<'a, DB: DrawingBackend>(
    area: &'a DrawingArea<DB, Shift>,
    caption: &str,
    x: &Axis,
    y: &Axis,
    y_desc: &str,
) -> Result<ChartContext<'a, DB, Cartesian2d<Axis, Axis>>, Box<dyn Error>>
where
    DB::ErrorType: 'static,
{
    let mut c = ChartBuilder::on(area)
        .caption(caption, (FONT, 16))
        .margin(10)
        .margin_right(40)
        .x_label_area_size(40)
        .y_label_area_size(64)
        .build_cartesian_2d(x.clone(), y.clone())?;
    c.configure_mesh()
        .bold_line_style(LIGHT)
        .light_line_style(TRANSPARENT)
        .x_label_formatter(&|v| x.label(*v))
        .y_label_formatter(&|v| y.label(*v))
        .x_desc("batch id")
        .y_desc(y_desc)
        .label_style((FONT, 12))
        .axis_desc_style((FONT, 13))
        .draw()?;
    Ok(c)
}
