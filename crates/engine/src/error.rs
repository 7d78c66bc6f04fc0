use linerate_wire::{Refusal, WireError};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum EngineError {
    /// The OS error is part of the message, not a separate source, so a
    /// report of the error chain does not say it twice.
    #[error("{context}: {error}")]
    Io {
        context: String,
        error: std::io::Error,
    },
    #[error("protocol error: {0}")]
    Wire(#[from] WireError),
    #[error("refused by peer ({:?}): {}", .0.code, .0.message)]
    Refused(Refusal),
    #[error("timed out {0}")]
    Timeout(String),
    #[error("peer closed the connection {0}")]
    PeerClosed(String),
    #[error("{0}")]
    Failed(String),
    #[error("no session began within {} s", .0.as_secs_f64())]
    NoSession(std::time::Duration),
}

impl EngineError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        EngineError::Io {
            context: context.into(),
            error: source,
        }
    }
}

pub type Result<T> = std::result::Result<T, EngineError>;
