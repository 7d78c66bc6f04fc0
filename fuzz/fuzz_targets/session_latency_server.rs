//! The latency server's state machine (the bench server taking a latency
//! request) on arbitrary message sequences.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_result::SideReport;
use linerate_session::bench_server::Event;
use linerate_session::{BenchServer, Session, SessionError};
use linerate_wire::RefusalCode;

#[path = "../common/session_ops.rs"]
mod ops;

fuzz_target!(|data: &[u8]| {
    let now = std::time::Instant::now();
    ops::run(data, BenchServer::latency(now, ops::accept()), |s, now, how| {
        while let Some(e) = s.poll_event() {
            match (e, how % 3) {
                (Event::Register(_), _) => panic!("a latency server took a bench request"),
                (Event::RegisterLatency(_), 0) => {
                    s.abort(SessionError::local(RefusalCode::Busy, "busy"))
                }
                (Event::RegisterLatency(_), 1) => s.registered(now),
                (Event::RegisterLatency(_), _) => {
                    s.registered(now);
                    s.streams_connected(now);
                }
                (Event::Run, _) => s.ran(SideReport::default()),
            }
        }
        if how % 4 == 1 {
            s.streams_connected(now);
        }
    });
});
