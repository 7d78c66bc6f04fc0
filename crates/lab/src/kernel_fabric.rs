//! A fabric of kernel switches (`--backend htb`): a namespace per switch
//! that routes between its ports (equal-cost paths hashed on ports, as a
//! leaf-spine's ECMP), every port's egress an HTB class per traffic class
//! over a byte FIFO of the port's buffer, classified by DSCP with u32
//! filters. Every class is guaranteed 1 % of the port and borrows the
//! rest: strict classes first (HTB priority), ETS classes after them by
//! quanta in proportion to their weights. What this backend has no
//! qdisc for (PFC pause, ECN marking without RED, hop delay without netem)
//! is refused before anything is built; the emulator has them all.

use std::net::{Ipv4Addr, Ipv6Addr};
use std::process::Command;

use serde::Deserialize;

use crate::spec::Lab;
use crate::{SpecError, ipcmd};
use linerate_emulator::fabric::graph::Graph;
use linerate_emulator::fabric::sim::{ClassCounters, PortCounters};
use linerate_emulator::fabric::{FabricSpec, Scheduling};

/// Why this backend cannot build `spec`, in the user's words.
pub fn refusal(spec: &FabricSpec) -> Option<SpecError> {
    if spec.has_pfc() {
        return Some(SpecError::HtbPause);
    }
    if spec.ecn_threshold_bytes.is_some() {
        return Some(SpecError::HtbEcn);
    }
    if spec.hop_delay_us > 0 {
        return Some(SpecError::HtbHopDelay);
    }
    None
}

/// The namespace of node `node` (a host's, or a switch's).
fn netns(lab: &Lab, g: &Graph, node: usize) -> String {
    match lab.hosts.get(node).filter(|_| g.nodes[node].host) {
        Some(h) => h.netns.clone(),
        None => format!("lr-{}-{}", lab.spec.name, g.nodes[node].name),
    }
}

/// Every switch's namespace.
pub fn switch_namespaces(lab: &Lab, g: &Graph) -> Vec<String> {
    (0..g.nodes.len())
        .filter(|&n| !g.nodes[n].host)
        .map(|n| netns(lab, g, n))
        .collect()
}

/// The device port `p` leaves by: a host's `lab0`, a switch's port named
/// after the node at its far end.
fn device(g: &Graph, p: usize) -> String {
    let l = &g.ports[p];
    if g.nodes[l.from].host {
        linerate_emulator::DEVICE.to_string()
    } else {
        g.nodes[l.to].name.clone()
    }
}

/// The links between two switches, each once, by their lower port.
fn switch_links(g: &Graph) -> Vec<usize> {
    (0..g.ports.len())
        .filter(|&p| p < g.reverse[p])
        .filter(|&p| !g.nodes[g.ports[p].from].host && !g.nodes[g.ports[p].to].host)
        .collect()
}

/// The addresses of switch link `k`'s two ends (the lower port's sender
/// first), outside the hosts' 10.201.0.0/16 and fd77::/16.
fn link_addrs(index: u8, k: usize) -> [(Ipv4Addr, Ipv6Addr); 2] {
    let k = k as u8;
    [1u8, 2].map(|end| {
        (
            Ipv4Addr::new(10, 202, index, 4 * k + end),
            Ipv6Addr::new(
                0xfd78,
                0,
                u16::from(index),
                u16::from(k),
                0,
                0,
                0,
                u16::from(end),
            ),
        )
    })
}

