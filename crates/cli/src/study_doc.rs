//! Writes the document of many runs (studies and `compare`) where
//! `--json` asks, and records it in the archive.

use linerate_compare::document::ManyRuns;

use crate::output;

/// The runs as one document, written to `json_path` (`-` for stdout) and
/// recorded where `history` says.
pub fn write(
    runs: ManyRuns,
    json_path: &str,
    history: &crate::archive_cmd::ArchiveFlags,
) -> anyhow::Result<()> {
    let doc = runs.into_document(crate::argv::command_line())?;
    output::write_json(&doc, json_path)?;
    history.record(&doc);
    Ok(())
}
