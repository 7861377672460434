//! Runs one rule on a real log or plan from `testdata/`, so each rule's file can say where it
//! fires and where it stays quiet without going through the command line.

use std::path::PathBuf;

use sparkdiag_facts::Facts;
use sparkdiag_facts::testing::shared_path;
pub use sparkdiag_facts::testing::{apps, shared_apps};
use sparkdiag_model::Application;

use crate::{Config, Context, Finding, Rule, Thresholds};

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../testdata")
        .join(rel)
}

fn config(sets: &[&str]) -> Config {
    let mut config = Config::default();
    for set in sets {
        config.set_from_arg(set).unwrap();
    }
    config
}

/// What `rule` alone finds in the event log at `testdata/logs/{rel}`, with `--set` overrides.
pub fn on_log(rule: &Rule, rel: &str, sets: &[&str]) -> Vec<Finding> {
    apps(&format!("logs/{rel}"))
        .iter()
        .flat_map(|app| run(rule, app, sets))
        .collect()
}

/// What `rule` alone finds in `app`, with `--set` overrides.
pub fn run(rule: &Rule, app: &Application, sets: &[&str]) -> Vec<Finding> {
    let config = config(sets);
    Context::with_every_plan(app, &Facts::of(app), |ctx| {
        (rule.check)(
            ctx,
            &Thresholds {
                rule,
                config: &config,
            },
        )
    })
}

/// What `rule` alone finds in the plans printed in `testdata/plans/{file}`.
pub fn on_plan(rule: &Rule, file: &str) -> Vec<Finding> {
    let text = std::fs::read_to_string(testdata(&format!("plans/{file}"))).unwrap();
    let plans = sparkdiag_plan::parse_plans(&text).unwrap_or_else(|e| panic!("{file}: {e}"));
    let app = Application::default();
    let config = Config::default();
    (rule.check)(
        &Context::new(&app, &Facts::of_plans(plans)),
        &Thresholds {
            rule,
            config: &config,
        },
    )
}

/// The path of `plan-samples/{file}` beside the repository (`../shared`), or `None` when that
/// directory is absent; under CI a missing sample is a failure, not a skip.
fn sample_path(file: &str) -> Option<PathBuf> {
    shared_path(&format!("plan-samples/{file}"))
}

/// The plans printed in `plan-samples/{file}` beside the repository, or `None` when absent.
pub fn sample_plans(file: &str) -> Option<Vec<sparkdiag_plan::Plan>> {
    let text = std::fs::read_to_string(sample_path(file)?).unwrap();
    Some(sparkdiag_plan::parse_plans(&text).unwrap_or_else(|e| panic!("{file}: {e}")))
}

/// The applications of the event log `plan-samples/{file}` beside the repository, or `None`
/// when absent.
pub fn sample_apps(file: &str) -> Option<Vec<Application>> {
    sample_path(file)?;
    // `apps` reads under `testdata/`; the shared folder sits beside the repository.
    Some(apps(&format!("../../shared/plan-samples/{file}")))
}

/// What `rule` alone finds in the event log `real-world/{rel}` beside the repository (other
/// projects' real logs), with `--set` overrides, or `None` when absent.
pub fn on_real_world_log(rule: &Rule, rel: &str, sets: &[&str]) -> Option<Vec<Finding>> {
    let apps = shared_apps(&format!("real-world/{rel}"))?;
    Some(apps.iter().flat_map(|app| run(rule, app, sets)).collect())
}

/// What `rule` alone finds in `plan-samples/{file}` beside the repository (`../shared`), or
/// `None` when that directory is absent; under CI a missing sample is a failure, not a skip.
pub fn on_sample(rule: &Rule, file: &str) -> Option<Vec<Finding>> {
    let plans = sample_plans(file)?;
    let app = Application::default();
    let config = Config::default();
    Some((rule.check)(
        &Context::new(&app, &Facts::of_plans(plans)),
        &Thresholds {
            rule,
            config: &config,
        },
    ))
}

/// What `rule` alone finds in the event log `plan-samples/{file}` beside the repository, or
/// `None` when absent.
pub fn on_sample_log(rule: &Rule, file: &str) -> Option<Vec<Finding>> {
    let apps = sample_apps(file)?;
    Some(apps.iter().flat_map(|app| run(rule, app, &[])).collect())
}

pub fn assert_fires(found: &[Finding], code: &str) {
    assert!(!found.is_empty(), "{code} found nothing");
    for f in found {
        assert_eq!(f.rule, code, "{f:?}");
        assert!(!f.title.is_empty() && f.impact_ms >= 0, "{f:?}");
    }
}

pub fn assert_quiet(found: &[Finding]) {
    assert!(found.is_empty(), "{found:#?}");
}
