//! A list of fingerprints in a file: a daemon's authorized client keys.
//! One per line, the fingerprint first and a comment after it (who the
//! key is); blank lines and lines starting with `#` are skipped.

use std::path::{Path, PathBuf};

use crate::{Fingerprint, SecureError};

/// Fingerprints read from a file, each with its comment.
#[derive(Debug, Clone, Default)]
pub struct KeyList {
    /// Each key with the comment after it on its line.
    pub keys: Vec<(Fingerprint, String)>,
}

impl KeyList {
    /// Reads one fingerprint a line, then an optional comment; `#` lines and
    /// blank lines are skipped. `name` names the list in errors.
    pub fn parse(text: &str, name: &str) -> Result<KeyList, SecureError> {
        let mut keys = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let (fp, comment) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
            let fp = Fingerprint::parse(fp).map_err(|_| SecureError::BadList {
                list: name.to_string(),
                line: i + 1,
                text: fp.to_string(),
            })?;
            keys.push((fp, comment.trim().to_string()));
        }
        Ok(KeyList { keys })
    }

    /// [`KeyList::parse`] of a file.
    pub fn read(path: &Path) -> Result<KeyList, SecureError> {
        let text = std::fs::read_to_string(path).map_err(|e| SecureError::file(path, e))?;
        KeyList::parse(&text, &path.display().to_string())
    }

    /// The comment of `fp`, if the list has it.
    pub fn find(&self, fp: &Fingerprint) -> Option<&str> {
        self.keys
            .iter()
            .find(|(k, _)| k == fp)
            .map(|(_, c)| c.as_str())
    }
}

/// A key list read again from its file at every use, as sshd reads
/// authorized_keys per connection: a key added or removed counts for the
/// next connection, without a restart.
#[derive(Debug, Clone)]
pub struct KeyFile(pub PathBuf);

impl KeyFile {
    /// The list as the file holds it now.
    pub fn current(&self) -> Result<KeyList, SecureError> {
        KeyList::read(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_reads_fingerprints_with_comments_and_names_a_bad_line() {
        let a = "ab".repeat(32);
        let text = format!("# clients\n\n{a} alice@dtn1\n{}\n", "CD".repeat(32));
        let list = KeyList::parse(&text, "authorized_keys").unwrap();
        assert_eq!(list.keys.len(), 2);
        assert_eq!(
            list.find(&Fingerprint::parse(&a).unwrap()),
            Some("alice@dtn1")
        );
        assert_eq!(list.keys[1].1, "");
        let err = KeyList::parse("# x\nnot-a-key bob\n", "ak").unwrap_err();
        assert!(err.to_string().starts_with("ak, line 2:"), "{err}");
    }
}
