//! A whole night made public: the comparison with earlier nights and the index page, both read
//! from the night file one application at a time.

use sparkdiag_report::fleet::{self, NightTotals};

use crate::files::write_atomic_with;
use crate::history::read_history;
use crate::nightfile::NightFile;
use crate::{Options, Published};

/// Compares the night in `night` (already written) with the earlier ones and writes the index
/// page.
pub(crate) fn publish(options: &Options, mut night: NightFile) -> anyhow::Result<Published> {
    let out = &options.output;
    let tonight = NightTotals::from_totals(&night.night.date, &night.totals);
    let (history, latest) = read_history(&out.join("nights"), tonight, night.key_filter())?;
    let min_ms = (options.min_regression_s * 1000.0) as i64;
    let mut changes = Vec::new();
    // Tonight's applications in the order found, as `fleet::compare` goes through them.
    for app in night.apps()? {
        let app = app?;
        if let Some((since, before)) = latest.get(&app.key) {
            fleet::compare_app(
                &app,
                (since, before),
                options.regression_threshold,
                min_ms,
                &mut changes,
            );
        }
    }
    drop(latest);
    let index = out.join("index.html");
    let mut failed = Vec::new();
    night.rank();
    let ranked = night.apps()?.map(|app| {
        let app = app.map_err(std::io::Error::other)?;
        // Failed applications rank first: this list is done after the first that did not fail.
        if app.failed() {
            failed.push(app.clone());
        }
        Ok(app)
    });
    write_atomic_with(&index, |file| {
        Ok(fleet::write_index(
            file,
            &night.night,
            &night.totals,
            ranked,
            &history,
            &changes,
        )?)
    })?;
    Ok(Published {
        night: night.summary(),
        failed,
        changes,
        index,
    })
}
