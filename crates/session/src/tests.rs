//! Both ends of each session kind in memory, with a fake clock: every
//! message goes through the real codec (encoded, framed, decoded) and
//! every driver is a few lines reacting to events. Then, at every step of
//! each end, the faults a peer can cause: a message out of order, one
//! duplicated, one cut short, one of an unknown type, and silence.

use std::time::{Duration, Instant};

use linerate_result::SideReport;
use linerate_wire::{
    Digests, Entries, FrameDecoder, FrameType, Join, Message, Need, NeedEnd, PeerIntervals, Ready,
    Refusal, RefusalCode, TransferRequest, TransferTotals,
};

use crate::fixtures::{TOKEN, accept, file, latency_params, need, params, request};
use crate::join::{Arrival, JoinClient, JoinRule, JoinServer, SlotView};
use crate::kit::{Session, SessionError};
use crate::{
    BenchClient, BenchServer, TransferReceiver, TransferSender, bench_client, bench_server,
    transfer_receiver, transfer_sender,
};

/// Carries what `from` sends to `to` through the codec: encoded, framed in
/// chunks of 7 bytes, decoded.
fn carry<A: Session, B: Session>(from: &mut A, to: &mut B, now: Instant) -> usize {
    let mut carried = 0;
    let mut decoder = FrameDecoder::new();
    while let Some(msg) = from.poll_transmit() {
        for chunk in msg.encode().chunks(7) {
            decoder.push(chunk);
            while let Some(frame) = decoder.next_frame().expect("a frame this side encoded") {
                match Message::from_frame(&frame) {
                    Ok(m) => to.handle(now, m),
                    Err(e) => to.handle_malformed(e),
                }
            }
        }
        carried += 1;
    }
    carried
}

/// The fake clock: the start, plus what the test has advanced.
struct Clock(Instant);

impl Clock {
    fn new() -> Clock {
        Clock(Instant::now())
    }

    fn tick(&mut self, by: Duration) -> Instant {
        self.0 += by;
        self.0
    }
}

// ----- drivers: what the engine does on each event, minus the I/O -----

fn drive_bench_client(c: &mut BenchClient, now: Instant) {
    while let Some(e) = c.poll_event() {
        match e {
            bench_client::Event::Accepted(_) => c.request(now, params()),
            bench_client::Event::OpenStreams => {
                c.streams_open();
                c.run_over(now);
            }
            bench_client::Event::PeerIntervals(_) => {}
        }
    }
}

fn drive_bench_server(s: &mut BenchServer, now: Instant) {
    while let Some(e) = s.poll_event() {
        match e {
            bench_server::Event::Register(p) => {
                assert_eq!(p, params());
                s.registered(now);
                s.streams_connected(now);
            }
            bench_server::Event::RegisterLatency(_) => panic!("a bench session"),
            bench_server::Event::Run => s.ran(SideReport::default()),
        }
    }
}

/// A sender driver that announces two batches and counts what it is asked for.
#[derive(Default)]
struct SenderDriver {
    asked: Vec<(u32, u32)>,
    listed: Vec<u32>,
    complete: Option<(u32, u64)>,
}

impl SenderDriver {
    fn drive(&mut self, s: &mut TransferSender, now: Instant) {
        while let Some(e) = s.poll_event() {
            match e {
                transfer_sender::Event::Accepted(_) => {}
                transfer_sender::Event::OpenStreams => {
                    s.streams_open(now);
                    s.entries(vec![file("a"), file("b")]);
                    s.entries(vec![file("c")]);
                    s.entries_end(now);
                }
                transfer_sender::Event::Need { pass, files } => {
                    self.asked.extend(files.iter().map(|f| (pass, f.id)));
                }
                transfer_sender::Event::Listed { pass, .. } => self.listed.push(pass),
                transfer_sender::Event::Complete {
                    passes,
                    first_bytes,
                } => self.complete = Some((passes, first_bytes)),
            }
        }
    }
}

/// A receiver driver whose sink misses every file in the first pass and
/// file 2 once more in the second.
#[derive(Default)]
struct ReceiverDriver {
    seen: u32,
    passes: u32,
}

