//! A lab whose hosts have several parallel links (`--links N`), each its
//! own veth pair with its own rate and queue, and the bond that can join
//! them (`--bond lacp`): their addresses, the ip/tc commands that make
//! them, and each link's counters.
//!
//! A bond hashes each flow to one member link by its addresses and ports
//! (bonding's `xmit_hash_policy=layer3+4`). Where the kernel has the
//! bonding driver, two directly linked hosts get a real 802.3ad bond.
//! Elsewhere (no driver, or links through the router) every end routes
//! the bond's addresses over multipath routes hashed by layer 3+4
//! (`fib_multipath_hash_policy=1`): one flow stays on one member, and a
//! few flows can land on the same one, as on a bond
//! (docs/guide.md#striping).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::process::Command;

use serde::{Deserialize, Serialize};

use crate::LabError;
use crate::conditions::{Backend, Conditions};
use crate::detect::KernelSupport;
use crate::ipcmd;
use crate::spec::{BondMaker, BondRecord, Host, Lab, LabSpec, LinkAddr};

/// How a bond of `spec`'s links is made on a kernel that offers `k`.
pub fn bond_record(spec: &LabSpec, k: &KernelSupport) -> Option<BondRecord> {
    spec.bond?;
    Some(if k.bonding && !spec.router {
        BondRecord {
            made_by: BondMaker::Driver,
            reason: "the kernel's bonding driver, mode 802.3ad, xmit_hash_policy layer3+4".into(),
        }
    } else {
        let why = if k.bonding {
            "a router's ports are not bonded"
        } else {
            "this kernel has no bonding driver"
        };
        BondRecord {
            made_by: BondMaker::Hash,
            reason: format!(
                "{why}: every end hashes each flow to one link by addresses and ports \
                 (multipath routes, fib_multipath_hash_policy=1), as bonding's \
                 xmit_hash_policy=layer3+4 does"
            ),
        }
    })
}

/// Host `i`'s address on link `link` (1-based), or its gateway's (`end` 1).
fn link_v4(index: u8, link: u8, i: u8, end: u8) -> Ipv4Addr {
    let second = if link == 1 { 201 } else { 219 + link };
    Ipv4Addr::new(10, second, index, 16 * i + end)
}

fn link_v6(index: u8, link: u8, i: u8, end: u8) -> Ipv6Addr {
    let (index, i, end) = (u16::from(index), u16::from(i), u16::from(end));
    Ipv6Addr::new(0xfd77, u16::from(link - 1), index, i, 0, 0, 0, end)
}

/// Host `i`'s bond address (IPv4 and IPv6).
fn bond_addrs(index: u8, i: u8) -> (Ipv4Addr, Ipv6Addr) {
    (
        Ipv4Addr::new(10, 220, index, 16 * i + 2),
        Ipv6Addr::new(0xfd77, 0xff, u16::from(index), u16::from(i), 0, 0, 0, 2),
    )
}

/// Host `i` (1-based) of a lab with `spec`'s links, at lab index `index`.
pub fn host(spec: &LabSpec, index: u8, i: u8) -> Host {
    let peer = if i == 1 { 2 } else { 1 };
    let links: Vec<LinkAddr> = (1..=spec.links)
        .filter(|_| spec.links > 1)
        .map(|k| LinkAddr {
            link: k,
            device: format!("link{k}"),
            v4: link_v4(index, k, i, 2),
            v6: link_v6(index, k, i, 2),
            // Without a router, a link's far end is the other host.
            gateway_v4: link_v4(
                index,
                k,
                if spec.router { i } else { peer },
                if spec.router { 1 } else { 2 },
            ),
            gateway_v6: link_v6(
                index,
                k,
                if spec.router { i } else { peer },
                if spec.router { 1 } else { 2 },
            ),
        })
        .collect();
    let (v4, v6) = match spec.bond {
        Some(_) => bond_addrs(index, i),
        None => (link_v4(index, 1, i, 2), link_v6(index, 1, i, 2)),
    };
    Host {
        name: format!("h{i}"),
        netns: format!("lr-{}-h{i}", spec.name),
        v4,
        v6,
        gateway_v4: link_v4(index, 1, i, 1),
        gateway_v6: link_v6(index, 1, i, 1),
        links,
    }
}

/// The router's port of host `h`'s link `link`.
fn router_port(h: &Host, link: u8) -> String {
    format!("{}-{link}", h.name)
}

