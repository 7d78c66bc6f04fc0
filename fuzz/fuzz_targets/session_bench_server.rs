//! The bench server's state machine on arbitrary message sequences.
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
    ops::run(data, BenchServer::new(now, ops::accept()), |s, now, how| {
        while let Some(e) = s.poll_event() {
            match (e, how % 4) {
                (Event::Register(_), 0) => s.abort(SessionError::local(RefusalCode::Busy, "busy")),
                (Event::Register(_), 1) => s.registered(now),
                (Event::Register(_), _) => {
                    s.registered(now);
                    s.streams_connected(now);
                }
                (Event::RegisterLatency(_), _) => panic!("a bench server took a latency request"),
                // Still running: intervals go out, the report comes later.
                (Event::Run, 3) => s.interval(&[]),
                (Event::Run, _) => s.ran(SideReport::default()),
            }
        }
        match how % 8 {
            1 | 5 => s.streams_connected(now),
            6 => s.ran(SideReport::default()),
            7 => s.interval(&[]),
            _ => {}
        }
    });
});
