//! What the receiver knows of one file: which blocks have arrived (a bitmap
//! that several streams mark at once) and its open temporary file.

use std::fs::File;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use crate::transfer::grid::block_count;

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
}

/// One file of the manifest, as the receiver tracks it.
pub(super) struct FileSlot {
    pub size: u64,
    pub blocks: u64,
    pub sparse: bool,
    done_bits: Vec<AtomicU64>,
    pub done: AtomicU64,
    /// Blocks already in the temporary file from an earlier run.
    pub resumed: AtomicBool,
    /// Its directory was created by this run inside a stage: the file can
    /// be created under its own name, nothing can be in the way.
    pub in_fresh_dir: AtomicBool,
    pub finished: AtomicBool,
    pub open: Mutex<Option<Arc<OpenFile>>>,
}

impl FileSlot {
    pub fn new(size: u64, block_len: u32, sparse: bool) -> FileSlot {
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
    pub fn mark(&self, i: u64) -> bool {
        // The bitmap's last word has room past the last block.
        if i >= self.blocks {
            return false;
        }
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

    pub fn is_done(&self, i: u64) -> bool {
        self.done_bits
            .get((i / 64) as usize)
            .is_some_and(|w| w.load(Relaxed) & (1 << (i % 64)) != 0)
    }

    pub fn missing(&self) -> Vec<[u64; 2]> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_each_block_once_and_lists_what_is_missing_as_ranges() {
        // 130 blocks: three words of the bitmap.
        let slot = FileSlot::new(130 * 4096 - 1, 4096, false);
        assert_eq!(slot.blocks, 130);
        assert_eq!(slot.missing(), vec![[0, 130]]);
        for i in [0, 1, 2, 64, 129] {
            assert!(slot.mark(i));
        }
        assert!(!slot.mark(64), "a second mark is not a new block");
        assert!(!slot.mark(130), "past the end");
        assert_eq!(slot.done.load(Relaxed), 5);
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