/// The network of a /24 and of a /48 that hold `v4` and `v6`.
fn networks(v4: Ipv4Addr, v6: Ipv6Addr) -> (String, String) {
    let (o, g) = (v4.octets(), v6.segments());
    (
        format!("{}/24", Ipv4Addr::new(o[0], o[1], o[2], 0)),
        format!("{}/48", Ipv6Addr::new(g[0], g[1], g[2], 0, 0, 0, 0, 0)),
    )
}

/// Every command that makes the links, their addresses, routes and bond,
/// once the namespaces exist.
pub fn steps(lab: &Lab) -> Vec<Vec<String>> {
    let mut s = Vec::new();
    let mtu = lab.spec.mtu.to_string();
    match &lab.router {
        None => {
            let (a, b) = (&lab.hosts[0].netns, &lab.hosts[1].netns);
            for l in &lab.hosts[0].links {
                s.push(ipcmd::veth(&l.device, a, &l.device, b));
            }
        }
        Some(r) => {
            for h in &lab.hosts {
                for l in &h.links {
                    let port = router_port(h, l.link);
                    s.push(ipcmd::veth(&l.device, &h.netns, &port, r));
                    s.push(ipcmd::up(r, &port, &mtu));
                    let (v4, v6) = (
                        format!("{}/28", l.gateway_v4),
                        format!("{}/64", l.gateway_v6),
                    );
                    s.extend(ipcmd::addrs(r, &port, &v4, &v6));
                }
            }
            s.push(ipcmd::sysctl(r, "net.ipv4.ip_forward=1"));
            s.push(ipcmd::sysctl(r, "net.ipv6.conf.all.forwarding=1"));
        }
    }
    let driver = lab
        .bond
        .as_ref()
        .is_some_and(|b| b.made_by == BondMaker::Driver);
    for h in &lab.hosts {
        s.extend(host_steps(lab, h, &mtu, driver));
    }
    if lab
        .bond
        .as_ref()
        .is_some_and(|b| b.made_by == BondMaker::Hash)
    {
        s.extend(hash_bond_steps(lab));
    }
    s.extend(qdisc_steps(lab));
    s
}

/// A host's links up with their addresses and routes (or, with the
/// bonding driver, enslaved to its bond).
fn host_steps(lab: &Lab, h: &Host, mtu: &str, driver: bool) -> Vec<Vec<String>> {
    let ns = h.netns.as_str();
    let mut s = Vec::new();
    if driver {
        s.push(ipcmd::cmd(&[
            "ip",
            "-n",
            ns,
            "link",
            "add",
            "bond0",
            "type",
            "bond",
            "mode",
            "802.3ad",
            "xmit_hash_policy",
            "layer3+4",
            "miimon",
            "100",
            "lacp_rate",
            "fast",
        ]));
        for l in &h.links {
            s.push(ipcmd::cmd(&[
                "ip", "-n", ns, "link", "set", &l.device, "mtu", mtu,
            ]));
            s.push(ipcmd::cmd(&[
                "ip", "-n", ns, "link", "set", &l.device, "master", "bond0",
            ]));
        }
        s.push(ipcmd::up(ns, "bond0", mtu));
        // Both bonds share one segment: /24 and /64 reach the other end.
        let (v4, v6) = (format!("{}/24", h.v4), format!("{}/64", h.v6));
        s.extend(ipcmd::addrs(ns, "bond0", &v4, &v6));
        return s;
    }
    for l in &h.links {
        let d = l.device.as_str();
        s.push(ipcmd::up(ns, d, mtu));
        let (v4, v6) = (format!("{}/28", l.v4), format!("{}/64", l.v6));
        s.extend(ipcmd::addrs(ns, d, &v4, &v6));
        let (gw4, gw6) = (l.gateway_v4.to_string(), l.gateway_v6.to_string());
        if lab.router.is_none() {
            // The far end is the other host, in a subnet of its own.
            s.push(ipcmd::route(ns, false, &format!("{gw4}/32"), &["dev", d]));
            s.push(ipcmd::route(ns, true, &format!("{gw6}/128"), &["dev", d]));
        } else if l.link == 1 {
            s.extend(ipcmd::routes_via(ns, ("default", &gw4), ("default", &gw6)));
        } else {
            let (net4, net6) = networks(l.v4, l.v6);
            s.extend(ipcmd::routes_via(ns, (&net4, &gw4), (&net6, &gw6)));
        }
    }
    s
}

