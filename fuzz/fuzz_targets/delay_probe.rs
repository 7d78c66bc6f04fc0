//! The one-way delay probe's datagrams and its summary on arbitrary bytes:
//! decoding never panics, what decodes encodes back to the same bytes, and
//! the summary of any echoes has no negative or unordered queue.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_probe::one_way::{Answered, summarize};
use linerate_wire::{DELAY_PROBE_LEN, DelayEcho, DelayProbe};

fuzz_target!(|data: &[u8]| {
    let mut answered = Vec::new();
    for d in data.chunks(DELAY_PROBE_LEN + 9) {
        if let Ok(p) = DelayProbe::decode(d) {
            assert_eq!(&p.encode()[..], d);
        }
        let (datagram, arrival) = d.split_at(d.len().min(DELAY_PROBE_LEN));
        let Ok(e) = DelayEcho::decode(datagram) else {
            continue;
        };
        assert_eq!(&e.encode()[..], datagram);
        let mut at = [0u8; 8];
        at[..arrival.len().min(8)].copy_from_slice(&arrival[..arrival.len().min(8)]);
        answered.push(Answered {
            client_sent_ns: e.client_sent_ns,
            server_received_ns: e.server_received_ns,
            server_sent_ns: e.server_sent_ns,
            client_received_ns: u64::from_be_bytes(at),
            during_run: e.seq % 2 == 0,
        });
    }
    if let Some(s) = summarize(answered.len() as u32, &answered) {
        for q in [s.to_server, s.to_client] {
            assert!(q.median_us >= 0.0 && q.median_us.is_finite() && q.p90_us >= q.median_us);
        }
        assert!(s.probes_answered <= s.probes_sent);
    }
});
