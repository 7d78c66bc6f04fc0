//! The order of every linerate session's messages, as deterministic state
//! machines: each takes decoded messages and the current time, and yields
//! the messages to send, what its driver must do next, the next deadline
//! and a typed end. No I/O, no clock: the engine drives them over sockets,
//! the tests and fuzz targets in memory.
//!
//! One file per session kind shows that kind's message order:
//! [`bench_client`], [`bench_server`], [`transfer_sender`] and
//! [`transfer_receiver`] (a daemon's or a one-shot receiver's); [`join`]
//! is a data connection's join, the same for every kind. [`kit`] is what
//! every machine is written with, here and in `linerate-fleet` (the
//! agent's and the coordinator's message order).
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod kit;

pub mod bench_client;
pub mod bench_server;
pub mod join;
pub mod transfer_receiver;
pub mod transfer_sender;

pub use crate::kit::{Session, SessionError};
pub use bench_client::BenchClient;
pub use bench_server::BenchServer;
pub use join::{JoinClient, JoinServer};
pub use transfer_receiver::TransferReceiver;
pub use transfer_sender::TransferSender;

use std::time::Duration;

/// How long a client waits for the server's accept of its hello, and
/// for the ready that answers a bench request.
pub const ANSWER_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a bench server waits for each setup step (the request, the
/// data connections, the start), and a receiver for its data connections.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long either end of a transfer waits for its peer's next control
/// step (the request, the ready, each manifest batch, the finish).
pub const TRANSFER_STEP_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a bench client waits after its run for the server's report.
pub const REPORT_GRACE: Duration = Duration::from_secs(10);
/// How long a sender waits on a receiver that neither takes data nor
/// answers: it has stopped, or its host is hung.
pub const PEER_SILENCE: Duration = Duration::from_secs(30);

#[doc(hidden)]
pub mod fixtures;
#[cfg(test)]
mod tests;