/// The bond's addresses on every host's loopback, and multipath routes
/// hashed by layer 3+4 to every other host's bond address at every end.
fn hash_bond_steps(lab: &Lab) -> Vec<Vec<String>> {
    let mut s = Vec::new();
    let hashing = |ns: &str| {
        [
            "net.ipv4.fib_multipath_hash_policy=1",
            "net.ipv6.fib_multipath_hash_policy=1",
            // Replies may come back over another member than the request left by.
            "net.ipv4.conf.all.rp_filter=0",
            "net.ipv4.conf.default.rp_filter=0",
        ]
        .map(|setting| ipcmd::sysctl(ns, setting))
    };
    for h in &lab.hosts {
        let ns = h.netns.as_str();
        s.extend(hashing(ns));
        let (v4, v6) = (format!("{}/32", h.v4), format!("{}/128", h.v6));
        s.extend(ipcmd::addrs(ns, "lo", &v4, &v6));
        let targets: Vec<(String, String)> = match &lab.router {
            // Through the router, every other host's bond is behind the same links.
            Some(_) => vec![networks(h.v4, h.v6)],
            None => lab
                .hosts
                .iter()
                .filter(|o| o.name != h.name)
                .map(|o| (format!("{}/32", o.v4), format!("{}/128", o.v6)))
                .collect(),
        };
        let (src4, src6) = (h.v4.to_string(), h.v6.to_string());
        for (to4, to6) in targets {
            let hops4 = h
                .links
                .iter()
                .map(|l| (l.gateway_v4.to_string(), l.device.clone()));
            let hops6 = h
                .links
                .iter()
                .map(|l| (l.gateway_v6.to_string(), l.device.clone()));
            s.push(multipath(ns, false, &to4, Some(&src4), hops4));
            s.push(multipath(ns, true, &to6, Some(&src6), hops6));
        }
    }
    if let Some(r) = &lab.router {
        s.extend(hashing(r));
        for h in &lab.hosts {
            let ports = |v6: bool| {
                h.links.iter().map(move |l| {
                    let via = if v6 {
                        l.v6.to_string()
                    } else {
                        l.v4.to_string()
                    };
                    (via, router_port(h, l.link))
                })
            };
            s.push(multipath(
                r,
                false,
                &format!("{}/32", h.v4),
                None,
                ports(false),
            ));
            s.push(multipath(
                r,
                true,
                &format!("{}/128", h.v6),
                None,
                ports(true),
            ));
        }
    }
    s
}

/// `ip route add TO [src SRC] nexthop via GW dev DEV onlink ...`.
fn multipath(
    ns: &str,
    v6: bool,
    to: &str,
    src: Option<&str>,
    hops: impl Iterator<Item = (String, String)>,
) -> Vec<String> {
    let mut v = ipcmd::route(ns, v6, to, &[]);
    if let Some(src) = src {
        v.extend(ipcmd::cmd(&["src", src]));
    }
    for (via, dev) in hops {
        v.extend(ipcmd::cmd(&["nexthop", "via", &via, "dev", &dev, "onlink"]));
    }
    v
}

/// The conditions of link `link`: as `lab set --link` left them, or the lab's.
pub fn conditions_of(lab: &Lab, link: u8) -> &Conditions {
    lab.link_conditions
        .get(&link)
        .unwrap_or(&lab.spec.conditions)
}

/// Each link end that carries traffic between hosts, with the arguments
/// after `tc qdisc add dev X root` its link's conditions need (None: none).
fn egresses(lab: &Lab, only: Option<u8>) -> Vec<(String, String, Option<Vec<String>>)> {
    let mut v = Vec::new();
    for h in &lab.hosts {
        for l in h.links.iter().filter(|l| only.is_none_or(|k| k == l.link)) {
            let c = conditions_of(lab, l.link);
            let args = match lab.backend {
                Backend::Netem => Some(c.netem_args()),
                Backend::Veth => c.tbf_args(lab.spec.mtu),
                Backend::Emulator | Backend::Htb => None,
            };
            let (ns, dev) = match &lab.router {
                Some(r) => (r.clone(), router_port(h, l.link)),
                None => (h.netns.clone(), l.device.clone()),
            };
            v.push((ns, dev, args));
        }
    }
    v
}

/// tc commands that put each link's conditions on its egresses (`add`).
fn qdisc_steps(lab: &Lab) -> Vec<Vec<String>> {
    egresses(lab, None)
        .into_iter()
        .filter_map(|(ns, dev, args)| {
            let mut v = ipcmd::cmd(&["tc", "-n", &ns, "qdisc", "add", "dev", &dev, "root"]);
            v.extend(args?);
            Some(v)
        })
        .collect()
}

