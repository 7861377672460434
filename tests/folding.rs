//! Folding a completed stage's tasks into compressed columns changes nothing: on every real log
//! we can see, the model built with folding (what `analyze` uses) and the model that keeps every
//! task as read give the same tasks, the same report, the same HTML with its charts and the same
//! what-if, while the folded tasks take far less memory.

use std::path::PathBuf;

use sparkdiag_eventlog::LogInput;
use sparkdiag_model::{Application, ApplicationBuilder, Task};

use crate::util::real_log_roots;

/// Every input under our fixtures and, when present, other projects' logs and Spark's suite:
/// each entry one folder below a root, discovered on its own.
fn every_input() -> Vec<LogInput> {
    let mut entries: Vec<PathBuf> = Vec::new();
    for root in real_log_roots() {
        for group in std::fs::read_dir(&root).unwrap() {
            let group = group.unwrap().path();
            entries.push(group.clone());
            if group.is_dir() {
                entries.extend(
                    std::fs::read_dir(&group)
                        .unwrap()
                        .map(|e| e.unwrap().path()),
                );
            }
        }
    }
    entries.sort();
    let mut inputs: Vec<LogInput> = entries
        .iter()
        .filter(|p| p.extension().is_none_or(|e| e != "md" && e != "tsv"))
        .filter_map(|p| sparkdiag_eventlog::discover(p.to_str().unwrap()).ok())
        .flatten()
        .collect();
    inputs.sort_by(|a, b| a.display.cmp(&b.display));
    inputs.dedup_by(|a, b| a.display == b.display);
    inputs
}

fn unfolded(input: &LogInput) -> Application {
    let mut builder = ApplicationBuilder::keeping_tasks_unfolded();
    sparkdiag_eventlog::read_log(input, |event| builder.on_event(event)).unwrap();
    builder.finish()
}

#[test]
fn folded_stages_give_the_same_tasks_report_charts_and_what_if_as_unfolded_ones() {
    let config = sparkdiag_rules::Config::default();
    let mut compared = 0;
    let (mut folded_bytes, mut unfolded_bytes, mut tasks) = (0usize, 0usize, 0usize);
    for input in every_input() {
        let Ok((source, folded)) = sparkdiag_analysis::model(&input) else {
            continue;
        };
        let kept = unfolded(&input);
        let at = &input.display;
        let all = |app: &Application| app.tasks.iter().collect::<Vec<Task>>();
        assert_eq!(all(&folded), all(&kept), "{at}: tasks");
        for (a, b) in folded.stages.iter().zip(&kept.stages) {
            assert_eq!(a.tasks, b.tasks, "{at}: stage {}", a.stage_id);
            assert_eq!(
                *folded.stage_tasks(a),
                *kept.stage_tasks(b),
                "{at}: stage {}",
                a.stage_id
            );
        }
        let options = sparkdiag_analysis::Options::new(&config);
        let folded = sparkdiag_analysis::analyze_model(&input, source.clone(), folded, &options);
        let kept = sparkdiag_analysis::analyze_model(&input, source, kept, &options);
        assert_eq!(
            serde_json::to_string(&folded.report).unwrap(),
            serde_json::to_string(&kept.report).unwrap(),
            "{at}: report"
        );
        assert!(
            sparkdiag_report::analyze::html::render(&[(&folded.report, &folded.view_data())])
                == sparkdiag_report::analyze::html::render(&[(&kept.report, &kept.view_data())]),
            "{at}: HTML"
        );
        assert_eq!(
            format!(
                "{:?}",
                sparkdiag_whatif::what_if(&folded.app, &sparkdiag_facts::Facts::of(&folded.app))
            ),
            format!(
                "{:?}",
                sparkdiag_whatif::what_if(&kept.app, &sparkdiag_facts::Facts::of(&kept.app))
            ),
            "{at}: what-if"
        );
        let (folded, kept) = (folded.app, kept.app);
        folded_bytes += folded.tasks.heap_bytes();
        unfolded_bytes += kept.tasks.heap_bytes();
        tasks += folded.tasks.len();
        compared += 1;
    }
    assert!(compared >= 40, "only {compared} applications compared");
    println!(
        "{compared} applications, {tasks} tasks: {:.1} bytes a task folded, {:.1} unfolded",
        folded_bytes as f64 / tasks as f64,
        unfolded_bytes as f64 / tasks as f64
    );
    // Folding must pay for itself: a fifth of the memory at most, over every real log.
    assert!(
        folded_bytes * 5 < unfolded_bytes,
        "{folded_bytes} bytes folded against {unfolded_bytes} unfolded"
    );
}

