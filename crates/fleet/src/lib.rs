//! Many-host runs without I/O: where their ranks are, as the launcher that
//! started them says, and what each rank runs ([`plan`]: incast sweeps,
//! all-pairs meshes, Jain's fairness index). The launchers are Slurm
//! (`srun`), Open MPI or MPICH (`mpirun`), or a host list given for ssh:
//! linerate links no MPI library and runs no cluster manager of its own.
//! Each rank reads its launcher's environment ([`Launch`]), and rank 0
//! coordinates. [`hostlist`] expands Slurm's compressed host lists
//! (`node[01-04,07]`); [`clock`] estimates each agent's clock offset, so
//! every flow of a step starts at one agreed time. The environment comes in
//! as a lookup.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod clock;
pub mod hostlist;
pub mod job;
pub mod launch;
pub mod plan;

pub use launch::{Launch, Launcher};

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