/// Puts the conditions of link `only` (every link where None) in force on
/// a running lab: replaced where they need a qdisc, removed where not.
pub fn apply(lab: &Lab, only: Option<u8>) -> Result<(), LabError> {
    for (ns, dev, args) in egresses(lab, only) {
        match args {
            Some(args) => {
                let mut v = ipcmd::cmd(&["tc", "-n", &ns, "qdisc", "replace", "dev", &dev, "root"]);
                v.extend(args);
                crate::exec::run(&v)?;
            }
            // No qdisc may be there to remove: that is the state wanted.
            None => {
                let _ = crate::exec::run(&["tc", "-n", &ns, "qdisc", "del", "dev", &dev, "root"]);
            }
        }
    }
    Ok(())
}

/// The summed rate of the links that carry traffic to `addrs`: a link
/// address's own link, every link for a bond's address; None where one of
/// them has no rate or an address is not the lab's.
pub fn rate_toward(lab: &Lab, addrs: &[IpAddr]) -> Option<u64> {
    let mut used: Vec<u8> = Vec::new();
    for &a in addrs {
        let bonded = lab.bond.is_some() && lab.hosts.iter().any(|h| h.v4 == a || h.v6 == a);
        let links: Vec<u8> = if bonded {
            (1..=lab.spec.links).collect()
        } else {
            let l = lab
                .hosts
                .iter()
                .flat_map(|h| &h.links)
                .find(|l| IpAddr::V4(l.v4) == a || IpAddr::V6(l.v6) == a)?;
            vec![l.link]
        };
        for k in links {
            if !used.contains(&k) {
                used.push(k);
            }
        }
    }
    used.iter().map(|&k| conditions_of(lab, k).rate_bps).sum()
}

/// What one host's link carried, from its device's counters.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkCounters {
    /// The host (h1, h2, ...).
    pub host: String,
    /// The link's number.
    pub link: u8,
    /// Its device in the host.
    pub device: String,
    /// Bytes the host sent on it.
    pub tx_bytes: u64,
    /// Bytes the host received on it.
    pub rx_bytes: u64,
    /// Packets the host sent on it.
    pub tx_packets: u64,
    /// Packets the host received on it.
    pub rx_packets: u64,
}

#[derive(Deserialize)]
struct IpLink {
    stats64: Option<Stats64>,
}

#[derive(Deserialize)]
struct Stats64 {
    rx: Dir,
    tx: Dir,
}

#[derive(Deserialize)]
struct Dir {
    bytes: u64,
    packets: u64,
}

