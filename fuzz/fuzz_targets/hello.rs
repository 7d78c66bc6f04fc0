//! The greeting decoder on arbitrary bytes: never panics, and whatever it
//! accepts encodes back to the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_wire::{HELLO_LEN, Hello};

fuzz_target!(|data: &[u8]| {
    if let Ok(h) = Hello::decode(data) {
        assert_eq!(&h.encode()[..], &data[..HELLO_LEN]);
    }
});
