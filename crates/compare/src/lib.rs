//! Runs linerate and the other tools side by side, the way a bar against
//! another tool is measured: the tools themselves ([`tools`]: iperf2,
//! iperf3, nuttcp; sockperf, qperf and iperf2 --bounceback; iperf2 and
//! iperf3 over UDP; rsync: how to start them and parsers for what they
//! print), servers and clients placed on loopback or in a lab's hosts
//! ([`place`]), the tools in an order that rotates each round, medians per
//! tool and linerate's ratio to the best other tool ([`compare`]: memory to
//! memory ([`Mode::Mem`]), files to a directory ([`Mode::Files`]), ping-pong
//! round trips ([`Mode::Latency`]) and UDP at one rate ([`Mode::Udp`])),
//! generated data sets ([`dataset`]), and many runs gathered into one
//! `linerate.result/1` document ([`document`]).
//!
//! Nothing here parses flags or prints: the caller hands in what to run and
//! receives each run as an [`Event`] and the whole comparison as a value.
#![forbid(unsafe_code)]
#![warn(missing_docs)]

pub mod dataset;
pub mod document;
mod files;
#[doc(hidden)]
pub mod fixtures;
mod latency;
mod mem;
pub mod place;
pub mod rounds;
pub mod tools;
mod udp;

pub use place::Place;
pub use rounds::{Event, Skipped};

/// Why a comparison or a document could not be made.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CompareError {
    /// A tool name this mode does not know.
    #[error("unknown tool {name:?} for this mode; known: {}", .known.join(", "))]
    UnknownTool {
        /// The name as given.
        name: String,
        /// The names this mode knows.
        known: Vec<&'static str>,
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
    Peer(#[from] crate::tools::ToolError),
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
    #[error("{doing}{}: {source}", .path.as_ref().map(|p| format!(" {}", p.display())).unwrap_or_default())]
    Io {
        /// What was being done.
        doing: &'static str,
        /// The file or folder it was done in, when one.
        path: Option<std::path::PathBuf>,
        /// The error the system gave.
        source: std::io::Error,
    },
}

impl CompareError {
    /// An I/O error while `doing` something.
    pub fn io(doing: &'static str) -> impl FnOnce(std::io::Error) -> CompareError {
        move |source| CompareError::Io {
            doing,
            path: None,
            source,
        }
    }

    /// An I/O error while `doing` something in `path`.
    pub fn io_at(
        doing: &'static str,
        path: &std::path::Path,
    ) -> impl FnOnce(std::io::Error) -> CompareError {
        let path = Some(path.to_path_buf());
        move |source| CompareError::Io {
            doing,
            path,
            source,
        }
    }
}

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::tools::tool::ComparedTool;
use linerate_result::StudyPoint;

use crate::document::ManyRuns;

use crate::rounds::Ready;

/// What a comparison measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Memory to memory: linerate bench, iperf2, iperf3, nuttcp.
    Mem,
    /// Files from page cache to a directory: linerate send, rsync (daemon).
    Files,
    /// Ping-pong round trips: linerate latency, sockperf, qperf, iperf2 --bounceback.
    Latency,
    /// UDP at one rate: linerate bench --udp, iperf2 -u, iperf3 -u.
    Udp,
}

impl Mode {
    /// The mode's name in documents and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Mem => "mem",
            Mode::Files => "files",
            Mode::Latency => "latency",
            Mode::Udp => "udp",
        }
    }

    /// The tools run when none are named, linerate first; files mode
    /// names tools it has no adapter for, so they are reported skipped.
    pub fn default_tools(self) -> &'static [&'static str] {
        match self {
            Mode::Mem => &["linerate", "iperf2", "iperf3", "nuttcp"],
            Mode::Files => &["linerate", "rsync", "scp", "lftp", "gridftp", "wdt"],
            Mode::Latency => &["linerate", "sockperf", "qperf", "iperf2"],
            Mode::Udp => &["linerate", "iperf2", "iperf3"],
        }
    }
}

/// What files mode sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dataset {
    /// One 512 MiB file.
    Large,
    /// 4000 files of 4 KiB.
    Small,
    /// 8 files of 32 MiB and 2000 of 4 KiB.
    Mixed,
}

impl Dataset {
    /// The data set's name in documents and flags.
    pub fn as_str(self) -> &'static str {
        match self {
            Dataset::Large => "large",
            Dataset::Small => "small",
            Dataset::Mixed => "mixed",
        }
    }
}

/// What to compare, every field resolved.
#[derive(Debug, Clone)]
pub struct CompareSpec {
    /// What is measured.
    pub mode: Mode,
    /// Tools to run, in this order in the first round; empty for the
    /// mode's default.
    pub tools: Vec<String>,
    /// Files mode: what to send.
    pub dataset: Dataset,
    /// Stream counts (mem mode; files mode uses the largest for linerate).
    pub streams: Vec<u32>,
    /// Seconds per run (mem, latency and udp modes).
    pub seconds: u32,
    /// Rounds; the order of the tools rotates each round.
    pub rounds: u32,
    /// Latency mode: request and reply bytes, and whether over UDP.
    pub size: u32,
    /// Latency mode: the ping-pong over UDP.
    pub udp: bool,
    /// UDP mode: the one stream's rate, bits/s, and its datagrams' payload.
    pub rate_bps: u64,
    /// UDP mode: datagram payload bytes.
    pub len: u32,
    /// The linerate program to run as the tool `linerate`.
    pub linerate: PathBuf,
}

impl CompareSpec {
    /// The tools asked for, or the mode's default.
    fn tools(&self) -> Vec<String> {
        if self.tools.is_empty() {
            self.mode
                .default_tools()
                .iter()
                .map(|s| s.to_string())
                .collect()
        } else {
            self.tools.iter().map(|t| t.trim().to_lowercase()).collect()
        }
    }
}

