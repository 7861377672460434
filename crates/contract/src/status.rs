//! The statuses, the platform and the kind of workload: the vocabulary the model classifies an
//! application with and the report names.

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Platform {
    Spark,
    Databricks,
    /// Amazon EMR (`spark.emr.*` or EMR's own class paths in the properties).
    Emr,
    /// Google Dataproc (`spark.dataproc.*`).
    Dataproc,
}

/// How an executor left the application, from its `ExecutorRemoved` reason and the setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Removal {
    /// Still there when the log ends.
    NotRemoved,
    /// Released together with the application's end.
    AtApplicationEnd,
    /// Given back by the driver: dynamic allocation releasing an idle executor, or an explicit
    /// kill request from the application.
    Released,
    /// Decommissioned gracefully (its blocks and shuffle files migrated first).
    Decommissioned,
    /// Killed or preempted by the cluster manager (YARN, Kubernetes, a spot reclaim).
    KilledByClusterManager,
    /// Died: a crash, an exit code, a lost heartbeat, the OOM killer.
    Lost,
}

impl Removal {
    pub fn name(self) -> &'static str {
        match self {
            Removal::NotRemoved => "not removed",
            Removal::AtApplicationEnd => "at application end",
            Removal::Released => "released",
            Removal::Decommissioned => "decommissioned",
            Removal::KilledByClusterManager => "killed by the cluster manager",
            Removal::Lost => "lost",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum AppStatus {
    Succeeded,
    Failed,
    /// No `SparkListenerApplicationEnd`: still running, killed, or the log is cut.
    Incomplete,
}

/// How an application ended, in the words a night counts it by: its [`AppStatus`] with the
/// jobs that failed and the jobs its own program stopped. The fleet page, the night's tables
/// (`applications.outcome`) and the report (`application.outcome_kind`) say the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    Succeeded,
    /// The application itself failed (a non-zero exit code, or its last job failed).
    Failed,
    /// It exited cleanly, but a job failed: a driver that catches the failure still exits 0.
    SucceededWithFailedJobs,
    /// No application end: killed, lost with its driver, or its log cut short.
    KilledOrIncomplete,
    /// It ended cleanly, and the only jobs that did not finish were cancelled by the program's
    /// own stop (a streaming query's in-flight batch on `query.stop()`): not a failure.
    StoppedByProgram,
}

impl Outcome {
    /// The outcome of an application of `status` whose `failed_jobs` failed for a reason of
    /// their own and whose `stopped_jobs` the program's stop cancelled.
    pub fn of(status: AppStatus, failed_jobs: usize, stopped_jobs: usize) -> Outcome {
        match status {
            AppStatus::Incomplete => Outcome::KilledOrIncomplete,
            AppStatus::Failed => Outcome::Failed,
            AppStatus::Succeeded if failed_jobs > 0 => Outcome::SucceededWithFailedJobs,
            AppStatus::Succeeded if stopped_jobs > 0 => Outcome::StoppedByProgram,
            AppStatus::Succeeded => Outcome::Succeeded,
        }
    }

    /// The name the tables and the JSON use: `succeeded_with_failed_jobs`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::SucceededWithFailedJobs => "succeeded_with_failed_jobs",
            Outcome::KilledOrIncomplete => "killed_or_incomplete",
            Outcome::StoppedByProgram => "stopped_by_program",
        }
    }

    /// For people: "succeeded with failed jobs".
    pub fn words(self) -> &'static str {
        match self {
            Outcome::Succeeded => "succeeded",
            Outcome::Failed => "failed",
            Outcome::SucceededWithFailedJobs => "succeeded with failed jobs",
            Outcome::KilledOrIncomplete => "killed or incomplete",
            Outcome::StoppedByProgram => "stopped by the program",
        }
    }

    /// Read back from [`Outcome::name`].
    pub fn parse(name: &str) -> Option<Outcome> {
        [
            Outcome::Succeeded,
            Outcome::Failed,
            Outcome::SucceededWithFailedJobs,
            Outcome::KilledOrIncomplete,
            Outcome::StoppedByProgram,
        ]
        .into_iter()
        .find(|o| o.name() == name)
    }

    /// What a night counts as a failure: the application failed, lost a job, or never ended.
    /// A program that stopped its own streaming query did not fail.
    pub fn is_failure(self) -> bool {
        matches!(
            self,
            Outcome::Failed | Outcome::SucceededWithFailedJobs | Outcome::KilledOrIncomplete
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Running,
    Succeeded,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StageStatus {
    /// Named by a job, not submitted yet.
    Pending,
    Active,
    Complete,
    Failed,
    /// Its output already existed, so it never ran.
    Skipped,
}

/// What the application is, as the batch-only rules need to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Workload {
    /// A program that runs its jobs and ends.
    Batch,
    /// A shell, a notebook, the Thrift server, Livy: people between commands.
    Interactive,
    StructuredStreaming,
    Dstreams,
    SparkConnect,
}

impl Workload {
    /// Its runs of jobs are a scheduler's triggers or other people's requests, not a loop in
    /// the program, and its idle time is waiting for data or clients.
    pub fn is_long_running(self) -> bool {
        !matches!(self, Workload::Batch)
    }

    pub fn name(self) -> &'static str {
        match self {
            Workload::Batch => "batch",
            Workload::Interactive => "interactive",
            Workload::StructuredStreaming => "structured_streaming",
            Workload::Dstreams => "dstreams",
            Workload::SparkConnect => "spark_connect",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_outcome_weighs_the_status_first_then_failed_then_stopped_jobs() {
        use AppStatus::*;
        assert_eq!(Outcome::of(Incomplete, 2, 0), Outcome::KilledOrIncomplete);
        assert_eq!(Outcome::of(Failed, 0, 1), Outcome::Failed);
        assert_eq!(
            Outcome::of(Succeeded, 1, 1),
            Outcome::SucceededWithFailedJobs
        );
        assert_eq!(Outcome::of(Succeeded, 0, 1), Outcome::StoppedByProgram);
        assert_eq!(Outcome::of(Succeeded, 0, 0), Outcome::Succeeded);
        assert!(!Outcome::StoppedByProgram.is_failure());
        assert!(Outcome::KilledOrIncomplete.is_failure());
        for o in [Outcome::Failed, Outcome::StoppedByProgram] {
            assert_eq!(Outcome::parse(o.name()), Some(o));
            let json = serde_json::to_string(&o).unwrap();
            assert_eq!(json, format!("\"{}\"", o.name()));
        }
    }
}
