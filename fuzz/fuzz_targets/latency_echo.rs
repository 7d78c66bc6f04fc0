//! The latency server's side of a data connection on arbitrary bytes in
//! arbitrary pieces: never panics, never takes more than it was given,
//! owes replies only of lengths a valid run header allows, and between
//! runs re-decodes each header it accepted.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_wire::{Echo, MAX_MESSAGE_LEN};

fuzz_target!(|data: &[u8]| {
    let Some((&piece, bytes)) = data.split_first() else {
        return;
    };
    let piece = usize::from(piece.max(1));
    let mut echo = Echo::new();
    let mut replies = 0u64;
    for chunk in bytes.chunks(piece) {
        let mut off = 0;
        while off < chunk.len() {
            let Ok(fed) = echo.feed(&chunk[off..]) else {
                return;
            };
            assert!(fed.taken <= chunk.len() - off);
            assert!(fed.taken > 0, "feeding bytes makes progress");
            off += fed.taken;
            if let Some(len) = fed.reply {
                assert!((1..=MAX_MESSAGE_LEN).contains(&len));
                replies += 1;
            }
            if let Some(h) = echo.run() {
                assert_eq!(linerate_wire::RunHeader::decode(&h.encode()), Ok(h));
            }
        }
    }
    assert_eq!(echo.rounds(), replies);
});
