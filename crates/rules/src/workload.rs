//! Which batch-only rules stand down on a streaming or Spark Connect application, in one
//! place, so that the rules themselves need not know about micro-batches.
//!
//! A stream's jobs come one trigger after another and a Connect server's from its clients: a
//! run of small jobs there is the scheduler or the clients, not a loop in the program to fold
//! into one job (DR002); time with no job running is waiting for data or requests (DR001); and
//! cores idle between triggers are the price of low latency, said by the streaming rules in
//! their own terms (UT001). Each of those rules says so itself ([`Rule::batch_only`]). The shell
//! and notebook sessions have their own wording inside those rules, so they are not gated here.

use sparkdiag_model::{Application, Workload};

use crate::{Finding, Rule};

/// Whether `rule` runs at all on an application of this `workload` ([`Application::workload`]):
/// a rule that describes a batch program's shape ([`Rule::batch_only`]) does not on a stream or
/// a Connect server.
pub(crate) fn applies(rule: &Rule, workload: Workload) -> bool {
    !(gated(workload) && rule.batch_only)
}

/// A rule's findings, less those about jobs the program's own stop cancelled (a query's
/// `stop()`, `StreamingContext.stop()` while a batch ran, a Connect server's shutdown): no
/// failure to fix there.
pub(crate) fn keep(app: &Application, workload: Workload, findings: Vec<Finding>) -> Vec<Finding> {
    if !gated(workload) {
        return findings;
    }
    let stopped = app.jobs_stopped_by_program();
    let stateful = query_stages(app, true);
    let streaming = query_stages(app, false);
    findings
        .into_iter()
        .filter(|f| {
            f.rule != "FA001"
                || f.scope.job_ids.is_empty()
                || !f
                    .scope
                    .job_ids
                    .iter()
                    .all(|j| stopped.binary_search(j).is_ok())
        })
        // A stateful query's partition count is in its checkpoint: "set
        // spark.sql.shuffle.partitions" does nothing on a restart. ST005 says what does.
        .filter(|f| {
            !(crate::rule_of(f.rule).is_some_and(|r| r.advises_shuffle_partitions)
                && !f.scope.stage_ids.is_empty()
                && f.scope.stage_ids.iter().all(|s| stateful.contains(s)))
        })
        .map(|f| name_the_batches(app, f))
        // Spark turns AQE off for every streaming query whatever the setting says.
        .filter(|f| {
            !(f.rule == "CF001"
                && !f.scope.stage_ids.is_empty()
                && f.scope.stage_ids.iter().all(|s| streaming.contains(s)))
        })
        .collect()
}

/// A batch rule's finding on a stream's jobs or stages says which micro-batches they were
/// (evidence `streaming_batches`: the query and its batch ids), so a skewed task or a spill is
/// found in its batch.
fn name_the_batches(app: &Application, mut f: Finding) -> Finding {
    let s = &app.streaming;
    if s.query_jobs.is_empty() || f.rule.starts_with("ST") {
        return f;
    }
    let mut jobs: Vec<i64> = f.scope.job_ids.clone();
    if !f.scope.stage_ids.is_empty() {
        jobs.extend(
            app.stages
                .iter()
                .filter(|st| f.scope.stage_ids.contains(&st.stage_id))
                .flat_map(|st| st.job_ids.iter().copied()),
        );
    }
    let mut batches: std::collections::BTreeMap<usize, std::collections::BTreeSet<i64>> =
        Default::default();
    for job in jobs {
        if let Some((q, b)) = s.batch_of_job(job) {
            batches.entry(q).or_default().insert(b);
        }
    }
    if batches.is_empty() {
        return f;
    }
    let named: Vec<serde_json::Value> = batches
        .into_iter()
        .map(|(q, ids)| {
            let query = &s.queries[q];
            serde_json::json!({
                "query_id": query.id,
                "query_name": query.name,
                "batch_ids": ids.into_iter().take(50).collect::<Vec<_>>(),
            })
        })
        .collect();
    f.evidence
        .insert("streaming_batches".into(), serde_json::Value::Array(named));
    f
}

/// The stages run by micro-batches: of the queries that keep state, or of all queries.
fn query_stages(app: &Application, stateful_only: bool) -> std::collections::HashSet<i64> {
    let s = &app.streaming;
    let stateful: Vec<bool> = s
        .queries
        .iter()
        .map(|q| !stateful_only || q.batches.iter().any(|b| !b.state.is_empty()))
        .collect();
    let jobs: std::collections::HashSet<i64> = s
        .query_jobs
        .iter()
        .filter(|j| stateful.get(j.query as usize) == Some(&true))
        .map(|j| j.job_id)
        .collect();
    app.jobs
        .iter()
        .filter(|j| jobs.contains(&j.job_id))
        .flat_map(|j| j.stage_ids.iter().copied())
        .collect()
}

fn gated(workload: Workload) -> bool {
    matches!(
        workload,
        Workload::StructuredStreaming | Workload::Dstreams | Workload::SparkConnect
    )
}
