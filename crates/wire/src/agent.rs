//! The messages between a many-host run's coordinator and its agents: an
//! agent joins with its rank and the port its flows are received on, the
//! coordinator times a few clock probes, then hands each agent the flows
//! of every step with the time to start them on the agent's own clock,
//! and each agent reports what its flows measured. Every count is bounded.

use std::net::SocketAddr;

use serde::{Deserialize, Serialize};

use crate::{SocketParams, WireError};
use linerate_result::HostFacts;
use linerate_result::fleet::FlowResult;

/// Most ranks one run may have.
pub const MAX_RANKS: u32 = 65_536;
/// Most flows one agent runs in one step.
pub const MAX_AGENT_FLOWS: usize = 4096;
/// Most intervals one flow reports.
pub const MAX_FLOW_INTERVALS: usize = 100_000;
const MAX_NAME: usize = 255;
const MAX_STEP_MS: u64 = 24 * 3600 * 1000;

/// Agent to coordinator, first: who it is and where its flows arrive.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentJoin {
    /// Its rank, below `size`.
    pub rank: u32,
    /// Ranks in the run, as the agent's launcher counts them.
    pub size: u32,
    /// The agent's host name, as its launcher or the host knows it.
    pub name: String,
    /// The port of the agent's bench server.
    pub data_port: u16,
    /// Its host's facts.
    pub host: HostFacts,
    /// The run's token, when the coordinator requires one: a host that
    /// merely reaches the coordinator's port cannot take a rank.
    #[serde(default)]
    pub token: Option<String>,
    /// The port its proxy-job ranks accept their peers on (0: none).
    #[serde(default)]
    pub job_port: u16,
}

impl AgentJoin {
    /// Whether it is within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        if self.size == 0 || self.size > MAX_RANKS || self.rank >= self.size {
            return WireError::invalid("rank", "must be below a size of 1 to 65536 ranks");
        }
        if self.name.len() > MAX_NAME {
            return WireError::invalid("name", "must be at most 255 bytes");
        }
        if self.data_port == 0 {
            return WireError::invalid("data_port", "must not be 0");
        }
        if self.token.as_ref().is_some_and(|t| t.len() > MAX_NAME) {
            return WireError::invalid("token", "must be at most 255 bytes");
        }
        Ok(())
    }
}

/// Coordinator to agent: answer with your clock (an NTP-style exchange).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockProbe {
    /// The probe's number, echoed.
    pub seq: u32,
    /// When it left, ns since the Unix epoch on the coordinator's clock.
    pub coordinator_ns: u64,
}

/// Agent to coordinator: the probe, with when it arrived and when this
/// answer left on the agent's clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClockEcho {
    /// The probe's number.
    pub seq: u32,
    /// When the probe left, on the coordinator's clock, ns.
    pub coordinator_ns: u64,
    /// When it arrived, on the agent's clock, ns.
    pub agent_received_ns: u64,
    /// When this answer left, on the agent's clock, ns.
    pub agent_sent_ns: u64,
}

/// One flow an agent sends: `streams` connections to `to`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskFlow {
    /// The flow's index in the step, echoed in the report.
    pub flow: u32,
    /// The receiving agent's bench server.
    pub to: SocketAddr,
    /// Its connections.
    pub streams: u16,
    /// Bytes per write.
    pub message_bytes: u32,
    /// The socket options of its connections: the run's, the same for
    /// every flow.
    #[serde(flatten)]
    pub socket: SocketParams,
}

/// Coordinator to agent: the flows of one step, started together.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentTask {
    /// The step's number, echoed in the report.
    pub step: u32,
    /// When to start, ns since the Unix epoch on the agent's clock.
    pub start_at_ns: u64,
    /// How long the flows run.
    pub duration_ms: u64,
    /// Between their interval samples.
    pub interval_ms: u64,
    /// The flows this agent sends.
    pub flows: Vec<TaskFlow>,
    /// A proxy application's rank to run instead of flows.
    #[serde(default)]
    pub job: Option<JobTask>,
}

/// Most iterations of one proxy job.
pub const MAX_JOB_ITERATIONS: u32 = 100_000;
/// Most peers of one proxy-job rank.
pub const MAX_JOB_PEERS: usize = 4096;
/// Most bytes one rank sends one peer per iteration.
pub const MAX_JOB_MESSAGE: u32 = 64 << 20;

