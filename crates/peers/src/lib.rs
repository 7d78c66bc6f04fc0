//! The peer tools engineers compare against (iperf2, iperf3, nuttcp; sockperf,
//! qperf and iperf2 --bounceback for latency, [`rounds`]; iperf2 and iperf3
//! over UDP, [`datagrams`]): how to start their servers and clients, and
//! parsers that turn their outputs into `linerate.result/1` documents, so
//! one report can put them side by side with linerate. Parsers never panic on odd output.
#![forbid(unsafe_code)]

pub mod convert;
pub mod datagrams;
pub mod parse;
pub mod process;
pub mod rounds;
pub mod tool;

pub use parse::{PeerInterval, PeerRun};
pub use tool::{FileTool, Program, Tool};

/// A captured output of a peer, from `fixtures/`.
#[cfg(test)]
fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

#[derive(Debug, thiserror::Error)]
pub enum PeerError {
    #[error("{tool}: {reason}")]
    Parse { tool: &'static str, reason: String },
    #[error("{0}")]
    Run(String),
    #[error("{context}: {error}")]
    Io {
        context: String,
        error: std::io::Error,
    },
}
