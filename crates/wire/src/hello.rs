//! The fixed-size greeting that opens every connection.

use crate::WireError;

/// First four bytes of every linerate connection.
pub const MAGIC: [u8; 4] = *b"LNRT";
/// The protocol version this build speaks. 2: a transfer's streams start
/// before its manifest, which then goes out frame by frame, each answered.
pub const PROTOCOL_VERSION: u16 = 2;
/// Encoded size of a [`Hello`].
pub const HELLO_LEN: usize = 36;

/// Capability bits a peer announces; unknown bits are ignored, so new features
/// can be offered without a version bump.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Capabilities(pub u64);

impl Capabilities {
    pub const BENCH: u64 = 1 << 0;
    pub const TCP_INFO: u64 = 1 << 1;
    pub const MSG_TRUNC: u64 = 1 << 2;
    pub const ZEROCOPY: u64 = 1 << 3;

    pub fn has(self, bit: u64) -> bool {
        self.0 & bit == bit
    }
}

/// What this build offers.
pub const CAPABILITIES: Capabilities = Capabilities(
    Capabilities::BENCH | Capabilities::TCP_INFO | Capabilities::MSG_TRUNC | Capabilities::ZEROCOPY,
);

/// Random 128-bit identifier that ties a session's connections together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SessionId(pub [u8; 16]);

impl SessionId {
    pub fn to_hex(self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }

    /// Parses 32 hex digits.
    pub fn from_hex(s: &str) -> Option<SessionId> {
        if s.len() != 32 || !s.is_ascii() {
            return None;
        }
        let mut out = [0u8; 16];
        for (i, o) in out.iter_mut().enumerate() {
            *o = u8::from_str_radix(s.get(2 * i..2 * i + 2)?, 16).ok()?;
        }
        Some(SessionId(out))
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex()[..12])
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Carries framed messages for one session.
    Control,
    /// Carries the payload of one stream of an existing session.
    Data,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionKind {
    Bench,
    Transfer,
    Latency,
}

impl SessionKind {
    pub fn name(self) -> &'static str {
        match self {
            SessionKind::Bench => "bench",
            SessionKind::Transfer => "transfer",
            SessionKind::Latency => "latency",
        }
    }
}

/// The greeting: `magic[4] version[2] reserved[2] capabilities[8] session[16]
/// role[1] kind[1] stream_index[2]`, all integers big-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    pub version: u16,
    pub capabilities: Capabilities,
    pub session: SessionId,
    pub role: Role,
    pub kind: SessionKind,
    pub stream_index: u16,
}

impl Hello {
    pub fn new(session: SessionId, role: Role, kind: SessionKind, stream_index: u16) -> Self {
        Hello {
            version: PROTOCOL_VERSION,
            capabilities: CAPABILITIES,
            session,
            role,
            kind,
            stream_index,
        }
    }

    pub fn encode(&self) -> [u8; HELLO_LEN] {
        let mut out = [0u8; HELLO_LEN];
        out[0..4].copy_from_slice(&MAGIC);
        out[4..6].copy_from_slice(&self.version.to_be_bytes());
        out[8..16].copy_from_slice(&self.capabilities.0.to_be_bytes());
        out[16..32].copy_from_slice(&self.session.0);
        out[32] = match self.role {
            Role::Control => 1,
            Role::Data => 2,
        };
        out[33] = match self.kind {
            SessionKind::Bench => 1,
            SessionKind::Transfer => 2,
            SessionKind::Latency => 3,
        };
        out[34..36].copy_from_slice(&self.stream_index.to_be_bytes());
        out
    }

    /// Decodes a greeting. The magic is checked first, so that a stray client
    /// is told apart from a peer of another version with as few bytes as possible.
    pub fn decode(buf: &[u8]) -> Result<Hello, WireError> {
        if buf.len() >= 4 && buf[0..4] != MAGIC {
            return Err(WireError::BadMagic([buf[0], buf[1], buf[2], buf[3]]));
        }
        if buf.len() < HELLO_LEN {
            return Err(WireError::TruncatedHello {
                got: buf.len(),
                need: HELLO_LEN,
            });
        }
        let version = u16::from_be_bytes([buf[4], buf[5]]);
        if version != PROTOCOL_VERSION {
            return Err(WireError::UnsupportedVersion {
                theirs: version,
                ours: PROTOCOL_VERSION,
            });
        }
        let reserved = u16::from_be_bytes([buf[6], buf[7]]);
        if reserved != 0 {
            return Err(WireError::Reserved(u32::from(reserved)));
        }
        let mut caps = [0u8; 8];
        caps.copy_from_slice(&buf[8..16]);
        let mut session = [0u8; 16];
        session.copy_from_slice(&buf[16..32]);
        let role = match buf[32] {
            1 => Role::Control,
            2 => Role::Data,
            other => return Err(WireError::UnknownRole(other)),
        };
        let kind = match buf[33] {
            1 => SessionKind::Bench,
            2 => SessionKind::Transfer,
            3 => SessionKind::Latency,
            other => return Err(WireError::UnknownKind(other)),
        };
        Ok(Hello {
            version,
            capabilities: Capabilities(u64::from_be_bytes(caps)),
            session: SessionId(session),
            role,
            kind,
            stream_index: u16::from_be_bytes([buf[34], buf[35]]),
        })
    }
}
