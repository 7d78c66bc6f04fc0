//! A folder of the test's own under the system's temporary folder,
//! removed however the test ends.
// A failed expectation is the test's failure.
#![allow(clippy::unwrap_used)]

use std::path::PathBuf;

/// A scratch folder, `linerate-archive-TAG-PID`.
pub struct Dir(pub PathBuf);

impl Dir {
    pub fn new(tag: &str) -> Dir {
        let d = std::env::temp_dir().join(format!("linerate-archive-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        Dir(d)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