/// Looks at a folded stage an analysis (rules, report, what-if) and the views' data take: the
/// rules' one walk (whose figures the report and the what-if read too) and the views' one.
const UNFOLDS_A_STAGE: usize = 2;

/// The rules, the report, the views' data and the what-if all read the stages' tasks, and a
/// folded stage costs a decompression each time it is unfolded: an analysis must unfold each
/// stage once for the rules and once for the views (the long tasks SK001 and SK002 name are
/// among the facts of the one walk), whatever the number of rules, stages, executors or jobs. A
/// rule walking the tasks on its own again fails this.
#[test]
fn an_analysis_unfolds_each_folded_stage_once_and_once_for_the_views() {
    let config = sparkdiag_rules::Config::default();
    let (mut unfolds, mut stages_with_tasks) = (0usize, 0usize);
    for input in every_input() {
        // What `sparkdiag analyze` runs (the what-if is part of the report), then the views.
        let Ok(analysis) =
            sparkdiag_analysis::analyze(&input, &sparkdiag_analysis::Options::new(&config))
        else {
            continue;
        };
        std::hint::black_box(serde_json::to_string(&analysis.report).unwrap());
        std::hint::black_box(analysis.view_data());
        let app = &analysis.app;
        let with_tasks = app.stages.iter().filter(|s| !s.tasks.is_empty()).count();
        // A failed job's memory post-mortem (FA001) looks at the failing task's stage attempt,
        // and at most one more of the same stage for its median partition, once more.
        let post_mortems: usize = 2 * analysis
            .report
            .findings
            .iter()
            .filter(|f| f.finding.rule == "FA001")
            .filter(|f| {
                f.finding
                    .evidence
                    .get("memory_failure")
                    .is_some_and(|m| !m["task_id"].is_null())
            })
            .count();
        // A fix that changes single tasks (less GC, no spill, no failed or wasted attempts) is
        // replayed by reading again the tasks of the stages it touches: at most every stage with
        // tasks, in its own replay and in each of the "every fix applied" variants (all changes,
        // cuts kept, the fix alone, and its own). Issue 30 is to fold these into the one walk.
        let task_replays: usize = analysis
            .report
            .findings
            .iter()
            .filter(|f| {
                f.finding.counterfactual.as_ref().is_some_and(|c| {
                    matches!(
                        serde_json::to_value(&c.change).unwrap()["kind"].as_str(),
                        Some(
                            "reduce_gc"
                                | "avoid_spill"
                                | "remove_failed_attempts"
                                | "remove_wasted_attempts"
                                | "spread_skewed_data"
                                | "speculate_stragglers"
                                | "avoid_slow_executors"
                        )
                    )
                })
            })
            .count()
            * 4
            * with_tasks;
        assert!(
            app.tasks.unfolds() <= UNFOLDS_A_STAGE * with_tasks + post_mortems + task_replays,
            "{}: {} unfolds for {with_tasks} stages with tasks",
            input.display,
            app.tasks.unfolds()
        );
        unfolds += app.tasks.unfolds();
        stages_with_tasks += with_tasks;
    }
    assert!(unfolds > 0, "no folded stage was looked at");
    println!(
        "{unfolds} unfolds for {stages_with_tasks} stages with tasks: {:.1} a stage",
        unfolds as f64 / stages_with_tasks as f64
    );
}
