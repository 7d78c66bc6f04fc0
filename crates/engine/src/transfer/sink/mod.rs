//! The receiver's files: which blocks each still needs, the temporary file
//! blocks are written into, the journal that survives a crash, and the
//! rename into place once every block has arrived and passed its checksum.
//!
//! A directory the destination does not have yet is built under a hidden
//! name (a stage) and renamed into place when the transfer ends, so files
//! inside it can be created under their own names in one step: nothing in
//! it is visible at its final path before the whole tree is complete.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use linerate_wire::{Entry, EntryKind, NeedFile, TransferTotals};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags, ResolveFlags};
use rustix::io::Errno;

use super::direct::{self, CachePolicy};
use super::grid::block_span;
use crate::confine::{self, ConfineError, DestRoot};

pub(crate) mod journal;
mod names;
mod slot;
mod whole;

use names::{current_umask, journal_name, split, stage_name, temp_name, timestamps};
use slot::{FileSlot, OpenFile};

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// Why the receiver cannot go on; sent to the sender as the refusal.
#[derive(Debug, thiserror::Error)]
pub enum SinkError {
    #[error(transparent)]
    Confine(#[from] ConfineError),
    #[error("{what} {path:?}: {error}")]
    Io {
        what: &'static str,
        path: String,
        error: std::io::Error,
    },
    #[error("entry {id}: {reason}")]
    BadEntry { id: u32, reason: String },
}

fn io_err(what: &'static str, path: &str, source: impl Into<std::io::Error>) -> SinkError {
    SinkError::Io {
        what,
        path: path.to_string(),
        error: source.into(),
    }
}

#[derive(Default)]
struct Counters {
    files_written: AtomicU64,
    files_skipped: AtomicU64,
    dirs: AtomicU64,
    symlinks: AtomicU64,
    bytes_written: AtomicU64,
    bytes_written_direct: AtomicU64,
    blocks_rejected: AtomicU64,
    write_ns: AtomicU64,
}

/// A new directory built under a hidden name in `parent`.
struct Stage {
    parent: Arc<OwnedFd>,
    hidden: String,
    name: String,
    path: String,
}

/// One manifest entry and, for a file, what has arrived of it.
struct Item {
    entry: Entry,
    slot: Option<FileSlot>,
}

pub struct Sink {
    /// None: `--skip-writes`, nothing touches the disk.
    root: Option<DestRoot>,
    block_len: u32,
    overwrite: bool,
    cache: CachePolicy,
    /// Grows while the manifest arrives and streams already write: an
    /// append-only vector, so an entry's place never moves.
    items: boxcar::Vec<Item>,
    dirs: Mutex<HashMap<String, Arc<OwnedFd>>>,
    /// Directories this run created: nothing in them needs looking up.
    fresh: Mutex<HashSet<String>>,
    /// Directories inside a stage, created now or left by an earlier run:
    /// a file there that does not match is a leftover of that run.
    staged: Mutex<HashSet<String>>,
    /// Stages to rename into place once the transfer is complete.
    stages: Mutex<Vec<Stage>>,
    /// The process umask: a file created with a mode it leaves alone needs no fchmod.
    umask: u32,
    counters: Counters,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Where the receiver stands with one block record.
pub enum Accepted {
    /// Write it (or, for a hole, only count it).
    Take,
    /// Already have it from an earlier pass.
    Duplicate,
}

impl Sink {
    pub fn new(
        root: Option<DestRoot>,
        block_len: u32,
        overwrite: bool,
        cache: CachePolicy,
    ) -> Sink {
        Sink {
            root,
            block_len,
            overwrite,
            cache,
            items: boxcar::Vec::new(),
            dirs: Mutex::default(),
            fresh: Mutex::default(),
            staged: Mutex::default(),
            stages: Mutex::default(),
            umask: current_umask(),
            counters: Counters::default(),
        }
    }

    /// Entries received so far.
    pub fn len(&self) -> usize {
        self.items.count()
    }

