//! `linerate tune` against the real system: the audit agrees with sysctl,
//! ip, tc and ethtool; apply then revert inside a namespace restores every
//! value; the tuning study measures its gain. Root parts run in CI.

use crate::common;

use std::process::{Command, Output};

use common::{assert_matches_schema, linerate, require_root, run};

fn sh(prefix: &[&str], cmd: &[&str]) -> Output {
    let mut all: Vec<&str> = prefix.to_vec();
    all.extend_from_slice(cmd);
    Command::new(all[0])
        .args(&all[1..])
        .output()
        .expect("run a system tool")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn norm(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A scratch namespace, removed however the test ends.
struct Netns(String);

impl Netns {
    fn new(tag: &str) -> Netns {
        let name = format!("lrt-{tag}-{}", std::process::id());
        let _ = sh(&[], &["ip", "netns", "del", &name]);
        assert!(sh(&[], &["ip", "netns", "add", &name]).status.success());
        Netns(name)
    }
    fn prefix(&self) -> [&str; 4] {
        ["ip", "netns", "exec", &self.0]
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        let _ = sh(&[], &["ip", "netns", "del", &self.0]);
    }
}

fn have_ethtool() -> bool {
    let ok = Command::new("ethtool")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok && std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("ethtool is not installed; .ci/run installs it");
    }
    ok
}

/// `ethtool -g` as ((rx_max, tx_max), (rx, tx)).
fn ethtool_rings(out: &str) -> Option<((u64, u64), (u64, u64))> {
    let mut max = (None, None);
    let mut cur = (None, None);
    let mut in_current = false;
    for line in out.lines() {
        if line.starts_with("Current hardware settings") {
            in_current = true;
        }
        let slot = if in_current { &mut cur } else { &mut max };
        if let Some(v) = line.strip_prefix("RX:") {
            slot.0 = v.trim().parse().ok();
        } else if let Some(v) = line.strip_prefix("TX:") {
            slot.1 = v.trim().parse().ok();
        }
    }
    Some(((max.0?, max.1?), (cur.0?, cur.1?)))
}

fn ethtool_flag(out: &str, name: &str) -> Option<bool> {
    out.lines()
        .find_map(|l| l.strip_prefix(&format!("{name}: ")))
        .map(|v| v.starts_with("on"))
}

/// Compares one interface's audited facts with what the usual tools say.
fn check_interface(prefix: &[&str], iface: &str, ethtool: bool) -> usize {
    let mut args: Vec<&str> = prefix.to_vec();
    args.extend_from_slice(&[linerate(), "tune", "audit", "--iface", iface, "--json", "-"]);
    let out = sh(&[], &args);
    assert!(
        out.status.success(),
        "audit {iface}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("audit JSON");
    assert_eq!(doc["schema"], "linerate.audit/1");
    let f = &doc["facts"]["interfaces"][0];
    assert_eq!(f["name"], iface);
    let mut checked = 0;

    let link: serde_json::Value = serde_json::from_slice(
        &sh(prefix, &["ip", "-d", "-j", "link", "show", "dev", iface]).stdout,
    )
    .unwrap();
    let link = &link[0];
    assert_eq!(f["mtu"], link["mtu"], "{iface} mtu");
    assert_eq!(f["tx_queue_len"], link["txqlen"], "{iface} txqueuelen");
    assert_eq!(
        f["operstate"].as_str().unwrap().to_lowercase(),
        link["operstate"].as_str().unwrap().to_lowercase(),
        "{iface} operstate"
    );
    assert_eq!(f["ifindex"], link["ifindex"], "{iface} ifindex");
    checked += 4;

    let qd: serde_json::Value =
        serde_json::from_slice(&sh(prefix, &["tc", "-j", "qdisc", "show", "dev", iface]).stdout)
            .unwrap();
    let root = qd.as_array().unwrap().iter().find(|q| q["root"] == true);
    assert_eq!(
        f["root_qdisc"],
        root.map_or(serde_json::Value::Null, |q| q["kind"].clone()),
        "{iface} qdisc"
    );
    checked += 1;

    if ethtool {
        let e = &f["ethtool"];
        let info = sh(prefix, &["ethtool", "-i", iface]);
        let driver = text(&info)
            .lines()
            .find_map(|l| l.strip_prefix("driver: ").map(str::to_string));
        if info.status.success() {
            assert_eq!(
                e["driver"].as_str().map(str::to_string),
                driver,
                "{iface} driver"
            );
            checked += 1;
        }
        let g = sh(prefix, &["ethtool", "-g", iface]);
        match ethtool_rings(&text(&g)).filter(|_| g.status.success()) {
            Some(((rx_max, tx_max), (rx, tx))) => {
                let r = &e["rings"];
                assert_eq!(
                    (
                        r["rx_max"].as_u64(),
                        r["tx_max"].as_u64(),
                        r["rx"].as_u64(),
                        r["tx"].as_u64()
                    ),
                    (Some(rx_max), Some(tx_max), Some(rx), Some(tx)),
                    "{iface} rings"
                );
                checked += 1;
            }
            None => assert!(
                e["rings"].is_null(),
                "{iface}: ethtool -g fails but the audit has rings"
            ),
        }
        let k = text(&sh(prefix, &["ethtool", "-k", iface]));
        for (name, key) in [
            ("tcp-segmentation-offload", "tso"),
            ("generic-segmentation-offload", "gso"),
            ("generic-receive-offload", "gro"),
            ("large-receive-offload", "lro"),
        ] {
            assert_eq!(
                e["offloads"][key].as_bool(),
                ethtool_flag(&k, name),
                "{iface} {key}"
            );
            checked += 1;
        }
        let c = sh(prefix, &["ethtool", "-c", iface]);
        if c.status.success() {
            let t = text(&c);
            let adaptive = t
                .lines()
                .find_map(|l| l.strip_prefix("Adaptive RX: "))
                .map(|v| v.starts_with("on"));
            let usecs = t
                .lines()
                .find_map(|l| l.strip_prefix("rx-usecs: "))
                .and_then(|v| v.trim().parse::<u64>().ok());
            assert_eq!(
                e["coalesce"]["adaptive_rx"].as_bool(),
                adaptive,
                "{iface} adaptive-rx"
            );
            if let Some(u) = usecs {
                assert_eq!(
                    e["coalesce"]["rx_usecs"].as_u64(),
                    Some(u),
                    "{iface} rx-usecs"
                );
            }
            checked += 1;
        } else {
            assert!(
                e["coalesce"].is_null(),
                "{iface}: ethtool -c fails but the audit has coalescing"
            );
        }
    }

    for (key, value) in doc["facts"]["sysctls"].as_object().unwrap() {
        let s = sh(prefix, &["sysctl", "-n", key]);
        assert!(s.status.success(), "sysctl -n {key}");
        assert_eq!(norm(&text(&s)), value.as_str().unwrap(), "{key}");
        checked += 1;
    }
    checked
}

#[test]
fn audit_agrees_with_sysctl_ip_tc_and_ethtool() {
    let ethtool = have_ethtool();
    let links: serde_json::Value =
        serde_json::from_slice(&sh(&[], &["ip", "-j", "link", "show"]).stdout).unwrap();
    let mut total = 0;
    for l in links.as_array().unwrap() {
        total += check_interface(&[], l["ifname"].as_str().unwrap(), ethtool);
    }
    // lo alone gives 5 link facts, 4+ offloads and 18 sysctls.
    assert!(total >= 25, "only {total} facts compared");
    if !require_root("audit_agrees_with_sysctl_ip_tc_and_ethtool (veth part)") {
        return;
    }
    // A veth pair in a namespace: another driver, seen from inside.
    let ns = Netns::new("aud");
    let p = ns.prefix();
    assert!(
        sh(
            &p,
            &[
                "ip", "link", "add", "v0", "type", "veth", "peer", "name", "v1"
            ]
        )
        .status
        .success()
    );
    assert!(
        sh(&p, &["ip", "link", "set", "v0", "up", "mtu", "9000"])
            .status
            .success()
    );
    check_interface(&p, "v0", ethtool);
}

/// Every readable value under /proc/sys/net/{core,ipv4} of a namespace.
fn snapshot(prefix: &[&str]) -> Vec<String> {
    let out = sh(
        prefix,
        &[
            "sh",
            "-c",
            "grep -r . /proc/sys/net/core /proc/sys/net/ipv4 2>/dev/null | sort",
        ],
    );
    let lines: Vec<String> = text(&out).lines().map(str::to_string).collect();
    assert!(lines.len() > 50, "snapshot too small: {}", lines.len());
    lines
}

#[test]
fn apply_then_revert_inside_a_namespace_restores_every_value() {
    if !require_root("apply_then_revert_inside_a_namespace_restores_every_value") {
        return;
    }
    let ns = Netns::new("app");
    let p = ns.prefix();
    let dir = std::env::temp_dir().join(format!("lrt-tune-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let plan = dir.join("plan.json");
    let state = dir.join("state.json");
    let (plan_s, state_s) = (plan.to_str().unwrap(), state.to_str().unwrap());
    let out = run(&[
        "tune", "plan", "--rate", "10G", "--rtt", "44ms", "-o", plan_s,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let host_before = snapshot(&[]);
    let ns_before = snapshot(&p);

    let out = run(&[
        "tune", "apply", "--plan", plan_s, "--netns", &ns.0, "--state", state_s,
    ]);
    let said = text(&out);
    assert!(
        out.status.success(),
        "apply: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The plan's buffers are in force inside, and nothing changed outside.
    // (The plan's figure depends on the core speed it measured: on a busy
    // host it plans two streams of half the buffer each.)
    let planned: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&plan).unwrap()).unwrap();
    let want = planned["settings"]
        .as_array()
        .and_then(|s| s.iter().find(|s| s["key"] == "net.ipv4.tcp_rmem"))
        .and_then(|s| s["value"].as_str())
        .map(norm)
        .expect("the plan sets tcp_rmem");
    let rmem = norm(&text(&sh(&p, &["cat", "/proc/sys/net/ipv4/tcp_rmem"])));
    assert_eq!(rmem, want);
    assert!(said.contains("skip  net.core.netdev_max_backlog"), "{said}");
    assert_eq!(snapshot(&[]), host_before, "the host's sysctls changed");
    assert_ne!(snapshot(&p), ns_before);
    // A second apply is refused while the first is in force.
    let again = run(&[
        "tune", "apply", "--plan", plan_s, "--netns", &ns.0, "--state", state_s,
    ]);
    assert!(!again.status.success());
    assert!(String::from_utf8_lossy(&again.stderr).contains("already applied"));

    let out = run(&["tune", "revert", "--netns", &ns.0, "--state", state_s]);
    assert!(
        out.status.success(),
        "revert: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        snapshot(&p),
        ns_before,
        "revert did not restore every value"
    );
    assert!(!state.exists());
    let twice = run(&["tune", "revert", "--netns", &ns.0, "--state", state_s]);
    assert!(!twice.status.success());
    assert!(String::from_utf8_lossy(&twice.stderr).contains("nothing applied"));

    // A profile, planned against the namespace itself, round-trips too.
    let out = run(&[
        "tune",
        "apply",
        "--profile",
        "dtn-100g",
        "--netns",
        &ns.0,
        "--state",
        state_s,
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        run(&["tune", "revert", "--netns", &ns.0, "--state", state_s])
            .status
            .success()
    );
    assert_eq!(snapshot(&p), ns_before);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn without_root_audit_reads_what_it_can_and_apply_refuses() {
    if !require_root("without_root_audit_reads_what_it_can_and_apply_refuses") {
        return;
    }
    let nobody = common::run_as_nobody;
    let out = nobody(&["tune", "audit", "--json", "-"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(doc["facts"]["sysctls"].as_object().unwrap().len() >= 15);
    for args in [
        vec!["tune", "apply", "--profile", "wan-10g"],
        vec!["tune", "revert"],
        vec!["study", "tuning", "--quick"],
    ] {
        let out = nobody(&args);
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("root"), "{args:?}: {err}");
    }
    // Bad input is an error, not a panic.
    for args in [
        vec!["tune", "apply", "--profile", "nope", "--dry-run"],
        vec!["tune", "audit", "--root", "/nonexistent"],
        vec!["tune", "audit", "--iface", "lr-none0"],
        vec!["tune", "plan", "--rate", "fast"],
    ] {
        let out = run(&args);
        assert_eq!(
            out.status.code(),
            Some(if args[1] == "plan" { 2 } else { 1 }),
            "{args:?}"
        );
    }
}

#[test]
fn tuning_study_raises_one_stream_at_least_threefold_at_44ms() {
    if !require_root("tuning_study_raises_one_stream_at_least_threefold_at_44ms") {
        return;
    }
    let name = format!("tun{}", std::process::id() % 1000);
    let out = run(&["study", "tuning", "--quick", "--name", &name, "--json", "-"]);
    let _ = run(&["lab", "down", "--name", &name]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_matches_schema(&doc);
    assert_eq!(doc["parameters"]["study"], "tuning");
    let f = &doc["study"]["findings"];
    let gain = f["gain"].as_f64().unwrap();
    assert!(gain >= 3.0, "gain {gain}: {f}");
    let points = doc["study"]["points"].as_array().unwrap();
    assert!(points.iter().any(|p| p["series"] == "before"));
    assert!(points.iter().any(|p| p["series"] == "after"));
}

/// On this host, a 100 Gbit/s plan at 44 ms takes a stream a core (what
/// one core carries was measured, no host here carries 100 Gbit/s on one),
/// sizes each stream's buffer for its share, and states the ceiling.
#[test]
fn a_plan_beyond_one_core_takes_a_stream_a_core_and_states_the_ceiling() {
    let out = Command::new(env!("CARGO_BIN_EXE_linerate"))
        .args([
            "tune", "plan", "--rate", "100G", "--rtt", "44ms", "--json", "-",
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    let plan: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let cores = std::thread::available_parallelism().unwrap().get() as f64;
    let per_core = plan["per_core_bps"]
        .as_f64()
        .expect("measured per-core rate");
    let want = (100e9 / per_core).ceil().min(cores);
    assert_eq!(plan["streams"].as_f64().unwrap(), want, "{plan}");
    // Each buffer holds its stream's share at 44 ms, twice over (autotuning's
    // overhead), not the whole 524 MiB BDP.
    let share = (100e9 / want).min(per_core) / 8.0 * 0.044;
    let buffer = plan["buffer_bytes"].as_f64().unwrap();
    assert!(
        buffer >= share && buffer <= 4.0 * share,
        "{buffer} for {share}"
    );
    if per_core * want < 100e9 {
        let notes = plan["notes"].to_string();
        assert!(notes.contains("this host's ceiling"), "{notes}");
    }
}

/// In a fresh network namespace loopback is down, so what one core
/// carries cannot be measured: the plan is made without it and says so,
/// and its pacing line never caps above what a stream reaches.
#[test]
fn a_plan_where_loopback_is_down_states_its_assumption() {
    if !require_root("a_plan_where_loopback_is_down_states_its_assumption") {
        return;
    }
    let out = sh(
        &["unshare", "-n"],
        &[linerate(), "tune", "plan", "--rate", "10G", "--rtt", "10ms"],
    );
    assert!(out.status.success(), "{}", text(&out));
    let all = text(&out);
    assert!(
        all.contains("note: what one core carries was not measured")
            && all.contains("--per-core-rate gives the rate"),
        "{all}"
    );
    assert!(all.contains("tune plan: 10.00 Gbit/s"), "{all}");
    // Given a core's rate below a stream's share, the plan paces nothing.
    let out = run(&[
        "tune",
        "plan",
        "--rate",
        "100G",
        "--rtt",
        "1ms",
        "--per-core-rate",
        "10G",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("pacing / stream          none needed"),
        "{}",
        text(&out)
    );
}
