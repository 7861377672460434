//! The what-if section's chart: the replay's predicted wall clock at each core count, one
//! horizontal bar per count, today's darker, each bar labelled with its time.

use super::*;
use crate::format::cores;
use sparkdiag_contract::WhatIf;

/// Predicted wall clock by executor cores, for the what-if section; no chart without a core
/// scenario.
pub fn scenario_chart(w: &WhatIf) -> Chart {
    let mut chart = Chart::empty("whatif-cores", "Predicted wall clock by executor cores");
    let rows: Vec<TimeBar> = w
        .scenarios
        .iter()
        .filter(|s| !s.is_a_fix())
        .map(|s| {
            let today = s.cores == w.cores_today;
            TimeBar {
                label: cores(s.cores),
                ms: s.predicted_ms.max(0),
                colour: if today { INK } else { GREY },
                pale: false,
                note: if today { " (today)" } else { "" },
            }
        })
        .collect();
    if rows.is_empty() {
        chart.caption = "The replay ran no core scenario.".into();
        return chart;
    }
    chart.caption = "The replay's wall clock with each number of executor cores, the log's own \
                     tasks kept; today's cores are the dark bar."
        .into();
    chart.drawn(Plot::Bars(TimeBars::new(
        "Predicted wall clock by executor cores",
        "predicted wall clock (s)",
        "executor cores",
        rows,
    )))
}
