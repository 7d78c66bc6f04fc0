use thiserror::Error;

/// Everything that can be wrong with bytes received from a peer.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum WireError {
    /// The peer's first bytes are not linerate's magic.
    #[error("not a linerate peer: bad magic {0:02x?}")]
    BadMagic([u8; 4]),
    /// The peer speaks another protocol version.
    #[error("protocol version {theirs} is not supported (this side speaks {ours})")]
    UnsupportedVersion {
        /// The peer's.
        theirs: u16,
        /// This side's.
        ours: u16,
    },
    /// A hello's role byte is no known role.
    #[error("unknown connection role {0}")]
    UnknownRole(u8),
    /// A hello's kind byte is no known session kind.
    #[error("unknown session kind {0}")]
    UnknownKind(u8),
    /// A reserved field is not zero.
    #[error("reserved field is {0:#x}, expected 0")]
    Reserved(u32),
    /// The connection ended inside the hello.
    #[error("handshake truncated: {got} of {need} bytes")]
    TruncatedHello {
        /// Bytes that arrived.
        got: usize,
        /// Bytes a hello has.
        need: usize,
    },
    /// A frame's length is over the limit.
    #[error("frame length {len} exceeds the limit of {max} bytes")]
    FrameTooLong {
        /// The length the frame declared.
        len: u32,
        /// The limit.
        max: u32,
    },
    /// A frame's type byte is no known message.
    #[error("unknown frame type {0}")]
    UnknownFrameType(u8),
    /// A message's payload does not decode.
    #[error("malformed {what} message: {reason}")]
    Malformed {
        /// Which message.
        what: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A side's report whose figures no measurement makes.
    #[error("malformed {what} message: {error}")]
    Report {
        /// Which message.
        what: &'static str,
        /// What is wrong with it.
        error: linerate_result::InvalidReport,
    },
    /// An agent's flow whose figures no measurement makes.
    #[error("malformed agent report message: {0}")]
    Flow(linerate_result::fleet::Implausible),
    /// A field decoded but is out of its allowed range.
    #[error("invalid {field}: {reason}")]
    InvalidField {
        /// The field's name.
        field: &'static str,
        /// Its allowed range, in words.
        reason: String,
    },
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