/// Every host's links, as their devices count them now.
pub fn counters(lab: &Lab) -> Vec<LinkCounters> {
    let mut v = Vec::new();
    for h in &lab.hosts {
        for l in &h.links {
            let out = Command::new("ip")
                .args(["-n", &h.netns, "-s", "-j", "link", "show", "dev", &l.device])
                .output();
            let stats = out
                .ok()
                .and_then(|o| serde_json::from_slice::<Vec<IpLink>>(&o.stdout).ok())
                .and_then(|v| v.into_iter().next())
                .and_then(|l| l.stats64);
            v.push(LinkCounters {
                host: h.name.clone(),
                link: l.link,
                device: l.device.clone(),
                tx_bytes: stats.as_ref().map_or(0, |s| s.tx.bytes),
                rx_bytes: stats.as_ref().map_or(0, |s| s.rx.bytes),
                tx_packets: stats.as_ref().map_or(0, |s| s.tx.packets),
                rx_packets: stats.as_ref().map_or(0, |s| s.rx.packets),
            });
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::conditions::BackendChoice;
    use crate::spec::BondMode;

    fn spec(links: u8, bond: Option<BondMode>, router: bool) -> LabSpec {
        LabSpec {
            name: "t".into(),
            hosts: 2,
            router,
            mtu: 1500,
            backend: BackendChoice::Auto,
            conditions: Conditions {
                rate_bps: Some(1_000_000_000),
                ..Conditions::default()
            },
            fabric: None,
            links,
            bond,
        }
    }

    fn plan(s: LabSpec, bonding: bool) -> Lab {
        let k = KernelSupport {
            tbf: true,
            bonding,
            ..KernelSupport::default()
        };
        let (backend, why) = crate::backend::choose(&s, &k).unwrap();
        let mut lab = Lab::plan(s, 3, backend, why).unwrap();
        lab.bond = bond_record(&lab.spec, &k);
        lab
    }

    #[test]
    fn each_link_is_a_veth_pair_with_its_own_addresses_routes_and_rate() {
        let lab = plan(spec(4, None, false), false);
        assert_eq!(lab.backend, Backend::Veth);
        let h1 = &lab.hosts[0];
        assert_eq!(h1.links.len(), 4);
        assert_eq!(
            h1.v4, h1.links[0].v4,
            "a host's address is its first link's"
        );
        assert_eq!(h1.links[1].v4.to_string(), "10.221.3.18");
        assert_eq!(
            h1.links[1].gateway_v4.to_string(),
            "10.221.3.34",
            "the peer's end"
        );
        let script = lab.script().join("\n");
        for k in 1..=4 {
            assert!(
                script.contains(&format!(
                    "ip link add link{k} netns lr-t-h1 type veth peer name link{k} netns lr-t-h2"
                )),
                "{script}"
            );
        }
        assert!(script.contains("ip -n lr-t-h1 route add 10.221.3.34/32 dev link2"));
        assert!(script.contains("ip -n lr-t-h2 -6 route add fd77:1:3:1::2/128 dev link2"));
        assert_eq!(
            script.matches("tbf rate 1000000000bit").count(),
            8,
            "both ends of 4 links"
        );
        assert!(!script.contains("lab0"));
    }

    #[test]
    fn a_bond_without_the_driver_hashes_flows_over_multipath_routes_at_every_end() {
        let lab = plan(spec(2, Some(BondMode::Lacp), false), false);
        assert_eq!(lab.bond.as_ref().unwrap().made_by, BondMaker::Hash);
        assert_eq!(
            lab.hosts[1].v4.to_string(),
            "10.220.3.34",
            "the bond's address"
        );
        let script = lab.script().join("\n");
        assert!(script.contains("ip -n lr-t-h1 addr add 10.220.3.18/32 dev lo"));
        assert!(script.contains(
            "ip -n lr-t-h1 route add 10.220.3.34/32 src 10.220.3.18 nexthop via 10.201.3.34 dev link1 onlink nexthop via 10.221.3.34 dev link2 onlink"
        ), "{script}");
        assert!(script.contains("sysctl -qw net.ipv4.fib_multipath_hash_policy=1"));
        assert!(script.contains("sysctl -qw net.ipv6.fib_multipath_hash_policy=1"));
    }

    #[test]
    fn a_bond_through_the_router_hashes_at_the_hosts_and_at_the_router() {
        let lab = plan(spec(3, Some(BondMode::Lacp), true), true);
        assert_eq!(
            lab.bond.as_ref().unwrap().made_by,
            BondMaker::Hash,
            "a router's ports are not bonded by the driver"
        );
        let script = lab.script().join("\n");
        assert!(
            script
                .contains("ip link add link3 netns lr-t-h2 type veth peer name h2-3 netns lr-t-r")
        );
        assert!(script.contains(
            "ip -n lr-t-h1 route add 10.220.3.0/24 src 10.220.3.18 nexthop via 10.201.3.17 dev link1 onlink"
        ), "{script}");
        assert!(script.contains(
            "ip -n lr-t-r route add 10.220.3.34/32 nexthop via 10.201.3.34 dev h2-1 onlink nexthop via 10.221.3.34 dev h2-2 onlink nexthop via 10.222.3.34 dev h2-3 onlink"
        ), "{script}");
        assert!(script.contains("tc -n lr-t-r qdisc add dev h1-2 root tbf"));
    }

    #[test]
    fn the_bonding_driver_makes_the_bond_where_the_kernel_has_it() {
        let lab = plan(spec(4, Some(BondMode::Lacp), false), true);
        assert_eq!(lab.bond.as_ref().unwrap().made_by, BondMaker::Driver);
        let script = lab.script().join("\n");
        assert!(script.contains(
            "ip -n lr-t-h1 link add bond0 type bond mode 802.3ad xmit_hash_policy layer3+4"
        ));
        assert!(script.contains("ip -n lr-t-h2 link set link4 master bond0"));
        assert!(script.contains("ip -n lr-t-h2 addr add 10.220.3.34/24 dev bond0"));
    }

    #[test]
    fn links_are_refused_where_they_cannot_be_made() {
        let k = KernelSupport {
            tbf: true,
            tun: true,
            ..KernelSupport::default()
        };
        let mut s = spec(4, None, false);
        s.conditions.rtt_us = 10_000;
        let e = crate::backend::choose(&s, &k).unwrap_err().to_string();
        assert!(e.contains("needs netem"), "{e}");
        let mut s = spec(4, None, false);
        s.backend = BackendChoice::Emulator;
        assert!(
            crate::backend::choose(&s, &k)
                .unwrap_err()
                .to_string()
                .contains("one link per host")
        );
        let e = spec(1, Some(BondMode::Lacp), false).validate().unwrap_err();
        assert!(e.to_string().contains("--links 2 or more"), "{e}");
        let mut s = spec(2, None, false);
        s.hosts = 3;
        assert!(s.validate().unwrap_err().to_string().contains("--router"));
    }
}
