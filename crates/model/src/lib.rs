//! The application model of one Spark event log, aggregated the way the Spark History Server does.
//!
//! # Brief overview
//! [`ApplicationBuilder`] takes [`sparkdiag_eventlog::Event`]s one at a time and keeps only what
//! the diagnosis needs: the [`Application`] with its [`Job`]s, [`StageAttempt`]s (with metric
//! totals summed over every task end, failed and killed ones included, as the History Server
//! does), [`Task`]s, [`Executor`]s and [`SqlExecution`]s. Memory follows the work in flight, not
//! the log: a running stage keeps its tasks as [`Task`]s (168 bytes each) and a completed stage
//! folds them, losslessly, into compressed columns ([`Tasks`]; about 15 bytes a task on real
//! logs), so every quantile and finding stays exact. The folding runs beside the reading, on a
//! thread that takes only an idle core, and is finished when the builder is. Quantiles follow
//! the History Server's own rule ([`quantile`]).
//!
//! # Example
//! ```no_run
//! use sparkdiag_model::ApplicationBuilder;
//! let input = &sparkdiag_eventlog::discover("app.zstd")?[0];
//! let mut builder = ApplicationBuilder::default();
//! sparkdiag_eventlog::read_log(input, |event| builder.on_event(event))?;
//! let app = builder.finish();
//! println!("{} stages, {} tasks", app.stages.len(), app.tasks.len());
//! # Ok::<(), sparkdiag_eventlog::ReadError>(())
//! ```

mod build;
mod call_site;
mod folder;
mod model;
mod packed_text;
pub mod plan_graph;
pub mod quantile;
pub mod streaming;
mod tasks;
/// The one way to write a duration, a size or a count: the contract's, used here as it is.
pub use sparkdiag_contract::units;

pub use build::ApplicationBuilder;
pub use model::*;
pub use packed_text::PackedText;
pub use plan_graph::PlanGraph;
pub use sparkdiag_eventlog::events::{ExecutorMetrics, SparkPlanInfo};
pub use streaming::Workload;
