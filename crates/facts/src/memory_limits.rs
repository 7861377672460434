//! The memory an application asked for, as Spark computes it from the settings: the executor heap,
//! the overhead beside it, off-heap and Python memory, the unified pool's share, and the driver's.
//! The out-of-memory diagnosis and the memory figures set what ran out, and the peaks, against it.

use sparkdiag_model::Application;

use crate::settings::{MIB, parse_size};

/// The least overhead Spark gives an executor (`MEMORY_OVERHEAD_MIN_MIB`, 384 MiB).
pub const MIN_OVERHEAD_BYTES: u64 = 384 * MIB;

/// The smallest heap worth recommending: 1.5x the reserve, as Spark's own check asks
/// (`UnifiedMemoryManager` refuses a heap under 450 MiB).
pub const MIN_HEAP_BYTES: u64 = 450 * MIB;

/// The largest size read from a setting, 1 EiB: beyond any machine, and small enough that the
/// limits' sums (heap, overhead, off-heap, Python) and their doublings in advice stay within a
/// `u64`. A larger one (`16777216t` is 2^64 bytes) overflowed them; Spark itself refuses a size
/// over a Java long, so such a log is not Spark's.
pub const MAX_SIZE_BYTES: u64 = 1 << 60;

pub use sparkdiag_contract::memory::{MemoryLimits, RESERVED_BYTES};

/// The memory `app` asked for, as Spark computes it from its settings.
pub fn of(app: &Application) -> MemoryLimits {
    let prop = |k: &str| app.spark_properties.get(k).map(|v| v.trim());
    let mib = |k: &str| prop(k).and_then(|v| parse_size(v, MIB));
    let executor_memory = mib("spark.executor.memory");
    let heap = executor_memory.unwrap_or(1 << 30);
    let overhead_factor = prop("spark.executor.memoryOverheadFactor")
        .or(prop("spark.kubernetes.memoryOverheadFactor"))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0.1);
    let overhead =
        mib("spark.executor.memoryOverhead").or(mib("spark.yarn.executor.memoryOverhead"));
    let off_heap = prop("spark.memory.offHeap.enabled")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
        .then(|| prop("spark.memory.offHeap.size").and_then(|v| parse_size(v, 1)))
        .flatten();
    let cores = prop("spark.executor.cores")
        .and_then(|v| v.parse().ok())
        .or_else(|| {
            app.executors
                .iter()
                .filter(|e| e.id != "driver")
                .filter_map(|e| e.cores)
                .max()
        })
        .unwrap_or(1)
        .max(1);
    MemoryLimits {
        executor_memory_bytes: heap,
        executor_memory_set: executor_memory.is_some(),
        executor_overhead_bytes: overhead.unwrap_or_else(|| {
            ((heap as f64 * overhead_factor) as u64).clamp(MIN_OVERHEAD_BYTES, MAX_SIZE_BYTES)
        }),
        executor_overhead_set: overhead.is_some(),
        overhead_factor,
        off_heap_bytes: off_heap.filter(|b| *b > 0),
        pyspark_memory_bytes: mib("spark.executor.pyspark.memory"),
        memory_fraction: prop("spark.memory.fraction")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0.6),
        executor_cores: cores,
        driver_memory_bytes: mib("spark.driver.memory").unwrap_or(1 << 30),
        driver_max_result_bytes: prop("spark.driver.maxResultSize")
            .and_then(|v| parse_size(v, 1))
            .unwrap_or(1 << 30),
        executor_java_options: prop("spark.executor.extraJavaOptions").map(str::to_string),
    }
}

