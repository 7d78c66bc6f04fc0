//! Typed control messages. Payloads are JSON inside bounded frames: easy to
//! extend without a version bump, and every field is checked by `validate`
//! after decoding, so a well-formed but hostile value is refused too.

use serde::{Deserialize, Serialize, de::DeserializeOwned};

use crate::agent::{AgentJoin, AgentReport, AgentTask, ClockEcho, ClockProbe};
use crate::codec::codes;
use crate::latency::LatencyParams;
use crate::transfer::{Digests, Entries, Need, NeedEnd, TransferRequest, TransferTotals};
use crate::udp::UdpParams;
use crate::{Flaw, Frame, JsonError, WireError};
use linerate_result::{HostFacts, IntervalSample, SideReport};

/// Most streams one session may open.
pub const MAX_STREAMS: u16 = 1024;
const MAX_WRITE_LEN: u32 = 256 << 20;
const MAX_DURATION_MS: u64 = 7 * 24 * 3600 * 1000;

/// Server's answer to a good hello.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Accept {
    /// The server's linerate version.
    pub server_version: String,
    /// Its capability bits.
    pub capabilities: u64,
    /// Its host's facts.
    pub host: HostFacts,
}

/// Why a session is refused, as a code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RefusalCode {
    /// What arrived did not decode, or came out of order.
    Malformed,
    /// The peer speaks another protocol version.
    UnsupportedVersion,
    /// No such session, or a proof that does not match it.
    UnknownSession,
    /// A parameter out of its range or not allowed here.
    InvalidParameters,
    /// The server's limits are taken.
    Busy,
    /// A failure of this end's own (a full disk, an interrupt).
    Internal,
    /// Another scheduled throughput test holds this server's path
    /// (docs/protocol.md#path-hold): try again later.
    PathHeld,
}

impl RefusalCode {
    /// The code in words, for people.
    pub fn words(self) -> &'static str {
        match self {
            RefusalCode::Malformed => "malformed request",
            RefusalCode::UnsupportedVersion => "unsupported version",
            RefusalCode::UnknownSession => "unknown session",
            RefusalCode::InvalidParameters => "invalid parameters",
            RefusalCode::Busy => "busy",
            RefusalCode::Internal => "internal error",
            RefusalCode::PathHeld => "path held by another scheduled test",
        }
    }
}

/// Why a server or client gives up on a session.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Refusal {
    /// The code.
    pub code: RefusalCode,
    /// Why, in words.
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

impl Direction {
    /// Whether connection `index` of a session with `streams` streams per
    /// direction carries client-to-server payload (bidir numbers the
    /// reverse connections after the forward ones).
    pub fn is_forward(self, index: u16, streams: u16) -> bool {
        match self {
            Direction::Forward => true,
            Direction::Reverse => false,
            Direction::Bidir => index < streams,
        }
    }
}

/// The socket options of a session's data connections, as the client asks
/// and the server applies them at its end (each where it means something:
/// the receive buffer at the receiver, pacing at the sender). `None` leaves
/// the kernel's choice (autotuning, the default algorithm). The engine's
/// spec holds this very struct, so an option added here travels with no
/// other copy.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SocketParams {
    /// SO_SNDBUF at the sending end.
    #[serde(default)]
    pub sndbuf: Option<u32>,
    /// SO_RCVBUF at the receiving end: bounds the receive window.
    #[serde(default)]
    pub rcvbuf: Option<u32>,
    /// TCP_CONGESTION, e.g. bbr.
    #[serde(default)]
    pub congestion: Option<String>,
    /// SO_MAX_PACING_RATE per stream, bytes per second.
    #[serde(default)]
    pub pacing_rate: Option<u64>,
    /// TCP_MAXSEG.
    #[serde(default)]
    pub mss: Option<u32>,
    /// IP TOS / IPv6 traffic class.
    #[serde(default)]
    pub tos: Option<u8>,
    /// TCP_NODELAY on the data connections: each write leaves at once
    /// rather than waiting for a full segment or an ACK (iperf3's -N).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nodelay: bool,
    /// TCP_NOTSENT_LOWAT at the sending end: bytes a socket may hold not
    /// yet sent before a writer waits, so the send buffer does not queue
    /// seconds of data ahead of the network.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub notsent_lowat: Option<u32>,
}

