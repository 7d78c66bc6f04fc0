//! The arithmetic of a fast path: BDP, socket buffers, the per-stream
//! ceiling the buffers allow, the Mathis bound for a loss rate, and how many
//! streams a target needs; and a plan built from it and an audit.

use serde::{Deserialize, Serialize};

use crate::audit::{self, Fix};
use crate::facts::Facts;

/// Share of a socket buffer that TCP can use as window: the kernel charges
/// each skb's full truesize (headers, metadata, slack) against the buffer,
/// which for bulk traffic is about twice the payload.
pub const USABLE_BUFFER_SHARE: f64 = 0.5;
/// Smallest buffer a plan sets: below this, autotuning already copes.
pub const MIN_BUFFER: u64 = 16 << 20;
/// The largest value the kernel takes for a socket buffer (an int).
pub const MAX_BUFFER: u64 = i32::MAX as u64;
/// Mathis et al.'s constant for periodic loss, sqrt(3/2).
pub const MATHIS_C: f64 = 1.224_744_871;

/// What the host should reach.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub rate_bps: f64,
    pub rtt_s: f64,
    /// Packet loss as a fraction (0.0002 for 0.02 %).
    pub loss: Option<f64>,
    /// Streams the user intends to run; otherwise the plan chooses.
    pub streams: Option<u32>,
    /// Segment size; otherwise from the largest MTU audited.
    pub mss: Option<u32>,
}

pub fn bdp_bytes(rate_bps: f64, rtt_s: f64) -> u64 {
    (rate_bps * rtt_s / 8.0).ceil() as u64
}

/// The throughput one stream reaches with a given buffer at an RTT.
pub fn window_ceiling_bps(buffer_bytes: u64, rtt_s: f64) -> f64 {
    buffer_bytes as f64 * USABLE_BUFFER_SHARE * 8.0 / rtt_s.max(1e-6)
}

/// Mathis et al. (1997): rate <= MSS/RTT * C/sqrt(p), per stream.
pub fn mathis_bps(mss: u32, rtt_s: f64, loss: f64) -> f64 {
    f64::from(mss) * 8.0 / rtt_s.max(1e-6) * MATHIS_C / loss.max(1e-12).sqrt()
}

/// The buffer that holds twice a stream's share of the BDP (see
/// [`USABLE_BUFFER_SHARE`]), rounded up to a power of two.
pub fn buffer_for(bdp_per_stream: u64) -> u64 {
    bdp_per_stream
        .saturating_mul(2)
        .checked_next_power_of_two()
        .unwrap_or(MAX_BUFFER)
        .clamp(MIN_BUFFER, MAX_BUFFER)
}

/// Most streams a plan proposes; beyond this the host's cores, not TCP,
/// set the limit.
pub const MAX_STREAMS: u32 = 128;

