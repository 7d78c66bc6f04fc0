//! The peers' output parsers (iperf2 CSV, iperf3 JSON, nuttcp -fparse; the
//! latency peers' sockperf, qperf and iperf2 --bounceback; the UDP peers'
//! iperf2 and iperf3 reports) on arbitrary text: never panic, and whatever
//! they accept is finite and consistent.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_compare::tools::{datagrams, parse, rounds};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for run in [
        parse::iperf2_csv(&text),
        parse::iperf3_json(&text),
        parse::nuttcp_parse(&text, 2),
    ]
    .into_iter()
    .flatten()
    {
        assert!(run.bits_per_second.is_finite() && run.seconds.is_finite());
    }
    for run in [
        rounds::sockperf(&text),
        rounds::qperf(&text),
        rounds::iperf2_bounceback(&text),
    ]
    .into_iter()
    .flatten()
    {
        assert!(run.mean_us.is_finite() && run.mean_us >= 0.0);
        assert!(run.central_us().is_finite());
    }
    for run in [datagrams::iperf2_udp(&text), datagrams::iperf3_udp(&text)]
        .into_iter()
        .flatten()
    {
        assert!(run.bits_per_second.is_finite() && run.seconds.is_finite());
        assert!(run.lost <= run.datagrams);
        assert!((0.0..=1.0).contains(&run.loss()));
    }
});
