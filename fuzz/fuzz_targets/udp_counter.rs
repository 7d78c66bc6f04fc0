//! The UDP receiver's accounting on arbitrary datagrams and arrival
//! times: never panics, and its counts stay consistent: duplicates and
//! late datagrams never exceed what arrived, and what is lost never
//! exceeds what the sequence numbers say was sent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_wire::{DATAGRAM_HEADER_LEN, DatagramHeader, UdpCounter};

fuzz_target!(|data: &[u8]| {
    let mut c = UdpCounter::new();
    let mut at = 0u64;
    for d in data.chunks(DATAGRAM_HEADER_LEN + 1) {
        let Ok(mut h) = DatagramHeader::decode(d) else {
            continue;
        };
        // Keep sequence numbers near each other, as a real stream's are,
        // and sometimes far, as a hostile one's may be.
        if d[DATAGRAM_HEADER_LEN.min(d.len() - 1)] & 1 == 0 {
            h.seq %= 10_000;
        }
        at = at.wrapping_add(u64::from(d[0]));
        c.take(h, at);
        let n = c.counts();
        assert!(n.duplicates + n.out_of_order <= n.datagrams);
        assert!(n.lost(None) <= n.expected);
        assert!(n.jitter_ns.is_finite() && n.jitter_ns >= 0.0);
    }
});
