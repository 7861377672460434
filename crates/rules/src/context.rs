//! What every rule reads: the application and its facts (`sparkdiag_facts::Facts`, computed once
//! by the analysis step), with the slow tasks the rules ask for kept as they are found.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sparkdiag_facts::{Facts, PlanInput, StageStats};
use sparkdiag_model::{Application, StageAttempt, Task, TaskOutcome};

// The rule files name these facts as `crate::context::…`.
pub(crate) use sparkdiag_facts::{data_bytes, data_records, task_executors};

pub struct Context<'a> {
    pub app: &'a Application,
    /// Every fact of the application, computed once by the analysis step.
    pub facts: &'a Facts,
    /// The application's wall-clock time (to the last event for an incomplete log), without
    /// stretches the clock jumped over.
    pub app_ms: i64,
    /// The application's time as sorted `[start, end)` intervals: start to end, minus clock jumps.
    pub usable: &'a [(i64, i64)],
    /// The most cores executors offered at once (the driver's, in local mode).
    pub cores: i64,
    /// Indexed like `app.stages`.
    pub stages: &'a [StageStats],
    /// Physical plans: each SQL execution's (the last adaptive plan when AQE re-planned), or
    /// those of a plan text given on its own.
    pub plans: &'a [PlanInput],
    /// What each stage is (indexed like `app.stages`) and what the application ran on: the
    /// facts the rules' advice is chosen by.
    pub shapes: &'a crate::stage_shape::Shapes,
    /// The slow tasks [`Context::successful_tasks_over`] found, by stage index and limit: the
    /// rules naming slow tasks ask for the same ones, and each ask would unfold the stage again.
    /// The rules run at once on every core, so the first ask takes the lock while it looks.
    slow_tasks: Mutex<HashMap<SlowTasksKey, Arc<Vec<Task>>>>,
}

/// A stage attempt's index in `app.stages` and a duration limit's bits.
type SlowTasksKey = (usize, u64);

impl<'a> Context<'a> {
    /// The rules' view of `app` and its facts (`Facts::of(app)`, or `Facts::of_plans` with an
    /// empty application for a plan text given alone).
    pub fn new(app: &'a Application, facts: &'a Facts) -> Context<'a> {
        Context {
            app,
            facts,
            app_ms: facts.app_ms,
            usable: &facts.usable,
            cores: facts.peak_cores,
            stages: &facts.stages,
            plans: &facts.plans,
            shapes: &facts.shapes,
            slow_tasks: Default::default(),
        }
    }

    pub fn stats(&self, stage: &StageAttempt) -> &StageStats {
        self.facts.stats(self.app, stage)
    }

    /// What `stage` is: input or shuffle stage, where its partition count came from, what
    /// consumed its shuffle read.
    pub fn shape(&self, stage: &StageAttempt) -> &crate::stage_shape::StageShape {
        self.facts.shape(self.app, stage)
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
    pub fn stage_stats(&self) -> impl Iterator<Item = (&'a StageAttempt, &'a StageStats)> {
        self.app.stages.iter().zip(self.stages)
    }

    /// `part` as a percentage of the application's time, for titles.
    pub fn percent_of_app(&self, part: i64) -> String {
        if self.app_ms <= 0 {
            return "-".into();
        }
        sparkdiag_contract::units::share(part as f64 / self.app_ms as f64, 0)
    }
}
