//! The transfer record header decoder on arbitrary bytes: never panics, and
//! what it accepts re-encodes to the same header with a bounded length.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_wire::{MAX_BLOCK_LEN, Record};

fuzz_target!(|data: &[u8]| {
    if let Ok(rec) = Record::decode(data) {
        if let Record::Block { len, offset, .. } | Record::Hole { len, offset, .. } = rec {
            assert!((1..=MAX_BLOCK_LEN).contains(&len));
            assert!(offset.checked_add(u64::from(len)).is_some());
        }
        let again = Record::decode(&rec.encode()).expect("re-decode");
        assert_eq!(again, rec);
    }
});