    /// Size of entry `id` (0 for what is not a file, or not known).
    pub fn size(&self, id: u32) -> u64 {
        self.items.get(id as usize).map_or(0, |i| i.entry.size())
    }

    fn entry(&self, id: usize) -> &Entry {
        // Ids reaching here were checked by `accept` or came from `add`.
        &self.items[id].entry
    }

    fn slot(&self, id: usize) -> Option<&FileSlot> {
        self.items.get(id).and_then(|i| i.slot.as_ref())
    }

    fn dir(&self, rel: &str) -> Result<Arc<OwnedFd>, SinkError> {
        let root = self.root.as_ref().ok_or_else(|| SinkError::BadEntry {
            id: 0,
            reason: "no destination".into(),
        })?;
        if let Some(d) = lock(&self.dirs).get(rel) {
            return Ok(Arc::clone(d));
        }
        let d = Arc::new(root.open_dir(rel)?);
        lock(&self.dirs).insert(rel.to_string(), Arc::clone(&d));
        Ok(d)
    }

    /// Takes the next frame of the manifest: checks every path, creates
    /// directories and links, finds what earlier runs left, and returns the
    /// blocks to ask for among these entries. Only one thread adds.
    pub fn add(&self, entries: Vec<Entry>) -> Result<Vec<NeedFile>, SinkError> {
        let first = self.len();
        for (i, e) in entries.into_iter().enumerate() {
            let id = first + i;
            confine::check(&e.path).map_err(|c| SinkError::BadEntry {
                id: id as u32,
                reason: c.to_string(),
            })?;
            let slot = match e.kind {
                EntryKind::File { size, sparse } => {
                    Some(FileSlot::new(size, self.block_len, sparse))
                }
                _ => None,
            };
            self.items.push(Item { entry: e, slot });
        }
        let last = self.len();
        if self.root.is_some() {
            for id in first..last {
                self.prepare(id)?;
            }
        }
        Ok(self.missing_in(first..last))
    }

    fn prepare(&self, id: usize) -> Result<(), SinkError> {
        let e = self.entry(id);
        let (parent, name) = split(&e.path);
        match &e.kind {
            EntryKind::Dir => {
                let (fd, created, staged) = self.make_dir(&e.path, parent, name)?;
                lock(&self.dirs).insert(e.path.clone(), Arc::new(fd));
                if created {
                    lock(&self.fresh).insert(e.path.clone());
                }
                if staged {
                    lock(&self.staged).insert(e.path.clone());
                }
                self.counters.dirs.fetch_add(1, Relaxed);
            }
            EntryKind::Symlink { target } => {
                let dir = self.dir(parent)?;
                match rustix::fs::readlinkat(&*dir, name, Vec::new()) {
                    Ok(t) if t.as_bytes() == target.as_bytes() => {}
                    Ok(_) if self.overwrite => {
                        rustix::fs::unlinkat(&*dir, name, AtFlags::empty())
                            .map_err(|x| io_err("replacing link", &e.path, x))?;
                        rustix::fs::symlinkat(target.as_str(), &*dir, name)
                            .map_err(|x| io_err("creating link", &e.path, x))?;
                    }
                    Ok(_) | Err(Errno::INVAL) => {
                        return Err(ConfineError::Exists(e.path.clone()).into());
                    }
                    Err(Errno::NOENT) => rustix::fs::symlinkat(target.as_str(), &*dir, name)
                        .map_err(|x| io_err("creating link", &e.path, x))?,
                    Err(x) => return Err(io_err("reading link", &e.path, x)),
                }
                self.counters.symlinks.fetch_add(1, Relaxed);
            }
            EntryKind::File { .. } if lock(&self.fresh).contains(parent) => {
                // A new directory holds no earlier file, temporary or journal.
                if let Some(slot) = self.slot(id) {
                    slot.in_fresh_dir.store(true, Relaxed);
                }
                if e.size() == 0 {
                    self.open(id)?;
                    self.finalize(id)?;
                }
            }
            EntryKind::File { size, .. } => {
                let dir = self.dir(parent)?;
                match rustix::fs::statat(&*dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => {
                        let same = (st.st_mode & libc::S_IFMT) == libc::S_IFREG
                            && st.st_size as u64 == *size
                            && st.st_mtime.saturating_mul(1_000_000_000) + st.st_mtime_nsec as i64
                                == e.mtime_ns;
                        if same {
                            // Complete from an earlier run: nothing to send.
                            self.mark_all(id);
                            self.counters.files_skipped.fetch_add(1, Relaxed);
                            return Ok(());
                        }
                        if lock(&self.staged).contains(parent) {
                            // Cut short in an earlier run of this transfer.
                            rustix::fs::unlinkat(&*dir, name, AtFlags::empty())
                                .map_err(|x| io_err("removing partial", &e.path, x))?;
                        } else if !self.overwrite {
                            return Err(ConfineError::Exists(e.path.clone()).into());
                        }
                    }
                    Err(Errno::NOENT) => {}
                    Err(x) => return Err(io_err("checking", &e.path, x)),
                }
                self.load_journal(id, &dir, name);
                if self
                    .slot(id)
                    .is_some_and(|s| s.done.load(Relaxed) == s.blocks)
                {
                    // Empty, or every block arrived before a crash.
                    self.open(id)?;
                    self.finalize(id)?;
                }
            }
        }
        Ok(())
    }

