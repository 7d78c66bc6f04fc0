//! End-to-end: `linerate bench --udp` against a real server: datagrams
//! paired on the server's own port, counted at the receiver.

mod common;

use common::{Server, alone_with_traffic, bench_json, run, text};

fn receivers(doc: &serde_json::Value) -> Vec<&serde_json::Value> {
    doc["streams"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["side"] == "receiver")
        .collect()
}

/// At a rate loopback carries: nothing lost, every datagram the sender
/// counted arrived, intervals carry the receiver's counts, and the
/// verdict says no loss at the rate asked.
#[test]
fn udp_at_a_rate_the_path_carries_loses_nothing() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    for flags in [&["-P", "2"][..], &["-R"], &["--no-gso", "--no-gro"]] {
        let mut args = vec!["--udp", "-b", "200M", "-t", "2", "-i", "0.5"];
        args.extend_from_slice(flags);
        let doc = bench_json(&srv.addr(), &args);
        common::assert_matches_schema(&doc);
        assert_eq!(doc["parameters"]["protocol"], "udp", "{flags:?}");
        for r in receivers(&doc) {
            let u = &r["udp"];
            let sent = u["sent"].as_u64().expect("the sender's count came");
            assert!(sent > 10_000, "{flags:?}: {sent} datagrams");
            assert_eq!(u["lost"], 0, "{flags:?}: {u}");
            assert_eq!(u["datagrams"].as_u64(), Some(sent), "{flags:?}");
            assert!(u["jitter_us"].as_f64().unwrap() >= 0.0);
        }
        let rate = doc["summary"]["bits_per_second"].as_f64().unwrap();
        assert!(
            (rate / 200e6 - 1.0).abs() < 0.1,
            "{flags:?}: {rate} bit/s for 200M"
        );
        assert!(
            doc["intervals"]
                .as_array()
                .unwrap()
                .iter()
                .any(|i| i["udp"]["datagrams"].as_u64() > Some(0)),
            "{flags:?}: intervals with the receiver's counts"
        );
        let v = &doc["summary"]["verdict"];
        assert_eq!(v["limit"], "application", "{flags:?}: {v}");
        assert!(v["sentence"].as_str().unwrap().contains("No loss"), "{v}");
    }
}

/// Datagram sizes outside what UDP and the header allow are refused as
/// bad flags.
#[test]
fn datagram_sizes_outside_limits_are_refused() {
    for len in ["8", "70000"] {
        let out = run(&["bench", "127.0.0.1:9", "--udp", "-l", len]);
        assert_eq!(out.status.code(), Some(2), "-l {len}: {}", text(&out));
        assert!(text(&out).contains("-l/--len"), "{}", text(&out));
    }
    let out = run(&["bench", "127.0.0.1:9", "--udp", "-b", "5T"]);
    assert_eq!(out.status.code(), Some(2), "-b 5T: {}", text(&out));
    assert!(text(&out).contains("-b/--bitrate"), "{}", text(&out));
    let out = run(&["bench", "127.0.0.1:9", "--no-gso"]);
    assert_eq!(out.status.code(), Some(2), "--no-gso needs --udp");
}

/// A receive buffer too small for the rate: the kernel's per-socket drop
/// count (SO_RXQ_OVFL's) accounts for every datagram lost, and the verdict
/// names the receiver's buffer, not the path.
#[test]
fn a_full_receive_buffer_is_named_with_the_kernels_drop_count() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    // Without GRO the kernel counts each dropped datagram once.
    let args = ["--udp", "-b", "2G", "-t", "1", "-w", "4K", "--no-gro"];
    let doc = bench_json(&srv.addr(), &args);
    common::assert_matches_schema(&doc);
    let u = &receivers(&doc)[0]["udp"];
    let lost = u["lost"].as_u64().unwrap();
    assert!(lost > 0, "a 4 KiB buffer at 2 Gbit/s overflows: {u}");
    assert_eq!(u["buffer_drops"].as_u64(), Some(lost), "{u}");
    let v = &doc["summary"]["verdict"];
    assert_eq!(v["limit"], "receiver_window", "{v}");
    assert_eq!(v["side"], "receiver", "{v}");
    assert_eq!(
        v["evidence"]["receive_buffer_drops"].as_f64(),
        Some(lost as f64)
    );
    assert!(
        v["evidence"]["host_udp_rcvbuf_errors"].as_f64().unwrap() >= lost as f64,
        "{v}"
    );
}
