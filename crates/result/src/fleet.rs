//! The many-host kinds (`incast`, `mesh`): every host that took part and
//! what became of it, and every step's flows as their senders measured
//! them. Sizes grow with the hosts and flows, one entry each.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{HostFacts, Limit};

/// A many-host run: who took part, and each step of its plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Fleet {
    /// What started the agents: `ssh`, `slurm`, `openmpi`, `pmi`, `lab`, `local`.
    pub launcher: String,
    /// Every rank the plan counted on, joined or not.
    pub hosts: Vec<FleetHost>,
    /// Every step that ran, in order.
    pub steps: Vec<FleetStep>,
    /// What coordinating cost the coordinator's process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub coordinator: Option<CoordinatorCost>,
}

/// The coordinator's own CPU time and peak memory over the run (with
/// srun or mpirun, rank 0's process, which runs an agent too).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct CoordinatorCost {
    /// CPU seconds of the coordinator's process.
    pub cpu_seconds: f64,
    /// Its peak resident memory.
    pub peak_rss_bytes: u64,
    /// Ranks it coordinated, so the cost per agent reads off directly.
    pub ranks: u32,
}

impl Fleet {
    /// The ranks that failed, with why.
    pub fn failed(&self) -> impl Iterator<Item = &FleetHost> {
        self.hosts.iter().filter(|h| h.failed.is_some())
    }
}

/// One rank: where it ran, its clock against the coordinator's, and why it
/// failed when it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FleetHost {
    /// Its rank, from 0 (the coordinator's host under a launcher).
    pub rank: u32,
    /// The name the launcher gave it (a host name, or `rank N`).
    pub name: String,
    /// The address its flows were sent to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Its clock minus the coordinator's, and the most that can be wrong by.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_offset_ns: Option<i64>,
    /// The most its offset can be wrong by (half the round trip it was measured over).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock_error_ns: Option<i64>,
    /// Its facts (kernel, CPUs, NICs), as it reported them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub facts: Option<HostFacts>,
    /// Why this rank dropped out (never joined, its connection was lost,
    /// it stopped answering); its flows before then are kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failed: Option<String>,
}

/// Flows started together, what the step varied, and what they did together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FleetStep {
    /// What the step varies, by name (`senders_per_host`, `source_hosts`,
    /// `message_bytes`; a mesh's `from` and `to`).
    pub factors: BTreeMap<String, u64>,
    /// Every flow of the step, run or not.
    pub flows: Vec<FlowResult>,
    /// Every flow's rate summed.
    pub aggregate_bits_per_second: f64,
    /// Jain's fairness index of the flows' rates (1: all equal; 1/n: one
    /// took everything).
    pub jain_index: f64,
    /// Segments its flows retransmitted.
    pub retransmits: u64,
    /// Latest minus earliest flow start, on the coordinator's clock.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_spread_ms: Option<f64>,
    /// Each rank with a flow in the step: what it sent and received.
    #[serde(default)]
    pub hosts: Vec<HostRate>,
    /// A proxy application's step (`linerate job`): every rank's iterations.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job: Option<JobResult>,
}

/// A proxy application run as one step: each rank iterates, exchanging
/// messages with its peers every iteration, and times each iteration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobResult {
    /// `halo3d` (faces, edges and corners with the neighbours in a 3D grid)
    /// or `all-to-all` (a message to every other rank).
    pub kind: String,
    /// Iterations each rank was to run.
    pub iterations: u32,
    /// Compute time each rank spends per iteration before exchanging, us.
    pub compute_us: u32,
    /// The ranks' grid (halo3d), x by y by z.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grid: Option<[u32; 3]>,
    /// DSCP code point of its messages, when marked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dscp: Option<u8>,
    /// Every rank of the job.
    pub ranks: Vec<JobRank>,
    /// The job's run time: its slowest rank's, seconds.
    pub total_seconds: f64,
    /// The median over ranks of each rank's median iteration, us.
    pub median_iteration_us: f64,
}

