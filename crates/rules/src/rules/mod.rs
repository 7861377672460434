//! The rule catalogue. Each rule lives in its own file; [`ALL`] lists them in catalogue order.

mod aqe_disabled;
mod back_to_back_shuffles;
mod broadcast_disabled;
pub(crate) mod common;
mod data_skew;
mod default_shuffle_partitions;
mod driver_time;
mod dstreams_falling_behind;
mod executor_wait;
mod failed_job;
mod filter_not_pushed;
mod gc_pressure;
mod heap_overprovisioned;
mod idle_cores;
mod incomplete_run;
mod input_read_again;
mod job_train;
pub(crate) mod lost_executors;
mod nested_loop_join;
mod oversized_partitions;
mod photon_fallback;
mod plan_walk;
mod python_udf;
mod query_after_jobs;
mod repeated_scans;
mod round_robin_repartition;
mod slow_executor;
mod slow_tasks;
mod small_files;
mod smj_could_broadcast;
mod sort_before_write;
mod spill;
mod straggler;
mod streaming_batch_overhead;
mod streaming_common;
mod streaming_falling_behind;
mod streaming_idle_triggers;
mod streaming_late_rows;
mod streaming_query_failed;
mod streaming_state_partitions;
mod streaming_state_unbounded;
mod task_failures;
mod tiny_tasks;
mod too_few_cores;
mod too_many_exchanges;
mod wasted_attempts;
mod window_without_partition;

#[cfg(test)]
pub(crate) mod testing;

use crate::Rule;

/// The what-if reads GC002's sizing from its finding rather than sizing the heap again.
pub use heap_overprovisioned::HEAP_OVERPROVISIONED;

pub static ALL: &[&Rule] = &[
    &data_skew::DATA_SKEW,
    &straggler::STRAGGLER,
    &slow_executor::SLOW_EXECUTOR,
    &tiny_tasks::TINY_TASKS,
    &oversized_partitions::OVERSIZED,
    &small_files::SMALL_FILES,
    &spill::SPILL,
    &gc_pressure::GC_PRESSURE,
    &heap_overprovisioned::HEAP_OVERPROVISIONED,
    &driver_time::DRIVER_TIME,
    &job_train::JOB_TRAIN,
    &query_after_jobs::QUERY_AFTER_JOBS,
    &idle_cores::IDLE_CORES,
    &too_few_cores::TOO_FEW_CORES,
    &executor_wait::EXECUTOR_WAIT,
    &failed_job::FAILED_JOB,
    &task_failures::TASK_FAILURES,
    &lost_executors::LOST_EXECUTORS,
    &wasted_attempts::WASTED_ATTEMPTS,
    &incomplete_run::INCOMPLETE_RUN,
    &aqe_disabled::AQE_DISABLED,
    &default_shuffle_partitions::DEFAULT_SHUFFLE_PARTITIONS,
    &broadcast_disabled::BROADCAST_DISABLED,
    &too_many_exchanges::TOO_MANY_EXCHANGES,
    &back_to_back_shuffles::BACK_TO_BACK,
    &smj_could_broadcast::SMJ_COULD_BROADCAST,
    &nested_loop_join::NESTED_LOOP_JOIN,
    &python_udf::PYTHON_UDF,
    &window_without_partition::WINDOW_WITHOUT_PARTITION,
    &round_robin_repartition::ROUND_ROBIN,
    &repeated_scans::REPEATED_SCANS,
    &input_read_again::INPUT_READ_AGAIN,
    &sort_before_write::SORT_BEFORE_WRITE,
    &filter_not_pushed::FILTER_NOT_PUSHED,
    &photon_fallback::PHOTON_FALLBACK,
    &streaming_falling_behind::STREAMING_FALLING_BEHIND,
    &streaming_batch_overhead::STREAMING_BATCH_OVERHEAD,
    &streaming_query_failed::STREAMING_QUERY_FAILED,
    &streaming_state_unbounded::STREAMING_STATE_UNBOUNDED,
    &streaming_state_partitions::STREAMING_STATE_PARTITIONS,
    &streaming_late_rows::STREAMING_LATE_ROWS,
    &dstreams_falling_behind::DSTREAMS_FALLING_BEHIND,
    &streaming_idle_triggers::STREAMING_IDLE_TRIGGERS,
];