impl ReceiverDriver {
    fn drive(&mut self, r: &mut TransferReceiver, now: Instant) {
        while let Some(e) = r.poll_event() {
            match e {
                transfer_receiver::Event::Admit(req) => {
                    assert_eq!(req.token.as_deref(), Some(TOKEN));
                    r.admitted(now);
                    r.streams_connected(now);
                }
                transfer_receiver::Event::Begin => {}
                transfer_receiver::Event::Entries(batch) => {
                    let ids = self.seen..self.seen + batch.len() as u32;
                    self.seen = ids.end;
                    let n = u64::from(ids.end - ids.start);
                    r.answer(ids.map(need).collect(), 3 * n, (3 << 20) * n);
                }
                transfer_receiver::Event::Listed => self.pass(r, now),
                transfer_receiver::Event::Finish => r.report(
                    vec![(0, "d0".into()), (1, "d1".into()), (2, "d2".into())],
                    TransferTotals::default(),
                    SideReport::default(),
                ),
            }
        }
    }

    /// The streams end a pass (driven by the test, not by a message).
    fn pass(&mut self, r: &mut TransferReceiver, now: Instant) {
        self.passes += 1;
        if self.passes == 1 {
            r.pass_ended(now, vec![need(2)], 3, 3 << 20);
        } else {
            r.pass_ended(now, Vec::new(), 0, 0);
        }
    }
}

/// Runs both ends until neither has anything to carry.
fn exchange<A: Session, B: Session>(
    a: &mut A,
    b: &mut B,
    clock: &mut Clock,
    mut drive: impl FnMut(&mut A, &mut B, Instant),
) {
    for _ in 0..100 {
        let now = clock.tick(Duration::from_millis(1));
        drive(a, b, now);
        let moved = carry(a, b, now) + carry(b, a, now);
        drive(a, b, now);
        if moved == 0 && (a.is_over() || b.is_over()) {
            return;
        }
    }
    panic!("the sessions did not settle");
}

#[test]
fn a_bench_session_runs_to_its_report() {
    let mut clock = Clock::new();
    let mut client = BenchClient::new(clock.0);
    let mut server = BenchServer::new(clock.0, accept());
    assert!(!client.accepted(), "nothing has come back yet");
    exchange(&mut client, &mut server, &mut clock, |c, s, now| {
        drive_bench_client(c, now);
        drive_bench_server(s, now);
    });
    assert!(client.accepted());
    assert_eq!(server.poll_end(), Some(Ok(())));
    assert_eq!(client.poll_end(), Some(Ok(SideReport::default())));
    assert_eq!(client.poll_end(), None, "the end is taken once");
}

/// A latency session goes the same way with its own request; each kind's
/// server refuses the other kind's request.
#[test]
fn a_latency_session_runs_to_its_report_and_takes_only_its_own_request() {
    let mut clock = Clock::new();
    let mut client = BenchClient::new(clock.0);
    let mut server = BenchServer::latency(clock.0, accept());
    let mut asked = None;
    exchange(&mut client, &mut server, &mut clock, |c, s, now| {
        while let Some(e) = c.poll_event() {
            match e {
                bench_client::Event::Accepted(_) => c.request_latency(now, latency_params()),
                bench_client::Event::OpenStreams => {
                    c.streams_open();
                    c.run_over(now);
                }
                bench_client::Event::PeerIntervals(_) => panic!("not asked for"),
            }
        }
        while let Some(e) = s.poll_event() {
            match e {
                bench_server::Event::RegisterLatency(p) => {
                    asked = Some(p);
                    s.registered(now);
                    s.streams_connected(now);
                }
                bench_server::Event::Register(_) => panic!("a latency session"),
                bench_server::Event::Run => s.ran(SideReport::default()),
            }
        }
    });
    assert_eq!(asked, Some(latency_params()));
    assert_eq!(server.poll_end(), Some(Ok(())));
    assert_eq!(client.poll_end(), Some(Ok(SideReport::default())));

    let now = clock.0;
    for (mut server, wrong) in [
        (
            BenchServer::latency(now, accept()),
            Message::BenchRequest(params()),
        ),
        (
            BenchServer::new(now, accept()),
            Message::LatencyRequest(latency_params()),
        ),
    ] {
        while server.poll_transmit().is_some() {}
        server.handle(now, wrong);
        assert!(
            matches!(
                server.poll_end(),
                Some(Err(SessionError::Unexpected { .. }))
            ),
            "the other kind's request is refused"
        );
    }
}

