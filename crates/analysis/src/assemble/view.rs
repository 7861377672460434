//! What the views draw beyond the report ([`ViewData`]), taken from the model's tasks and plans.

use sparkdiag_contract::{
    BUSY_SLICES, PlanTree, PlanTreeNode, SortedMs, StageTasks, ViewData, ms_without_jumps,
};
use sparkdiag_model::{Application, SparkPlanInfo, TaskOutcome};

/// The one place the views' per-task data is taken from the model.
pub fn view_data(app: &Application) -> ViewData {
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
    // The busy slices are of the charts' time, which leaves the clock jumps out.
    let jumps = &app.clock_jumps;
    let mut busy = match (origin_ms, horizon_ms) {
        (Some(origin), Some(horizon)) if !app.tasks.is_empty() => {
            let span = (ms_without_jumps(origin, horizon, jumps) as f64).max(1.0);
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
                let relative =
                    |ms: i64| (ms_without_jumps(*origin, ms, jumps) as f64).clamp(0.0, *span);
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
        .filter_map(|sql| Some(plan_tree(sql.execution_id, sql.plan_that_ran()?)))
        .collect();
    ViewData {
        origin_ms,
        horizon_ms,
        clock_jumps: app.clock_jumps.clone(),
        stages,
        busy_slots,
        plans,
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

fn plan_tree(execution_id: i64, root: &SparkPlanInfo) -> PlanTree {
    let graph = sparkdiag_model::PlanGraph::new(root);
    let mut nodes: Vec<PlanTreeNode> = Vec::with_capacity(graph.preorder.len());
    // The graph's pre-order walks `children` in order, so a node's children follow it, each
    // after the whole subtree of the one before.
    fn walk(node: &SparkPlanInfo, ids: &[Option<usize>], nodes: &mut Vec<PlanTreeNode>) {
        let index = nodes.len();
        nodes.push(PlanTreeNode {
            name: node.node_name.to_string(),
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

#[cfg(test)]
mod tests {
    use super::{average_running, view_data};
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
            let view = view_data(&app);
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
