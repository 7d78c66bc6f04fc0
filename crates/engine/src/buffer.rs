//! Page-aligned buffers for the data path.
//!
//! The kernel copies between a socket and user memory fastest when the
//! user side starts on a page (docs/defaults.md#page-aligned-buffers): an
//! allocator's address moves with everything the process allocated
//! before, so a buffer of the same size can start 16 bytes past a page in
//! one build or session and anywhere in the next. Direct I/O needs the
//! same alignment.

use std::ops::{Deref, DerefMut};

/// Alignment of every data-path buffer: a page.
pub const PAGE: usize = 4096;

/// A zeroed buffer of a fixed length whose first byte starts a page (the
/// default one is empty and holds no memory).
#[derive(Default)]
pub struct AlignedBuf {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl AlignedBuf {
    /// `len` zero bytes, the first on a page boundary.
    pub fn new(len: usize) -> AlignedBuf {
        let raw = vec![0u8; len + PAGE];
        let start = raw.as_ptr().align_offset(PAGE).min(PAGE);
        AlignedBuf { raw, start, len }
    }

    /// The bytes of `fill`, copied into a page-aligned buffer.
    pub fn from_slice(fill: &[u8]) -> AlignedBuf {
        let mut b = AlignedBuf::new(fill.len());
        b.copy_from_slice(fill);
        b
    }
}

impl Deref for AlignedBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }
}

impl DerefMut for AlignedBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.raw[self.start..self.start + self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_buffer_starts_a_page_and_has_its_length() {
        for len in [0, 1, 4095, 4096, 128 << 10, (1 << 20) + 3] {
            let mut b = AlignedBuf::new(len);
            assert_eq!(b.as_ptr().addr() % PAGE, 0, "{len}");
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == 0));
            b.fill(7);
            assert_eq!(AlignedBuf::from_slice(&b)[..], b[..]);
        }
    }
}
