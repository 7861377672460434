//! What bounds a Spark application's wall clock, and what more or fewer cores, skew cut to the
//! median, or a driver that submits its next job at once would change.
//!
//! The answer comes from a replay of the log's own tasks ([`replay::Graph`]): every task attempt
//! keeps the duration the log measured, every stage waits for its parents and its job, and the
//! driver keeps the time it took between a job's end and its next submission; only the number of
//! task slots (or the skewed tasks, or the driver's gaps) changes. [`what_if`] splits today's
//! wall clock into driver-only time, the critical path of stages and the wait for free cores,
//! predicts the wall clock at ¼x to 8x today's cores, and says how many cores the job needs.
//!
//! ```no_run
//! # let app = sparkdiag_model::Application::default();
//! let facts = sparkdiag_facts::Facts::of(&app);
//! if let Some(w) = sparkdiag_whatif::what_if(&app, &facts) {
//!     for s in &w.scenarios {
//!         println!("{:>5} cores: {} ms", s.cores, s.predicted_ms);
//!     }
//! }
//! ```

pub mod replay;
pub mod savings;
pub mod settings;

use replay::{Graph, ReplayOptions, StageChanges};
use sparkdiag_contract::units::{duration, human_bytes, share};
use sparkdiag_contract::{Change, Finding};
use sparkdiag_facts::Facts;
use sparkdiag_facts::memory_limits::setting;
use sparkdiag_model::Application;

// The what-if's results are the report contract's types (`sparkdiag_contract::whatif`).
pub use sparkdiag_contract::whatif::{Advice, Bounds, Scenario, WhatIf};

/// A predicted wall clock against today's replay, as a fraction (-0.25: a quarter shorter); 0
/// when today's replay took no time.
fn change_vs(today_ms: i64, predicted_ms: i64) -> f64 {
    if today_ms > 0 {
        predicted_ms as f64 / today_ms as f64 - 1.0
    } else {
        0.0
    }
}

/// The skew and driver scenarios at today's cores: label, skew cut, driver's gaps removed.
const SKEW_AND_GAPS: [(&str, bool, bool); 3] = [
    ("skewed tasks spread over the cores", true, false),
    ("driver's gaps between jobs removed", false, true),
    ("both", true, true),
];

/// Multiples of today's cores that every report predicts.
pub const CORE_FACTORS: [f64; 6] = [0.25, 0.5, 1.0, 2.0, 4.0, 8.0];

pub const ASSUMPTIONS: [&str; 5] = [
    "each task attempt takes the time the log measured, whatever the cluster size (no CPU, disk or network contention modelled; failed and killed attempts still hold a core)",
    "a stage starts when its job was submitted and its parent stages ended; tasks go to the first free core in the order they launched (locality, pools and FAIR scheduling ignored)",
    "the driver takes the time it took between a job's end and its next submission; jobs submitted together (a thread pool) stay together",
    "each core becomes free when its executor was added (with more cores than today, the extra ones arrive as today's did); executors that left are taken as staying",
    "it cannot know what a rewrite would change (fewer jobs, less shuffle, a different plan): only more or fewer cores, skewed tasks cut to their stage's median, and the driver's gaps removed",
];

/// The what-if analysis of `app` and its facts (`Facts::of(app)`), or `None` when the log has
/// no start or no tasks, or its clock jumped.
pub fn what_if(app: &Application, facts: &Facts) -> Option<WhatIf> {
    what_if_with_findings(app, facts, &mut []).map(|(w, _)| w)
}

/// The rules' findings after the replay of their changes, with the replay: what the report is
/// built from.
pub struct Replayed {
    /// Each time-saving finding's `impact_ms` is its replayed saving where its change was
    /// replayed ([`savings::replay_findings`]); in the rules' order, not yet ranked again.
    pub findings: Vec<Finding>,
    /// `None` when the log has no start or no tasks.
    pub what_if: Option<WhatIf>,
    /// Every replayed change applied together, against today's replay (0 when none was
    /// replayed, or without a what-if).
    pub recoverable_ms: i64,
}

/// [`what_if_with_findings`], keeping the findings with the result.
pub fn replayed(app: &Application, facts: &Facts, findings: Vec<Finding>) -> Replayed {
    replayed_from(Baseline::of(app, facts), app, facts, findings)
}