/// The executors' Java options with the size `flag` sets doubled, the rest as they were:
/// `-XX:+UseG1GC -XX:MaxMetaspaceSize=112m` for `...=56m`, without the options Spark adds to
/// them itself (it adds them again). `None` when the flag is not set or its size cannot be
/// read.
pub fn java_options_with_doubled(limits: &MemoryLimits, flag: &str) -> Option<String> {
    let bytes = parse_size(limits.jvm_flag(flag)?, 1)?;
    let options = limits.executor_java_options.as_deref()?;
    Some(
        options
            .split_whitespace()
            .filter(|o| !is_sparks_own_java_option(o))
            .map(|o| {
                if o.starts_with(flag) {
                    format!("{flag}{}", setting(bytes.saturating_mul(2)))
                } else {
                    o.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(" "),
    )
}

/// Options Spark 3.3+ appends to `spark.executor.extraJavaOptions` itself, so the log shows
/// them beside the user's: `JavaModuleOptions.DEFAULT_MODULE_OPTIONS` (and JDK 25's
/// `--sun-misc-unsafe-memory-access`), and the IPv6 preference.
fn is_sparks_own_java_option(option: &str) -> bool {
    const PREFIXES: &[&str] = &[
        "-XX:+IgnoreUnrecognizedVMOptions",
        "--add-modules=jdk.incubator.vector",
        "--add-opens=",
        "-Dio.netty.tryReflectionSetAccessible=",
        "-Dio.netty.allocator.type=",
        "-Dio.netty.handler.ssl.defaultEndpointVerificationAlgorithm=",
        "-Dio.netty.noUnsafe=",
        "--enable-native-access=",
        "--sun-misc-unsafe-memory-access=",
        "-Djava.net.preferIPv6Addresses=",
    ];
    PREFIXES.iter().any(|p| option.starts_with(p))
}

/// `n` bytes as a Spark setting: whole gibibytes as `4g`, else mebibytes rounded up (`1536m`).
pub fn setting(n: u64) -> String {
    if n >= 1 << 30 && n.is_multiple_of(1 << 30) {
        format!("{}g", n >> 30)
    } else {
        format!("{}m", n.div_ceil(MIB))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_jvm_cap_is_read_from_the_executors_java_options_and_doubled_in_place() {
        let none = limits(&[]);
        assert_eq!(none.jvm_flag("-XX:MaxMetaspaceSize="), None);
        assert_eq!(
            java_options_with_doubled(&none, "-XX:MaxMetaspaceSize="),
            None
        );
        let set = limits(&[(
            "spark.executor.extraJavaOptions",
            "-XX:+UseG1GC  -XX:MaxDirectMemorySize=64m -XX:MaxMetaspaceSize=56m",
        )]);
        assert_eq!(set.jvm_flag("-XX:MaxMetaspaceSize="), Some("56m"));
        assert_eq!(set.jvm_flag("-XX:MaxDirectMemorySize="), Some("64m"));
        assert_eq!(
            java_options_with_doubled(&set, "-XX:MaxMetaspaceSize=").as_deref(),
            Some("-XX:+UseG1GC -XX:MaxDirectMemorySize=64m -XX:MaxMetaspaceSize=112m")
        );
        assert_eq!(java_options_with_doubled(&set, "-Xss"), None);
        // As a Spark 4.3 log writes it: Spark's own options before the user's.
        let logged = limits(&[(
            "spark.executor.extraJavaOptions",
            "-Djava.net.preferIPv6Addresses=false -XX:+IgnoreUnrecognizedVMOptions \
             --add-modules=jdk.incubator.vector --add-opens=java.base/java.lang=ALL-UNNAMED \
             -Dio.netty.tryReflectionSetAccessible=true --enable-native-access=ALL-UNNAMED \
             -XX:MaxMetaspaceSize=56m",
        )]);
        assert_eq!(
            java_options_with_doubled(&logged, "-XX:MaxMetaspaceSize=").as_deref(),
            Some("-XX:MaxMetaspaceSize=112m")
        );
    }

    fn limits(props: &[(&str, &str)]) -> MemoryLimits {
        let app = Application {
            spark_properties: props
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            ..Default::default()
        };
        of(&app)
    }

    #[test]
    fn defaults_and_overhead_follow_spark() {
        let l = limits(&[]);
        assert_eq!(l.executor_memory_bytes, 1 << 30);
        assert_eq!(l.executor_overhead_bytes, MIN_OVERHEAD_BYTES);
        assert_eq!(l.driver_max_result_bytes, 1 << 30);
        let l = limits(&[
            ("spark.executor.memory", "8g"),
            ("spark.executor.cores", "4"),
        ]);
        assert_eq!(l.executor_overhead_bytes, (8u64 << 30) / 10);
        assert_eq!(
            l.pool_per_task_bytes(),
            (((8u64 << 30) - RESERVED_BYTES) as f64 * 0.6) as u64 / 4
        );
        let l = limits(&[
            ("spark.executor.memory", "4g"),
            ("spark.executor.memoryOverhead", "1g"),
            ("spark.executor.pyspark.memory", "512m"),
            ("spark.memory.offHeap.enabled", "true"),
            ("spark.memory.offHeap.size", "2g"),
        ]);
        assert_eq!(
            l.container_bytes(),
            (4u64 << 30) + (1 << 30) + (512 << 20) + (2 << 30)
        );
        assert_eq!(setting(4 << 30), "4g");
        assert_eq!(setting(1536 << 20), "1536m");
    }

    /// Sizes no machine has summed past `u64::MAX` (an overflow panic in a debug build, nonsense
    /// in a release one); found while writing the `memory` fuzz target (issue 31).
    #[test]
    fn a_size_beyond_any_machine_is_not_read() {
        assert_eq!(parse_size("16777216t", MIB), None);
        assert_eq!(parse_size("1048576t", MIB), Some(MAX_SIZE_BYTES));
        let l = limits(&[("spark.executor.memory", "16777216t")]);
        assert_eq!(
            l.executor_memory_bytes,
            1 << 30,
            "an unreadable size is the default"
        );
        let l = limits(&[
            ("spark.executor.memory", "1048576t"),
            ("spark.executor.memoryOverheadFactor", "1e300"),
            ("spark.memory.offHeap.enabled", "true"),
            ("spark.memory.offHeap.size", "1048576t"),
            ("spark.executor.pyspark.memory", "1073741824g"),
        ]);
        assert_eq!(l.executor_overhead_bytes, MAX_SIZE_BYTES);
        assert_eq!(l.container_bytes(), 4 * MAX_SIZE_BYTES);
        assert_eq!(setting(l.executor_memory_bytes * 2), "2147483648g");
    }
}
