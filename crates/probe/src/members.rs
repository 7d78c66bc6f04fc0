//! Which links carry this host's flows to a peer when there are several:
//! the members of a bond (the bonding driver's slaves) or the devices of a
//! multipath route, and what each has carried, from its device counters.
//! A bond or a multipath route puts each flow on one member by a hash, so
//! a run's share per member says whether its flows were spread.

use std::net::IpAddr;
use std::process::Command;

use serde::Deserialize;

/// How the flows to a peer are spread over several links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spreader {
    /// A bond; its transmit hash policy as the driver names it
    /// (`layer3+4`, `layer2`, ...).
    Bond {
        /// The bond's device.
        device: String,
        /// Its `xmit_hash_policy`.
        hash: String,
    },
    /// A multipath route; the kernel's hash policy
    /// (`fib_multipath_hash_policy`: 0 addresses only, 1 with ports).
    Multipath {
        /// `fib_multipath_hash_policy`, where readable.
        hash_policy: Option<u8>,
    },
}

impl Spreader {
    /// Whether two flows between the same two addresses can take
    /// different links (the hash looks at ports).
    pub fn hashes_ports(&self) -> bool {
        match self {
            Spreader::Bond { hash, .. } => {
                hash.starts_with("layer3+4") || hash.starts_with("encap3+4")
            }
            Spreader::Multipath { hash_policy } => hash_policy.is_some_and(|p| p != 0),
        }
    }

    /// What spreads the flows, in words.
    pub fn describe(&self) -> String {
        match self {
            Spreader::Bond { device, hash } => format!("bond {device} (hash {hash})"),
            Spreader::Multipath {
                hash_policy: Some(p),
            } => {
                format!("a multipath route (fib_multipath_hash_policy={p})")
            }
            Spreader::Multipath { hash_policy: None } => "a multipath route".into(),
        }
    }
}

/// The links flows to a peer are spread over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Members {
    /// What spreads them.
    pub spreader: Spreader,
    /// The member devices, in the route's or the bond's order.
    pub devices: Vec<String>,
}

#[derive(Deserialize)]
struct Route {
    dst: String,
    dev: Option<String>,
    #[serde(default)]
    nexthops: Vec<NextHop>,
}

#[derive(Deserialize)]
struct NextHop {
    dev: String,
}

/// The members that carry flows to `peer`, when the route to it is a bond
/// or a multipath route of two or more links; None otherwise, or where
/// `ip` cannot say. A loopback peer has none, and nothing is run for it
/// (a loopback run paid three child processes for this before).
pub fn toward(peer: IpAddr) -> Option<Members> {
    if peer.is_loopback() {
        return None;
    }
    let family = if peer.is_ipv4() { "-4" } else { "-6" };
    let out = Command::new("ip")
        .args([
            family,
            "-j",
            "route",
            "show",
            "to",
            "match",
            &peer.to_string(),
        ])
        .output()
        .ok()?;
    let mut members = from_routes(&out.stdout, bond_of, None)?;
    if let Spreader::Multipath { hash_policy } = &mut members.spreader {
        *hash_policy = multipath_hash_policy(peer);
    }
    Some(members)
}

/// The kernel's multipath hash policy for `peer`'s family. /proc/thread-self/sys
/// would be this thread's namespace's; /proc/sys is the process's, so ask
/// sysctl in a child, which takes the thread's.
fn multipath_hash_policy(peer: IpAddr) -> Option<u8> {
    let key = if peer.is_ipv4() {
        "net.ipv4.fib_multipath_hash_policy"
    } else {
        "net.ipv6.fib_multipath_hash_policy"
    };
    Command::new("sysctl")
        .args(["-n", key])
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|t| t.trim().parse().ok())
}

/// The members `ip -j route show to match PEER`'s output names: the most
/// specific route's nexthop devices, or the slaves `bond` gives for its
/// device; None for one link or output that does not parse.
pub fn from_routes(
    json: &[u8],
    bond: impl Fn(&str) -> Option<(Vec<String>, String)>,
    hash_policy: Option<u8>,
) -> Option<Members> {
    let routes: Vec<Route> = serde_json::from_slice(json).ok()?;
    of_routes(&routes, bond, hash_policy)
}

/// The most specific of `routes` (each matching the peer) as members.
fn of_routes(
    routes: &[Route],
    bond: impl Fn(&str) -> Option<(Vec<String>, String)>,
    hash_policy: Option<u8>,
) -> Option<Members> {
    let route = routes.iter().max_by_key(|r| prefix_len(&r.dst))?;
    let mut devices: Vec<String> = Vec::new();
    for hop in &route.nexthops {
        if !devices.contains(&hop.dev) {
            devices.push(hop.dev.clone());
        }
    }
    if devices.len() >= 2 {
        return Some(Members {
            spreader: Spreader::Multipath { hash_policy },
            devices,
        });
    }
    let dev = route
        .dev
        .as_deref()
        .or(devices.first().map(String::as_str))?;
    let (slaves, hash) = bond(dev)?;
    (slaves.len() >= 2).then(|| Members {
        spreader: Spreader::Bond {
            device: dev.to_string(),
            hash,
        },
        devices: slaves,
    })
}