    /// Opens the directory of a manifest entry: an existing one as it is;
    /// a missing one as a stage (or inside one). Returns the directory,
    /// whether it was created now and whether it lies in a stage.
    fn make_dir(
        &self,
        path: &str,
        parent: &str,
        name: &str,
    ) -> Result<(OwnedFd, bool, bool), SinkError> {
        let pdir = self.dir(parent)?;
        if lock(&self.staged).contains(parent) {
            let (fd, created) = confine::dir_at(&pdir, name, path)?;
            return Ok((fd, created, true));
        }
        match confine::existing_dir_at(&pdir, name, path) {
            Ok(fd) => return Ok((fd, false, false)),
            Err(ConfineError::Io {
                errno: Errno::NOENT,
                ..
            }) => {}
            Err(x) => return Err(x.into()),
        }
        let hidden = stage_name(name);
        let (fd, created) = confine::dir_at(&pdir, &hidden, path)?;
        lock(&self.stages).push(Stage {
            parent: pdir,
            hidden,
            name: name.to_string(),
            path: path.to_string(),
        });
        Ok((fd, created, true))
    }

    fn mark_all(&self, id: usize) {
        if let Some(s) = self.slot(id) {
            (0..s.blocks).for_each(|i| {
                s.mark(i);
            });
            s.finished.store(true, Relaxed);
        }
    }

    /// Takes the blocks an earlier run journaled, if its journal describes
    /// this same source file and its temporary file is still there.
    fn load_journal(&self, id: usize, dir: &OwnedFd, name: &str) {
        let e = self.entry(id);
        let Some(slot) = self.slot(id) else {
            return;
        };
        let Ok(fd) = rustix::fs::openat2(
            dir,
            journal_name(name),
            OFlags::RDONLY | OFlags::CLOEXEC,
            Mode::empty(),
            RESOLVE,
        ) else {
            return;
        };
        let temp_ok = rustix::fs::statat(dir, temp_name(name), AtFlags::SYMLINK_NOFOLLOW)
            .is_ok_and(|st| st.st_size as u64 == slot.size);
        let mut bytes = Vec::new();
        if !temp_ok || File::from(fd).read_to_end(&mut bytes).is_err() {
            return;
        }
        let Some(done) = journal::completed_blocks(&bytes, e, self.block_len, slot.blocks) else {
            return;
        };
        for i in done {
            slot.mark(i);
        }
        slot.resumed.store(true, Relaxed);
    }

    /// Blocks still missing, by file.
    pub fn missing(&self) -> Vec<NeedFile> {
        self.missing_in(0..self.len())
    }

