//! A UDP latency request on arbitrary bytes: never panics; a request it
//! takes asks for a reply the limits allow, opens with the sequence number
//! it reports, and encodes back to the bytes it came from.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_wire::{MAX_DATAGRAM_LEN, UDP_REPLY_MIN_LEN, UDP_ROUND_HEADER_LEN, UdpRound};

fuzz_target!(|data: &[u8]| {
    let Ok(round) = UdpRound::decode(data) else {
        return;
    };
    assert!((UDP_REPLY_MIN_LEN as u32..=MAX_DATAGRAM_LEN).contains(&round.reply_len));
    assert_eq!(UdpRound::seq_of(data), Some(round.seq));
    let mut again = [0u8; UDP_ROUND_HEADER_LEN];
    round.encode_into(&mut again);
    assert_eq!(&again[..], &data[..UDP_ROUND_HEADER_LEN]);
});
