//! Spark's size and time settings read as Spark reads them: `4g`, `512m`, `60s`, `5min`.

/// A mebibyte: the unit of a bare number in Spark's memory settings.
pub const MIB: u64 = 1 << 20;

/// A Spark size setting in bytes: `4g`, `4096m`, `512k`, `1.5gb`; a bare number is in `default_unit`.
pub fn parse_size(text: &str, default_unit: u64) -> Option<u64> {
    let text = text.trim().to_ascii_lowercase();
    let (number, unit) = match text.find(|c: char| c.is_ascii_alphabetic()) {
        Some(i) => (&text[..i], &text[i..]),
        None => (text.as_str(), ""),
    };
    let n: f64 = number.trim().parse().ok()?;
    let scale: u64 = match unit.trim_end_matches('b') {
        "" if unit.is_empty() => default_unit,
        "" => 1,
        "k" => 1 << 10,
        "m" => 1 << 20,
        "g" => 1 << 30,
        "t" => 1 << 40,
        _ => return None,
    };
    // A size past any machine (`16777216t` is 2^64 bytes) is a typo, and would overflow every
    // sum and doubling made of it.
    let bytes = n * scale as f64;
    (n >= 0.0 && bytes <= crate::memory_limits::MAX_SIZE_BYTES as f64).then_some(bytes as u64)
}

/// `spark.executor.memory` (or any memory setting whose bare number is in MiB) in bytes: `4g`,
/// `4096m`, `4096`.
pub fn parse_memory(text: &str) -> Option<u64> {
    parse_size(text, MIB)
}

/// A Spark time setting in milliseconds: `60s`, `5min`, `2h`, `100ms`, or a bare number in
/// seconds (the unit of the dynamic-allocation timeouts), as Spark's `timeStringAsSec` reads it.
pub fn spark_seconds_setting_ms(text: &str) -> Option<i64> {
    let text = text.trim().to_ascii_lowercase();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let number: i64 = text[..split].parse().ok()?;
    let scale = match text[split..].trim() {
        "" | "s" | "sec" | "secs" => 1_000,
        "ms" => 1,
        "us" => return Some(number / 1_000),
        "m" | "min" | "mins" => 60_000,
        "h" => 3_600_000,
        "d" => 86_400_000,
        _ => return None,
    };
    number.checked_mul(scale)
}

/// Whether AQE was on. What the queries ran as decides first: a plan rooted at
/// `AdaptiveSparkPlan`, or an adaptive re-plan (`SparkListenerSQLAdaptiveExecutionUpdate`), is
/// AQE at work whatever the settings say. Then `spark.sql.adaptive.enabled`, then the default
/// of what wrote the log: on in Databricks runtimes (from 7.3 LTS, whose Spark 3.0 and 3.1 had
/// it off by default; Databricks' "Adaptive query execution" page) and in Spark from 3.2
/// (SPARK-33679); unknown versions count as on.
pub fn aqe_enabled(app: &sparkdiag_model::Application) -> bool {
    let adaptive_plan = app.sql.iter().any(|s| {
        s.final_plan.is_some()
            || s.plan
                .as_ref()
                .is_some_and(|p| p.node_name == "AdaptiveSparkPlan")
    });
    if adaptive_plan {
        return true;
    }
    match app.spark_properties.get("spark.sql.adaptive.enabled") {
        Some(value) => value.trim().eq_ignore_ascii_case("true"),
        None => {
            app.platform() == sparkdiag_model::Platform::Databricks
                || app.spark_version_number().is_none_or(|v| v >= (3, 2))
        }
    }
}

/// `--conf key=value` as a shell takes it: the contract's one way to write a flag.
pub use sparkdiag_contract::whatif::conf_flag;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_sizes_as_spark_does() {
        assert_eq!(parse_size("4g", MIB), Some(4 << 30));
        assert_eq!(parse_size("2048", MIB), Some(2048 << 20));
        assert_eq!(parse_size("1.5gb", MIB), Some(3 << 29));
        assert_eq!(parse_size("4m", 1), Some(4 << 20));
        assert_eq!(parse_size("1024", 1), Some(1024));
        assert_eq!(parse_size("lots", 1), None);
        assert_eq!(parse_memory("4g"), Some(4 << 30));
        assert_eq!(parse_memory("512m"), Some(512 << 20));
        assert_eq!(parse_memory("2048"), Some(2048 << 20));
        assert_eq!(parse_memory("1.5gb"), Some(3 << 29));
        assert_eq!(parse_memory("lots"), None);
    }

    #[test]
    fn reads_times_as_spark_does() {
        assert_eq!(spark_seconds_setting_ms("60s"), Some(60_000));
        assert_eq!(spark_seconds_setting_ms("150"), Some(150_000));
        assert_eq!(spark_seconds_setting_ms(" 5min"), Some(300_000));
        assert_eq!(spark_seconds_setting_ms("2h"), Some(7_200_000));
        assert_eq!(spark_seconds_setting_ms("100ms"), Some(100));
        assert_eq!(spark_seconds_setting_ms("infinity"), None);
        assert_eq!(spark_seconds_setting_ms("9223372036854775807d"), None);
    }

    #[test]
    fn aqe_is_the_setting_else_the_default_of_the_version() {
        let mut app = sparkdiag_model::Application::default();
        assert!(aqe_enabled(&app), "an unknown version counts as on");
        app.spark_version = Some("3.1.2".into());
        assert!(!aqe_enabled(&app));
        app.spark_version = Some("3.5.1".into());
        assert!(aqe_enabled(&app));
        app.spark_properties
            .insert("spark.sql.adaptive.enabled".into(), " false".into());
        assert!(!aqe_enabled(&app));
    }
}
