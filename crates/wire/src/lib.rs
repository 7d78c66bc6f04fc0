//! The linerate wire protocol, sans-IO: bytes in, typed messages out.
//!
//! Every TCP connection to a linerate server starts with a fixed-size [`Hello`]
//! that names the protocol version, the capabilities of the sender, a random
//! 128-bit session id, the connection's role (control or data) and, for data
//! connections, the stream index. After the hello, control connections carry
//! length-prefixed [`Frame`]s whose payloads decode to [`Message`]s; data
//! connections carry raw payload bytes (bench), [`Record`]s (transfer) or
//! runs of request and reply rounds (latency, see [`RunHeader`]). A
//! many-host run's agents talk to its coordinator in [`agent`] messages.
//!
//! Nothing here performs I/O. Every decoder bounds every length before it
//! allocates, checks every field, returns a typed [`WireError`] and never panics,
//! so it can be fed straight from the network (and is fuzzed: see `fuzz/`).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod agent;
mod codec;
mod delay_probe;
mod dscp;
mod error;
mod frame;
mod hello;
mod latency;
mod message;
mod record;
mod transfer;
mod udp;

pub use agent::{
    AgentJoin, AgentReport, AgentTask, ClockEcho, ClockProbe, JobKind, JobPeer, JobReport, JobTask,
    MAX_AGENT_FLOWS, MAX_FLOW_INTERVALS, MAX_JOB_ITERATIONS, MAX_JOB_MESSAGE, MAX_RANKS, TaskFlow,
};
pub use codec::Reader;
pub use delay_probe::{DELAY_PROBE_LEN, DelayEcho, DelayProbe};
pub use dscp::{Dscp, DscpError};
pub use error::{Flaw, JsonError, WireError};
pub use frame::{FRAME_HEADER_LEN, Frame, FrameDecoder, MAX_FRAME_LEN};
pub use hello::{
    CAPABILITIES, Capabilities, HELLO_LEN, Hello, MAGIC, PROTOCOL_VERSION, Role, SessionId,
    SessionKind,
};
pub use latency::{
    Echo, Fed, LatencyParams, MAX_LATENCY_CONNECTIONS, MAX_MESSAGE_LEN, MAX_ROUND_BYTES,
    MAX_WINDOW, Pattern, RUN_HEADER_LEN, RunHeader, UDP_REPLY_MIN_LEN, UDP_ROUND_HEADER_LEN,
    UdpRound,
};
pub use message::{
    Accept, BenchOptions, BenchParams, BenchPlan, Direction, FrameType, Join, MAX_STREAMS, Message,
    PayloadBytes, PeerIntervals, PeerReport, Ready, Refusal, RefusalCode, RunToken, SocketParams,
    is_congestion_name,
};
pub use record::{BLOCK_TRAILER_LEN, RECORD_HEADER_LEN, Record};
pub use transfer::{
    Action, Change, DIGEST_HEX_LEN, DIRECT_ALIGN, Digests, ENTRIES_PER_FRAME, Entries, Entry,
    EntryKind, Existing, ITEM_CODE_LEN, MAX_BLOCK_LEN, MAX_CHANGES, MAX_ENTRIES, MAX_FILE_SIZE,
    MAX_FILTER_BYTES, MAX_FILTER_RULES, MAX_XATTR_VALUE, MAX_XATTRS, MIN_BLOCK_LEN, Need, NeedEnd,
    NeedFile, Owner, TOKEN_LEN, TOP_PATH, TransferRequest, TransferTotals, Xattr,
};
pub use udp::{
    DATAGRAM_HEADER_LEN, DatagramHeader, MAX_DATAGRAM_LEN, UdpCounter, UdpCounts, UdpParams,
};
