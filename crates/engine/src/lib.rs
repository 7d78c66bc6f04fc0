//! The data path and the sessions that drive it.
//!
//! One OS thread and one blocking socket per stream, one large buffer per
//! stream reused for every write or read, byte counters that the sampler reads
//! without locks. [`server`] answers every session on one port; [`bench`] is the
//! client side of a memory-to-memory measurement.

pub mod bench;
mod control;
mod error;
pub mod server;
mod side;
pub mod sockopt;
mod stream;

pub use error::EngineError;
pub use side::SideConfig;
