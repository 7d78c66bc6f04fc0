//! Which links carry this host's flows to a peer when there are several:
//! the members of a bond (the bonding driver's slaves) or the devices of a
//! multipath route, and what each has carried, from its device counters.
//! A bond or a multipath route puts each flow on one member by a hash, so
//! a run's share per member says whether its flows were spread.

use std::net::IpAddr;
use std::path::Path;
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
/// `ip` cannot say.
pub fn toward(peer: IpAddr) -> Option<Members> {
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
    let routes: Vec<Route> = serde_json::from_slice(&out.stdout).ok()?;
    let sysfs = Path::new("/sys/class/net");
    let hash_policy = std::fs::read_to_string(if peer.is_ipv4() {
        "/proc/sys/net/ipv4/fib_multipath_hash_policy"
    } else {
        "/proc/sys/net/ipv6/fib_multipath_hash_policy"
    })
    .ok()
    .and_then(|t| t.trim().parse().ok());
    of_routes(&routes, |dev| bond_of(sysfs, dev), hash_policy)
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

/// A bond's slaves and transmit hash policy, from the bonding driver's files.
fn bond_of(sysfs: &Path, dev: &str) -> Option<(Vec<String>, String)> {
    let dir = sysfs.join(dev).join("bonding");
    let slaves = std::fs::read_to_string(dir.join("slaves")).ok()?;
    let hash = std::fs::read_to_string(dir.join("xmit_hash_policy")).unwrap_or_default();
    Some((
        slaves.split_whitespace().map(str::to_owned).collect(),
        hash.split_whitespace()
            .next()
            .unwrap_or("unknown")
            .to_string(),
    ))
}

/// Bytes each of `devices` has sent and received so far (0 where unreadable).
pub fn bytes(devices: &[String]) -> Vec<(u64, u64)> {
    let read = |dev: &str, what: &str| {
        std::fs::read_to_string(format!("/sys/class/net/{dev}/statistics/{what}"))
            .ok()
            .and_then(|t| t.trim().parse().ok())
            .unwrap_or(0)
    };
    devices
        .iter()
        .map(|d| (read(d, "tx_bytes"), read(d, "rx_bytes")))
        .collect()
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
}
