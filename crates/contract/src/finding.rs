//! What a rule reports: a finding, its severity, its scope and its category.

use std::collections::BTreeMap;

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Category {
    Skew,
    Partitions,
    Gc,
    DriverBound,
    Spill,
    Failure,
    Utilization,
    Config,
    Exchanges,
    Plan,
    /// Structured Streaming, DStreams and Spark Connect: batches, state, sessions.
    Streaming,
}

impl Category {
    pub fn name(self) -> &'static str {
        match self {
            Category::Skew => "skew",
            Category::Partitions => "partitions",
            Category::Gc => "gc",
            Category::DriverBound => "driver-bound",
            Category::Spill => "spill",
            Category::Failure => "failure",
            Category::Utilization => "utilization",
            Category::Config => "config",
            Category::Exchanges => "exchanges",
            Category::Plan => "plan",
            Category::Streaming => "streaming",
        }
    }
}

/// Most severe first, so sorting ascending puts critical on top.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Critical,
    High,
    Medium,
    Low,
    Info,
}

impl Severity {
    pub fn name(self) -> &'static str {
        match self {
            Severity::Critical => "critical",
            Severity::High => "high",
            Severity::Medium => "medium",
            Severity::Low => "low",
            Severity::Info => "info",
        }
    }

    pub fn parse(text: &str) -> Option<Severity> {
        [
            Severity::Critical,
            Severity::High,
            Severity::Medium,
            Severity::Low,
            Severity::Info,
        ]
        .into_iter()
        .find(|s| s.name().eq_ignore_ascii_case(text))
    }

    /// This severity, raised to `floor` if that is more severe.
    pub fn at_least(self, floor: Severity) -> Severity {
        self.min(floor)
    }

    /// This severity, lowered to `ceiling` if that is less severe.
    pub fn at_most(self, ceiling: Severity) -> Severity {
        self.max(ceiling)
    }

    /// Held to `ceiling` when there is one (a finding's `severity_ceiling`).
    pub fn within(self, ceiling: Option<Severity>) -> Severity {
        ceiling.map_or(self, |c| self.at_most(c))
    }

    /// The severity of a problem by the share of the application's time it costs:
    /// 30 % or more critical, 10 % high, 2 % medium, 0.5 % low, less is information.
    pub fn from_share(impact_ms: i64, app_ms: i64) -> Severity {
        let share = if app_ms > 0 {
            impact_ms as f64 / app_ms as f64
        } else {
            0.0
        };
        match share {
            s if s >= 0.30 => Severity::Critical,
            s if s >= 0.10 => Severity::High,
            s if s >= 0.02 => Severity::Medium,
            s if s >= 0.005 => Severity::Low,
            _ => Severity::Info,
        }
    }

    /// The severity of a saving: its share of the application's time, capped by its size, so a
    /// 10 s saving in a 28 s test run is not rated like hours saved in a long job.
    ///
    /// | severity | share of the runtime | and at least |
    /// | --- | --- | --- |
    /// | critical | 30 % | 10 min |
    /// | high | 10 % | 1 min |
    /// | medium | 2 % | 1 s |
    /// | low | 0.5 % | 100 ms |
    /// | info | less | |
    pub fn from_saving(impact_ms: i64, app_ms: i64) -> Severity {
        let by_size = match impact_ms {
            ms if ms >= 600_000 => Severity::Critical,
            ms if ms >= 60_000 => Severity::High,
            ms if ms >= 1_000 => Severity::Medium,
            ms if ms >= 100 => Severity::Low,
            _ => Severity::Info,
        };
        Severity::from_share(impact_ms, app_ms).at_most(by_size)
    }
}

impl Severity {
    /// The severity of a cost in core-hours: its share of the application's core-hours, capped by
    /// its size, so that idle cores in a short test run are not rated like a day of a cluster.
    ///
    /// | severity | share of the core-hours | and at least |
    /// | --- | --- | --- |
    /// | critical | 30 % | 10 core-hours |
    /// | high | 10 % | 1 core-hour |
    /// | medium | 2 % | 0.1 core-hours |
    /// | low | 0.5 % | 0.01 core-hours |
    /// | info | less | |
    pub fn from_cost(core_hours: f64, app_core_hours: f64) -> Severity {
        let by_size = match core_hours {
            h if h >= 10.0 => Severity::Critical,
            h if h >= 1.0 => Severity::High,
            h if h >= 0.1 => Severity::Medium,
            h if h >= 0.01 => Severity::Low,
            _ => Severity::Info,
        };
        // Shares in millionths, so that the time scale's thresholds apply as they are.
        let share = Severity::from_share(
            (core_hours * 1e6) as i64,
            (app_core_hours * 1e6).max(1.0) as i64,
        );
        share.at_most(by_size)
    }
}

/// What a rule's findings claim, which decides where the impact model ranks them and how the
/// views and the what-if count them (docs/impact.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Claim {
    /// A cause, and the wall-clock time fixing it would save: its findings claim time in the
    /// order of their estimates, and their severity is the share of the application saved.
    #[default]
    Saving,
    /// A symptom of causes other rules name (no job ran, cores sat idle): it claims only the time
    /// left once every cause has claimed its own, so a gap between a loop's jobs is the loop's.
    Symptom,
    /// What happened to the run (a job failed, executors died, the log stops) or how a stream
    /// fares (behind, failed, state without bound): time lost, not a saving. Its severity is its
    /// own, views say "lost", and the what-if's fixes do not count it.
    Outcome,
}