/// Whether `name` can name a kernel congestion control: 1 to 15 letters,
/// digits or '_' (TCP_CA_NAME_MAX is 16 with its NUL). The one check of a
/// name, wherever it comes from: a flag, a session's or an agent's task.
pub fn is_congestion_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 15
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl SocketParams {
    /// Whether the options are within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        let bad = WireError::invalid;
        if let Some(cc) = &self.congestion
            && !is_congestion_name(cc)
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

/// What a bench session does; the client proposes, the server checks.
/// Two parts, flattened into one JSON object: what was asked, which the
/// engine's spec holds as this very struct, so an option added there
/// travels with no copy; and what the client planned for the run from both
/// hosts' facts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchParams {
    /// What the run was asked for, as it was asked.
    #[serde(flatten)]
    pub options: BenchOptions,
    /// What the client decided for this run.
    #[serde(flatten)]
    pub plan: BenchPlan,
}

/// A bench's parameters as asked (flags, a study, a many-host task): the
/// same on the wire as in the engine's spec.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchOptions {
    /// Streams each way; a run both ways opens twice as many connections.
    pub streams: u16,
    /// Run length; ignored when `bytes` is set.
    pub duration_ms: u64,
    /// Total payload to send in each direction, split evenly across streams.
    pub bytes: Option<u64>,
    /// Which way the data goes.
    pub direction: Direction,
    /// Between interval samples; 0 for none.
    pub interval_ms: u64,
    /// The warm-up left out of the figures.
    pub omit_ms: u64,
    /// Socket options both ends apply.
    #[serde(flatten)]
    pub socket: SocketParams,
    /// Senders use MSG_ZEROCOPY.
    pub zerocopy: bool,
    /// Receivers discard with MSG_TRUNC, no copy to user space.
    pub skip_rx_copy: bool,
    /// A many-host run's token: an agent's bench server takes only the
    /// run's own flows (docs/security.md#fair-shares).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_token: Option<RunToken>,
    /// Threads each end runs its TCP streams on (`--threads`); None: a
    /// thread a stream.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<u16>,
    /// What the senders' bytes are (`--payload`).
    #[serde(default, skip_serializing_if = "PayloadBytes::is_random")]
    pub payload: PayloadBytes,
    /// A scheduled throughput test (`SCHEDULE/TEST`) that asks to hold the
    /// server's path alone: the server refuses it with
    /// [`RefusalCode::PathHeld`] while another holds it
    /// (docs/protocol.md#path-hold).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_hold: Option<String>,
}

/// What a bench's senders send.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PayloadBytes {
    /// Bytes no layer can compress or deduplicate.
    #[default]
    Random,
    /// Zero bytes: what a compressing path (a WAN optimiser, a tunnel
    /// with compression) carries at its best.
    Zeros,
}

impl PayloadBytes {
    fn is_random(&self) -> bool {
        *self == PayloadBytes::Random
    }
}

impl Default for BenchOptions {
    fn default() -> Self {
        BenchOptions {
            streams: 1,
            duration_ms: 10_000,
            bytes: None,
            direction: Direction::Forward,
            interval_ms: 1000,
            omit_ms: 0,
            socket: SocketParams::default(),
            zerocopy: false,
            skip_rx_copy: false,
            run_token: None,
            threads: None,
            payload: PayloadBytes::Random,
            path_hold: None,
        }
    }
}

