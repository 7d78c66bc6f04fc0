//! End-to-end: `linerate bench --udp` against a real server: datagrams
//! paired on the server's own port, counted at the receiver.

use crate::common;

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
        if flags == ["-R"] {
            let kinds = common::report_kinds(&doc, "udp-report");
            assert!(kinds.iter().any(|k| k == "udp-loss-jitter"), "{kinds:?}");
        }
    }
    // The console's summary counts what UDP loses, never TCP's retransmits.
    let out = run(&["bench", &srv.addr(), "--udp", "-b", "100M", "-t", "1"]);
    assert!(out.status.success(), "{}", text(&out));
    let console = String::from_utf8_lossy(&out.stdout);
    assert!(console.contains("Received "), "{console}");
    assert!(!console.contains("retransmits"), "{console}");
}

/// Datagram sizes outside what UDP and the header allow are refused as
/// bad flags.
#[test]
fn datagram_sizes_outside_limits_are_refused() {
    let _traffic = common::beside_other_traffic();
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

/// `--find-rate`: a ceiling loopback carries passes in one probe; a receive
/// buffer too small for the ceiling makes the search come down, every probe
/// recorded, and the verdict says why the next rate up failed.
#[test]
fn find_rate_searches_down_from_the_ceiling_to_a_loss_free_rate() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    // A sender that waited for a core (other work beside the test) may
    // send under 95 % of the ceiling, losing nothing: a few tries.
    let ceiling = || {
        bench_json(
            &srv.addr(),
            &["--udp", "--find-rate", "-b", "100M", "-t", "0.5"],
        )
    };
    let one_probe = |d: &serde_json::Value| {
        d["parameters"]["rate_search"]["probes"]
            .as_array()
            .map(Vec::len)
            == Some(1)
    };
    let mut doc = ceiling();
    for _ in 0..2 {
        if one_probe(&doc) {
            break;
        }
        doc = ceiling();
    }
    common::assert_matches_schema(&doc);
    let search = &doc["parameters"]["rate_search"];
    assert_eq!(search["probes"].as_array().unwrap().len(), 1, "{search}");
    assert_eq!(search["highest_loss_free_bps"], 100_000_000u64, "{search}");
    assert_eq!(doc["summary"]["verdict"]["limit"], "application");

    let args = [
        "--udp",
        "--find-rate",
        "-b",
        "4G",
        "-t",
        "0.5",
        "--probes",
        "5",
        "-w",
        "4K",
        "--no-gro",
    ];
    let doc = bench_json(&srv.addr(), &args);
    common::assert_matches_schema(&doc);
    let search = &doc["parameters"]["rate_search"];
    let probes = search["probes"].as_array().unwrap();
    assert!(probes.len() > 1 && probes.len() <= 5, "{search}");
    assert_eq!(probes[0]["passed"], false, "4 KiB at 4 Gbit/s: {search}");
    let best = search["highest_loss_free_bps"]
        .as_u64()
        .expect("a rate passed");
    for p in probes.iter().filter(|p| p["passed"] == true) {
        assert_eq!(p["lost"], 0);
        assert!(p["rate_bps"].as_u64().unwrap() <= best);
    }
    let received = doc["summary"]["bits_per_second"].as_f64().unwrap();
    assert!(received >= 0.95 * best as f64, "{received} for {best}");
    let v = &doc["summary"]["verdict"];
    assert!(
        v["sentence"].as_str().unwrap().contains("it did not"),
        "{v}"
    );
    assert_eq!(
        v["evidence"]["highest_loss_free_bits_per_second"].as_f64(),
        Some(best as f64)
    );
}
