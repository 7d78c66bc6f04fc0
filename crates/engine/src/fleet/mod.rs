//! Many-host runs: the agent that runs on every host ([`agent`]) and the
//! coordinator that plans, starts and collects them ([`coordinator`]),
//! driving the state machines of `linerate_session::{agent, coordinator}`.
//! Agents connect to the coordinator (so a launcher only has to tell them
//! where it is); each agent runs a bench server its peers' flows go to,
//! and runs its own flows as bench sessions.

pub mod agent;
pub mod coordinator;
pub mod job;

use std::time::SystemTime;

/// The wall clock, in ns since the Unix epoch.
pub(crate) fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}
