//! The verdict, provoked on purpose, on a quiet host and on one whose
//! cores are kept busy by unrelated processes: a verdict that names the
//! CPU only because other jobs run is wrong, and users learn to ignore it.
//! Each case is a command line and the limit it must be named for.

use crate::common;

use common::tree::TempDir;
use common::{Server, bench_json, linerate, quiet_and_busy, text};

fn verdict(doc: &serde_json::Value) -> (String, String) {
    common::assert_verdict_agrees(doc);
    let v = &doc["summary"]["verdict"];
    (
        v["limit"].as_str().unwrap_or("").to_string(),
        v["sentence"].as_str().unwrap_or("").to_string(),
    )
}

#[test]
fn bench_limits_are_named_on_a_quiet_and_on_a_busy_host() {
    let srv = Server::start();
    let addr = srv.addr();
    let cases: [(&[&str], &str, &str); 4] = [
        (
            &["--window", "4K", "-t", "2"],
            "receiver_window",
            "--window",
        ),
        (&["--sndbuf", "4K", "-t", "2"], "send_buffer", "--sndbuf"),
        (&["--fq-rate", "1G", "-t", "2"], "application", "--fq-rate"),
        (&["-b", "1G", "-P", "2", "-t", "2"], "application", "-b"),
    ];
    quiet_and_busy(&|host| {
        for (flags, want, named) in &cases {
            let (limit, sentence) = verdict(&bench_json(&addr, flags));
            assert_eq!(&limit, want, "{host} host, bench {flags:?}: {sentence}");
            assert!(
                sentence.contains(named),
                "{host} host, bench {flags:?}: the sentence names {named}: {sentence}"
            );
        }
    });
}

/// `send --from-memory 300M --rate 1G` to `target` with `extra`, run on
/// a `host` host; its document.
fn capped_send_doc(host: &str, target: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["send", "--from-memory", "300M", "--rate", "1G"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&["--json", "-", "-q", target]);
    let out = common::run(&args);
    assert!(out.status.success(), "{host}: {}", text(&out));
    serde_json::from_slice(&out.stdout).expect("send JSON")
}

/// The same send's verdict.
fn capped_send(host: &str, target: &str, extra: &[&str]) -> (String, String) {
    verdict(&capped_send_doc(host, target, extra))
}

#[test]
fn a_send_under_its_own_rate_cap_is_named_so_and_suggests_only_send_flags() {
    let dir = TempDir::new("verdict");
    let srv = Server::with_root(dir.path());
    let target = format!("{}:/in", srv.addr());
    quiet_and_busy(&|host| {
        let (limit, sentence) = capped_send(host, &target, &["--skip-writes"]);
        assert_eq!(limit, "application", "{host} host: {sentence}");
        assert!(sentence.contains("--rate"), "{host} host: {sentence}");
        for bench_only in ["--skip-rx-copy", "--fq-rate", "--cc"] {
            assert!(
                !sentence.contains(bench_only),
                "{host} host: send does not take {bench_only}: {sentence}"
            );
        }
    });
}

/// `linerate bench ADDR --json - FLAGS` run on CPU `core` only.
fn bench_json_on_core(core: &str, addr: &str, flags: &[&str]) -> serde_json::Value {
    let out = std::process::Command::new("taskset")
        .args(["-c", core, linerate(), "bench", addr, "--json", "-"])
        .args(flags)
        .output()
        .expect("taskset (util-linux) runs linerate");
    assert!(out.status.success(), "bench {flags:?}: {}", text(&out));
    serde_json::from_slice(&out.stdout).expect("bench JSON")
}

