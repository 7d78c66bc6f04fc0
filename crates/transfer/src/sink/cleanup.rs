//! What a transfer that will not complete leaves behind. Cut short (the
//! sender or the network went), what arrived stays for a rerun to resume,
//! each file's unfilled reservation is given back at once, and the server
//! removes the rest once it has waited long enough (`--partial-ttl`).
//! Refused (its manifest broke a rule), everything it staged goes at once.

use std::ffi::CStr;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Instant;

use rustix::fs::{AtFlags, FallocateFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use super::names::{journal_name, split, temp_name};
use super::{RESOLVE, Sink, lock};
use crate::claims::Claims;
use crate::confine::DestRoot;
use crate::grid::block_span;

/// Staging files and directories a cut-short transfer left for a rerun.
/// Held by name, not by an open directory: a daemon keeps these for hours,
/// and open descriptors would let abandoned sessions exhaust its table.
pub struct Leftover {
    /// Their directory, relative to the server's root ("" for the root).
    dir: String,
    /// Names in `dir`: a temporary file and its journal, or a stage.
    names: Vec<String>,
    stage: bool,
    /// The destination path they stand for, under the server's root: a
    /// session that holds it now is resuming them.
    path: String,
}

/// Leftovers waiting for a rerun, each until its deadline.
#[derive(Default)]
pub struct Leftovers {
    waiting: std::sync::Mutex<Vec<(Instant, Leftover)>>,
}

impl Leftovers {
    pub fn keep(&self, until: Instant, items: Vec<Leftover>) {
        lock(&self.waiting).extend(items.into_iter().map(|l| (until, l)));
    }

    /// Removes what has waited past its deadline, unless a session is
    /// resuming it; returns how many were removed.
    pub fn sweep(&self, now: Instant, claims: &Claims, root: &Path) -> usize {
        let due: Vec<Leftover> = {
            let mut w = lock(&self.waiting);
            let (due, wait): (Vec<_>, Vec<_>) = w.drain(..).partition(|(t, _)| *t <= now);
            *w = wait;
            due.into_iter().map(|(_, l)| l).collect()
        };
        let mut removed = 0;
        let Ok(root) = DestRoot::open(root) else {
            return 0;
        };
        for l in due {
            if claims.is_held(&l.path) {
                continue;
            }
            let dir = if l.dir.is_empty() {
                "."
            } else {
                l.dir.as_str()
            };
            let Ok(dir) = rustix::fs::openat2(
                root.fd(),
                dir,
                OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
                RESOLVE,
            ) else {
                continue;
            };
            for n in &l.names {
                let gone = if l.stage {
                    remove_tree(&dir, n).is_ok()
                } else {
                    rustix::fs::unlinkat(&dir, n.as_str(), AtFlags::empty()).is_ok()
                };
                removed += usize::from(gone);
            }
        }
        removed
    }

    pub fn len(&self) -> usize {
        lock(&self.waiting).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Sink {
    /// Ends a transfer that will not complete. With `resumable`, what
    /// arrived stays and is returned for the server to remove later; the
    /// reserved space no block arrived for is given back now. Otherwise
    /// every staging file and new directory this session made is removed.
    pub fn abandon(&self, resumable: bool) -> Vec<Leftover> {
        let mut left = Vec::new();
        if self.root.is_none() {
            return left;
        }
        for (_, item) in self.items.iter() {
            let Some(slot) = item.slot.as_ref() else {
                continue;
            };
            if slot.finished.load(Relaxed) {
                continue;
            }
            let Some(of) = lock(&slot.open).take() else {
                continue;
            };
            let (parent, name) = split(&item.entry.path);
            let Ok(dir) = self.dir(parent) else { continue };
            let names = vec![temp_name(name), journal_name(name)];
            let path = self.claimed_path(&item.entry.path);
            if resumable && slot.done_count() > 0 {
                // Best effort: a block it fails for is only sent again.
                let _ = self.journal_unsynced(&of, &item.entry.path);
                if of.reserved {
                    for [a, b] in slot.missing() {
                        let start = block_span(slot.size, self.block_len, a).map(|(o, _)| o);
                        let end = block_span(slot.size, self.block_len, b - 1)
                            .map(|(o, l)| o + u64::from(l));
                        if let (Some(s), Some(e)) = (start, end) {
                            let _ = rustix::fs::fallocate(
                                &of.file,
                                FallocateFlags::PUNCH_HOLE | FallocateFlags::KEEP_SIZE,
                                s,
                                e - s,
                            );
                        }
                    }
                }
                left.push(Leftover {
                    dir: split(&path).0.to_string(),
                    names,
                    stage: false,
                    path,
                });
            } else if of.created {
                for n in &names {
                    let _ = rustix::fs::unlinkat(&*dir, n.as_str(), AtFlags::empty());
                }
            }
        }
        for st in lock(&self.stages).drain(..).filter(|s| s.created) {
            if resumable {
                let path = self.claimed_path(&st.path);
                left.push(Leftover {
                    dir: split(&path).0.to_string(),
                    names: vec![st.hidden],
                    stage: true,
                    path,
                });
            } else {
                let _ = remove_tree(&st.parent, &st.hidden);
            }
        }
        left
    }

    fn claimed_path(&self, rel: &str) -> String {
        match lock(&self.claims).as_ref() {
            Some(c) => c.full(rel),
            None => rel.to_string(),
        }
    }
}

/// Removes the directory `name` in `parent` and everything in it, never
/// following a link and never leaving `parent`.
pub fn remove_tree(parent: &OwnedFd, name: &str) -> Result<(), Errno> {
    let dir = open_subdir(parent, name)?;
    empty_dir(&dir, 0)?;
    rustix::fs::unlinkat(parent, name, AtFlags::REMOVEDIR)
}

/// Opens directory `name` of `parent` for listing, never through a link
/// and never out of `parent`.
pub fn open_subdir<P: rustix::path::Arg>(parent: &OwnedFd, name: P) -> Result<OwnedFd, Errno> {
    rustix::fs::openat2(
        parent,
        name,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
        RESOLVE,
    )
}

fn empty_dir(dir: &OwnedFd, depth: usize) -> Result<(), Errno> {
    if depth > crate::confine::MAX_DEPTH {
        return Err(Errno::LOOP);
    }
    let mut names: Vec<(std::ffi::CString, bool)> = Vec::new();
    for entry in rustix::fs::Dir::read_from(dir)? {
        let entry = entry?;
        let n: &CStr = entry.file_name();
        if n.to_bytes() == b"." || n.to_bytes() == b".." {
            continue;
        }
        names.push((n.to_owned(), entry.file_type() == FileType::Directory));
    }
    for (n, is_dir) in names {
        if is_dir {
            let sub = open_subdir(dir, n.as_c_str())?;
            empty_dir(&sub, depth + 1)?;
            rustix::fs::unlinkat(dir, n.as_c_str(), AtFlags::REMOVEDIR)?;
        } else {
            rustix::fs::unlinkat(dir, n.as_c_str(), AtFlags::empty())?;
        }
    }
    Ok(())
}
