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
    #[error("{tool}: {missing}")]
    Parse {
        /// The tool whose output it was.
        tool: &'static str,
        /// What its output lacks, in words.
        missing: &'static str,
    },
    /// It reported an error of its own (in its JSON).
    #[error("{tool}: reported an error: {said}")]
    Reported {
        /// The tool.
        tool: &'static str,
        /// Its words.
        said: String,
    },
    /// A figure in a unit the parser does not know.
    #[error("{tool}: unknown unit {unit:?}")]
    UnknownUnit {
        /// The tool.
        tool: &'static str,
        /// The unit as printed.
        unit: String,
    },
    /// Its JSON output does not parse.
    #[error("{tool}: not JSON: {error}")]
    NotJson {
        /// The tool whose output it was.
        tool: &'static str,
        /// Why it does not parse.
        error: serde_json::Error,
    },
    /// A command line of no words (a bug).
    #[error("an empty command")]
    EmptyCommand,
    /// A server that did not listen in time.
    #[error("`{command}` did not listen on port {port} within {} s", .within.as_secs())]
    NotListening {
        /// The server's command line.
        command: String,
        /// The port it was given.
        port: u16,
        /// The time it had.
        within: std::time::Duration,
    },
    /// A client that did not finish in time.
    #[error("`{command}` did not finish within {} s", .within.as_secs())]
    NotFinished {
        /// The client's command line.
        command: String,
        /// The time it had.
        within: std::time::Duration,
    },
    /// A child whose process id the system does not give.
    #[error("no process id for `{0}`")]
    NoPid(String),
    /// A server exited before it listened: most often its port, free when
    /// it was picked, was taken before the server bound it.
    #[error("`{command}` exited at once ({status}){}", after_colon(.said))]
    ExitedAtOnce {
        /// The server's command line.
        command: String,
        /// How it ended.
        status: std::process::ExitStatus,
        /// The end of what it printed on stderr (empty if nothing).
        said: String,
    },
    /// A system call around it failed.
    #[error("{doing}{}: {error}", .program.as_ref().map(|p| format!(" {p}")).unwrap_or_default())]
    Io {
        /// What was being done.
        doing: &'static str,
        /// The program it was done to, when one.
        program: Option<String>,
        /// The error the system gave.
        error: std::io::Error,
    },
}