/// Where a finding applies.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Scope {
    pub job_ids: Vec<i64>,
    pub stage_ids: Vec<i64>,
    pub executor_ids: Vec<String>,
    pub sql_execution_ids: Vec<i64>,
    pub plan_node_ids: Vec<u32>,
    /// Which of the plans the rules were given the finding is about (an index into the SQL
    /// executions' parsed plans, or into the plans of a plan text given alone); `None` for a
    /// finding about no plan. The JSON carries it as `evidence.plan_index`.
    #[serde(skip)]
    pub plan_index: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub category: Category,
    pub severity: Severity,
    pub title: String,
    /// Estimated wall-clock time fixing this would save, in milliseconds.
    pub impact_ms: i64,
    pub scope: Scope,
    /// The numbers that justify the finding.
    pub evidence: BTreeMap<String, serde_json::Value>,
    /// The concrete change to make.
    pub recommendation: String,
    /// When the saving would happen: wall-clock intervals `[start, end)` in epoch ms. Empty means
    /// "where the scope says" (its stages, else its jobs, else its SQL executions, else the whole
    /// application); the impact model attributes each millisecond to at most one finding.
    #[serde(skip)]
    pub windows: Vec<(i64, i64)>,
    /// The change the fix makes and how its saving was reached (added in v1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub counterfactual: Option<crate::Counterfactual>,
    /// Set for findings that cost money rather than wall-clock time (idle cores): what they cost
    /// in core-hours. Their `impact_ms` is 0 and their severity comes from this; the report shows
    /// it as `impact_core_hours`.
    #[serde(skip)]
    pub cost_core_hours: Option<f64>,
    /// What its rule's findings claim ([`Claim`]): the what-if and the views read it here
    /// rather than asking the rules.
    #[serde(skip)]
    pub claim: Claim,
    /// The most severe this finding may be whatever its saving: a cost every run pays (YARN's
    /// containers starting) is worth knowing, never urgent. The impact model and the what-if
    /// rate by the saving, then hold it to this.
    #[serde(skip)]
    pub severity_ceiling: Option<Severity>,
}

impl Finding {
    pub fn new(
        rule: &'static impl crate::RuleIdentity,
        severity: Severity,
        title: String,
        impact_ms: i64,
    ) -> Finding {
        Finding {
            rule: rule.code(),
            category: rule.category(),
            severity,
            title,
            impact_ms: impact_ms.max(0),
            scope: Scope::default(),
            evidence: BTreeMap::new(),
            recommendation: String::new(),
            windows: Vec::new(),
            counterfactual: None,
            cost_core_hours: None,
            claim: rule.claims(),
            severity_ceiling: None,
        }
    }

    /// Never more severe than `ceiling`, whatever the saving it is rated by.
    pub fn severity_at_most(mut self, ceiling: Severity) -> Finding {
        self.severity = self.severity.at_most(ceiling);
        self.severity_ceiling = Some(ceiling);
        self
    }

    /// `severity`, held to the finding's ceiling.
    pub fn rated(&self, severity: Severity) -> Severity {
        severity.within(self.severity_ceiling)
    }

    /// Its impact is time the run lost (a failed job's work), an outcome rather than a saving:
    /// views say "lost", and the what-if's fixes do not count it.
    pub fn is_outcome(&self) -> bool {
        self.claim == Claim::Outcome
    }

    /// The fix makes `change`; the what-if replays it where it can, and `assumption` says what
    /// the rule's own estimate rests on where it cannot.
    pub fn proposes(mut self, change: crate::Change, assumption: impl Into<String>) -> Finding {
        self.counterfactual = Some(crate::Counterfactual {
            replayed: false,
            change,
            assumption: assumption.into(),
        });
        self
    }

    /// This costs `core_hours` of paid-for cores, not wall-clock time: `impact_ms` becomes 0.
    pub fn costs_core_hours(mut self, core_hours: f64) -> Finding {
        self.cost_core_hours = Some(core_hours.max(0.0));
        self.impact_ms = 0;
        self
    }

    /// The saving happens within `[start, end)` (in addition to any window already given).
    pub fn during(mut self, start: i64, end: i64) -> Finding {
        if end > start {
            self.windows.push((start, end));
        }
        self
    }

    pub fn evidence(mut self, key: &str, value: impl Into<serde_json::Value>) -> Finding {
        self.evidence.insert(key.to_string(), value.into());
        self
    }

    /// The settings the recommendation names, pasteable as `--conf key=value`
    /// (`evidence.conf`): the what-if merges every finding's into one list. Nothing is recorded
    /// when there are none, as for advice that is a change to the code.
    pub fn settings(self, conf: impl IntoIterator<Item = String>) -> Finding {
        let conf: Vec<String> = conf.into_iter().collect();
        if conf.is_empty() {
            return self;
        }
        self.evidence("conf", conf)
    }

    pub fn recommend(mut self, text: impl Into<String>) -> Finding {
        self.recommendation = text.into();
        self
    }

    pub fn stages(mut self, ids: impl IntoIterator<Item = i64>) -> Finding {
        self.scope.stage_ids.extend(ids);
        self.scope.stage_ids.dedup();
        self
    }

    pub fn jobs(mut self, ids: impl IntoIterator<Item = i64>) -> Finding {
        self.scope.job_ids.extend(ids);
        self.scope.job_ids.sort_unstable();
        self.scope.job_ids.dedup();
        self
    }

    pub fn executors(mut self, ids: impl IntoIterator<Item = String>) -> Finding {
        self.scope.executor_ids.extend(ids);
        self
    }
}
