//! Flag groups more than one command takes, declared once and flattened
//! into each command's arguments: a flag has one name, one help text and
//! one parser everywhere, and each group writes what it sets into the
//! spec's socket options itself.

use std::net::{IpAddr, SocketAddr};

use clap::Args;
use linerate_engine::address::{self, DEFAULT_PORT, Family, Stripe};
use linerate_engine::spec::SocketParams;
use linerate_wire::Dscp;

use crate::units;

/// Which address family, and which local address, connections use
/// (bench, latency, send).
#[derive(Args, Clone, Debug, Default)]
pub struct AddressFlags {
    /// Use IPv4 only.
    #[arg(short = '4', conflicts_with = "ipv6")]
    pub ipv4: bool,
    /// Use IPv6 only.
    #[arg(short = '6')]
    pub ipv6: bool,
    /// Local address to connect from; with --stripe, one per path
    /// (comma-separated, in --stripe's order) or one for all.
    #[arg(short = 'B', long, value_name = "ADDR", value_delimiter = ',')]
    pub bind: Vec<IpAddr>,
}

impl AddressFlags {
    /// The family -4 or -6 asks for.
    pub fn family(&self) -> Family {
        match (self.ipv4, self.ipv6) {
            (true, _) => Family::V4,
            (_, true) => Family::V6,
            _ => Family::Any,
        }
    }

    /// The one local address every connection leaves from, if any.
    pub fn bind(&self) -> anyhow::Result<Option<IpAddr>> {
        match self.bind.as_slice() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            many => anyhow::bail!(
                "-B/--bind names {} addresses: several local addresses are for --stripe \
                 (bench and send), one per path",
                many.len()
            ),
        }
    }

    /// HOST, HOST:PORT, V6 or [V6]:PORT (the daemon's port where none is
    /// named) to one address of the family asked for.
    pub fn resolve(&self, host: &str) -> anyhow::Result<SocketAddr> {
        address::resolve(host, DEFAULT_PORT, self.family()).map_err(|e| {
            if e.is_usage() {
                crate::usage::UsageError(e.to_string()).into()
            } else {
                e.into()
            }
        })
    }
}

/// Data connections spread over several paths (bench, send).
#[derive(Args, Clone, Debug, Default)]
pub struct StripeFlags {
    /// Spread the data streams round-robin over these receiver addresses
    /// (comma-separated, e.g. one per NIC or per link), each paired with the
    /// -B address at its place; the control connection goes to the target.
    /// N paths need at least N streams (-P is raised to N where lower).
    #[arg(long, value_name = "ADDR,...", value_delimiter = ',')]
    pub stripe: Vec<String>,
}

impl StripeFlags {
    /// The paths, the local address of the control connection, and the
    /// streams to run (`streams`, raised to one a path). Without
    /// `--stripe`, the receiver's `offered` addresses (its URL's) are the
    /// paths.
    pub fn resolve(
        &self,
        address: &AddressFlags,
        streams: u16,
        offered: &[IpAddr],
    ) -> anyhow::Result<(Vec<Stripe>, Option<IpAddr>, u16)> {
        let remotes = match self.stripe.as_slice() {
            [] => offered.to_vec(),
            asked => asked
                .iter()
                .map(|h| Ok(address::resolve(h, DEFAULT_PORT, address.family())?.ip()))
                .collect::<anyhow::Result<Vec<IpAddr>>>()?,
        };
        let stripes = address::stripes(&remotes, &address.bind)?;
        let control_bind = address.bind.first().copied();
        let paths = u16::try_from(stripes.len()).unwrap_or(u16::MAX);
        if paths > streams {
            eprintln!(
                "linerate: --stripe over {paths} paths: {paths} streams, one a path (-P {} gives two a path)",
                2 * paths
            );
        }
        Ok((stripes, control_bind, streams.max(paths)))
    }
}

/// How the data is marked for the network's traffic classes (bench,
/// latency, send).
#[derive(Args, Clone, Debug, Default)]
pub struct MarkFlags {
    /// IP TOS / IPv6 traffic class byte (e.g. 0x10 or 16).
    #[arg(short = 'S', long, value_parser = parse_tos, conflicts_with = "dscp")]
    pub tos: Option<u8>,
    /// DSCP code point (0-63, or a name: ef, af11-af43, cs0-cs7): the upper
    /// six bits of the TOS byte, its two ECN bits left to the kernel.
    #[arg(long, value_name = "CODE")]
    pub dscp: Option<Dscp>,
}

impl MarkFlags {
    pub fn apply(&self, socket: &mut SocketParams) {
        socket.tos = self.tos.or(self.dscp.map(Dscp::tos));
    }
}

/// The socket buffers at each end (bench, send).
#[derive(Args, Clone, Debug, Default)]
pub struct BufferFlags {
    /// Receive window: SO_RCVBUF at the receiving end. Default: kernel autotuning.
    #[arg(short = 'w', long, value_name = "BYTES", value_parser = units::parse_size_u32)]
    pub window: Option<u32>,
    /// Send buffer (SO_SNDBUF) at the sending end. Default: kernel autotuning.
    #[arg(long, value_name = "BYTES", value_parser = units::parse_size_u32)]
    pub sndbuf: Option<u32>,
}

impl BufferFlags {
    pub fn apply(&self, socket: &mut SocketParams) {
        socket.rcvbuf = self.window;
        socket.sndbuf = self.sndbuf;
    }
}

/// The congestion control of every connection (bench, latency).
#[derive(Args, Clone, Debug, Default)]
pub struct CongestionFlags {
    /// Congestion control per socket (TCP_CONGESTION), e.g. bbr, cubic.
    #[arg(short = 'Z', long = "cc", value_name = "NAME", value_parser = parse_congestion)]
    pub congestion: Option<String>,
}

impl CongestionFlags {
    pub fn apply(&self, socket: &mut SocketParams) {
        socket.congestion = self.congestion.clone();
    }
}

/// A congestion control's name, checked as the server checks it.
fn parse_congestion(s: &str) -> Result<String, String> {
    if !linerate_wire::is_congestion_name(s) {
        return Err(format!(
            "'{s}' is not a congestion control name (1 to 15 letters, digits or '_', as `sysctl \
             net.ipv4.tcp_available_congestion_control` lists them)"
        ));
    }
    Ok(s.to_string())
}

pub fn parse_tos(s: &str) -> Result<u8, String> {
    let v = if let Some(h) = s.strip_prefix("0x") {
        u8::from_str_radix(h, 16)
    } else {
        s.parse()
    };
    v.map_err(|_| format!("'{s}' is not a TOS byte (0-255 or 0x00-0xff)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dscp_is_the_upper_six_bits_of_the_tos_byte() {
        let mut socket = SocketParams::default();
        let mark = MarkFlags {
            tos: None,
            dscp: Some("ef".parse().unwrap()),
        };
        mark.apply(&mut socket);
        assert_eq!(socket.tos, Some(0xb8), "EF is TOS 0xb8");
    }
}
