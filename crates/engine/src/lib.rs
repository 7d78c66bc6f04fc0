//! The data path and the sessions that drive it.
//!
//! One OS thread and one blocking socket per stream, one large buffer per
//! stream reused for every write or read, byte counters that the sampler reads
//! without locks; a many-host agent's receiving streams share a loop a core
//! instead ([`pool`]). [`server`] answers every session on one port; [`bench`](mod@bench) is the
//! client side of a memory-to-memory measurement, [`latency`](mod@latency) of
//! round trips and bandwidth against message size; [`confine`] keeps paths
//! received from a peer under the destination root (for file transfer).
#![warn(missing_docs)]

pub mod address;
pub mod bench;
pub mod buffer;
pub mod confine;
mod delay_probe;
mod document;
pub mod door;
mod end;
mod error;
pub mod fleet;
mod idle;
pub mod latency;
pub mod limits;
mod measured;
mod multiplex;
pub mod pool;
pub mod server;
mod session;
pub mod shares;
pub mod sockopt;
pub mod spec;
pub mod spread;
mod stream;
pub mod transfer;
mod udp;

pub use end::EndConfig;

/// Takes a mutex whatever happened to it: a thread that panicked holding
/// it must not wedge the server or the other streams.
pub(crate) fn lock<T>(m: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}
pub use error::EngineError;
