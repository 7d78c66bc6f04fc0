//! Typed control messages. Payloads are JSON inside bounded frames: easy to
//! extend without a version bump, and every field is checked by `validate`
//! after decoding, so a well-formed but hostile value is refused too.

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::transfer::{Digests, Entries, Need, NeedEnd, TransferRequest, TransferTotals};
use crate::{Frame, FrameType, WireError};
use linerate_result::{HostFacts, SideReport};

/// Most streams one session may open.
pub const MAX_STREAMS: u16 = 1024;
const MAX_WRITE_LEN: u32 = 256 << 20;
const MAX_DURATION_MS: u64 = 7 * 24 * 3600 * 1000;

/// Server's answer to a good hello.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Accept {
    pub server_version: String,
    pub capabilities: u64,
    pub host: HostFacts,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    Malformed,
    UnsupportedVersion,
    UnknownSession,
    InvalidParameters,
    Busy,
    Internal,
}

/// Why a server or client gives up on a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    pub code: RefusalCode,
    pub message: String,
}

/// Which way payload flows, seen from the client.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Direction {
    /// Client sends, server receives.
    #[default]
    Forward,
    /// Server sends, client receives.
    Reverse,
    /// Both at once, on separate connections.
    Bidir,
}

/// What a bench session does; the client proposes, the server checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchParams {
    pub streams: u16,
    /// Run length; ignored when `bytes` is set.
    pub duration_ms: u64,
    /// Total payload to send in each direction, split evenly across streams.
    pub bytes: Option<u64>,
    pub write_len: u32,
    pub read_len: u32,
    pub direction: Direction,
    pub interval_ms: u64,
    pub omit_ms: u64,
    pub sndbuf: Option<u32>,
    pub rcvbuf: Option<u32>,
    pub congestion: Option<String>,
    /// SO_MAX_PACING_RATE, bytes per second, per stream.
    pub pacing_rate: Option<u64>,
    pub mss: Option<u32>,
    pub tos: Option<u8>,
    pub zerocopy: bool,
    pub skip_rx_copy: bool,
    /// Receivers poll before blocking (decided by the client from both hosts' CPUs).
    #[serde(default)]
    pub rx_poll: bool,
    /// Both ends share one host: stream threads get a core each, the client's
    /// on even and the server's on odd CPUs, so a polling receiver is never
    /// pulled onto its sender's core.
    #[serde(default)]
    pub pin_cores: bool,
    /// Both ends of stream i run on CPU i: one core's cache holds the stream.
    #[serde(default)]
    pub pin_pairs: bool,
    /// SO_RCVLOWAT at the receivers: wake the reader only for this many bytes.
    #[serde(default)]
    pub rcvlowat: Option<u32>,
}

impl BenchParams {
    /// Number of TCP connections the session opens.
    pub fn connections(&self) -> u16 {
        match self.direction {
            Direction::Bidir => self.streams.saturating_mul(2),
            _ => self.streams,
        }
    }

    /// Whether connection `index` carries client-to-server payload.
    pub fn is_forward(&self, index: u16) -> bool {
        match self.direction {
            Direction::Forward => true,
            Direction::Reverse => false,
            Direction::Bidir => index < self.streams,
        }
    }

    pub fn validate(&self) -> Result<(), WireError> {
        let bad = WireError::invalid;
        if self.streams == 0 || self.streams > MAX_STREAMS {
            return bad("streams", "must be between 1 and 1024");
        }
        if self.bytes.is_none() && (self.duration_ms == 0 || self.duration_ms > MAX_DURATION_MS) {
            return bad("duration_ms", "must be between 1 ms and 7 days");
        }
        if self.bytes == Some(0) {
            return bad("bytes", "must be positive");
        }
        for (field, len) in [("write_len", self.write_len), ("read_len", self.read_len)] {
            if len == 0 || len > MAX_WRITE_LEN {
                return bad(field, "must be between 1 byte and 256 MiB");
            }
        }
        if self.interval_ms != 0 && self.interval_ms < 10 {
            return bad("interval_ms", "must be 0 (off) or at least 10 ms");
        }
        if self.bytes.is_none() && self.omit_ms >= self.duration_ms {
            return bad("omit_ms", "must be shorter than the run");
        }
        if let Some(cc) = &self.congestion
            && (cc.is_empty()
                || cc.len() > 15
                || !cc.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_'))
        {
            return bad("congestion", "must be a kernel congestion control name");
        }
        if let Some(mss) = self.mss
            && !(88..=65535).contains(&mss)
        {
            return bad("mss", "must be between 88 and 65535");
        }
        Ok(())
    }
}

/// The server has registered the session and waits for its data connections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Ready {}

/// The server's half of a session's measurements.
pub type PeerReport = SideReport;

/// Every control message.
#[derive(Debug, Clone, PartialEq)]
pub enum Message {
    Accept(Accept),
    Refuse(Refusal),
    BenchRequest(BenchParams),
    Ready(Ready),
    /// Client to server: every data connection is up, start the clock.
    Start,
    Report(Box<PeerReport>),
    TransferRequest(TransferRequest),
    /// Sender to receiver: the next batch of the manifest.
    Entries(Entries),
    EntriesEnd,
    /// Receiver to sender: blocks still missing.
    Need(Need),
    NeedEnd(NeedEnd),
    /// Sender to receiver: nothing is missing; finish and report.
    Finish,
    Digests(Digests),
    /// Receiver to sender: what it wrote, and its half of the measurements.
    TransferReport(Box<(TransferTotals, PeerReport)>),
}

fn empty(what: &'static str, p: &[u8]) -> Result<(), WireError> {
    if p.is_empty() {
        Ok(())
    } else {
        Err(WireError::Malformed {
            what,
            reason: format!("{} unexpected payload bytes", p.len()),
        })
    }
}

impl Message {
    pub fn name(&self) -> &'static str {
        match self {
            Message::Accept(_) => "accept",
            Message::Refuse(_) => "refuse",
            Message::BenchRequest(_) => "bench request",
            Message::Ready(_) => "ready",
            Message::Start => "start",
            Message::Report(_) => "report",
            Message::TransferRequest(_) => "transfer request",
            Message::Entries(_) => "entries",
            Message::EntriesEnd => "entries end",
            Message::Need(_) => "need",
            Message::NeedEnd(_) => "need end",
            Message::Finish => "finish",
            Message::Digests(_) => "digests",
            Message::TransferReport(_) => "transfer report",
        }
    }

