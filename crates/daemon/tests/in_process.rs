//! The engine's client ends against the daemon, both in this process, on
//! loopback: a server bound to port 0 that hands back its address
//! (`Running`), no binary spawned, no port chosen by the test. What is
//! asserted is what arrived and how it is counted, never how fast.
// A failed expectation is the test's failure, in helpers too.
#![allow(clippy::unwrap_used)]

use linerate_daemon::{Running, Server};
use linerate_engine::spec::BenchOptions;
use linerate_engine::spec::{BenchSpec, LatencySpec};
use linerate_engine::{bench, latency};
use linerate_result::Side;
use linerate_wire::Direction;

fn server() -> Running {
    Running::start(Server::bind("127.0.0.1:0".parse().unwrap()).unwrap()).unwrap()
}

#[test]
fn every_stream_of_a_bench_moves_data_and_both_ends_count_the_same_bytes() {
    let server = server();
    for direction in [Direction::Forward, Direction::Reverse] {
        let spec = BenchSpec {
            options: BenchOptions {
                streams: 4,
                duration_ms: 400,
                interval_ms: 100,
                direction,
                ..BenchOptions::default()
            },
            ..BenchSpec::default()
        };
        let run = bench::run(server.addr(), &spec, None, &mut |_, _| {})
            .unwrap_or_else(|e| panic!("{direction:?}: {e}"));
        // The receiving end is the server going forward, the client in reverse.
        let (receiver, sender) = match direction {
            Direction::Forward => (&run.server, &run.client),
            _ => (&run.client, &run.server),
        };
        let received: Vec<_> = receiver
            .streams
            .iter()
            .filter(|s| s.side == Side::Receiver)
            .collect();
        assert_eq!(
            received.len(),
            4,
            "{direction:?}: one receiving end a stream"
        );
        assert!(
            received.iter().all(|s| s.bytes_total > 0),
            "{direction:?}: every stream moved data: {received:?}"
        );
        // Every byte a sender wrote arrived: TCP loses none, and each end
        // counts its own.
        assert_eq!(
            sender.bytes_total(Side::Sender),
            receiver.bytes_total(Side::Receiver),
            "{direction:?}"
        );
        assert!(!receiver.intervals.is_empty(), "{direction:?}: sampled");
    }
    server.stop().expect("the server ends well");
}

#[test]
fn a_latency_run_measures_every_size_it_was_asked_for_in_order() {
    let server = server();
    let spec = LatencySpec {
        sizes: vec![1, 4096],
        step_ms: 200,
        ..LatencySpec::default()
    };
    let run = latency::run(server.addr(), &spec, None, &mut |_| {}).expect("a latency run");
    let sizes: Vec<u32> = run.steps.iter().map(|s| s.request_bytes).collect();
    assert_eq!(sizes, [1, 4096]);
    for s in &run.steps {
        let p = &s.round_trip_us;
        assert!(s.rounds > 0, "{s:?}");
        assert!(
            p.min <= p.p50 && p.p50 <= p.p99 && p.p99 <= p.max,
            "percentiles in order: {p:?}"
        );
    }
}
