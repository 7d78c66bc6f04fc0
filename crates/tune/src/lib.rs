//! Host network tuning: read what decides a host's TCP throughput (sysctls,
//! NIC rings, offloads, qdisc, IRQ placement, CPU governor), plan values
//! from a target rate and RTT, and apply and revert them with the previous
//! values saved on disk.
//!
//! Everything is read through a [`SysRoot`], so the same code audits this
//! machine, a fixture tree captured from it, or a hand-written one.
#![warn(missing_docs)]

pub mod apply;
pub mod audit;
pub mod bounds;
pub mod ethtool;
pub mod facts;
pub mod netlink;
pub mod plan;
pub mod source;

pub use audit::{Finding, Severity};
pub use facts::Facts;
pub use plan::{Plan, Target};
pub use source::SysRoot;

/// Why the host could not be read, a plan made, or settings applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TuneError {
    /// A file under the system root could not be read or written.
    #[error("{context}: {error}")]
    Io {
        /// What was being read or written.
        context: String,
        /// The error the system gave.
        error: std::io::Error,
    },
    /// A plan, profile or value that cannot be used.
    #[error("{0}")]
    Invalid(String),
    /// The saved state of an apply, unreadable or not this format.
    #[error("{path}: {reason}")]
    State {
        /// The state file.
        path: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A setting the kernel refused.
    #[error("{0}")]
    Apply(String),
}

pub(crate) fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> TuneError {
    let context = context.into();
    move |error| TuneError::Io { context, error }
}
