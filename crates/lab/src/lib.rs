//! Namespace testbeds on one Linux machine: hosts, an optional router, and
//! WAN conditions (delay, jitter, loss, reordering, duplication, rate) made
//! by tc/netem where the kernel has it and by a user-space emulator where it
//! does not. Everything a lab creates is recorded on disk so it can always
//! be taken down, also after a crash.

pub mod conditions;
pub mod detect;
pub mod emulator;
mod exec;
pub mod lab;
pub mod layout;
pub mod netns;
pub mod state;
mod topology;

use std::path::{Path, PathBuf};

pub use conditions::{Backend, BackendChoice, Conditions};
pub use layout::{Lab, LabSpec};

#[derive(Debug, thiserror::Error)]
pub enum LabError {
    #[error("{0}")]
    Missing(String),
    #[error("{context}: {error}")]
    Io {
        context: String,
        error: std::io::Error,
    },
    #[error("`{command}` failed: {stderr}")]
    Command { command: String, stderr: String },
    #[error("{0}")]
    Spec(String),
    #[error("{0}: unreadable lab state: {1}")]
    Corrupt(PathBuf, String),
    #[error("no lab named {0} is up (see `linerate lab status`)")]
    NotFound(String),
    #[error("emulator: {0}")]
    Emulator(String),
    #[error("a lock was poisoned by a panicking thread")]
    Poisoned,
    #[error("{0} panicked")]
    Panicked(String),
}

impl LabError {
    pub fn io(path: &Path, error: std::io::Error) -> LabError {
        LabError::Io {
            context: path.display().to_string(),
            error,
        }
    }

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
