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
