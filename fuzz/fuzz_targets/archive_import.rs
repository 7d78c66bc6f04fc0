//! What `archive import` reads, on arbitrary JSON: never a panic, and an
//! result has an entry, and each names its tool and the series its key
//! hashes to.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_archive::import::{Imported, entries_of};

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    if let Imported::Result(entries) = entries_of(&doc) {
        assert!(!entries.is_empty());
        for entry in entries {
            assert!(!entry.key.tool.is_empty());
            assert_eq!(entry.series, entry.key.id());
        }
    }
});
