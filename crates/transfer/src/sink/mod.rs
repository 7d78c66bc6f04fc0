//! The receiver's files: which blocks each still needs, the temporary file
//! blocks are written into, the journal that survives a crash, and the
//! rename into place once every block has arrived and passed its checksum.
//!
//! A directory the destination does not have yet is built under a hidden
//! name (a stage) and renamed into place when the transfer ends, so files
//! inside it can be created under their own names in one step: nothing in
//! it is visible at its final path before the whole tree is complete.

use linerate_engine::lock;
use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::FileExt;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use crate::filter::Filter;
use changes::Fate;
use linerate_wire::{
    Action, Entry, EntryKind, Existing, MAX_FILE_SIZE, NeedFile, TOP_PATH, TransferTotals,
};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags, ResolveFlags};
use rustix::io::Errno;

use super::claims::{CLAIM_BYTES, ClaimSet};
use super::content_digest;
use super::direct::{self, CachePolicy};
use super::grid::block_span;
use crate::confine::{self, ConfineError, DestRoot};
use linerate_engine::limits::{Budget, OverBudget, SessionLimits};

mod changes;
mod cleanup;
mod durable;
mod holes;
mod index;
mod itemize;
pub(crate) mod journal;
mod names;
mod ranges;
mod slot;
mod whole;

pub use cleanup::{Leftovers, remove_tree};
pub use index::PathConflict;
use index::{INDEX_BYTES, PathIndex, PathKind};
use itemize::{Came, Itemized, Type};
use names::{current_umask, journal_name, split, stage_name, temp_name, timestamps};
use slot::{FileSlot, OpenFile};

/// The sender's control connection, polled at most every
/// [`PeerWatch::EVERY`] while the receiver works for it.
struct PeerWatch {
    fd: OwnedFd,
    began: Instant,
    /// When it was last polled, ns after `began`.
    polled_ns: AtomicU64,
}

impl PeerWatch {
    const EVERY: std::time::Duration = std::time::Duration::from_millis(50);

    fn new(fd: OwnedFd) -> PeerWatch {
        PeerWatch {
            fd,
            began: Instant::now(),
            polled_ns: AtomicU64::new(0),
        }
    }

    /// Whether the peer closed its end (or the connection failed).
    fn gone(&self) -> bool {
        let now = self.began.elapsed().as_nanos() as u64;
        let last = self.polled_ns.load(Relaxed);
        if now.saturating_sub(last) < Self::EVERY.as_nanos() as u64 {
            return false;
        }
        self.polled_ns.store(now, Relaxed);
        linerate_engine::sockopt::peer_gone(&self.fd)
    }
}

/// Bytes one more range of received blocks costs (a B-tree slot).
const RANGE_BYTES: u64 = 48;

const RESOLVE: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// Why the receiver cannot go on; sent to the sender as the refusal.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SinkError {
    #[error(transparent)]
    Confine(#[from] ConfineError),
    #[error("{what} {path:?}: {error}")]
    Io {
        what: &'static str,
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("entry {id}: {flaw}")]
    BadEntry { id: u32, flaw: EntryFlaw },
    #[error("refused: {0}")]
    Budget(#[from] OverBudget),
    /// Found before anything of the file is written; what arrived of
    /// earlier files is kept for a rerun once there is room.
    #[error(
        "{path:?} needs {need} bytes and the destination has {free} free for this transfer (No space left on device)"
    )]
    NoSpace { path: PathBuf, need: u64, free: u64 },
    /// The sender's control connection closed: the work it asked for
    /// stops (what arrived is kept for a rerun).
    #[error("the sender hung up")]
    PeerGone,
}

/// Why an entry of the manifest is refused (each path as the sender
/// named it, or as the destination holds it).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EntryFlaw {
    /// The top entry is not a directory.
    #[error("{TOP_PATH:?}, the destination itself, is announced as no directory")]
    TopNotADirectory,
    /// A path that leaves the destination or is not a path at all.
    #[error(transparent)]
    Confine(#[from] ConfineError),
    /// A path that conflicts with another of the manifest.
    #[error(transparent)]
    Conflict(#[from] PathConflict),
    /// A file over the largest a receiver takes.
    #[error(
        "{path:?} is announced at {size} bytes, over the largest file a receiver takes ({MAX_FILE_SIZE})"
    )]
    TooLarge {
        /// The path.
        path: PathBuf,
        /// Its announced size.
        size: u64,
    },
    /// A hard link to no earlier file.
    #[error("{path:?} is announced as a second name of entry {to}, which is not an earlier file")]
    NotAnEarlierFile {
        /// The path.
        path: PathBuf,
        /// The entry it names.
        to: u32,
    },
    /// A file another transfer is writing.
    #[error("{0:?} is being written by another transfer (busy)")]
    FileBusy(PathBuf),
    /// A directory another transfer is creating.
    #[error("directory {0:?} is being created by another transfer (busy)")]
    DirectoryBusy(PathBuf),
    /// No destination to write into (a bug).
    #[error("no destination")]
    NoDestination,
    /// Data for an entry that is not a file.
    #[error("not a file")]
    NotAFile,
    /// A directory the source replaced, holding what the rules keep.
    #[error(
        "{path:?} is a directory where the source now has a {now}, and it holds {kept:?}, which \
         the --exclude rules keep: it was left as it is (rsync refuses too); move it or change \
         the rules"
    )]
    KeptInside {
        /// The directory.
        path: PathBuf,
        /// What the source has there now: `file` or `link`.
        now: &'static str,
        /// What inside it the rules keep.
        kept: PathBuf,
    },
    /// A directory, not empty, the source replaced.
    #[error(
        "{path:?} is a directory that is not empty where the source now has a {now}: --force \
         (or --delete) replaces it, as rsync's do"
    )]
    DirectoryNotEmpty {
        /// The directory.
        path: PathBuf,
        /// What the source has there now: `file` or `link`.
        now: &'static str,
    },
}

