//! Every fact of one application, computed once in the analysis step and handed down to the
//! rules, the what-if, the report and `diff`, so none of them computes a fact again.

use sparkdiag_model::{Application, StageAttempt};

use crate::intervals::{Spans, length, subtract};
use crate::stage_shape::{Shapes, StageShape};
use crate::{PlanInput, StageStats};

/// What an application and its stages were.
#[derive(Default)]
pub struct Facts {
    /// Each stage attempt's task statistics, indexed like `app.stages`.
    pub stages: Vec<StageStats>,
    /// What each stage attempt is (indexed like `app.stages`) and what the application ran on.
    pub shapes: Shapes,
    /// The physical plans of a plan text given on its own. An event log's are not held here:
    /// on a log of many queries they are the largest of its facts (a 3.6 KB plan text parses to
    /// about 14 KB), so the rules parse them a batch at a time ([`crate::SqlPlans`]), and
    /// whoever needs them all parses them ([`crate::sql_plans`]).
    pub plans: Vec<PlanInput>,
    /// The most cores executors offered at once (the driver's, in local mode); at least 1.
    pub peak_cores: i64,
    /// The application's time as sorted `[start, end)` intervals: start to end (the last event
    /// for an incomplete log), minus the stretches its clock jumped over.
    pub usable: Spans,
    /// The length of `usable`: the application's wall-clock time without clock jumps.
    pub app_ms: i64,
    /// Each executor's first task end and pace against the others; each stage's long tasks'
    /// attributions are in `stages` ([`crate::slowness`]).
    pub slowness: crate::slowness::Slowness,
    /// Every write command that ran, with what it wrote.
    pub writes: Vec<crate::writes::Write>,
    /// Every scan that ran, with what it read.
    pub reads: Vec<crate::writes::Read>,
}

impl Facts {
    /// Lets go of each stage attempt's slowness figures (its long tasks, its executors' spans
    /// and paces), once the rules and the what-if, which alone read them, are done.
    pub fn let_go_of_stage_slowness(&mut self) {
        for stage in &mut self.stages {
            stage.facts.slowness = crate::slowness::StageSlowness::default();
        }
    }

    /// The facts of `app`. Each stage's tasks are looked at here and only here: a folded stage
    /// costs a decompression each time it is unfolded, so every figure anyone needs from the
    /// tasks is taken in this one look.
    pub fn of(app: &Application) -> Facts {
        // The reading has ended and both cores are free: the stages' walk beside their shapes.
        let (mut stages, shapes) = rayon::join(
            || crate::stage_stats(app),
            || crate::stage_shape::of_application(app),
        );
        let slowness = crate::slowness::attribute(app, &mut stages);
        let usable = usable_time(app);
        let (writes, reads) = crate::writes::collect(app);
        Facts {
            writes,
            reads,
            app_ms: length(&usable),
            usable,
            peak_cores: crate::peak_cores(app),
            stages,
            shapes,
            plans: Vec::new(),
            slowness,
        }
    }

    /// The facts of plans given on their own (a plan text): no application, one core.
    pub fn of_plans(plans: Vec<sparkdiag_plan::Plan>) -> Facts {
        Facts {
            peak_cores: 1,
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
            ..Facts::default()
        }
    }

    /// The position of `stage` in `app.stages`, where its statistics and shape are.
    ///
    /// # Panics
    /// When `stage` is not one of `app.stages`: a stage of another application.
    pub fn index_of(app: &Application, stage: &StageAttempt) -> usize {
        // The stage lives in `app.stages`: its index is its distance from the start.
        let offset =
            (stage as *const StageAttempt as usize).wrapping_sub(app.stages.as_ptr() as usize);
        let index = offset / std::mem::size_of::<StageAttempt>();
        assert!(
            app.stages
                .get(index)
                .is_some_and(|s| std::ptr::eq(s, stage)),
            "stage of another application"
        );
        index
    }

    /// The statistics of `stage`, one of `app.stages`.
    pub fn stats(&self, app: &Application, stage: &StageAttempt) -> &StageStats {
        &self.stages[Self::index_of(app, stage)]
    }

    /// What `stage` (one of `app.stages`) is.
    pub fn shape(&self, app: &Application, stage: &StageAttempt) -> &StageShape {
        &self.shapes.stages[Self::index_of(app, stage)]
    }
}

/// The application's start to its end, less the stretches its clock jumped over.
fn usable_time(app: &Application) -> Spans {
    match (app.start_ms, app.effective_end_ms()) {
        (Some(start), Some(end)) if end > start => subtract(&[(start, end)], &app.clock_jumps),
        _ => Vec::new(),
    }
}
