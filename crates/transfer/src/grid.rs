//! The block grid both ends agree on: block `i` of a file covers
//! `[i * block_len, min((i + 1) * block_len, size))`.

/// Blocks of `block_len` bytes that cover a file of `size` bytes.
pub fn block_count(size: u64, block_len: u32) -> u64 {
    size.div_ceil(u64::from(block_len.max(1)))
}

/// Offset and length of block `index`, or None past the end of the file.
pub fn block_span(size: u64, block_len: u32, index: u64) -> Option<(u64, u32)> {
    let bl = u64::from(block_len.max(1));
    let offset = index.checked_mul(bl)?;
    if offset >= size {
        return None;
    }
    Some((offset, (size - offset).min(bl) as u32))
}

/// Bytes of a file of `size` in the block ranges `[a, b)`, in constant
/// time per range: a range may span billions of blocks.
pub fn ranges_bytes(ranges: &[[u64; 2]], block_len: u32, size: u64) -> u64 {
    let bl = u64::from(block_len);
    ranges
        .iter()
        .map(|&[a, b]| {
            let end = b.saturating_mul(bl).min(size);
            end - a.saturating_mul(bl).min(end)
        })
        .sum()
}

/// The per-block checksum carried after every block's payload: XXH3-64,
/// seed 0.
pub fn checksum(data: &[u8]) -> u64 {
    twox_hash::XxHash3_64::oneshot(data)
}

/// The same checksum, over a block that arrives or leaves in pieces.
/// twox-hash picks AVX2 at run time, where xxhash-rust is fixed at build
/// time to SSE2: 56 against 25 GB/s on this project's build machine, and
/// the receiver of a transfer spends a quarter of its time hashing.
#[derive(Default)]
pub struct BlockHasher(twox_hash::XxHash3_64);

impl BlockHasher {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn update(&mut self, data: &[u8]) {
        std::hash::Hasher::write(&mut self.0, data);
    }

    pub fn digest(&self) -> u64 {
        std::hash::Hasher::finish(&self.0)
    }
}

/// What trails a block, built up piece by piece at either end: its
/// checksum, or, with checksums off, 0 for a block the sender read whole
/// and anything else for one it could not.
pub struct BlockCheck(Option<BlockHasher>);

impl BlockCheck {
    pub fn new(checksum: bool) -> Self {
        BlockCheck(checksum.then(BlockHasher::new))
    }

    /// The trailer of a whole block held in one slice.
    pub fn of(with_checksum: bool, data: &[u8]) -> u64 {
        if with_checksum { checksum(data) } else { 0 }
    }

    pub fn update(&mut self, data: &[u8]) {
        if let Some(h) = &mut self.0 {
            h.update(data);
        }
    }

    /// The trailer to send; a `broken` block's can never be accepted.
    pub fn trailer(&self, broken: bool) -> u64 {
        match &self.0 {
            Some(h) if broken => !h.digest(),
            Some(h) => h.digest(),
            None => u64::from(broken),
        }
    }

    /// Whether a received block with this trailer is whole.
    pub fn accepts(&self, trailer: u64) -> bool {
        self.trailer(false) == trailer
    }
}

/// A block moves through memory in pieces of this size: each is hashed,
/// written and sent while it is still in the core's cache.
pub const PIECE: usize = 256 << 10;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_broken_block_is_refused_with_checksums_on_and_off() {
        for on in [true, false] {
            let (mut sent, mut got) = (BlockCheck::new(on), BlockCheck::new(on));
            sent.update(b"piece one");
            got.update(b"piece one");
            assert!(got.accepts(sent.trailer(false)));
            assert!(!got.accepts(sent.trailer(true)));
        }
        let (mut sent, mut got) = (BlockCheck::new(true), BlockCheck::new(true));
        sent.update(b"as sent");
        got.update(b"as read");
        assert!(
            !got.accepts(sent.trailer(false)),
            "a corrupted block fails its checksum"
        );
    }

    #[test]
    fn grid_covers_the_file_exactly() {
        for (size, bl) in [(0u64, 4u32), (1, 4), (4, 4), (5, 4), (4097, 1024)] {
            let n = block_count(size, bl);
            let total: u64 = (0..n)
                .map(|i| u64::from(block_span(size, bl, i).unwrap().1))
                .sum();
            assert_eq!(total, size);
            assert!(block_span(size, bl, n).is_none());
        }
        assert!(block_span(u64::MAX, 1 << 20, u64::MAX).is_none());
    }
}
