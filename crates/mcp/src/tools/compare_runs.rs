//! `compare_runs`: two runs of a job compared, as `sparkdiag diff --format json`.

use serde_json::{Value, json};

use super::{Args, Failure, PATH_DOC, Tool, ToolError, Tools, props, string};

pub static TOOL: Tool = Tool {
    name: "compare_runs",
    title: "Compare two runs",
    description: "Compares two runs of a job as `sparkdiag diff BEFORE AFTER --format json` does: a headline of what changed most, whether the outputs agree (rows, files and bytes written per destination), whole-run metrics side by side (runtime, core-hours, tasks, shuffle, spill, GC...), findings that appeared, went away or changed, and matched work (SQL executions and jobs paired by plan shape, destination and call site, with their time before and after). Use it for 'why is it slower than the last run?'.",
    arguments: || {
        props(&[
            ("before", string(&format!("The earlier run. {PATH_DOC}"))),
            ("after", string("The later run, as `before`.")),
            (
                "before_app_id",
                string("When `before` holds several applications: the one with this id."),
            ),
            (
                "after_app_id",
                string("When `after` holds several applications: the one with this id."),
            ),
            (
                "noise",
                string(
                    "How far this job's runtime moves between identical runs, as `diff --noise` takes it: a share of BEFORE's runtime (`25%`) or a duration (`20s`). A change within it is \"nothing material\". Default: the larger of 15% and 3 s.",
                ),
            ),
        ])
    },
    required: &["before", "after"],
    run,
};

/// Matched work groups past this many are left out (the first are the largest changes).
const WORK_GROUPS: usize = 25;

fn run(tools: &Tools, args: &Args) -> Result<Value, Failure> {
    let noise = args
        .str("noise")
        .map(sparkdiag_analysis::Noise::parse)
        .transpose()
        .map_err(|e| ToolError(format!("noise: {e}")))?;
    let before = tools
        .load(
            args.str("before").unwrap_or_default(),
            args.str("before_app_id"),
        )
        .map_err(|e| format!("before: {e}"))?;
    let after = tools
        .load(
            args.str("after").unwrap_or_default(),
            args.str("after_app_id"),
        )
        .map_err(|e| format!("after: {e}"))?;
    let mut diff = sparkdiag_analysis::compare(
        &before,
        &after,
        &sparkdiag_analysis::CompareOptions {
            price_per_core_hour: tools.prices().per_core_hour,
            noise,
        },
    );
    let mut omitted = Vec::new();
    if diff.work.len() > WORK_GROUPS {
        omitted.push(format!(
            "{} more matched work groups",
            diff.work.len() - WORK_GROUPS
        ));
        diff.work.truncate(WORK_GROUPS);
    }
    let mut answer = json!(diff);
    answer["omitted"] = json!(omitted);
    Ok(answer)
}
