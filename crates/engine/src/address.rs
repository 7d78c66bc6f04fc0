//! Host names and addresses as users write them (HOST, HOST:PORT, an IPv6
//! address bare or in brackets, [V6]:PORT) to one socket address of the
//! family they asked for.

use std::net::{IpAddr, SocketAddr, ToSocketAddrs};

/// The port linerate's daemon listens on where none is named.
pub const DEFAULT_PORT: u16 = 5201;

/// Which address family a connection may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Family {
    /// Whichever the name resolves to first.
    #[default]
    Any,
    /// IPv4 only.
    V4,
    /// IPv6 only.
    V6,
}

impl Family {
    fn admits(self, a: &SocketAddr) -> bool {
        match self {
            Family::Any => true,
            Family::V4 => a.is_ipv4(),
            Family::V6 => a.is_ipv6(),
        }
    }
}

/// Why a host did not resolve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum AddressError {
    /// The resolver knows no such host.
    #[error("cannot resolve '{host}': {source}")]
    Unresolvable {
        /// The host as given.
        host: String,
        /// What the resolver said.
        source: std::io::Error,
    },
    /// The host has addresses, none of the family asked for.
    #[error("'{host}' has no address of the requested family")]
    NoAddressOfFamily {
        /// The host as given.
        host: String,
    },
    /// A port past 65535 after the host.
    #[error("'{host}': port {port} is out of range (1 to 65535)")]
    PortOutOfRange {
        /// The host as given.
        host: String,
        /// The port as given.
        port: String,
    },
}

impl AddressError {
    /// Whether the words were wrong, not the network: a bad flag.
    pub fn is_usage(&self) -> bool {
        matches!(self, AddressError::PortOutOfRange { .. })
    }
}

/// One path of a striped run: the receiver's address its data
/// connections go to, and the local address they leave from, if one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stripe {
    /// The receiver's address (the session's port).
    pub remote: IpAddr,
    /// The local address to bind; None: the kernel's choice by route.
    pub local: Option<IpAddr>,
}

/// Why addresses to stripe over do not pair up.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[non_exhaustive]
pub enum StripeError {
    /// Several local addresses, and not one receiver address per each.
    #[error(
        "--bind names {locals} local addresses and --stripe {remotes} receiver addresses: \
         give one of each per path (or a single --bind for all)"
    )]
    Unpaired {
        /// Local addresses given.
        locals: usize,
        /// Receiver addresses given.
        remotes: usize,
    },
    /// Several local addresses without receiver addresses to pair them with.
    #[error("--bind names {0} local addresses: name the receiver's with --stripe, one per path")]
    NoRemotes(usize),
    /// A local and a receiver address of different families.
    #[error("path {path}: {local} and {remote} are not of one address family")]
    Family {
        /// The path's number, from 1.
        path: usize,
        /// Its local address.
        local: IpAddr,
        /// Its receiver address.
        remote: IpAddr,
    },
}

/// The paths `--stripe REMOTES` and `--bind LOCALS` name, in order: one per
/// receiver address, each with the local address at its place (or the one
/// local address for all). No receiver addresses: no striping.
pub fn stripes(remotes: &[IpAddr], locals: &[IpAddr]) -> Result<Vec<Stripe>, StripeError> {
    if remotes.is_empty() {
        return match locals.len() {
            0 | 1 => Ok(Vec::new()),
            n => Err(StripeError::NoRemotes(n)),
        };
    }
    if locals.len() > 1 && locals.len() != remotes.len() {
        return Err(StripeError::Unpaired {
            locals: locals.len(),
            remotes: remotes.len(),
        });
    }
    remotes
        .iter()
        .enumerate()
        .map(|(i, &remote)| {
            let local = match locals {
                [] => None,
                [one] => Some(*one),
                many => Some(many[i]),
            };
            match local {
                Some(l) if l.is_ipv4() != remote.is_ipv4() => Err(StripeError::Family {
                    path: i + 1,
                    local: l,
                    remote,
                }),
                _ => Ok(Stripe { remote, local }),
            }
        })
        .collect()
}

/// Whether `host` names a port of its own (`h:80`, `[v6]:80`; a bare
/// IPv6 address has colons but no port).
pub fn names_port(host: &str) -> bool {
    if host.trim_matches(['[', ']']).parse::<IpAddr>().is_ok() {
        return false;
    }
    host.rsplit_once(':')
        .is_some_and(|(_, p)| p.parse::<u16>().is_ok())
}

