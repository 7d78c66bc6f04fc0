//! End-to-end: the real binary, a real server, real loopback TCP.

use crate::common;

use common::{Server, alone_with_traffic, bench_json};

fn limit(doc: &serde_json::Value) -> String {
    doc["summary"]["verdict"]["limit"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

#[test]
fn forward_run_merges_both_ends_and_matches_the_schema() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let doc = bench_json(&srv.addr(), &["-P", "2", "-t", "2", "-i", "0.5"]);
    common::assert_matches_schema(&doc);

    assert_eq!(doc["schema"], "linerate.result/1");
    assert_eq!(doc["kind"], "bench");
    let streams = doc["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 4, "two streams, two ends each");
    for s in streams {
        assert_eq!(s["flow"], "client_to_server");
        assert!(s["bytes"].as_u64().unwrap() > 0);
        assert!(s["tcp"]["rtt_us"].as_u64().is_some());
    }
    let intervals = doc["intervals"].as_array().unwrap();
    assert!(
        intervals
            .iter()
            .any(|i| i["side"] == "sender" && i["tcp"]["snd_cwnd"].as_u64() > Some(0))
    );
    assert!(
        intervals.iter().any(|i| i["side"] == "receiver"),
        "the server's samples came back"
    );
    let s = &doc["summary"];
    assert!(s["bits_per_second"].as_f64().unwrap() > 1e8);
    assert!(s["cpu_seconds_per_gb"]["sender"].as_f64().unwrap() > 0.0);
    assert!(s["cpu_seconds_per_gb"]["receiver"].as_f64().unwrap() > 0.0);
    assert!(doc["hosts"]["server"]["sysctls"]["net.ipv4.tcp_rmem"].is_string());
    let received: u64 = streams
        .iter()
        .filter(|s| s["side"] == "receiver")
        .map(|s| s["bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(s["bytes"].as_u64().unwrap(), received);
}

#[test]
fn reverse_bidir_and_byte_count() {
    let _traffic = common::beside_other_traffic();
    let srv = Server::start();
    // The server sends: what it sends (--payload) travels to it.
    let rev = bench_json(&srv.addr(), &["-R", "-t", "1", "--payload", "zeros"]);
    let ends = rev["streams"].as_array().unwrap();
    assert!(ends.iter().all(|s| s["flow"] == "server_to_client"));
    assert!(rev["summary"]["bytes"].as_u64().unwrap() > 0);
    assert_eq!(rev["parameters"]["payload"], "zeros");

    let bidir = bench_json(&srv.addr(), &["--bidir", "-t", "1"]);
    let flows: Vec<&str> = bidir["streams"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["flow"].as_str().unwrap())
        .collect();
    assert!(flows.contains(&"client_to_server") && flows.contains(&"server_to_client"));
    // Each direction has its own totals, and the summary is their sum.
    let dirs = bidir["summary"]["directions"]
        .as_array()
        .expect("per-direction totals");
    assert_eq!(dirs.len(), 2, "{}", bidir["summary"]);
    assert_eq!(dirs[0]["flow"], "client_to_server");
    assert_eq!(dirs[1]["flow"], "server_to_client");
    let summed: u64 = dirs.iter().map(|d| d["bytes"].as_u64().unwrap()).sum();
    assert_eq!(summed, bidir["summary"]["bytes"].as_u64().unwrap());
    assert!(
        dirs.iter()
            .all(|d| d["bits_per_second"].as_f64().unwrap() > 0.0)
    );
    common::assert_matches_schema(&bidir);
    assert!(
        bidir["parameters"].get("payload").is_none(),
        "random: the default"
    );
    assert!(
        rev["summary"].get("directions").is_none(),
        "one way: no split"
    );

    let omitted = bench_json(&srv.addr(), &["--omit", "1", "-t", "2"]);
    for s in omitted["streams"].as_array().unwrap() {
        let (kept, all) = (
            s["bytes"].as_u64().unwrap(),
            s["bytes_total"].as_u64().unwrap(),
        );
        assert!(
            kept > 0 && kept < all,
            "the first second is left out: {kept} of {all}"
        );
        assert!(
            s["seconds"].as_f64().unwrap() < 1.5,
            "seconds count from the end of the warm-up"
        );
    }

    let counted = bench_json(&srv.addr(), &["-n", "100M", "-P", "3"]);
    assert_eq!(
        counted["summary"]["bytes"].as_u64(),
        Some(100 << 20),
        "exactly the bytes asked for"
    );
}

#[test]
fn tiny_receive_window_is_named() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let doc = bench_json(&srv.addr(), &["--window", "4K", "-t", "2"]);
    assert_eq!(
        limit(&doc),
        "receiver_window",
        "{}",
        doc["summary"]["verdict"]
    );
    assert!(
        doc["summary"]["verdict"]["sentence"]
            .as_str()
            .unwrap()
            .contains("window")
    );
}

#[test]
fn tiny_send_buffer_is_named() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let doc = bench_json(&srv.addr(), &["--sndbuf", "4K", "-t", "2"]);
    assert_eq!(limit(&doc), "send_buffer", "{}", doc["summary"]["verdict"]);
}

#[test]
fn unconstrained_loopback_is_cpu_bound() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let doc = bench_json(&srv.addr(), &["-t", "2"]);
    assert_eq!(limit(&doc), "cpu", "{}", doc["summary"]["verdict"]);
}

#[test]
fn bad_flags_fail_with_a_clear_message() {
    let _traffic = common::beside_other_traffic();
    let out = common::run(&["bench", "127.0.0.1:1", "-l", "4X"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown size unit"));
    let out = common::run(&["bench", "127.0.0.1:1", "-t", "1"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("connecting to 127.0.0.1:1"), "{err}");
}

#[test]
fn a_pacing_cap_is_named_and_held() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let doc = bench_json(&srv.addr(), &["--fq-rate", "1G", "-t", "2"]);
    assert_eq!(limit(&doc), "application", "{}", doc["summary"]["verdict"]);
    let bps = doc["summary"]["bits_per_second"].as_f64().unwrap();
    assert!(
        (0.8e9..1.1e9).contains(&bps),
        "paced at 1 Gbit/s, measured {bps}"
    );
    assert_eq!(
        doc["parameters"]["rx_poll"], false,
        "a paced reader does not poll"
    );
    assert!(
        doc["parameters"]["rcvlowat"].is_null(),
        "loopback readers wake for any data"
    );
}

#[test]
fn zerocopy_and_skip_rx_copy_move_the_bytes_asked_for() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    for flag in ["--zerocopy", "--skip-rx-copy"] {
        let doc = bench_json(&srv.addr(), &[flag, "-n", "64M", "-P", "2"]);
        assert_eq!(doc["summary"]["bytes"].as_u64(), Some(64 << 20), "{flag}");
        assert_eq!(
            doc["parameters"][flag.trim_start_matches("--").replace('-', "_")],
            true
        );
    }
}

#[test]
fn threads_multiplex_streams_onto_fewer_loops_and_say_so() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let threads = |doc: &serde_json::Value| {
        let t = &doc["parameters"]["stream_threads"];
        (t["client"].as_u64(), t["server"].as_u64())
    };
    // Six streams on two loops at each end: every stream carries exactly
    // its share, every receiver takes all of it.
    let counted = bench_json(
        &srv.addr(),
        &["-n", "60M", "-P", "6", "--threads", "2", "-i", "0"],
    );
    assert_eq!(threads(&counted), (Some(2), Some(2)));
    assert_eq!(counted["summary"]["bytes"].as_u64(), Some(60 << 20));
    let streams = counted["streams"].as_array().unwrap();
    assert_eq!(streams.len(), 12, "six streams, two ends each");
    for s in streams {
        assert_eq!(s["bytes"].as_u64(), Some(10 << 20), "{s}");
        assert!(s["error"].is_null(), "{s}");
        assert!(s["cpu_seconds"].as_f64().unwrap() >= 0.0);
    }
    // A timed run ends at its deadline without an error, both ways at once:
    // the senders and the receivers of each end on loops of their own.
    let timed = bench_json(
        &srv.addr(),
        &[
            "-t",
            "1",
            "-P",
            "4",
            "--bidir",
            "--threads",
            "1",
            "-i",
            "0.5",
        ],
    );
    assert_eq!(threads(&timed), (Some(2), Some(2)));
    for s in timed["streams"].as_array().unwrap() {
        assert!(
            s["bytes"].as_u64().unwrap() > 0 && s["error"].is_null(),
            "{s}"
        );
    }
    assert!(!timed["intervals"].as_array().unwrap().is_empty());
    // The default is a thread a stream.
    let default = bench_json(&srv.addr(), &["-t", "1", "-P", "3", "-i", "0"]);
    assert_eq!(threads(&default), (Some(3), Some(3)));
    // UDP and TLS streams keep a thread each: the flag is refused there.
    let out = common::run(&["bench", &srv.addr(), "--udp", "--threads", "2"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    assert!(common::text(&out).contains("--threads"));
}

/// Flags that name nothing that can be are bad flags (exit 2), said in
/// the user's words, before anything connects.
#[test]
fn a_port_out_of_range_and_unpaired_stripes_are_bad_flags() {
    let _traffic = common::beside_other_traffic();
    let out = common::run(&["bench", "127.0.0.1:99999"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    assert!(
        common::text(&out).contains("port 99999 is out of range"),
        "{}",
        common::text(&out)
    );
    let out = common::run(&["bench", "127.0.0.1", "-B", "127.0.0.1,127.0.0.2"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    assert!(
        common::text(&out).contains("--stripe"),
        "{}",
        common::text(&out)
    );
    let out = common::run(&[
        "bench",
        "127.0.0.1",
        "--stripe",
        "127.0.0.1,127.0.0.2",
        "-B",
        "127.0.0.1,127.0.0.2,127.0.0.3",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
    let out = common::run(&["latency", "127.0.0.1", "-B", "127.0.0.1,127.0.0.2"]);
    assert_eq!(out.status.code(), Some(2), "{}", common::text(&out));
}
