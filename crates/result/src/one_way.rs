//! Each direction's queueing delay over a bench, from its one-way delay
//! probe (docs/verdict.md#return-path).

use serde::{Deserialize, Serialize};

/// What the probe beside a bench's streams measured of each direction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct OneWayDelay {
    /// Probes sent while the streams ran.
    pub probes_sent: u32,
    /// Of those, the ones whose echo came back.
    pub probes_answered: u32,
    /// Queueing on the way from the client to the server.
    pub to_server: QueueDelay,
    /// Queueing on the way from the server to the client.
    pub to_client: QueueDelay,
}

/// One direction's queueing: each probe's one-way delay less the least
/// any probe of the run took that way (the clocks' offset cancels).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
pub struct QueueDelay {
    /// The median, µs.
    pub median_us: f64,
    /// The 90th percentile, µs.
    pub p90_us: f64,
}
