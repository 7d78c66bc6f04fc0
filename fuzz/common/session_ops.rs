//! Shared by the session fuzz targets: turns arbitrary bytes into a
//! sequence of what can happen to a session's state machine (a message of
//! any type with fuzzed fields, raw frame bytes, time passing, the peer
//! leaving, the driver acting), then checks that the machine never panics,
//! that everything it sends decodes, and that it ends with a typed end.

use std::time::{Duration, Instant};

use linerate_result::SideReport;
use linerate_session::Session;
use linerate_result::fleet::FlowResult;
use linerate_wire::{
    AgentJoin, AgentReport, AgentTask, ClockEcho, ClockProbe, JobKind, JobPeer, JobReport,
    JobTask, SocketParams, TaskFlow,
    Digests, Entries, Entry, EntryKind, FrameDecoder, Message, Need, NeedEnd, NeedFile, PeerIntervals,
    Ready, Refusal, RefusalCode, TransferTotals,
};

pub struct Ops<'a> {
    data: &'a [u8],
}

impl<'a> Ops<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Ops { data }
    }

    pub fn byte(&mut self) -> Option<u8> {
        let (&b, rest) = self.data.split_first()?;
        self.data = rest;
        Some(b)
    }

    fn bytes(&mut self, n: usize) -> &'a [u8] {
        let n = n.min(self.data.len());
        let (head, rest) = self.data.split_at(n);
        self.data = rest;
        head
    }

    pub fn small(&mut self) -> u64 {
        u64::from(self.byte().unwrap_or(0))
    }
}

pub use linerate_session::fixtures::{TOKEN, accept, params};

/// A transfer request, with the one-shot token or none.
pub fn request(token: bool, verify: bool) -> linerate_wire::TransferRequest {
    linerate_session::fixtures::request(token.then_some(TOKEN), verify)
}

pub fn entry(n: u64) -> Entry {
    Entry {
        path: format!("f{n}"),
        mode: 0o644,
        mtime_ns: 0,
        kind: EntryKind::File {
            size: n << 20,
            sparse: false,
            digest: None,
        },
        owner: None,
        xattrs: Vec::new(),
    }
}

pub fn need(id: u64) -> NeedFile {
    NeedFile {
        id: id as u32,
        ranges: vec![[0, 1 + id % 3]],
    }
}

/// An agent's join as `rank` of `size`.
pub fn agent_join(rank: u32, size: u32) -> AgentJoin {
    AgentJoin {
        rank,
        size,
        name: format!("h{rank}"),
        data_port: 5201,
        host: linerate_result::HostFacts::default(),
        token: None,
        job_port: if rank % 2 == 0 { 5301 } else { 0 },
    }
}

/// A proxy-job rank's task, its size from `n` (iterations of 0 and peers
/// of 0 bytes included, which the machines must refuse).
fn job_task(n: u64) -> JobTask {
    JobTask {
        kind: if n % 2 == 0 { JobKind::Halo3d } else { JobKind::AllToAll },
        iterations: (n % 7) as u32,
        compute_us: 0,
        socket: SocketParams {
            tos: (n % 3 == 0).then_some(0x20),
            ..SocketParams::default()
        },
        peers: (0..n % 3)
            .map(|i| JobPeer {
                rank: i as u32,
                addr: "127.0.0.1:5301".parse().unwrap(),
                bytes: (n % 5) as u32 * 1024,
            })
            .collect(),
    }
}

/// A message of any type, its fields from the input.
pub fn any_message(ops: &mut Ops) -> Message {
    message(ops)
}

