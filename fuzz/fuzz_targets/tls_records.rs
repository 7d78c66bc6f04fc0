//! The TLS layer's receive path (`TlsStream::feed` and `open`, which the
//! control connection uses, and the buffer they keep) on a real session:
//! a client and a server handshake in memory, the client seals the input's
//! plaintext, the input then alters the sealed bytes and cuts them in
//! arbitrary pieces. Never panics; unaltered, the plaintext comes out whole;
//! altered, it fails or comes out whole, never different.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_secure::{Identity, TlsStream, client_config, server_config};

/// Moves handshake bytes between the two ends until both can send.
fn handshaken() -> (TlsStream, TlsStream) {
    let id = Identity::generate().expect("identity");
    let mut client = TlsStream::client(client_config(id.fingerprint()).unwrap()).unwrap();
    let mut server = TlsStream::server(server_config(&id).unwrap()).unwrap();
    let mut sink = Vec::new();
    for _ in 0..8 {
        client.open(&mut sink).unwrap();
        server.feed(&client.take_outgoing()).unwrap();
        server.open(&mut sink).unwrap();
        client.feed(&server.take_outgoing()).unwrap();
    }
    client.open(&mut sink).unwrap();
    assert!(sink.is_empty());
    (client, server)
}

fuzz_target!(|data: &[u8]| {
    let [chunk, flips, rest @ ..] = data else {
        return;
    };
    let (plain, alter) = rest.split_at(rest.len() / 2);
    let (mut client, mut server) = handshaken();
    let mut wire = Vec::new();
    for piece in plain.chunks(usize::from(*chunk).max(1) * 37) {
        wire.extend(client.seal(piece).unwrap());
    }
    let altered = *flips % 4 == 0 && !wire.is_empty() && !alter.is_empty();
    if altered {
        for pair in alter.chunks(2) {
            let at = usize::from(pair[0]) * 251 % wire.len();
            wire[at] ^= pair.get(1).copied().unwrap_or(1) | 1;
        }
    }
    let mut got = Vec::new();
    for piece in wire.chunks(usize::from(*chunk).max(1)) {
        if server.feed(piece).is_err() || server.open(&mut got).is_err() {
            assert!(altered, "a clean stream failed");
            return;
        }
    }
    assert!(got.len() <= plain.len());
    assert_eq!(&plain[..got.len()], &got[..], "plaintext changed");
    if !altered {
        assert_eq!(got.len(), plain.len(), "a clean stream lost bytes");
    }
});
