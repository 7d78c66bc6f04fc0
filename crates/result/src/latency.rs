//! What a `latency` document adds: round trips per step of a run, their
//! percentiles and distribution, and the load they ran under.

use serde::{Deserialize, Serialize};

use crate::TcpSample;

/// A latency session's measurements.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Latency {
    /// How time was read, and what one reading costs.
    pub clock: Clock,
    /// Both ends spun on non-blocking receives instead of sleeping.
    pub busy_poll: bool,
    /// Why they spun or blocked (`--busy-poll`), in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub busy_poll_choice: Option<String>,
    /// Data connections, each its own ping-pong.
    pub connections: u16,
    /// One entry per measured step: each size of a sweep, or the idle and
    /// loaded halves of a run under load.
    pub steps: Vec<Step>,
    /// The bulk streams that loaded the path, when asked (`--load`); their
    /// own samples are the document's `streams` and `intervals`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load: Option<Load>,
}

/// The clock round trips were timed with.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Clock {
    /// `CLOCK_MONOTONIC`.
    pub source: String,
    /// The median cost of one reading, measured at the start of the run.
    pub overhead_ns: f64,
}

/// How a step's rounds go.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Pattern {
    /// One request, one reply (latency).
    PingPong,
    /// A window of requests back to back, one reply (bandwidth).
    Window,
}

/// One measured step: a message size, under one load.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Step {
    /// How its rounds go.
    pub pattern: Pattern,
    /// `idle` or `loaded` in a run under load; absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// Bytes of each request.
    pub request_bytes: u32,
    /// Bytes of each reply.
    pub reply_bytes: u32,
    /// Requests per round (1 for a ping-pong).
    pub window: u32,
    /// Rounds measured, all connections together (warm-up excluded).
    pub rounds: u64,
    /// Rounds run before measuring, not counted.
    pub warmup_rounds: u64,
    /// Time the measured rounds took (the longest connection's).
    pub seconds: f64,
    /// Time from a round's first request byte written to its reply's
    /// last byte read, per round.
    pub round_trip_us: Percentiles,
    /// The distribution: `[quantile, microseconds]` pairs, quantile 0 to 1.
    pub distribution_us: Vec<[f64; 2]>,
    /// Rounds per second, all connections together.
    pub transactions_per_second: f64,
    /// Requests per second, all connections together.
    pub messages_per_second: f64,
    /// Request payload per second, all connections together.
    pub bits_per_second: f64,
    /// The first connection's TCP_INFO at the end of the step.
    pub tcp: Option<TcpSample>,
    /// UDP: measured rounds whose reply never came (not in the percentiles).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lost_rounds: Option<u64>,
    /// The client's connections still spun at the step's end: false once
    /// one found itself waiting for its core and blocked from then on;
    /// absent where they never spun.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spinning: Option<bool>,
}

/// A step's round trips, µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct Percentiles {
    /// The shortest.
    pub min: f64,
    /// The mean.
    pub mean: f64,
    /// The median.
    pub p50: f64,
    /// The 90th percentile.
    pub p90: f64,
    /// The 99th percentile.
    pub p99: f64,
    /// The 99.9th percentile.
    pub p99_9: f64,
    /// The 99.99th percentile.
    pub p99_99: f64,
    /// The longest.
    pub max: f64,
}

/// The bulk streams run beside the ping-pong.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Load {
    /// Bulk streams run.
    pub streams: u16,
    /// Their received payload per second.
    pub bits_per_second: f64,
    /// Segments they retransmitted.
    pub retransmits: u64,
    /// The bulk streams' smoothed RTT at their end (kernel's view), mean.
    pub rtt_us: Option<f64>,
    /// The bulk streams' congestion control, where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congestion: Option<String>,
}
