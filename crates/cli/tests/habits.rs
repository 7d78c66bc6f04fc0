//! What users of iperf3 type, and what they expect back: the real binary
//! against a real server (or a real iperf3) on loopback.

mod common;

use std::process::{Command, Stdio};
use std::time::Duration;

use common::{Guard, Server, alone_with_traffic, bench_json, run, text};

#[test]
fn bad_flag_values_exit_2_and_name_the_flag() {
    for (args, named) in [
        (vec!["bench", "127.0.0.1:1", "-l", "4X"], "--len"),
        (vec!["bench", "127.0.0.1:1", "--omit", "20", "-t", "2"], "--omit"),
        (vec!["bench", "127.0.0.1:1", "-P", "2000"], "--streams"),
        (vec!["bench", "127.0.0.1:1", "--cc", "no such"], "--cc"),
        (vec!["bench", "127.0.0.1:1", "-p", "7"], "--port"),
        (vec!["bench", "127.0.0.1", "--bogus"], "--bogus"),
        (vec!["send", "--block", "1K", "--from-memory", "1M", "127.0.0.1:1:/x"], "--block"),
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(named), "{args:?}: {err}");
        assert!(!err.contains("_len") && !err.contains("_ms"), "{args:?}: {err}");
    }
}

#[test]
fn port_and_total_rate_as_iperf_users_give_them() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    let doc = bench_json(
        "127.0.0.1",
        &["-p", &srv.port.to_string(), "-b", "1G", "-P", "2", "-t", "2"],
    );
    let bps = doc["summary"]["bits_per_second"].as_f64().unwrap();
    assert!((0.8e9..1.1e9).contains(&bps), "1 Gbit/s in total, measured {bps}");
    assert_eq!(doc["parameters"]["pacing_rate"], 62_500_000, "half of 1G each");
}

#[test]
fn no_interval_of_a_few_milliseconds_ends_a_run() {
    let _alone = alone_with_traffic();
    let srv = Server::start();
    for args in [["-t", "2", "-i", "0.5"], ["-t", "1", "-i", "1"]] {
        let doc = bench_json(&srv.addr(), &args);
        let intervals = doc["intervals"].as_array().unwrap();
        assert!(!intervals.is_empty());
        for i in intervals {
            let len = i["end"].as_f64().unwrap() - i["start"].as_f64().unwrap();
            assert!(len >= 0.02, "{args:?}: an interval of {len} s: {i}");
        }
    }
}

#[test]
fn an_iperf3_server_is_named_as_such() {
    let port = common::free_port();
    let iperf3 = Command::new("iperf3")
        .args(["-s", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("iperf3 is installed (.ci/run installs it)");
    let _iperf3 = Guard(iperf3);
    std::thread::sleep(Duration::from_millis(500));
    let out = run(&["bench", &format!("127.0.0.1:{port}"), "-t", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("answers like an iperf3 server"), "{err}");
}