    pub fn to_frame(&self) -> Frame {
        fn json<T: Serialize>(v: &T) -> Vec<u8> {
            // Serializing these plain data types cannot fail: no maps with
            // non-string keys, no custom Serialize impls.
            serde_json::to_vec(v).unwrap_or_default()
        }
        let (kind, payload) = match self {
            Message::Accept(m) => (FrameType::Accept, json(m)),
            Message::Refuse(m) => (FrameType::Refuse, json(m)),
            Message::BenchRequest(m) => (FrameType::BenchRequest, json(m)),
            Message::Ready(m) => (FrameType::Ready, json(m)),
            Message::Start => (FrameType::Start, Vec::new()),
            Message::Report(m) => (FrameType::Report, json(m)),
            Message::TransferRequest(m) => (FrameType::TransferRequest, json(m)),
            Message::Entries(m) => (FrameType::Entries, json(m)),
            Message::EntriesEnd => (FrameType::EntriesEnd, Vec::new()),
            Message::Need(m) => (FrameType::Need, json(m)),
            Message::NeedEnd(m) => (FrameType::NeedEnd, json(m)),
            Message::Finish => (FrameType::Finish, Vec::new()),
            Message::Digests(m) => (FrameType::Digests, json(m)),
            Message::TransferReport(m) => (FrameType::TransferReport, json(m)),
        };
        Frame { kind, payload }
    }

    pub fn encode(&self) -> Vec<u8> {
        self.to_frame().encode()
    }

    pub fn from_frame(frame: &Frame) -> Result<Message, WireError> {
        fn parse<T: DeserializeOwned>(what: &'static str, p: &[u8]) -> Result<T, WireError> {
            serde_json::from_slice(p).map_err(|e| WireError::Malformed {
                what,
                reason: e.to_string(),
            })
        }
        let p = &frame.payload;
        Ok(match frame.kind {
            FrameType::Accept => Message::Accept(parse("accept", p)?),
            FrameType::Refuse => Message::Refuse(parse("refuse", p)?),
            FrameType::BenchRequest => {
                let params: BenchParams = parse("bench request", p)?;
                params.validate()?;
                Message::BenchRequest(params)
            }
            FrameType::Ready => Message::Ready(parse("ready", p)?),
            FrameType::Start => {
                empty("start", p)?;
                Message::Start
            }
            FrameType::Report => {
                let report: PeerReport = parse("report", p)?;
                report.validate().map_err(|reason| WireError::Malformed {
                    what: "report",
                    reason,
                })?;
                Message::Report(Box::new(report))
            }
            FrameType::TransferRequest => {
                let req: TransferRequest = parse("transfer request", p)?;
                req.validate()?;
                Message::TransferRequest(req)
            }
            FrameType::Entries => {
                let e: Entries = parse("entries", p)?;
                e.validate()?;
                Message::Entries(e)
            }
            FrameType::EntriesEnd => {
                empty("entries end", p)?;
                Message::EntriesEnd
            }
            FrameType::Need => {
                let n: Need = parse("need", p)?;
                n.validate()?;
                Message::Need(n)
            }
            FrameType::NeedEnd => Message::NeedEnd(parse("need end", p)?),
            FrameType::Finish => {
                empty("finish", p)?;
                Message::Finish
            }
            FrameType::Digests => Message::Digests(parse("digests", p)?),
            FrameType::TransferReport => {
                let b: Box<(TransferTotals, PeerReport)> = parse("transfer report", p)?;
                b.1.validate().map_err(|reason| WireError::Malformed {
                    what: "transfer report",
                    reason,
                })?;
                Message::TransferReport(b)
            }
        })
    }
}