    fn missing_in(&self, ids: std::ops::Range<usize>) -> Vec<NeedFile> {
        ids.filter_map(|id| {
            let s = self.slot(id)?;
            if s.finished.load(Relaxed) || s.blocks == 0 {
                return None;
            }
            let ranges = s.missing();
            (!ranges.is_empty()).then_some(NeedFile {
                id: id as u32,
                ranges,
            })
        })
        .collect()
    }

    /// Checks a record against the manifest and the grid.
    pub fn accept(&self, file: u32, offset: u64, len: u32) -> Result<Accepted, String> {
        let slot = self.slot(file as usize).ok_or_else(|| {
            format!("block for entry {file}, which is not a file in the manifest")
        })?;
        let index = offset / u64::from(self.block_len);
        match block_span(slot.size, self.block_len, index) {
            Some((o, l)) if o == offset && l == len => {}
            _ => {
                return Err(format!(
                    "block at offset {offset} length {len} does not fit {} ({} bytes)",
                    self.entry(file as usize).path,
                    slot.size
                ));
            }
        }
        Ok(if slot.is_done(index) {
            Accepted::Duplicate
        } else {
            Accepted::Take
        })
    }

    pub fn reject(&self) {
        self.counters.blocks_rejected.fetch_add(1, Relaxed);
    }

    /// Writes part of a block into its file; the block counts only once
    /// [`Sink::commit`] is called after its checksum matched.
    pub fn write_piece(&self, file: u32, at: u64, data: &[u8]) -> Result<(), SinkError> {
        let id = file as usize;
        if self.root.is_none() {
            return Ok(());
        }
        let of = self.open(id)?;
        let t = Instant::now();
        let mut direct_now = lock(&of.writer);
        // A file's unaligned tail goes through the page cache.
        let want = of.direct_ok && direct::aligned(data, at);
        if want != *direct_now && direct::set_direct(&of.file, want).is_ok() {
            *direct_now = want;
        }
        of.file
            .write_all_at(data, at)
            .map_err(|x| io_err("writing", &self.entry(id).path, x))?;
        self.counters
            .write_ns
            .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
        self.counters
            .bytes_written
            .fetch_add(data.len() as u64, Relaxed);
        if *direct_now {
            self.counters
                .bytes_written_direct
                .fetch_add(data.len() as u64, Relaxed);
        }
        Ok(())
    }

    /// Whether received blocks are stored (not `--skip-writes`).
    pub fn writes(&self) -> bool {
        self.root.is_some()
    }

    /// Whether a block is a whole one-block file written fresh: such a file
    /// takes the [`Sink::write_whole`] path.
    pub fn is_whole_file(&self, file: u32, offset: u64, len: u32) -> bool {
        self.root.is_some()
            && offset == 0
            && self.slot(file as usize).is_some_and(|s| {
                s.blocks == 1 && !s.resumed.load(Relaxed) && s.size == u64::from(len)
            })
    }

    /// Records the block at `offset` as complete (journaled for resume) and
    /// renames its file into place if it was the last one. A hole needs no
    /// write: the temporary file is created at full size, all zero.
    pub fn commit(&self, file: u32, offset: u64) -> Result<(), SinkError> {
        let id = file as usize;
        let Some(slot) = self.slot(id) else {
            return Ok(());
        };
        let index = offset / u64::from(self.block_len);
        if self.root.is_some() {
            let of = self.open(id)?;
            if self.cache.evict
                && let Some((at, len)) = block_span(slot.size, self.block_len, index)
            {
                // Flushed first: only clean pages leave the cache. Waiting
                // for the disk is writing time (the verdict's share).
                let t = Instant::now();
                direct::flush_and_evict(&of.file, at, u64::from(len))
                    .map_err(|x| io_err("flushing", &self.entry(id).path, x))?;
                self.counters
                    .write_ns
                    .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
            }
            if let Some(mut j) = of.journal.as_ref() {
                j.write_all(&index.to_le_bytes())
                    .map_err(|x| io_err("journaling", &self.entry(id).path, x))?;
            }
        }
        if slot.mark(index) && slot.done.load(Relaxed) == slot.blocks {
            self.finalize(id)?;
        }
        Ok(())
    }

