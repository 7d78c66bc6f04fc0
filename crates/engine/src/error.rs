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
    /// Not a `source` either, for the same reason as `Io`.
    #[error("protocol error: {0}")]
    Wire(WireError),
    #[error("refused by the peer ({}): {}", .0.code.words(), .0.message)]
    Refused(Refusal),
    /// The user ended the run (Ctrl-C); what arrived is kept for a rerun.
    #[error("interrupted")]
    Interrupted,
    /// What answered is not a linerate server; says what it looks like.
    #[error("{0}")]
    NotLinerate(String),
    #[error("timed out {0}")]
    Timeout(String),
    #[error("peer closed the connection {0}")]
    PeerClosed(String),
    #[error("{0}")]
    Failed(String),
    /// The peer sent a message out of its session's order.
    #[error("protocol error: {0}")]
    Session(linerate_session::SessionError),
    /// The TLS handshake failed: a certificate that is not the one the
    /// client was told of, or a peer that does not speak TLS.
    #[error("TLS handshake {0}")]
    Tls(String),
    #[error("no session began within {} s", .0.as_secs_f64())]
    NoSession(std::time::Duration),
}

impl From<WireError> for EngineError {
    fn from(e: WireError) -> Self {
        EngineError::Wire(e)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::error::Error as _;

    /// A report that walks the source chain (anyhow's `{:#}`) names each
    /// cause once: the message already carries the inner error.
    #[test]
    fn the_inner_error_is_in_the_message_not_in_the_chain() {
        let e = EngineError::from(WireError::UnknownRole(9));
        assert_eq!(e.to_string(), "protocol error: unknown connection role 9");
        assert!(e.source().is_none());
        let io = EngineError::io("binding", std::io::Error::other("taken"));
        assert_eq!(io.to_string(), "binding: taken");
        assert!(io.source().is_none());
    }
}
