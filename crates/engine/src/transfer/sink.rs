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
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use linerate_wire::{Entry, EntryKind, NeedFile, TransferTotals};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags, ResolveFlags, Timespec, Timestamps};
use rustix::io::Errno;

use super::direct::{self, CachePolicy};
use super::grid::{block_count, block_span};
use crate::confine::{self, ConfineError, DestRoot};

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);
const JOURNAL_MAGIC: &[u8; 4] = b"LRJ1";
const JOURNAL_HEADER_LEN: usize = 24;

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

struct OpenFile {
    file: File,
    journal: Option<File>,
    /// One writer at a time: the kernel serializes writers of an inode
    /// anyway, and its lock spins where this one sleeps. Holds whether
    /// O_DIRECT is set on `file` now (cleared for unaligned writes).
    writer: Mutex<bool>,
    /// The file system accepted O_DIRECT for this file.
    direct_ok: bool,
}

struct FileSlot {
    size: u64,
    blocks: u64,
    sparse: bool,
    done_bits: Vec<AtomicU64>,
    done: AtomicU64,
    /// Blocks already in the temporary file from an earlier run.
    resumed: AtomicBool,
    /// Its directory was created by this run inside a stage: the file can
    /// be created under its own name, nothing can be in the way.
    in_fresh_dir: AtomicBool,
    finished: AtomicBool,
    open: Mutex<Option<Arc<OpenFile>>>,
}

impl FileSlot {
    fn new(size: u64, block_len: u32, sparse: bool) -> FileSlot {
        let blocks = block_count(size, block_len);
        FileSlot {
            size,
            blocks,
            sparse,
            done_bits: (0..blocks.div_ceil(64))
                .map(|_| AtomicU64::new(0))
                .collect(),
            done: AtomicU64::new(0),
            resumed: AtomicBool::new(false),
            in_fresh_dir: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            open: Mutex::new(None),
        }
    }

    /// Marks block `i` done; true if it was not before.
    fn mark(&self, i: u64) -> bool {
        let bit = 1u64 << (i % 64);
        let Some(word) = self.done_bits.get((i / 64) as usize) else {
            return false;
        };
        let fresh = word.fetch_or(bit, Relaxed) & bit == 0;
        if fresh {
            self.done.fetch_add(1, Relaxed);
        }
        fresh
    }

    fn is_done(&self, i: u64) -> bool {
        self.done_bits
            .get((i / 64) as usize)
            .is_some_and(|w| w.load(Relaxed) & (1 << (i % 64)) != 0)
    }

    fn missing(&self) -> Vec<[u64; 2]> {
        let mut ranges: Vec<[u64; 2]> = Vec::new();
        for i in (0..self.blocks).filter(|&i| !self.is_done(i)) {
            match ranges.last_mut() {
                Some(r) if r[1] == i => r[1] = i + 1,
                _ => ranges.push([i, i + 1]),
            }
        }
        ranges
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

/// The process's file mode creation mask, from /proc (reading it with
/// umask(2) would change it, racing other threads).
fn current_umask() -> u32 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("Umask:"))
                .and_then(|v| u32::from_str_radix(v.trim(), 8).ok())
        })
        .unwrap_or(0o7777)
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Splits "a/b/c" into ("a/b", "c").
fn split(path: &str) -> (&str, &str) {
    path.rsplit_once('/').unwrap_or(("", path))
}

/// A hidden name beside `name` ending in `suffix` (hashed when too long).
fn hidden_name(name: &str, suffix: &str) -> String {
    if name.len() <= 240 {
        format!(".{name}{suffix}")
    } else {
        format!(
            ".lr{:016x}{suffix}",
            twox_hash::XxHash3_64::oneshot(name.as_bytes())
        )
    }
}

fn temp_name(name: &str) -> String {
    hidden_name(name, ".lrpart")
}

/// Where a new directory is built until the transfer is complete.
fn stage_name(name: &str) -> String {
    hidden_name(name, ".lrstage")
}

fn journal_name(name: &str) -> String {
    hidden_name(name, ".lrjournal")
}

