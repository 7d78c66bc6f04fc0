//! Root: fabric labs end to end. Real benches marked with DSCP cross the
//! emulator's switches; the per-port, per-class counters show the shares,
//! the drops and the pauses.

use crate::common;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::testlab::TestLab;
use common::{Guard, alone_with_traffic, linerate, require_root, run};
use serde_json::Value;

/// Every port's counters, as `lab status --json` gives them.
fn ports(lab: &TestLab) -> Vec<Value> {
    lab.status()["counters"]["ports"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

fn port<'a>(ports: &'a [Value], name: &str) -> &'a Value {
    ports
        .iter()
        .find(|p| p["port"] == name)
        .unwrap_or_else(|| panic!("no port {name}"))
}

fn class_field(p: &Value, class: &str, field: &str) -> u64 {
    p["classes"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["class"] == class))
        .and_then(|c| c[field].as_u64())
        .unwrap_or(0)
}

fn sum_field(ports: &[Value], field: &str) -> u64 {
    ports
        .iter()
        .flat_map(|p| p["classes"].as_array().cloned().unwrap_or_default())
        .map(|c| c[field].as_u64().unwrap_or(0))
        .sum()
}

/// A bench from `host` to `to:port`, running in the background.
fn bench_from(lab: &TestLab, host: &str, to: &str, port: u16, extra: &[&str]) -> Child {
    let target = format!("{}:{port}", lab.addr(to, false));
    common::linerate_cmd()
        .args(["lab", "exec", "--name", &lab.name, host, "--"])
        .args([linerate(), "bench", &target, "--json", "-"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("bench")
}

fn finish(child: Child) -> Value {
    let out = child.wait_with_output().expect("bench output");
    assert!(
        out.status.success(),
        "bench: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("bench JSON")
}

/// Waits until the counters stop changing: everything sent has left the fabric.
fn settled(lab: &TestLab) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = ports(lab);
    loop {
        std::thread::sleep(Duration::from_millis(200));
        let now = ports(lab);
        if now == last && sum_field(&now, "queued_bytes") == 0 {
            return now;
        }
        assert!(Instant::now() < deadline, "the fabric never went quiet");
        last = now;
    }
}

#[test]
fn a_leaf_spine_lab_comes_up_and_down_and_its_counters_add_up() {
    if !require_root("a_leaf_spine_lab_comes_up_and_down_and_its_counters_add_up") {
        return;
    }
    let _alone = alone_with_traffic();
    let lab = TestLab::up(
        "spine",
        &[
            "--topology",
            "leaf-spine",
            "--leaves",
            "2",
            "--hosts-per-leaf",
            "4",
            "--taper",
            "4:1",
        ],
    );
    assert_eq!(lab.namespaces().len(), 9, "8 hosts and the emulator's");
    // Every port is in the counters from the moment `up` returns, not
    // 50 ms later.
    let first = ports(&lab);
    for name in ["h1>leaf1", "leaf1>h1", "leaf1>spine1", "spine1>leaf2"] {
        assert!(
            port(&first, name)["classes"][0]["sent_bytes"].is_u64(),
            "{name}"
        );
    }
    let text =
        String::from_utf8_lossy(&run(&["lab", "status", "--name", &lab.name]).stdout).to_string();
    assert!(
        text.contains("leaf-spine: 2 leaves of 4 hosts") && text.contains("taper 4:1"),
        "{text}"
    );
    let _server = lab.serve("h5", 5201);
    let result = finish(bench_from(&lab, "h1", "h5", 5201, &["-t", "2"]));
    let payload = result["summary"]["bytes"]
        .as_u64()
        .expect("bytes in the bench result");
    let ports = settled(&lab);
    // What h1's port sent is the bench's payload plus the headers of its
    // segments (1448 of each 1500 bytes are payload) and the odd retransmission.
    let sent = class_field(port(&ports, "h1>leaf1"), "be", "sent_bytes");
    let ratio = sent as f64 / payload as f64;
    assert!(
        (1.0..1.08).contains(&ratio),
        "h1 sent {sent}, bench moved {payload}"
    );
    // Every switch forwards, drops or holds what reaches it.
    for switch in ["leaf1", "leaf2", "spine1"] {
        let into: u64 = ports
            .iter()
            .filter(|p| p["to"] == switch)
            .map(|p| class_field(p, "be", "sent_bytes"))
            .sum();
        let out: u64 = ports
            .iter()
            .filter(|p| p["from"] == switch)
            .map(|p| {
                class_field(p, "be", "sent_bytes")
                    + class_field(p, "be", "drop_bytes")
                    + class_field(p, "be", "queued_bytes")
            })
            .sum();
        assert_eq!(into, out, "{switch}: in {into}, out {out}");
        assert!(into > 0 || switch == "spine1");
    }
    assert!(class_field(port(&ports, "leaf1>spine1"), "be", "sent_bytes") >= sent * 95 / 100);
    let name = lab.name.clone();
    drop(lab);
    let left = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&left.stdout).contains(&format!("lr-{name}-")),
        "lab down left namespaces"
    );
}

