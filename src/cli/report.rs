//! `dragnet report`: the crawl as an HTML page and CSV files (`dragnet::ops::report`).

use std::path::Path;

use dragnet::error::EXIT_OK;
use dragnet::Error;

/// Writes the report and says where it is (and what it skipped) on stderr.
pub(crate) fn run(dir: &Path, out: Option<&Path>) -> Result<i32, Error> {
    let w = dragnet::ops::report::report(dir, out)?;
    for s in &w.skipped {
        eprintln!("dragnet: report: skipped {s}");
    }
    eprintln!(
        "report: {} ({} files{})",
        w.dir.join("index.html").display(),
        w.files.len(),
        if w.skipped.is_empty() {
            String::new()
        } else {
            format!(", {} skipped: see the page", w.skipped.len())
        }
    );
    Ok(EXIT_OK)
}
