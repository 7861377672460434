//! What the what-if replay found: where the wall clock went, the predicted runs, the advice, and
//! the one `--conf` list to paste. The replay itself is `sparkdiag_whatif`'s.

use serde::Serialize;

/// Where today's wall clock went; the three parts add up to `wall_ms`.
#[derive(Debug, Clone, Serialize)]
pub struct Bounds {
    pub wall_ms: i64,
    /// No job was running: the driver alone (start-up, Python or JVM code between jobs, the end).
    pub driver_only_ms: i64,
    /// Jobs running, and no more cores would have made them shorter: each stage's longest task
    /// and the stages' dependencies (the replay with unlimited cores, less the driver's time).
    pub critical_path_ms: i64,
    /// Jobs running, with tasks waiting for a free core: what more cores could recover at most.
    pub core_wait_ms: i64,
}

/// One predicted run.
#[derive(Debug, Clone, Serialize)]
pub struct Scenario {
    /// What changes: a multiple of today's cores ("2x", "½x"), or "skewed tasks cut to the
    /// median", "driver's gaps between jobs removed", "both" at today's cores.
    pub label: String,
    /// Task slots (executor cores) in the replay.
    pub cores: i64,
    pub cut_skew: bool,
    pub remove_driver_gaps: bool,
    /// The replay's wall clock.
    pub predicted_ms: i64,
    /// `predicted_ms` against the replay of today's run (1x): negative is faster. Comparing two
    /// replays cancels what the replay cannot know (the same error is in both).
    pub change_vs_today: f64,
    /// Added in v1: the finding's change this scenario replays (`null` for the cores, skew and
    /// driver scenarios and for "every fix applied").
    #[serde(skip_serializing_if = "Option::is_none")]
    pub change: Option<crate::Change>,
    /// Added in v1: the findings whose change it replays (several can share one).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<&'static str>,
    /// Added in v1: every finding's replayable change applied together, which is
    /// `summary.recoverable_ms`.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub every_fix: bool,
}

impl Scenario {
    /// A change other than the number of cores: skew, gaps, a finding's fix.
    pub fn is_a_fix(&self) -> bool {
        self.cut_skew || self.remove_driver_gaps || self.change.is_some() || self.every_fix
    }
}

/// A sizing recommendation with its reason and predicted effect.
#[derive(Debug, Clone, Serialize)]
pub struct Advice {
    /// `cores`, `driver`, `skew`, `memory`, `settings`. (`partitions` is no longer written: the
    /// findings size partitions, each for its stage's shape; the schema keeps the value for old reports.)
    pub kind: &'static str,
    pub text: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct WhatIf {
    /// The executor cores the application had at its peak: the replay's "1x".
    pub cores_today: i64,
    pub bounds: Bounds,
    /// The replay of today's run with today's cores, next to the measured `bounds.wall_ms`: how
    /// far the replay is from the truth on this very log.
    pub replay_today_ms: i64,
    pub scenarios: Vec<Scenario>,
    pub advice: Vec<Advice>,
    /// Every setting the findings name and the cores the replay recommends, as one list to
    /// paste (`settings` advice says it as `--conf` flags).
    pub settings: Vec<Setting>,
    /// One sentence for a manager: what the run is bound by and what would help.
    pub headline: String,
    /// What the replay keeps fixed and what it cannot know.
    pub assumptions: Vec<&'static str>,
}

/// One setting of the merged list, and what asked for it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Setting {
    pub key: String,
    pub value: String,
    /// The rule whose finding names it, or `what-if` for the cores the replay recommends.
    pub from: String,
}

/// The flags of a `settings` advice set apart from its sentence, for a view that prints them
/// on their own: `None` for any other advice.
pub fn split_flags<'a>(advice: &'a Advice, settings: &[Setting]) -> Option<(&'a str, String)> {
    let flags = submission(settings);
    if advice.kind != "settings" || flags.is_empty() {
        return None;
    }
    let sentence = advice.text.strip_suffix(flags.as_str())?;
    Some((sentence.trim_end(), flags))
}

/// The list as one line to paste after `spark-submit`.
pub fn submission(settings: &[Setting]) -> String {
    settings
        .iter()
        .map(|s| conf_flag(&s.key, &s.value))
        .collect::<Vec<_>>()
        .join(" ")
}

/// `--conf key=value` as a shell takes it: quoted when the value holds a space or a character
/// the shell would read (`-XX:+UseG1GC -XX:MaxMetaspaceSize=112m`).
pub fn conf_flag(key: &str, value: &str) -> String {
    let plain = value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-_.,:=/+%@".contains(c));
    if plain {
        format!("--conf {key}={value}")
    } else {
        format!("--conf '{key}={}'", value.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flag_whose_value_holds_spaces_is_quoted_for_the_shell() {
        assert_eq!(
            conf_flag("spark.executor.memory", "2g"),
            "--conf spark.executor.memory=2g"
        );
        assert_eq!(
            conf_flag(
                "spark.executor.extraJavaOptions",
                "-XX:+UseG1GC -XX:MaxMetaspaceSize=112m"
            ),
            "--conf 'spark.executor.extraJavaOptions=-XX:+UseG1GC -XX:MaxMetaspaceSize=112m'"
        );
        assert_eq!(conf_flag("k", "it's"), "--conf 'k=it'\\''s'");
    }
}
