//! One `--conf` list for the whole run: the settings the findings name, merged with the cores
//! the replay found enough, so a user pastes one submission instead of reconciling a list per
//! finding.

use std::cmp::Reverse;

use sparkdiag_contract::Finding;
use sparkdiag_model::{Application, Platform};

pub use sparkdiag_contract::whatif::{Setting, split_flags, submission};

/// The settings every finding names (`evidence.conf`), most severe and most
/// recoverable first, each key once: where two findings set the same key, the first one's value
/// stands (a memory failure's raise beats right-sizing's cut). Then the executors that give
/// `cores`, when the replay recommends a count other than `cores_today`.
pub fn merged(
    app: &Application,
    findings: &[Finding],
    cores: Option<i64>,
    cores_today: i64,
) -> Vec<Setting> {
    let mut ranked: Vec<&Finding> = findings.iter().collect();
    ranked.sort_by_key(|f| (f.severity, Reverse(f.impact_ms)));
    let mut settings: Vec<Setting> = Vec::new();
    for finding in ranked {
        let Some(conf) = finding.evidence.get("conf").and_then(|c| c.as_array()) else {
            continue;
        };
        for (key, value) in conf
            .iter()
            .filter_map(|entry| entry.as_str()?.split_once('='))
        {
            add(app, &mut settings, key, value, finding.rule);
        }
    }
    if let Some((key, value)) =
        cores.and_then(|n| cores_on_this_cluster(app, n, cores_today).setting)
    {
        add(app, &mut settings, &key, &value, "what-if");
    }
    settings
}

fn add(app: &Application, settings: &mut Vec<Setting>, key: &str, value: &str, from: &str) {
    let (key, value) = (key.trim(), value.trim());
    // A setting the run already had changes nothing.
    let already = app
        .spark_properties
        .get(key)
        .is_some_and(|v| v.trim().eq_ignore_ascii_case(value));
    if key.is_empty() || already || settings.iter().any(|s| s.key == key) {
        return;
    }
    settings.push(Setting {
        key: key.to_string(),
        value: value.to_string(),
        from: from.to_string(),
    });
}

/// How this application would run on `cores` executor cores, on its cluster manager: the
/// setting that does it, and the words for holding fewer. One match on the manager, so the
/// flag a submission carries and the sentence the advice says never name different things.
pub(crate) struct CoresOnThisCluster {
    /// Whole executors of today's size on YARN and Kubernetes, `spark.cores.max` on a standalone
    /// cluster. Under dynamic allocation the ceiling, and only where it is what holds the count:
    /// raised when it is below what more cores need (a run that stayed under a higher ceiling
    /// was held by its ramp-up or its cluster, which no ceiling changes), lowered when fewer
    /// would do. None on Databricks, where the cluster's node count sizes it; in local mode,
    /// where the master's `local[N]` is no setting; and where the manager is unknown.
    pub setting: Option<(String, String)>,
    /// How to hold fewer cores: a local master's threads are no executors, a standalone
    /// application's cores are capped, a Databricks cluster is sized by its workers, and under
    /// dynamic allocation the ceiling is what a user sets.
    pub fewer: String,
}

pub(crate) fn cores_on_this_cluster(
    app: &Application,
    cores: i64,
    cores_today: i64,
) -> CoresOnThisCluster {
    let said = |setting: Option<(&str, i64)>, fewer: String| CoresOnThisCluster {
        setting: setting
            .filter(|_| cores >= 1)
            .map(|(key, n)| (key.to_string(), n.to_string())),
        fewer,
    };
    if app.platform() == Platform::Databricks {
        return said(
            None,
            "A smaller cluster (fewer workers, or a smaller worker type) costs less for the same run."
                .into(),
        );
    }
    let per_executor = sparkdiag_facts::stage_shape::app_shape(app)
        .cores_per_executor
        .max(1);
    let executors = (cores + per_executor - 1) / per_executor;
    let ceiling = app
        .spark_properties
        .get("spark.dynamicAllocation.maxExecutors")
        .and_then(|v| v.trim().parse::<i64>().ok());
    let ceiling_holds = if cores > cores_today {
        ceiling.is_some_and(|c| c < executors)
    } else {
        ceiling.is_none_or(|c| c > executors)
    };
    let executors_fewer = || "Fewer or smaller executors cost less for the same run.".to_string();
    match app.cluster_manager() {
        Some("local") => said(
            None,
            format!(
                "--master local[{cores}] does the same run and leaves the machine's other cores free."
            ),
        ),
        Some("standalone") => said(
            Some(("spark.cores.max", cores)),
            format!("Capping the cores (spark.cores.max={cores}) costs less for the same run."),
        ),
        Some("yarn" | "kubernetes") if app.dynamic_allocation() => said(
            ceiling_holds.then_some(("spark.dynamicAllocation.maxExecutors", executors)),
            "A lower ceiling (spark.dynamicAllocation.maxExecutors) costs less for the same run."
                .into(),
        ),
        Some("yarn" | "kubernetes") => said(
            Some(("spark.executor.instances", executors)),
            executors_fewer(),
        ),
        _ => said(None, executors_fewer()),
    }
}

/// The list said as one submission, when it holds two settings or more (one a finding names
/// is its finding's own advice already), or when its one setting is the cores replay's, which
/// no finding's advice carries. The flags come last, after `: `, so a view can set them apart.
pub fn advice(settings: &[Setting]) -> Option<crate::Advice> {
    let replay_alone = matches!(settings, [only] if only.from == "what-if");
    if settings.len() < 2 && !replay_alone {
        return None;
    }
    let mut from: Vec<&str> = Vec::new();
    for s in settings {
        let name = if s.from == "what-if" {
            "the cores replay"
        } else {
            s.from.as_str()
        };
        if !from.contains(&name) {
            from.push(name);
        }
    }
    let opening = if replay_alone {
        "As a setting on this cluster manager"
    } else {
        "Together, as one submission"
    };
    Some(crate::Advice {
        kind: "settings",
        text: format!(
            "{opening} (from {}): {}",
            from.join(", "),
            submission(settings)
        ),
    })
}
