//! The emulator's packet decoder on arbitrary frames, as any process in a lab
//! host can make them: never panics, segment accounting adds up, and any cut
//! into two runs rebuilds packets that decode back to the same destination
//! and to the segment counts the runs were cut to.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_emulator::packet::{Packet, VNET_HDR_LEN};

fuzz_target!(|data: &[u8]| {
    let Some((&cut, frame)) = data.split_first() else {
        return;
    };
    let Some(p) = Packet::parse(frame) else {
        return;
    };
    let n = p.segments();
    assert!(n >= 1);
    let per_segment: u64 = (0..n).map(|i| p.segment_wire_bytes(i)).sum();
    assert_eq!(per_segment, p.wire_bytes(), "segments add up to the packet");
    let dest = p.destination();

    let mut head = Vec::new();
    let whole = p.run(0, n, &mut head);
    assert_eq!(
        [&head[..], whole].concat(),
        frame,
        "the whole run is the original"
    );

    let cut = usize::from(cut) % n;
    let mut payload = 0;
    for (first, count) in [(0, cut), (cut, n - cut)] {
        if count == 0 {
            continue;
        }
        let part = p.run(first, count, &mut head);
        let rebuilt = [&head[..], part].concat();
        let q = Packet::parse(&rebuilt).expect("a rebuilt run decodes");
        assert_eq!(q.destination(), dest);
        if n > 1 {
            assert_eq!(q.segments(), count, "a run of {count} of {n} segments");
            payload += part.len();
        }
        assert!(head.len() >= VNET_HDR_LEN);
    }
    if n > 1 {
        let headers = head.len() - VNET_HDR_LEN;
        assert_eq!(payload + headers, p.ip.len(), "runs cover the payload once");
    }
});
