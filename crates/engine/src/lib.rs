//! The data path, and the client ends that drive it.
//!
//! One OS thread and one blocking socket per stream, one large buffer per
//! stream reused for every write or read, byte counters that the sampler reads
//! without locks; a server's receiving streams can share a loop a core
//! instead ([`pool`]). [`session`] drives the sans-IO machines of
//! `linerate-session` over control connections, plain or TLS, and joins
//! data connections to their session; [`end`] runs one end's streams and
//! reports them; [`bench`](mod@bench) is the client side of a
//! memory-to-memory measurement, [`latency`](mod@latency) of round trips and
//! bandwidth against message size. The server that answers them is
//! `linerate-daemon`; file transfer is `linerate-transfer`.
#![warn(missing_docs)]

pub mod address;
pub mod bench;
pub mod buffer;
pub mod delay_probe;
pub mod document;
mod error;
pub mod latency;
pub mod limits;
pub mod link_shares;
pub mod measuring_end;
mod multiplex;
pub mod pool;
pub mod session;
pub mod sockopt;
mod spare_cores;
pub mod spec;
pub mod stream;
mod udp;

pub use measuring_end::EndConfig;

/// Takes a mutex whatever happened to it: a thread that panicked holding
/// it must not wedge the server or the other streams.
pub fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
pub use error::{EngineError, Result};
