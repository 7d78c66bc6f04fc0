//! Bad input on the server's port: each case gets a one-line error in the log,
//! the server keeps running, and a bench right after succeeds.

use crate::common;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use common::{Server, bench_json};
use linerate_wire::{
    FrameDecoder, Hello, Message, PROTOCOL_VERSION, RefusalCode, Role, SessionId, SessionKind,
};

fn connect(srv: &Server) -> TcpStream {
    let s = TcpStream::connect(srv.addr()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s
}

/// Reads frames until the server closes; returns the first message.
fn first_message(s: &mut TcpStream) -> Option<Message> {
    let mut dec = FrameDecoder::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Ok(Some(f)) = dec.next_frame() {
            return Message::from_frame(&f).ok();
        }
        match s.read(&mut buf) {
            Ok(0) | Err(_) => return None,
            Ok(n) => dec.push(&buf[..n]),
        }
    }
}

fn hello(version: u16) -> Vec<u8> {
    let mut h = Hello::new(SessionId([7; 16]), Role::Control, SessionKind::Bench, 0);
    h.version = version;
    h.encode().to_vec()
}

fn healthy_after(srv: &mut Server) {
    assert!(srv.is_running(), "server died");
    let doc = bench_json(&srv.addr(), &["-t", "1"]);
    assert!(doc["summary"]["bits_per_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn random_bytes() {
    let _traffic = common::beside_other_traffic();
    let mut srv = Server::start();
    let mut s = connect(&srv);
    s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n\x00\xff\x13\x37 random garbage")
        .unwrap();
    match first_message(&mut s) {
        Some(Message::Refuse(r)) => assert_eq!(r.code, RefusalCode::Malformed),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(srv.wait_log(Duration::from_secs(5), |l| {
        l.iter().any(|x| x.contains("bad magic"))
    }));
    healthy_after(&mut srv);
}

#[test]
fn truncated_handshake() {
    let _traffic = common::beside_other_traffic();
    let mut srv = Server::start();
    let mut s = connect(&srv);
    s.write_all(&hello(PROTOCOL_VERSION)[..10]).unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let _ = first_message(&mut s);
    assert!(srv.wait_log(Duration::from_secs(5), |l| {
        l.iter()
            .any(|x| x.contains("handshake truncated: 10 of 36"))
    }));
    healthy_after(&mut srv);
}

#[test]
fn wrong_protocol_version() {
    let _traffic = common::beside_other_traffic();
    let mut srv = Server::start();
    let mut s = connect(&srv);
    s.write_all(&hello(99)).unwrap();
    match first_message(&mut s) {
        Some(Message::Refuse(r)) => assert!(r.message.contains("version 99"), "{}", r.message),
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert!(srv.wait_log(Duration::from_secs(5), |l| {
        l.iter()
            .any(|x| x.contains("protocol version 99 is not supported"))
    }));
    healthy_after(&mut srv);
}

#[test]
fn oversized_length_field() {
    let _traffic = common::beside_other_traffic();
    let mut srv = Server::start();
    let mut s = connect(&srv);
    s.write_all(&hello(PROTOCOL_VERSION)).unwrap();
    assert!(matches!(first_message(&mut s), Some(Message::Accept(_))));
    // A bench request claiming 4 GiB of payload.
    s.write_all(&[3, 0xff, 0xff, 0xff, 0xff, b'{']).unwrap();
    let mut rest = Vec::new();
    let _ = s.read_to_end(&mut rest);
    assert!(srv.wait_log(Duration::from_secs(5), |l| {
        l.iter()
            .any(|x| x.contains("frame length 4294967295 exceeds"))
    }));
    healthy_after(&mut srv);
}

/// Connections the server turned away: each refused in its own line, or
/// dropped at the door (one source may hold only so many in their
/// handshake) and counted in a summary line.
fn turned_away(srv: &Server) -> usize {
    srv.log_lines()
        .iter()
        .map(|l| {
            if l.contains("0 of 36 bytes") {
                1
            } else if let Some(n) = l
                .split("refused ")
                .nth(1)
                .filter(|r| r.contains(" more session(s) or connection(s)"))
                .and_then(|r| r.split(' ').next()?.parse().ok())
            {
                n
            } else if let Some(rest) = l
                .contains("connection(s) in their handshake")
                .then(|| l.split("dropped ").nth(1))
                .flatten()
            {
                rest.split(' ')
                    .next()
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0)
            } else {
                0
            }
        })
        .sum()
}

#[test]
fn two_hundred_connections_opened_and_dropped() {
    let _traffic = common::beside_other_traffic();
    let mut srv = Server::start();
    let conns: Vec<TcpStream> = (0..200).map(|_| connect(&srv)).collect();
    drop(conns);
    // Past 10 a source's refusals are summed when their 10 s are over.
    let deadline = Instant::now() + Duration::from_secs(20);
    while turned_away(&srv) < 200 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert_eq!(turned_away(&srv), 200, "{:#?}", srv.log_lines());
    let refused: Vec<String> = srv
        .log_lines()
        .into_iter()
        .filter(|l| l.contains("refused"))
        .collect();
    assert!(refused.iter().all(|l| !l.contains('\n')));
    healthy_after(&mut srv);
}

#[test]
fn data_connection_for_an_unknown_session() {
    let _traffic = common::beside_other_traffic();
    let mut srv = Server::start();
    let mut s = connect(&srv);
    let h = Hello::new(SessionId([9; 16]), Role::Data, SessionKind::Bench, 0);
    s.write_all(&h.encode()).unwrap();
    match first_message(&mut s) {
        Some(Message::Refuse(r)) => assert_eq!(r.code, RefusalCode::UnknownSession),
        other => panic!("expected a refusal, got {other:?}"),
    }
    healthy_after(&mut srv);
}
