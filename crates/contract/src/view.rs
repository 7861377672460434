//! What the views draw that the JSON contract does not carry: every task's duration and span for
//! the charts, and each SQL execution's plan tree with Spark's wrappers for the HTML page.
//!
//! It is a separate struct, not more `Report` fields, because it is per task (a log of a million
//! tasks would add megabytes to every JSON report) and because `sparkdiag/report/v1` stays byte
//! for byte what it was. It is built once, in the analysis step, from the model; the views then
//! need only the [`crate::Report`] and this.

use sparkdiag_facts::Varints;
use sparkdiag_model::{Application, SparkPlanInfo, TaskOutcome};

/// Per-task and plan-shape data for the charts and the HTML view of one application.
#[derive(Debug, Default, Clone)]
pub struct ViewData {
    /// Where the charts' time axes start: the application start, else the earliest time seen.
    pub origin_ms: Option<i64>,
    /// Where they end: the application end (or last event), or the latest time seen if later.
    pub horizon_ms: Option<i64>,
    /// One per stage attempt, in the order of the report's `stages`.
    pub stages: Vec<StageTasks>,
    /// Tasks running at once, averaged over [`BUSY_SLICES`] equal slices of
    /// `origin_ms..horizon_ms`, for the cores-busy chart; empty when the log has no task. A
    /// fixed size, so ten million tasks cost no more here than ten.
    pub busy_slots: Vec<f64>,
    /// The plan that ran of each SQL execution that has one, in the order of the report's `sql`.
    pub plans: Vec<PlanTree>,
}

/// The task durations of one stage attempt.
#[derive(Debug, Default, Clone)]
pub struct StageTasks {
    pub stage_id: i64,
    pub attempt_id: i64,
    /// Successful tasks with metrics (the History Server's population).
    pub succeeded_ms: SortedMs,
    /// Failed tasks.
    pub failed_ms: SortedMs,
}

/// Durations in ms, sorted. Every stage's are kept while the views are drawn, so they are packed:
/// the difference from each to the next (mostly zero or small) as variable-length integers,
/// compressed once there are thousands, a fraction of a byte a task where a `u32` took four.
#[derive(Debug, Default, Clone)]
pub struct SortedMs(Varints);

impl SortedMs {
    pub fn new(mut ms: Vec<u32>) -> SortedMs {
        ms.sort_unstable();
        let mut previous = 0;
        SortedMs(Varints::new(ms.into_iter().map(|d| {
            let step = i64::from(d - previous);
            previous = d;
            step
        })))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Bytes held.
    pub fn stored_bytes(&self) -> usize {
        self.0.stored_bytes()
    }

    /// The durations, shortest first.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        let mut at = 0u32;
        self.0.iter().map(move |step| {
            at = at.saturating_add(u32::try_from(step).unwrap_or(u32::MAX));
            at
        })
    }
}

/// How many slices of the application's time the cores-busy chart averages over: fine enough to
/// show a gap of 1/300 of the run.
pub const BUSY_SLICES: usize = 300;

/// Spark's structured plan (`sparkPlanInfo`) of one SQL execution, flattened in pre-order (the
/// order of the report's `plan_nodes`), wrappers such as `WholeStageCodegen` and
/// `InputAdapter` included.
#[derive(Debug, Default, Clone)]
pub struct PlanTree {
    pub execution_id: i64,
    /// Node 0 is the root.
    pub nodes: Vec<PlanTreeNode>,
}

#[derive(Debug, Default, Clone)]
pub struct PlanTreeNode {
    pub name: String,
    /// Spark's node id (`plan_nodes[].index`); `None` for the wrappers Spark's graph skips.
    pub spark_id: Option<usize>,
    /// Indexes into [`PlanTree::nodes`].
    pub children: Vec<usize>,
}