impl SinkError {
    /// The manifest itself was refused (not the disk or the connection
    /// failing): nothing of the transfer is worth keeping for a rerun.
    pub fn is_refusal(&self) -> bool {
        matches!(
            self,
            SinkError::BadEntry { .. } | SinkError::Budget(_) | SinkError::Confine(_)
        )
    }
}

/// A data record that does not fit the manifest: the sender broke the
/// protocol, and the stream ends.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    #[error("block for entry {0}, which is not a file in the manifest")]
    NotAFile(u32),
    #[error("hole record for {}, which the manifest does not call sparse", .0.display())]
    HoleInDenseFile(PathBuf),
    #[error("block at offset {offset} length {len} does not fit {} ({size} bytes)", .path.display())]
    OffGrid {
        offset: u64,
        len: u32,
        path: PathBuf,
        size: u64,
    },
}

fn io_err(what: &'static str, path: &str, source: impl Into<std::io::Error>) -> SinkError {
    SinkError::Io {
        what,
        path: path.into(),
        error: source.into(),
    }
}

/// Gives `name` in `dir` the modification time of entry `e`, without
/// following a link.
fn set_time_at(dir: &OwnedFd, name: &str, e: &Entry) -> Result<(), SinkError> {
    rustix::fs::utimensat(
        dir,
        name,
        &timestamps(e.mtime_ns),
        AtFlags::SYMLINK_NOFOLLOW,
    )
    .map_err(|x| io_err("setting the time of", &e.path, x))
}

#[derive(Default)]
struct Counters {
    files_written: AtomicU64,
    files_skipped: AtomicU64,
    files_resumed: AtomicU64,
    dirs: AtomicU64,
    symlinks: AtomicU64,
    bytes_written: AtomicU64,
    bytes_written_direct: AtomicU64,
    blocks_rejected: AtomicU64,
    write_ns: AtomicU64,
    /// What the first pass asked the sender for, and whether the listing
    /// it answered was whole.
    files_asked: AtomicU64,
    bytes_asked: AtomicU64,
    listed: std::sync::atomic::AtomicBool,
    created: AtomicU64,
    replaced: AtomicU64,
    deleted: AtomicU64,
}

/// What the first pass asked the sender for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Asked {
    /// Files that miss blocks.
    pub files: u64,
    /// Bytes of data they miss.
    pub bytes: u64,
    /// The whole listing has been answered: the totals hold.
    pub listed: bool,
}

/// A new directory built under a hidden name in `parent`.
struct Stage {
    parent: Arc<OwnedFd>,
    hidden: String,
    name: String,
    path: String,
    /// Made by this session (not left by an earlier run).
    created: bool,
}

