//! Many-host runs, all of them: where the ranks are, as the launcher that
//! started them says ([`launch`], [`hostlist`]), or agents this process
//! starts itself ([`agents`]); what each rank runs ([`plan`]: incast sweeps,
//! all-pairs meshes; [`job`]: a proxy application's exchanges); the message
//! order of an agent and of the coordinator ([`session`], sans-IO); the
//! agent that runs on every host ([`agent`]), one proxy-application rank
//! ([`rank`]), the coordinator that starts every step at one agreed time
//! ([`clock`], [`coordinator`]) and the run's one document ([`document`]);
//! [`run`] takes a run from its launch to its outcome.
//! linerate links no MPI library and runs no cluster manager of its own.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
pub mod agents;
pub mod clock;
pub mod coordinator;
pub mod document;
pub mod hostlist;
pub mod job;
pub mod launch;
pub mod plan;
pub mod rank;
pub mod run;
pub mod session;

pub use launch::{Launch, Launcher};

use std::time::SystemTime;

/// The wall clock, in ns since the Unix epoch.
pub(crate) fn wall_ns() -> u64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// A launcher's description of the run that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FleetError {
    /// A host list (Slurm's compressed form or `--hosts`) that does not expand.
    #[error("host list {list:?}: {reason}")]
    HostList {
        /// The list as given.
        list: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A launcher's variable whose value is not what it must be.
    #[error("{variable}={value:?}: {reason}")]
    Environment {
        /// The variable's name.
        variable: &'static str,
        /// Its value.
        value: String,
        /// What is wrong with it.
        reason: String,
    },
}
