//! A daemon that one source cannot lock out: 3,000 connections from one
//! address that never send their hello (and, apart, 3,000 that trickle it
//! a byte every 4 s), each reopened as soon as the server closes it, while
//! a client from another address runs a bench and a transfer. Both succeed,
//! and the server's threads and memory stay bounded.

use crate::common;

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::time::{Duration, Instant};

use common::tree::TempDir;
use common::{Server, alone_with_traffic, text};

const FLOOD: usize = 3000;

/// Holds `FLOOD` connections from 127.0.0.2 open against `to`, reopening
/// each the server closes; with `trickle`, each sends the next byte of a
/// hello every 4 s. Runs until `stop`; returns how many it (re)opened.
fn flood(to: SocketAddr, trickle: bool, stop: &AtomicBool) -> usize {
    let hello = linerate_wire::MAGIC;
    let mut conns: Vec<(Option<TcpStream>, usize)> = (0..FLOOD).map(|_| (None, 0)).collect();
    let mut opened = 0;
    let mut last_trickle = Instant::now();
    while !stop.load(Relaxed) {
        let trickle_now = trickle && last_trickle.elapsed() >= Duration::from_secs(4);
        if trickle_now {
            last_trickle = Instant::now();
        }
        for (conn, sent) in conns.iter_mut() {
            if stop.load(Relaxed) {
                break;
            }
            let gone = match conn.as_mut() {
                None => true,
                Some(s) => common::closed(s),
            };
            if gone {
                *conn = common::connect_from([127, 0, 0, 2].into(), to);
                *sent = 0;
                opened += 1;
            } else if trickle_now && let Some(s) = conn.as_mut() {
                let _ = s.write(&hello[*sent % hello.len()..][..1]);
                *sent += 1;
            }
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    opened
}

/// (threads, resident MiB) of process `pid`.
fn threads_and_rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    (field("Threads:"), field("VmRSS:") / 1024)
}

fn raise_own_open_files_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    limit.current = limit.maximum;
    setrlimit(Resource::Nofile, limit).expect("raise the test's open files limit");
}

#[test]
fn one_flooding_source_does_not_lock_out_another() {
    let _alone = alone_with_traffic();
    raise_own_open_files_limit();
    let root = TempDir::new("flood");
    let srv = Server::with_root(root.path());
    let to: SocketAddr = srv.addr().parse().unwrap();
    let pid = srv.child.id();
    for trickle in [false, true] {
        let stop = Arc::new(AtomicBool::new(false));
        let flooder = {
            let stop = Arc::clone(&stop);
            std::thread::spawn(move || flood(to, trickle, &stop))
        };
        // Let the flood fill the door, and the trickle pass a deadline.
        std::thread::sleep(Duration::from_secs(if trickle { 6 } else { 2 }));
        let bench = common::run(&["bench", &srv.addr(), "-t", "2"]);
        let target = format!("{}:/run-{trickle}", srv.addr());
        let send = common::run(&["send", "--from-memory", "200M", "-q", &target]);
        let (threads, rss_mib) = threads_and_rss(pid);
        stop.store(true, Relaxed);
        let opened = flooder.join().expect("flooder");
        eprintln!(
            "trickle {trickle}: {opened} flood connections opened; server {threads} threads, {rss_mib} MiB resident"
        );
        assert!(
            bench.status.success(),
            "bench under the flood: {}",
            text(&bench)
        );
        assert!(
            send.status.success(),
            "send under the flood: {}",
            text(&send)
        );
        assert!(opened >= FLOOD, "the flood held its connections: {opened}");
        assert!(threads < 200, "threads bounded: {threads}");
        assert!(rss_mib < 256, "memory bounded: {rss_mib} MiB");
    }
    // Summed up at the latest once its last connection has left the door,
    // which a loaded server may take a while to see.
    assert!(
        srv.wait_log(Duration::from_secs(30), |lines| lines
            .iter()
            .any(|l| l.contains("dropped") && l.contains("127.0.0.2"))),
        "the flood is logged, summed up: {:?}",
        srv.log_lines().iter().rev().take(5).collect::<Vec<_>>()
    );
}