/// How the receiver treats what a sender asks for.
pub struct SinkOptions {
    pub block_len: u32,
    /// The sender's control connection, looked at between pieces of work
    /// a manifest asks for (comparing contents, deleting): once it closes,
    /// that work stops (docs/security.md#hang-up).
    pub peer: Option<OwnedFd>,
    /// What becomes of a file that exists and differs.
    pub existing: Existing,
    pub cache: CachePolicy,
    /// Apply setuid, setgid and sticky bits from the sender.
    pub keep_special_bits: bool,
    /// Apply the sender's ACLs as sent; otherwise their entries are held
    /// within the receiver's umask (docs/security.md#acls).
    pub acls_as_sent: bool,
    pub limits: SessionLimits,
    /// The paths this session holds against other sessions of the server.
    pub claims: Option<ClaimSet>,
    /// Sync data before journaling and renaming, and directories before
    /// the end (off with `--no-fsync`).
    pub durable: bool,
    /// Look and change nothing: note what would be created and replaced,
    /// and ask for no block (`--dry-run`).
    pub dry_run: bool,
    /// List each change for the report (`--itemize`, `--dry-run`), not
    /// only count them.
    pub list_changes: bool,
    /// Owners by the sender's numbers, not their names (`--numeric-ids`).
    pub numeric_ids: bool,
    /// A non-empty directory where a file or link comes is removed
    /// (`--force`, `--delete`); otherwise the run stops and names it.
    pub replace_dirs: bool,
    /// The sender's include/exclude rules: a directory that holds a path
    /// they leave out is never removed to make way (rsync's rule).
    pub protected: Arc<Filter>,
    /// The destination keeps its own owner, mode, attributes and time
    /// when a source's top lands in it (`SRC/`): a daemon's --root, which
    /// no sender may give away or open to others.
    pub keep_top: bool,
    /// The attributes the manifest carries (`-X`, `-A`).
    pub carried: crate::meta::Wanted,
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
    peer: Option<PeerWatch>,
    existing: Existing,
    cache: CachePolicy,
    keep_special_bits: bool,
    /// A non-empty directory where a file or link comes is removed.
    replace_dirs: bool,
    /// What the sender's rules leave out, kept when a directory goes.
    protected: Arc<Filter>,
    limits: SessionLimits,
    /// What the manifest and the bookkeeping hold.
    memory: Budget,
    /// Bytes the destination can still be promised for dense files (read
    /// from the file system at the first one).
    space: Mutex<Option<u64>>,
    index: Mutex<PathIndex>,
    claims: Mutex<Option<ClaimSet>>,
    /// Grows while the manifest arrives and streams already write: an
    /// append-only vector, so an entry's place never moves.
    items: boxcar::Vec<Item>,
    dirs: Mutex<HashMap<String, Arc<OwnedFd>>>,
    /// Directories this run created: nothing in them needs looking up.
    fresh: Mutex<HashSet<String>>,
    /// With -i, each file whose attributes this run set in place, as it
    /// was before: a name linked to the group later is itemized against
    /// what it was, as rsync does.
    refreshed: Mutex<HashMap<(u64, u64), rustix::fs::Stat>>,
    /// Directories inside a stage, created now or left by an earlier run:
    /// a file there that does not match is a leftover of that run.
    staged: Mutex<HashSet<String>>,
    /// Stages to rename into place once the transfer is complete.
    stages: Mutex<Vec<Stage>>,
    /// The process umask: a file created with a mode it leaves alone needs no fchmod.
    /// See [`SinkOptions::keep_top`].
    keep_top: bool,
    umask: u32,
    counters: Counters,
    /// What the page cache did to the writes (docs/verdict.md#buffered-disk).
    writeback: linerate_probe::writeback::WriteWatch,
    /// See [`durable`].
    durable: bool,
    /// Directories that gained a name, by path: synced before the end.
    changed_dirs: Mutex<std::collections::BTreeMap<String, Arc<OwnedFd>>>,
    /// A stage holds files written without their own sync.
    stage_unsynced: std::sync::atomic::AtomicBool,
    /// The destination is on a disk, not in memory (tmpfs).
    on_disk: bool,
    /// Syncs full batches of blocks off the stream threads (durable only).
    syncer: Option<durable::Syncer>,
    dry_run: bool,
    list_changes: bool,
    /// What was created, replaced and deleted, when listed.
    changes: Mutex<Vec<linerate_wire::Change>>,
    /// Owners and extended attributes as they arrive.
    ids: crate::meta::Ids,
}

/// Whether a staging file found in the destination can be one this
/// receiver made: a regular file with one link, owned by this process's
/// user. Anything else (a hard link planted under a staging name, above
/// all) is never opened for writing.
fn is_own_staging(st: &rustix::fs::Stat) -> bool {
    (st.st_mode & libc::S_IFMT) == libc::S_IFREG
        && st.st_nlink == 1
        && st.st_uid == rustix::process::geteuid().as_raw()
}

/// Opens a staging file (temporary file or journal) in `dir`: a fresh one
/// is created exclusively, after unlinking whatever had its name (a link is
/// removed, never written through); a resumed one must pass
/// [`is_own_staging`] on the open descriptor.
fn open_staging(dir: &OwnedFd, name: &str, flags: OFlags, resume: bool) -> Result<File, Errno> {
    let flags = flags | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    if resume {
        let fd = rustix::fs::openat2(dir, name, flags, Mode::empty(), RESOLVE)?;
        if !is_own_staging(&rustix::fs::fstat(&fd)?) {
            return Err(Errno::PERM);
        }
        return Ok(File::from(fd));
    }
    match rustix::fs::unlinkat(dir, name, AtFlags::empty()) {
        Ok(()) | Err(Errno::NOENT) => {}
        Err(x) => return Err(x),
    }
    rustix::fs::openat2(
        dir,
        name,
        flags | OFlags::CREATE | OFlags::EXCL,
        Mode::from_raw_mode(0o600),
        RESOLVE,
    )
    .map(File::from)
}

/// Where the receiver stands with one block record.
pub enum Accepted {
    /// Write it (or, for a hole, only count it).
    Take,
    /// Already have it from an earlier pass.
    Duplicate,
}