/// [`replayed`] from a [`Baseline`] of the same application and facts, replayed beforehand
/// (beside the rules, whose findings it does not need).
pub fn replayed_from(
    baseline: Option<Baseline>,
    app: &Application,
    facts: &Facts,
    mut findings: Vec<Finding>,
) -> Replayed {
    let (what_if, recoverable_ms) =
        match baseline.map(|b| b.with_findings(app, facts, &mut findings)) {
            Some((w, recoverable)) => (Some(w), recoverable),
            None => (None, 0),
        };
    Replayed {
        findings,
        what_if,
        recoverable_ms,
    }
}

/// [`what_if`], also replaying each finding's change: each time-saving finding's `impact_ms`
/// becomes its replayed saving ([`savings::replay_findings`]), the scenarios list each change
/// and "every fix applied", and the second value is that last scenario's saving against today's
/// replay (0 when no change was replayed).
pub fn what_if_with_findings(
    app: &Application,
    facts: &Facts,
    findings: &mut [Finding],
) -> Option<(WhatIf, i64)> {
    Baseline::of(app, facts).map(|b| b.with_findings(app, facts, findings))
}

/// The replays that need no finding: today's run, the cores, skew and driver scenarios, the
/// unlimited run and the knee of the cores, made while the rules run. Their graph (jobs, stages
/// and the stage statistics' task durations, shared rather than copied) is kept for the
/// findings' replays.
pub struct Baseline {
    graph: Graph,
    cores_today: i64,
    today: i64,
    /// The cores, skew and driver scenarios, in the report's order.
    scenarios: Vec<Scenario>,
    unlimited: i64,
    knee: (i64, i64),
}

impl Baseline {
    /// The baseline of `app` and its facts, or `None` when the log has no start or no tasks,
    /// or its clock jumped.
    pub fn of(app: &Application, facts: &Facts) -> Option<Baseline> {
        // A replay walks the clock from the start: across a jump of days it would predict days
        // for a run of seconds, so a log whose clock jumped gets no replay at all.
        if !app.clock_jumps.is_empty() {
            return None;
        }
        let graph = Graph::with_stage_stats(app, &facts.stages)?;
        if graph.max_parallelism() == 0 || app.tasks.is_empty() {
            return None;
        }
        let cores_today = facts.peak_cores.max(1);
        let replay = |slots: Option<usize>, cut_skew: bool, remove_driver_gaps: bool| {
            graph.replay(ReplayOptions {
                slots,
                cut_skew,
                remove_driver_gaps,
            })
        };
        let today = replay(Some(cores_today as usize), false, false);
        let mut core_counts: Vec<i64> = Vec::new();
        for factor in CORE_FACTORS {
            let cores = ((cores_today as f64 * factor).round() as i64).max(1);
            if !core_counts.contains(&cores) {
                core_counts.push(cores);
            }
        }
        let slots = Some(cores_today as usize);
        let mut wanted: Vec<(Option<usize>, bool, bool)> = Vec::new();
        wanted.extend(
            core_counts
                .iter()
                .filter(|&&cores| cores != cores_today)
                .map(|&cores| (Some(cores as usize), false, false)),
        );
        wanted.extend(
            SKEW_AND_GAPS
                .iter()
                .map(|&(_, cut, gaps)| (slots, cut, gaps)),
        );
        // The knee's bisection is a chain of replays, each waiting for the last: it runs beside
        // the others rather than after them (it was a quarter of the step after the reading).
        let (predicted, (unlimited, knee)) = rayon::join(
            || {
                use rayon::prelude::*;
                wanted
                    .par_iter()
                    .map(|&(slots, cut, gaps)| replay(slots, cut, gaps))
                    .collect::<Vec<i64>>()
            },
            || {
                let unlimited = replay(None, false, false);
                let unchanged = StageChanges::default();
                let knee = knee(&graph, &unchanged, unlimited, (cores_today, today));
                (unlimited, knee)
            },
        );
        let predicted_at = |key: (Option<usize>, bool, bool)| {
            wanted
                .iter()
                .position(|w| *w == key)
                .map(|i| predicted[i])
                .expect("every scenario was replayed")
        };
        let scenario = |label: String, cores: i64, cut_skew: bool, remove_driver_gaps: bool| {
            let predicted_ms = if cores == cores_today && !cut_skew && !remove_driver_gaps {
                today
            } else {
                predicted_at((Some(cores as usize), cut_skew, remove_driver_gaps))
            };
            Scenario {
                label,
                cores,
                cut_skew,
                remove_driver_gaps,
                predicted_ms,
                change_vs_today: change_vs(today, predicted_ms),
                change: None,
                findings: Vec::new(),
                every_fix: false,
            }
        };
        let mut scenarios: Vec<Scenario> = core_counts
            .iter()
            .map(|&cores| {
                let label = factor_label(cores as f64 / cores_today as f64);
                scenario(label, cores, false, false)
            })
            .collect();
        scenarios.extend(
            SKEW_AND_GAPS
                .iter()
                .map(|&(label, cut, gaps)| scenario(label.to_string(), cores_today, cut, gaps)),
        );
        Some(Baseline {
            graph,
            cores_today,
            today,
            scenarios,
            unlimited,
            knee,
        })
    }

