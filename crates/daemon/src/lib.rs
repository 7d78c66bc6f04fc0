//! The server: one port that accepts every session, admits it (a door per
//! source address, shares between sources, the server's limits) and answers
//! it: a bench or latency measurement ([`measured`]) or a file transfer
//! (through `linerate-transfer`); [`Running`] is one on a thread of this
//! process.
#![warn(missing_docs)]

mod bench_server;
pub mod running;
pub mod server;
pub mod shares;
pub mod waiting_room;

pub use running::Running;
pub use server::Server;
