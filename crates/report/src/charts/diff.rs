//! `diff`'s charts: runtime bars (BEFORE, a killed BEFORE's projection, AFTER), the time of
//! each matched query before and after, and both runs' stages on one time axis, each run's
//! overlapping stages on lanes of their own so a thread pool's parallel jobs show.

use super::*;
use sparkdiag_contract::diff::{Diff, RunOut, StageSpan};

const BEFORE: RGBColor = RGBColor(192, 80, 77);
const AFTER: RGBColor = RGBColor(79, 129, 189);

/// Each matched work's colour on the timeline, in the order of `Diff::work`; the page's work
/// table shows the same colours ([`work_colour`]).
const WORK: [RGBColor; 8] = [
    RGBColor(78, 121, 167),
    RGBColor(242, 142, 43),
    RGBColor(89, 161, 79),
    RGBColor(176, 122, 161),
    RGBColor(118, 183, 178),
    RGBColor(237, 201, 72),
    RGBColor(255, 157, 167),
    RGBColor(156, 117, 95),
];
/// Stages no matched work holds.
const UNMATCHED: RGBColor = RGBColor(187, 187, 187);

/// The CSS colour of matched work `index`, as the timeline draws it.
pub fn work_colour(index: usize) -> String {
    let RGBColor(r, g, b) = WORK[index % WORK.len()];
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// One bar of a diff's bar chart.
pub struct DiffBar {
    pub label: String,
    pub ms: i64,
    /// AFTER's (blue), else BEFORE's (red).
    pub after: bool,
    /// A projection, not a measurement: drawn pale, with its outline.
    pub projected: bool,
}

/// Horizontal bars, one per row, top row first, each labelled with its time.
pub fn diff_bars(
    name: &'static str,
    title: &'static str,
    caption: &str,
    rows: Vec<DiffBar>,
) -> Chart {
    let mut chart = Chart::empty(name, title);
    if rows.is_empty() {
        chart.caption = "Nothing to compare.".into();
        return chart;
    }
    chart.caption = caption.to_string();
    let rows = rows
        .into_iter()
        .map(|r| TimeBar {
            label: r.label,
            ms: r.ms,
            colour: if r.after { AFTER } else { BEFORE },
            pale: r.projected,
            note: "",
        })
        .collect();
    chart.drawn(Plot::Bars(TimeBars::new(title, "seconds", "", rows)))
}

/// Most lanes a run gets: a stage overlapping this many others shares the last lane.
const MAX_LANES: usize = 12;

struct Span {
    lane: usize,
    start: f64,
    end: f64,
    work: Option<usize>,
}

/// Both runs' stage attempts on one axis (seconds from each application's start), coloured by
/// the matched work they belong to.
pub fn diff_timelines(d: &Diff) -> Chart {
    let mut chart = Chart::empty("diff-timelines", "Stage timelines");
    let mut labels = Vec::new();
    let mut spans = Vec::new();
    let mut end = 0.0f64;
    // Each run's clock jumps, as (its lanes, whose, where): cut through its own lanes only.
    let mut cuts = Vec::new();
    for (name, run) in [("BEFORE", &d.before), ("AFTER", &d.after)] {
        let (lanes, run_spans) = lanes(run);
        let first = labels.len();
        cuts.extend(
            run.clock_breaks
                .iter()
                .map(|&at| (first..first + lanes, name, at)),
        );
        for lane in 0..lanes {
            labels.push(if lanes == 1 {
                name.to_string()
            } else {
                format!("{name} {}", lane + 1)
            });
        }
        end = end.max(run.duration_ms.unwrap_or(0) as f64 / 1000.0);
        for mut s in run_spans {
            end = end.max(s.end);
            s.lane += first;
            spans.push(s);
        }
    }
    if spans.is_empty() {
        chart.caption = "Neither run started a stage.".into();
        return chart;
    }
    let rows = labels.len() as f64;
    let jumps: Vec<String> = cuts
        .iter()
        .map(|(_, name, at)| {
            format!(
                " {name}'s clock jumped {:.1} days with no event {} into its run: the axis \
                 leaves that out (the cut through its lanes).",
                at.jumped_ms as f64 / 86_400_000.0,
                duration(at.at_ms)
            )
        })
        .collect();
    chart.caption = format!(
        "Each run's stage attempts from its application's start, coloured by the matched work \
         in the table below (grey: matched in neither run); stages that overlap run on lanes of \
         their own.{}",
        jumps.concat()
    );
    let cuts = cuts
        .into_iter()
        .map(|(lanes, name, at)| Cut {
            at,
            rows: Some((rows - lanes.end as f64, rows - lanes.start as f64)),
            run: Some(name),
        })
        .collect();
    chart.drawn(Plot::DiffTimelines(DiffTimelines {
        time: TimeAxis::with_cuts(0.0, end.max(0.001), cuts),
        labels,
        spans,
    }))
}

/// `run`'s stages placed on lanes (the first lane whose last stage has ended), and how many
/// lanes that took.
fn lanes(run: &RunOut) -> (usize, Vec<Span>) {
    let mut sorted: Vec<&StageSpan> = run.timeline.iter().collect();
    sorted.sort_by_key(|s| s.start_ms);
    let mut lane_end: Vec<i64> = Vec::new();
    let spans = sorted
        .iter()
        .map(|s| {
            let lane = match lane_end.iter().position(|&e| e <= s.start_ms) {
                Some(lane) => lane,
                None if lane_end.len() < MAX_LANES => {
                    lane_end.push(s.end_ms);
                    lane_end.len() - 1
                }
                None => MAX_LANES - 1,
            };
            lane_end[lane] = lane_end[lane].max(s.end_ms);
            Span {
                lane,
                start: s.start_ms as f64 / 1000.0,
                end: s.end_ms.max(s.start_ms) as f64 / 1000.0,
                work: s.work,
            }
        })
        .collect();
    (lane_end.len(), spans)
}

pub(super) struct DiffTimelines {
    pub(super) time: TimeAxis,
    pub(super) labels: Vec<String>,
    spans: Vec<Span>,
}

impl DiffTimelines {
    pub(super) fn height(&self) -> u32 {
        bar_chart_height(self.labels.len(), 22)
    }

    pub(super) fn draw<DB: DrawingBackend>(&self, root: &DrawingArea<DB, Shift>) -> DrawResult
    where
        DB::ErrorType: 'static,
    {
        let DiffTimelines {
            time,
            labels,
            spans,
        } = self;
        let x = &time.x;
        let n = labels.len();
        let mut c = rows_chart(
            root,
            x,
            RowsLayout {
                caption: "Stage timelines",
                x_desc: time.description(),
                y_desc: "",
                labels: labels.iter().map(String::as_str).collect(),
                label_width: label_area(labels.iter().map(String::as_str)),
                visible: n,
                top_room: time.top_room(),
            },
        )?;
        let min_width = x.top() * 0.003;
        c.draw_series(spans.iter().map(|s| {
            let y = (n - 1 - s.lane) as f64;
            let colour = s.work.map_or(UNMATCHED, |w| WORK[w % WORK.len()]);
            Rectangle::new(
                [
                    (s.start, y + 0.15),
                    (s.end.max(s.start + min_width), y + 0.85),
                ],
                colour.filled(),
            )
        }))?;
        time.draw_breaks(root, &c)?;
        Ok(())
    }
}
