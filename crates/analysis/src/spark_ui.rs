//! `--ui-url`: each finding's page in the Spark UI (its first stage, else its first job, else its
//! first SQL execution), put in its evidence as `spark_ui_url`, where every format shows it.

use sparkdiag_contract::{Finding, Report};

/// Puts the Spark UI page of each finding of `report` under `base` in its evidence
/// (`spark_ui_url`). `base` is a History Server (`http://host:18080`, whose pages for an
/// application are under `/history/APP_ID/`) or one application's own UI (a Databricks
/// cluster's Spark UI, `.../sparkui/CLUSTER/driver-N`, or a YARN proxy).
pub fn link_findings(report: &mut Report, base: &str) {
    let Some(app) = app_root(base, report) else {
        return;
    };
    for f in &mut report.findings {
        if let Some(url) = page(&app, &f.finding) {
            f.finding
                .evidence
                .insert("spark_ui_url".into(), serde_json::Value::String(url));
        }
    }
}

/// The page of the Spark UI that shows a finding's first stage, else its first job, else its
/// first SQL execution.
fn page(app: &str, finding: &Finding) -> Option<String> {
    if let Some(stage) = finding.scope.stage_ids.first() {
        return Some(format!("{app}/stages/stage/?id={stage}&attempt=0"));
    }
    if let Some(job) = finding.scope.job_ids.first() {
        return Some(format!("{app}/jobs/job/?id={job}"));
    }
    if let Some(sql) = finding.scope.sql_execution_ids.first() {
        return Some(format!("{app}/SQL/execution/?id={sql}"));
    }
    None
}

/// Where one application's pages start: a History Server's `/history/APP[/ATTEMPT]`, or the
/// base itself when it already names one application's UI (a live driver, Databricks).
fn app_root(base: &str, report: &Report) -> Option<String> {
    let base = base.trim_end_matches('/');
    if base.contains("/history/") || base.contains("/sparkui/") || base.contains("/proxy/") {
        return Some(base.to_string());
    }
    let app = report.application.id.as_deref()?;
    Some(match report.application.attempt_id.as_deref() {
        Some(attempt) => format!("{base}/history/{app}/{attempt}"),
        None => format!("{base}/history/{app}"),
    })
}