/// A client that only receives (-R) asks for the server's samples as the
/// run goes; one that did not ask never gets them.
#[test]
fn the_server_sends_its_intervals_only_when_asked() {
    let sample = linerate_result::IntervalSample {
        side: linerate_result::Side::Sender,
        stream: 0,
        start: 0.0,
        end: 1.0,
        bytes: 10,
        bits_per_second: 80.0,
        tcp: None,
        udp: None,
    };
    for asked in [true, false] {
        let mut clock = Clock::new();
        let mut client = BenchClient::new(clock.0);
        let mut server = BenchServer::new(clock.0, accept());
        let mut got = Vec::new();
        let mut running = false;
        exchange(&mut client, &mut server, &mut clock, |c, s, now| {
            while let Some(e) = c.poll_event() {
                match e {
                    bench_client::Event::Accepted(_) => c.request(now, {
                        let mut p = params();
                        p.plan.peer_intervals = asked;
                        p
                    }),
                    bench_client::Event::OpenStreams => c.streams_open(),
                    bench_client::Event::PeerIntervals(i) => got.extend(i),
                }
            }
            while let Some(e) = s.poll_event() {
                match e {
                    bench_server::Event::Register(_) => {
                        s.registered(now);
                        s.streams_connected(now);
                    }
                    bench_server::Event::RegisterLatency(_) => panic!("a bench session"),
                    bench_server::Event::Run => running = true,
                }
            }
            // Two intervals (one a turn), then the end.
            if running && got.len() < 2 && asked {
                s.interval(std::slice::from_ref(&sample));
            } else if running {
                s.interval(std::slice::from_ref(&sample));
                s.interval(std::slice::from_ref(&sample));
                s.ran(SideReport::default());
                c.run_over(now);
                running = false;
            }
        });
        assert_eq!(client.poll_end(), Some(Ok(SideReport::default())));
        let want = if asked { 2 } else { 0 };
        assert_eq!(got.len(), want, "asked: {asked}");
    }
}

#[test]
fn a_transfer_runs_its_passes_until_nothing_is_missing() {
    let mut clock = Clock::new();
    let req = request(Some(TOKEN), true);
    let mut sender = TransferSender::new(clock.0, req);
    sender.reading_time(Duration::from_secs(1));
    let mut receiver = TransferReceiver::new(clock.0, accept(), Some(TOKEN.into()));
    let (mut sd, mut rd) = (SenderDriver::default(), ReceiverDriver::default());
    let mut ended_passes = 1;
    exchange(&mut sender, &mut receiver, &mut clock, |s, r, now| {
        sd.drive(s, now);
        rd.drive(r, now);
        // The streams end the second pass once the first's list has ended.
        if rd.passes == ended_passes && sd.listed.len() as u32 == rd.passes + 1 {
            ended_passes += 1;
            rd.pass(r, now);
        }
    });
    assert_eq!(sd.asked, vec![(0, 0), (0, 1), (0, 2), (1, 2)]);
    assert_eq!(sd.listed, vec![0, 1]);
    assert_eq!(sd.complete, Some((2, 9 << 20)));
    assert_eq!(receiver.poll_end(), Some(Ok(())));
    let done = sender.poll_end().unwrap().unwrap();
    assert_eq!(done.digests.len(), 3);
}