/// Two cubic flows in two classes into one port for 4 s; each class's
/// share of the port over the middle 2 s.
fn shares(lab: &TestLab, a_extra: &[&str], b_extra: &[&str]) -> (f64, f64) {
    let _s1 = lab.serve("h3", 5201);
    let _s2 = lab.serve("h3", 5202);
    // Blocking receivers: a polling one would hold a core at real-time
    // priority (common::realtime_ahead_of_outside_load).
    let mut a_args = vec!["-t", "4", "--cc", "cubic", "--rx-poll", "off"];
    a_args.extend_from_slice(a_extra);
    let mut b_args = vec!["-t", "4", "--cc", "cubic", "--rx-poll", "off"];
    b_args.extend_from_slice(b_extra);
    let a = bench_from(lab, "h1", "h3", 5201, &a_args);
    let b = bench_from(lab, "h2", "h3", 5202, &b_args);
    let sample = || {
        let p = ports(lab);
        let out = port(&p, "sw1>h3").clone();
        (
            class_field(&out, "a", "sent_bytes"),
            class_field(&out, "b", "sent_bytes"),
        )
    };
    // The window opens once both classes cross the port.
    let deadline = Instant::now() + Duration::from_secs(3);
    while {
        let (x, y) = sample();
        x == 0 || y == 0
    } {
        assert!(Instant::now() < deadline, "a class never crossed the port");
        std::thread::sleep(Duration::from_millis(50));
    }
    std::thread::sleep(Duration::from_millis(500));
    let (a0, b0) = sample();
    let t0 = Instant::now();
    std::thread::sleep(Duration::from_secs(2));
    let (a1, b1) = sample();
    let secs = t0.elapsed().as_secs_f64();
    finish(a);
    finish(b);
    let rate = |bytes: u64| bytes as f64 * 8.0 / secs;
    (rate(a1 - a0), rate(b1 - b0))
}

/// The fabric's backends: the emulator's model and kernel switches.
const BACKENDS: [&str; 2] = ["emulator", "htb"];

fn star(tag: &str, backend: &str, classes: &[&str]) -> TestLab {
    let mut args = vec![
        "--topology",
        "star",
        "--hosts",
        "3",
        "--rate",
        "500M",
        "--backend",
        backend,
    ];
    for c in classes {
        args.extend(["--class", c]);
    }
    TestLab::up(tag, &args)
}

#[test]
fn ets_shares_one_port_by_its_weights() {
    if !require_root("ets_shares_one_port_by_its_weights") {
        return;
    }
    let _alone = alone_with_traffic();
    let _ahead = common::realtime_ahead_of_outside_load();
    for ((wa, wb), backend) in [(50u32, 50u32), (80, 20)]
        .into_iter()
        .flat_map(|w| BACKENDS.map(|b| (w, b)))
    {
        let a = format!("a:dscp=af11:ets={wa}");
        let b = format!("b:dscp=*:ets={wb}");
        let lab = star(&format!("e{wa}{}", &backend[..1]), backend, &[&a, &b]);
        let (ra, rb) = shares(&lab, &["--dscp", "af11"], &[]);
        let total = ra + rb;
        let (sa, sb) = (ra / total, rb / total);
        let want = (f64::from(wa) / 100.0, f64::from(wb) / 100.0);
        let ok = (sa / want.0 - 1.0).abs() <= 0.1 && (sb / want.1 - 1.0).abs() <= 0.1;
        let says = format!(
            "{backend} ETS {wa}/{wb}: a {:.0} Mbit/s, b {:.0} Mbit/s (shares {sa:.3}/{sb:.3})",
            ra / 1e6,
            rb / 1e6
        );
        assert!(ok && total > 0.8 * 500e6, "{says}");
    }
}

