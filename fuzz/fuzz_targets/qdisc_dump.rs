//! The rtnetlink qdisc-dump decoder on arbitrary datagrams: never panics,
//! and every qdisc it returns came from inside the buffer.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(part) = linerate_tune::netlink::decode(data) {
        assert!(part.qdiscs.len() <= data.len() / 36 + 1);
    }
});
