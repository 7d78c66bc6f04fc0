//! Runs linerate and the peer tools side by side, the way a bar against a
//! peer is measured: servers and clients placed on loopback or in a lab's
//! hosts ([`place`]), the tools in an order that rotates each round, medians
//! per tool and linerate's ratio to the best peer ([`compare`]), generated
//! data sets ([`dataset`]), and many runs gathered into one
//! `linerate.result/1` document ([`document`]); the seed papers' studies
//! on labs they build and remove ([`study`]).
//!
//! Nothing here parses flags or prints: the caller hands in what to run and
//! receives each run as an [`Event`] and the whole comparison as a value.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod compare;
pub mod dataset;
pub mod document;
pub mod place;
mod rounds;
pub mod study;

pub use compare::{CompareSpec, Comparison, Dataset, Mode, compare};
pub use place::Place;
pub use rounds::{Event, Skipped};

/// Why a comparison or a document could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HarnessError {
    /// A tool name this mode does not know.
    #[error("unknown tool {name:?} for this mode; known: {known}")]
    UnknownTool {
        /// The name as given.
        name: String,
        /// The names this mode knows, comma-separated.
        known: String,
    },
    /// Every requested tool was skipped.
    #[error("none of the requested tools can run here")]
    NothingRuns,
    /// A tool's client ended with a failure.
    #[error("{tool} failed: {stderr}")]
    ToolFailed {
        /// The tool's name.
        tool: String,
        /// What it wrote to stderr, trimmed.
        stderr: String,
    },
    /// linerate's client printed no result document.
    #[error("linerate {command} printed no result: {source}")]
    NoResult {
        /// The linerate command that ran.
        command: &'static str,
        /// Why its output is not a document.
        source: serde_json::Error,
    },
    /// linerate latency ran but measured no step.
    #[error("linerate latency measured no step")]
    NoLatencyStep,
    /// A lab with fewer than two hosts cannot hold a server and a client.
    #[error("lab {0} has fewer than two hosts")]
    LabTooSmall(String),
    /// Many runs were asked for and none produced a result.
    #[error("the study produced no runs")]
    NoRuns,
    /// Starting, running or parsing a peer tool.
    #[error(transparent)]
    Peer(#[from] linerate_peers::PeerError),
    /// A lab could not be built, changed or entered.
    #[error(transparent)]
    Lab(#[from] linerate_lab::LabError),
    /// A run of linerate itself.
    #[error(transparent)]
    Engine(#[from] linerate_engine::EngineError),
    /// Setting or reverting sysctls in a lab host.
    #[error(transparent)]
    Tune(#[from] linerate_tune::TuneError),
    /// A thread of the harness panicked.
    #[error("{0} panicked")]
    Panicked(&'static str),
    /// A file or socket operation of the harness itself.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The error the system gave.
        source: std::io::Error,
    },
}

impl HarnessError {
    fn io(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> HarnessError {
        let what = what.into();
        move |source| HarnessError::Io { what, source }
    }
}