fn prefix_len(dst: &str) -> u8 {
    match dst.split_once('/') {
        _ if dst == "default" => 0,
        Some((_, len)) => len.parse().unwrap_or(0),
        None if dst.contains(':') => 128,
        None => 32,
    }
}

/// A bond's slaves and transmit hash policy, as `ip` reports them in this
/// thread's namespace; None for a device that is not a bond.
fn bond_of(dev: &str) -> Option<(Vec<String>, String)> {
    let ip = |args: &[&str]| -> Option<Vec<serde_json::Value>> {
        let out = Command::new("ip").args(args).output().ok()?;
        serde_json::from_slice(&out.stdout).ok()
    };
    let link = ip(&["-d", "-j", "link", "show", "dev", dev])?;
    let info = link.first()?.get("linkinfo")?;
    if info.get("info_kind")?.as_str()? != "bond" {
        return None;
    }
    let hash = info
        .pointer("/info_data/xmit_hash_policy")
        .and_then(|h| h.as_str())
        .unwrap_or("unknown")
        .to_string();
    let slaves = ip(&["-j", "link", "show", "master", dev])?
        .iter()
        .filter_map(|l| l.get("ifname")?.as_str().map(str::to_owned))
        .collect();
    Some((slaves, hash))
}

/// Bytes each of `devices` has sent and received so far (0 where not
/// found), from this thread's network namespace: a thread that entered a
/// lab host's namespace reads that host's devices, which /sys would not
/// show it.
pub fn bytes(devices: &[String]) -> Vec<(u64, u64)> {
    let table = std::fs::read_to_string("/proc/thread-self/net/dev").unwrap_or_default();
    devices
        .iter()
        .map(|d| device_bytes(&table, d).unwrap_or((0, 0)))
        .collect()
}

/// A device's sent and received bytes in a /proc/net/dev table.
pub fn device_bytes(table: &str, device: &str) -> Option<(u64, u64)> {
    table.lines().skip(2).find_map(|line| {
        let (name, counts) = line.split_once(':')?;
        if name.trim() != device {
            return None;
        }
        let v: Vec<u64> = counts
            .split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect();
        Some((*v.get(8)?, *v.first()?))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(json: &str) -> Vec<Route> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn the_most_specific_multipath_route_names_its_devices() {
        let r = routes(
            r#"[{"dst":"default","gateway":"10.0.0.1","dev":"eth0","flags":[]},
                {"dst":"10.220.0.34","prefsrc":"10.220.0.18","flags":[],"nexthops":[
                  {"gateway":"10.201.0.34","dev":"link1","weight":1,"flags":["onlink"]},
                  {"gateway":"10.221.0.34","dev":"link2","weight":1,"flags":["onlink"]}]}]"#,
        );
        let m = of_routes(&r, |_| None, Some(1)).unwrap();
        assert_eq!(m.devices, ["link1", "link2"]);
        assert!(m.spreader.hashes_ports());
        let by_addresses = of_routes(&r, |_| None, Some(0)).unwrap();
        assert!(!by_addresses.spreader.hashes_ports());
    }

    #[test]
    fn a_route_over_a_bond_names_its_slaves_and_one_link_names_nothing() {
        let r = routes(r#"[{"dst":"10.0.0.0/24","dev":"bond0","flags":[]}]"#);
        let bond = |d: &str| {
            (d == "bond0").then(|| (vec!["eth1".to_string(), "eth2".into()], "layer3+4".into()))
        };
        let m = of_routes(&r, bond, None).unwrap();
        assert_eq!(m.devices, ["eth1", "eth2"]);
        assert_eq!(m.spreader.describe(), "bond bond0 (hash layer3+4)");
        let plain = routes(r#"[{"dst":"10.0.0.0/24","dev":"eth0","flags":[]}]"#);
        assert!(of_routes(&plain, |_| None, Some(1)).is_none());
        assert!(of_routes(&[], |_| None, Some(1)).is_none());
    }

    #[test]
    fn a_devices_bytes_are_read_from_the_namespaces_table() {
        let table = "Inter-|   Receive |  Transmit\n face |bytes packets ...\n\
            lo: 10 1 0 0 0 0 0 0 10 1 0 0 0 0 0 0\n\
         link2: 500 5 0 0 0 0 0 0 9000 9 0 0 0 0 0 0\n";
        assert_eq!(device_bytes(table, "link2"), Some((9000, 500)));
        assert_eq!(device_bytes(table, "link"), None);
    }
}