impl Sink {
    pub fn new(root: Option<DestRoot>, o: SinkOptions) -> Sink {
        // Nothing in memory survives a crash: there is nothing to sync,
        // and syncing tmpfs still walks every page.
        let on_disk = root.as_ref().is_some_and(|r| !r.in_memory());
        let durable = o.durable && on_disk;
        // Without a thread of its own, a stream syncs its batches itself.
        let syncer = durable
            .then(|| durable::Syncer::start(o.block_len).ok())
            .flatten();
        let umask = current_umask();
        Sink {
            block_len: o.block_len,
            peer: o.peer.map(PeerWatch::new),
            existing: o.existing,
            cache: o.cache,
            keep_special_bits: o.keep_special_bits,
            replace_dirs: o.replace_dirs,
            protected: o.protected,
            keep_top: o.keep_top,
            limits: o.limits,
            memory: Budget::new(
                o.limits.memory,
                "the manifest and what arrived of it",
                "--session-memory",
                true,
            ),
            space: Mutex::default(),
            index: Mutex::default(),
            claims: Mutex::new(o.claims),
            items: boxcar::Vec::new(),
            dirs: Mutex::default(),
            fresh: Mutex::default(),
            refreshed: Mutex::default(),
            staged: Mutex::default(),
            stages: Mutex::default(),
            umask,
            counters: Counters::default(),
            writeback: linerate_probe::writeback::WriteWatch::start(),
            durable,
            on_disk,
            syncer,
            changed_dirs: Mutex::default(),
            stage_unsynced: Default::default(),
            dry_run: o.dry_run,
            list_changes: o.list_changes,
            changes: Mutex::default(),
            ids: crate::meta::Ids::new(
                o.numeric_ids,
                o.keep_special_bits,
                (!o.acls_as_sent).then_some(umask),
            )
            .carrying(o.carried),
            root,
        }
    }

