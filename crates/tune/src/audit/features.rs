//! What the audit rules judge: the figures a target and a host's facts
//! imply, computed once.

use crate::bounds::{self, Target};
use crate::facts::{Facts, Iface};

/// What the audit's rules look at, measured once from the host's facts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Features {
    /// The target audited against.
    pub target: Target,
    /// The socket buffer a plan chose per stream.
    pub buffer: u64,
    /// What one stream reaches with today's tcp_rmem/tcp_wmem maxima.
    pub window_now_bps: Option<f64>,
    /// What one stream reaches with today's tcp_rmem maximum alone.
    pub rmem_now_bps: Option<f64>,
    /// What one stream reaches with today's tcp_wmem maximum alone.
    pub wmem_now_bps: Option<f64>,
    /// Today's buffers hold a stream under half the target.
    pub buffers_short: bool,
    /// The fastest link on the host, Mb/s (0 if none says).
    pub fastest_mbps: u64,
    /// Loss on a path long enough for it to cost a loss-based algorithm.
    pub lossy_long_path: bool,
}

/// What one interface's rules judge.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IfaceFeatures {
    /// The link's rate, or the target's where the link does not say.
    pub link_bps: f64,
    /// Both the target and the link are 10 Gbit/s or more: a 1G
    /// management port next to the data NIC is not held to 10G advice.
    pub fast: bool,
    /// The fastest link on the host: the one the data goes through.
    pub data_nic: bool,
}

impl Features {
    /// What `facts` say against target `t`, with `buffer` bytes per stream planned.
    pub fn of(facts: &Facts, t: &Target, buffer: u64) -> Features {
        let ceiling = |key| {
            facts
                .sysctl_max(key)
                .map(|max| bounds::window_ceiling_bps(max, t.rtt_s))
        };
        let (rmem_now_bps, wmem_now_bps) =
            (ceiling("net.ipv4.tcp_rmem"), ceiling("net.ipv4.tcp_wmem"));
        let window_now_bps = rmem_now_bps.zip(wmem_now_bps).map(|(r, w)| r.min(w));
        Features {
            target: *t,
            buffer,
            window_now_bps,
            rmem_now_bps,
            wmem_now_bps,
            buffers_short: window_now_bps.is_some_and(|w| w < 0.5 * t.rate_bps),
            fastest_mbps: facts
                .interfaces
                .iter()
                .filter_map(|i| i.speed_mbps)
                .max()
                .unwrap_or(0),
            lossy_long_path: t.loss.is_some_and(|p| p > 0.0) && t.rtt_s >= 0.005,
        }
    }

    /// What interface `i` says against the target.
    pub fn iface(&self, i: &Iface) -> IfaceFeatures {
        let rate = self.target.rate_bps;
        let link_bps = i.speed_mbps.map_or(rate, |s| s as f64 * 1e6);
        IfaceFeatures {
            link_bps,
            fast: rate.min(link_bps) >= 10e9,
            data_nic: i.speed_mbps.is_some_and(|s| s == self.fastest_mbps),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(rate_bps: f64, rtt_s: f64, loss: Option<f64>) -> Target {
        Target {
            rate_bps,
            rtt_s,
            loss,
            streams: None,
            mss: None,
        }
    }

    #[test]
    fn a_slow_port_beside_the_data_nic_is_neither_fast_nor_the_data_nic() {
        let mut facts = Facts::default();
        for (name, mbps) in [("mgmt0", 1000), ("data0", 100_000)] {
            facts.interfaces.push(Iface {
                name: name.into(),
                speed_mbps: Some(mbps),
                ..Iface::default()
            });
        }
        let f = Features::of(&facts, &target(100e9, 0.044, None), 1 << 30);
        assert_eq!(f.fastest_mbps, 100_000);
        let mgmt = f.iface(&facts.interfaces[0]);
        assert!(!mgmt.fast && !mgmt.data_nic);
        let data = f.iface(&facts.interfaces[1]);
        assert!(data.fast && data.data_nic);
        assert_eq!(data.link_bps, 100e9);
    }

    #[test]
    fn loss_counts_only_on_a_long_path() {
        let facts = Facts::default();
        let f = |rtt, loss| Features::of(&facts, &target(10e9, rtt, loss), 1 << 26);
        assert!(f(0.044, Some(1e-4)).lossy_long_path);
        assert!(!f(0.001, Some(1e-4)).lossy_long_path);
        assert!(!f(0.044, None).lossy_long_path);
        assert!(
            !f(0.044, None).buffers_short,
            "no sysctls read: not known short"
        );
    }
}