/// A finished comparison: every run and its findings, and a table for people.
#[derive(Debug)]
pub struct Comparison {
    /// The runs, ready to become one `compare` document.
    pub runs: ManyRuns,
    /// Medians per tool, and linerate's ratio to the best peer, in columns.
    pub table: String,
}

/// Runs the comparison `spec` at `place`, telling `on` of every run and
/// every tool skipped.
pub fn compare(
    spec: &CompareSpec,
    place: &Place,
    on: &mut dyn FnMut(Event),
) -> Result<Comparison, CompareError> {
    let names = spec.tools();
    let asked = Asked {
        spec,
        place,
        names: &names,
    };
    type Summarise = fn(&[StudyPoint]) -> (BTreeMap<String, f64>, String);
    let (ran, summarise, definitions): (Ran, Summarise, &[(&str, &str)]) = match spec.mode {
        Mode::Mem => (
            mem::run(asked, on)?,
            mem::summarise_plain,
            &mem::DEFINITIONS,
        ),
        // One stream count: the memory mode's table, per tool.
        Mode::Files => (files::run(asked, on)?, mem::summarise, &files::DEFINITIONS),
        Mode::Latency => (
            latency::run(asked, on)?,
            latency::summarise,
            &latency::DEFINITIONS,
        ),
        Mode::Udp => (udp::run(asked, on)?, udp::summarise, &udp::DEFINITIONS),
    };
    let summary = summarise(&ran.points);
    Ok(finish(spec, place, ran, summary, definitions))
}

/// What a mode is asked to run: the comparison, where, and the tools
/// by name.
#[derive(Clone, Copy)]
struct Asked<'a> {
    spec: &'a CompareSpec,
    place: &'a Place,
    names: &'a [String],
}

/// What a mode ran, before its summary.
struct Ran {
    started: std::time::SystemTime,
    /// The tools that ran, in their first round's order.
    tools: Vec<&'static str>,
    skipped: Vec<crate::Skipped>,
    /// The mode's own parameters, beside those every mode records.
    own: serde_json::Value,
    points: Vec<StudyPoint>,
}

impl Ran {
    fn new<T: ComparedTool>(
        started: std::time::SystemTime,
        ready: &[Ready<T>],
        skipped: Vec<crate::Skipped>,
        own: serde_json::Value,
        points: Vec<StudyPoint>,
    ) -> Ran {
        let tools = ready.iter().map(|r| r.tool.name()).collect();
        Ran {
            started,
            tools,
            skipped,
            own,
            points,
        }
    }
}

/// The comparison: what ran, its findings and table, and what each
/// finding's name means.
fn finish(
    spec: &CompareSpec,
    place: &Place,
    ran: Ran,
    (findings, table): (BTreeMap<String, f64>, String),
    definitions: &[(&str, &str)],
) -> Comparison {
    Comparison {
        runs: ManyRuns {
            kind: "compare",
            detail: spec.mode.as_str().into(),
            started: ran.started,
            parameters: parameters(spec, place, ran.tools, &ran.skipped, ran.own),
            points: ran.points,
            headline: 0,
            findings,
            definitions: definitions
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        },
        table,
    }
}

/// The parameters every mode records, beside its own.
fn parameters(
    spec: &CompareSpec,
    place: &Place,
    tools: Vec<&'static str>,
    skipped: &[crate::Skipped],
    own: serde_json::Value,
) -> serde_json::Value {
    let mut p = serde_json::json!({
        "mode": spec.mode.as_str(), "tools": tools, "seconds": spec.seconds,
        "rounds": spec.rounds, "placement": place.label,
        "skipped": skipped.iter().map(|s| s.to_json()).collect::<Vec<_>>(),
    });
    if let (Some(p), serde_json::Value::Object(own)) = (p.as_object_mut(), own) {
        p.extend(own);
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_mode_defaults_to_linerate_first_and_named_tools_are_cleaned() {
        for m in [Mode::Mem, Mode::Files, Mode::Latency, Mode::Udp] {
            assert_eq!(m.default_tools()[0], "linerate", "{}", m.as_str());
        }
        let mut spec = CompareSpec {
            mode: Mode::Udp,
            tools: vec![],
            dataset: Dataset::Mixed,
            streams: vec![1],
            seconds: 1,
            rounds: 1,
            size: 64,
            udp: false,
            rate_bps: 1,
            len: 1472,
            linerate: "linerate".into(),
        };
        assert_eq!(spec.tools(), ["linerate", "iperf2", "iperf3"]);
        spec.tools = vec![" IPerf3".into()];
        assert_eq!(spec.tools(), ["iperf3"]);
    }

    #[test]
    fn a_modes_own_parameters_join_the_shared_ones() {
        let spec = CompareSpec {
            mode: Mode::Latency,
            tools: vec![],
            dataset: Dataset::Mixed,
            streams: vec![1],
            seconds: 3,
            rounds: 2,
            size: 64,
            udp: true,
            rate_bps: 1,
            len: 1472,
            linerate: "linerate".into(),
        };
        let skipped = [crate::Skipped {
            tool: "qperf".into(),
            reason: "qperf is not installed".into(),
            package: Some("qperf"),
        }];
        let p = parameters(
            &spec,
            &Place::loopback(),
            vec!["linerate"],
            &skipped,
            serde_json::json!({"size": 64}),
        );
        assert_eq!(p["mode"], "latency");
        assert_eq!(p["size"], 64);
        assert_eq!(p["rounds"], 2);
        assert_eq!(p["placement"], "loopback");
        assert_eq!(p["skipped"][0]["package"], "qperf");
    }
}