/// What the client decided for one run from both hosts' facts (or fixed
/// where the run asked for a value).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BenchPlan {
    /// Bytes per write.
    pub write_len: u32,
    /// Bytes per read.
    pub read_len: u32,
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
    /// The server sends its interval samples as the run goes, so a client
    /// that only receives (-R) can show the senders' TCP_INFO.
    #[serde(default)]
    pub peer_intervals: bool,
    /// The streams carry datagrams at this rate each (`bench --udp`);
    /// `write_len` is the datagram size.
    #[serde(default)]
    pub udp: Option<UdpParams>,
    /// The client's UDP port for the one-way delay probe (a
    /// [`crate::DelayProbe`] every few tens of ms): the server answers each
    /// from its own port. None: no probe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_probe_port: Option<u16>,
}

/// A secret a peer shows: compared, never printed (its Debug hides it).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct RunToken(pub String);

impl std::fmt::Debug for RunToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RunToken(REDACTED)")
    }
}

impl BenchParams {
    /// Whether the bench is within bounds.
    pub fn validate(&self) -> Result<(), WireError> {
        self.options.validate()?;
        self.plan.validate()
    }
}

impl BenchOptions {
    /// Number of TCP connections the session opens.
    pub fn connections(&self) -> u16 {
        match self.direction {
            Direction::Bidir => self.streams.saturating_mul(2),
            _ => self.streams,
        }
    }

    /// Whether the options are within bounds; the error names the field.
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
        if self.interval_ms != 0 && self.interval_ms < 10 {
            return bad("interval_ms", "must be 0 (off) or at least 10 ms");
        }
        if self.bytes.is_none() && self.omit_ms >= self.duration_ms {
            return bad("omit_ms", "must be shorter than the run");
        }
        self.socket.validate()?;
        if self.run_token.as_ref().is_some_and(|t| t.0.len() > 256) {
            return bad("run_token", "must be at most 256 bytes");
        }
        Ok(())
    }
}

impl BenchPlan {
    /// A plan of these write and read lengths with nothing else decided: no
    /// polling, pinning, low-water mark, samples from the server, datagrams
    /// or delay probe.
    pub fn of_lengths(write_len: u32, read_len: u32) -> BenchPlan {
        BenchPlan {
            write_len,
            read_len,
            rx_poll: false,
            pin_cores: false,
            pin_pairs: false,
            rcvlowat: None,
            peer_intervals: false,
            udp: None,
            delay_probe_port: None,
        }
    }

    /// Whether the plan is within bounds; the error names the field.
    pub fn validate(&self) -> Result<(), WireError> {
        let bad = WireError::invalid;
        for (field, len) in [("write_len", self.write_len), ("read_len", self.read_len)] {
            if len == 0 || len > MAX_WRITE_LEN {
                return bad(field, "must be between 1 byte and 256 MiB");
            }
        }
        if let Some(udp) = &self.udp {
            udp.validate(self.write_len)?;
        }
        if self.delay_probe_port == Some(0) {
            return bad("delay_probe_port", "must be a port, 1 to 65535");
        }
        Ok(())
    }
}

/// The server has registered the session and waits for its data connections.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Ready {}

/// Client to server, first on an encrypted data connection: the proof
/// that it belongs to the session (the one-shot receiver's token), which
/// the hello, sent in the clear, cannot carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
pub struct Join {
    /// The one-shot receiver's token, when it has one.
    pub token: Option<String>,
}

/// The server's half of a session's measurements.
pub type PeerReport = SideReport;

/// The server's samples of one interval, sent as the run goes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct PeerIntervals {
    /// Every stream's sample of the interval.
    pub samples: Vec<IntervalSample>,
}

/// A payload carried as JSON in a frame, checked after decoding.
trait Payload: Serialize + DeserializeOwned {
    /// Refuses a well-formed but out-of-range value; `what` names it.
    fn check(&self, _what: &'static str) -> Result<(), WireError> {
        Ok(())
    }
}

impl<T: Payload> Payload for Box<T> {
    fn check(&self, what: &'static str) -> Result<(), WireError> {
        (**self).check(what)
    }
}

impl Payload for Accept {}
impl Payload for Refusal {}
impl Payload for Ready {}
impl Payload for Join {}
impl Payload for NeedEnd {}
impl Payload for Digests {}

