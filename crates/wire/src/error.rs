use thiserror::Error;

/// Everything that can be wrong with bytes received from a peer.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum WireError {
    #[error("not a linerate peer: bad magic {0:02x?}")]
    BadMagic([u8; 4]),
    #[error("protocol version {theirs} is not supported (this side speaks {ours})")]
    UnsupportedVersion { theirs: u16, ours: u16 },
    #[error("unknown connection role {0}")]
    UnknownRole(u8),
    #[error("unknown session kind {0}")]
    UnknownKind(u8),
    #[error("reserved field is {0:#x}, expected 0")]
    Reserved(u32),
    #[error("handshake truncated: {got} of {need} bytes")]
    TruncatedHello { got: usize, need: usize },
    #[error("frame length {len} exceeds the limit of {max} bytes")]
    FrameTooLong { len: u32, max: u32 },
    #[error("unknown frame type {0}")]
    UnknownFrameType(u8),
    #[error("malformed {what} message: {reason}")]
    Malformed { what: &'static str, reason: String },
    #[error("invalid {field}: {reason}")]
    InvalidField { field: &'static str, reason: String },
}

impl WireError {
    /// A decoded value that is out of its allowed range, as an `Err`.
    pub(crate) fn invalid<T>(field: &'static str, reason: &str) -> Result<T, WireError> {
        Err(WireError::InvalidField {
            field,
            reason: reason.to_string(),
        })
    }
}
