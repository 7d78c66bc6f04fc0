//! File transfer: a sender that cuts files into blocks handed out to every
//! stream from one queue, and a receiver that checks each block, writes it at
//! its offset under a temporary name, journals it for resume, and renames a
//! file into place once all of it has arrived; paths received from a peer
//! stay under the destination root ([`confine`]).
#![warn(missing_docs)]

pub mod acl;
mod batch;
pub mod claims;
pub mod confine;
mod direct;
pub mod filter;
mod grid;
pub mod meta;
mod queue;
mod reader;
pub mod receive;
pub mod send;
#[doc(hidden)]
pub mod sink;
pub mod source;
mod url;

pub use direct::CachePolicy;
pub use grid::{block_count, block_span, checksum};
pub use linerate_secure::Token;
pub use queue::FirstPass;
pub use sink::journal::completed_blocks as journaled_blocks;
pub use url::{OneShot, UrlError};

/// BLAKE3 of everything `r` yields, in hex: how `--verify` checks a
/// written file against its source and `--checksum` compares contents.
pub fn content_digest(r: impl std::io::Read) -> std::io::Result<String> {
    let mut h = blake3::Hasher::new();
    h.update_reader(r)?;
    Ok(h.finalize().to_hex().to_string())
}

/// Fills `b` from the system's random source (session ids, tokens).
pub fn random_bytes(b: &mut [u8]) -> std::io::Result<()> {
    getrandom::fill(b).map_err(|e| std::io::Error::other(e.to_string()))
}