impl Payload for ClockProbe {}
impl Payload for ClockEcho {}

impl Payload for AgentJoin {
    fn check(&self, _: &'static str) -> Result<(), WireError> {
        self.validate()
    }
}

impl Payload for AgentTask {
    fn check(&self, _: &'static str) -> Result<(), WireError> {
        self.validate()
    }
}

impl Payload for AgentReport {
    fn check(&self, _: &'static str) -> Result<(), WireError> {
        self.validate()
    }
}

impl Payload for BenchParams {
    fn check(&self, _: &'static str) -> Result<(), WireError> {
        self.validate()
    }
}

impl Payload for LatencyParams {
    fn check(&self, _: &'static str) -> Result<(), WireError> {
        self.validate()
    }
}

impl Payload for TransferRequest {
    fn check(&self, _: &'static str) -> Result<(), WireError> {
        self.validate()
    }
}

impl Payload for Entries {
    fn check(&self, _: &'static str) -> Result<(), WireError> {
        self.validate()
    }
}

impl Payload for Need {
    fn check(&self, _: &'static str) -> Result<(), WireError> {
        self.validate()
    }
}

impl Payload for PeerReport {
    fn check(&self, what: &'static str) -> Result<(), WireError> {
        self.validate()
            .map_err(|error| WireError::Report { what, error })
    }
}

impl Payload for PeerIntervals {
    fn check(&self, what: &'static str) -> Result<(), WireError> {
        // One sample per connection: streams in each direction.
        if self.samples.len() > 2 * usize::from(MAX_STREAMS) {
            return Err(WireError::Malformed {
                what,
                flaw: Flaw::TooMany {
                    count: self.samples.len(),
                    what: "samples",
                },
            });
        }
        Ok(())
    }
}

impl Payload for (TransferTotals, PeerReport) {
    fn check(&self, what: &'static str) -> Result<(), WireError> {
        self.0.validate()?;
        self.1.check(what)
    }
}

fn json<T: Serialize>(v: &T) -> Vec<u8> {
    // Serializing these plain data types cannot fail: no maps with
    // non-string keys, no custom Serialize impls.
    serde_json::to_vec(v).unwrap_or_default()
}

fn parse<T: Payload>(what: &'static str, p: &[u8]) -> Result<T, WireError> {
    let value: T = serde_json::from_slice(p).map_err(|e| WireError::Malformed {
        what,
        flaw: Flaw::Json(JsonError(std::sync::Arc::new(e))),
    })?;
    value.check(what)?;
    Ok(value)
}

fn empty(what: &'static str, p: &[u8]) -> Result<(), WireError> {
    if p.is_empty() {
        Ok(())
    } else {
        Err(WireError::Malformed {
            what,
            flaw: Flaw::Trailing(p.len()),
        })
    }
}

/// The payload of a message variant, or none for a variant without one.
macro_rules! payload_of {
    ($msg:expr, $variant:ident, $payload:ty) => {
        match $msg {
            Message::$variant(m) => json(m),
            _ => Vec::new(),
        }
    };
    ($msg:expr, $variant:ident) => {
        Vec::new()
    };
}

/// A message variant decoded from its payload.
macro_rules! decode_as {
    ($p:expr, $variant:ident, $name:literal, $payload:ty) => {
        Message::$variant(parse::<$payload>($name, $p)?)
    };
    ($p:expr, $variant:ident, $name:literal) => {{
        empty($name, $p)?;
        Message::$variant
    }};
}

