//! The resume journal reader on arbitrary bytes, as found beside a partial
//! file at the destination: never panics, and every block it takes lies
//! inside the file. The source file is read from the bytes where a header
//! would name it, so a header that matches is found and the records behind
//! it are exercised.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_transfer::{block_count, journaled_blocks};
use linerate_wire::Entry;

fn le<const N: usize>(data: &[u8], at: usize) -> [u8; N] {
    let mut b = [0u8; N];
    if let Some(s) = data.get(at..at + N) {
        b.copy_from_slice(s);
    }
    b
}

fuzz_target!(|data: &[u8]| {
    let size = u64::from_le_bytes(le(data, 4));
    let mtime_ns = i64::from_le_bytes(le(data, 12));
    let block_len = u32::from_le_bytes(le(data, 20)).max(1);
    let entry = Entry {
        mtime_ns,
        ..Entry::file("f", size)
    };
    let blocks = block_count(size, block_len);
    if let Some(done) = journaled_blocks(data, &entry, block_len, blocks) {
        assert!(done.iter().all(|&i| i < blocks));
        assert!(done.len() <= data.len() / 8);
    }
});
