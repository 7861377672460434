//! What every rule reads: the application and its facts (`sparkdiag_facts::Facts`, computed once
//! by the analysis step).

use std::borrow::Cow;

use sparkdiag_facts::{Facts, PlanInput, SqlPlans, StageStats};
use sparkdiag_model::{Application, StageAttempt, Workload};

// The rule files name these facts as `crate::context::…`.
pub(crate) use sparkdiag_facts::task_executors;

#[derive(Clone, Copy)]
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
    /// Physical plans: those of a plan text given on its own, or, for the rules that check each
    /// plan ([`crate::Rule::checks_each_plan`]), a batch of SQL executions' (the last adaptive
    /// plan when AQE re-planned). Read through [`Context::each_plan`], which numbers them.
    pub plans: &'a [PlanInput],
    /// The number of the first of `plans` among all of the application's plans.
    pub first_plan: usize,
    /// Parses an event log's plans, for a rule that needs the plan of one stage
    /// ([`Context::plan_of_stage`]); `None` for a plan text, whose plans are all in `plans`.
    pub sql_plans: Option<&'a SqlPlans<'a>>,
    /// What each stage is (indexed like `app.stages`) and what the application ran on: the
    /// facts the rules' advice is chosen by.
    pub shapes: &'a crate::stage_shape::Shapes,
    /// What kind of application it is ([`Application::workload`]), taken once: every rule's
    /// gate reads it, and finding it out reads every job's call site.
    pub workload: Workload,
}

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
            first_plan: 0,
            sql_plans: None,
            shapes: &facts.shapes,
            workload: app.workload(),
        }
    }

    /// Runs `f` over the context of an event log with every one of its plans parsed and held,
    /// as one batch: for tests that run a rule's check alone.
    #[cfg(test)]
    pub(crate) fn with_every_plan<R>(
        app: &Application,
        facts: &Facts,
        f: impl FnOnce(&Context<'_>) -> R,
    ) -> R {
        let sql_plans = SqlPlans::new(app, &facts.stages);
        let plans = sql_plans.parse(&app.sql);
        f(&Context {
            plans: &plans,
            sql_plans: Some(&sql_plans),
            ..Context::new(app, facts)
        })
    }

    /// The plans at hand, each with its number among all of the application's plans (the
    /// `plan_index` of a finding's scope).
    pub fn each_plan(&self) -> impl Iterator<Item = (usize, &'a PlanInput)> + use<'a> {
        let first = self.first_plan;
        self.plans
            .iter()
            .enumerate()
            .map(move |(i, p)| (first + i, p))
    }

    /// The plan of the SQL execution that ran stage `stage_id`: the first such whose plan
    /// parses, parsed alone for an event log.
    pub fn plan_of_stage(&self, stage_id: i64) -> Option<Cow<'a, PlanInput>> {
        match self.sql_plans {
            Some(sql_plans) => sql_plans.of_stage(stage_id).map(Cow::Owned),
            None => self
                .plans
                .iter()
                .find(|p| p.stage_ids.contains(&stage_id))
                .map(Cow::Borrowed),
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