/// `host` at its own port, or at `default_port` where it names none, to
/// one address of `family`.
pub fn resolve(host: &str, default_port: u16, family: Family) -> Result<SocketAddr, AddressError> {
    let bare = host.trim_matches(['[', ']']);
    // HOST:DIGITS or [V6]:DIGITS whose digits are no port.
    if bare.parse::<IpAddr>().is_err()
        && let Some((_, port)) = host.rsplit_once(':')
        && !port.is_empty()
        && port.bytes().all(|b| b.is_ascii_digit())
        && port.parse::<u16>().is_err()
    {
        return Err(AddressError::PortOutOfRange {
            host: host.into(),
            port: port.into(),
        });
    }
    let with_port = if let Ok(ip) = bare.parse::<IpAddr>() {
        SocketAddr::new(ip, default_port).to_string()
    } else if names_port(host) {
        host.to_string()
    } else {
        format!("{host}:{default_port}")
    };
    let addrs = with_port
        .to_socket_addrs()
        .map_err(|source| AddressError::Unresolvable {
            host: host.into(),
            source,
        })?;
    addrs
        .into_iter()
        .find(|a| family.admits(a))
        .ok_or_else(|| AddressError::NoAddressOfFamily { host: host.into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_out_of_range_is_named_as_such() {
        for host in ["127.0.0.1:99999", "[::1]:70000", "dtn2:65536"] {
            let e = resolve(host, DEFAULT_PORT, Family::Any).unwrap_err();
            assert!(e.is_usage(), "{host}: {e}");
            assert!(e.to_string().contains("out of range"), "{e}");
        }
        assert!(resolve("127.0.0.1:5201", DEFAULT_PORT, Family::Any).is_ok());
        assert!(
            resolve("127.0.0.1:0", DEFAULT_PORT, Family::Any).is_ok(),
            "any free port"
        );
        assert!(
            resolve("::1", DEFAULT_PORT, Family::Any).is_ok(),
            "a bare IPv6 address"
        );
    }

    fn ips(list: &[&str]) -> Vec<IpAddr> {
        list.iter().map(|a| a.parse().unwrap()).collect()
    }

    #[test]
    fn stripes_pair_each_receiver_address_with_its_local_one() {
        let remotes = ips(&["10.0.1.2", "10.0.2.2"]);
        let s = stripes(&remotes, &ips(&["10.0.1.1", "10.0.2.1"])).unwrap();
        assert_eq!(s[1].local, Some("10.0.2.1".parse().unwrap()));
        assert_eq!(s[1].remote, remotes[1]);
        let one = stripes(&remotes, &ips(&["10.0.0.1"])).unwrap();
        assert!(
            one.iter()
                .all(|p| p.local == Some("10.0.0.1".parse().unwrap()))
        );
        assert!(
            stripes(&remotes, &[])
                .unwrap()
                .iter()
                .all(|p| p.local.is_none())
        );
        assert!(stripes(&[], &ips(&["10.0.0.1"])).unwrap().is_empty());
        assert_eq!(
            stripes(&remotes, &ips(&["10.0.0.1", "10.0.0.2", "10.0.0.3"])),
            Err(StripeError::Unpaired {
                locals: 3,
                remotes: 2
            })
        );
        assert_eq!(stripes(&[], &remotes), Err(StripeError::NoRemotes(2)));
        let e = stripes(&ips(&["10.0.1.2"]), &ips(&["fd00::1"])).unwrap_err();
        assert!(e.to_string().contains("not of one address family"), "{e}");
    }

    #[test]
    fn every_way_of_writing_an_address_resolves_with_its_port() {
        let r = |h: &str| resolve(h, 5201, Family::Any).unwrap().to_string();
        assert_eq!(r("127.0.0.1"), "127.0.0.1:5201");
        assert_eq!(r("127.0.0.1:80"), "127.0.0.1:80");
        assert_eq!(r("::1"), "[::1]:5201");
        assert_eq!(r("[::1]"), "[::1]:5201");
        assert_eq!(r("[::1]:80"), "[::1]:80");
        assert_eq!(r("localhost:81").rsplit(':').next(), Some("81"));
    }

    #[test]
    fn a_family_with_no_address_is_named() {
        let e = resolve("127.0.0.1", 1, Family::V6).unwrap_err();
        assert!(matches!(e, AddressError::NoAddressOfFamily { .. }), "{e}");
        assert!(names_port("h:1") && names_port("[::1]:1"));
        assert!(!names_port("::1") && !names_port("h"));
    }
}
