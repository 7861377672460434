//! One `--conf` list for the whole run: the settings the findings name, merged with the cores
//! the replay found enough, so a user pastes one submission instead of reconciling a list per
//! finding.

use std::cmp::Reverse;

use sparkdiag_model::{Application, Platform};
use sparkdiag_rules::Finding;

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
    if let Some((key, value)) = cores.and_then(|n| cores_setting(app, n, cores_today)) {
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

/// The setting that gives the application `cores` executor cores on its cluster manager: whole
/// executors of today's size on YARN and Kubernetes, `spark.cores.max` on a standalone cluster.
/// Under dynamic allocation the ceiling, and only where it is what holds the count: raised when
/// it is below what more cores need (a run that stayed under a higher ceiling was held by its
/// ramp-up or its cluster, which no ceiling changes), lowered when fewer would do. None on
/// Databricks, where the cluster's node count sizes it; in local mode, where the machine's cores
/// bound whatever the master asks for; and where the manager is unknown.
fn cores_setting(app: &Application, cores: i64, cores_today: i64) -> Option<(String, String)> {
    if app.platform() == Platform::Databricks || cores < 1 {
        return None;
    }
    let per_executor = sparkdiag_facts::stage_shape::app_shape(app)
        .cores_per_executor
        .max(1);
    let executors = (cores + per_executor - 1) / per_executor;
    let ceiling = app
        .spark_properties
        .get("spark.dynamicAllocation.maxExecutors")
        .and_then(|v| v.trim().parse::<i64>().ok());
    let holds = if cores > cores_today {
        ceiling.is_some_and(|c| c < executors)
    } else {
        ceiling.is_none_or(|c| c > executors)
    };
    Some(match app.cluster_manager()? {
        "yarn" | "kubernetes" if app.dynamic_allocation() && holds => (
            "spark.dynamicAllocation.maxExecutors".into(),
            executors.to_string(),
        ),
        "yarn" | "kubernetes" if app.dynamic_allocation() => return None,
        "yarn" | "kubernetes" => ("spark.executor.instances".into(), executors.to_string()),
        "standalone" => ("spark.cores.max".into(), cores.to_string()),
        _ => return None,
    })
}

/// The list said as one submission, when it holds two settings or more (one a finding names
/// is its finding's own advice already), or when its one setting is the cores replay's, which
/// no finding's advice carries. The flags come last, after `: `, so a view can set them apart.
pub fn advice(settings: &[Setting]) -> Option<crate::Advice> {
    let replay_alone = matches!(settings, [only] if only.from == "what-if");
    if settings.len() < 2 && !replay_alone {
        return None;
    }
    if replay_alone {
        return Some(crate::Advice {
            kind: "settings",
            text: format!(
                "As a setting on this cluster manager (from the cores replay): {}",
                submission(settings)
            ),
        });
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
    Some(crate::Advice {
        kind: "settings",
        text: format!(
            "Together, as one submission (from {}): {}",
            from.join(", "),
            submission(settings)
        ),
    })
}
