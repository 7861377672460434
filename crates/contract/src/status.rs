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
