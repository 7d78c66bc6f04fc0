//! The paths of one manifest, to refuse conflicts inside it before anything
//! is written: a path named twice, or named as a file (or link) and also as
//! the directory of another entry. Paths are held as 128-bit hashes.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::path::PathBuf;

use crate::claims::PreHashed;

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

/// How a manifest entry's path conflicts with an earlier one.
#[derive(Debug, thiserror::Error)]
pub enum PathConflict {
    #[error("{0:?} is a file in the manifest and the directory of an earlier entry")]
    FileOverDir(PathBuf),
    #[error("{0:?} appears twice in the manifest")]
    Twice(PathBuf),
    #[error("{parent:?} is a file in the manifest and the directory of {path:?}")]
    FileAsDir { parent: PathBuf, path: PathBuf },
    #[error("{parent:?} is a symbolic link in the manifest, and {path:?} would pass through it")]
    ThroughLink { parent: PathBuf, path: PathBuf },
}

impl PathIndex {
    /// Records `path`; an error says how it conflicts with an earlier entry.
    /// Returns how many paths the index gained.
    pub fn add(&mut self, path: &str, kind: PathKind) -> Result<u64, PathConflict> {
        let is_dir = kind == PathKind::Dir;
        let mut added = 0;
        match self.seen.get(&key(path)).copied() {
            None => {}
            Some(Seen::Implied) if is_dir => {}
            Some(Seen::Implied) => {
                return Err(PathConflict::FileOverDir(path.into()));
            }
            Some(_) => return Err(PathConflict::Twice(path.into())),
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
                    return Err(PathConflict::FileAsDir {
                        parent: parent.into(),
                        path: path.into(),
                    });
                }
                Some(Seen::Link) => {
                    return Err(PathConflict::ThroughLink {
                        parent: parent.into(),
                        path: path.into(),
                    });
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
        assert_eq!(ix.add("a/b/c", PathKind::File).ok(), Some(3));
        assert_eq!(
            ix.add("a", PathKind::Dir).ok(),
            Some(0),
            "a directory named after its contents"
        );
        let twice = |e| matches!(e, PathConflict::Twice(_));
        assert!(twice(ix.add("a/b/c", PathKind::File).unwrap_err()));
        let over = ix.add("a/b", PathKind::File).unwrap_err();
        assert!(matches!(over, PathConflict::FileOverDir(_)));
        assert!(over.to_string().contains("directory of"));
        assert!(ix.add("f", PathKind::File).is_ok());
        let under = ix.add("f/g", PathKind::File).unwrap_err();
        assert!(under.to_string().contains("\"f\" is a file"));
        assert!(ix.add("d", PathKind::Dir).is_ok());
        assert!(twice(ix.add("d", PathKind::Dir).unwrap_err()));
        assert!(ix.add("d/e", PathKind::File).is_ok());
        assert!(ix.add("l", PathKind::Link).is_ok());
        let through = ix.add("l/x", PathKind::File).unwrap_err();
        assert!(matches!(through, PathConflict::ThroughLink { .. }));
        assert!(through.to_string().contains("symbolic link"));
    }
}
