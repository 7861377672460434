//! `what_if`: the run replayed with another core count (and skew cut, or the driver's gaps
//! removed), as the analysis replays it.

use serde_json::{Value, json};
use sparkdiag_contract::units::{duration, share};

use super::{Args, Failure, Tool, ToolError, Tools, int, path_props};

pub static TOOL: Tool = Tool {
    name: "what_if",
    title: "Predict the run with another core count",
    description: "Predicts one application's wall clock with `cores` executor cores by replaying the log's own tasks (each task keeps its measured time; stages wait for their parents; the driver keeps its gaps between jobs), optionally with skewed tasks cut to their stage's median or the driver's gaps removed. Answers the predicted time, its change against the replay of today's cores, today's measured wall clock and what bounds it (driver-only time, critical path, waiting for cores), and what the replay assumes.",
    arguments: || {
        path_props(&[
            (
                "cores",
                int("Executor cores (task slots) to replay with.", 1, 100_000, 1),
            ),
            (
                "cut_skew",
                json!({"type": "boolean", "default": false, "description": "Also cut each task longer than 5x its stage's median to the median."}),
            ),
            (
                "remove_driver_gaps",
                json!({"type": "boolean", "default": false, "description": "Also submit each job as soon as the one it waited for ended."}),
            ),
        ])
    },
    required: &["path", "cores"],
    run,
};

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let analysis = tools.load_args(args)?;
    let scenario = sparkdiag_analysis::replay::Scenario {
        cores: args.int("cores", 1).max(1) as usize,
        cut_skew: args.flag("cut_skew"),
        remove_driver_gaps: args.flag("remove_driver_gaps"),
    };
    let (Some(brief), Some(replayed)) = (
        analysis.report.what_if.as_ref(),
        sparkdiag_analysis::replay::what_if_at(&analysis, scenario),
    ) else {
        return Err(ToolError(
            "the log has no application start or no tasks: nothing to replay".into(),
        )
        .into());
    };
    let today = replayed.replay_today_ms;
    let predicted = replayed.predicted_ms;
    let change = if today > 0 {
        predicted as f64 / today as f64 - 1.0
    } else {
        0.0
    };
    let mut what = format!("{} cores", scenario.cores);
    if scenario.cut_skew {
        what.push_str(", skewed tasks spread over the cores");
    }
    if scenario.remove_driver_gaps {
        what.push_str(", the driver's gaps removed");
    }
    let verdict = format!(
        "With {what} (today {}), the replay predicts {} against {} for today's cores: {} {}.",
        replayed.cores_today,
        duration(predicted),
        duration(today),
        share(change.abs(), 0),
        if change <= 0.0 { "faster" } else { "slower" }
    );
    Ok(json!({
        "verdict": verdict,
        "cores": scenario.cores,
        "cut_skew": scenario.cut_skew,
        "remove_driver_gaps": scenario.remove_driver_gaps,
        "predicted_ms": predicted,
        "cores_today": replayed.cores_today,
        "replay_today_ms": today,
        "change_vs_today": (change * 1000.0).round() / 1000.0,
        "measured_wall_ms": brief.bounds.wall_ms,
        "bounds": brief.bounds,
        "headline": brief.headline,
        "assumptions": brief.assumptions,
    }))
}
