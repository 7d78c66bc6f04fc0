//! The message order of a many-host run, as sans-IO machines built on
//! `linerate_session`'s kit: an [`agent`]'s and the [`coordinator`]'s,
//! which drives every agent's connection at once; [`job_step`] is what a
//! proxy-application step asks of each rank and how their reports merge.

pub mod agent;
pub mod coordinator;
pub mod job_step;

pub use agent::Agent;
pub use coordinator::Coordinator;

/// Why a flow or a job's rank cannot run in this step: the text goes into
/// the result as its error.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Unrunnable {
    /// A rank it needs failed (with what it said).
    #[error("rank {rank} failed: {why}")]
    Failed {
        /// The rank.
        rank: u32,
        /// Its failure, as it reported it.
        why: String,
    },
    /// A rank it needs has no address to reach it at.
    #[error("rank {0} has no address")]
    NoAddress(u32),
    /// A rank it needs has no job port.
    #[error("rank {0} has no job port")]
    NoJobPort(u32),
    /// One of its peers cannot run.
    #[error("its peer {0}")]
    Peer(Box<Unrunnable>),
}

#[cfg(test)]
mod tests;
