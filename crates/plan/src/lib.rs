//! Parses the physical-plan text Apache Spark prints (`EXPLAIN FORMATTED`, `df.explain()`,
//! `explain(True)`, event-log `physicalPlanDescription`) into operator trees that diagnosis rules
//! can walk.
//!
//! # Brief overview
//! [`parse_plans`] finds every plan in a text — a `.sql.out` golden or a notebook dump holds
//! several — and returns one [`Plan`] per `== Physical Plan ==` section. A plan is an arena of
//! [`PlanNode`]s: each has its operator id, printed name, normalised [`Operator`] kind, codegen
//! stage, children (indexes into [`Plan::nodes`]) and [`Details`] — every field of the detail
//! block raw, plus the parts rules need parsed: join keys and type, grouping keys, sort order,
//! [`Partitioning`] and [`ShuffleOrigin`] of exchanges, scan filters ([`ScanDetails`]),
//! query-stage [`Statistics`].
//!
//! * [`PlanKind::Formatted`] plans join each tree line to its detail block by id. Anything that
//!   does not line up is reported as a [`PlanWarning`], not an error. Two shapes are expected and
//!   not warned about: a node drawn several times under one id (AQE's Initial Plan re-draws
//!   nodes it shares with the final one; AQE subqueries are re-drawn per hosting expression)
//!   shares the one detail block of that id; Spark 3.1's `(unknown)` Initial-Plan nodes have
//!   `id: None` and no block.
//! * [`PlanKind::TreeOnly`] plans (plain `explain()` trees without ids) read the one-line
//!   operator strings instead, and are numbered by the parser in Spark's own order.
//! * AQE: one `Plan` per `AdaptiveSparkPlan` text. The tree that runs — `== Final Plan ==`,
//!   `== Current Plan ==`, or the only tree printed — is the `AdaptiveSparkPlan`'s child; an
//!   `== Initial Plan ==` printed next to it is kept aside ([`PlanNode::initial_plan`],
//!   [`Plan::initial_plan`]), never counted. [`Plan::is_final_plan`] says whether the plan is
//!   final.
//! * Subqueries: [`Plan::subqueries`] holds the `===== Subqueries =====` entries with their own
//!   trees in the same arena; tree-only output prints them as inner children instead.
//! * Counting ([`Plan::exchanges`], [`Plan::broadcast_exchanges`], [`Plan::reused_exchanges`],
//!   [`Plan::user_requested_exchanges`]) walks [`Plan::running_nodes`]: the running tree plus
//!   subquery and optimized-out trees, each operator id once. A shuffle is an `Exchange` or a
//!   Photon shuffle map stage (`PhotonShuffleMapStage`, whose sink and source are not counted)
//!   unless that stage is an `EXECUTOR_BROADCAST`, which counts as a broadcast.
//! * Databricks Photon: operators are classified by the Spark operator they replace;
//!   [`Plan::photon_explanation`] reads the `== Photon Explanation ==` trailer (what Photon could
//!   not run, and why) and [`Plan::outside_photon`] names the operators of a Photon plan that
//!   ran in Spark's JVM engine instead.
//! * `Plan` serialises to the `sparkdiag/plan/v1` JSON entry ([`SCHEMA`]); children are ids.
//!
//! Text that holds no plan, or a tree whose indentation cannot be read, is a [`PlanError`] with
//! its line. No input makes the parser panic.
//!
//! # Example
//! ```
//! let text = "\
//! == Physical Plan ==
//! * Sort (4)
//! +- Exchange (3)
//!    +- * ColumnarToRow (2)
//!       +- Scan parquet default.t (1)
//!
//!
//! (1) Scan parquet default.t
//! Output [1]: [a#1]
//! PushedFilters: [IsNotNull(a)]
//! ReadSchema: struct<a:int>
//!
//! (2) ColumnarToRow [codegen id : 1]
//! Input [1]: [a#1]
//!
//! (3) Exchange
//! Input [1]: [a#1]
//! Arguments: rangepartitioning(a#1 ASC NULLS FIRST, 200), ENSURE_REQUIREMENTS, [plan_id=7]
//!
//! (4) Sort [codegen id : 2]
//! Input [1]: [a#1]
//! Arguments: [a#1 ASC NULLS FIRST], true, 0
//! ";
//! let plans = sparkdiag_plan::parse_plans(text)?;
//! let plan = &plans[0];
//! assert_eq!(plan.exchanges(), 1);
//! let exchange = plan.node_by_id(3).unwrap();
//! let partitioning = exchange.details.partitioning.as_ref().unwrap();
//! assert_eq!(partitioning.num_partitions, Some(200));
//! assert!(plan.user_requested_exchanges().is_empty());
//! assert_eq!(plan.node_by_id(4).unwrap().codegen_stage, Some(2));
//! # Ok::<(), sparkdiag_plan::PlanError>(())
//! ```

#![deny(missing_docs)]

mod counts;
mod details;
mod error;
mod model;
mod oneline;
mod operator;
mod parse;
mod photon;
mod serialize;
mod text;
mod tree;

pub use counts::{ExchangeInfo, ExchangeKind};
pub use details::{
    Details, Field, Partitioning, PartitioningKind, ScanDetails, ShuffleOrigin, Statistics,
    parse_partitioning, parse_statistics,
};
pub use error::{ErrorKind, PlanError};
pub use model::{
    AqeLabel, Plan, PlanKind, PlanNode, PlanWarning, Section, Subplan, Subquery, Trailer,
    WarningKind,
};
pub use operator::Operator;
pub use parse::parse_plans;
pub use photon::{PHOTON_EXPLANATION, PhotonExplanation, Unsupported, UnsupportedKind};
pub use serialize::SCHEMA;
