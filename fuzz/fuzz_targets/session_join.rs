//! A data connection's join, both ends, on arbitrary message sequences:
//! the server's end over every kind of registered session (unknown,
//! complete, index taken or out of range, encrypted or not, with or
//! without a token and a client key) and every kind of arrival.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_session::join::{Arrival, JoinClient, JoinRule, JoinServer, SlotView};
use linerate_session::Session;
use linerate_wire::Message;

#[path = "../common/session_ops.rs"]
mod ops;

fn key(b: u8) -> Option<[u8; 32]> {
    (b % 3 != 0).then_some([b % 3; 32])
}

fuzz_target!(|data: &[u8]| {
    let [shape, slot, arrive, rest @ ..] = data else {
        return;
    };
    let now = std::time::Instant::now();
    if shape % 4 == 0 {
        let client = JoinClient::new(now, slot % 2 == 0, (slot % 4 < 2).then(|| ops::TOKEN.into()));
        ops::run(rest, client, |_, _, _| {});
        return;
    }
    let view = SlotView {
        connections: u16::from(slot % 5),
        complete: slot & 0x10 != 0,
        index_taken: slot & 0x20 != 0,
        rule: JoinRule {
            encrypted: slot & 0x40 != 0,
            token: (slot & 0x80 != 0).then(|| ops::TOKEN.into()),
            client_key: key(shape >> 2),
        },
    };
    let arrival = Arrival {
        stream_index: u16::from(arrive % 6),
        encrypted: arrive & 0x10 != 0,
        client_key: key(arrive >> 5),
    };
    let mut server = JoinServer::new(now, (shape % 4 != 1).then_some(&view), arrival);
    if !server.passed_the_hello() {
        // Refused at once, with its refusal as the one message it sends.
        assert!(server.is_over());
        assert!(matches!(server.poll_transmit(), Some(Message::Refuse(_))));
        assert!(server.poll_transmit().is_none());
    }
    ops::run(rest, server, |_, _, _| {});
});
