//! Durability: what the receiver syncs, and in which order, so that a host
//! that crashes after a transfer said "complete" loses nothing, and one
//! that crashes midway resumes only from blocks that are really on disk.
//!
//! - A block enters the resume journal only after the file's data was
//!   synced (fdatasync) past it. Blocks are journaled in batches of
//!   [`SYNC_BATCH_BYTES`], so a large file pays one sync per batch, not one
//!   per block; a block lost from an unsynced batch is only sent again.
//!   A thread of its own (the [`Syncer`]) syncs the batches, so streams
//!   go on receiving while the disk catches up.
//! - A file's data is synced before it is renamed (or linked) into place;
//!   whole small files inside a new directory's stage, by one sync of the
//!   file system before the stages are renamed (one journal commit instead
//!   of one per file).
//! - Every directory that gained a name is synced before the receiver
//!   reports the transfer complete.
//! - Synced data leaves the page cache (as WDT's receiver does after each
//!   block): its pages go back to the allocator while they are still
//!   backed, and the next blocks are written into them instead of into
//!   fresh memory, which costs more than the copy on a VM whose balloon
//!   reports free pages (docs/defaults.md#synced-data-leaves-the-cache).
//!
//! `--no-fsync` turns all of it off, for scratch data. The cost is measured
//! in docs/defaults.md#durability. Scratch data on a disk still has its
//! writeback started as each block is written, and what lies
//! [`WRITTEN_BEHIND`] before the block just written leaves the cache once
//! the kernel wrote it: nothing waits, and the writes still land in memory
//! just freed.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use rustix::fs::{Mode, OFlags};

use std::sync::Mutex;
use std::sync::mpsc::{self, SyncSender};
use std::thread::JoinHandle;

use super::slot::OpenFile;
use super::{Sink, SinkError, io_err, lock};
use crate::direct;

/// Bytes of a file written between two syncs that journal its blocks.
pub(super) const SYNC_BATCH_BYTES: u64 = 64 << 20;

/// Without syncs, how far behind the block just written a block of the
/// same file is dropped from the cache: by then its writeback, started
/// when it was written, has most likely ended (pages still dirty or under
/// writeback stay).
const WRITTEN_BEHIND: u64 = 2 * SYNC_BATCH_BYTES;

/// Batches of a file's blocks queued for the syncer at most, besides the
/// one it syncs: a stream that gets further ahead of the disk waits.
const SYNC_QUEUE: usize = 2;

/// Blocks of one file written since its last sync, handed to the syncer.
struct SyncJob {
    of: Arc<OpenFile>,
    blocks: Vec<u64>,
    path: String,
}

/// Syncs batches of blocks, drops them from the cache and journals them
/// on a thread of its own, so a stream goes on receiving while the disk
/// catches up, as WDT's background `sync_file_range` does
/// (docs/defaults.md#synced-data-leaves-the-cache).
pub(super) struct Syncer {
    jobs: Option<SyncSender<SyncJob>>,
    thread: Option<JoinHandle<()>>,
    /// The first batch that failed to sync; the next block reports it.
    failed: Arc<Mutex<Option<SinkError>>>,
}

impl Syncer {
    pub(super) fn start(block_len: u32) -> std::io::Result<Syncer> {
        let (jobs, queue) = mpsc::sync_channel::<SyncJob>(SYNC_QUEUE);
        let failed = Arc::new(Mutex::new(None));
        let first_error = Arc::clone(&failed);
        let thread = std::thread::Builder::new()
            .name("syncer".into())
            .spawn(move || {
                for job in queue {
                    if let Err(e) = sync_batch(&job.of, &job.blocks, block_len, &job.path) {
                        lock(&first_error).get_or_insert(e);
                    }
                }
            })?;
        Ok(Syncer {
            jobs: Some(jobs),
            thread: Some(thread),
            failed,
        })
    }
}