/// The table of control messages: each row is one message's frame code,
/// variant, payload type (none for a bare signal) and name. The frame
/// types, the [`Message`] enum, its names and both directions of its
/// codec are all generated from it: a new message is one new row.
macro_rules! messages {
    ($( $(#[$doc:meta])* $code:literal => $variant:ident $(($payload:ty))?, $name:literal; )+) => {
        codes! {
            /// The first byte of a frame: which message it carries.
            pub enum FrameType: u8, unknown = WireError::UnknownFrameType {
                $( $(#[$doc])* $variant = $code ),+
            }
        }

        /// Every control message.
        #[derive(Debug, Clone, PartialEq)]
        pub enum Message {
            $( $(#[$doc])* $variant $(($payload))?, )+
        }

        impl Message {
            /// The message's name, for errors and logs.
            pub fn name(&self) -> &'static str {
                match self {
                    $( Message::$variant { .. } => $name, )+
                }
            }

            /// The frame type that carries it.
            pub fn frame_type(&self) -> FrameType {
                match self {
                    $( Message::$variant { .. } => FrameType::$variant, )+
                }
            }

            /// The message as a frame.
            pub fn to_frame(&self) -> Frame {
                let payload = match self {
                    $( Message::$variant { .. } => payload_of!(self, $variant $(, $payload)?), )+
                };
                Frame {
                    kind: self.frame_type(),
                    payload,
                }
            }

            /// The message a frame carries; a payload that does not
            /// decode is an error.
            pub fn from_frame(frame: &Frame) -> Result<Message, WireError> {
                let p = &frame.payload;
                Ok(match frame.kind {
                    $( FrameType::$variant => decode_as!(p, $variant, $name $(, $payload)?), )+
                })
            }
        }
    };
}

messages! {
    /// Server to client: the hello is good; the server's version and host.
    1 => Accept(Accept), "accept";
    /// Either way: the session is refused or given up, and why.
    2 => Refuse(Refusal), "refuse";
    /// Client to server: the bench to run.
    3 => BenchRequest(BenchParams), "bench request";
    /// Server to client: the request is taken; open the data connections.
    4 => Ready(Ready), "ready";
    /// Client to server: every data connection is up, start the clock.
    5 => Start, "start";
    /// Server to client: its half of the measurements.
    6 => Report(Box<PeerReport>), "report";
    /// Sender to receiver: the transfer to take.
    7 => TransferRequest(TransferRequest), "transfer request";
    /// Sender to receiver: the next batch of the manifest.
    8 => Entries(Entries), "entries";
    /// Sender to receiver: the manifest is complete.
    9 => EntriesEnd, "entries end";
    /// Receiver to sender: blocks still missing.
    10 => Need(Need), "need";
    /// Receiver to sender: the end of a pass's list of missing blocks.
    11 => NeedEnd(NeedEnd), "need end";
    /// Sender to receiver: nothing is missing; finish and report.
    12 => Finish, "finish";
    /// Receiver to sender: whole-file digests of what it wrote (`--verify`).
    13 => Digests(Digests), "digests";
    /// Receiver to sender: what it wrote, and its half of the measurements.
    14 => TransferReport(Box<(TransferTotals, PeerReport)>), "transfer report";
    /// Server to client, when asked (`BenchParams::peer_intervals`).
    15 => Intervals(PeerIntervals), "intervals";
    /// Client to server, first on an encrypted data connection: its proof.
    16 => Join(Join), "join";
    /// Client to server: the latency session to run.
    17 => LatencyRequest(LatencyParams), "latency request";
    /// Agent to coordinator: who it is and where its flows arrive.
    18 => AgentJoin(Box<AgentJoin>), "agent join";
    /// Coordinator to agent: answer with your clock.
    19 => ClockProbe(ClockProbe), "clock probe";
    /// Agent to coordinator: the probe answered with its clock.
    20 => ClockEcho(ClockEcho), "clock echo";
    /// Coordinator to agent: the flows of one step.
    21 => AgentTask(AgentTask), "agent task";
    /// Agent to coordinator: what the step's flows measured.
    22 => AgentReport(AgentReport), "agent report";
    /// Coordinator to agent: the run is over; stop.
    23 => Dismiss, "dismiss";
}

impl Message {
    /// The message as the bytes of its frame.
    pub fn encode(&self) -> Vec<u8> {
        self.to_frame().encode()
    }
}
