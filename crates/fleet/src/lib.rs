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
    #[error("host list {list:?}: {flaw}")]
    HostList {
        /// The list as given.
        list: String,
        /// What is wrong with it.
        flaw: HostListFlaw,
    },
    /// A launcher's variable whose value is not a count below the most ranks.
    #[error("{variable}={value:?}: not a count below {}", launch::MAX_RANKS)]
    NotACount {
        /// The variable's name.
        variable: &'static str,
        /// Its value, as set.
        value: String,
    },
    /// A launcher's rank variable at or past its size.
    #[error("{variable}={rank}: not a rank of {size_variable}={size}")]
    NotARank {
        /// The rank variable's name.
        variable: &'static str,
        /// Its value.
        rank: u32,
        /// The size variable's name.
        size_variable: &'static str,
        /// Its value.
        size: u32,
    },
}

/// What is wrong with a host list.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HostListFlaw {
    /// An opening bracket never closed.
    #[error("a '[' without its ']'")]
    Unclosed,
    /// A closing bracket never opened.
    #[error("a ']' without its '['")]
    Unopened,
    /// Brackets inside brackets.
    #[error("brackets inside brackets")]
    Nested,
    /// A space inside brackets.
    #[error("a space inside brackets")]
    Space,
    /// No host at all.
    #[error("no host")]
    Empty,
    /// More hosts than a run takes.
    #[error("more than {} hosts", hostlist::MAX_HOSTS)]
    TooMany,
    /// A bracket's part that is not a number or a range (the part as given).
    #[error("{0:?} is not a number or a range of numbers")]
    NotANumber(String),
    /// A range whose end is below its start (the part as given).
    #[error("the range {0:?} runs backwards")]
    Backwards(String),
}