    /// The what-if with each finding's change replayed on this baseline ([`what_if_with_findings`]).
    fn with_findings(
        self,
        app: &Application,
        facts: &Facts,
        findings: &mut [Finding],
    ) -> (WhatIf, i64) {
        let Baseline {
            graph,
            cores_today,
            today,
            mut scenarios,
            unlimited,
            knee: knee_unchanged,
        } = self;
        let wall_ms = graph.wall_ms();
        let fixes = savings::replay_findings(&graph, app, facts, cores_today, today, findings);
        let (_, driver_only_ms) = app.job_and_driver_time_ms();
        let driver_only_ms = driver_only_ms.clamp(0, wall_ms);
        let critical_path_ms = (unlimited - driver_only_ms).clamp(0, wall_ms - driver_only_ms);
        let bounds = Bounds {
            wall_ms,
            driver_only_ms,
            critical_path_ms,
            core_wait_ms: wall_ms - driver_only_ms - critical_path_ms,
        };
        savings::cap_to_runtime(findings, wall_ms);
        scenarios.extend(fixes.scenarios.iter().cloned());

        // A shell's, a stream's or a Connect server's time between jobs is people, triggers or
        // clients, not the program's driver: no advice to remove it, and no cores sized from it.
        let workload = app.workload();
        let gaps_are_not_the_driver = app.interactive().is_some() || workload.is_long_running();
        let (mut advice, cores_wanted) = cores_advice(
            &graph,
            &fixes,
            About {
                app,
                gaps_are_not_the_driver,
            },
            Replays {
                cores_today,
                today,
                unlimited,
                knee: knee_unchanged,
            },
            &scenarios,
        );
        advice.extend(memory_advice(app, findings));
        // Partition counts are the findings' (PA001, PA002, CF002): each fitted to its stage's
        // shape, and the merged settings below carry them.
        let settings = settings::merged(
            app,
            findings,
            cores_wanted.filter(|_| !gaps_are_not_the_driver),
            cores_today,
        );
        advice.extend(settings::advice(&settings));
        let headline = framed_headline(app, &bounds, &scenarios, cores_today);
        (
            WhatIf {
                cores_today,
                bounds,
                replay_today_ms: today,
                scenarios,
                advice,
                settings,
                headline,
                assumptions: ASSUMPTIONS.to_vec(),
            },
            fixes.recoverable_ms,
        )
    }
}

