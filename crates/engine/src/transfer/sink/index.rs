//! The paths of one manifest, to refuse conflicts inside it before anything
//! is written: a path named twice, or named as a file (or link) and also as
//! the directory of another entry. Paths are held as 128-bit hashes.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use crate::transfer::claims::PreHashed;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Dir,
    /// A file.
    Leaf,
    /// A symbolic link: nothing may be received through it.
    Link,
    /// A directory only because a later path lies inside it.
    Implied,
}

/// What a manifest entry is, as the index tells them apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PathKind {
    Dir,
    File,
    Link,
}

#[derive(Debug, Default)]
pub(super) struct PathIndex {
    seen: HashMap<u128, Seen, BuildHasherDefault<PreHashed>>,
}

/// Bytes one path costs the index (its key and slot, with the table's slack).
pub(super) const INDEX_BYTES: u64 = 40;

fn key(path: &str) -> u128 {
    twox_hash::XxHash3_128::oneshot(path.as_bytes())
}

impl PathIndex {
    /// Records `path`; an error says how it conflicts with an earlier entry.
    /// Returns how many paths the index gained.
    pub fn add(&mut self, path: &str, kind: PathKind) -> Result<u64, String> {
        let is_dir = kind == PathKind::Dir;
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
            .insert(
                key(path),
                match kind {
                    PathKind::Dir => Seen::Dir,
                    PathKind::File => Seen::Leaf,
                    PathKind::Link => Seen::Link,
                },
            )
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
                Some(Seen::Link) => {
                    return Err(format!(
                        "{parent:?} is a symbolic link in the manifest, and {path:?} would pass through it"
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
        assert_eq!(ix.add("a/b/c", PathKind::File), Ok(3));
        assert_eq!(
            ix.add("a", PathKind::Dir),
            Ok(0),
            "a directory named after its contents"
        );
        assert!(
            ix.add("a/b/c", PathKind::File)
                .unwrap_err()
                .contains("twice")
        );
        assert!(
            ix.add("a/b", PathKind::File)
                .unwrap_err()
                .contains("directory of")
        );
        assert!(ix.add("f", PathKind::File).is_ok());
        assert!(
            ix.add("f/g", PathKind::File)
                .unwrap_err()
                .contains("\"f\" is a file")
        );
        assert!(ix.add("d", PathKind::Dir).is_ok());
        assert!(ix.add("d", PathKind::Dir).unwrap_err().contains("twice"));
        assert!(ix.add("d/e", PathKind::File).is_ok());
        assert!(ix.add("l", PathKind::Link).is_ok());
        assert!(
            ix.add("l/x", PathKind::File)
                .unwrap_err()
                .contains("symbolic link")
        );
    }
}
