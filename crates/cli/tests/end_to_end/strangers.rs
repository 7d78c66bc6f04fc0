//! Root: a daemon that strangers cannot lock, amplify or race. A server
//! namespace and a client namespace joined by a veth pair; the client side
//! holds the rightful client's addresses and 50 IPv4 addresses and 50 IPv6
//! addresses of one /64 for the strangers. Each case runs what an attacker
//! did against the daemon while the rightful client works, and checks
//! that it gets through and that the daemon's threads, descriptors and
//! memory come back. Namespaces and processes go however a test ends.

use crate::common;

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr, TcpStream};
use std::os::fd::AsFd;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
use std::time::{Duration, Instant};

use common::tree::TempDir;
use common::{
    Server, alone_with_traffic, linerate, linerate_cmd, require_root, test_keys, text, udp_counter,
    wait_until,
};
use linerate_wire::{Hello, Role, SessionId, SessionKind};

const STRANGERS: u8 = 50;

/// The two namespaces and their addresses.
struct Lab {
    srv: String,
    cli: String,
    x: u32,
}

impl Lab {
    fn up(tag: &str) -> Lab {
        let id = std::process::id() % 100_000;
        let x = id % 250;
        let lab = Lab {
            srv: format!("lrt-{tag}-{id}-s"),
            cli: format!("lrt-{tag}-{id}-c"),
            x,
        };
        let (vs, vc) = (format!("ls{id}s"), format!("ls{id}c"));
        let ip = |args: &[&str]| {
            let st = Command::new("ip").args(args).status().expect("run ip");
            assert!(st.success(), "ip {args:?} failed");
        };
        ip(&["netns", "add", &lab.srv]);
        ip(&["netns", "add", &lab.cli]);
        ip(&[
            "link", "add", &vs, "netns", &lab.srv, "type", "veth", "peer", &vc, "netns", &lab.cli,
        ]);
        ip(&[
            "-n",
            &lab.srv,
            "addr",
            "add",
            &format!("10.214.{x}.1/24"),
            "dev",
            &vs,
        ]);
        ip(&[
            "-n",
            &lab.srv,
            "addr",
            "add",
            &format!("fd00:214:{x}::1/56"),
            "dev",
            &vs,
            "nodad",
        ]);
        ip(&[
            "-n",
            &lab.cli,
            "addr",
            "add",
            &format!("10.214.{x}.2/24"),
            "dev",
            &vc,
        ]);
        ip(&[
            "-n",
            &lab.cli,
            "addr",
            "add",
            &format!("fd00:214:{x}::2/56"),
            "dev",
            &vc,
            "nodad",
        ]);
        for i in 0..STRANGERS {
            let v4 = format!("10.214.{x}.{}/24", 100 + u32::from(i));
            ip(&["-n", &lab.cli, "addr", "add", &v4, "dev", &vc]);
            let v6 = format!("fd00:214:{x}:1::{:x}/56", 0x100 + u32::from(i));
            ip(&["-n", &lab.cli, "addr", "add", &v6, "dev", &vc, "nodad"]);
        }
        for (n, dev) in [(&lab.srv, &vs), (&lab.cli, &vc)] {
            ip(&["-n", n, "link", "set", dev, "up"]);
            ip(&["-n", n, "link", "set", "lo", "up"]);
        }
        lab
    }

    fn server_v4(&self) -> String {
        format!("10.214.{}.1", self.x)
    }

    fn stranger(&self, i: u8, v6: bool) -> IpAddr {
        let s = if v6 {
            format!("fd00:214:{}:1::{:x}", self.x, 0x100 + u32::from(i))
        } else {
            format!("10.214.{}.{}", self.x, 100 + u32::from(i))
        };
        s.parse().unwrap()
    }

    fn exec(&self, ns: &str) -> Vec<String> {
        let ns = if ns == "srv" { &self.srv } else { &self.cli };
        vec!["ip".into(), "netns".into(), "exec".into(), ns.clone()]
    }

    /// A daemon in the server namespace (`serve --bind :: --port 0` and
    /// `extra`), and its IPv4 address and port as a client names it.
    fn daemon(&self, extra: &[&str]) -> (Server, String) {
        let prefix = self.exec("srv");
        let prefix: Vec<&str> = prefix.iter().map(String::as_str).collect();
        let mut args = vec!["serve", "--bind", "::", "--port", "0"];
        args.extend_from_slice(extra);
        let srv = Server::start_with(&args, Some(&prefix));
        let at = format!("{}:{}", self.server_v4(), srv.port);
        (srv, at)
    }

