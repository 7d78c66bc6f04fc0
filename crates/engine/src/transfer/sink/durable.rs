//! Durability: what the receiver syncs, and in which order, so that a host
//! that crashes after a transfer said "complete" loses nothing, and one
//! that crashes midway resumes only from blocks that are really on disk.
//!
//! - A block enters the resume journal only after the file's data was
//!   synced (fdatasync) past it. Blocks are journaled in batches of
//!   [`SYNC_BATCH_BYTES`], so a large file pays one sync per batch, not one
//!   per block; a block lost from an unsynced batch is only sent again.
//! - A file's data is synced before it is renamed (or linked) into place;
//!   whole small files inside a new directory's stage, by one sync of the
//!   file system before the stages are renamed (one journal commit instead
//!   of one per file).
//! - Every directory that gained a name is synced before the receiver
//!   reports the transfer complete.
//!
//! `--no-fsync` turns all of it off, for scratch data. The cost is measured
//! in docs/defaults.md#durability.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::Write;
use std::os::fd::OwnedFd;
use std::sync::Arc;
use std::sync::atomic::Ordering::Relaxed;

use rustix::fs::{Mode, OFlags};

use super::slot::{OpenFile, Unsynced};
use super::{Sink, SinkError, io_err, lock};

/// Bytes of a file written between two syncs that journal its blocks.
pub(super) const SYNC_BATCH_BYTES: u64 = 64 << 20;

impl Sink {
    /// Records block `index` (`len` bytes) of file `id` as done in its
    /// journal: at once when nothing is synced, else once the file's data
    /// has been synced past it.
    pub(super) fn journal_block(
        &self,
        id: usize,
        of: &OpenFile,
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
        let mut unsynced = lock(&of.unsynced);
        unsynced.blocks.push(index);
        unsynced.bytes += len;
        if unsynced.bytes < SYNC_BATCH_BYTES {
            return Ok(());
        }
        self.sync_and_journal(of, &mut unsynced, path)
    }

    /// Journals the blocks of a transfer cut short that wait for a sync,
    /// after syncing them: the rerun resumes from them instead of sending
    /// them again.
    pub(super) fn journal_unsynced(&self, of: &OpenFile, path: &str) -> Result<(), SinkError> {
        let mut unsynced = lock(&of.unsynced);
        if !self.durable || unsynced.blocks.is_empty() {
            return Ok(());
        }
        self.sync_and_journal(of, &mut unsynced, path)
    }

    fn sync_and_journal(
        &self,
        of: &OpenFile,
        unsynced: &mut Unsynced,
        path: &str,
    ) -> Result<(), SinkError> {
        let Some(mut journal) = of.journal.as_ref() else {
            return Ok(());
        };
        self.sync_data(&of.file, path)?;
        let record: Vec<u8> = unsynced
            .blocks
            .drain(..)
            .flat_map(|b| b.to_le_bytes())
            .collect();
        unsynced.bytes = 0;
        journal
            .write_all(&record)
            .map_err(|x| io_err("journaling", path, x))
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