/// Which proxy application a job runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum JobKind {
    /// Each rank exchanges faces, edges and corners with its neighbours in
    /// a 3D grid every iteration (bandwidth-heavy, as Ember's halo3d-26).
    Halo3d,
    /// Each rank sends a small message to every other rank every
    /// iteration (latency-sensitive, as the FFT proxy subcom3d-a2a).
    AllToAll,
}

impl JobKind {
    /// Its name in flags and results.
    pub fn as_str(self) -> &'static str {
        match self {
            JobKind::Halo3d => "halo3d",
            JobKind::AllToAll => "all-to-all",
        }
    }
}

/// One peer of a proxy-job rank.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobPeer {
    /// Its rank.
    pub rank: u32,
    /// Where its job port listens.
    pub addr: SocketAddr,
    /// Bytes sent to it, and received from it, every iteration.
    pub bytes: u32,
}

/// Coordinator to agent: run one rank of a proxy application.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobTask {
    /// Which application.
    pub kind: JobKind,
    /// Iterations to run.
    pub iterations: u32,
    /// Compute time before each iteration's exchange, us.
    pub compute_us: u32,
    /// The socket options of its connections: the run's.
    #[serde(flatten)]
    pub socket: SocketParams,
    /// Its peers.
    pub peers: Vec<JobPeer>,
}

impl JobTask {
    /// Whether it is within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        if self.iterations == 0 || self.iterations > MAX_JOB_ITERATIONS {
            return WireError::invalid("iterations", "must be 1 to 100000");
        }
        if self.compute_us > 10_000_000 {
            return WireError::invalid("compute_us", "must be at most 10 s");
        }
        self.socket.validate()?;
        if self.peers.len() > MAX_JOB_PEERS {
            return WireError::invalid("peers", "at most 4096");
        }
        if self
            .peers
            .iter()
            .any(|p| p.bytes == 0 || p.bytes > MAX_JOB_MESSAGE)
        {
            return WireError::invalid("bytes", "must be 1 byte to 64 MiB");
        }
        Ok(())
    }
}

/// Agent to coordinator: how one proxy-job rank's iterations went.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobReport {
    /// Every completed iteration's time, ns.
    pub iteration_ns: Vec<u64>,
    /// Why it stopped short, if it did.
    pub error: Option<String>,
}

impl AgentTask {
    /// Whether it is within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        if let Some(job) = &self.job {
            job.validate()?;
        }
        if self.duration_ms == 0 || self.duration_ms > MAX_STEP_MS {
            return WireError::invalid("duration_ms", "must be between 1 ms and a day");
        }
        if self.interval_ms != 0 && self.interval_ms < 10 {
            return WireError::invalid("interval_ms", "must be 0 (off) or at least 10 ms");
        }
        if self.flows.len() > MAX_AGENT_FLOWS {
            return WireError::invalid("flows", "at most 4096 a step");
        }
        for f in &self.flows {
            if f.streams == 0 || f.streams > crate::MAX_STREAMS {
                return WireError::invalid("streams", "must be between 1 and 1024");
            }
            if f.message_bytes == 0 || f.message_bytes > 256 << 20 {
                return WireError::invalid("message_bytes", "must be between 1 byte and 256 MiB");
            }
            f.socket.validate()?;
        }
        Ok(())
    }
}

/// Agent to coordinator: what the step's flows measured, one entry each.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AgentReport {
    /// The step it ran.
    pub step: u32,
    /// Each flow's index in the step, with what it measured.
    pub flows: Vec<(u32, FlowResult)>,
    /// The proxy-job rank's iterations, when the step was a job.
    #[serde(default)]
    pub job: Option<JobReport>,
}

impl AgentReport {
    /// Whether it is within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        if let Some(job) = &self.job {
            if job.iteration_ns.len() > MAX_JOB_ITERATIONS as usize {
                return WireError::invalid("iteration_ns", "at most 100000 iterations");
            }
            if job.error.as_ref().is_some_and(|e| e.len() > 4096) {
                return WireError::invalid("error", "must be at most 4096 bytes");
            }
        }
        if self.flows.len() > MAX_AGENT_FLOWS {
            return WireError::invalid("flows", "at most 4096 a step");
        }
        for (_, f) in &self.flows {
            if f.interval_bits_per_second.len() > MAX_FLOW_INTERVALS {
                return WireError::invalid("interval_bits_per_second", "too many intervals");
            }
            f.validate().map_err(WireError::Flow)?;
            for text in [&f.verdict, &f.error].into_iter().flatten() {
                if text.len() > 4096 {
                    return WireError::invalid("verdict", "must be at most 4096 bytes");
                }
            }
        }
        Ok(())
    }
}