/// One rank of a proxy application.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobRank {
    /// The rank.
    pub rank: u32,
    /// Its peers and the bytes it sends each of them per iteration.
    pub peers: u32,
    /// Bytes it sends per iteration, all peers together.
    pub bytes_per_iteration: u64,
    /// Iterations it completed.
    pub iterations: u32,
    /// Median iteration time, us.
    pub median_us: f64,
    /// 99th percentile iteration time, us.
    pub p99_us: f64,
    /// Longest iteration, us.
    pub max_us: f64,
    /// From its first iteration's start to its last one's end, seconds.
    pub total_seconds: f64,
    /// Every iteration's time in order, us (the per-node figures).
    pub iteration_us: Vec<f64>,
    /// Why it stopped short, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl JobRank {
    /// A rank's summary from its iteration times.
    pub fn of(
        rank: u32,
        peers: u32,
        bytes_per_iteration: u64,
        iteration_ns: &[u64],
        error: Option<String>,
    ) -> JobRank {
        let us: Vec<f64> = iteration_ns
            .iter()
            .map(|&ns| (ns as f64 / 1e3 * 100.0).round() / 100.0)
            .collect();
        JobRank {
            rank,
            peers,
            bytes_per_iteration,
            iterations: us.len() as u32,
            median_us: crate::stats::median(us.iter().copied()),
            p99_us: crate::stats::quantile(us.iter().copied(), 0.99),
            max_us: us.iter().copied().fold(0.0, f64::max),
            total_seconds: iteration_ns.iter().sum::<u64>() as f64 / 1e9,
            iteration_us: us,
            error,
        }
    }
}

impl JobResult {
    /// The job's figures from its ranks.
    pub fn of(kind: &str, iterations: u32, compute_us: u32, ranks: Vec<JobRank>) -> JobResult {
        JobResult {
            kind: kind.to_string(),
            iterations,
            compute_us,
            grid: None,
            dscp: None,
            total_seconds: ranks.iter().map(|r| r.total_seconds).fold(0.0, f64::max),
            median_iteration_us: crate::stats::median(
                ranks
                    .iter()
                    .filter(|r| r.iterations > 0)
                    .map(|r| r.median_us),
            ),
            ranks,
        }
    }
}

/// One rank's share of a step, its flows that ran summed.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, Default)]
pub struct HostRate {
    /// The rank.
    pub rank: u32,
    /// What its flows sent per second.
    pub sent_bits_per_second: f64,
    /// What its flows received per second.
    pub received_bits_per_second: f64,
    /// Flows from or to it that ran.
    pub flows: u32,
}

impl HostRate {
    /// Every rank's share of `flows` (those that ran), by rank.
    pub fn of(flows: &[FlowResult]) -> Vec<HostRate> {
        let mut by: BTreeMap<u32, HostRate> = BTreeMap::new();
        for f in flows.iter().filter(|f| f.error.is_none()) {
            let from = by.entry(f.from).or_insert(HostRate {
                rank: f.from,
                ..HostRate::default()
            });
            from.sent_bits_per_second += f.bits_per_second;
            from.flows += 1;
            let to = by.entry(f.to).or_insert(HostRate {
                rank: f.to,
                ..HostRate::default()
            });
            to.received_bits_per_second += f.bits_per_second;
            to.flows += 1;
        }
        by.into_values().collect()
    }
}

/// One flow: `streams` connections from rank `from` to rank `to`, as its
/// sender measured it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct FlowResult {
    /// The sending rank.
    pub from: u32,
    /// The receiving rank.
    pub to: u32,
    /// Its streams.
    pub streams: u16,
    /// Bytes per write.
    pub message_bytes: u32,
    /// When its first byte was due, in ns since the Unix epoch on the
    /// sender's clock.
    pub started_at_ns: u64,
    /// Payload the receiver took.
    pub bytes: u64,
    /// From its first byte to its last.
    pub seconds: f64,
    /// Payload the receiver took per second.
    pub bits_per_second: f64,
    /// Segments the sender retransmitted.
    pub retransmits: u64,
    /// Rate of each interval, in order.
    #[serde(default)]
    pub interval_bits_per_second: Vec<f64>,
    /// What limited it, and the sentence saying so.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<Limit>,
    /// Its verdict in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verdict: Option<String>,
    /// Why the flow did not run or did not finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The fastest rate any one host can report: eight 400 Gbit/s ports, far