/// The advice on cores, with what the cores are sized for: the partitioning the findings
/// propose where it pays (5 % or more at today's cores), else today's.
fn cores_advice(
    graph: &Graph,
    fixes: &savings::Replayed,
    about: About,
    replays: Replays,
    scenarios: &[Scenario],
) -> (Vec<Advice>, Option<i64>) {
    let (cores_today, today) = (replays.cores_today, replays.today);
    // Cores are sized for the partitioning the findings propose, not today's: more cores for
    // tasks that should not exist would be the wrong first fix.
    let merges = graph.stage_changes(&fixes.merges);
    let at_merged = |slots| {
        graph.replay_with(
            ReplayOptions {
                slots,
                cut_skew: false,
                remove_driver_gaps: false,
            },
            &merges,
        )
    };
    // The partitioning comes first only where it pays: 5 % or more at today's cores.
    let merged_today = (!merges.is_empty())
        .then(|| at_merged(Some(cores_today as usize)))
        .filter(|&ms| ms as f64 <= today as f64 * 0.95);
    let Some(merged_today) = merged_today else {
        return advise(about, replays, scenarios);
    };
    let unlimited = at_merged(None);
    let (mut advice, wanted) = advise(
        about,
        Replays {
            cores_today,
            today: merged_today,
            unlimited,
            knee: knee(graph, &merges, unlimited, (cores_today, merged_today)),
        },
        scenarios,
    );
    let which: Vec<String> = fixes
        .scenarios
        .iter()
        .filter(|s| {
            matches!(
                s.change,
                Some(Change::MergePartitions { .. } | Change::SplitPartitions { .. })
            )
        })
        .filter(|s| s.change_vs_today < 0.0)
        .map(|s| s.label.clone())
        .collect();
    if let Some(cores_advice) = advice.iter_mut().find(|a| a.kind == "cores") {
        cores_advice.text = format!(
            "Fix the partitioning first ({}): predicted {} on today's {} ({} faster). With it, {}",
            which.join("; "),
            duration(merged_today),
            cores(cores_today),
            percent(merged_today as f64 / today.max(1) as f64 - 1.0),
            lowercase_first(&cores_advice.text)
        );
    }
    (advice, wanted)
}

/// The headline, framed for a run whose time between jobs is not its driver's to save.
fn framed_headline(
    app: &Application,
    bounds: &Bounds,
    scenarios: &[Scenario],
    cores_today: i64,
) -> String {
    let mut headline = headline(bounds, scenarios, cores_today);
    if let Some(why) = app.interactive() {
        // A person between commands is not a driver to optimise.
        headline = format!(
            "An interactive session ({why}): its driver-only time is people between commands, not a loop to rewrite. {headline}"
        );
    } else {
        let waiting = match app.workload() {
            sparkdiag_model::Workload::SparkConnect => {
                Some("A Spark Connect server: its driver-only time is its clients between requests")
            }
            sparkdiag_model::Workload::StructuredStreaming => Some(
                "A Structured Streaming application: its driver-only time is waiting for the next trigger or for data",
            ),
            sparkdiag_model::Workload::Dstreams => Some(
                "A DStreams application: its driver-only time is waiting for the next batch interval",
            ),
            _ => None,
        };
        if let Some(waiting) = waiting {
            headline = format!("{waiting}, not a loop to rewrite. {headline}");
        }
    }
    headline
}

/// "Up to 8 cores ..." as the rest of a sentence: "up to 8 cores ...".
fn lowercase_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(c) if !text.starts_with("1 ") => c.to_lowercase().chain(chars).collect(),
        Some(c) => std::iter::once(c).chain(chars).collect(),
        None => String::new(),
    }
}

fn factor_label(factor: f64) -> String {
    if (factor - 0.25).abs() < 1e-9 {
        "¼x".into()
    } else if (factor - 0.5).abs() < 1e-9 {
        "½x".into()
    } else {
        format!("{}x", (factor * 100.0).round() / 100.0)
    }
}

fn of(scenarios: &[Scenario], cut_skew: bool, gaps: bool) -> Option<&Scenario> {
    scenarios
        .iter()
        .filter(|s| s.change.is_none() && !s.every_fix)
        .find(|s| s.cut_skew == cut_skew && s.remove_driver_gaps == gaps)
        .filter(|s| s.cut_skew || s.remove_driver_gaps)
}

/// A change's size without its sign, which the sentence around it says ("faster", "saves").
fn percent(change: f64) -> String {
    share(change.abs(), 0)
}