    /// The open temporary file of `id`, created on first use.
    fn open(&self, id: usize) -> Result<Arc<OpenFile>, SinkError> {
        let slot = self.slot(id).ok_or_else(|| SinkError::BadEntry {
            id: id as u32,
            reason: "not a file".into(),
        })?;
        let mut guard = lock(&slot.open);
        if let Some(of) = guard.as_ref() {
            return Ok(Arc::clone(of));
        }
        let e = self.entry(id);
        let (parent, name) = split(&e.path);
        let dir = self.dir(parent)?;
        let at = |n: String, flags: OFlags| {
            // openat2 refuses a mode without O_CREAT.
            let mode = if flags.contains(OFlags::CREATE) {
                Mode::from_raw_mode(0o600)
            } else {
                Mode::empty()
            };
            rustix::fs::openat2(&*dir, n, flags | OFlags::CLOEXEC, mode, RESOLVE).map(File::from)
        };
        let resumed = slot.resumed.load(Relaxed);
        let file = if resumed {
            at(temp_name(name), OFlags::WRONLY)
        } else {
            at(
                temp_name(name),
                OFlags::WRONLY | OFlags::CREATE | OFlags::TRUNC,
            )
        }
        .map_err(|x| io_err("creating", &e.path, x))?;
        if !resumed && slot.size > 0 {
            // Reserve the space up front (a full disk fails here, not midway);
            // a sparse source keeps its holes.
            // A one-block file is written whole at once: nothing to reserve.
            let reserved = if slot.sparse || slot.blocks == 1 {
                false
            } else {
                match rustix::fs::fallocate(
                    &file,
                    rustix::fs::FallocateFlags::empty(),
                    0,
                    slot.size,
                ) {
                    Ok(()) => true,
                    Err(x @ (Errno::NOSPC | Errno::DQUOT | Errno::FBIG)) => {
                        return Err(io_err("reserving space for", &e.path, x));
                    }
                    // Not supported by this file system: grow it as we go.
                    Err(_) => false,
                }
            };
            if !reserved {
                file.set_len(slot.size)
                    .map_err(|x| io_err("sizing", &e.path, x))?;
            }
        }
        let journal = if slot.blocks > 1 {
            let flags = if resumed {
                OFlags::WRONLY | OFlags::APPEND
            } else {
                OFlags::WRONLY | OFlags::APPEND | OFlags::CREATE | OFlags::TRUNC
            };
            let mut j = at(journal_name(name), flags)
                .map_err(|x| io_err("creating journal for", &e.path, x))?;
            if !resumed {
                j.write_all(&journal::journal_header(e, self.block_len))
                    .map_err(|x| io_err("journaling", &e.path, x))?;
            }
            Some(j)
        } else {
            None
        };
        // Refused by some file systems: those are written through the cache.
        let direct_ok = self.cache.direct && direct::set_direct(&file, true).is_ok();
        let of = Arc::new(OpenFile {
            file,
            journal,
            writer: Mutex::new(direct_ok),
            direct_ok,
        });
        *guard = Some(Arc::clone(&of));
        Ok(of)
    }

