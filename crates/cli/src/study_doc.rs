//! Writes the document of many runs (studies and `compare`) where
//! `--json` asks.

use linerate_compare::document::ManyRuns;

use crate::output;

/// The runs as one document, written to `json_path` (`-` for stdout).
pub fn write(runs: ManyRuns, json_path: &str) -> anyhow::Result<()> {
    let doc = runs.into_document(crate::argv::command_line())?;
    output::write_json(&doc, json_path)
}