#[test]
fn a_strict_class_takes_what_it_needs_and_bulk_the_rest() {
    if !require_root("a_strict_class_takes_what_it_needs_and_bulk_the_rest") {
        return;
    }
    let _alone = alone_with_traffic();
    let _ahead = common::realtime_ahead_of_outside_load();
    for backend in BACKENDS {
        let lab = star(
            &format!("prio{}", &backend[..1]),
            backend,
            &["a:dscp=ef:strict", "b:dscp=*:ets=100"],
        );
        let (ra, rb) = shares(&lab, &["--dscp", "ef", "-b", "150M"], &[]);
        let ok = (ra / 150e6 - 1.0).abs() <= 0.1 && rb >= 0.9 * (500e6 - ra);
        let says = format!(
            "{backend} strict a at 150M: a {:.0} Mbit/s, bulk b {:.0} Mbit/s of 500",
            ra / 1e6,
            rb / 1e6
        );
        assert!(ok, "{says}");
        let p = ports(&lab);
        assert_eq!(
            class_field(port(&p, "sw1>h3"), "a", "drops"),
            0,
            "{backend}"
        );
    }
}

/// A leaf-spine of kernel switches (`--backend htb`): a namespace per
/// switch, every host reaches one on the other leaf across the spines
/// (ECMP over two), the ports' counters follow the traffic, and what
/// kernel qdiscs cannot do (PFC pause) is refused before anything is built.
#[test]
fn kernel_switches_route_a_leaf_spine_and_refuse_pause() {
    if !require_root("kernel_switches_route_a_leaf_spine_and_refuse_pause") {
        return;
    }
    let _alone = alone_with_traffic();
    let out = run(&[
        "lab",
        "up",
        "--name",
        "khtb",
        "--backend",
        "htb",
        "--topology",
        "star",
        "--class",
        "a:dscp=ef:ets=50:lossless",
        "--class",
        "b:dscp=*:ets=50",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("PFC"), "{err}");
    let netns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    assert!(
        !String::from_utf8_lossy(&netns.stdout).contains("lr-khtb-"),
        "refused before anything was built"
    );
    let lab = TestLab::up(
        "kls",
        &[
            "--backend",
            "htb",
            "--topology",
            "leaf-spine",
            "--leaves",
            "2",
            "--spines",
            "2",
            "--hosts-per-leaf",
            "4",
            "--taper",
            "4:1",
        ],
    );
    assert_eq!(lab.namespaces().len(), 12, "8 hosts, 2 leaves, 2 spines");
    let text =
        String::from_utf8_lossy(&run(&["lab", "status", "--name", &lab.name]).stdout).to_string();
    assert!(text.contains("backend htb"), "{text}");
    let _server = lab.serve("h8", 5201);
    for h in ["h1", "h2", "h3", "h4"] {
        let result = finish(bench_from(&lab, h, "h8", 5201, &["-t", "1"]));
        assert!(result["summary"]["bytes"].as_u64() > Some(0), "{h}");
    }
    let ports = settled(&lab);
    let from_leaf1: u64 = ["h1", "h2", "h3", "h4"]
        .iter()
        .map(|h| class_field(port(&ports, &format!("{h}>leaf1")), "be", "sent_bytes"))
        .sum();
    let up: u64 = ["leaf1>spine1", "leaf1>spine2"]
        .iter()
        .map(|p| class_field(port(&ports, p), "be", "sent_bytes"))
        .sum();
    // Everything leaf1's hosts sent left by the spines, but for what the
    // uplinks' queues dropped: one flow at a host's 1 Gbit/s hashes onto
    // one 0.5 Gbit/s uplink (7 % of the bytes dropped there in one loaded
    // run); the routes have no other way out.
    assert!(from_leaf1 > 0);
    assert!(
        up >= from_leaf1 * 80 / 100,
        "leaf1's hosts sent {from_leaf1} bytes, its uplinks carried {up}"
    );
    // The uplinks run at the taper's rate: 4 x 1 Gbit/s at 4:1 over two spines.
    assert_eq!(port(&ports, "leaf1>spine2")["rate_bps"], 500_000_000u64);
    // A proxy job across both leaves: the fabric routes its ranks too.
    let job = common::linerate_cmd()
        .args(["job", "all-to-all", "--lab", &lab.name])
        .args(["--lab-hosts", "h1,h2,h5,h6", "-n", "20", "--json", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("job");
    let job = finish(job);
    let ranks = job["fleet"]["steps"][0]["job"]["ranks"].as_array().unwrap();
    assert!(ranks.iter().all(|r| r["iterations"] == 20), "{ranks:?}");
}

/// Three cubic senders into one host for 3 s; the counters after.
fn incast(lab: &TestLab) -> Vec<Value> {
    let servers: Vec<Guard> = (5201..5204).map(|p| lab.serve("h4", p)).collect();
    let benches: Vec<Child> = ["h1", "h2", "h3"]
        .iter()
        .zip(5201..)
        .map(|(h, p)| bench_from(lab, h, "h4", p, &["-t", "3", "--cc", "cubic"]))
        .collect();
    for b in benches {
        finish(b);
    }
    drop(servers);
    settled(lab)
}

#[test]
fn pfc_pauses_upstream_instead_of_dropping_and_without_it_the_port_drops() {
    if !require_root("pfc_pauses_upstream_instead_of_dropping_and_without_it_the_port_drops") {
        return;
    }
    let _alone = alone_with_traffic();
    let up = |tag: &str, class: &str| {
        TestLab::up(
            tag,
            &[
                "--topology",
                "star",
                "--hosts",
                "4",
                "--rate",
                "500M",
                "--class",
                class,
            ],
        )
    };
    let lab = up("pfc", "bulk:dscp=*:ets=100:lossless");
    let with = incast(&lab);
    assert_eq!(
        sum_field(&with, "drops"),
        0,
        "a lossless class drops nothing: {with:#?}"
    );
    let received: u64 = ["h1", "h2", "h3"]
        .iter()
        .map(|h| {
            class_field(
                port(&with, &format!("{h}>sw1")),
                "bulk",
                "pause_received_us",
            )
        })
        .sum();
    let sent: u64 = ["h1", "h2", "h3"]
        .iter()
        .map(|h| class_field(port(&with, &format!("sw1>{h}")), "bulk", "pause_sent_us"))
        .sum();
    assert!(
        received > 0 && received == sent,
        "pauses: received {received}, sent {sent}"
    );
    let text =
        String::from_utf8_lossy(&run(&["lab", "status", "--name", &lab.name]).stdout).to_string();
    assert!(
        text.contains("pause durations") && text.contains("sw1"),
        "{text}"
    );
    drop(lab);

    let lab = up("nopfc", "bulk:dscp=*:ets=100");
    let without = incast(&lab);
    assert!(
        class_field(port(&without, "sw1>h4"), "bulk", "drops") > 0,
        "without PFC the incast port drops"
    );
    assert_eq!(sum_field(&without, "pause_received_us"), 0);
}

#[test]
fn fabric_flags_are_checked_before_anything_is_built() {
    let _traffic = common::beside_other_traffic();
    for (args, says) in [
        (vec!["--taper", "4:1"], "need a --topology"),
        (
            vec!["--topology", "star", "--class", "a:dscp=1:ets=50"],
            "add up to 50",
        ),
        (
            vec!["--topology", "star", "--class", "a:dscp=x:strict"],
            "DSCP",
        ),
        (
            vec![
                "--topology",
                "leaf-spine",
                "--leaves",
                "4",
                "--hosts-per-leaf",
                "4",
            ],
            "2 to 15 hosts",
        ),
        (
            vec!["--topology", "star", "--rtt", "10ms"],
            "WAN conditions",
        ),
        (
            vec!["--topology", "leaf-spine", "--hosts", "5"],
            "does not match",
        ),
        (vec!["--backend", "htb"], "switches of a --topology"),
        (
            vec![
                "--topology",
                "star",
                "--backend",
                "htb",
                "--ecn-threshold",
                "100K",
            ],
            "--ecn-threshold needs",
        ),
    ] {
        let mut full = vec!["lab", "up", "--name", "flags", "--dry-run"];
        full.extend_from_slice(&args);
        let out = run(&full);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{args:?} was accepted");
        assert!(err.contains(says), "{args:?}: {err}");
    }
    let out = run(&[
        "lab",
        "up",
        "--name",
        "flags",
        "--dry-run",
        "--topology",
        "leaf-spine",
        "--taper",
        "4:1",
    ]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("through a leaf-spine fabric"));
    let out = run(&[
        "lab",
        "up",
        "--name",
        "flags",
        "--dry-run",
        "--topology",
        "star",
        "--backend",
        "htb",
    ]);
    let script = String::from_utf8_lossy(&out.stdout);
    assert!(
        script.contains("ip netns add lr-flags-sw1")
            && script.contains("tc -n lr-flags-sw1 qdisc replace dev h1 root handle 1: htb"),
        "{script}"
    );
}

/// Two proxy jobs at once on disjoint allocations of one leaf-spine
/// fabric, the all-to-all marked EF into the strict class: each writes its
/// own document, and the latency class carried the all-to-all's bytes on
/// its hosts' ports and nothing on the halo's.
#[test]
fn two_jobs_share_a_fabric_on_disjoint_allocations_in_their_own_classes() {
    if !require_root("two_jobs_share_a_fabric_on_disjoint_allocations_in_their_own_classes") {
        return;
    }
    let _alone = alone_with_traffic();
    let lab = TestLab::up(
        "jobs",
        &[
            "--topology",
            "leaf-spine",
            "--taper",
            "4:1",
            "--class",
            "lat:dscp=ef:strict",
            "--class",
            "bulk:dscp=*:ets=100",
        ],
    );
    let job = |app: &str, hosts: &str, extra: &[&str]| {
        common::linerate_cmd()
            .args([
                "job",
                app,
                "--lab",
                &lab.name,
                "--lab-hosts",
                hosts,
                "-n",
                "100",
                "--json",
                "-",
            ])
            .args(extra)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("job")
    };
    let halo = job("halo3d", "h1,h3,h6,h8", &["--cells", "32"]);
    let a2a = job("all-to-all", "h2,h4,h5,h7", &["--dscp", "ef"]);
    let (halo, a2a) = (finish(halo), finish(a2a));
    for (doc, app, hosts) in [
        (&halo, "halo3d", ["h1", "h3", "h6", "h8"]),
        (&a2a, "all-to-all", ["h2", "h4", "h5", "h7"]),
    ] {
        common::assert_matches_schema(doc);
        let names: Vec<&str> = doc["fleet"]["hosts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, hosts, "{app} ran on its allocation");
        let ranks = doc["fleet"]["steps"][0]["job"]["ranks"].as_array().unwrap();
        assert!(
            ranks.iter().all(|r| r["iterations"] == 100),
            "{app}: {ranks:?}"
        );
    }
    let kinds = common::report_kinds(&halo, "job-report");
    assert_eq!(kinds, ["job-iterations"], "a job's report draws its ranks");
    let p = settled(&lab);
    for h in ["h2", "h4", "h5", "h7"] {
        assert!(
            class_field(
                port(&p, &format!("{h}>leaf{}", if h < "h5" { 1 } else { 2 })),
                "lat",
                "sent_bytes"
            ) > 0,
            "{h}"
        );
    }
    for h in ["h1", "h3"] {
        assert_eq!(
            class_field(port(&p, &format!("{h}>leaf1")), "lat", "sent_bytes"),
            0,
            "{h}"
        );
    }
    // The same marking flag on an incast between two of the halo's hosts:
    // its bytes go through the latency class from then on.
    let before = class_field(port(&p, "h3>leaf1"), "lat", "sent_bytes");
    let incast = common::linerate_cmd()
        .args(["incast", "--lab", &lab.name, "--lab-hosts", "h1,h3"])
        .args(["--senders", "1", "--sizes", "1M", "-t", "1", "--dscp", "ef"])
        .args(["--json", "-"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("incast");
    let incast = finish(incast);
    assert_eq!(incast["parameters"]["dscp"], 46);
    let sent = incast["fleet"]["steps"][0]["flows"][0]["bytes"]
        .as_u64()
        .unwrap();
    assert!(sent > 0, "{incast}");
    let marked = class_field(port(&settled(&lab), "h3>leaf1"), "lat", "sent_bytes") - before;
    assert!(
        marked >= sent,
        "the incast's {sent} bytes left h3 in the latency class ({marked} bytes)"
    );
}

/// The interference study on its reduced lab: every configuration ran
/// both jobs to their end, the PFC configuration paused, and the paper's
/// direction holds: beside the bandwidth job the latency job slows most
/// without classes, and far less with ETS or strict priority. (The bars
/// of 3x and 1.3x are the full study's, measured in bench/interference.py:
/// a test asserts the direction, not the size.) Where other work keeps the
/// cores busy, the two-job configurations also wait for a core, which no
/// class removes (seen beside two busy loops: 1.9x without classes against
/// 1.2x and 1.1x; 2.6x against 1.5x and 1.9x): the direction holds, the
/// size shrinks. One run: the classes decide which job's packets wait, so
/// the order does not depend on how fast the host is. The links run at
/// 400 Mbit/s, not the study's 1 Gbit/s: on a slow day the emulator's one
/// thread cannot forward 1 Gbit/s, the ports never queue and no class has
/// anything to order (docs/benchmarks/2026-12-02-loaded-series.md#the-study-on-a-slow-day).
#[test]
fn the_interference_study_reproduces_the_papers_direction() {
    if !require_root("the_interference_study_reproduces_the_papers_direction") {
        return;
    }
    let _alone = alone_with_traffic();
    let _ahead = common::realtime_ahead_of_outside_load();
    {
        let (out, busy) = common::host_busy_while(|| {
            run(&[
                "study",
                "interference",
                "--quick",
                "--rate",
                "400M",
                "--name",
                "intf",
                "--json",
                "-",
            ])
        });
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let doc: Value = serde_json::from_slice(&out.stdout).expect("study JSON");
        common::assert_matches_schema(&doc);
        let study = &doc["study"];
        let series: Vec<&str> = study["points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["series"].as_str().unwrap())
            .collect();
        for s in [
            "latency/latency-alone",
            "bandwidth/bandwidth-alone",
            "latency/no-classes",
            "bandwidth/ets",
            "latency/strict",
            "latency/pfc",
        ] {
            assert!(series.contains(&s), "{s} in {series:?}");
        }
        for p in study["points"].as_array().unwrap() {
            let ranks = p["result"]["fleet"]["steps"][0]["job"]["ranks"]
                .as_array()
                .unwrap()
                .clone();
            assert!(
                ranks
                    .iter()
                    .all(|r| r.get("error").is_none() && r["iterations"].as_u64() > Some(0)),
                "{}: {ranks:?}",
                p["series"]
            );
        }
        let f = &study["findings"];
        let paused: f64 = ["leaf1", "leaf2", "spine1"]
            .iter()
            .map(|s| f[format!("pause_sent_us_pfc_{s}")].as_f64().unwrap_or(0.0))
            .sum();
        assert!(paused > 0.0, "PFC paused: {f}");
        let slow = |c: &str| f[format!("latency_slowdown_{c}")].as_f64().unwrap();
        let (none, ets, strict) = (slow("no-classes"), slow("ets"), slow("strict"));
        let sentence = study["definitions"]["sentence"]
            .as_str()
            .unwrap()
            .to_string();
        // The bandwidth job's time in each configuration it ran, and a
        // sentence on it beside the latency job's.
        for c in ["bandwidth-alone", "no-classes", "ets", "strict", "pfc"] {
            let s = f[format!("bandwidth_job_seconds_{c}")].as_f64();
            assert!(s.is_some_and(|s| s > 0.0), "{c}: {f}");
        }
        assert!(sentence.contains("The halo3d job took "), "{sentence}");
        eprintln!("host busy {:.0} % of the study: {sentence}", busy * 100.0);
        assert!(
            none > ets && none > strict,
            "the latency job slows most without classes: {none:.2}x against ETS \
             {ets:.2}x and strict {strict:.2}x (host busy {:.0} %): {sentence}",
            busy * 100.0
        );
        {
            let (kinds, page) = common::report_page(&doc, "study-report");
            for k in ["job-times", "job-per-node"] {
                assert_eq!(
                    kinds.iter().filter(|x| *x == k).count(),
                    2,
                    "{k}: one for each job in {kinds:?}"
                );
            }
            let table = page.split("id=\"pause-table\"").nth(1).expect("Table II");
            assert!(
                table.contains("<td>pfc</td><td>leaf1</td>"),
                "the PFC configuration's pauses, by switch: {table}"
            );
        }
    }
}
