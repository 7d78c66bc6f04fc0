//! Host network tuning: read what decides a host's TCP throughput (sysctls,
//! NIC rings, offloads, qdisc, IRQ placement, CPU governor), plan values
//! from a target rate and RTT, and apply and revert them with the previous
//! values saved on disk.
//!
//! Everything is read through a [`SysRoot`], so the same code audits this
//! machine, a fixture tree captured from it, or a hand-written one.

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

#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    #[error("{context}: {error}")]
    Io {
        context: String,
        error: std::io::Error,
    },
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {reason}")]
    State { path: String, reason: String },
    #[error("{0}")]
    Apply(String),
}

pub(crate) fn io_err(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> TuneError {
    let context = context.into();
    move |error| TuneError::Io { context, error }
}
