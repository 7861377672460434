//! Using the libraries directly: read any event log and list its slowest stages with their
//! median and slowest task, the first thing to look at when a job is slow.
//!
//! ```sh
//! cargo run --example slowest_stages -- testdata/logs/rolling/zstd
//! ```

use sparkdiag_model::TaskOutcome;
use sparkdiag_model::quantile::shs_quantiles;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args()
        .nth(1)
        .ok_or("usage: slowest_stages PATH")?;
    for input in sparkdiag_eventlog::discover(&path)? {
        let (source, app) = sparkdiag_analysis::model(&input)?;
        println!(
            "{} ({} events, complete: {})",
            app.name.as_deref().unwrap_or("?"),
            source.events(),
            source.complete()
        );
        let end = app.effective_end_ms();
        let mut stages: Vec<_> = app
            .stages
            .iter()
            .filter_map(|s| Some((s.duration_ms(end)?, s)))
            .collect();
        stages.sort_by_key(|(duration, _)| std::cmp::Reverse(*duration));
        for (duration, stage) in stages.into_iter().take(5) {
            let mut durations: Vec<u32> = app
                .stage_tasks(stage)
                .iter()
                .filter(|t| t.outcome == TaskOutcome::Success)
                .map(|t| t.duration_ms)
                .collect();
            let q = shs_quantiles(&mut durations, &[0.5, 1.0]).unwrap_or_else(|| vec![0, 0]);
            println!(
                "  stage {:>4}.{}  {:>8} ms  {:>5} tasks  median {:>6} ms  max {:>6} ms  {}",
                stage.stage_id, stage.attempt_id, duration, stage.num_tasks, q[0], q[1], stage.name
            );
        }
    }
    Ok(())
}
