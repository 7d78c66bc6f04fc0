//! Encrypted transfers with the real binary on loopback: what a receiver
//! takes and refuses, and what an altered byte on the way does.

use crate::common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use common::tree::{TempDir, differences, random_file};
use common::{Guard, oneshot, oneshot_clear, send, text, wait_exit};
use linerate_wire::{FrameDecoder, Hello, Message, Role, SessionId, SessionKind};

fn session_of(url: &str) -> (String, SessionId) {
    let rest = url.strip_prefix("linerate://").unwrap();
    let (addr, query) = rest.split_once("/?").unwrap();
    let hex = query
        .split('&')
        .find_map(|p| p.strip_prefix("session="))
        .unwrap();
    (addr.to_string(), SessionId::from_hex(hex).unwrap())
}

#[test]
fn a_receiver_refuses_senders_in_the_clear_and_writes_nothing() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("tls");
    std::fs::create_dir_all(base.join("src")).unwrap();
    random_file(&base.join("src/a.bin"), 1 << 20, 1);
    let dir = base.join("in");
    let (mut recv, url) = oneshot(&dir);
    assert!(url.contains("&fp="), "{url}");

    // A client that offers no encryption: refused, in the clear, in words.
    let (addr, session) = session_of(&url);
    let mut sock = TcpStream::connect(&addr).unwrap();
    sock.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    sock.write_all(&Hello::new(session, Role::Control, SessionKind::Transfer, 0).encode())
        .unwrap();
    let mut bytes = Vec::new();
    let _ = sock.read_to_end(&mut bytes);
    let mut frames = FrameDecoder::new();
    frames.push(&bytes);
    let answer = Message::from_frame(&frames.next_frame().unwrap().unwrap()).unwrap();
    assert!(
        matches!(&answer, Message::Refuse(r) if r.message.contains("encrypted transfers only")),
        "{answer:?}"
    );

    // The real sender told to send in the clear: one clear line.
    let out = send(&[
        base.join("src/a.bin").to_str().unwrap(),
        &url,
        "--no-encrypt",
    ]);
    assert!(!out.status.success());
    let said = text(&out);
    assert!(said.contains("encrypted transfers only"), "{said}");
    assert!(said.contains("--no-encrypt"), "{said}");
    assert!(!dir.join("a.bin").exists());
    assert!(
        wait_exit(&mut recv, Duration::from_millis(300)).is_none(),
        "still waiting"
    );

    // The same receiver then takes the encrypted transfer.
    let out = send(&[base.join("src/a.bin").to_str().unwrap(), &url]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("Encrypted: TLS 1.3"), "{}", text(&out));
    assert!(differences(&base.join("src/a.bin"), &dir.join("a.bin")).is_empty());
}

#[test]
fn a_receiver_in_the_clear_is_named_and_taken_only_with_no_encrypt() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("tls");
    std::fs::create_dir_all(base.join("src")).unwrap();
    random_file(&base.join("src/a.bin"), 1 << 20, 2);
    let dir = base.join("in");
    let (_recv, url) = oneshot_clear(&dir);
    assert!(!url.contains("fp="), "{url}");
    let out = send(&[base.join("src/a.bin").to_str().unwrap(), &url]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no fp="), "{}", text(&out));
    assert!(text(&out).contains("--no-encrypt"), "{}", text(&out));
    let out = send(&[
        base.join("src/a.bin").to_str().unwrap(),
        &url,
        "--no-encrypt",
        "--json",
        "-",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(doc["parameters"]["encryption"], "none");
}

#[test]
fn a_wrong_fingerprint_is_refused_before_anything_is_sent() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("tls");
    std::fs::create_dir_all(base.join("src")).unwrap();
    random_file(&base.join("src/a.bin"), 1 << 20, 3);
    let dir = base.join("in");
    let (_recv, url) = oneshot(&dir);
    let (head, fp) = url.split_once("&fp=").unwrap();
    let other = format!("{head}&fp={}", fp.chars().rev().collect::<String>());
    let out = send(&[base.join("src/a.bin").to_str().unwrap(), &other]);
    assert!(!out.status.success());
    assert!(text(&out).contains("fingerprint"), "{}", text(&out));
    assert!(!dir.join("a.bin").exists());
}

/// A proxy between sender and receiver that flips one byte inside a TLS
/// record of every data connection, once it has carried `after` bytes.
struct FlippingProxy {
    port: u16,
    /// Bytes flipped so far.
    flipped: Arc<AtomicUsize>,
}

impl FlippingProxy {
    fn start(to: String, after: usize) -> FlippingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let flipped = Arc::new(AtomicUsize::new(0));
        let seen = Arc::new(AtomicUsize::new(0));
        let f = Arc::clone(&flipped);
        std::thread::spawn(move || {
            for conn in listener.incoming() {
                let Ok(client) = conn else { return };
                let Ok(server) = TcpStream::connect(&to) else {
                    return;
                };
                // Connection 0 is the control connection, then the streams.
                let flip = seen.fetch_add(1, Relaxed) >= 1;
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let f = Arc::clone(&f);
                std::thread::spawn(move || copy(client, server, flip.then_some((after, f))));
                std::thread::spawn(move || copy(s2, c2, None));
            }
        });
        FlippingProxy { port, flipped }
    }
}

