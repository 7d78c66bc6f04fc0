use linerate_wire::{Refusal, WireError};
use thiserror::Error;

#[derive(Debug, Error)]
pub enum EngineError {
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: std::io::Error,
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
}

impl EngineError {
    pub fn io(context: impl Into<String>, source: std::io::Error) -> Self {
        EngineError::Io {
            context: context.into(),
            source,
        }
    }
}

pub type Result<T> = std::result::Result<T, EngineError>;