/// "Doubling the cluster saves 3 %; removing the driver's gaps saves 70 %."
fn headline(bounds: &Bounds, scenarios: &[Scenario], cores_today: i64) -> String {
    let double = scenarios
        .iter()
        .find(|s| !s.is_a_fix() && s.cores == (cores_today * 2).max(1));
    let mut parts: Vec<String> = Vec::new();
    let bound = [
        ("the driver (no job running)", bounds.driver_only_ms),
        ("the critical path of stages", bounds.critical_path_ms),
        ("waiting for free cores", bounds.core_wait_ms),
    ]
    .into_iter()
    .max_by_key(|(_, ms)| *ms)
    .map(|(what, ms)| {
        format!(
            "{}% of the run is {what}",
            (ms as f64 * 100.0 / bounds.wall_ms.max(1) as f64).round()
        )
    })
    .unwrap_or_default();
    parts.push(bound);
    if let Some(d) = double {
        parts.push(format!(
            "doubling the cores ({} → {}) would save {}",
            cores_today,
            d.cores,
            percent(d.change_vs_today.min(0.0))
        ));
    }
    if let Some(g) = of(scenarios, false, true).filter(|g| g.change_vs_today <= -0.05) {
        parts.push(format!(
            "removing the driver's gaps between jobs would save {}",
            percent(g.change_vs_today.min(0.0))
        ));
    }
    if let Some(s) = of(scenarios, true, false).filter(|s| s.change_vs_today <= -0.05) {
        parts.push(format!(
            "spreading the skewed tasks over the cores would save {}",
            percent(s.change_vs_today)
        ));
    }
    if let Some(all) = scenarios
        .iter()
        .find(|s| s.every_fix)
        .filter(|s| s.change_vs_today <= -0.05)
    {
        parts.push(format!(
            "the findings' fixes together would save {}",
            percent(all.change_vs_today)
        ));
    }
    let mut text = parts.join("; ");
    text.push('.');
    text
}

/// What the advice says beyond the replay's numbers depends on: the application, for its
/// cluster manager, and whether its gaps between jobs are its driver's.
#[derive(Clone, Copy)]
struct About<'a> {
    app: &'a Application,
    /// The gaps are people between commands or a stream's triggers, not a loop to rewrite.
    gaps_are_not_the_driver: bool,
}

/// The replays the cores advice is said from, all with the same stage changes.
struct Replays {
    cores_today: i64,
    /// On today's cores.
    today: i64,
    /// On as many cores as the tasks can use.
    unlimited: i64,
    /// The fewest cores within 10 % of `unlimited`, and its replay ([`knee`]).
    knee: (i64, i64),
}

/// The fewest cores whose replay with `changes` is within 10 % of `unlimited`: more would sit
/// idle. With its replay. By bisection over 1..=max, since the replay's time only falls as cores
/// grow; `known` is a core count already replayed with the same changes, and its time.
fn knee(graph: &Graph, changes: &StageChanges, unlimited: i64, known: (i64, i64)) -> (i64, i64) {
    let max = graph.max_parallelism() as i64;
    let at = |cores: i64| match known {
        (known_cores, ms) if known_cores == cores => ms,
        _ => graph.replay_with(
            ReplayOptions {
                slots: Some(cores as usize),
                cut_skew: false,
                remove_driver_gaps: false,
            },
            changes,
        ),
    };
    let enough = |ms: i64| ms as f64 <= unlimited as f64 * 1.10;
    let (mut low, mut high) = (1i64, max.max(1));
    // The replay of `high` once the bisection has made one: the knee's own, when it ends there.
    let mut at_high = None;
    while low < high {
        let mid = (low + high) / 2;
        let ms = at(mid);
        if enough(ms) {
            (high, at_high) = (mid, Some(ms));
        } else {
            low = mid + 1;
        }
    }
    (low, at_high.unwrap_or_else(|| at(low)))
}

