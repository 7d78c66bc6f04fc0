//! What the receiver knows of one file: which blocks have arrived (ranges
//! that several streams mark at once) and its open temporary file.

use linerate_engine::lock;
use std::fs::File;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use super::ranges::DoneRanges;
use crate::grid::block_count;

/// A file's temporary file and resume journal, open while its blocks arrive.
pub(super) struct OpenFile {
    pub file: File,
    pub journal: Option<File>,
    /// One writer at a time: the kernel serializes writers of an inode
    /// anyway, and its lock spins where this one sleeps. Holds whether
    /// O_DIRECT is set on `file` now (cleared for unaligned writes).
    pub writer: Mutex<bool>,
    /// The file system accepted O_DIRECT for this file.
    pub direct_ok: bool,
    /// Space for the whole file was reserved (fallocate): what never
    /// arrives is given back if the transfer is abandoned.
    pub reserved: bool,
    /// Created by this session (not resumed from an earlier run's).
    pub created: bool,
    /// Blocks written since the data was last synced, not yet journaled.
    pub unsynced: Mutex<Unsynced>,
}

/// Blocks written since the file's data was last synced.
#[derive(Default)]
pub(super) struct Unsynced {
    pub blocks: Vec<u64>,
    pub bytes: u64,
}

/// One file of the manifest, as the receiver tracks it.
pub(super) struct FileSlot {
    pub size: u64,
    pub blocks: u64,
    pub sparse: bool,
    done: Mutex<DoneRanges>,
    /// Blocks already in the temporary file from an earlier run.
    pub resumed: AtomicBool,
    /// The destination held this file up to date: nothing was written.
    pub up_to_date: AtomicBool,
    /// Its directory was created by this run inside a stage: the file can
    /// be created under its own name, nothing can be in the way.
    pub in_fresh_dir: AtomicBool,
    pub finished: AtomicBool,
    pub open: Mutex<Option<Arc<OpenFile>>>,
}

/// What marking a block did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Marked {
    /// The block was not marked before.
    pub fresh: bool,
    /// Every block of the file is now marked.
    pub complete: bool,
    /// Ranges held after the mark (the bookkeeping's cost).
    pub ranges: usize,
    /// The mark started a range of its own (it touched no other).
    pub grew: bool,
}

impl FileSlot {
    pub fn new(size: u64, block_len: u32, sparse: bool) -> FileSlot {
        FileSlot {
            size,
            blocks: block_count(size, block_len),
            sparse,
            done: Mutex::default(),
            resumed: AtomicBool::new(false),
            up_to_date: AtomicBool::new(false),
            in_fresh_dir: AtomicBool::new(false),
            finished: AtomicBool::new(false),
            open: Mutex::new(None),
        }
    }

    /// Marks block `i` done (nothing past the last block).
    pub fn mark(&self, i: u64) -> Marked {
        let mut done = lock(&self.done);
        let before = done.len();
        let fresh = i < self.blocks && done.mark(i);
        Marked {
            fresh,
            complete: done.count() == self.blocks,
            ranges: done.len(),
            grew: done.len() > before,
        }
    }

    pub fn mark_all(&self) {
        lock(&self.done).mark_all(self.blocks);
    }

    pub fn is_done(&self, i: u64) -> bool {
        lock(&self.done).contains(i)
    }

    pub fn is_complete(&self) -> bool {
        lock(&self.done).count() == self.blocks
    }

    /// Blocks marked so far.
    pub fn done_count(&self) -> u64 {
        lock(&self.done).count()
    }

    pub fn missing(&self) -> Vec<[u64; 2]> {
        lock(&self.done).missing(self.blocks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_each_block_once_and_lists_what_is_missing_as_ranges() {
        // 130 blocks, marked out of order.
        let slot = FileSlot::new(130 * 4096 - 1, 4096, false);
        assert_eq!(slot.blocks, 130);
        assert_eq!(slot.missing(), vec![[0, 130]]);
        for i in [0, 1, 2, 64, 129] {
            assert!(slot.mark(i).fresh);
        }
        assert!(!slot.mark(64).fresh, "a second mark is not a new block");
        assert!(!slot.mark(130).fresh, "past the end");
        assert_eq!(slot.done_count(), 5);
        assert!(slot.is_done(129) && !slot.is_done(128) && !slot.is_done(1000));
        assert_eq!(slot.missing(), vec![[3, 64], [65, 129]]);
    }

    #[test]
    fn an_empty_file_has_no_blocks_to_ask_for() {
        let slot = FileSlot::new(0, 4096, false);
        assert_eq!(slot.blocks, 0);
        assert!(slot.missing().is_empty());
    }
}