fn timestamps(mtime_ns: i64) -> Timestamps {
    let t = Timespec {
        tv_sec: mtime_ns.div_euclid(1_000_000_000),
        tv_nsec: mtime_ns.rem_euclid(1_000_000_000) as _,
    };
    Timestamps {
        last_access: t,
        last_modification: t,
    }
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
        if bytes.len() < JOURNAL_HEADER_LEN
            || bytes[..JOURNAL_HEADER_LEN] != journal_header(e, self.block_len)
        {
            return;
        }
        for rec in bytes[JOURNAL_HEADER_LEN..].chunks_exact(8) {
            let i = u64::from_le_bytes(rec.try_into().unwrap_or_default());
            if i < slot.blocks {
                slot.mark(i);
            }
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

    /// Whether a block is a whole one-block file written fresh: such a file
    /// takes the [`Sink::write_whole`] path.
    pub fn is_whole_file(&self, file: u32, offset: u64, len: u32) -> bool {
        self.root.is_some()
            && offset == 0
            && self.slot(file as usize).is_some_and(|s| {
                s.blocks == 1 && !s.resumed.load(Relaxed) && s.size == u64::from(len)
            })
    }

    /// Creates a whole, checked one-block file. In a directory this run
    /// created (inside a stage, invisible until the transfer ends) it is
    /// created under its own name; elsewhere as an unnamed file (O_TMPFILE)
    /// written, given its mode and time, then linked into place, so no
    /// partial file ever has a visible name and the directory changes once,
    /// not twice (create and rename). Falls back to the temporary-name path
    /// where the file system or /proc does not allow it.
    pub fn write_whole(&self, file: u32, data: &[u8]) -> Result<(), SinkError> {
        let id = file as usize;
        let e = self.entry(id);
        let (parent, name) = split(&e.path);
        let dir = self.dir(parent)?;
        let named = self.slot(id).is_some_and(|s| s.in_fresh_dir.load(Relaxed));
        let linked = (|| -> Result<bool, SinkError> {
            let mode = e.mode & 0o7777;
            // Invisible until linked or unstaged: it may carry its final
            // mode from the start.
            let exact = mode & 0o7000 == 0 && mode & self.umask == 0;
            let create_mode = Mode::from_raw_mode(if exact { mode } else { 0o600 });
            let opened = if named {
                // O_EXCL: nothing, not even a link, can be in the way.
                rustix::fs::openat(
                    &*dir,
                    name,
                    OFlags::CREATE | OFlags::EXCL | OFlags::WRONLY | OFlags::CLOEXEC,
                    create_mode,
                )
                .map_err(|x| match x {
                    Errno::EXIST => ConfineError::Exists(e.path.clone()).into(),
                    x => io_err("creating", &e.path, x),
                })?
            } else {
                let Ok(fd) = rustix::fs::openat(
                    &*dir,
                    ".",
                    OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
                    create_mode,
                ) else {
                    return Ok(false);
                };
                fd
            };
            let f = File::from(opened);
            let t = Instant::now();
            f.write_all_at(data, 0)
                .map_err(|x| io_err("writing", &e.path, x))?;
            if self.cache.evict {
                direct::flush_and_evict(&f, 0, data.len() as u64)
                    .map_err(|x| io_err("flushing", &e.path, x))?;
            }
            self.counters
                .write_ns
                .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
            if !exact {
                rustix::fs::fchmod(&f, Mode::from_raw_mode(mode))
                    .map_err(|x| io_err("setting mode of", &e.path, x))?;
            }
            rustix::fs::futimens(&f, &timestamps(e.mtime_ns))
                .map_err(|x| io_err("setting time of", &e.path, x))?;
            if named {
                return Ok(true);
            }
            // The file itself (AT_EMPTY_PATH: allowed for an O_TMPFILE file
            // its opener links, since Linux 6.10) or, before that, through /proc.
            let link =
                |dir: &OwnedFd| match rustix::fs::linkat(&f, "", dir, name, AtFlags::EMPTY_PATH) {
                    Err(Errno::NOENT | Errno::PERM | Errno::INVAL) => {
                        let proc_path =
                            format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(&f));
                        rustix::fs::linkat(
                            rustix::fs::CWD,
                            proc_path.as_str(),
                            dir,
                            name,
                            AtFlags::SYMLINK_FOLLOW,
                        )
                    }
                    other => other,
                };
            match link(&dir) {
                Ok(()) => Ok(true),
                Err(Errno::EXIST) if self.overwrite => {
                    rustix::fs::unlinkat(&*dir, name, AtFlags::empty())
                        .map_err(|x| io_err("replacing", &e.path, x))?;
                    link(&dir).map_err(|x| io_err("linking into place", &e.path, x))?;
                    Ok(true)
                }
                Err(Errno::EXIST) => Err(ConfineError::Exists(e.path.clone()).into()),
                // No /proc, or a file system without O_TMPFILE links.
                Err(_) => Ok(false),
            }
        })()?;
        if !linked {
            self.write_piece(file, 0, data)?;
            return self.commit(file, 0);
        }
        self.counters
            .bytes_written
            .fetch_add(data.len() as u64, Relaxed);
        self.counters.files_written.fetch_add(1, Relaxed);
        if let Some(slot) = self.slot(id) {
            slot.mark(0);
            slot.finished.store(true, Relaxed);
        }
        Ok(())
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
                j.write_all(&journal_header(e, self.block_len))
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

fn journal_header(e: &Entry, block_len: u32) -> [u8; JOURNAL_HEADER_LEN] {
    let mut h = [0u8; JOURNAL_HEADER_LEN];
    h[..4].copy_from_slice(JOURNAL_MAGIC);
    h[4..12].copy_from_slice(&e.size().to_le_bytes());
    h[12..20].copy_from_slice(&e.mtime_ns.to_le_bytes());
    h[20..24].copy_from_slice(&block_len.to_le_bytes());
    h
}
