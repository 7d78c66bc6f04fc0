//! Results that could not be recorded (the archive locked past its wait,
//! a full disk, a corrupt file moved aside), kept as files until a later
//! run records them: a run never fails, and no result is lost, for want of
//! its archive.

use std::path::{Path, PathBuf};

use crate::ArchiveError;

/// A folder of results waiting for their archive.
pub struct Spool {
    dir: PathBuf,
}

impl Spool {
    /// The spool in `dir` (created when first written).
    pub fn new(dir: impl Into<PathBuf>) -> Spool {
        Spool { dir: dir.into() }
    }

    /// Where the spool is.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Keeps `document` until [`Spool::drain`]: written to a temporary
    /// name and renamed, so a drain never reads half a file.
    pub fn keep(&self, document: &[u8]) -> Result<PathBuf, ArchiveError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |error| ArchiveError::Io { path, error }
        };
        std::fs::create_dir_all(&self.dir).map_err(io(&self.dir))?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        let name = format!(
            "{}.{:09}-{}-{}",
            now.as_secs(),
            now.subsec_nanos(),
            std::process::id(),
            blake3::hash(document).to_hex()[..8].to_owned()
        );
        let part = self.dir.join(format!(".{name}.part"));
        let done = self.dir.join(format!("{name}.json"));
        std::fs::write(&part, document).map_err(io(&part))?;
        std::fs::rename(&part, &done).map_err(io(&done))?;
        Ok(done)
    }

    /// The results waiting, oldest first.
    pub fn waiting(&self) -> Vec<PathBuf> {
        let Ok(dir) = std::fs::read_dir(&self.dir) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = dir
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        files
    }

    /// Hands each waiting result to `deliver`, oldest first, and removes
    /// it once delivered (`Ok(true)`); one that `deliver` declines
    /// (`Ok(false)`) stays for a person to read; stops at the first error. How many were
    /// delivered.
    pub fn drain(
        &self,
        mut deliver: impl FnMut(&[u8]) -> Result<bool, ArchiveError>,
    ) -> Result<usize, ArchiveError> {
        let mut delivered = 0;
        for file in self.waiting() {
            let document = match std::fs::read(&file) {
                Ok(d) => d,
                // Another run's drain took it first.
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(error) => return Err(ArchiveError::Io { path: file, error }),
            };
            if !deliver(&document)? {
                continue;
            }
            match std::fs::remove_file(&file) {
                Ok(()) => delivered += 1,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(error) => return Err(ArchiveError::Io { path: file, error }),
            }
        }
        Ok(delivered)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kept_results_drain_in_order_and_a_refusal_keeps_the_rest() {
        let dir = std::env::temp_dir().join(format!("linerate-spool-{}", std::process::id()));
        let spool = Spool::new(&dir);
        for n in 0..3u8 {
            spool.keep(&[n]).unwrap();
        }
        assert_eq!(spool.waiting().len(), 3);
        let mut seen = Vec::new();
        let refused = spool.drain(|d| {
            if d == [1] {
                return Err(ArchiveError::Corrupt { path: "x".into() });
            }
            seen.push(d.to_vec());
            Ok(true)
        });
        assert!(refused.is_err());
        assert_eq!(seen, vec![vec![0]]);
        assert_eq!(spool.waiting().len(), 2);
        // Declined: kept, not counted.
        assert_eq!(spool.drain(|d| Ok(d != [2])).unwrap(), 1);
        assert_eq!(spool.waiting().len(), 1);
        assert_eq!(spool.drain(|_| Ok(true)).unwrap(), 1);
        assert!(spool.waiting().is_empty());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