/// Streams needed so that neither the largest buffer nor, for loss-based
/// congestion control, the loss rate keeps the sum under the target.
pub fn streams_needed(t: &Target, mss: u32, loss_based_cc: bool) -> u32 {
    let mut per_stream_cap = window_ceiling_bps(MAX_BUFFER, t.rtt_s);
    if let Some(p) = t.loss.filter(|p| *p > 0.0 && loss_based_cc) {
        per_stream_cap = per_stream_cap.min(mathis_bps(mss, t.rtt_s, p));
    }
    ((t.rate_bps / per_stream_cap).ceil() as u32).clamp(1, MAX_STREAMS)
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Plan {
    pub schema: String,
    pub target: Target,
    pub mss: u32,
    pub bdp_bytes: u64,
    pub streams: u32,
    /// Socket buffer per stream (tcp_rmem/tcp_wmem max, rmem/wmem_max).
    pub buffer_bytes: u64,
    /// What one stream can reach with the current tcp_rmem/tcp_wmem maxima.
    pub current_per_stream_bps: Option<f64>,
    pub planned_per_stream_bps: f64,
    pub mathis_per_stream_bps: Option<f64>,
    pub pacing_per_stream_bps: f64,
    pub settings: Vec<Setting>,
    pub commands: Vec<Command>,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Setting {
    pub key: String,
    pub value: String,
    pub current: Option<String>,
    pub why: String,
}

impl Setting {
    /// A setting with no audit behind it (a value to mirror or to test).
    pub fn new(key: &str, value: &str, why: &str) -> Setting {
        Setting {
            key: key.into(),
            value: value.into(),
            current: None,
            why: why.into(),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Command {
    pub line: String,
    pub why: String,
}

/// The segment size for the largest MTU among audited interfaces (IPv4 and
/// TCP headers plus timestamps: 52 bytes).
pub fn mss_for(facts: &Facts) -> u32 {
    facts
        .interfaces
        .iter()
        .filter_map(|i| i.mtu)
        .max()
        .map_or(1448, |m| m.saturating_sub(52).max(536))
}

/// Buffers, streams and the settings that get there from `facts`.
pub fn make(facts: &Facts, target: Target) -> Plan {
    let mss = target.mss.unwrap_or_else(|| mss_for(facts));
    // The audit asks for bbr on lossy long paths where the kernel has it;
    // the Mathis bound describes loss-based algorithms only.
    let bbr = facts.sysctl("net.ipv4.tcp_congestion_control") == Some("bbr")
        || (target.loss.is_some_and(|p| p > 0.0) && facts.has_module("tcp_bbr"));
    let needed = streams_needed(&target, mss, !bbr);
    let streams = target.streams.unwrap_or(needed).max(1);
    let bdp = bdp_bytes(target.rate_bps, target.rtt_s);
    let buffer = buffer_for(bdp.div_ceil(u64::from(streams)));
    let current = match (
        facts.sysctl_max("net.ipv4.tcp_rmem"),
        facts.sysctl_max("net.ipv4.tcp_wmem"),
    ) {
        (Some(r), Some(w)) => Some(window_ceiling_bps(r.min(w), target.rtt_s)),
        _ => None,
    };
    let mathis = target
        .loss
        .filter(|p| *p > 0.0)
        .map(|p| mathis_bps(mss, target.rtt_s, p));
    let window = window_ceiling_bps(buffer, target.rtt_s);
    let planned = if bbr {
        window
    } else {
        window.min(mathis.unwrap_or(f64::INFINITY))
    };
    let mut notes = Vec::new();
    if let (true, Some(m)) = (bbr, mathis) {
        notes.push(format!(
            "with bbr the loss rate does not bound a stream; a loss-based algorithm (cubic) would be held to {} per stream (Mathis)",
            crate::audit::fmt_rate(m)
        ));
    }
    if streams < needed {
        notes.push(format!(
            "{streams} streams cannot reach the target: each is held to {} by {}; {needed} would",
            crate::audit::fmt_rate(planned),
            if mathis.is_some_and(|m| m <= planned) {
                "the loss rate (Mathis)"
            } else {
                "the largest socket buffer"
            },
        ));
    }
    let findings = audit::judge(facts, &target, buffer);
    let mut settings = Vec::new();
    let mut commands = Vec::new();
    for f in findings.iter().filter(|f| !f.satisfied) {
        match &f.fix {
            Some(Fix::Sysctl { key, value }) => settings.push(Setting {
                key: key.clone(),
                value: value.clone(),
                current: f.current.clone(),
                why: f.why.clone(),
            }),
            Some(Fix::Command(line)) => commands.push(Command {
                line: line.clone(),
                why: f.why.clone(),
            }),
            None => notes.push(format!("{}: {}", f.item, f.why)),
        }
    }
    Plan {
        schema: "linerate.plan/1".into(),
        target,
        mss,
        bdp_bytes: bdp,
        streams,
        buffer_bytes: buffer,
        current_per_stream_bps: current,
        planned_per_stream_bps: planned,
        mathis_per_stream_bps: mathis,
        pacing_per_stream_bps: target.rate_bps / f64::from(streams),
        settings,
        commands,
        notes,
    }
}

impl Plan {
    /// A file for /etc/sysctl.d.
    pub fn sysctl_d(&self, header: &str) -> String {
        let mut s = format!("# {header}\n");
        for set in &self.settings {
            s.push_str(&format!("# {}\n{} = {}\n", set.why, set.key, set.value));
        }
        s
    }

    /// The NIC, qdisc and CPU commands, as a shell script.
    pub fn script(&self, header: &str) -> String {
        let mut s = format!("#!/bin/sh\n# {header}\nset -e\n");
        for c in &self.commands {
            s.push_str(&format!("# {}\n{}\n", c.why, c.line));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bdp_and_buffers() {
        // 10 Gbit/s x 44 ms = 55 MB; twice that rounded up is 128 MiB.
        assert_eq!(bdp_bytes(10e9, 0.044), 55_000_000);
        assert_eq!(buffer_for(55_000_000), 128 << 20);
        assert_eq!(buffer_for(1000), MIN_BUFFER);
        assert_eq!(buffer_for(u64::MAX / 2), MAX_BUFFER);
        // 4 MiB of send buffer at 44 ms: about 381 Mbit/s.
        let c = window_ceiling_bps(4 << 20, 0.044);
        assert!((c - 381.3e6).abs() < 1e6, "{c}");
    }

    #[test]
    fn mathis_bound_and_streams() {
        // MSS 1448, 44 ms, 0.02 % loss: 1448*8/0.044*1.2247/0.01414 = 22.8 Mbit/s.
        let m = mathis_bps(1448, 0.044, 0.0002);
        assert!((m - 22.8e6).abs() < 0.2e6, "{m}");
        let t = Target {
            rate_bps: 400e9,
            rtt_s: 0.044,
            loss: Some(0.0002),
            streams: None,
            mss: Some(8948),
        };
        // Jumbo segments raise the bound ~6x: 141 Mbit/s per stream, 2838 streams, capped.
        assert_eq!(streams_needed(&t, 8948, true), MAX_STREAMS);
        // bbr is not bound by Mathis; only the int-sized buffer limits a
        // stream: ~195 Gbit/s at 44 ms.
        assert_eq!(streams_needed(&t, 8948, false), 3);
        let ten = Target {
            rate_bps: 10e9,
            loss: Some(1e-6),
            ..t
        };
        // 1e-6 loss, jumbo: 1.99 Gbit/s per cubic stream -> 6 streams.
        assert_eq!(streams_needed(&ten, 8948, true), 6);
    }
}