/// One side's stream threads crowded onto one core: the CPU is the limit,
/// at the crowded side. Four senders on CPU 0 writing 256 bytes at a time
/// against a server free to use every core (with the default writes, work
/// from outside the test on the free core made the receivers wait for it
/// more than the senders: docs/benchmarks/2026-12-01-loaded-series.md#the-crowded-side);
/// or two receivers on the last CPU reading 256 bytes at a
/// time (a system call each) against two senders on CPU 0 (with reads of
/// 1 or 2 KiB, or senders free to use every core, a busy host at times
/// named the senders, which waited for their core as much).
#[test]
fn a_side_crowded_onto_one_core_is_named_the_cpu_limit() {
    let _ahead = common::ahead_of_outside_load();
    let last = std::thread::available_parallelism()
        .map_or(1, |n| n.get() - 1)
        .to_string();
    let free = Server::start();
    let pinned = Server::start_with(
        &["serve", "--bind", "127.0.0.1", "--port", "0"],
        Some(&["taskset", "-c", &last]),
    );
    let unpinned = ["--affinity", "off", "-t", "2"];
    quiet_and_busy(&|host| {
        let mut senders = vec!["-P", "4", "--len", "256"];
        senders.extend(unpinned);
        let doc = bench_json_on_core("0", &free.addr(), &senders);
        let (limit, sentence) = verdict(&doc);
        let side = &doc["summary"]["verdict"]["side"];
        assert_eq!(limit, "cpu", "{host} host, senders on one core: {sentence}");
        assert_eq!(
            side, "sender",
            "{host} host, senders on one core: {sentence}"
        );

        let mut receivers = vec!["-P", "2", "--read-len", "256", "--rx-poll", "off"];
        receivers.extend(unpinned);
        let doc = bench_json_on_core("0", &pinned.addr(), &receivers);
        let (limit, sentence) = verdict(&doc);
        let side = &doc["summary"]["verdict"]["side"];
        assert_eq!(
            limit, "cpu",
            "{host} host, receivers on one core: {sentence}"
        );
        assert_eq!(
            side, "receiver",
            "{host} host, receivers on one core: {sentence}"
        );
    });
}

/// A destination in memory (tmpfs) is never called a disk: when writing it
/// held the transfer back, the sentence says the file system is in memory.
#[test]
fn a_tmpfs_destination_is_named_as_memory_never_as_a_disk() {
    let shm = std::path::Path::new("/dev/shm");
    assert!(shm.is_dir(), "/dev/shm is a tmpfs on this kind of machine");
    let dir = TempDir::under(shm, "verdict-tmpfs");
    let srv = Server::with_root(dir.path());
    quiet_and_busy(&|host| {
        let target = format!("{}:/{host}", srv.addr());
        let out = common::run(&["send", "--from-memory", "1G", "--json", "-", "-q", &target]);
        assert!(out.status.success(), "{host}: {}", text(&out));
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("send JSON");
        let (limit, sentence) = verdict(&doc);
        let v = &doc["summary"]["verdict"];
        assert_eq!(
            v["evidence"]["destination_in_memory"], 1.0,
            "{host} host: {v}"
        );
        assert!(!sentence.contains("by the disk"), "{host} host: {sentence}");
        // Under its own rate cap, writing into memory: where the streams
        // held the cap, the cap is the limit. Where they fell short (a busy
        // host, seen: the copies into memory took 77 % of the streams'
        // time), what held them is named, and still not as a disk.
        let capped = format!("{}:/{host}-capped", srv.addr());
        let doc = capped_send_doc(host, &capped, &[]);
        let (capped_limit, capped_sentence) = verdict(&doc);
        let steady = doc["summary"]["verdict"]["evidence"]["steady_bits_per_second"]
            .as_f64()
            .unwrap_or(0.0);
        if steady >= 0.9e9 {
            assert_eq!(
                capped_limit, "application",
                "{host} host: {capped_sentence}"
            );
            assert!(
                capped_sentence.contains("--rate"),
                "{host} host: {capped_sentence}"
            );
        } else {
            assert!(
                !capped_sentence.contains("by the disk"),
                "{host} host: {capped_sentence}"
            );
        }
        if limit == "destination_disk" {
            assert!(
                sentence.contains("in memory (tmpfs)"),
                "{host} host: {sentence}"
            );
        }
    });
}
