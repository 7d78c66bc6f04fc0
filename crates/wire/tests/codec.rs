//! Property tests of the codec: everything round-trips, nothing panics on
//! arbitrary bytes, and hostile lengths are refused before allocation.

use linerate_wire::{
    BenchOptions, BenchParams, BenchPlan, Direction, FRAME_HEADER_LEN, Frame, FrameDecoder,
    FrameType, HELLO_LEN, Hello, MAX_FRAME_LEN, Message, PROTOCOL_VERSION, PayloadBytes, Refusal,
    RefusalCode, Role, SessionId, SessionKind, SocketParams, WireError,
};
use proptest::prelude::*;

fn role() -> impl Strategy<Value = Role> {
    prop_oneof![Just(Role::Control), Just(Role::Data)]
}

fn kind() -> impl Strategy<Value = SessionKind> {
    prop_oneof![
        Just(SessionKind::Bench),
        Just(SessionKind::Transfer),
        Just(SessionKind::Latency)
    ]
}

fn params() -> impl Strategy<Value = BenchParams> {
    (
        1u16..=1024,
        1u64..100_000,
        proptest::option::of(1u64..u64::MAX),
        1u32..=(64 << 20),
        prop_oneof![
            Just(Direction::Forward),
            Just(Direction::Reverse),
            Just(Direction::Bidir)
        ],
        proptest::option::of(4096u32..u32::MAX),
        proptest::option::of(prop_oneof![
            Just("bbr".to_string()),
            Just("cubic".to_string())
        ]),
        any::<(bool, bool, bool)>(),
    )
        .prop_map(
            |(streams, duration_ms, bytes, len, direction, buf, cc, (zc, skip, poll))| {
                BenchParams {
                    options: BenchOptions {
                        streams,
                        duration_ms,
                        bytes,
                        direction,
                        interval_ms: 1000,
                        omit_ms: 0,
                        socket: SocketParams {
                            sndbuf: buf,
                            rcvbuf: buf,
                            congestion: cc,
                            pacing_rate: bytes,
                            mss: None,
                            tos: Some(0x10),
                            nodelay: zc != skip,
                            notsent_lowat: buf,
                        },
                        zerocopy: zc,
                        skip_rx_copy: skip,
                        run_token: None,
                        threads: None,
                        payload: if zc {
                            PayloadBytes::Zeros
                        } else {
                            PayloadBytes::Random
                        },
                        path_hold: poll.then(|| "dtns/bench-dtn2".to_string()),
                    },
                    plan: BenchPlan {
                        write_len: len,
                        read_len: len,
                        rx_poll: poll,
                        pin_cores: poll,
                        pin_pairs: !poll,
                        rcvlowat: buf,
                        peer_intervals: skip,
                        udp: None,
                        delay_probe_port: None,
                    },
                }
            },
        )
}

proptest! {
    #[test]
    fn hello_round_trips(session in any::<[u8; 16]>(), role in role(), kind in kind(), idx in any::<u16>(), caps in any::<u64>()) {
        let mut h = Hello::new(SessionId(session), role, kind, idx);
        h.capabilities.0 = caps;
        prop_assert_eq!(Hello::decode(&h.encode()), Ok(h));
    }

    #[test]
    fn hello_decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..80)) {
        let _ = Hello::decode(&bytes);
    }

    #[test]
    fn bench_request_round_trips_through_chunked_decoding(p in params(), chunk in 1usize..64) {
        let msg = Message::BenchRequest(p);
        let bytes = msg.encode();
        let mut dec = FrameDecoder::new();
        let mut got = None;
        for piece in bytes.chunks(chunk) {
            dec.push(piece);
            if let Some(f) = dec.next_frame().unwrap() {
                got = Some(Message::from_frame(&f).unwrap());
            }
        }
        prop_assert_eq!(got, Some(msg));
    }

    #[test]
    fn frame_decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        let mut dec = FrameDecoder::new();
        dec.push(&bytes);
        while let Ok(Some(f)) = dec.next_frame() {
            let _ = Message::from_frame(&f);
        }
    }

    #[test]
    fn any_payload_of_any_type_decodes_or_errs(t in 1u8..=6, payload in proptest::collection::vec(any::<u8>(), 0..512)) {
        let frame = Frame { kind: FrameType::from_code(t).unwrap(), payload };
        let _ = Message::from_frame(&frame);
    }
}

#[test]
fn oversized_length_is_refused_from_the_header_alone() {
    let mut dec = FrameDecoder::new();
    dec.push(&[FrameType::Report as u8, 0xff, 0xff, 0xff, 0xff]);
    assert_eq!(
        dec.next_frame(),
        Err(WireError::FrameTooLong {
            len: u32::MAX,
            max: MAX_FRAME_LEN
        })
    );
    assert!(dec.wanted().is_err());
}

#[test]
fn hello_errors_are_specific() {
    let good = Hello::new(SessionId([1; 16]), Role::Control, SessionKind::Bench, 0).encode();
    assert!(matches!(
        Hello::decode(b"GET / HTTP/1.1"),
        Err(WireError::BadMagic(_))
    ));
    assert_eq!(
        Hello::decode(&good[..10]),
        Err(WireError::TruncatedHello {
            got: 10,
            need: HELLO_LEN
        })
    );
    let mut v = good;
    v[5] = 9;
    assert_eq!(
        Hello::decode(&v),
        Err(WireError::UnsupportedVersion {
            theirs: 9,
            ours: PROTOCOL_VERSION
        })
    );
    let mut r = good;
    r[32] = 7;
    assert_eq!(Hello::decode(&r), Err(WireError::UnknownRole(7)));
}

#[test]
fn invalid_parameters_are_refused_after_decoding() {
    let mut p = BenchParams {
        options: BenchOptions {
            streams: 0,
            duration_ms: 1000,
            interval_ms: 0,
            ..BenchOptions::default()
        },
        plan: BenchPlan::of_lengths(1, 1),
    };
    let frame = Message::BenchRequest(p.clone()).to_frame();
    assert!(matches!(
        Message::from_frame(&frame),
        Err(WireError::InvalidField {
            field: "streams",
            ..
        })
    ));
    p.options.streams = 1;
    p.options.socket.congestion = Some("../../etc".into());
    let frame = Message::BenchRequest(p).to_frame();
    assert!(matches!(
        Message::from_frame(&frame),
        Err(WireError::InvalidField {
            field: "congestion",
            ..
        })
    ));
}

#[test]
fn refusal_round_trips() {
    let m = Message::Refuse(Refusal {
        code: RefusalCode::UnknownSession,
        message: "no such session".into(),
    });
    let bytes = m.encode();
    assert_eq!(
        bytes.len(),
        FRAME_HEADER_LEN + bytes[FRAME_HEADER_LEN..].len()
    );
    let mut dec = FrameDecoder::new();
    dec.push(&bytes);
    assert_eq!(
        Message::from_frame(&dec.next_frame().unwrap().unwrap()).unwrap(),
        m
    );
}

#[test]
fn a_path_held_refusal_round_trips_by_its_own_code() {
    let m = Message::Refuse(Refusal {
        code: RefusalCode::PathHeld,
        message: "this host's path is held by the scheduled test dtns/b from 10.0.0.1".into(),
    });
    let bytes = m.encode();
    let mut dec = FrameDecoder::new();
    dec.push(&bytes);
    let back = Message::from_frame(&dec.next_frame().unwrap().unwrap()).unwrap();
    assert_eq!(back, m);
    assert!(String::from_utf8_lossy(&bytes).contains("\"path_held\""));
}