    /// `linerate ARGS` in the client namespace, quiet, ended when dropped.
    fn client(&self, args: &[&str]) -> common::Guard {
        let child = Command::new("ip")
            .args(["netns", "exec", &self.cli, linerate()])
            .args(args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("linerate in the client namespace");
        common::Guard(child)
    }

    /// Moves the calling thread into the client namespace.
    fn enter_client(&self) {
        let f = std::fs::File::open(format!("/run/netns/{}", self.cli)).expect("netns file");
        rustix::thread::move_into_link_name_space(
            f.as_fd(),
            Some(rustix::thread::LinkNameSpaceType::Network),
        )
        .expect("setns into the client namespace");
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        for n in [&self.srv, &self.cli] {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// What the strangers do to a connection once it is open.
#[derive(Clone, Copy)]
enum Stranger {
    /// Nothing: it waits at the door.
    Idle,
    /// A bench hello, then a byte every 15 s: a session that never runs.
    SlowSession,
}

/// Holds `count` connections of `how` from the strangers' addresses
/// (IPv4 and IPv6 taking turns), reopening each the server closes, until
/// `stop`; returns how many it opened.
fn strangers(
    lab: &Lab,
    to_v4: SocketAddr,
    to_v6: SocketAddr,
    count: usize,
    how: Stranger,
    stop: &AtomicBool,
) -> usize {
    lab.enter_client();
    let mut conns: Vec<(Option<TcpStream>, Instant)> =
        (0..count).map(|_| (None, Instant::now())).collect();
    let mut opened = 0;
    while !stop.load(Relaxed) {
        for (i, (conn, at)) in conns.iter_mut().enumerate() {
            if stop.load(Relaxed) {
                break;
            }
            let gone = conn.as_mut().is_none_or(common::closed);
            if gone {
                let v6 = i % 2 == 1;
                let src = lab.stranger((i / 2 % usize::from(STRANGERS)) as u8, v6);
                let to = if v6 { to_v6 } else { to_v4 };
                *conn = common::connect_from(src, to);
                *at = Instant::now();
                opened += 1;
                if let (Stranger::SlowSession, Some(s)) = (how, conn.as_mut()) {
                    let hello = Hello::new(
                        SessionId([i as u8; 16]),
                        Role::Control,
                        SessionKind::Bench,
                        0,
                    );
                    let _ = s.write(&hello.encode());
                }
            } else if matches!(how, Stranger::SlowSession)
                && at.elapsed() >= Duration::from_secs(15)
            {
                *at = Instant::now();
                if let Some(s) = conn.as_mut() {
                    let _ = s.write(&[0]);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    opened
}

/// (threads, open descriptors, resident MiB) of process `pid`.
fn footprint(pid: u32) -> (u64, u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .unwrap_or(0)
    };
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, |d| d.count() as u64);
    (field("Threads:"), fds, field("VmRSS:") / 1024)
}

/// Waits until the daemon's footprint is back near `base`.
fn back_to_baseline(pid: u32, base: (u64, u64, u64)) -> (u64, u64, u64) {
    let until = Instant::now() + Duration::from_secs(60);
    loop {
        let now = footprint(pid);
        let back = now.0 <= base.0 + 4 && now.1 <= base.1 + 8 && now.2 <= base.2 + 96;
        if back || Instant::now() >= until {
            return now;
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

fn raise_own_open_files_limit() {
    use rustix::process::{Resource, getrlimit, setrlimit};
    let mut limit = getrlimit(Resource::Nofile);
    limit.current = limit.maximum;
    setrlimit(Resource::Nofile, limit).expect("raise the open files limit");
}

/// A send of generated data from the client namespace to `daemon:/dest`.
fn client_send(lab: &Lab, daemon: &str, dest: &str) -> std::process::Output {
    Command::new("ip")
        .args(["netns", "exec", &lab.cli, linerate()])
        .env("LINERATE_CONFIG_DIR", test_keys())
        .args(["send", "--from-memory", "20M", "-q"])
        .arg(format!("{daemon}:/{dest}"))
        .output()
        .expect("send")
}

/// A one-second bench from the client namespace.
fn client_bench(lab: &Lab, daemon: &str) -> std::process::Output {
    Command::new("ip")
        .args([
            "netns",
            "exec",
            &lab.cli,
            linerate(),
            "bench",
            daemon,
            "-t",
            "1",
        ])
        .output()
        .expect("bench")
}

/// The rightful client's work from the client namespace: 10 sends and 10
/// benches, taking turns; how many of each succeeded, and the first failure.
fn rightful_client(lab: &Lab, daemon: &str, tag: &str) -> (usize, usize, Option<String>) {
    let (mut sent, mut benched, mut failure) = (0, 0, None);
    for i in 0..10 {
        let out = client_send(lab, daemon, &format!("{tag}-{i}"));
        if out.status.success() {
            sent += 1;
        } else {
            failure.get_or_insert(format!("send {i}: {}", text(&out)));
        }
        let out = client_bench(lab, daemon);
        if out.status.success() {
            benched += 1;
        } else {
            failure.get_or_insert(format!("bench {i}: {}", text(&out)));
        }
    }
    (sent, benched, failure)
}

#[test]
fn strangers_cannot_lock_out_a_key_holder_or_a_bench() {
    if !require_root("strangers_cannot_lock_out_a_key_holder_or_a_bench") {
        return;
    }
    let _alone = alone_with_traffic();
    raise_own_open_files_limit();
    let lab = Arc::new(Lab::up("str"));
    let root = TempDir::new("strangers");
    let (mut srv, daemon) = lab.daemon(&["--root", root.path().to_str().unwrap()]);
    // The server's process is `ip netns exec`'s child, or `ip` itself
    // after its exec.
    let pid = srv.child.id();
    let to_v4: SocketAddr = format!("{}:{}", lab.server_v4(), srv.port).parse().unwrap();
    let to_v6: SocketAddr = format!("[fd00:214:{}::1]:{}", lab.x, srv.port)
        .parse()
        .unwrap();
    // Warm: the first send makes the daemon's threads and buffers once.
    let (s, b, f) = rightful_client_once(&lab, &daemon);
    assert!(s && b, "before any stranger: {f:?}");
    let base = footprint(pid);
    for (case, slow, flood) in [
        ("64 slow sessions", 64, 0),
        ("640 slow sessions", 640, 0),
        (
            "3,000 idle connections from 50 IPv4 and 50 IPv6 addresses",
            0,
            3000,
        ),
    ] {
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicUsize::new(0));
        let mut hands = Vec::new();
        for (count, how) in [(slow, Stranger::SlowSession), (flood, Stranger::Idle)] {
            if count == 0 {
                continue;
            }
            let (lab, stop, opened) = (Arc::clone(&lab), Arc::clone(&stop), Arc::clone(&opened));
            hands.push(std::thread::spawn(move || {
                let n = strangers(&lab, to_v4, to_v6, count, how, &stop);
                opened.fetch_add(n, Relaxed);
            }));
        }
        // The strangers hold their places before the rightful client comes.
        let held = wait_until(Duration::from_secs(30), || footprint(pid).1 >= base.1 + 30);
        assert!(held, "{case}: the strangers reached the daemon");
        let log_before = srv.log_lines().len();
        let began = Instant::now();
        let (sent, benched, failure) =
            rightful_client(&lab, &daemon, &case.replace([' ', ','], "-"));
        let during = footprint(pid);
        stop.store(true, Relaxed);
        for h in hands {
            h.join().expect("strangers");
        }
        let after = back_to_baseline(pid, base);
        let log_lines = srv.log_lines().len() - log_before;
        // Refusals: at most 10 lines and a sum per source group (50 IPv4,
        // 50 IPv6 in one /64, the rightful client) every 10 s, plus the
        // door's sums and each of the rightful client's 20 runs.
        let periods = began.elapsed().as_secs() as usize / 10 + 2;
        let bound = 11 * (usize::from(STRANGERS) + 2) * periods + 3 * 20;
        eprintln!(
            "{case}: {} stranger connections opened; {sent}/10 sends, {benched}/10 benches; \
             daemon (threads, fds, MiB) before {base:?}, during {during:?}, after {after:?}; \
             {log_lines} log lines",
            opened.load(Relaxed)
        );
        assert!(
            sent >= 9 && benched >= 9,
            "{case}: {sent}/10 sends and {benched}/10 benches got through: {failure:?}; {}",
            daemon_state(&mut srv)
        );
        assert!(
            opened.load(Relaxed) >= slow.max(flood),
            "{case}: the strangers held their places"
        );
        // A thread for each connection at the door (1,024 at most) and
        // each seated session.
        assert!(during.0 < 1200, "{case}: threads bounded: {during:?}");
        // Resident memory: glibc keeps some freed arenas cached.
        assert!(
            after.0 <= base.0 + 4 && after.1 <= base.1 + 8 && after.2 <= base.2 + 96,
            "{case}: back to baseline: {base:?} -> {after:?}"
        );
        assert!(
            log_lines <= bound,
            "{case}: refusals summed up, not a line each ({log_lines} > {bound}): {:?}",
            srv.log_lines().iter().rev().take(30).collect::<Vec<_>>()
        );
    }
}

/// Whether the daemon still runs (or how it ended) and its last log lines,
/// for a failure's message.
fn daemon_state(srv: &mut Server) -> String {
    let ended = match srv.child.try_wait() {
        Ok(None) => "the daemon runs".to_string(),
        Ok(Some(status)) => format!("the daemon ended: {status}"),
        Err(e) => format!("the daemon's state is unknown: {e}"),
    };
    let lines = srv.log_lines();
    let last = &lines[lines.len().saturating_sub(20)..];
    format!("{ended}; its last log lines: {last:#?}")
}

/// One send and one bench from the rightful client, before the strangers.
fn rightful_client_once(lab: &Lab, daemon: &str) -> (bool, bool, Option<String>) {
    let send = client_send(lab, daemon, "warm");
    let bench = client_bench(lab, daemon);
    let f = (!send.status.success() || !bench.status.success())
        .then(|| format!("{}\n{}", text(&send), text(&bench)));
    (send.status.success(), bench.status.success(), f)
}

/// A one-shot receiver's URL holders: 64 control connections that show
/// only the URL's session id (no token) do not make the rightful sender
/// busy; the receiver's log file name carries no session id.
#[test]
fn a_session_id_alone_earns_nothing() {
    let _traffic = common::beside_other_traffic();
    let dir = TempDir::new("sid-alone");
    let (mut recv, url) = common::oneshot(dir.path());
    let parsed = linerate_transfer::OneShot::parse(&url).expect("the URL parses");
    let addr = format!("{}:{}", parsed.host, parsed.port);
    let mut held = Vec::new();
    for _ in 0..64 {
        let Ok(mut s) = TcpStream::connect(&addr) else {
            continue;
        };
        let hello = Hello::new(parsed.session, Role::Control, SessionKind::Transfer, 0);
        let _ = s.write_all(&hello.encode());
        held.push(s);
    }
    let url_file = dir.path().join("url");
    std::fs::write(&url_file, &url).unwrap();
    let src = TempDir::new("sid-alone-src");
    std::fs::write(src.path().join("f"), vec![7u8; 1 << 20]).unwrap();
    let out = linerate_cmd()
        .args([
            "send",
            "-q",
            src.path().join("f").to_str().unwrap(),
            "--url-file",
        ])
        .arg(&url_file)
        .output()
        .expect("send");
    drop(held);
    assert!(out.status.success(), "the rightful sender: {}", text(&out));
    assert_eq!(
        std::fs::read(dir.path().join("f")).unwrap(),
        vec![7u8; 1 << 20]
    );
    assert!(common::wait_exit(&mut recv, Duration::from_secs(20)).is_some_and(|s| s.success()));
    let hex = parsed.session.to_hex();
    let named: Vec<String> = std::fs::read_dir(std::env::temp_dir())
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.contains(&hex))
        .collect();
    assert!(named.is_empty(), "a file names the session: {named:?}");
}

/// 16 reverse benches asking for the largest write length at once: the
/// daemon stays within its documented bench memory (1 GiB) plus 64 MiB.
#[test]
fn largest_writes_stay_inside_the_daemon_budget() {
    let _alone = alone_with_traffic();
    // One source may hold all 16: the limit under test is the memory's.
    let srv = loopback_daemon_with_share("16");
    let pid = srv.child.id();
    let addr = srv.addr();
    let children: Vec<std::process::Child> = (0..16)
        .map(|_| {
            Command::new(linerate())
                .args(["bench", &addr, "-R", "-l", "256M", "-t", "3"])
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("bench")
        })
        .collect();
    let mut guards: Vec<common::Guard> = children.into_iter().map(common::Guard).collect();
    let mut peak = 0;
    let until = Instant::now() + Duration::from_secs(60);
    while Instant::now() < until
        && guards
            .iter_mut()
            .any(|g| g.0.try_wait().ok().flatten().is_none())
    {
        peak = peak.max(footprint(pid).2);
        std::thread::sleep(Duration::from_millis(50));
    }
    let ran = guards
        .iter_mut()
        .map(|g| g.0.try_wait().ok().flatten().is_some_and(|s| s.success()))
        .filter(|ok| *ok)
        .count();
    eprintln!(
        "16 reverse benches of 256 MiB writes: {ran} ran, the others refused; daemon peak {peak} MiB"
    );
    assert!(ran >= 1, "some ran");
    assert!(
        peak <= 1024 + 64,
        "daemon peak {peak} MiB within --bench-memory 1 GiB + 64 MiB"
    );
    let refusals: Vec<String> = guards
        .iter_mut()
        .filter_map(|g| {
            let mut e = String::new();
            g.0.stderr.take()?.read_to_string(&mut e).ok()?;
            Some(e)
        })
        .filter(|e| e.contains("busy"))
        .collect();
    assert_eq!(refusals.len(), 16 - ran, "every other one refused as busy");
    assert!(
        refusals.iter().all(|e| e.contains("--bench-memory")),
        "the refusal names the flag: {refusals:?}"
    );
}

/// `bench -R --udp`: once its client's connections are reset, the server
/// sends no datagram more than a second later.
#[test]
fn a_reverse_udp_bench_ends_with_its_client() {
    if !require_root("a_reverse_udp_bench_ends_with_its_client") {
        return;
    }
    let _alone = alone_with_traffic();
    let lab = Lab::up("udp");
    let (_srv, daemon) = lab.daemon(&[]);
    let mut client = lab.client(&["bench", &daemon, "-R", "--udp", "-b", "200M", "-t", "60"]);
    let out_datagrams = || udp_counter(Some(&lab.srv), "OutDatagrams");
    // Wait until datagrams flow.
    let flowing = {
        let until = Instant::now() + Duration::from_secs(20);
        let first = out_datagrams();
        loop {
            std::thread::sleep(Duration::from_millis(200));
            if out_datagrams() > first + 1000 {
                break true;
            }
            if Instant::now() > until {
                break false;
            }
        }
    };
    assert!(flowing, "the reverse UDP bench sends");
    // The client stops (its UDP socket stays, so no ICMP tells the server)
    // and its TCP connections are reset.
    let pid = client.0.id();
    let _ = Command::new("kill")
        .args(["-STOP", &pid.to_string()])
        .status();
    let killed = Command::new("ip")
        .args([
            "netns",
            "exec",
            &lab.cli,
            "ss",
            "-K",
            "-t",
            "dst",
            &lab.server_v4(),
        ])
        .output()
        .expect("ss -K");
    assert!(killed.status.success(), "ss -K: {}", text(&killed));
    let reset = Instant::now();
    std::thread::sleep(Duration::from_secs(1));
    let at_one_second = out_datagrams();
    std::thread::sleep(Duration::from_secs(2));
    let later = out_datagrams();
    let _ = Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status();
    let _ = client.0.wait();
    eprintln!(
        "datagrams sent from 1 s to 3 s after the reset: {} ({:.1} s measured)",
        later - at_one_second,
        reset.elapsed().as_secs_f64()
    );
    assert!(
        later - at_one_second < 10,
        "the server went on sending: {}",
        later - at_one_second
    );
}

/// Ten failed TLS handshakes from an address (a key not listed) do not
/// shut out a key holder at the same address.
#[test]
fn failed_handshakes_do_not_shut_out_a_key_holder() {
    let _traffic = common::beside_other_traffic();
    let root = TempDir::new("penalty");
    let srv = Server::with_root(root.path());
    let target = format!("{}:/p", srv.addr());
    let stranger_keys = TempDir::new("stranger-keys");
    let made = Command::new(linerate())
        .args(["keys", "new"])
        .env("LINERATE_CONFIG_DIR", stranger_keys.path())
        .output()
        .expect("keys new");
    assert!(made.status.success(), "{}", text(&made));
    let known = test_keys().join("known_servers");
    if known.exists() {
        let _ = std::fs::copy(&known, stranger_keys.path().join("known_servers"));
    }
    for _ in 0..12 {
        let out = Command::new(linerate())
            .args(["send", "--from-memory", "1M", "-q", &target])
            .env("LINERATE_CONFIG_DIR", stranger_keys.path())
            .output()
            .expect("stranger send");
        assert!(!out.status.success(), "an unlisted key is refused");
    }
    assert!(
        srv.wait_log(Duration::from_secs(5), |l| l
            .iter()
            .any(|x| x.contains("failed handshakes"))),
        "the penalty is logged: {:?}",
        srv.log_lines()
    );
    let out = common::send(&["--from-memory", "1M", "-q", &target]);
    assert!(
        out.status.success(),
        "the key holder at the same address: {}",
        text(&out)
    );
}

/// A receiver and a daemon stopped for 3 s and continued, 12 times each
/// during transfers: every transfer completes byte-identical, exit 0. A
/// stopped receiver's kernel still takes data into its buffers, so each
/// transfer is 24 MiB at 20 Mbit/s to last through its four pauses.
#[test]
fn paused_receivers_complete_their_transfers() {
    // No hold on the host's traffic: transfers paced at 20 Mbit/s and
    // pauses of 3 s load no test beside it, and waiting out the pauses
    // alone took the suite a minute and a half
    // (docs/benchmarks/README.md#the-suites-time).
    let src = TempDir::new("pause-src");
    let data: Vec<u8> = (0..24u32 << 20)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(src.path().join("big"), &data).unwrap();
    let file = src.path().join("big");
    let file = file.to_str().unwrap();
    let pause = |pid: u32, times: usize, sender: &mut common::Guard| {
        let mut paused = 0;
        while paused < times && sender.0.try_wait().ok().flatten().is_none() {
            std::thread::sleep(Duration::from_millis(300));
            let _ = Command::new("kill")
                .args(["-STOP", &pid.to_string()])
                .status();
            std::thread::sleep(Duration::from_secs(3));
            let _ = Command::new("kill")
                .args(["-CONT", &pid.to_string()])
                .status();
            paused += 1;
        }
        paused
    };
    let mut total = 0;
    // The one-shot receiver, 4 pauses a transfer, 3 transfers.
    for round in 0..3 {
        let dir = TempDir::new("pause-recv");
        let (mut recv, url) = common::oneshot(dir.path());
        let url_file = dir.path().join(".url");
        std::fs::write(&url_file, &url).unwrap();
        let sender = linerate_cmd()
            .args(["send", "-q", "--rate", "20M", file, "--url-file"])
            .arg(&url_file)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("send");
        let mut sender = common::Guard(sender);
        total += pause(recv.0.id(), 4, &mut sender);
        let status = common::wait_exit(&mut sender, Duration::from_secs(120));
        assert!(
            status.is_some_and(|s| s.success()),
            "round {round}: the sender failed"
        );
        let r = common::wait_exit(&mut recv, Duration::from_secs(60));
        assert!(
            r.is_some_and(|s| s.success()),
            "round {round}: the receiver failed"
        );
        assert!(
            std::fs::read(dir.path().join("big")).unwrap() == data,
            "round {round}: identical"
        );
    }
    assert!(total >= 12, "{total} pauses of the receiver");
    // The daemon, 4 pauses a transfer, 3 transfers.
    let root = TempDir::new("pause-daemon");
    let srv = Server::with_root(root.path());
    let mut daemon_pauses = 0;
    for round in 0..3 {
        let target = format!("{}:/r{round}", srv.addr());
        let sender = linerate_cmd()
            .args(["send", "-q", "--rate", "20M", file, &target])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("send");
        let mut sender = common::Guard(sender);
        daemon_pauses += pause(srv.child.id(), 4, &mut sender);
        let status = common::wait_exit(&mut sender, Duration::from_secs(120));
        assert!(
            status.is_some_and(|s| s.success()),
            "daemon round {round}: the sender failed"
        );
        assert!(std::fs::read(root.path().join(format!("r{round}/big"))).unwrap() == data);
    }
    assert!(daemon_pauses >= 12, "{daemon_pauses} pauses of the daemon");
}

/// A daemon is recorded in known_servers only once a transfer to it
/// completed: one that completes TLS and then refuses the transfer (as a
/// man in the middle would fail it) is not trusted from then on.
#[test]
fn a_daemon_is_trusted_only_after_a_transfer_completed() {
    let _traffic = common::beside_other_traffic();
    let keys = TempDir::new("first-contact");
    std::fs::copy(
        test_keys().join("client.pem"),
        keys.path().join("client.pem"),
    )
    .unwrap();
    let send_as = |target: &str| {
        Command::new(linerate())
            .args(["send", "--from-memory", "1M", "-q", target])
            .env("LINERATE_CONFIG_DIR", keys.path())
            .output()
            .expect("send")
    };
    let root = TempDir::new("first-contact-root");
    // Takes the TLS handshake, then no transfer at all.
    let refusing = Server::with_root_and(root.path(), &["--max-sessions", "0"]);
    let out = send_as(&format!("{}:/x", refusing.addr()));
    assert!(!out.status.success(), "refused: {}", text(&out));
    assert!(
        !keys.path().join("known_servers").exists(),
        "trusted after a failed transfer: {}",
        text(&out)
    );
    let good = Server::with_root(root.path());
    let out = send_as(&format!("{}:/y", good.addr()));
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("first contact"), "{}", text(&out));
    let known = std::fs::read_to_string(keys.path().join("known_servers")).unwrap();
    assert!(known.starts_with(&good.addr()), "{known}");
}

/// A transfer refused once its destination was made (more data
/// connections than the daemon takes) leaves no directory behind.
#[test]
fn a_refused_transfer_leaves_nothing_behind() {
    let _traffic = common::beside_other_traffic();
    let root = TempDir::new("refused-leaves");
    let srv = Server::with_root_and(root.path(), &["--max-streams", "1"]);
    let out = common::send(&[
        "--from-memory",
        "1M",
        "-P",
        "4",
        "-q",
        &format!("{}:/a/b/c", srv.addr()),
    ]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("--max-streams"), "{}", text(&out));
    // The daemon removes them as its session ends, which may be just
    // after the sender read the refusal and exited.
    let until = Instant::now() + Duration::from_secs(10);
    let left = loop {
        let left: Vec<_> = std::fs::read_dir(root.path()).unwrap().collect();
        if left.is_empty() || Instant::now() >= until {
            break left;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(left.is_empty(), "left behind: {left:?}");
}

/// A daemon on loopback whose one source may hold `share` sessions.
fn loopback_daemon_with_share(share: &str) -> Server {
    let args = ["serve", "--bind", "127.0.0.1", "--port", "0"];
    let share = ["--max-open-sessions-per-source", share];
    Server::start_with(&[&args[..], &share[..]].concat(), None)
}

/// One client refused in a loop (2,000 sessions past its share) makes a
/// few log lines, not one each.
#[test]
fn a_client_refused_in_a_loop_does_not_flood_the_log() {
    let _traffic = common::beside_other_traffic();
    let srv = loopback_daemon_with_share("1");
    let addr = srv.addr();
    let hold = |i: u8| {
        let mut s = TcpStream::connect(&addr).expect("connect");
        let hello = Hello::new(SessionId([i; 16]), Role::Control, SessionKind::Bench, 0);
        s.write_all(&hello.encode()).unwrap();
        s
    };
    let mut held = hold(1);
    // Its first answer (the Accept) says it is seated.
    held.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert!(held.read(&mut [0u8; 512]).is_ok_and(|n| n > 0), "seated");
    let before = srv.log_lines().len();
    let mut refused = 0;
    for i in 0..2000u32 {
        let mut s = hold((i % 200) as u8 + 2);
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut b = vec![0u8; 4096];
        let mut got = Vec::new();
        while let Ok(n) = s.read(&mut b) {
            if n == 0 {
                break;
            }
            got.extend_from_slice(&b[..n]);
        }
        if String::from_utf8_lossy(&got).contains("--max-open-sessions-per-source") {
            refused += 1;
        }
    }
    let lines = srv.log_lines().len() - before;
    eprintln!("2,000 sessions from one client: {refused} refused, {lines} log lines");
    assert!(refused >= 1990, "{refused} refused");
    assert!(
        lines <= 12,
        "{lines} log lines: {:?}",
        &srv.log_lines()[before..]
    );
}

/// The documented hand-over (`recv | send -`) never shows the token in any
/// process's command line; a URL given as an argument has its token hidden
/// in the sender's command line once it starts, and the sender says so.
#[test]
fn a_token_never_shows_in_a_command_line() {
    let _alone = alone_with_traffic();
    let src = TempDir::new("argv-src");
    std::fs::write(src.path().join("f"), vec![3u8; 64 << 20]).unwrap();
    let file = src.path().join("f");
    let dest = TempDir::new("argv-dest");
    let seen = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let watcher = {
        let (seen, stop) = (Arc::clone(&seen), Arc::clone(&stop));
        std::thread::spawn(move || {
            let mut scans = 0u64;
            while !stop.load(Relaxed) {
                for e in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
                    if let Ok(c) = std::fs::read(e.path().join("cmdline"))
                        && shows_token(&c)
                    {
                        seen.fetch_add(1, Relaxed);
                    }
                }
                scans += 1;
            }
            scans
        })
    };
    let script = format!(
        "{lr} recv --bind 127.0.0.1 {d} | {lr} send -q {f} -",
        lr = linerate(),
        d = dest.path().display(),
        f = file.display()
    );
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("LINERATE_CONFIG_DIR", test_keys())
        .output()
        .expect("sh");
    assert!(out.status.success(), "{}", text(&out));
    let arrived = dest.path().join("f");
    let got = (0..300).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        std::fs::metadata(&arrived).is_ok_and(|m| m.len() == 64 << 20)
    });
    assert!(got, "the file arrived");
    stop.store(true, Relaxed);
    let scans = watcher.join().unwrap();
    assert!(scans > 10, "the watcher scanned /proc {scans} times");
    assert_eq!(seen.load(Relaxed), 0, "a token was seen in a command line");

    // As an argument: hidden once the sender runs, and said.
    let dest2 = TempDir::new("argv-dest2");
    let (mut recv, url) = common::oneshot(dest2.path());
    let mut sender = common::Guard(
        linerate_cmd()
            .args(["send", "--rate", "50M", file.to_str().unwrap(), &url])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("send"),
    );
    let pid = sender.0.id();
    let hidden = (0..200).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        let c = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
        !c.is_empty() && !shows_token(&c) && String::from_utf8_lossy(&c).contains("token=xxxx")
    });
    assert!(hidden, "the token stays in the sender's command line");
    let status = common::wait_exit(&mut sender, Duration::from_secs(60));
    let mut err = String::new();
    if let Some(mut e) = sender.0.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    assert!(status.is_some_and(|s| s.success()), "{err}");
    assert!(err.contains("other local users can read it"), "{err}");
    let _ = common::wait_exit(&mut recv, Duration::from_secs(30));
}

/// Whether a command line holds a one-shot URL's live token (32 hex digits).
fn shows_token(cmdline: &[u8]) -> bool {
    let s = String::from_utf8_lossy(cmdline);
    s.match_indices("token=").any(|(at, _)| {
        let rest = &s[at + 6..];
        rest.len() >= 32 && rest[..32].bytes().all(|b| b.is_ascii_hexdigit())
    })
}

/// UDP latency requests forged with the client's own address and port
/// (asking for 65,507-byte replies, to aim them at the client) get no
/// reply at all: they lack the cookie the server gave on the data
/// connection. The client is stopped meanwhile, so every datagram the
/// server sends would be an answer to a forgery.
#[test]
fn forged_udp_latency_requests_get_no_reply() {
    if !require_root("forged_udp_latency_requests_get_no_reply") {
        return;
    }
    let _alone = alone_with_traffic();
    let lab = Lab::up("spf");
    let (srv, daemon) = lab.daemon(&[]);
    let mut client = lab.client(&["latency", &daemon, "--udp", "-t", "30"]);
    // The client's paired datagram socket, once the rounds run.
    let pair = (0..100).find_map(|_| {
        std::thread::sleep(Duration::from_millis(100));
        let out = Command::new("ip")
            .args([
                "netns",
                "exec",
                &lab.cli,
                "ss",
                "-Hun",
                "state",
                "established",
            ])
            .output()
            .ok()?;
        let text = String::from_utf8_lossy(&out.stdout).to_string();
        text.lines().find_map(|l| {
            let cols: Vec<&str> = l.split_whitespace().collect();
            let local: SocketAddr = cols.get(2)?.parse().ok()?;
            let peer: SocketAddr = cols.get(3)?.parse().ok()?;
            (peer.port() == srv.port).then_some((local, peer))
        })
    });
    let (client_addr, server_addr) = pair.expect("the client's UDP socket");
    let _ = Command::new("kill")
        .args(["-STOP", &client.0.id().to_string()])
        .status();
    let udp_counters = || {
        (
            udp_counter(Some(&lab.srv), "InDatagrams"),
            udp_counter(Some(&lab.srv), "OutDatagrams"),
        )
    };
    // The last real round's reply has left once the count stands still.
    let mut last = udp_counters();
    let settled = wait_until(Duration::from_secs(10), || {
        let now = udp_counters();
        std::mem::replace(&mut last, now) == now
    });
    assert!(settled, "the stopped client's rounds ended");
    let (in_before, out_before) = udp_counters();
    let forged = {
        let lab_cli = lab.cli.clone();
        std::thread::spawn(move || forge(&lab_cli, client_addr, server_addr, 200))
    };
    let sent = forged.join().expect("forger");
    wait_until(Duration::from_secs(10), || {
        udp_counters().0 >= in_before + 200
    });
    let (in_after, out_after) = udp_counters();
    let _ = Command::new("kill")
        .args(["-KILL", &client.0.id().to_string()])
        .status();
    let _ = client.0.wait();
    eprintln!(
        "{sent} forged requests: the server took {} datagrams and sent {}",
        in_after - in_before,
        out_after - out_before
    );
    assert_eq!(sent, 200);
    assert!(
        in_after - in_before >= 200,
        "the forgeries reached the server"
    );
    assert_eq!(
        out_after - out_before,
        0,
        "the server answered forged requests"
    );
}

/// Sends `count` UDP latency requests from `from` to `to` through a raw
/// socket in namespace `ns` (the source address and port forged).
fn forge(ns: &str, from: SocketAddr, to: SocketAddr, count: usize) -> usize {
    use rustix::net::{AddressFamily, SendFlags, SocketType, ipproto, sendto, socket};
    let f = std::fs::File::open(format!("/run/netns/{ns}")).expect("netns file");
    rustix::thread::move_into_link_name_space(
        f.as_fd(),
        Some(rustix::thread::LinkNameSpaceType::Network),
    )
    .expect("setns");
    let (SocketAddr::V4(src), SocketAddr::V4(dst)) = (from, to) else {
        panic!("IPv4 addresses expected");
    };
    let raw = socket(AddressFamily::INET, SocketType::RAW, Some(ipproto::RAW)).expect("raw socket");
    let mut round = [0u8; linerate_wire::UDP_ROUND_HEADER_LEN];
    let mut sent = 0;
    for seq in 0..count as u64 {
        linerate_wire::UdpRound {
            seq: 1_000_000 + seq,
            reply_len: linerate_wire::MAX_DATAGRAM_LEN,
            cookie: 0x5eed ^ seq,
        }
        .encode_into(&mut round);
        let udp_len = (8 + round.len()) as u16;
        let mut packet = Vec::with_capacity(20 + usize::from(udp_len));
        // IPv4 header: the kernel fills in the length, id and checksum.
        packet.extend_from_slice(&[0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0]);
        packet.extend_from_slice(&src.ip().octets());
        packet.extend_from_slice(&dst.ip().octets());
        // UDP header, checksum 0 (none, allowed over IPv4).
        packet.extend_from_slice(&src.port().to_be_bytes());
        packet.extend_from_slice(&dst.port().to_be_bytes());
        packet.extend_from_slice(&udp_len.to_be_bytes());
        packet.extend_from_slice(&[0, 0]);
        packet.extend_from_slice(&round);
        if sendto(&raw, &packet, SendFlags::empty(), &SocketAddr::V4(dst)).is_ok() {
            sent += 1;
        }
    }
    sent
}
