//! The resume journal beside a file being received: a header naming the
//! source file (size, mtime) and the block size, then the index of every
//! block written and checked, 8 bytes each, appended as they complete.

use linerate_wire::Entry;

const JOURNAL_MAGIC: &[u8; 4] = b"LRJ1";
pub(super) const JOURNAL_HEADER_LEN: usize = 24;

/// The header that ties a journal to one source file (size and mtime) and
/// block size: a journal of anything else is not taken.
pub(super) fn journal_header(e: &Entry, block_len: u32) -> [u8; JOURNAL_HEADER_LEN] {
    let mut h = [0u8; JOURNAL_HEADER_LEN];
    h[..4].copy_from_slice(JOURNAL_MAGIC);
    h[4..12].copy_from_slice(&e.size().to_le_bytes());
    h[12..20].copy_from_slice(&e.mtime_ns.to_le_bytes());
    h[20..24].copy_from_slice(&block_len.to_le_bytes());
    h
}

/// The block indexes a journal records, below `blocks`; None when its
/// header does not describe this source file and block size. The journal is
/// read back from the destination, where anything may have been written.
pub fn completed_blocks(bytes: &[u8], e: &Entry, block_len: u32, blocks: u64) -> Option<Vec<u64>> {
    if bytes.get(..JOURNAL_HEADER_LEN)? != journal_header(e, block_len) {
        return None;
    }
    Some(
        bytes[JOURNAL_HEADER_LEN..]
            .chunks_exact(8)
            .filter_map(|rec| rec.try_into().ok().map(u64::from_le_bytes))
            .filter(|&i| i < blocks)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn file(size: u64, mtime_ns: i64) -> Entry {
        Entry {
            mtime_ns,
            ..Entry::file("a/b", size)
        }
    }

    fn journal(e: &Entry, block_len: u32, done: &[u64]) -> Vec<u8> {
        let mut j = journal_header(e, block_len).to_vec();
        done.iter().for_each(|i| j.extend(i.to_le_bytes()));
        j
    }

    #[test]
    fn reads_back_what_was_journaled_for_the_same_source() {
        let e = file(100 << 20, 7);
        let j = journal(&e, 8 << 20, &[3, 0, 12]);
        assert_eq!(completed_blocks(&j, &e, 8 << 20, 13), Some(vec![3, 0, 12]));
        // A record cut short by a crash is left out.
        assert_eq!(
            completed_blocks(&j[..j.len() - 3], &e, 8 << 20, 13),
            Some(vec![3, 0])
        );
        // Indexes past the file's blocks are not taken.
        assert_eq!(completed_blocks(&j, &e, 8 << 20, 12), Some(vec![3, 0]));
    }

    #[test]
    fn refuses_a_journal_of_another_source_or_block_size() {
        let e = file(100 << 20, 7);
        let j = journal(&e, 8 << 20, &[1]);
        assert_eq!(completed_blocks(&j, &file(100 << 20, 8), 8 << 20, 13), None);
        assert_eq!(completed_blocks(&j, &file(99 << 20, 7), 8 << 20, 13), None);
        assert_eq!(completed_blocks(&j, &e, 4 << 20, 25), None);
        assert_eq!(completed_blocks(&j[..10], &e, 8 << 20, 13), None);
        assert_eq!(completed_blocks(b"", &e, 8 << 20, 13), None);
    }

    proptest! {
        #[test]
        fn any_bytes_give_indexes_below_the_block_count(
            bytes in proptest::collection::vec(any::<u8>(), 0..200),
            blocks in 0u64..1000,
        ) {
            let e = file(1 << 30, 0);
            let mut j = journal_header(&e, 1 << 20).to_vec();
            j.extend(&bytes);
            let got = completed_blocks(&j, &e, 1 << 20, blocks).unwrap();
            prop_assert!(got.iter().all(|&i| i < blocks));
            prop_assert!(got.len() <= bytes.len() / 8);
            // Garbage in front of a header is never taken for one.
            prop_assert!(completed_blocks(&bytes, &e, 1 << 20, blocks).is_none()
                || bytes.starts_with(&journal_header(&e, 1 << 20)));
        }
    }
}