/// A message of any type, its fields from the input.
fn message(ops: &mut Ops) -> Message {
    let kind = ops.byte().unwrap_or(0) % 24;
    let n = ops.small();
    match kind {
        0 => Message::Accept(accept()),
        1 => Message::Refuse(Refusal {
            code: RefusalCode::Busy,
            message: "busy".into(),
        }),
        2 => Message::BenchRequest(params()),
        3 => Message::Ready(Ready {}),
        4 => Message::Start,
        5 => Message::Report(Box::default()),
        6 => Message::TransferRequest(request(n % 2 == 0, n % 3 == 0)),
        7 => Message::Entries(Entries {
            entries: (0..n % 4).map(entry).collect(),
        }),
        8 => Message::EntriesEnd,
        9 => Message::Need(Need {
            files: (0..n % 4).map(need).collect(),
        }),
        10 => Message::NeedEnd(NeedEnd {
            round: (n % 4) as u32,
            blocks: n,
            bytes: n << 20,
        }),
        11 => Message::Finish,
        12 => Message::Digests(Digests {
            files: (0..n % 3).map(|i| (i as u32, "d".into())).collect(),
        }),
        13 => Message::TransferReport(Box::new((TransferTotals::default(), SideReport::default()))),
        14 => Message::Intervals(PeerIntervals::default()),
        15 => Message::LatencyRequest(linerate_session::fixtures::latency_params()),
        16 => Message::AgentJoin(Box::new(agent_join(n as u32 % 5, 4))),
        17 => Message::ClockProbe(ClockProbe {
            seq: (n % 6) as u32,
            coordinator_ns: n << 20,
        }),
        18 => Message::ClockEcho(ClockEcho {
            seq: (n % 6) as u32,
            coordinator_ns: n << 20,
            agent_received_ns: (n << 20) + n,
            agent_sent_ns: (n << 20) + 2 * n,
        }),
        19 => Message::AgentTask(AgentTask {
            step: (n % 3) as u32,
            start_at_ns: n << 24,
            duration_ms: 1 + n,
            interval_ms: 0,
            flows: (0..n % 3)
                .map(|i| TaskFlow {
                    flow: i as u32,
                    to: "127.0.0.1:5201".parse().unwrap(),
                    streams: 1,
                    message_bytes: 1 << 16,
                    socket: SocketParams {
                        tos: (i == 1).then_some(0xb8),
                        congestion: (i == 2).then(|| "c".repeat(n as usize % 20)),
                        ..SocketParams::default()
                    },
                })
                .collect(),
            job: (n % 4 == 1).then(|| job_task(n)),
        }),
        20 => Message::AgentReport(AgentReport {
            step: (n % 3) as u32,
            flows: (0..n % 4)
                .map(|i| (i as u32, FlowResult::default()))
                .collect(),
            job: (n % 4 == 1).then(|| JobReport {
                iteration_ns: (0..n % 5).map(|i| 1000 * (i + 1)).collect(),
                error: (n % 8 == 5).then(|| "reset".into()),
            }),
        }),
        21 => Message::Dismiss,
        22 => Message::Join(linerate_wire::Join {
            token: match n % 3 {
                0 => Some(TOKEN.into()),
                1 => Some(format!("{n:032x}")),
                _ => None,
            },
        }),
        _ => Message::Entries(Entries {
            entries: vec![entry(n)],
        }),
    }
}

/// Plays `data` against `s`; `driver` answers the machine's events, its
/// byte choosing how.
pub fn run<S: Session>(data: &[u8], mut s: S, mut driver: impl FnMut(&mut S, Instant, u8)) {
    let mut now = Instant::now();
    let mut ops = Ops::new(data);
    let mut decoder = FrameDecoder::new();
    while let Some(op) = ops.byte() {
        match op % 8 {
            0..=3 => {
                let m = message(&mut ops);
                s.handle(now, m);
            }
            4 => {
                let len = usize::from(ops.byte().unwrap_or(0));
                decoder.push(ops.bytes(len));
                loop {
                    match decoder.next_frame() {
                        Ok(Some(frame)) => match Message::from_frame(&frame) {
                            Ok(m) => s.handle(now, m),
                            Err(e) => s.handle_malformed(e),
                        },
                        Ok(None) => break,
                        Err(e) => {
                            s.handle_malformed(e);
                            decoder = FrameDecoder::new();
                            break;
                        }
                    }
                }
            }
            5 => {
                now += Duration::from_millis(250 * ops.small());
                s.handle_timeout(now);
            }
            6 => s.handle_closed(),
            _ => {
                let how = ops.byte().unwrap_or(0);
                driver(&mut s, now, how);
            }
        }
        assert!(s.poll_timeout().is_none() || !s.is_over());
        check_sent(&mut s);
    }
    s.handle_closed();
    check_sent(&mut s);
    assert!(s.is_over(), "a closed session has ended");
    assert!(s.poll_end().is_some(), "with a typed end");
    assert!(s.poll_end().is_none(), "taken once");
}

/// Everything the machine sends decodes to itself.
fn check_sent<S: Session>(s: &mut S) {
    while let Some(m) = s.poll_transmit() {
        let back = Message::from_frame(&m.to_frame()).expect("what a machine sends decodes");
        assert_eq!(back, m);
    }
}
