//! The peers' output parsers (iperf2 CSV, iperf3 JSON, nuttcp -fparse) on
//! arbitrary text: never panic, and whatever they accept is finite.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_peers::parse;

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
});
