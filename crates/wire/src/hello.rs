//! The fixed-size greeting that opens every connection.

use crate::WireError;
use crate::codec::{Reader, codes};

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
    /// Runs benches.
    pub const BENCH: u64 = 1 << 0;
    /// Reports TCP_INFO.
    pub const TCP_INFO: u64 = 1 << 1;
    /// Receives with MSG_TRUNC (no copy to user space).
    pub const MSG_TRUNC: u64 = 1 << 2;
    /// Sends with MSG_ZEROCOPY.
    pub const ZEROCOPY: u64 = 1 << 3;
    /// In a hello: a TLS handshake follows, and everything after it on
    /// this connection is encrypted.
    pub const TLS: u64 = 1 << 4;

    /// Whether capability `bit` is announced.
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
    /// The id as 32 hex digits.
    pub fn to_hex(self) -> String {
        hex::encode(self.0)
    }

    /// Parses 32 hex digits.
    pub fn from_hex(s: &str) -> Option<SessionId> {
        let mut out = [0u8; 16];
        hex::decode_to_slice(s, &mut out).ok()?;
        Some(SessionId(out))
    }
}

impl std::fmt::Display for SessionId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_hex()[..12])
    }
}

codes! {
    /// What a connection carries.
    pub enum Role: u8, unknown = WireError::UnknownRole {
        /// Carries framed messages for one session.
        Control = 1,
        /// Carries the payload of one stream of an existing session.
        Data = 2,
    }
}

codes! {
    /// What a session does.
    pub enum SessionKind: u8, unknown = WireError::UnknownKind {
        /// Memory to memory streams (`bench`).
        Bench = 1,
        /// Files (`send` to `serve` or `recv`).
        Transfer = 2,
        /// Round trips (`latency`).
        Latency = 3,
        /// A many-host run's agent, joining its coordinator.
        Agent = 4,
    }
}

impl SessionKind {
    /// The kind's name, for logs and errors.
    pub fn name(self) -> &'static str {
        match self {
            SessionKind::Bench => "bench",
            SessionKind::Transfer => "transfer",
            SessionKind::Latency => "latency",
            SessionKind::Agent => "agent",
        }
    }
}

/// The greeting: `magic[4] version[2] reserved[2] capabilities[8] session[16]
/// role[1] kind[1] stream_index[2]`, all integers big-endian.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// The protocol version the sender speaks.
    pub version: u16,
    /// What the sender offers.
    pub capabilities: Capabilities,
    /// The session the connection belongs to.
    pub session: SessionId,
    /// Control or data.
    pub role: Role,
    /// The session's kind.
    pub kind: SessionKind,
    /// The data connection's index in its session (0 on a control connection).
    pub stream_index: u16,
}

impl Hello {
    /// Whether a TLS handshake follows this hello.
    pub fn tls(&self) -> bool {
        self.capabilities.has(Capabilities::TLS)
    }

    /// This hello, saying whether a TLS handshake follows.
    pub fn with_tls(mut self, on: bool) -> Hello {
        if on {
            self.capabilities.0 |= Capabilities::TLS;
        } else {
            self.capabilities.0 &= !Capabilities::TLS;
        }
        self
    }

    /// A hello of this protocol version with this build's capabilities.
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

    /// The hello's bytes.
    pub fn encode(&self) -> [u8; HELLO_LEN] {
        let mut out = [0u8; HELLO_LEN];
        out[0..4].copy_from_slice(&MAGIC);
        out[4..6].copy_from_slice(&self.version.to_be_bytes());
        out[8..16].copy_from_slice(&self.capabilities.0.to_be_bytes());
        out[16..32].copy_from_slice(&self.session.0);
        out[32] = self.role.code();
        out[33] = self.kind.code();
        out[34..36].copy_from_slice(&self.stream_index.to_be_bytes());
        out
    }

    /// Decodes a greeting. The magic is checked first, so that a stray client
    /// is told apart from a peer of another version with as few bytes as possible.
    pub fn decode(buf: &[u8]) -> Result<Hello, WireError> {
        if let Some(magic) = buf.first_chunk::<4>()
            && *magic != MAGIC
        {
            return Err(WireError::BadMagic(*magic));
        }
        if buf.len() < HELLO_LEN {
            return Err(WireError::TruncatedHello {
                got: buf.len(),
                need: HELLO_LEN,
            });
        }
        let mut r = Reader::new("hello", &buf[..HELLO_LEN]);
        r.take(MAGIC.len())?;
        let version = r.u16()?;
        if version != PROTOCOL_VERSION {
            return Err(WireError::UnsupportedVersion {
                theirs: version,
                ours: PROTOCOL_VERSION,
            });
        }
        let reserved = r.u16()?;
        if reserved != 0 {
            return Err(WireError::Reserved(u32::from(reserved)));
        }
        let capabilities = Capabilities(r.u64()?);
        let session = SessionId(r.array()?);
        let role = Role::from_code(r.u8()?)?;
        let kind = SessionKind::from_code(r.u8()?)?;
        let stream_index = r.u16()?;
        r.finish()?;
        Ok(Hello {
            version,
            capabilities,
            session,
            role,
            kind,
            stream_index,
        })
    }
}
