//! Namespace testbeds on one Linux machine: hosts, an optional router,
//! parallel links and bonds, a switched fabric, and WAN conditions (delay,
//! jitter, loss, reordering, duplication, rate) made by tc/netem where the
//! kernel has it and by `linerate-emulator` where it does not; a fabric's
//! switches as kernel namespaces with HTB classes where the kernel can.
//! Everything a lab creates is recorded on disk so it can always be taken
//! down, also after a crash.
#![warn(missing_docs)]

pub mod backend;
pub mod conditions;
pub mod detect;
mod exec;
mod ipcmd;
mod kernel_fabric;
pub mod lifecycle;
pub mod links;
pub mod netns;
pub mod spec;
pub mod state;
mod topology;

use std::path::{Path, PathBuf};

pub use conditions::{Backend, BackendChoice, Conditions};
pub use spec::{Lab, LabSpec};

/// Why a lab could not be built, changed, entered or taken down.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LabError {
    /// The machine lacks what a lab needs (root, a tool, a kernel feature).
    #[error("{0}")]
    Missing(String),
    /// A file or a system call failed.
    #[error("{context}: {error}")]
    Io {
        /// What was being done.
        context: String,
        /// The error the system gave.
        error: std::io::Error,
    },
    /// An `ip` or `tc` command failed.
    #[error("`{command}` failed: {stderr}")]
    Command {
        /// The command as run.
        command: String,
        /// What it wrote to stderr.
        stderr: String,
    },
    /// A lab's spec or conditions that cannot be built.
    #[error("{0}")]
    Spec(String),
    /// A lab's state on disk that does not read back.
    #[error("{0}: unreadable lab state: {1}")]
    Corrupt(PathBuf, String),
    /// No lab of that name is up.
    #[error("no lab named {0} is up (see `linerate lab status`)")]
    NotFound(String),
    /// The user-space emulator's process failed to start or left.
    #[error("emulator: {0}")]
    Emulator(String),
    /// The user-space emulator failed while forwarding.
    #[error(transparent)]
    Forwarding(#[from] linerate_emulator::EmulatorError),
    /// A lock was poisoned by a panicking thread.
    #[error("a lock was poisoned by a panicking thread")]
    Poisoned,
    /// A thread working in a namespace panicked.
    #[error("{0} panicked")]
    Panicked(String),
}

impl LabError {
    /// An I/O error at `path`.
    pub fn io(path: &Path, error: std::io::Error) -> LabError {
        LabError::Io {
            context: path.display().to_string(),
            error,
        }
    }

    /// The error, its context prefixed with `what`.
    pub fn context(self, what: String) -> LabError {
        match self {
            LabError::Io { context, error } => LabError::Io {
                context: format!("{what}: {context}"),
                error,
            },
            other => other,
        }
    }
}
