//! What every rule needs, computed once: the facts of every stage and plan (from
//! `sparkdiag_facts`), the application's time and how many cores it had.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sparkdiag_facts::{PlanInput, StageStats, peak_cores};
use sparkdiag_model::{Application, StageAttempt, Task, TaskOutcome};

// The rule files name these facts as `crate::context::…`.
pub(crate) use sparkdiag_facts::{data_bytes, data_records, task_executors};

pub struct Context<'a> {
    pub app: &'a Application,
    /// The application's wall-clock time (to the last event for an incomplete log), without
    /// stretches the clock jumped over.
    pub app_ms: i64,
    /// The application's time as sorted `[start, end)` intervals: start to end, minus clock jumps.
    pub usable: Vec<(i64, i64)>,
    /// The most cores executors offered at once (the driver's, in local mode).
    pub cores: i64,
    /// Indexed like `app.stages`.
    pub stages: Vec<StageStats>,
    /// Physical plans: each SQL execution's (the last adaptive plan when AQE re-planned), or
    /// those of a plan text given on its own.
    pub plans: Vec<PlanInput>,
    /// The slow tasks [`Context::successful_tasks_over`] found, by stage index and limit: the
    /// rules naming slow tasks ask for the same ones, and each ask would unfold the stage again.
    /// The rules run at once on every core, so the first ask takes the lock while it looks.
    slow_tasks: Mutex<HashMap<SlowTasksKey, Arc<Vec<Task>>>>,
    /// What each stage is (indexed like `app.stages`) and what the application ran on: the
    /// facts the rules' advice is chosen by.
    pub shapes: crate::stage_shape::Shapes,
}

/// A stage attempt's index in `app.stages` and a duration limit's bits.
type SlowTasksKey = (usize, u64);

impl<'a> Context<'a> {
    pub fn new(app: &'a Application) -> Context<'a> {
        let end = app.effective_end_ms();
        // Each stage's tasks are looked at here and only here: a folded stage costs a
        // decompression each time it is unfolded, so every figure a rule needs from the tasks
        // is taken in this one look.
        // The reading has ended and both cores are free: the stages' walk beside their shapes.
        let (stages, shapes) = rayon::join(
            || sparkdiag_facts::stage_stats(app),
            || crate::stage_shape::of_application(app),
        );
        let plans = sparkdiag_facts::sql_plans(app, &stages);
        let usable = match (app.start_ms, end) {
            (Some(start), Some(end)) if end > start => {
                crate::impact::subtract(&[(start, end)], &app.clock_jumps)
            }
            _ => Vec::new(),
        };
        Context {
            app,
            app_ms: crate::impact::length(&usable),
            usable,
            cores: peak_cores(app),
            stages,
            plans,
            slow_tasks: Default::default(),
            shapes,
        }
    }

    /// A context holding only plans (a plan text given alone); the application is empty.
    pub fn for_plans(app: &'a Application, plans: Vec<sparkdiag_plan::Plan>) -> Context<'a> {
        Context {
            app,
            app_ms: 0,
            usable: Vec::new(),
            cores: 1,
            stages: Vec::new(),
            slow_tasks: Default::default(),
            shapes: Default::default(),
            plans: plans
                .into_iter()
                .map(|plan| PlanInput {
                    sql_execution_id: None,
                    plan,
                    stage_ids: Vec::new(),
                    shuffle_stage_ms: 0,
                    measured: Default::default(),
                    spark_ids: Vec::new(),
                })
                .collect(),
        }
    }

    pub fn stats(&self, stage: &StageAttempt) -> &StageStats {
        &self.stages[self.index_of(stage)]
    }

    /// What `stage` is: input or shuffle stage, where its partition count came from, what
    /// consumed its shuffle read.
    pub fn shape(&self, stage: &StageAttempt) -> &crate::stage_shape::StageShape {
        &self.shapes.stages[self.index_of(stage)]
    }

    fn index_of(&self, stage: &StageAttempt) -> usize {
        // The stage lives in `app.stages`: its index is its distance from the start.
        let offset =
            (stage as *const StageAttempt as usize).wrapping_sub(self.app.stages.as_ptr() as usize);
        let index = offset / std::mem::size_of::<StageAttempt>();
        assert!(
            std::ptr::eq(&self.app.stages[index], stage),
            "stage of another application"
        );
        index
    }

    /// The successful tasks (with metrics) of the stage attempt at `index` in `app.stages` that
    /// ran longer than `limit_ms`, slowest first (equals in task id order).
    pub fn successful_tasks_over(&self, index: usize, limit_ms: f64) -> Arc<Vec<Task>> {
        let key = (index, limit_ms.to_bits());
        // Held while the stage is looked at, so that two rules asking at once unfold it once.
        let mut kept = self
            .slow_tasks
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = kept.get(&key) {
            return Arc::clone(found);
        }
        let mut slow: Vec<Task> = self
            .app
            .stage_tasks(&self.app.stages[index])
            .iter()
            .filter(|t| t.outcome == TaskOutcome::Success && t.has_metrics)
            .filter(|t| f64::from(t.duration_ms) > limit_ms)
            .copied()
            .collect();
        slow.sort_by_key(|t| std::cmp::Reverse(t.duration_ms));
        let slow = Arc::new(slow);
        kept.insert(key, Arc::clone(&slow));
        slow
    }

    /// Stage attempts with their statistics.
    pub fn stage_stats(&self) -> impl Iterator<Item = (&'a StageAttempt, &StageStats)> {
        self.app.stages.iter().zip(&self.stages)
    }

    /// `part` as a percentage of the application's time, for titles.
    pub fn percent_of_app(&self, part: i64) -> String {
        if self.app_ms <= 0 {
            return "-".into();
        }
        sparkdiag_contract::units::share(part as f64 / self.app_ms as f64, 0)
    }
}
