//! Root: a bench between two network namespaces joined by a veth pair, over
//! IPv4 and IPv6. The namespaces are removed however the test ends.

use crate::common;

use std::process::Command;

use common::{Server, linerate, require_root};

struct Namespaces {
    a: String,
    b: String,
}

impl Namespaces {
    fn create(tag: &str) -> Namespaces {
        let id = std::process::id() % 100_000;
        let ns = Namespaces {
            a: format!("lrt-{tag}-{id}-a"),
            b: format!("lrt-{tag}-{id}-b"),
        };
        let x = id % 250;
        let (va, vb) = (format!("lv{id}a"), format!("lv{id}b"));
        let ip = |args: &[&str]| {
            let st = Command::new("ip").args(args).status().expect("run ip");
            assert!(st.success(), "ip {args:?} failed");
        };
        ip(&["netns", "add", &ns.a]);
        ip(&["netns", "add", &ns.b]);
        ip(&[
            "link", "add", &va, "netns", &ns.a, "type", "veth", "peer", &vb, "netns", &ns.b,
        ]);
        for (n, dev, host) in [(&ns.a, &va, 1), (&ns.b, &vb, 2)] {
            ip(&[
                "-n",
                n,
                "addr",
                "add",
                &format!("10.213.{x}.{host}/24"),
                "dev",
                dev,
            ]);
            ip(&[
                "-n",
                n,
                "addr",
                "add",
                &format!("fd00:213:{x}::{host}/64"),
                "dev",
                dev,
                "nodad",
            ]);
            ip(&["-n", n, "link", "set", dev, "up"]);
            ip(&["-n", n, "link", "set", "lo", "up"]);
        }
        ns
    }

    fn addr(&self, host: u8, v6: bool) -> String {
        let x = std::process::id() % 100_000 % 250;
        if v6 {
            format!("fd00:213:{x}::{host}")
        } else {
            format!("10.213.{x}.{host}")
        }
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        for n in [&self.a, &self.b] {
            let _ = Command::new("ip").args(["netns", "del", n]).status();
        }
    }
}

/// `linerate bench` from namespace `a`; its result document.
fn bench_from(ns: &Namespaces, target: &str, args: &[&str]) -> serde_json::Value {
    let out = Command::new("ip")
        .args([
            "netns",
            "exec",
            &ns.a,
            linerate(),
            "bench",
            target,
            "--json",
            "-",
        ])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "bench over {target}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn bench_between_namespaces_over_ipv4_and_ipv6() {
    let _traffic = common::beside_other_traffic();
    if !require_root("bench_between_namespaces_over_ipv4_and_ipv6") {
        return;
    }
    let ns = Namespaces::create("bench");
    let srv = Server::start_with(
        &["serve", "--bind", "::", "--port", "0"],
        Some(&["ip", "netns", "exec", &ns.b]),
    );
    for v6 in [false, true] {
        let target = if v6 {
            format!("[{}]:{}", ns.addr(2, true), srv.port)
        } else {
            format!("{}:{}", ns.addr(2, false), srv.port)
        };
        let doc = bench_from(&ns, &target, &["-t", "2", "-P", "2"]);
        let bps = doc["summary"]["bits_per_second"].as_f64().unwrap();
        assert!(bps > 0.0, "veth carried nothing over {target}");
        let streams = doc["streams"].as_array().unwrap();
        assert_eq!(streams.len(), 4);
        // Both streams moved data, each end counting it.
        assert!(
            streams.iter().all(|s| s["bytes"].as_u64() > Some(0)),
            "{target}: {streams:?}"
        );
        // Readers between namespaces wake per 128 KiB, polling or not.
        assert_eq!(doc["parameters"]["rcvlowat"], 128 << 10);
    }
    // One stream: each end has a core, so the reader blocks and both ends
    // move a megabyte per call.
    let target = format!("{}:{}", ns.addr(2, false), srv.port);
    let doc = bench_from(&ns, &target, &["-t", "1"]);
    let p = &doc["parameters"];
    assert_eq!(p["rx_poll"], false, "{p}");
    assert_eq!(p["read_len"], 1 << 20, "{p}");
    assert_eq!(p["write_len"], 1 << 20, "{p}");
    assert_eq!(p["rcvlowat"], 128 << 10, "{p}");
    // Asked for, a reader wakes for any data.
    let doc = bench_from(&ns, &target, &["-t", "1", "--rcvlowat", "1"]);
    assert_eq!(doc["parameters"]["rcvlowat"], 1);
    drop(srv);
}