impl ViewData {
    /// The one place the views' per-task data is taken from the model.
    pub fn new(app: &Application) -> ViewData {
        let task_span = |t: &sparkdiag_model::Task| {
            (
                t.launch_ms,
                t.launch_ms.saturating_add(i64::from(t.duration_ms)),
            )
        };
        // The axes come first, from the tasks' span the model keeps as it reads them, so that
        // each stage is unfolded once, for its durations and its share of the busy cores.
        let (first_launch, last_end) = app.tasks.span().unzip();
        let origin_ms = app
            .start_ms
            .or_else(|| app.stages.iter().filter_map(|s| s.submission_ms).min())
            .or(first_launch);
        let seen = app
            .stages
            .iter()
            .filter_map(|s| s.completion_ms.or(s.submission_ms))
            .chain(last_end)
            .max();
        let horizon_ms = match (app.effective_end_ms(), seen) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
        let mut busy = match (origin_ms, horizon_ms) {
            (Some(origin), Some(horizon)) if !app.tasks.is_empty() => {
                let span = (horizon.saturating_sub(origin) as f64).max(1.0);
                Some((origin, span, BusySlots::new(span, BUSY_SLICES)))
            }
            _ => None,
        };
        let stages = app
            .stages
            .iter()
            .map(|stage| {
                let tasks = app.stage_tasks(stage);
                if let Some((origin, span, busy)) = busy.as_mut() {
                    let relative = |ms: i64| (ms.saturating_sub(*origin) as f64).clamp(0.0, *span);
                    for t in tasks.iter() {
                        let (from, to) = task_span(t);
                        busy.add(relative(from), relative(to));
                    }
                }
                let durations = |outcome: TaskOutcome| {
                    SortedMs::new(
                        tasks
                            .iter()
                            .filter(|t| t.outcome == outcome)
                            .filter(|t| t.has_metrics || outcome == TaskOutcome::Failed)
                            .map(|t| t.duration_ms)
                            .collect(),
                    )
                };
                StageTasks {
                    stage_id: stage.stage_id,
                    attempt_id: stage.attempt_id,
                    succeeded_ms: durations(TaskOutcome::Success),
                    failed_ms: durations(TaskOutcome::Failed),
                }
            })
            .collect();
        let busy_slots = busy.map_or_else(Vec::new, |(_, _, busy)| busy.averages());
        let plans = app
            .sql
            .iter()
            .filter_map(|sql| Some(PlanTree::new(sql.execution_id, sql.plan_that_ran()?)))
            .collect();
        ViewData {
            origin_ms,
            horizon_ms,
            stages,
            busy_slots,
            plans,
        }
    }

    /// The plan tree of SQL execution `execution_id`.
    pub fn plan(&self, execution_id: i64) -> Option<&PlanTree> {
        self.plans.iter().find(|p| p.execution_id == execution_id)
    }
}

/// How many of `spans` (start, end within `0..span`) run at once, averaged over `slices` equal
/// slices of `0..span`. Each span adds its overlap with its first and last slice, and one full
/// slice to every slice between (counted at their ends and summed once), so the cost is one step
/// per span whatever its length.
#[cfg(test)]
fn average_running(spans: impl Iterator<Item = (f64, f64)>, span: f64, slices: usize) -> Vec<f64> {
    let mut busy = BusySlots::new(span, slices);
    for (from, to) in spans {
        busy.add(from, to);
    }
    busy.averages()
}

/// Spans added one at a time, averaged over equal slices of `0..span` at the end.
struct BusySlots {
    slices: usize,
    width: f64,
    area: Vec<f64>,
    /// full[b] - full[b - 1]: how many more spans cover slice b whole than b - 1.
    full: Vec<i64>,
}

impl BusySlots {
    fn new(span: f64, slices: usize) -> BusySlots {
        BusySlots {
            slices,
            width: span / slices as f64,
            area: vec![0.0; slices],
            full: vec![0; slices + 1],
        }
    }

    fn add(&mut self, from: f64, to: f64) {
        if to <= from {
            return;
        }
        let (slices, width) = (self.slices, self.width);
        let first = ((from / width) as usize).min(slices - 1);
        let last = ((to / width) as usize).min(slices - 1);
        if first == last {
            self.area[first] += to - from;
        } else {
            self.area[first] += (first + 1) as f64 * width - from;
            self.area[last] += to - last as f64 * width;
            self.full[first + 1] += 1;
            self.full[last] -= 1;
        }
    }

    /// How many spans covered each slice, on average over it.
    fn averages(&self) -> Vec<f64> {
        let width = self.width;
        let mut covering = 0i64;
        self.area
            .iter()
            .zip(&self.full)
            .map(|(partial, change)| {
                covering += change;
                (partial + covering as f64 * width) / width
            })
            .collect()
    }
}