/// The cores advice, and the count to resize to when it is not today's.
fn advise(about: About, replays: Replays, scenarios: &[Scenario]) -> (Vec<Advice>, Option<i64>) {
    let Replays {
        cores_today,
        today,
        unlimited,
        knee: (knee, at_knee),
    } = replays;
    let mut advice = Vec::new();
    let resize = (knee * 2 <= cores_today || knee > cores_today).then_some(knee);
    let change = |ms: i64| percent(ms as f64 / today.max(1) as f64 - 1.0);
    if knee * 2 <= cores_today {
        advice.push(Advice {
            kind: "cores",
            text: format!(
                "{} would finish within {} of today's run on {} (predicted {}): \
                 the rest sat idle. {}",
                cores(knee),
                change(at_knee),
                cores(cores_today),
                duration(at_knee),
                settings::cores_on_this_cluster(about.app, knee, cores_today).fewer
            ),
        });
    } else if knee > cores_today {
        advice.push(Advice {
            kind: "cores",
            text: format!(
                "Up to {} keep shortening the run: predicted {} instead of {} ({} faster) for {:.1}x the cores; \
                 beyond that, the longest tasks and the stages' order bound the run.",
                cores(knee),
                duration(at_knee),
                duration(today),
                change(at_knee),
                knee as f64 / cores_today as f64
            ),
        });
    } else {
        advice.push(Advice {
            kind: "cores",
            text: format!(
                "{} is about right: more would save at most {} (the replay with unlimited cores takes {}).",
                cores(cores_today),
                change(unlimited),
                duration(unlimited)
            ),
        });
    }
    if let Some(g) = of(scenarios, false, true)
        .filter(|g| g.change_vs_today <= -0.10)
        .filter(|_| !about.gaps_are_not_the_driver)
    {
        advice.push(Advice {
            kind: "driver",
            text: format!(
                "The driver's time between jobs costs {}: submit the work as fewer, larger jobs (one write over all partitions instead of a loop) rather than adding executors.",
                percent(g.change_vs_today)
            ),
        });
    }
    if let Some(s) = of(scenarios, true, false).filter(|s| s.change_vs_today <= -0.10) {
        advice.push(Advice {
            kind: "skew",
            text: format!(
                "Skewed tasks hold their stages open: cutting them to the median saves {} (AQE skew join, salting the hot keys).",
                percent(s.change_vs_today)
            ),
        });
    }
    (advice, resize)
}

pub use sparkdiag_contract::units::cores;

/// Executor memory from the measured peaks: short of memory when executors spilled or spent over
/// 10 % of their time in GC; oversized when GC002 found it so (its guards, such as a minute of
/// tasks on each executor, decide once whether the peaks mean anything), in GC002's size.
fn memory_advice(app: &Application, findings: &[Finding]) -> Option<Advice> {
    let executors: Vec<&sparkdiag_model::Executor> =
        app.executors.iter().filter(|e| e.id != "driver").collect();
    let run: i64 = executors.iter().map(|e| e.run_time_ms).sum();
    if run < 60_000 {
        return None;
    }
    let gc: i64 = executors.iter().map(|e| e.jvm_gc_time_ms).sum();
    let spill: i64 = executors.iter().map(|e| e.disk_spill_bytes).sum();
    let gc_share = gc as f64 / run as f64;
    let reserved = app
        .spark_properties
        .get("spark.executor.memory")
        .and_then(|m| sparkdiag_facts::settings::parse_memory(m));
    if gc_share > 0.10 || spill >= 256 << 20 {
        let more = reserved.map_or("more".to_string(), |r| setting(r.saturating_mul(3) / 2));
        return Some(Advice {
            kind: "memory",
            text: format!(
                "Executors are short of memory ({} of their run time in GC{}): give each core more heap — spark.executor.memory={more}, or the same memory with fewer spark.executor.cores.",
                share(gc_share, 0),
                if spill > 0 {
                    format!(", {} spilled to disk", human_bytes(spill))
                } else {
                    String::new()
                }
            ),
        });
    }
    // The size is GC002's own, from its finding's change, so the two never name different
    // ones; and only where GC002 fired, so the advice never cites a finding the report does not
    // hold.
    let (reserved, peak, suggested) =
        findings
            .iter()
            .find_map(|f| match &f.counterfactual.as_ref()?.change {
                Change::ShrinkHeap {
                    from_bytes,
                    peak_bytes,
                    to_bytes,
                    ..
                } => Some((*from_bytes, *peak_bytes, *to_bytes)),
                _ => None,
            })?;
    (gc_share < 0.05).then(|| Advice {
        kind: "memory",
        text: format!(
            "The executors GC002 names peaked at {} of heap or less out of spark.executor.memory={}, with {} GC and no spill: {} would do ({}x the peak, in 256 MiB steps; GC002), or more cores per executor.",
            human_bytes(peak as i64),
            setting(reserved),
            share(gc_share, 0),
            setting(suggested),
            sparkdiag_facts::memory_sizing::MARGIN
        ),
    })
}
