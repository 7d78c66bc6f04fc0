//! The one place a lab runs ip and tc: each command's failure becomes an
//! error that names it and quotes its stderr.

use std::process::Command;

use crate::LabError;

/// Runs a command, turning a failure into an error that names it and quotes its stderr.
pub fn run<S: AsRef<str>>(parts: &[S]) -> Result<(), LabError> {
    let parts: Vec<&str> = parts.iter().map(|s| s.as_ref()).collect();
    let line = parts.join(" ");
    let out = Command::new(parts[0])
        .args(&parts[1..])
        .output()
        .map_err(|e| LabError::io("running", parts[0], e))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(LabError::Command {
            command: line,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        })
    }
}