impl PlanTree {
    fn new(execution_id: i64, root: &SparkPlanInfo) -> PlanTree {
        let graph = sparkdiag_model::PlanGraph::new(root);
        let mut nodes: Vec<PlanTreeNode> = Vec::with_capacity(graph.preorder.len());
        // The graph's pre-order walks `children` in order, so a node's children follow it, each
        // after the whole subtree of the one before.
        fn walk(node: &SparkPlanInfo, ids: &[Option<usize>], nodes: &mut Vec<PlanTreeNode>) {
            let index = nodes.len();
            nodes.push(PlanTreeNode {
                name: node.node_name.clone(),
                spark_id: ids.get(index).copied().flatten(),
                children: Vec::new(),
            });
            for child in &node.children {
                let at = nodes.len();
                nodes[index].children.push(at);
                walk(child, ids, nodes);
            }
        }
        walk(root, &graph.ids, &mut nodes);
        PlanTree {
            execution_id,
            nodes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{ViewData, average_running};
    use sparkdiag_model::{Application, ApplicationBuilder, TaskOutcome};

    fn app(rel: &str) -> Application {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../testdata/logs")
            .join(rel);
        let input = &sparkdiag_eventlog::discover(path.to_str().unwrap()).unwrap()[0];
        let mut builder = ApplicationBuilder::default();
        sparkdiag_eventlog::read_log(input, |e| builder.on_event(e)).unwrap();
        builder.finish()
    }

    /// The packed durations read back as the tasks' own, sorted; a stage of thousands of
    /// tasks takes a fraction of a byte a task. Real logs: thousands of tiny tasks, and a
    /// failed job.
    #[test]
    fn every_stages_durations_read_back_sorted_from_a_fraction_of_a_byte_a_task() {
        let (mut failed, mut largest) = (0, 0);
        for rel in ["patterns/tiny-partitions", "failed/local-1796049483373"] {
            let app = app(rel);
            let view = ViewData::new(&app);
            assert_eq!(view.stages.len(), app.stages.len(), "{rel}");
            for (stage, packed) in app.stages.iter().zip(&view.stages) {
                let tasks = app.stage_tasks(stage);
                let sorted = |outcome: TaskOutcome| {
                    let mut d: Vec<u32> = tasks
                        .iter()
                        .filter(|t| t.outcome == outcome)
                        .filter(|t| t.has_metrics || outcome == TaskOutcome::Failed)
                        .map(|t| t.duration_ms)
                        .collect();
                    d.sort_unstable();
                    d
                };
                let ok = sorted(TaskOutcome::Success);
                assert!(packed.succeeded_ms.iter().eq(ok.iter().copied()), "{rel}");
                assert!(
                    packed.failed_ms.iter().eq(sorted(TaskOutcome::Failed)),
                    "{rel}"
                );
                failed += packed.failed_ms.len();
                if ok.len() >= 1000 {
                    largest = largest.max(ok.len());
                    let bytes = packed.succeeded_ms.stored_bytes();
                    assert!(
                        bytes * 2 <= ok.len(),
                        "{rel}: {bytes} bytes for {}",
                        ok.len()
                    );
                }
            }
        }
        assert!(failed > 0, "no failed task in the logs read");
        assert!(largest >= 1000, "no stage of 1,000 tasks in the logs read");
    }

    #[test]
    fn average_running_is_each_slices_overlap_with_every_span() {
        // Spans of every length, from within one slice to the whole range, at uneven places.
        let mut seed = 7u64;
        let mut next = |limit: f64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * limit
        };
        let span = 1000.0;
        let spans: Vec<(f64, f64)> = (0..500)
            .map(|i| {
                let from = next(span);
                let length = if i % 10 == 0 { next(span) } else { next(10.0) };
                (from, (from + length).min(span))
            })
            .chain([(0.0, span), (250.0, 250.0), (999.9, span)])
            .collect();
        let slices = 37;
        let got = average_running(spans.iter().copied(), span, slices);
        let width = span / slices as f64;
        for (b, average) in got.iter().enumerate() {
            let (lo, hi) = (b as f64 * width, (b + 1) as f64 * width);
            let overlap: f64 = spans
                .iter()
                .map(|&(from, to)| (to.min(hi) - from.max(lo)).max(0.0))
                .sum();
            assert!(
                (average - overlap / width).abs() < 1e-9,
                "slice {b}: {average} against {}",
                overlap / width
            );
        }
    }
}
