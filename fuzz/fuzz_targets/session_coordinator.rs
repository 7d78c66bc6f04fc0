//! The coordinator's state machine, many agent connections at once, on
//! arbitrary sequences: connections coming and going, messages of any
//! type (raw frames too) on any of them, time passing on both clocks, a
//! stop. It never panics, everything it sends decodes, its deadlines are
//! in order, and once stopped it is over with an outcome naming every rank.
#![no_main]

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use linerate_fleet::plan;
use linerate_fleet::session::coordinator::{Coordinator, Now, PlannedStep, Settings};
use linerate_fleet::session::job_step::JobPlan;
use linerate_wire::{FrameDecoder, JobKind, Message, SocketParams};

#[path = "../common/session_ops.rs"]
mod ops;

const RANKS: u32 = 4;

fuzz_target!(|data: &[u8]| {
    let mut now = Now {
        at: std::time::Instant::now(),
        wall_ns: 1 << 60,
    };
    let settings = Settings {
        size: RANKS,
        join_within: Duration::from_secs(5),
        probes: 2,
        answer_within: Duration::from_secs(1),
        lead: Duration::from_millis(100),
        lead_per_flow: Duration::from_millis(1),
        duration: Duration::from_secs(1),
        interval_ms: 0,
        report_grace: Duration::from_secs(1),
        token: None,
        socket: SocketParams {
            tos: Some(0xb8),
            congestion: Some("cubic".into()),
            ..SocketParams::default()
        },
    };
    let mut steps: Vec<PlannedStep> = plan::incast(0, &[1, 2, 3], &[1, 2], &[3], &[8])
        .into_iter()
        .map(|s| PlannedStep {
            factors: BTreeMap::new(),
            flows: s.flows,
            job: None,
        })
        .collect();
    // A proxy job as the plan's last step: its ranks hand out their job
    // ports' peers and report iterations instead of flows.
    steps.push(PlannedStep {
        factors: BTreeMap::new(),
        flows: Vec::new(),
        job: Some(JobPlan {
            kind: JobKind::AllToAll,
            iterations: 3,
            compute_us: 0,
            grid: None,
            peers: (0..RANKS)
                .map(|r| linerate_fleet::job::all_to_all_peers(r, RANKS, 1024))
                .collect(),
        }),
    });
    let mut c = Coordinator::new(now, settings, Default::default(), steps);
    let mut o = ops::Ops::new(data);
    let mut decoder = FrameDecoder::new();
    while let Some(op) = o.byte() {
        let conn = usize::from(o.byte().unwrap_or(0) % 6);
        match op % 8 {
            0 => c.connected(conn, IpAddr::V4(Ipv4Addr::new(10, 0, 0, conn as u8))),
            1 => {
                let rank = o.byte().unwrap_or(0) as u32 % (RANKS + 1);
                c.handle(now, conn, Message::AgentJoin(Box::new(ops::agent_join(rank % RANKS, RANKS))));
            }
            2 | 3 => {
                let m = ops::any_message(&mut o);
                c.handle(now, conn, m);
            }
            4 => {
                let len = usize::from(o.byte().unwrap_or(0));
                let bytes: Vec<u8> = (0..len).map_while(|_| o.byte()).collect();
                decoder.push(&bytes);
                match decoder.next_frame() {
                    Ok(Some(frame)) => match Message::from_frame(&frame) {
                        Ok(m) => c.handle(now, conn, m),
                        Err(e) => c.handle_malformed(now, conn, e),
                    },
                    Ok(None) => {}
                    Err(e) => {
                        c.handle_malformed(now, conn, e);
                        decoder = FrameDecoder::new();
                    }
                }
            }
            5 => {
                let by = Duration::from_millis(100 * o.small());
                now.at += by;
                now.wall_ns += by.as_nanos() as u64;
                c.handle_timeout(now);
            }
            6 => c.handle_closed(now, conn),
            _ => c.stop("fuzz".into()),
        }
        if c.is_over() {
            assert!(c.poll_timeout().is_none());
        }
        while let Some((_, m)) = c.poll_transmit() {
            let back = Message::from_frame(&m.to_frame()).expect("what the coordinator sends decodes");
            assert_eq!(back, m);
        }
        while c.poll_close().is_some() {}
        while c.poll_event().is_some() {}
    }
    c.stop("end".into());
    let outcome = c.outcome().expect("a stopped run has an outcome");
    assert_eq!(outcome.hosts.len(), RANKS as usize);
});