/// Copies `from` to `to`; with `flip`, alters the middle byte of the body
/// of the first TLS record that starts past the given offset (after the
/// 36-byte hello in the clear, the stream is records: a 5-byte header with
/// the body's length, then the body).
fn copy(mut from: TcpStream, mut to: TcpStream, flip: Option<(usize, Arc<AtomicUsize>)>) {
    let mut buf = vec![0u8; 64 << 10];
    let (mut offset, mut next_record, mut header) = (0usize, 36usize, Vec::new());
    let (mut target, mut done): (Option<usize>, bool) = (None, false);
    loop {
        let n = match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if let Some((after, flipped)) = &flip
            && !done
        {
            for (i, byte) in buf[..n].iter_mut().enumerate() {
                let at = offset + i;
                if Some(at) == target {
                    *byte ^= 0x40;
                    flipped.fetch_add(1, Relaxed);
                    done = true;
                    break;
                }
                if at < next_record || target.is_some() {
                    continue;
                }
                header.push(*byte);
                if header.len() == 5 {
                    let len = usize::from(u16::from_be_bytes([header[3], header[4]]));
                    next_record = at + 1 + len;
                    if at + 1 >= *after && len > 32 {
                        target = Some(at + 1 + len / 2);
                    }
                    header.clear();
                }
            }
        }
        offset += n;
        if to.write_all(&buf[..n]).is_err() {
            break;
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// A one-shot receiver whose log goes to a file the test reads.
fn logged_receiver(dir: &std::path::Path, log: &std::path::Path) -> (Guard, String) {
    let mut child = common::linerate_cmd()
        .args([
            "recv",
            dir.to_str().unwrap(),
            "--bind",
            "127.0.0.1",
            "--foreground",
        ])
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(log).unwrap())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    (Guard(child), line.trim().to_string())
}

#[test]
fn a_flipped_byte_ends_its_stream_and_the_rerun_completes_whole() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("tls");
    let src = base.join("src/data.bin");
    std::fs::create_dir_all(base.join("src")).unwrap();
    random_file(&src, 48 << 20, 4);
    let dir = base.join("in");
    let log = base.join("recv.log");
    let (mut recv, url) = logged_receiver(&dir, &log);
    let (addr, _) = session_of(&url);
    let proxy = FlippingProxy::start(addr.clone(), 4 << 20);
    let through = url.replace(&addr, &format!("127.0.0.1:{}", proxy.port));
    let first = send(&[src.to_str().unwrap(), &through, "--block", "1M"]);
    assert!(
        proxy.flipped.load(Relaxed) >= 1,
        "the proxy altered nothing"
    );
    let _ = wait_exit(&mut recv, Duration::from_secs(10));
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("failed authentication"),
        "receiver log:\n{logged}\nsender:\n{}",
        text(&first)
    );
    // Every stream was cut: the run fails, keeping what arrived whole.
    assert!(!first.status.success(), "{}", text(&first));
    assert!(!dir.join("data.bin").exists(), "nothing renamed into place");
    let (_again, url) = oneshot(&dir);
    let out = send(&[src.to_str().unwrap(), &url, "--block", "1M"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("Resumed"), "{}", text(&out));
    assert!(differences(&src, &dir.join("data.bin")).is_empty());
}

/// A config directory of its own (no key, or a key the daemons do not list).
fn config_dir(base: &TempDir, name: &str, with_key: bool) -> std::path::PathBuf {
    let dir = base.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    if with_key {
        let out = common::linerate_cmd()
            .args(["keys", "new"])
            .env("LINERATE_CONFIG_DIR", &dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
    }
    dir
}

fn send_as(config: &std::path::Path, args: &[&str]) -> std::process::Output {
    common::linerate_cmd()
        .arg("send")
        .args(args)
        .env("LINERATE_CONFIG_DIR", config)
        .output()
        .unwrap()
}

#[test]
fn a_daemon_takes_transfers_from_listed_client_keys_only() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("tls");
    std::fs::create_dir_all(base.join("src")).unwrap();
    random_file(&base.join("src/a.bin"), 1 << 20, 5);
    let src = base.join("src/a.bin");
    let root = base.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let mut server = common::Server::with_root(&root);
    let target = format!("{}:/in", server.addr());

    // No key at all, then a key the daemon does not list: refused before
    // any manifest, each with one line saying what to do.
    let none = config_dir(&base, "none", false);
    let out = send_as(&none, &[src.to_str().unwrap(), &target]);
    assert!(!out.status.success());
    assert!(text(&out).contains("linerate keys new"), "{}", text(&out));
    let stranger = config_dir(&base, "stranger", true);
    let out = send_as(&stranger, &[src.to_str().unwrap(), &target]);
    assert!(!out.status.success());
    assert!(text(&out).contains("--authorized-keys"), "{}", text(&out));
    assert!(!root.join("in").exists(), "nothing written");
    assert!(
        server.wait_log(Duration::from_secs(5), |l| {
            l.iter()
                .any(|x| x.contains("refused 127.0.0.1") && x.contains("is not in"))
        }),
        "{:?}",
        server.log_lines()
    );
    // The stranger's transfer failed: a daemon is trusted only once a
    // transfer to it completed, so nothing is recorded.
    assert!(!stranger.join("known_servers").exists());

    // A listed key sends, encrypted.
    let out = send(&[src.to_str().unwrap(), &target]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("Encrypted: TLS 1.3"), "{}", text(&out));
    assert!(differences(&src, &root.join("in/a.bin")).is_empty());

    // A fingerprint that is not the daemon's is refused.
    let wrong = "ab".repeat(32);
    let out = send(&[
        src.to_str().unwrap(),
        &target,
        "--server-fingerprint",
        &wrong,
    ]);
    assert!(!out.status.success());
    assert!(text(&out).contains("fingerprint"), "{}", text(&out));
    assert!(server.is_running());
}

#[test]
fn a_daemon_whose_certificate_changed_since_the_first_contact_is_refused() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("tls");
    std::fs::create_dir_all(base.join("src")).unwrap();
    random_file(&base.join("src/a.bin"), 1 << 16, 6);
    let src = base.join("src/a.bin");
    let root = base.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let me = config_dir(&base, "me", true);
    let keys = base.join("authorized_keys");
    let listed = common::linerate_cmd()
        .args(["keys", "list"])
        .env("LINERATE_CONFIG_DIR", &me)
        .output()
        .unwrap();
    std::fs::write(&keys, &listed.stdout).unwrap();
    let server = common::Server::with_root_and(
        &root,
        &[
            "--identity",
            base.join("server.pem").to_str().unwrap(),
            "--authorized-keys",
            keys.to_str().unwrap(),
        ],
    );
    let target = format!("{}:/", server.addr());
    let out = send_as(&me, &[src.to_str().unwrap(), &target]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("first contact"), "{}", text(&out));
    let out = send_as(&me, &[src.to_str().unwrap(), &target, "--overwrite"]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!text(&out).contains("first contact"), "{}", text(&out));
    // What was recorded is not what answers now (as after a key change,
    // or someone in between): refused, naming both.
    let known = me.join("known_servers");
    let recorded = std::fs::read_to_string(&known).unwrap();
    std::fs::write(&known, format!("{} {}\n", server.addr(), "cd".repeat(32))).unwrap();
    let out = send_as(&me, &[src.to_str().unwrap(), &target, "--overwrite"]);
    assert!(!out.status.success());
    assert!(text(&out).contains(&"cd".repeat(32)), "{}", text(&out));
    assert!(recorded.contains(&server.addr()), "{recorded}");
}

