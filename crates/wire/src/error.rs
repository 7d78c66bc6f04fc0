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
    #[error("malformed {what} message: {flaw}")]
    Malformed {
        /// Which message.
        what: &'static str,
        /// What is wrong with it.
        flaw: Flaw,
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
        reason: &'static str,
    },
    /// An entry announced over the largest file a receiver takes.
    #[error(
        "invalid size: {size} is over the largest file, {}",
        crate::transfer::MAX_FILE_SIZE
    )]
    FileTooLarge {
        /// The size announced.
        size: u64,
    },
    /// A field decoded but its value is outside the range the session allows.
    #[error("invalid {field}: {value} is outside {}..={}", .range.start(), .range.end())]
    OutOfRange {
        /// The field's name.
        field: &'static str,
        /// Its value.
        value: u64,
        /// What the session allows.
        range: std::ops::RangeInclusive<u64>,
    },
}

/// What is wrong with a message that does not decode.
#[derive(Debug, Error, Clone, PartialEq)]
#[non_exhaustive]
pub enum Flaw {
    /// Fewer bytes than it needs.
    #[error("needs {need} more bytes, has {has}")]
    Short {
        /// Bytes it needs.
        need: usize,
        /// Bytes there are.
        has: usize,
    },
    /// Not the one length it has.
    #[error("{got} bytes, not {want}")]
    Length {
        /// Bytes there are.
        got: usize,
        /// Bytes it has.
        want: usize,
    },
    /// Bytes after its end.
    #[error("{0} unexpected trailing bytes")]
    Trailing(usize),
    /// It does not open with its magic.
    #[error("it does not open with its magic")]
    NoMagic,
    /// A tag byte that names nothing.
    #[error("unknown tag {0}")]
    UnknownTag(u8),
    /// Reserved bytes that are not zero.
    #[error("reserved bytes set")]
    Reserved,
    /// More of something than any session has.
    #[error("{count} {what}, more than any session has")]
    TooMany {
        /// How many there are.
        count: usize,
        /// Of what.
        what: &'static str,
    },
    /// A size outside its bounds.
    #[error("{what} of {value} bytes, outside {least} B to {most} B")]
    Size {
        /// Which size.
        what: &'static str,
        /// Its value.
        value: u64,
        /// The least allowed.
        least: u64,
        /// The most allowed.
        most: u64,
    },
    /// A latency run's window that its pattern does not allow.
    #[error("window of {window} for {pattern}")]
    Window {
        /// The window asked for.
        window: u32,
        /// The pattern's name.
        pattern: &'static str,
    },
    /// A latency run of no rounds.
    #[error("a run of no rounds")]
    NoRounds,
    /// JSON that does not decode.
    #[error("{0}")]
    Json(JsonError),
}

/// serde_json's error, shared so that a [`WireError`] stays `Clone` and
/// comparable (by its text) in tests.
#[derive(Debug, Clone)]
pub struct JsonError(pub std::sync::Arc<serde_json::Error>);

impl PartialEq for JsonError {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_string() == other.0.to_string()
    }
}

impl std::fmt::Display for JsonError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl WireError {
    /// A decoded value that is out of its allowed range, as an `Err`.
    pub(crate) fn invalid<T>(field: &'static str, reason: &'static str) -> Result<T, WireError> {
        Err(WireError::InvalidField { field, reason })
    }
}