    /// Entries received so far.
    pub fn len(&self) -> usize {
        self.items.count()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
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
        let rel = if rel == TOP_PATH { "" } else { rel };
        let root = self.root.as_ref().ok_or(SinkError::BadEntry {
            id: 0,
            flaw: EntryFlaw::NoDestination,
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
        if first as u64 + entries.len() as u64 > self.limits.entries {
            return Err(OverBudget {
                what: "the manifest's entries",
                flag: "--max-entries",
                limit: self.limits.entries,
                unit_bytes: false,
            }
            .into());
        }
        for (i, e) in entries.into_iter().enumerate() {
            let id = first + i;
            self.admit(id as u32, &e)?;
            let slot = match e.kind {
                EntryKind::File { size, sparse, .. } => {
                    Some(FileSlot::new(size, self.block_len, sparse))
                }
                _ => None,
            };
            self.items.push(Item { entry: e, slot });
        }
        let last = self.len();
        if self.dry_run {
            for id in first..last {
                self.check_peer()?;
                self.preview(id)?;
            }
        } else if self.root.is_some() {
            for id in first..last {
                self.check_peer()?;
                self.prepare(id)?;
            }
        }
        Ok(self.missing_in(first..last))
    }

    /// Checks one entry against the destination's rules, the rest of the
    /// manifest, other sessions and the session's budget, before anything
    /// is allocated or written for it.
    fn admit(&self, id: u32, e: &Entry) -> Result<(), SinkError> {
        let bad = |flaw| SinkError::BadEntry { id, flaw };
        if e.path == TOP_PATH {
            if !matches!(e.kind, EntryKind::Dir) {
                return Err(bad(EntryFlaw::TopNotADirectory));
            }
        } else {
            confine::check(&e.path).map_err(|c| bad(c.into()))?;
        }
        if e.size() > MAX_FILE_SIZE {
            return Err(bad(EntryFlaw::TooLarge {
                path: PathBuf::from(&e.path),
                size: e.size(),
            }));
        }
        let target = match &e.kind {
            EntryKind::Symlink { target } => target.len(),
            _ => 0,
        };
        let (is_dir, kind) = match e.kind {
            EntryKind::Dir => (true, PathKind::Dir),
            EntryKind::File { .. } => (false, PathKind::File),
            EntryKind::Symlink { .. } => (false, PathKind::Link),
            EntryKind::HardLink { to } => {
                let first = self.items.get(to as usize).map(|i| &i.entry.kind);
                if to >= id || !matches!(first, Some(EntryKind::File { .. })) {
                    return Err(bad(EntryFlaw::NotAnEarlierFile {
                        path: PathBuf::from(&e.path),
                        to,
                    }));
                }
                (false, PathKind::File)
            }
        };
        let indexed = lock(&self.index)
            .add(&e.path, kind)
            .map_err(|c| bad(c.into()))?;
        let cost = std::mem::size_of::<Item>() as u64 * 2
            + (e.path.len() + target) as u64
            + indexed * INDEX_BYTES
            + CLAIM_BYTES;
        self.memory.charge(cost)?;
        if !is_dir
            && self.root.is_some()
            && let Some(claims) = lock(&self.claims).as_mut()
            && !claims.claim(&e.path)
        {
            return Err(bad(EntryFlaw::FileBusy(claims.full(&e.path).into())));
        }
        Ok(())
    }

    /// Promises `bytes` of the destination's free space to a dense file.
    fn reserve_space(&self, id: usize, bytes: u64) -> Result<(), SinkError> {
        let Some(root) = self.root.as_ref() else {
            return Ok(());
        };
        let mut space = lock(&self.space);
        let free = match *space {
            Some(f) => f,
            None => {
                let st = rustix::fs::fstatvfs(root.fd())
                    .map_err(|x| io_err("checking free space of", "", x))?;
                st.f_bavail.saturating_mul(st.f_frsize)
            }
        };
        if bytes > free {
            return Err(SinkError::NoSpace {
                path: PathBuf::from(&self.entry(id).path),
                need: bytes,
                free,
            });
        }
        *space = Some(free - bytes);
        Ok(())
    }

    /// The permission bits a received file or directory gets: the sender's,
    /// without setuid, setgid and sticky unless the receiver asked for them,
    /// less the receiver's umask; as sent where an ACL taken as sent says
    /// it.
    fn mode_of(&self, e: &Entry) -> u32 {
        let allowed = if self.keep_special_bits {
            0o7777
        } else {
            0o777
        };
        self.ids
            .mode_after_acl(e, e.mode & allowed & !self.umask, allowed)
    }

    fn prepare(&self, id: usize) -> Result<(), SinkError> {
        let e = self.entry(id);
        if e.path == TOP_PATH {
            // The destination itself: there already, never replaced.
            let top = self.dir("")?;
            lock(&self.dirs).insert(e.path.clone(), top);
            self.counters.dirs.fetch_add(1, Relaxed);
            return Ok(());
        }
        let (parent, name) = split(&e.path);
        // A new directory holds nothing in the way; the top of the
        // transfer (an empty path) is never replaced.
        if !e.path.is_empty() && !lock(&self.fresh).contains(parent) {
            self.clear_the_way(e, &self.dir(parent)?)?;
        }
        match &e.kind {
            EntryKind::Dir => {
                let (fd, created, staged) = self.make_dir(&e.path, parent, name)?;
                lock(&self.dirs).insert(e.path.clone(), Arc::new(fd));
                if created {
                    self.note(Action::Create, &e.path, true, Itemized::new_dir);
                    lock(&self.fresh).insert(e.path.clone());
                    self.dir_changed(parent, &self.dir(parent)?);
                }
                if staged {
                    lock(&self.staged).insert(e.path.clone());
                }
                self.counters.dirs.fetch_add(1, Relaxed);
            }
            EntryKind::Symlink { target } => self.place_symlink(e, target)?,
            // Made once its file is in place: see `make_hard_links`.
            EntryKind::HardLink { .. } => {}
            EntryKind::File { .. } if lock(&self.fresh).contains(parent) => {
                // A new directory holds no earlier file, temporary or journal.
                self.note(Action::Create, &e.path, false, Itemized::new_file);
                if let Some(slot) = self.slot(id) {
                    slot.in_fresh_dir.store(true, Relaxed);
                    if !slot.sparse {
                        self.reserve_space(id, slot.size)?;
                    }
                }
                if e.size() == 0 {
                    self.open(id)?;
                    self.finalize(id)?;
                }
            }
            EntryKind::File { .. } => {
                let dir = self.dir(parent)?;
                let found = match rustix::fs::statat(&*dir, name, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(st) => Some(st),
                    Err(Errno::NOENT) => None,
                    Err(x) => return Err(io_err("checking", &e.path, x)),
                };
                let staged = lock(&self.staged).contains(parent);
                match self.fate(found.as_ref(), e, staged, Some(&*dir))? {
                    Fate::SameContents | Fate::Unchanged => {
                        // Up to date: its owner, attributes, mode and
                        // time become the source's (the time too, so that
                        // a run without --checksum finds it the same).
                        self.refresh(&dir, name, e)?;
                        if let Some(slot) = self.slot(id) {
                            slot.up_to_date.store(true, Relaxed);
                        }
                        self.mark_all(id);
                        self.counters.files_skipped.fetch_add(1, Relaxed);
                        return Ok(());
                    }
                    Fate::Kept => {
                        // Left as it is, by the policy: nothing to send.
                        self.mark_all(id);
                        self.counters.files_skipped.fetch_add(1, Relaxed);
                        return Ok(());
                    }
                    Fate::Refused => {
                        return Err(ConfineError::Exists(PathBuf::from(&e.path)).into());
                    }
                    Fate::Partial => {
                        // Cut short in an earlier run of this transfer.
                        rustix::fs::unlinkat(&*dir, name, AtFlags::empty())
                            .map_err(|x| io_err("removing partial", &e.path, x))?;
                        self.note(Action::Create, &e.path, false, Itemized::new_file);
                    }
                    Fate::Create => self.note(Action::Create, &e.path, false, Itemized::new_file),
                    // Renamed over the old file once complete.
                    Fate::Replace => self.note(Action::Replace, &e.path, false, || {
                        let Some(st) = found.as_ref() else {
                            return Itemized::new_file();
                        };
                        let d = self.differs(st, e, Type::File, Some(&dir), name);
                        Itemized::changed(Came::Received, Type::File, d, None)
                    }),
                }
                self.load_journal(id, &dir, name);
                if let Some(slot) = self.slot(id)
                    && !slot.sparse
                    && !slot.resumed.load(Relaxed)
                {
                    self.reserve_space(id, slot.size)?;
                }
                if self.slot(id).is_some_and(|s| s.is_complete()) {
                    // Empty, or every block arrived before a crash.
                    self.open(id)?;
                    self.finalize(id)?;
                }
            }
        }
        Ok(())
    }

    /// Makes link entry `e` (to `target`) as the policy says, and gives it
    /// the source's modification time (rsync -a does; a link's own time is
    /// set without following it).
    fn place_symlink(&self, e: &Entry, target: &str) -> Result<(), SinkError> {
        let (parent, name) = split(&e.path);
        let dir = self.dir(parent)?;
        let create = || {
            rustix::fs::symlinkat(target, &*dir, name)
                .map_err(|x| io_err("creating link", &e.path, x))
        };
        let to = || Some(target.to_string());
        let ours = match rustix::fs::readlinkat(&*dir, name, Vec::new()) {
            Ok(t) if t.as_bytes() == target.as_bytes() => true,
            Ok(_) if self.existing.replaces() => {
                let was = rustix::fs::statat(&*dir, name, AtFlags::SYMLINK_NOFOLLOW)
                    .map_err(|x| io_err("replacing link", &e.path, x))?;
                rustix::fs::unlinkat(&*dir, name, AtFlags::empty())
                    .map_err(|x| io_err("replacing link", &e.path, x))?;
                create()?;
                self.note(Action::Replace, &e.path, false, || {
                    let d = self.differs(&was, e, Type::Link, None, name);
                    Itemized::changed(Came::Made, Type::Link, d, to())
                });
                true
            }
            Ok(_) | Err(Errno::INVAL) if self.existing == Existing::Keep => false,
            Ok(_) | Err(Errno::INVAL) => {
                return Err(ConfineError::Exists(PathBuf::from(&e.path)).into());
            }
            Err(Errno::NOENT) => {
                create()?;
                self.note(Action::Create, &e.path, false, || {
                    Itemized::created(Came::Made, Type::Link, to())
                });
                true
            }
            Err(x) => return Err(io_err("reading link", &e.path, x)),
        };
        if ours {
            self.ids
                .apply_to_link(&*dir, name, e)
                .map_err(|x| io_err("setting owner of", &e.path, x))?;
            set_time_at(&dir, name, e)?;
        }
        self.dir_changed(parent, &dir);
        self.counters.symlinks.fetch_add(1, Relaxed);
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
        if let Some(claims) = lock(&self.claims).as_mut()
            && !claims.claim(path)
        {
            return Err(SinkError::BadEntry {
                id: 0,
                flaw: EntryFlaw::DirectoryBusy(claims.full(path).into()),
            });
        }
        let hidden = stage_name(name);
        let (fd, created) = confine::dir_at(&pdir, &hidden, path)?;
        lock(&self.stages).push(Stage {
            parent: pdir,
            hidden,
            name: name.to_string(),
            path: path.to_string(),
            created,
        });
        Ok((fd, created, true))
    }

    fn mark_all(&self, id: usize) {
        if let Some(s) = self.slot(id) {
            s.mark_all();
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
            .is_ok_and(|st| st.st_size as u64 == slot.size && is_own_staging(&st));
        let mut bytes = Vec::new();
        if !temp_ok || File::from(fd).read_to_end(&mut bytes).is_err() {
            return;
        }
        let Some(done) = journal::completed_blocks(&bytes, e, self.block_len, slot.blocks) else {
            return;
        };
        let mut ranges = 0;
        for i in done {
            ranges = slot.mark(i).ranges;
        }
        if self.memory.charge(ranges as u64 * RANGE_BYTES).is_err() {
            // Too scattered to keep track of: start the file again.
            return;
        }
        slot.resumed.store(true, Relaxed);
        self.counters.files_resumed.fetch_add(1, Relaxed);
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
    pub fn accept(
        &self,
        file: u32,
        offset: u64,
        len: u32,
        hole: bool,
    ) -> Result<Accepted, RecordError> {
        let slot = self
            .slot(file as usize)
            .ok_or(RecordError::NotAFile(file))?;
        if hole && !slot.sparse {
            return Err(RecordError::HoleInDenseFile(PathBuf::from(
                &self.entry(file as usize).path,
            )));
        }
        let index = offset / u64::from(self.block_len);
        match block_span(slot.size, self.block_len, index) {
            Some((o, l)) if o == offset && l == len => {}
            _ => {
                return Err(RecordError::OffGrid {
                    offset,
                    len,
                    path: PathBuf::from(&self.entry(file as usize).path),
                    size: slot.size,
                });
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
        let sparse = self.slot(id).is_some_and(|s| s.sparse);
        if sparse && !*direct_now {
            holes::write_keeping_holes(&of.file, at, data)
        } else {
            of.file.write_all_at(data, at)
        }
        .map_err(|x| io_err("writing", &self.entry(id).path, x))?;
        self.wrote_for(t.elapsed());
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

    /// Runs `f`, counting its time as writing time (the verdict's share of
    /// the destination disk).
    fn writing<T>(&self, f: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = f();
        self.wrote_for(t.elapsed());
        out
    }

    fn wrote_for(&self, took: std::time::Duration) {
        self.counters
            .write_ns
            .fetch_add(took.as_nanos() as u64, Relaxed);
        self.writeback.wrote(took);
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
                self.writing(|| direct::flush_and_evict(&of.file, at, u64::from(len)))
                    .map_err(|x| io_err("flushing", &self.entry(id).path, x))?;
            }
            let (at, len) = block_span(slot.size, self.block_len, index)
                .map_or((0, 0), |(at, l)| (at, u64::from(l)));
            if self.on_disk && !self.cache.evict {
                // Evicting flushed it already; else the disk starts now,
                // not at the batch's sync.
                let _ = direct::start_writeback(&of.file, at, len);
                if !self.durable {
                    self.drop_written_behind(&of.file, at, len);
                }
            }
            self.journal_block(id, &of, index, len)?;
        }
        let marked = slot.mark(index);
        if marked.grew && marked.ranges > 1 {
            self.memory.charge(RANGE_BYTES)?;
        }
        if marked.fresh && marked.complete {
            self.finalize(id)?;
        }
        Ok(())
    }

    /// The open temporary file of `id`, created on first use.
    fn open(&self, id: usize) -> Result<Arc<OpenFile>, SinkError> {
        let slot = self.slot(id).ok_or(SinkError::BadEntry {
            id: id as u32,
            flaw: EntryFlaw::NotAFile,
        })?;
        let mut guard = lock(&slot.open);
        if let Some(of) = guard.as_ref() {
            return Ok(Arc::clone(of));
        }
        let e = self.entry(id);
        let (parent, name) = split(&e.path);
        let dir = self.dir(parent)?;
        let resumed = slot.resumed.load(Relaxed);
        let staging = |n: String, flags: OFlags| open_staging(&dir, &n, flags, resumed);
        let file =
            staging(temp_name(name), OFlags::WRONLY).map_err(|x| io_err("creating", &e.path, x))?;
        let mut reserved = false;
        if !resumed && slot.size > 0 {
            // Reserve the space up front (a full disk fails here, not midway);
            // a sparse source keeps its holes.
            // A one-block file is written whole at once: nothing to reserve.
            reserved = if slot.sparse || slot.blocks == 1 {
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
            let mut j = staging(journal_name(name), OFlags::WRONLY | OFlags::APPEND)
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
            reserved,
            created: !resumed,
            unsynced: Mutex::default(),
        });
        *guard = Some(Arc::clone(&of));
        Ok(of)
    }

    /// The sender's include/exclude rules.
    pub fn protected(&self) -> &Filter {
        &self.protected
    }

    /// Gives the up-to-date file `name` in `dir` the owner, attributes,
    /// mode and time of entry `e`, as a file written now gets them.
    pub(super) fn refresh(&self, dir: &OwnedFd, name: &str, e: &Entry) -> Result<(), SinkError> {
        let fd = rustix::fs::openat2(
            dir,
            name,
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
            RESOLVE,
        )
        .map_err(|x| io_err("opening", &e.path, x))?;
        if self.list_changes
            && let Ok(st) = rustix::fs::fstat(&fd)
        {
            lock(&self.refreshed)
                .entry((st.st_dev, st.st_ino))
                .or_insert(st);
        }
        // Owner first: a change of owner clears setuid bits.
        self.ids
            .apply(fd.as_fd(), e)
            .map_err(|x| io_err("setting owner or attributes of", &e.path, x))?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(self.mode_of(e)))
            .map_err(|x| io_err("setting mode of", &e.path, x))?;
        rustix::fs::futimens(&fd, &timestamps(e.mtime_ns))
            .map_err(|x| io_err("setting time of", &e.path, x))
    }

    /// `st` as it was before this run set its attributes in place.
    pub(super) fn as_found(&self, st: rustix::fs::Stat) -> rustix::fs::Stat {
        lock(&self.refreshed)
            .get(&(st.st_dev, st.st_ino))
            .copied()
            .unwrap_or(st)
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
            self.sync_and_drop(&of.file, &e.path)?;
            // Owner first: a change of owner clears setuid bits.
            self.ids
                .apply(of.file.as_fd(), e)
                .map_err(|x| io_err("setting owner or attributes of", &e.path, x))?;
            rustix::fs::fchmod(of.file.as_fd(), Mode::from_raw_mode(self.mode_of(e)))
                .map_err(|x| io_err("setting mode of", &e.path, x))?;
            rustix::fs::futimens(of.file.as_fd(), &timestamps(e.mtime_ns))
                .map_err(|x| io_err("setting time of", &e.path, x))?;
        }
        let flags = if self.existing.replaces() {
            RenameFlags::empty()
        } else {
            RenameFlags::NOREPLACE
        };
        rustix::fs::renameat_with(&*dir, temp_name(name), &*dir, name, flags).map_err(|x| {
            if x == Errno::EXIST {
                SinkError::Confine(ConfineError::Exists(PathBuf::from(&e.path)))
            } else {
                io_err("renaming into place", &e.path, x)
            }
        })?;
        self.dir_changed(parent, &dir);
        if slot.blocks > 1 {
            let _ = rustix::fs::unlinkat(&*dir, journal_name(name), AtFlags::empty());
        }
        self.counters.files_written.fetch_add(1, Relaxed);
        Ok(())
    }

    /// Renames the stages into place, then sets directory modes and times,
    /// deepest first (writing into a directory changes its time), then
    /// syncs every directory that gained a name.
    pub fn finish_dirs(&self, delete: Option<&Filter>) -> Result<(), SinkError> {
        if self.root.is_none() {
            return Ok(());
        }
        if self.dry_run {
            return delete.map_or(Ok(()), |kept| self.delete_extraneous(kept));
        }
        self.sync_stages()?;
        for st in lock(&self.stages).drain(..) {
            rustix::fs::renameat_with(
                &*st.parent,
                &st.hidden,
                &*st.parent,
                &st.name,
                RenameFlags::NOREPLACE,
            )
            .map_err(|x| match x {
                Errno::EXIST => ConfineError::Exists(PathBuf::from(&st.path)).into(),
                x => io_err("renaming into place", &st.path, x),
            })?;
            self.dir_changed(split(&st.path).0, &st.parent);
        }
        // Second names and deletions change directories: before their
        // times are set.
        self.make_hard_links()?;
        if let Some(kept) = delete {
            self.delete_extraneous(kept)?;
        }
        let dirs: Vec<&Entry> = self
            .items
            .iter()
            .map(|(_, i)| &i.entry)
            .filter(|e| matches!(e.kind, EntryKind::Dir))
            .filter(|e| !(self.keep_top && e.path == TOP_PATH))
            .collect();
        for e in dirs.into_iter().rev() {
            let fd = self.open_beneath(&e.path, OFlags::RDONLY | OFlags::DIRECTORY, "opening")?;
            self.ids
                .apply(&fd, e)
                .map_err(|x| io_err("setting owner or attributes of", &e.path, x))?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(self.mode_of(e)))
                .map_err(|x| io_err("setting mode of", &e.path, x))?;
            rustix::fs::futimens(&fd, &timestamps(e.mtime_ns))
                .map_err(|x| io_err("setting time of", &e.path, x))?;
        }
        self.sync_dirs()
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
            let digest =
                content_digest(File::from(fd)).map_err(|x| io_err("reading back", &e.path, x))?;
            out.push((id as u32, digest));
        }
        Ok(out)
    }

    /// Notes what the first pass asked for of one batch of the listing.
    pub fn asked(&self, files: u64, bytes: u64) {
        self.counters.files_asked.fetch_add(files, Relaxed);
        self.counters.bytes_asked.fetch_add(bytes, Relaxed);
    }

    /// Stops the work a sender asked for once it has hung up: comparing
    /// a frame's files by contents, or deleting, can take minutes.
    pub(super) fn check_peer(&self) -> Result<(), SinkError> {
        match &self.peer {
            Some(p) if p.gone() => Err(SinkError::PeerGone),
            _ => Ok(()),
        }
    }

    /// Notes that the whole listing has been answered.
    pub fn listed(&self) {
        self.counters.listed.store(true, Relaxed);
    }

    /// What the first pass asked for so far.
    pub fn asked_so_far(&self) -> Asked {
        let c = &self.counters;
        Asked {
            files: c.files_asked.load(Relaxed),
            bytes: c.bytes_asked.load(Relaxed),
            listed: c.listed.load(Relaxed),
        }
    }

    pub fn totals(&self) -> TransferTotals {
        let c = &self.counters;
        let seen = self.writeback.seen();
        TransferTotals {
            files_written: c.files_written.load(Relaxed),
            files_skipped: c.files_skipped.load(Relaxed),
            files_resumed: c.files_resumed.load(Relaxed),
            dirs: c.dirs.load(Relaxed),
            symlinks: c.symlinks.load(Relaxed),
            bytes_written: c.bytes_written.load(Relaxed),
            bytes_written_direct: c.bytes_written_direct.load(Relaxed),
            blocks_rejected: c.blocks_rejected.load(Relaxed),
            write_seconds: c.write_ns.load(Relaxed) as f64 / 1e9,
            dest_in_memory: self.root.as_ref().is_some_and(DestRoot::in_memory),
            io_stalled_seconds: seen.io_stalled_seconds,
            dirty_peak_bytes: seen.dirty_peak_bytes,
            blocked_writes: seen.blocked_writes,
            owners_kept: self.ids.keeps_owners(),
            created: c.created.load(Relaxed),
            replaced: c.replaced.load(Relaxed),
            deleted: c.deleted.load(Relaxed),
            // Taken once, for the report: see `take_changes`.
            changes: Vec::new(),
        }
    }
}
