//! CI gates: budgets a run must keep (`--max-runtime`, `--max-spill`, ...), each checked against
//! the report and written as one line, and the exit code their verdict gives.

use serde::Serialize;

/// How a command ends, for a pipeline: the exit codes of `analyze`, `diff` and `plan`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Exit {
    /// Analysed, and every gate asked for passed.
    Passed,
    /// Analysed, and a gate failed (or a finding was at least `--fail-on`'s severity).
    Failed,
    /// The input could not be used: nothing readable, a usage error.
    Unusable,
    /// Analysed, but a gate could not be judged on this log (a runtime budget on a log without
    /// an application end); no gate failed.
    Inconclusive,
}

impl Exit {
    /// Every exit, in code order.
    pub const ALL: [Exit; 4] = [
        Exit::Passed,
        Exit::Failed,
        Exit::Unusable,
        Exit::Inconclusive,
    ];

    pub fn code(self) -> u8 {
        match self {
            Exit::Passed => 0,
            Exit::Failed => 1,
            Exit::Unusable => 2,
            Exit::Inconclusive => 3,
        }
    }

    /// What the code means, for `--help`, the man page, `docs/cli.md` and the JSON.
    pub fn means(self) -> &'static str {
        match self {
            Exit::Passed => "analysed; every gate passed",
            Exit::Failed => "a gate failed (or a finding at least as severe as --fail-on)",
            Exit::Unusable => "unusable input or a usage error: nothing was analysed",
            Exit::Inconclusive => "a gate could not be judged on this input, and none failed",
        }
    }

    /// The exit of several verdicts together: a failure decides, then an input that could not
    /// be judged, then a pass.
    pub fn worst(exits: impl IntoIterator<Item = Exit>) -> Exit {
        exits.into_iter().fold(Exit::Passed, |a, b| match (a, b) {
            (Exit::Unusable, _) | (_, Exit::Unusable) => Exit::Unusable,
            (Exit::Failed, _) | (_, Exit::Failed) => Exit::Failed,
            (Exit::Inconclusive, _) | (_, Exit::Inconclusive) => Exit::Inconclusive,
            _ => Exit::Passed,
        })
    }

    /// Every code with its meaning, one line each: `0  analysed; every gate passed`.
    pub fn table() -> String {
        Exit::ALL
            .iter()
            .map(|e| format!("{}  {}", e.code(), e.means()))
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Every gate checked on one document, and the exit they give.
#[derive(Debug, Clone, Serialize)]
pub struct Gates {
    /// `passed`, `failed` or `inconclusive`.
    pub verdict: Exit,
    pub exit_code: u8,
    /// What `exit_code` means.
    pub means: &'static str,
    pub checks: Vec<GateCheck>,
}

impl Gates {
    /// The checks' verdict.
    pub fn of(checks: Vec<GateCheck>) -> Gates {
        let verdict = Exit::worst(checks.iter().map(|c| c.status));
        Gates {
            verdict,
            exit_code: verdict.code(),
            means: verdict.means(),
            checks,
        }
    }
}

/// One gate: what it measured against its limit.
#[derive(Debug, Clone, Serialize)]
pub struct GateCheck {
    /// The flag that asked for it, without its dashes: `max-runtime`, `max-spill`, `max-skew`,
    /// `max-failed-tasks`, `max-idle-core-hours`, `max-cost`, `fail-on SEVERITY`; for `diff`
    /// `fail-on-regression`, `fail-on-new SEVERITY` and `fail-on-output-change`.
    pub gate: &'static str,
    /// The value measured (`null` when it cannot be judged on this input).
    pub measured: Option<f64>,
    /// The most it may be.
    pub limit: f64,
    /// `ms`, `bytes`, `ratio`, `tasks`, `core-hours`, `money`, `findings`, `percent`.
    pub unit: &'static str,
    /// `passed`, `failed` or `inconclusive`.
    pub status: Exit,
    /// The gate in one line: name, measured value, limit, verdict (and why when inconclusive).
    pub line: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_failure_decides_then_an_input_that_cannot_be_judged() {
        use Exit::*;
        assert_eq!(Exit::worst([Passed, Inconclusive, Failed]), Failed);
        assert_eq!(Exit::worst([Passed, Inconclusive]), Inconclusive);
        assert_eq!(Exit::worst([]), Passed);
        assert_eq!(Exit::worst([Failed, Unusable]), Unusable);
        assert_eq!(
            Exit::ALL.map(Exit::code),
            [0, 1, 2, 3],
            "the codes the docs promise"
        );
    }
}
