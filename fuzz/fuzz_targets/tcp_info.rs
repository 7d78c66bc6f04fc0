//! The TCP_INFO decoder on arbitrary lengths and contents: never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = linerate_probe::tcpinfo::decode(data);
});
