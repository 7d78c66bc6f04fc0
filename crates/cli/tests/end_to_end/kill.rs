//! Peers that die mid-run: the server survives a killed client, and a client
//! whose server is killed exits non-zero with a clear message within 5 s.

use crate::common;

use std::io::Read;
use std::process::Stdio;
use std::time::{Duration, Instant};

use common::{Guard, Server, bench_json};

fn start_bench(addr: &str, extra: &[&str]) -> Guard {
    let child = common::linerate_cmd()
        .args(["bench", addr, "-t", "30", "-i", "0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    Guard(child)
}

#[test]
fn client_killed_mid_run_leaves_the_server_healthy() {
    let _traffic = common::beside_other_traffic();
    for extra in [&["-P", "2"][..], &["-R"][..]] {
        let mut srv = Server::start();
        let mut client = start_bench(&srv.addr(), extra);
        common::wait_moving(None, srv.port, 8 << 20);
        client.0.kill().unwrap();
        client.0.wait().unwrap();
        assert!(
            srv.wait_log(Duration::from_secs(10), |l| l
                .iter()
                .any(|x| x.contains("session"))),
            "the session's end was logged"
        );
        assert!(srv.is_running());
        let doc = bench_json(&srv.addr(), &["-t", "1"]);
        assert!(doc["summary"]["bits_per_second"].as_f64().unwrap() > 0.0);
    }
}

#[test]
fn server_killed_mid_run_fails_the_client_quickly() {
    let _traffic = common::beside_other_traffic();
    for extra in [&["-P", "2"][..], &["-R"][..], &["--bidir"][..]] {
        let mut srv = Server::start();
        let mut client = start_bench(&srv.addr(), extra);
        common::wait_moving(None, srv.port, 8 << 20);
        srv.child.kill().unwrap();
        let killed = Instant::now();
        let status = wait_bounded(&mut client.0, Duration::from_secs(20));
        let took = killed.elapsed();
        let status =
            status.unwrap_or_else(|| panic!("client hung after its server died ({extra:?})"));
        assert!(!status.success(), "client must fail ({extra:?})");
        assert!(
            took < Duration::from_secs(5),
            "client took {took:?} to notice ({extra:?})"
        );
        let mut err = String::new();
        client
            .0
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut err)
            .unwrap();
        assert!(
            err.contains("linerate: error:") && err.contains("server"),
            "unclear message: {err}"
        );
    }
}

fn wait_bounded(
    child: &mut std::process::Child,
    limit: Duration,
) -> Option<std::process::ExitStatus> {
    let end = Instant::now() + limit;
    while Instant::now() < end {
        if let Some(status) = child.try_wait().unwrap() {
            return Some(status);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}
