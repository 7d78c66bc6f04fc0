//! The peer tools engineers compare against (iperf2, iperf3, nuttcp; sockperf,
//! qperf and iperf2 --bounceback for latency, [`rounds`]; iperf2 and iperf3
//! over UDP, [`datagrams`]): how to start their servers and clients, and
//! parsers that turn their outputs into `linerate.result/1` documents, so
//! one report can put them side by side with linerate. Parsers never panic on odd output.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod convert;
pub mod datagrams;
pub mod parse;
pub mod process;
pub mod rounds;
pub mod tool;

pub use parse::{ToolInterval, ToolRun};
pub use tool::{FileTool, Program, Tool};

/// A captured output of a peer, from `fixtures/`.
#[cfg(test)]
fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{}/fixtures/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
}

/// `": said"`, or nothing when `said` is empty.
fn after_colon(said: &str) -> String {
    if said.is_empty() {
        String::new()
    } else {
        format!(": {said}")
    }
}

/// Why a peer tool could not be run or its output not read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ToolError {
    /// Its output is not what the parser knows.
    #[error("{tool}: {reason}")]
    Parse {
        /// The tool whose output it was.
        tool: &'static str,
        /// What did not parse.
        reason: String,
    },
    /// It did not start, listen or end as it should.
    #[error("{0}")]
    Run(String),
    /// A server exited before it listened: most often its port, free when
    /// it was picked, was taken before the server bound it.
    #[error("`{command}` exited at once ({status}){}", after_colon(.said))]
    ExitedAtOnce {
        /// The server's command line.
        command: String,
        /// How it ended.
        status: String,
        /// The end of what it printed on stderr (empty if nothing).
        said: String,
    },
    /// A system call around it failed.
    #[error("{context}: {error}")]
    Io {
        /// What was being done.
        context: String,
        /// The error the system gave.
        error: std::io::Error,
    },
}
