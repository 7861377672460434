//! The memory each executor and the driver used at its peak, against what it was given: the
//! report's `memory` section. `sparkdiag_facts` reads both from the log.

/// Spark's reserved memory (`RESERVED_SYSTEM_MEMORY_BYTES`): heap the unified pool never gets.
pub const RESERVED_BYTES: u64 = 300 << 20;

#[derive(Debug, Clone, serde::Serialize)]
pub struct MemoryFigures {
    /// What was configured, as Spark computes it from the settings.
    pub limits: MemoryLimits,
    /// One row per executor with peaks, and the driver's when the log has them.
    pub executors: Vec<ExecutorMemory>,
    /// The highest of each peak over the executors (the driver apart).
    pub executor_peak: Option<ExecutorMemory>,
    /// What the log does not hold, and why (a setting that was off, a Spark too old).
    pub missing: Vec<String>,
    /// Local mode: the driver's JVM ran the tasks, so only the driver's memory applies.
    pub local_mode: bool,
}

/// One JVM's peaks in bytes (GC in counts and milliseconds); `None` where the log has none.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ExecutorMemory {
    pub executor_id: String,
    /// The heap it was given: `spark.executor.memory`, or `spark.driver.memory` for the driver.
    pub heap_limit_bytes: u64,
    pub jvm_heap_bytes: Option<i64>,
    pub jvm_off_heap_bytes: Option<i64>,
    pub on_heap_execution_bytes: Option<i64>,
    pub on_heap_storage_bytes: Option<i64>,
    pub off_heap_execution_bytes: Option<i64>,
    pub off_heap_storage_bytes: Option<i64>,
    pub direct_pool_bytes: Option<i64>,
    pub mapped_pool_bytes: Option<i64>,
    pub process_tree_jvm_rss_bytes: Option<i64>,
    pub process_tree_python_rss_bytes: Option<i64>,
    pub process_tree_other_rss_bytes: Option<i64>,
    pub minor_gc_count: Option<i64>,
    pub minor_gc_time_ms: Option<i64>,
    pub major_gc_count: Option<i64>,
    pub major_gc_time_ms: Option<i64>,
    /// Peak heap over the heap given.
    pub heap_used_share: Option<f64>,
}

impl ExecutorMemory {
    /// Everything outside the heap the process tree held: JVM RSS beyond the heap, Python and
    /// other processes (what the container limit counts and the heap setting does not).
    pub fn beyond_heap_bytes(&self) -> Option<i64> {
        let jvm = self.process_tree_jvm_rss_bytes?;
        Some(
            (jvm - self.jvm_heap_bytes.unwrap_or(0)).max(0)
                + self.process_tree_python_rss_bytes.unwrap_or(0)
                + self.process_tree_other_rss_bytes.unwrap_or(0),
        )
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MemoryLimits {
    /// `spark.executor.memory` (Spark's default 1g when unset).
    pub executor_memory_bytes: u64,
    pub executor_memory_set: bool,
    /// `spark.executor.memoryOverhead`, or Spark's `max(384 MiB, factor x memory)`.
    pub executor_overhead_bytes: u64,
    pub executor_overhead_set: bool,
    /// `spark.executor.memoryOverheadFactor` (0.1 unless set).
    pub overhead_factor: f64,
    /// `spark.memory.offHeap.size` when `spark.memory.offHeap.enabled=true`.
    pub off_heap_bytes: Option<u64>,
    /// `spark.executor.pyspark.memory`: the Python workers' own limit, when set.
    pub pyspark_memory_bytes: Option<u64>,
    /// `spark.memory.fraction` (0.6): the unified pool's share of the heap after the reserve.
    pub memory_fraction: f64,
    /// Cores per executor: `spark.executor.cores`, or what the executors registered with.
    pub executor_cores: i64,
    /// `spark.driver.memory` (1g when unset).
    pub driver_memory_bytes: u64,
    /// `spark.driver.maxResultSize` (1g when unset; 0 means no limit).
    pub driver_max_result_bytes: u64,
    /// `spark.executor.extraJavaOptions`, where the JVM's own caps (`-XX:MaxMetaspaceSize`,
    /// `-XX:MaxDirectMemorySize`) are set. Not in the report: the environment has it whole.
    #[serde(skip)]
    pub executor_java_options: Option<String>,
}

impl MemoryLimits {
    /// The value a JVM flag is given in the executors' Java options (`-XX:MaxMetaspaceSize=`
    /// gives `56m`).
    pub fn jvm_flag(&self, flag: &str) -> Option<&str> {
        self.executor_java_options
            .as_deref()?
            .split_whitespace()
            .find_map(|o| o.strip_prefix(flag))
    }

    /// What the cluster manager holds an executor to: heap, overhead, off-heap and Python memory
    /// (YARN's container, Kubernetes' pod limit).
    pub fn container_bytes(&self) -> u64 {
        self.executor_memory_bytes
            + self.executor_overhead_bytes
            + self.off_heap_bytes.unwrap_or(0)
            + self.pyspark_memory_bytes.unwrap_or(0)
    }

    /// The unified (execution plus storage) pool of one executor's heap.
    pub fn unified_pool_bytes(&self) -> u64 {
        (self.executor_memory_bytes.saturating_sub(RESERVED_BYTES) as f64 * self.memory_fraction)
            as u64
    }

    /// What one task can count on from the heap's pool when every core runs a task.
    pub fn pool_per_task_bytes(&self) -> u64 {
        self.unified_pool_bytes() / self.executor_cores.max(1) as u64
    }
}