/// above what memory moves over loopback on today's hosts (about 0.13
/// Tbit/s on the machines this was built on). A rank reporting more is
/// not measuring (docs/security.md#fair-shares).
pub const MAX_HOST_BITS_PER_SECOND: f64 = 3.2e12;

impl FlowResult {
    /// Checks what serde cannot: numbers that must be finite, in range and
    /// agree with each other (a rank cannot report a rate its bytes and
    /// time do not make, or one no host can carry).
    pub fn validate(&self) -> Result<(), Implausible> {
        let finite = |x: f64| x.is_finite() && x >= 0.0;
        let (from, to) = (self.from, self.to);
        if !finite(self.seconds) || !finite(self.bits_per_second) {
            return Err(Implausible::Figures { from, to });
        }
        if !self
            .interval_bits_per_second
            .iter()
            .all(|&x| finite(x) && x <= MAX_HOST_BITS_PER_SECOND)
        {
            return Err(Implausible::Interval { from, to });
        }
        if self.bits_per_second > MAX_HOST_BITS_PER_SECOND {
            return Err(Implausible::FasterThanAnyHost {
                from,
                to,
                bits_per_second: self.bits_per_second,
            });
        }
        if self.seconds > 0.0 {
            let made = self.bytes as f64 * 8.0 / self.seconds;
            if (made - self.bits_per_second).abs() > 0.01 * made.max(self.bits_per_second) + 1.0 {
                return Err(Implausible::RateNotMade {
                    from,
                    to,
                    bits_per_second: self.bits_per_second,
                    bytes: self.bytes,
                    seconds: self.seconds,
                });
            }
        }
        Ok(())
    }
}

/// A flow's figures that no measurement makes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum Implausible {
    /// Its time or rate is not a finite number at least 0.
    #[error("flow {from}->{to} has invalid figures")]
    Figures {
        /// The sending rank.
        from: u32,
        /// The receiving rank.
        to: u32,
    },
    /// An interval's rate is not finite, or more than any host carries.
    #[error("flow {from}->{to} has an invalid interval")]
    Interval {
        /// The sending rank.
        from: u32,
        /// The receiving rank.
        to: u32,
    },
    /// A rate above [`MAX_HOST_BITS_PER_SECOND`].
    #[error("flow {from}->{to} claims {bits_per_second:.3e} bit/s, more than any host carries")]
    FasterThanAnyHost {
        /// The sending rank.
        from: u32,
        /// The receiving rank.
        to: u32,
        /// The rate claimed.
        bits_per_second: f64,
    },
    /// A rate its bytes and time do not make.
    #[error(
        "flow {from}->{to} claims {bits_per_second:.3e} bit/s, but its {bytes} bytes in \
         {seconds:.3} s make {:.3e}", *bytes as f64 * 8.0 / seconds
    )]
    RateNotMade {
        /// The sending rank.
        from: u32,
        /// The receiving rank.
        to: u32,
        /// The rate claimed.
        bits_per_second: f64,
        /// The bytes it moved.
        bytes: u64,
        /// In this time.
        seconds: f64,
    },
}

#[cfg(test)]
mod plausibility {
    use super::*;

    fn flow(bytes: u64, seconds: f64, bits_per_second: f64) -> FlowResult {
        FlowResult {
            from: 1,
            to: 0,
            streams: 1,
            message_bytes: 1,
            started_at_ns: 0,
            bytes,
            seconds,
            bits_per_second,
            retransmits: 0,
            interval_bits_per_second: vec![],
            limit: None,
            ..FlowResult::default()
        }
    }

    #[test]
    fn a_rate_no_host_carries_or_its_bytes_do_not_make_is_refused() {
        assert!(flow(1_000_000_000, 1.0, 8e9).validate().is_ok());
        let e = flow(u64::MAX, 1.0, 8e18).validate().unwrap_err();
        assert!(matches!(e, Implausible::FasterThanAnyHost { .. }), "{e}");
        assert!(e.to_string().contains("more than any host carries"), "{e}");
        let e = flow(1_000, 1.0, 9e9).validate().unwrap_err();
        assert!(matches!(e, Implausible::RateNotMade { .. }), "{e}");
        assert!(e.to_string().contains("make 8.000e3"), "{e}");
    }
}