#[test]
fn a_wrong_token_is_refused_and_ends_only_its_own_session() {
    let now = Instant::now();
    for token in [None, Some("ffffffffffffffffffffffffffffffff")] {
        let mut r = TransferReceiver::new(now, accept(), Some(TOKEN.into()));
        assert!(r.poll_transmit().is_some(), "the accept goes out first");
        r.handle(now, Message::TransferRequest(request(token, false)));
        assert!(r.poll_event().is_none(), "nothing is admitted");
        match r.poll_transmit() {
            Some(Message::Refuse(x)) => {
                assert_eq!(x.code, RefusalCode::InvalidParameters);
                assert!(x.message.contains("token"));
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
        assert!(matches!(r.poll_end(), Some(Err(SessionError::Local(_)))));
    }
}

#[test]
fn a_sender_gives_up_on_a_receiver_that_stops_taking_data() {
    let mut clock = Clock::new();
    let mut s = TransferSender::new(clock.0, request(None, false));
    s.handle(clock.0, Message::Accept(accept()));
    s.handle(clock.0, Message::Ready(Ready {}));
    s.streams_open(clock.0);
    assert_eq!(
        s.poll_timeout(),
        None,
        "no limit while the manifest is walked"
    );
    let listed = clock.tick(Duration::from_secs(100));
    s.entries_end(listed);
    assert_eq!(s.poll_timeout(), Some(listed + crate::PEER_SILENCE));
    // Data still flows: the limit moves on.
    let later = clock.tick(Duration::from_secs(20));
    s.progress(later);
    s.handle_timeout(listed + crate::PEER_SILENCE);
    assert!(!s.is_over());
    s.handle_timeout(later + crate::PEER_SILENCE);
    assert!(matches!(
        s.poll_end(),
        Some(Err(SessionError::Timeout { .. }))
    ));
}

/// A sender that reads large files for their digests (`--checksum`) sends
/// an empty batch now and then: the receiver asks for nothing and waits on.
#[test]
fn an_empty_batch_keeps_a_receiver_waiting_for_the_manifest() {
    use transfer_receiver::Event;
    let mut clock = Clock::new();
    let mut r = TransferReceiver::new(clock.0, accept(), Some(TOKEN.into()));
    r.handle(
        clock.0,
        Message::TransferRequest(request(Some(TOKEN), false)),
    );
    assert!(matches!(r.poll_event(), Some(Event::Admit(_))));
    r.admitted(clock.0);
    r.streams_connected(clock.0);
    r.handle(clock.0, Message::Start);
    assert_eq!(r.poll_event(), Some(Event::Begin));
    while r.poll_transmit().is_some() {}
    let step = crate::TRANSFER_STEP_TIMEOUT;
    let late = clock.tick(step - Duration::from_secs(1));
    r.handle(late, Message::Entries(Entries { entries: vec![] }));
    assert_eq!(r.poll_event(), Some(Event::Entries(vec![])));
    r.answer(vec![], 0, 0);
    assert_eq!(r.poll_transmit(), None, "nothing is asked for");
    assert_eq!(r.poll_timeout(), Some(late + step));
    r.handle_timeout(late + Duration::from_secs(2));
    assert!(!r.is_over());
}

#[test]
fn a_sender_waits_longer_on_a_receiver_that_compares_contents() {
    let mut clock = Clock::new();
    let reading = Duration::from_secs(120);
    for compare_contents in [false, true] {
        let mut s = TransferSender::new(
            clock.0,
            TransferRequest {
                compare_contents,
                ..request(None, false)
            },
        );
        s.handle(clock.0, Message::Accept(accept()));
        s.handle(clock.0, Message::Ready(Ready {}));
        s.streams_open(clock.0);
        s.reading_time(reading);
        let listed = clock.tick(Duration::from_secs(1));
        s.entries_end(listed);
        let allowed = if compare_contents {
            reading
        } else {
            Duration::ZERO
        };
        assert_eq!(
            s.poll_timeout(),
            Some(listed + crate::PEER_SILENCE + allowed)
        );
        s.handle_timeout(listed + crate::PEER_SILENCE);
        assert_eq!(s.is_over(), !compare_contents, "{compare_contents}");
    }
}

#[test]
fn a_sender_stops_after_passes_without_progress() {
    let now = Instant::now();
    let mut s = TransferSender::new(now, request(None, false));
    s.handle(now, Message::Accept(accept()));
    s.handle(now, Message::Ready(Ready {}));
    s.streams_open(now);
    s.entries_end(now);
    let end = |round| {
        Message::NeedEnd(NeedEnd {
            round,
            blocks: 1,
            bytes: 100,
        })
    };
    let one = || {
        Message::Need(Need {
            files: vec![need(0)],
        })
    };
    s.handle(now, one());
    s.handle(now, end(0));
    for round in 1..=crate::transfer_sender::STALLED_PASSES {
        assert!(!s.is_over(), "round {round}");
        s.handle(now, one());
        s.handle(now, end(round));
    }
    let Some(Err(SessionError::Local(r))) = s.poll_end() else {
        panic!("expected the sender to give up")
    };
    assert!(r.message.contains("without progress"), "{}", r.message);
}

// ----- faults at every step -----

/// One step of an end's normal path: the message it receives there, the
/// other message types it also takes there, and whether the same message
/// may come again.
struct Step {
    inbound: Message,
    also: &'static [FrameType],
    repeats: bool,
}

fn step(inbound: Message) -> Step {
    Step {
        inbound,
        also: &[],
        repeats: false,
    }
}

/// One of every message type but a refusal (which ends any session by design).
fn palette() -> Vec<Message> {
    vec![
        Message::Accept(accept()),
        Message::BenchRequest(params()),
        Message::Ready(Ready {}),
        Message::Start,
        Message::Report(Box::default()),
        Message::TransferRequest(request(Some(TOKEN), false)),
        Message::Entries(Entries {
            entries: vec![file("x")],
        }),
        Message::EntriesEnd,
        Message::Need(Need {
            files: vec![need(0)],
        }),
        Message::NeedEnd(NeedEnd {
            round: 0,
            blocks: 0,
            bytes: 0,
        }),
        Message::Finish,
        Message::Digests(Digests {
            files: vec![(0, "d".into())],
        }),
        Message::TransferReport(Box::default()),
        Message::Intervals(PeerIntervals::default()),
        Message::Join(Join {
            token: Some(TOKEN.into()),
        }),
    ]
}

/// Checks every fault at every step of `steps`: `make` builds the end and
/// `drive` plays its driver after each message.
fn faults_at_every_step<S: Session>(
    steps: &[Step],
    make: impl Fn(Instant) -> S,
    drive: impl Fn(&mut S, Instant),
) {
    let t0 = Instant::now();
    // The end after the first k messages of its normal path.
    let at = |k: usize| {
        let mut s = make(t0);
        drive(&mut s, t0);
        for st in &steps[..k] {
            s.handle(t0, st.inbound.clone());
            drive(&mut s, t0);
        }
        while s.poll_transmit().is_some() {}
        assert!(!s.is_over(), "the normal path ended early at step {k}");
        s
    };
    let refused = |s: &mut S| -> bool {
        std::iter::from_fn(|| s.poll_transmit()).any(|m| matches!(m, Message::Refuse(_)))
    };
    for (k, st) in steps.iter().enumerate() {
        let here = st.inbound.frame_type();
        // Out of order: every message type this step does not take.
        for m in palette() {
            let t = m.frame_type();
            if t == here || st.also.contains(&t) {
                continue;
            }
            let mut s = at(k);
            let name = m.name();
            s.handle(t0, m);
            assert!(refused(&mut s), "step {k}: {name} was not refused");
            match s.poll_end() {
                Some(Err(SessionError::Unexpected { got, .. })) => assert_eq!(got, name),
                other => panic!("step {k}: {name} ended as {:?}", other.map(|e| e.err())),
            }
        }
        // Duplicated: the previous step's message again.
        if k > 0 && !steps[k - 1].repeats && !st.also.contains(&steps[k - 1].inbound.frame_type()) {
            let mut s = at(k);
            s.handle(t0, steps[k - 1].inbound.clone());
            assert!(
                matches!(s.poll_end(), Some(Err(SessionError::Unexpected { .. }))),
                "step {k}: a duplicate was taken"
            );
        }
        // Cut short: half a frame, then the connection closes.
        let mut s = at(k);
        let mut decoder = FrameDecoder::new();
        let bytes = st.inbound.encode();
        decoder.push(&bytes[..bytes.len() / 2]);
        assert_eq!(decoder.next_frame(), Ok(None));
        s.handle_closed();
        assert!(!refused(&mut s), "nobody is left to tell");
        assert!(matches!(
            s.poll_end(),
            Some(Err(SessionError::Closed { .. }))
        ));
        // A whole frame whose payload was cut short.
        let mut payload = st.inbound.to_frame();
        if !payload.payload.is_empty() {
            payload.payload.truncate(payload.payload.len() / 2);
            let mut s = at(k);
            match Message::from_frame(&payload) {
                Ok(m) => panic!(
                    "step {k}: half a {} decoded as {}",
                    st.inbound.name(),
                    m.name()
                ),
                Err(e) => s.handle_malformed(e),
            }
            assert!(refused(&mut s));
            assert!(matches!(s.poll_end(), Some(Err(SessionError::Wire(_)))));
        }
        // Unknown: a frame type this version does not know.
        let mut s = at(k);
        let mut decoder = FrameDecoder::new();
        decoder.push(&[200, 0, 0, 0, 0]);
        s.handle_malformed(decoder.next_frame().unwrap_err());
        assert!(refused(&mut s));
        assert!(matches!(s.poll_end(), Some(Err(SessionError::Wire(_)))));
        // Silence: a timed step ends at its deadline, not before.
        let mut s = at(k);
        if let Some(deadline) = s.poll_timeout() {
            s.handle_timeout(deadline - Duration::from_nanos(1));
            assert!(!s.is_over(), "step {k} ended before its deadline");
            s.handle_timeout(deadline);
            assert!(refused(&mut s));
            assert!(matches!(
                s.poll_end(),
                Some(Err(SessionError::Timeout { .. }))
            ));
        }
        // A refusal from the peer ends any step, and is not answered.
        let mut s = at(k);
        s.handle(
            t0,
            Message::Refuse(Refusal {
                code: RefusalCode::Busy,
                message: "busy".into(),
            }),
        );
        assert!(!refused(&mut s));
        assert!(matches!(s.poll_end(), Some(Err(SessionError::Refused(_)))));
    }
}

#[test]
fn the_bench_client_refuses_every_fault_at_every_step() {
    let steps = [
        step(Message::Accept(accept())),
        step(Message::Ready(Ready {})),
        step(Message::Report(Box::default())),
    ];
    faults_at_every_step(&steps, BenchClient::new, drive_bench_client);
}

#[test]
fn the_bench_server_refuses_every_fault_at_every_step() {
    let steps = [step(Message::BenchRequest(params())), step(Message::Start)];
    faults_at_every_step(
        &steps,
        |now| BenchServer::new(now, accept()),
        drive_bench_server,
    );
}

#[test]
fn the_transfer_sender_refuses_every_fault_at_every_step() {
    let list = |round| {
        Message::NeedEnd(NeedEnd {
            round,
            blocks: 3,
            bytes: 3 << 20,
        })
    };
    let some = || {
        Message::Need(Need {
            files: vec![need(0)],
        })
    };
    let in_pass = &[FrameType::Need, FrameType::NeedEnd];
    let steps = [
        step(Message::Accept(accept())),
        step(Message::Ready(Ready {})),
        Step {
            inbound: some(),
            also: in_pass,
            repeats: true,
        },
        Step {
            inbound: list(0),
            also: in_pass,
            repeats: false,
        },
        Step {
            inbound: some(),
            also: in_pass,
            repeats: true,
        },
        Step {
            inbound: list(1),
            also: in_pass,
            repeats: false,
        },
        Step {
            inbound: list(2),
            also: in_pass,
            repeats: false,
        },
        Step {
            inbound: Message::Digests(Digests {
                files: vec![(0, "d".into())],
            }),
            also: &[FrameType::TransferReport],
            repeats: true,
        },
        Step {
            inbound: Message::TransferReport(Box::default()),
            also: &[FrameType::Digests],
            repeats: false,
        },
    ];
    faults_at_every_step(
        &steps,
        |now| TransferSender::new(now, request(None, true)),
        |s, now| SenderDriver::default().drive(s, now),
    );
}

#[test]
fn the_transfer_receiver_refuses_every_fault_at_every_step() {
    let batch = || {
        Message::Entries(Entries {
            entries: vec![file("a")],
        })
    };
    let steps = [
        step(Message::TransferRequest(request(Some(TOKEN), true))),
        step(Message::Start),
        Step {
            inbound: batch(),
            also: &[FrameType::EntriesEnd],
            repeats: true,
        },
        Step {
            inbound: batch(),
            also: &[FrameType::EntriesEnd],
            repeats: true,
        },
        Step {
            inbound: Message::EntriesEnd,
            also: &[FrameType::Entries],
            repeats: false,
        },
        step(Message::Finish),
    ];
    faults_at_every_step(
        &steps,
        |now| TransferReceiver::new(now, accept(), Some(TOKEN.into())),
        |r, now| {
            let mut d = ReceiverDriver::default();
            d.drive(r, now);
            // The passes end at once: the first finds file 2 missing, the
            // second nothing.
            if r.waiting_for() == "the end of a pass" {
                d.pass(r, now);
                d.pass(r, now);
            }
        },
    );
}

/// An encrypted session of 4 data connections that wants [`TOKEN`] and
/// the control connection's client key, none joined yet.
fn waiting_for_joins() -> SlotView {
    SlotView {
        connections: 4,
        complete: false,
        index_taken: false,
        rule: JoinRule {
            encrypted: true,
            token: Some(TOKEN.into()),
            client_key: Some([7; 32]),
        },
    }
}

fn arrival(stream_index: u16) -> Arrival {
    Arrival {
        stream_index,
        encrypted: true,
        client_key: Some([7; 32]),
    }
}

fn join(token: Option<&str>) -> Message {
    Message::Join(Join {
        token: token.map(str::to_string),
    })
}

#[test]
fn a_data_connection_joins_with_the_sessions_token_in_memory() {
    let now = Instant::now();
    let registered = waiting_for_joins();
    let mut server = JoinServer::new(now, Some(&registered), arrival(3));
    let mut client = JoinClient::new(now, true, Some(TOKEN.into()));
    assert_eq!(
        server.poll_transmit(),
        None,
        "the server waits for the join"
    );
    assert_eq!(carry(&mut client, &mut server, now), 1);
    assert_eq!(carry(&mut server, &mut client, now), 1);
    assert_eq!(server.poll_end(), Some(Ok(())));
    assert_eq!(client.poll_end(), Some(Ok(())));
    // In the clear nothing is shown: the server answers the hello at once.
    let clear = SlotView {
        rule: JoinRule::default(),
        ..waiting_for_joins()
    };
    let plain = Arrival {
        encrypted: false,
        client_key: None,
        ..arrival(0)
    };
    let mut server = JoinServer::new(now, Some(&clear), plain);
    let mut client = JoinClient::new(now, false, None);
    assert_eq!(client.poll_transmit(), None);
    assert_eq!(carry(&mut server, &mut client, now), 1);
    assert_eq!(server.poll_end(), Some(Ok(())));
    assert_eq!(client.poll_end(), Some(Ok(())));
}

#[test]
fn a_data_connection_waits_for_its_ready_as_long_as_the_server_waits_for_it() {
    let now = Instant::now();
    let mut client = JoinClient::new(now, false, None);
    assert_eq!(client.poll_timeout(), Some(now + crate::SETUP_TIMEOUT));
    client.handle_timeout(now + Duration::from_secs(6));
    assert!(!client.is_over(), "a ready 6 s late is still taken");
    client.handle(now + Duration::from_secs(6), Message::Ready(Ready {}));
    assert_eq!(client.poll_end(), Some(Ok(())));
    let mut late = JoinClient::new(now, false, None);
    late.handle_timeout(now + crate::SETUP_TIMEOUT);
    assert!(matches!(
        late.poll_end(),
        Some(Err(SessionError::Timeout { .. }))
    ));
}

#[test]
fn the_join_refuses_every_fault_at_every_step() {
    let registered = waiting_for_joins();
    faults_at_every_step(
        &[step(join(Some(TOKEN)))],
        |now| JoinServer::new(now, Some(&registered), arrival(1)),
        |_, _| {},
    );
    faults_at_every_step(
        &[step(Message::Ready(Ready {}))],
        |now| JoinClient::new(now, true, Some(TOKEN.into())),
        |_, _| {},
    );
}

/// How the server's end of a join ended, and the code it refused with.
fn join_ends(
    session: Option<&SlotView>,
    a: Arrival,
    shown: Option<Message>,
) -> Option<RefusalCode> {
    let now = Instant::now();
    let mut s = JoinServer::new(now, session, a);
    if let Some(m) = shown {
        s.handle(now, m);
    }
    let sent: Vec<Message> = std::iter::from_fn(|| s.poll_transmit()).collect();
    match s.poll_end() {
        Some(Ok(())) => {
            assert!(matches!(sent.as_slice(), [Message::Ready(_)]));
            None
        }
        Some(Err(SessionError::Local(r))) => {
            assert!(
                matches!(sent.as_slice(), [Message::Refuse(x)] if *x == r),
                "the refusal goes to the client as it is kept"
            );
            Some(r.code)
        }
        other => panic!("the join ended as {other:?}"),
    }
}

#[test]
fn the_server_refuses_a_join_it_must_not_take_and_keeps_the_code() {
    let r = waiting_for_joins();
    let ok = join_ends(Some(&r), arrival(0), Some(join(Some(TOKEN))));
    assert_eq!(ok, None);
    // A wrong token, or none.
    let wrong = join_ends(Some(&r), arrival(0), Some(join(Some("00ff"))));
    assert_eq!(wrong, Some(RefusalCode::InvalidParameters));
    let none = join_ends(Some(&r), arrival(0), Some(join(None)));
    assert_eq!(none, Some(RefusalCode::InvalidParameters));
    // A session that is not waiting for joins: unknown, or complete.
    let unknown = join_ends(None, arrival(0), Some(join(Some(TOKEN))));
    assert_eq!(unknown, Some(RefusalCode::UnknownSession));
    let complete = SlotView {
        complete: true,
        ..r.clone()
    };
    assert_eq!(
        join_ends(Some(&complete), arrival(0), None),
        Some(RefusalCode::Busy)
    );
    // A stream index already joined, or past the session's count.
    let taken = SlotView {
        index_taken: true,
        ..r.clone()
    };
    assert_eq!(
        join_ends(Some(&taken), arrival(2), None),
        Some(RefusalCode::InvalidParameters)
    );
    assert_eq!(
        join_ends(Some(&r), arrival(4), None),
        Some(RefusalCode::InvalidParameters)
    );
    // In the clear for an encrypted session; another client's key.
    let clear = Arrival {
        encrypted: false,
        client_key: None,
        ..arrival(0)
    };
    assert_eq!(
        join_ends(Some(&r), clear, None),
        Some(RefusalCode::InvalidParameters)
    );
    let stranger = Arrival {
        client_key: Some([8; 32]),
        ..arrival(0)
    };
    assert_eq!(
        join_ends(Some(&r), stranger, None),
        Some(RefusalCode::InvalidParameters)
    );
    // Out of order: a data connection that sends anything but its join
    // (every other message: the_join_refuses_every_fault_at_every_step).
    let mut s = JoinServer::new(Instant::now(), Some(&r), arrival(0));
    s.handle(Instant::now(), Message::Start);
    assert!(matches!(
        s.poll_transmit(),
        Some(Message::Refuse(Refusal {
            code: RefusalCode::Malformed,
            ..
        }))
    ));
    assert!(matches!(
        s.poll_end(),
        Some(Err(SessionError::Unexpected { got: "start", .. }))
    ));
}
