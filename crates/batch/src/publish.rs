//! A whole night made public: its summary file, the comparison with earlier nights and the
//! index page.

use sparkdiag_report::fleet::{self, Night};

use crate::files::{write_atomic, write_atomic_with};
use crate::history::read_history;
use crate::{Options, Published};

/// Writes the night, compares it with the earlier ones and writes the index page.
pub(crate) fn publish(options: &Options, night: Night) -> anyhow::Result<Published> {
    let out = &options.output;
    let date = &night.date;
    // Straight to the file: the night's text would be another copy of every application.
    write_atomic_with(&out.join("nights").join(format!("{date}.json")), |file| {
        Ok(serde_json::to_writer_pretty(file, &night)?)
    })?;
    let (history, earlier) = read_history(&out.join("nights"), &night)?;
    let changes = fleet::compare(
        &night,
        &earlier,
        options.regression_threshold,
        (options.min_regression_s * 1000.0) as i64,
    );
    let index = out.join("index.html");
    write_atomic(&index, &fleet::render_index(&night, &history, &changes))?;
    Ok(Published {
        night,
        changes,
        index,
    })
}
