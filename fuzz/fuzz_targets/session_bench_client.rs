//! The bench client's state machine on arbitrary message sequences.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_session::bench_client::Event;
use linerate_session::{BenchClient, Session};

#[path = "../common/session_ops.rs"]
mod ops;

fuzz_target!(|data: &[u8]| {
    let now = std::time::Instant::now();
    ops::run(data, BenchClient::new(now), |c, now, how| {
        while let Some(e) = c.poll_event() {
            match e {
                Event::Accepted(_) => c.request(
                    now,
                    {
                        let mut p = ops::params();
                        p.plan.peer_intervals = how % 4 < 2;
                        p
                    },
                ),
                Event::OpenStreams => c.streams_open(),
                Event::PeerIntervals(_) => {}
            }
        }
        if how % 2 == 1 {
            c.run_over(now);
        }
    });
});