/// Every command that builds the switches, their links to each other and
/// to the hosts, their routes and their ports' queues, once every
/// namespace exists. The hosts' own addresses and routes are the lab's.
pub fn steps(lab: &Lab, spec: &FabricSpec) -> Vec<Vec<String>> {
    let g = Graph::build(spec);
    let mtu = lab.spec.mtu.to_string();
    let mut s = Vec::new();
    for ns in switch_namespaces(lab, &g) {
        for sysctl in [
            "net.ipv4.ip_forward=1",
            "net.ipv6.conf.all.forwarding=1",
            // ECMP on ports as well as addresses, as a fabric's switches hash.
            "net.ipv4.fib_multipath_hash_policy=1",
            "net.ipv6.fib_multipath_hash_policy=1",
        ] {
            s.push(ipcmd::sysctl(&ns, sysctl));
        }
    }
    // Every link as a veth pair, its ends named as `device` names them.
    for p in (0..g.ports.len()).filter(|&p| p < g.reverse[p]) {
        let (a, b) = (g.ports[p].from, g.ports[p].to);
        let (na, nb) = (netns(lab, &g, a), netns(lab, &g, b));
        let (da, db) = (device(&g, p), device(&g, g.reverse[p]));
        s.push(ipcmd::veth(&da, &na, &db, &nb));
        for (node, ns, dev) in [(a, &na, &da), (b, &nb, &db)] {
            // A host's own end is brought up with its addresses by the lab.
            if !g.nodes[node].host {
                s.push(ipcmd::up(ns, dev, &mtu));
            }
        }
    }
    // The gateway of each host's subnet on its switch's port.
    for (i, h) in lab.hosts.iter().enumerate() {
        // Every host has a link in a built graph; one without has no gateway.
        let Some(p) = (0..g.ports.len()).find(|&p| g.ports[p].from == i) else {
            continue;
        };
        let sw = netns(lab, &g, g.ports[p].to);
        let dev = device(&g, g.reverse[p]);
        let (v4, v6) = (
            format!("{}/28", h.gateway_v4),
            format!("{}/64", h.gateway_v6),
        );
        s.extend(ipcmd::addrs(&sw, &dev, &v4, &v6));
    }
    let links = switch_links(&g);
    for (k, &p) in links.iter().enumerate() {
        for (end, port) in [p, g.reverse[p]].into_iter().enumerate() {
            let (v4, v6) = link_addrs(lab.index, k)[end];
            let ns = netns(lab, &g, g.ports[port].from);
            let dev = device(&g, port);
            s.extend(ipcmd::addrs(
                &ns,
                &dev,
                &format!("{v4}/30"),
                &format!("{v6}/64"),
            ));
        }
    }
    s.extend(routes(lab, &g, &links));
    for p in 0..g.ports.len() {
        s.extend(port_queues(lab, &g, spec, p));
    }
    s
}

/// Each switch's routes to the subnets of the hosts it does not hold,
/// over every next hop on a shortest path.
fn routes(lab: &Lab, g: &Graph, links: &[usize]) -> Vec<Vec<String>> {
    // The far end's addresses of port `p` between two switches.
    let far = |p: usize| -> (Ipv4Addr, Ipv6Addr) {
        let low = p.min(g.reverse[p]);
        let k = links.iter().position(|&l| l == low).unwrap_or(0);
        link_addrs(lab.index, k)[usize::from(p == low)]
    };
    let mut s = Vec::new();
    for sw in (0..g.nodes.len()).filter(|&n| !g.nodes[n].host) {
        let ns = netns(lab, g, sw);
        for (i, h) in lab.hosts.iter().enumerate() {
            let hops = g.next_hops(sw, i);
            if hops.iter().any(|&p| g.ports[p].to == i) || hops.is_empty() {
                continue;
            }
            let o = h.v4.octets();
            let v4_net = format!("{}/28", Ipv4Addr::new(o[0], o[1], o[2], o[3] & 0xf0));
            let seg = h.v6.segments();
            let v6_net = format!(
                "{}/64",
                Ipv6Addr::new(seg[0], seg[1], seg[2], seg[3], 0, 0, 0, 0)
            );
            for (family, net) in [("-4", v4_net), ("-6", v6_net)] {
                let mut argv = ipcmd::cmd(&["ip", "-n", &ns, family, "route", "add", &net]);
                for &p in hops {
                    let (v4, v6) = far(p);
                    let via = if family == "-4" {
                        v4.to_string()
                    } else {
                        v6.to_string()
                    };
                    if hops.len() > 1 {
                        argv.push("nexthop".into());
                    }
                    argv.extend(["via".to_string(), via]);
                }
                s.push(argv);
            }
        }
    }
    s
}

/// The largest packet a port's queue takes at once: a GSO super-packet.
const SUPER_PACKET: u64 = 64 * 1024;

/// HTB's class id (hex, as tc reads it) of traffic class `i`.
fn class_id(i: usize) -> String {
    format!("1:{:x}", 0x10 + i)
}

/// The leaf FIFO's handle of traffic class `i`.
fn leaf_handle(i: usize) -> String {
    format!("{:x}:", 0x10 + i)
}

/// A rate as tc reads it, in bits per second.
fn bit(bps: u64) -> String {
    format!("{}bit", bps.max(8))
}

