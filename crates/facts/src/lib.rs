//! The facts layer: what an application and its stages *were*, computed once from the model and
//! read by everything above it — the rules, the what-if replay, the report contract, `diff`.
//!
//! # Brief overview
//! Nothing here decides anything. A fact is a figure or a classification that holds whatever a
//! rule later makes of it: each stage attempt's task statistics taken in one walk of its tasks
//! ([`StageStats`], packed as [`Varints`]), what each stage is and where its partition count
//! came from ([`stage_shape`]), each SQL execution's parsed plan with what the log measured for
//! it ([`PlanInput`]), the most cores the application had ([`peak_cores`]), the memory it asked
//! for and used ([`memory_limits`], [`memory_figures`]), the partition count some data wants
//! ([`partition_count`]) and Spark's size and time settings read
//! as Spark reads them ([`settings`]), and what each run wrote and read ([`writes`]). Which of these make a finding, with which thresholds and
//! which advice, stays in `sparkdiag-rules`, one rule per file.
//!
//! [`Facts::of`] computes them all once, in the analysis step, and hands them down: the rules,
//! the what-if, the report and `diff` read the same [`Facts`]. A completed stage's tasks are kept
//! folded in the model, and each look at them unfolds the stage again: [`stage_stats`] is the one
//! look, and everyone above shares what it took.
//!
//! # Example
//! ```no_run
//! # let app = sparkdiag_model::Application::default();
//! let facts = sparkdiag_facts::Facts::of(&app);
//! for (stage, s) in app.stages.iter().zip(&facts.stages) {
//!     println!("stage {}: median task {} ms", stage.stage_id, s.median_ms);
//! }
//! println!("{} cores at the peak", facts.peak_cores);
//! ```

mod application;
mod facts;
pub mod intervals;
pub mod memory_figures;
pub mod memory_limits;
pub mod memory_sizing;

pub mod partition_count;
mod plans;
pub mod settings;
pub mod slowness;
mod stage_facts;
pub mod stage_shape;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod writes;

pub use application::{data_bytes, data_records, peak_cores, task_executors};
pub use facts::Facts;
pub use plans::{PlanInput, SqlPlans, sql_plans};
/// The packed durations are the contract's (the views read them back).
pub use sparkdiag_contract::Varints;
pub use stage_facts::{
    ExecutorTasks, FailedOn, StageStats, StageTaskFacts, TaskFigure, of_application as stage_stats,
};