    /// Sets mode and time, renames the complete file into place, drops its journal.
    fn finalize(&self, id: usize) -> Result<(), SinkError> {
        let Some(slot) = self.slot(id) else {
            return Ok(());
        };
        if slot.finished.swap(true, Relaxed) || self.root.is_none() {
            return Ok(());
        }
        let e = self.entry(id);
        let of = lock(&slot.open).take();
        let (parent, name) = split(&e.path);
        let dir = self.dir(parent)?;
        if let Some(of) = of {
            rustix::fs::fchmod(of.file.as_fd(), Mode::from_raw_mode(e.mode & 0o7777))
                .map_err(|x| io_err("setting mode of", &e.path, x))?;
            rustix::fs::futimens(of.file.as_fd(), &timestamps(e.mtime_ns))
                .map_err(|x| io_err("setting time of", &e.path, x))?;
        }
        let flags = if self.overwrite {
            RenameFlags::empty()
        } else {
            RenameFlags::NOREPLACE
        };
        rustix::fs::renameat_with(&*dir, temp_name(name), &*dir, name, flags).map_err(|x| {
            if x == Errno::EXIST {
                SinkError::Confine(ConfineError::Exists(e.path.clone()))
            } else {
                io_err("renaming into place", &e.path, x)
            }
        })?;
        if slot.blocks > 1 {
            let _ = rustix::fs::unlinkat(&*dir, journal_name(name), AtFlags::empty());
        }
        self.counters.files_written.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Renames the stages into place, then sets directory modes and times,
    /// deepest first (writing into a directory changes its time).
    pub fn finish_dirs(&self) -> Result<(), SinkError> {
        if self.root.is_none() {
            return Ok(());
        }
        for st in lock(&self.stages).drain(..) {
            rustix::fs::renameat_with(
                &*st.parent,
                &st.hidden,
                &*st.parent,
                &st.name,
                RenameFlags::NOREPLACE,
            )
            .map_err(|x| match x {
                Errno::EXIST => ConfineError::Exists(st.path.clone()).into(),
                x => io_err("renaming into place", &st.path, x),
            })?;
        }
        let dirs: Vec<&Entry> = self
            .items
            .iter()
            .map(|(_, i)| &i.entry)
            .filter(|e| matches!(e.kind, EntryKind::Dir))
            .collect();
        for e in dirs.into_iter().rev() {
            let fd = self.open_beneath(&e.path, OFlags::RDONLY | OFlags::DIRECTORY, "opening")?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(e.mode & 0o7777))
                .map_err(|x| io_err("setting mode of", &e.path, x))?;
            rustix::fs::futimens(&fd, &timestamps(e.mtime_ns))
                .map_err(|x| io_err("setting time of", &e.path, x))?;
        }
        Ok(())
    }

    /// Opens an existing entry of the destination, confined beneath it.
    fn open_beneath(
        &self,
        path: &str,
        flags: OFlags,
        what: &'static str,
    ) -> Result<OwnedFd, SinkError> {
        let (parent, name) = split(path);
        let dir = self.dir(parent)?;
        rustix::fs::openat2(&*dir, name, flags | OFlags::CLOEXEC, Mode::empty(), RESOLVE)
            .map_err(|x| io_err(what, path, x))
    }

    /// BLAKE3 of every file this run wrote, read back from the destination.
    pub fn digests(&self) -> Result<Vec<(u32, String)>, SinkError> {
        let mut out = Vec::new();
        if self.root.is_none() {
            return Ok(out);
        }
        for (id, item) in self.items.iter() {
            let e = &item.entry;
            if !matches!(e.kind, EntryKind::File { .. }) {
                continue;
            }
            let fd = self.open_beneath(&e.path, OFlags::RDONLY, "reading back")?;
            let mut h = blake3::Hasher::new();
            h.update_reader(File::from(fd))
                .map_err(|x| io_err("reading back", &e.path, x))?;
            out.push((id as u32, h.finalize().to_hex().to_string()));
        }
        Ok(out)
    }

    pub fn totals(&self) -> TransferTotals {
        let c = &self.counters;
        TransferTotals {
            files_written: c.files_written.load(Relaxed),
            files_skipped: c.files_skipped.load(Relaxed),
            dirs: c.dirs.load(Relaxed),
            symlinks: c.symlinks.load(Relaxed),
            bytes_written: c.bytes_written.load(Relaxed),
            bytes_written_direct: c.bytes_written_direct.load(Relaxed),
            blocks_rejected: c.blocks_rejected.load(Relaxed),
            write_seconds: c.write_ns.load(Relaxed) as f64 / 1e9,
        }
    }
}
