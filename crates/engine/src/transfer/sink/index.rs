//! The paths of one manifest, to refuse conflicts inside it before anything
//! is written: a path named twice, or named as a file (or link) and also as
//! the directory of another entry. Paths are held as 128-bit hashes.

use std::collections::HashMap;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Dir,
    /// Not a directory: a file or a link.
    Leaf,
    /// A directory only because a later path lies inside it.
    Implied,
}

#[derive(Debug, Default)]
pub(super) struct PathIndex {
    seen: HashMap<u128, Seen>,
}

/// Bytes one path costs the index (its key and slot, with the table's slack).
pub(super) const INDEX_BYTES: u64 = 40;

fn key(path: &str) -> u128 {
    twox_hash::XxHash3_128::oneshot(path.as_bytes())
}

impl PathIndex {
    /// Records `path`; an error says how it conflicts with an earlier entry.
    /// Returns how many paths the index gained.
    pub fn add(&mut self, path: &str, is_dir: bool) -> Result<u64, String> {
        let mut added = 0;
        match self.seen.get(&key(path)).copied() {
            None => {}
            Some(Seen::Implied) if is_dir => {}
            Some(Seen::Implied) => {
                return Err(format!(
                    "{path:?} is a file in the manifest and the directory of an earlier entry"
                ));
            }
            Some(_) => return Err(format!("{path:?} appears twice in the manifest")),
        }
        if self
            .seen
            .insert(key(path), if is_dir { Seen::Dir } else { Seen::Leaf })
            .is_none()
        {
            added += 1;
        }
        let mut rest = path;
        while let Some((parent, _)) = rest.rsplit_once('/') {
            match self.seen.get(&key(parent)).copied() {
                Some(Seen::Leaf) => {
                    return Err(format!(
                        "{parent:?} is a file in the manifest and the directory of {path:?}"
                    ));
                }
                // Its own parents were recorded when it was.
                Some(Seen::Dir | Seen::Implied) => break,
                None => {
                    self.seen.insert(key(parent), Seen::Implied);
                    added += 1;
                }
            }
            rest = parent;
        }
        Ok(added)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_duplicates_and_a_file_that_is_also_a_directory() {
        let mut ix = PathIndex::default();
        assert_eq!(ix.add("a/b/c", false), Ok(3));
        assert_eq!(
            ix.add("a", true),
            Ok(0),
            "a directory named after its contents"
        );
        assert!(ix.add("a/b/c", false).unwrap_err().contains("twice"));
        assert!(ix.add("a/b", false).unwrap_err().contains("directory of"));
        assert!(ix.add("f", false).is_ok());
        assert!(
            ix.add("f/g", false)
                .unwrap_err()
                .contains("\"f\" is a file")
        );
        assert!(ix.add("d", true).is_ok());
        assert!(ix.add("d", true).unwrap_err().contains("twice"));
        assert!(ix.add("d/e", false).is_ok());
    }
}