impl Drop for Syncer {
    /// Finishes the queued batches, so their blocks are journaled before
    /// the receiver's process can end.
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// Syncs a file's data, drops `blocks` from the cache, then journals them.
fn sync_batch(of: &OpenFile, blocks: &[u64], block_len: u32, path: &str) -> Result<(), SinkError> {
    let Some(mut journal) = of.journal.as_ref() else {
        return Ok(());
    };
    rustix::fs::fdatasync(&of.file).map_err(|x| io_err("syncing", path, x))?;
    let block_len = u64::from(block_len);
    for &b in blocks {
        direct::evict(&of.file, b * block_len, block_len);
    }
    let record: Vec<u8> = blocks.iter().flat_map(|b| b.to_le_bytes()).collect();
    journal
        .write_all(&record)
        .map_err(|x| io_err("journaling", path, x))
}

impl Sink {
    /// Records block `index` (`len` bytes) of file `id` as done in its
    /// journal: at once when nothing is synced, else once the file's data
    /// has been synced past it.
    pub(super) fn journal_block(
        &self,
        id: usize,
        of: &Arc<OpenFile>,
        index: u64,
        len: u64,
    ) -> Result<(), SinkError> {
        let Some(mut journal) = of.journal.as_ref() else {
            return Ok(());
        };
        let path = &self.entry(id).path;
        if !self.durable {
            return journal
                .write_all(&index.to_le_bytes())
                .map_err(|x| io_err("journaling", path, x));
        }
        let blocks = {
            let mut unsynced = lock(&of.unsynced);
            unsynced.blocks.push(index);
            unsynced.bytes += len;
            if unsynced.bytes < SYNC_BATCH_BYTES {
                return Ok(());
            }
            unsynced.bytes = 0;
            std::mem::take(&mut unsynced.blocks)
        };
        let Some(syncer) = self.syncer.as_ref() else {
            return sync_batch(of, &blocks, self.block_len, path);
        };
        if let Some(e) = lock(&syncer.failed).take() {
            return Err(e);
        }
        let job = SyncJob {
            of: Arc::clone(of),
            blocks,
            path: path.clone(),
        };
        // Waiting for the syncer is waiting for the disk: writing time.
        let queued = self.writing(|| syncer.jobs.as_ref().map(|j| j.send(job)));
        match queued {
            Some(Ok(())) => Ok(()),
            _ => Err(io_err(
                "syncing",
                path,
                std::io::Error::other("the syncer stopped"),
            )),
        }
    }

    /// Scratch data (`--no-fsync`) on a disk: drops the span of `len`
    /// bytes [`WRITTEN_BEHIND`] before `at` where the kernel wrote it.
    pub(super) fn drop_written_behind(&self, file: &File, at: u64, len: u64) {
        if let Some(behind) = at.checked_sub(WRITTEN_BEHIND) {
            direct::evict(file, behind, len);
        }
    }

    /// Journals the blocks of a transfer cut short that wait for a sync,
    /// after syncing them: the rerun resumes from them instead of sending
    /// them again.
    pub(super) fn journal_unsynced(&self, of: &OpenFile, path: &str) -> Result<(), SinkError> {
        let blocks = {
            let mut unsynced = lock(&of.unsynced);
            if !self.durable || unsynced.blocks.is_empty() {
                return Ok(());
            }
            unsynced.bytes = 0;
            std::mem::take(&mut unsynced.blocks)
        };
        self.writing(|| sync_batch(of, &blocks, self.block_len, path))
    }

    /// Syncs a file's data (not its times: those go with the rename's
    /// directory sync) before it takes its final name; the wait counts as
    /// writing time, which the verdict weighs.
    pub(super) fn sync_data(&self, file: &File, path: &str) -> Result<(), SinkError> {
        if !self.durable {
            return Ok(());
        }
        self.writing(|| rustix::fs::fdatasync(file))
            .map_err(|x| io_err("syncing", path, x))
    }

    /// Syncs a complete file's data, then drops it from the page cache.
    pub(super) fn sync_and_drop(&self, file: &File, path: &str) -> Result<(), SinkError> {
        self.sync_data(file, path)?;
        if self.durable {
            direct::evict(file, 0, 0);
        }
        Ok(())
    }

    /// Notes that a file was written inside a stage without its own sync.
    pub(super) fn staged_unsynced(&self) {
        if self.durable {
            self.stage_unsynced.store(true, Relaxed);
        }
    }

    /// Syncs the destination's file system if a stage holds files written
    /// without their own sync: before the stages are renamed into place.
    pub(super) fn sync_stages(&self) -> Result<(), SinkError> {
        if !self.stage_unsynced.swap(false, Relaxed) {
            return Ok(());
        }
        let Some(root) = self.root.as_ref() else {
            return Ok(());
        };
        self.writing(|| readable(root.fd()).and_then(|d| rustix::fs::syncfs(&d)))
            .map_err(|x| io_err("syncing the file system of", "", x))
    }

    /// Notes that `dir` (at `path`) gained a name to sync before the end.
    pub(super) fn dir_changed(&self, path: &str, dir: &Arc<OwnedFd>) {
        if !self.durable {
            return;
        }
        // Called for every file: the path is copied only the first time.
        let mut dirs = lock(&self.changed_dirs);
        if !dirs.contains_key(path) {
            dirs.insert(path.to_string(), Arc::clone(dir));
        }
    }

    /// Syncs every directory that gained a name, so each rename and link
    /// of this transfer survives a crash once it is reported complete.
    pub(super) fn sync_dirs(&self) -> Result<(), SinkError> {
        let dirs: BTreeMap<String, Arc<OwnedFd>> = std::mem::take(&mut *lock(&self.changed_dirs));
        self.writing(|| {
            dirs.iter().try_for_each(|(path, dir)| {
                readable(dir)
                    .and_then(|d| rustix::fs::fsync(&d))
                    .map_err(|x| io_err("syncing directory", path, x))
            })
        })
    }
}

/// A directory held as O_PATH (which fsync and syncfs refuse), opened
/// again to read.
fn readable(dir: &OwnedFd) -> rustix::io::Result<OwnedFd> {
    rustix::fs::openat(
        dir,
        ".",
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
}
