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

use std::path::PathBuf;

/// Why the host could not be read, a plan made, or settings applied.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TuneError {
    /// A file under the system root could not be read or written.
    #[error("{doing} {}: {error}", .path.display())]
    Io {
        /// What was being done.
        doing: &'static str,
        /// To which file.
        path: PathBuf,
        /// The error the system gave.
        error: std::io::Error,
    },
    /// A key that is not a sysctl's name (the key as given).
    #[error("{0:?} is not a sysctl name")]
    NotASysctl(String),
    /// A revert in a scope where nothing was applied.
    #[error("{}: nothing applied in this scope (no saved state)", .0.display())]
    NothingApplied(PathBuf),
    /// An apply in a scope where settings are applied already.
    #[error(
        "{}: settings are already applied in this scope; run `linerate tune revert` first",
        .0.display()
    )]
    AlreadyApplied(PathBuf),
    /// The saved state of an apply that is not this format.
    #[error("{}: unreadable state: {error}", .path.display())]
    StateCorrupt {
        /// The state file.
        path: PathBuf,
        /// Why it does not parse.
        error: serde_json::Error,
    },
    /// A state that could not be written as JSON (a bug).
    #[error("writing the state as JSON: {0}")]
    Unwritable(serde_json::Error),
    /// A value the kernel did not keep.
    #[error("{key}: wrote {wrote:?} but the kernel reports {now:?}")]
    NotKept {
        /// The sysctl.
        key: String,
        /// The value written.
        wrote: String,
        /// The value the kernel reports.
        now: String,
    },
    /// An apply that failed and was undone.
    #[error("{error}; the {restored} settings changed before it were restored")]
    Undone {
        /// Why it failed.
        error: Box<TuneError>,
        /// Settings changed and restored.
        restored: usize,
    },
    /// An apply that failed and could not be undone in full.
    #[error(
        "{error}; {stuck} settings could not be restored either and are kept in {} for `tune \
         revert`",
        .state.display()
    )]
    Stuck {
        /// Why it failed.
        error: Box<TuneError>,
        /// Settings that could not be restored.
        stuck: usize,
        /// The state file that keeps them.
        state: PathBuf,
    },
    /// A revert that could not restore every setting.
    #[error(
        "could not restore: {}; the rest are kept in {}",
        .errors.iter().map(ToString::to_string).collect::<Vec<_>>().join("; "),
        .state.display()
    )]
    NotRestored {
        /// Why each failed.
        errors: Vec<TuneError>,
        /// The state file that keeps them.
        state: PathBuf,
    },
}

pub(crate) fn io_err(
    doing: &'static str,
    path: &std::path::Path,
) -> impl FnOnce(std::io::Error) -> TuneError {
    let path = path.to_path_buf();
    move |error| TuneError::Io { doing, path, error }
}