/// Port `p`'s egress: the port's rate shared by its classes, each over a
/// FIFO of the fabric's buffer, and the filters that pick a class by DSCP.
fn port_queues(lab: &Lab, g: &Graph, spec: &FabricSpec, p: usize) -> Vec<Vec<String>> {
    let ns = netns(lab, g, g.ports[p].from);
    let dev = device(g, p);
    let rate = g.ports[p].rate_bps;
    let classes = &spec.classes;
    // Packets no filter matches: the class of `dscp=*`, else the last.
    let rest = classes
        .iter()
        .position(|c| c.dscp.is_empty())
        .unwrap_or(classes.len().saturating_sub(1));
    let tc = |rest: &[&str]| {
        let mut v = ipcmd::cmd(&["tc", "-n", &ns]);
        v.extend(rest.iter().map(|s| s.to_string()));
        v
    };
    let mut s = vec![
        tc(&[
            "qdisc",
            "replace",
            "dev",
            &dev,
            "root",
            "handle",
            "1:",
            "htb",
            "default",
            &format!("{:x}", 0x10 + rest),
        ]),
        tc(&[
            "class",
            "add",
            "dev",
            &dev,
            "parent",
            "1:",
            "classid",
            "1:1",
            "htb",
            "rate",
            &bit(rate),
            "ceil",
            &bit(rate),
        ]),
    ];
    // HTB serves a class below its own rate before any that borrows, and
    // offers what is left to borrowers by priority, then by quanta. So every
    // class is guaranteed only a sliver and borrows the rest: strict classes
    // first (a lower priority), the ETS classes after them, sharing by
    // quanta in proportion to their weights.
    let strict: Vec<usize> = (0..classes.len())
        .filter(|&i| classes[i].scheduling == Scheduling::Strict)
        .collect();
    let sliver = rate / 100;
    // A class's turn ends after the packet that overdraws its quantum, so a
    // quantum under a super-packet (64 KiB with GSO) shares by packets, not
    // bytes: the lightest ETS class gets one super-packet a turn.
    let lightest = classes
        .iter()
        .filter_map(|c| match c.scheduling {
            Scheduling::Ets { weight } => Some(weight.max(1)),
            Scheduling::Strict => None,
        })
        .min()
        .unwrap_or(100);
    for (i, c) in classes.iter().enumerate() {
        let (prio, quantum) = match c.scheduling {
            Scheduling::Strict => {
                let order = strict.iter().position(|&s| s == i).unwrap_or(0);
                (order.min(6), SUPER_PACKET)
            }
            Scheduling::Ets { weight } => (
                strict.len().min(7),
                SUPER_PACKET * u64::from(weight.max(1)) / u64::from(lightest),
            ),
        };
        let (id, leaf) = (class_id(i), leaf_handle(i));
        s.push(tc(&[
            "class",
            "add",
            "dev",
            &dev,
            "parent",
            "1:1",
            "classid",
            &id,
            "htb",
            "rate",
            &bit(sliver),
            "ceil",
            &bit(rate),
            "prio",
            &prio.to_string(),
            "quantum",
            &quantum.to_string(),
        ]));
        s.push(tc(&[
            "qdisc",
            "add",
            "dev",
            &dev,
            "parent",
            &id,
            "handle",
            &leaf,
            "bfifo",
            "limit",
            &spec.buffer_bytes.to_string(),
        ]));
        for &d in &c.dscp {
            let tos = format!("0x{:02x}", d << 2);
            s.push(tc(&[
                "filter", "add", "dev", &dev, "parent", "1:", "protocol", "ip", "prio", "1", "u32",
                "match", "ip", "dsfield", &tos, "0xfc", "flowid", &id,
            ]));
            s.push(tc(&[
                "filter", "add", "dev", &dev, "parent", "1:", "protocol", "ipv6", "prio", "2",
                "u32", "match", "ip6", "priority", &tos, "0xfc", "flowid", &id,
            ]));
        }
    }
    s
}

/// One qdisc of `tc -s -j qdisc show`, the fields read here.
#[derive(Deserialize)]
struct QdiscStats {
    handle: String,
    #[serde(default)]
    bytes: u64,
    #[serde(default)]
    packets: u64,
    #[serde(default)]
    drops: u64,
    #[serde(default)]
    backlog: u64,
}

