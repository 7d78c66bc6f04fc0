//! What a path allows, from arithmetic alone: the bandwidth-delay product,
//! the socket buffer a stream needs, the ceiling a buffer puts on a stream,
//! the Mathis bound for a loss rate, and how many streams a target needs.

use serde::{Deserialize, Serialize};

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
    /// The rate to reach, bits/s.
    pub rate_bps: f64,
    /// The path's round trip, seconds.
    pub rtt_s: f64,
    /// Packet loss as a fraction (0.0002 for 0.02 %).
    pub loss: Option<f64>,
    /// Streams the user intends to run; otherwise the plan chooses.
    pub streams: Option<u32>,
    /// Segment size; otherwise from the largest MTU audited.
    pub mss: Option<u32>,
}

/// The bandwidth-delay product: bytes in flight to fill `rate_bps` over `rtt_s`.
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

/// The sizes a target calls for on a host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// Segment size, bytes.
    pub mss: u32,
    /// The host runs bbr, or will: the loss rate bounds no stream.
    pub bbr: bool,
    /// Streams the bounds call for.
    pub needed: u32,
    /// Streams planned (the user's, else `needed`).
    pub streams: u32,
    /// The bandwidth-delay product, bytes.
    pub bdp: u64,
    /// Socket buffer per stream.
    pub buffer: u64,
}

/// Buffers and streams for `target` on the host `facts` describe.
pub fn size(facts: &Facts, target: &Target) -> Sizing {
    let mss = target.mss.unwrap_or_else(|| mss_for(facts));
    // The audit asks for bbr on lossy long paths where the kernel has it;
    // the Mathis bound describes loss-based algorithms only.
    let bbr = facts.sysctl("net.ipv4.tcp_congestion_control") == Some("bbr")
        || (target.loss.is_some_and(|p| p > 0.0) && facts.has_module("tcp_bbr"));
    let needed = streams_needed(target, mss, !bbr);
    let streams = target.streams.unwrap_or(needed).max(1);
    let bdp = bdp_bytes(target.rate_bps, target.rtt_s);
    let buffer = buffer_for(bdp.div_ceil(u64::from(streams)));
    Sizing {
        mss,
        bbr,
        needed,
        streams,
        bdp,
        buffer,
    }
}