#[test]
fn a_daemon_without_authorized_keys_does_not_start() {
    let _traffic = common::beside_other_traffic();
    let base = TempDir::new("tls");
    let out = common::linerate_cmd()
        .args(["serve", "--port", "0", "--root"])
        .arg(base.path())
        .args(["--authorized-keys", base.join("none").to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(text(&out).contains("linerate keys new"), "{}", text(&out));
}

#[test]
fn bench_encrypt_measures_through_tls_and_names_the_cipher() {
    let _traffic = common::beside_other_traffic();
    let server = common::Server::start();
    let out = common::linerate_cmd()
        .args([
            "bench",
            &server.addr(),
            "--encrypt",
            "-t",
            "1",
            "--json",
            "-",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let tls = &doc["parameters"]["encryption"];
    assert!(
        tls["cipher"].as_str().unwrap().starts_with("TLS13_"),
        "{tls}"
    );
    assert_eq!(tls["ktls"], false);
    assert!(doc["summary"]["bits_per_second"].as_f64().unwrap() > 0.0);
    // Each stream's thread says how much of its CPU time TLS took.
    for s in doc["streams"].as_array().unwrap() {
        let (cpu, in_tls) = (
            s["cpu_seconds"].as_f64().unwrap(),
            s["tls_seconds"].as_f64().unwrap(),
        );
        assert!(in_tls > 0.0 && in_tls <= cpu, "{s}");
    }
    assert!(text(&out).contains("Encrypted: TLS 1.3"), "{}", text(&out));
    assert!(
        server.log_lines().iter().any(|l| l.contains("fingerprint")),
        "the server names its certificate"
    );
    let clear = common::bench_json(&server.addr(), &["-t", "0.5"]);
    assert_eq!(clear["parameters"]["encryption"], "none");
}