/// Every port's counters, read from its queues now. A port whose device
/// cannot be read shows zeros. The kernel counts drops in packets only, so
/// `drop_bytes` stays 0; ECN marks and pauses do not happen here.
pub fn counters(lab: &Lab, spec: &FabricSpec) -> Vec<PortCounters> {
    let g = Graph::build(spec);
    (0..g.ports.len())
        .map(|p| {
            let l = &g.ports[p];
            let out = Command::new("tc")
                .args(["-n", &netns(lab, &g, l.from), "-s", "-j", "qdisc", "show"])
                .args(["dev", &device(&g, p)])
                .output();
            let stats: Vec<QdiscStats> = out
                .ok()
                .and_then(|o| serde_json::from_slice(&o.stdout).ok())
                .unwrap_or_default();
            let classes = spec
                .classes
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    let q = stats.iter().find(|q| q.handle == leaf_handle(i));
                    ClassCounters {
                        class: c.name.clone(),
                        sent_bytes: q.map_or(0, |q| q.bytes),
                        sent_packets: q.map_or(0, |q| q.packets),
                        drops: q.map_or(0, |q| q.drops),
                        queued_bytes: q.map_or(0, |q| q.backlog),
                        ..ClassCounters::default()
                    }
                })
                .collect();
            PortCounters::of(&g, p, classes)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::{Backend, BackendChoice, Conditions};
    use crate::spec::LabSpec;
    use linerate_emulator::fabric::{Taper, Topology};

    fn lab(spec: &FabricSpec) -> Lab {
        Lab::plan(
            LabSpec {
                name: "t".into(),
                hosts: spec.topology.hosts(),
                router: false,
                mtu: 1500,
                backend: BackendChoice::Auto,
                conditions: Conditions::default(),
                fabric: Some(spec.clone()),
                links: 1,
                bond: None,
            },
            3,
            Backend::Htb,
            String::new(),
        )
        .unwrap()
    }

    fn leaf_spine() -> FabricSpec {
        FabricSpec {
            topology: Topology::LeafSpine {
                leaves: 2,
                spines: 2,
                hosts_per_leaf: 2,
            },
            taper: Taper { down: 2, up: 1 },
            classes: vec![
                "lat:dscp=ef:strict".parse().unwrap(),
                "bulk:dscp=*:ets=100".parse().unwrap(),
            ],
            ..FabricSpec::default()
        }
    }

    fn lines(steps: &[Vec<String>]) -> Vec<String> {
        steps.iter().map(|s| s.join(" ")).collect()
    }

    #[test]
    fn a_leaf_routes_other_leaves_hosts_over_every_spine() {
        let spec = leaf_spine();
        let l = lab(&spec);
        let s = lines(&steps(&l, &spec));
        // h3 (on leaf2) from leaf1: two next hops, one per spine.
        let r = s
            .iter()
            .find(|c| c.starts_with("ip -n lr-t-leaf1 -4 route add 10.201.3.48/28"))
            .expect("a route to h3's subnet");
        assert_eq!(r.matches("nexthop via 10.202.3.").count(), 2, "{r}");
        // Its own hosts are on its ports: no route added for them.
        assert!(
            !s.iter()
                .any(|c| c.contains("lr-t-leaf1 -4 route add 10.201.3.16/28"))
        );
        // A spine reaches each host through that host's leaf only.
        let r = s
            .iter()
            .find(|c| c.starts_with("ip -n lr-t-spine1 -6 route add fd77:0:3:1::/64"))
            .expect("a v6 route to h1");
        assert!(!r.contains("nexthop"), "{r}");
    }

    #[test]
    fn every_port_gets_a_class_per_traffic_class_and_filters_by_dscp() {
        let spec = leaf_spine();
        let l = lab(&spec);
        let s = lines(&steps(&l, &spec));
        let htb = s
            .iter()
            .filter(|c| c.contains(" root handle 1: htb"))
            .count();
        // 4 host links and 4 leaf-spine links, both directions.
        assert_eq!(htb, 16);
        let h1 = |needle: &str| {
            s.iter()
                .filter(|c| c.starts_with("tc -n lr-t-h1 ") && c.contains(needle))
                .cloned()
                .collect::<Vec<_>>()
        };
        assert!(
            h1("htb default 11").len() == 1,
            "the bulk class takes the rest"
        );
        let strict = &h1("classid 1:10 htb")[0];
        assert!(
            strict.contains("prio 0") && strict.contains("ceil 1000000000bit"),
            "{strict}"
        );
        let bulk = &h1("classid 1:11 htb")[0];
        assert!(
            bulk.contains("rate 10000000bit")
                && bulk.contains("prio 1")
                && bulk.contains("quantum 65536"),
            "{bulk}"
        );
        assert_eq!(h1("match ip dsfield 0xb8 0xfc flowid 1:10").len(), 1);
        assert_eq!(h1("match ip6 priority 0xb8 0xfc flowid 1:10").len(), 1);
        // The uplinks run at the taper's rate: two hosts of 1 Gbit/s at 2:1
        // over two spines.
        assert!(s.iter().any(|c| c.starts_with("tc -n lr-t-leaf1 ")
            && c.contains("dev spine1 parent 1: classid 1:1 htb rate 500000000bit")));
    }

    #[test]
    fn what_the_kernel_cannot_do_is_refused() {
        let mut spec = leaf_spine();
        assert_eq!(refusal(&spec), None);
        spec.classes[1].lossless = true;
        assert_eq!(refusal(&spec), Some(SpecError::HtbPause));
        spec.classes[1].lossless = false;
        spec.ecn_threshold_bytes = Some(30_000);
        assert_eq!(refusal(&spec), Some(SpecError::HtbEcn));
        spec.ecn_threshold_bytes = None;
        spec.hop_delay_us = 10;
        assert_eq!(refusal(&spec), Some(SpecError::HtbHopDelay));
    }
}
