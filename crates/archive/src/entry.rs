//! What the archive indexes of a result, and the series it belongs to: the
//! same tool, kind, hosts, path and the settings that change what a run
//! carries. A series' id is a hash of those, so two hosts writing one
//! site archive name the same series alike.

use std::collections::BTreeMap;

use linerate_result::ResultDoc;
use serde_json::Value;

use crate::normal::Better;

/// The parameters that make two runs of one kind different series, as
/// a result document's parameters name them: the protocol and direction,
/// the streams, a rate cap or a search, the socket's own settings, the
/// write size and encryption. The run's length is not one of them.
const SERIES_PARAMETERS: &[&str] = &[
    "protocol",
    "direction",
    "streams",
    "pacing_rate",
    "udp",
    "rate_search",
    "window",
    "rcvbuf",
    "sndbuf",
    "congestion",
    "mss",
    // Only where the command gave it (-l/--len).
    "write_len",
    "encryption",
    "payload",
];

/// One result as the archive indexes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// The series' id: 16 hex digits of a hash of [`SeriesKey`].
    pub series: String,
    /// What defines the series.
    pub key: SeriesKey,
    /// Seconds since the Unix epoch when the run started.
    pub started_at: f64,
    /// The version of the tool that measured it.
    pub tool_version: String,
    /// The run's headline figure ([`Entry::unit`]); `None` when it has none.
    pub value: Option<f64>,
    /// What the headline figure is.
    pub unit: Unit,
    /// The verdict's limit, where the run has one.
    pub limit: Option<String>,
    /// The run was cut short (Ctrl-C): kept, but never judged.
    pub interrupted: bool,
}

/// What defines a series.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SeriesKey {
    /// The tool that measured (`linerate`, `iperf3`): series never mix tools.
    pub tool: String,
    /// The result's kind (`bench`, `latency`, `transfer`, ...).
    pub kind: String,
    /// The host the data left, by its name.
    pub source: String,
    /// The host the data reached, by its name.
    pub destination: String,
    /// The path between them: the address measured, or the lab and its
    /// conditions.
    pub path: String,
    /// The settings that make runs of one kind differ, as the result
    /// document gives them.
    pub settings: BTreeMap<String, Value>,
}

impl SeriesKey {
    /// The series' id: the first 16 hex digits of the BLAKE3 hash of the
    /// key's canonical JSON (its maps are ordered).
    pub fn id(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        blake3::hash(&json).to_hex()[..16].to_string()
    }
}

/// What a series' headline figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// Bits per second carried.
    BitsPerSecond,
    /// A median round trip, in microseconds.
    RoundTripMicroseconds,
    /// None: the kind has no one figure (a study, a mesh).
    None,
}

impl Unit {
    /// The unit's name as the archive stores it.
    pub fn as_str(self) -> &'static str {
        match self {
            Unit::BitsPerSecond => "bits_per_second",
            Unit::RoundTripMicroseconds => "round_trip_us",
            Unit::None => "none",
        }
    }

    /// The unit a stored name stands for.
    pub fn from_stored(name: &str) -> Unit {
        match name {
            "bits_per_second" => Unit::BitsPerSecond,
            "round_trip_us" => Unit::RoundTripMicroseconds,
            _ => Unit::None,
        }
    }

    /// Which way is better.
    pub fn better(self) -> Better {
        match self {
            Unit::RoundTripMicroseconds => Better::Lower,
            _ => Better::Higher,
        }
    }
}

impl Entry {
    /// Every entry of a linerate result document: one, or for a
    /// many-host run (incast, mesh) one a pair of hosts and step, each
    /// pair its own series (docs/archive.md#series); the first entry
    /// keeps the document.
    pub fn all_of(doc: &ResultDoc) -> Vec<Entry> {
        let pairs = pairs(doc);
        if pairs.is_empty() {
            vec![Entry::of(doc)]
        } else {
            pairs
        }
    }

    /// The entry of a linerate result document, as one run.
    pub fn of(doc: &ResultDoc) -> Entry {
        let key = series_key(doc, "linerate");
        let (value, unit) = headline(doc);
        Entry {
            series: key.id(),
            key,
            started_at: doc.started_at,
            tool_version: doc.linerate_version.clone(),
            value,
            unit,
            limit: serde_json::to_value(doc.summary.verdict.limit)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string)),
            interrupted: doc.interrupted,
        }
    }
}

/// The series of `doc`, measured by `tool`.
pub fn series_key(doc: &ResultDoc, tool: &str) -> SeriesKey {
    let client = doc.hosts.client.hostname.clone();
    let server = doc
        .hosts
        .server
        .as_ref()
        .map_or_else(|| target(doc).unwrap_or_default(), |s| s.hostname.clone());
    let reverse = doc.parameters.get("direction").and_then(Value::as_str) == Some("reverse");
    let (source, destination) = if reverse {
        (server, client)
    } else {
        (client, server)
    };
    // The write size is chosen by the run where the user gave none (a busy
    // host gets smaller writes): a series by what was asked, not chosen.
    let len_asked = doc
        .command_line
        .iter()
        .any(|w| w == "-l" || w.starts_with("--len") || (w.starts_with("-l") && w.len() > 2));
    let settings = SERIES_PARAMETERS
        .iter()
        .filter(|k| **k != "write_len" || len_asked)
        .filter_map(|k| {
            let v = doc.parameters.get(*k)?;
            (!v.is_null()).then(|| (k.to_string(), v.clone()))
        })
        .collect();
    SeriesKey {
        tool: tool.to_string(),
        kind: doc.kind.clone(),
        source,
        destination,
        path: path(doc),
        settings,
    }
}

/// The path a run measured: a lab by its name and backend, or the address
/// the command named. A lab's conditions are not part of it: a lab whose
/// rate or loss is changed (`lab set`) is one path that got slower, as a
/// real one does (docs/archive.md#series).
fn path(doc: &ResultDoc) -> String {
    match &doc.lab {
        Some(lab) => format!("lab {} {}", lab.name, lab.backend),
        None => target(doc).unwrap_or_default(),
    }
}

/// What the command was pointed at ([`ResultDoc::target`]), or a send's
/// sources and target (every such word: what was sent is part of what a transfer
/// measures; the command line has its secrets redacted).
fn target(doc: &ResultDoc) -> Option<String> {
    let words = &doc.command_line;
    if let Some(at) = words.iter().position(|w| w == "send") {
        let given: Vec<&str> = words[at + 1..]
            .iter()
            .map(String::as_str)
            .filter(|w| !w.starts_with('-'))
            .collect();
        return (!given.is_empty()).then(|| given.join(" "));
    }
    doc.target().map(str::to_string)
}

/// A many-host run's pairs: for each step and each sending and receiving
/// host, what the flows between them carried; the step's factors (streams,
/// message size) are the series' settings.
fn pairs(doc: &ResultDoc) -> Vec<Entry> {
    let Some(fleet) = &doc.fleet else {
        return Vec::new();
    };
    let name = |rank: u32| {
        fleet
            .hosts
            .iter()
            .find(|h| h.rank == rank)
            .map_or_else(|| format!("rank {rank}"), |h| h.name.clone())
    };
    let base = series_key(doc, "linerate");
    let mut entries = Vec::new();
    for step in &fleet.steps {
        // What each pair's flows carried (those that ran), and the limit
        // its first flow's verdict named.
        let mut carried: BTreeMap<(u32, u32), (Option<f64>, Option<String>)> = BTreeMap::new();
        for flow in &step.flows {
            let (bps, limit) = carried.entry((flow.from, flow.to)).or_default();
            if flow.error.is_none() && flow.bits_per_second.is_finite() {
                *bps = Some(bps.unwrap_or(0.0) + flow.bits_per_second);
            }
            if limit.is_none() {
                *limit = flow
                    .limit
                    .and_then(|l| serde_json::to_value(l).ok())
                    .and_then(|v| v.as_str().map(str::to_string));
            }
        }
        for ((from, to), (bps, limit)) in carried {
            let mut settings = base.settings.clone();
            // The pair is named by its hosts; its ranks may change.
            settings.extend(
                step.factors
                    .iter()
                    .filter(|(k, _)| !matches!(k.as_str(), "from" | "to"))
                    .map(|(k, v)| (k.clone(), Value::from(*v))),
            );
            let key = SeriesKey {
                source: name(from),
                destination: name(to),
                settings,
                ..base.clone()
            };
            entries.push(Entry {
                series: key.id(),
                key,
                started_at: doc.started_at,
                tool_version: doc.linerate_version.clone(),
                value: bps,
                unit: Unit::BitsPerSecond,
                limit,
                interrupted: doc.interrupted,
            });
        }
    }
    entries
}

/// A run's headline figure: a latency run's first step's median round
/// trip, else the throughput of a kind that has one.
fn headline(doc: &ResultDoc) -> (Option<f64>, Unit) {
    if let Some(step) = doc.latency.as_ref().and_then(|l| l.steps.first()) {
        return (Some(step.round_trip_us.p50), Unit::RoundTripMicroseconds);
    }
    if doc.study.is_some() || doc.fleet.is_some() {
        return (None, Unit::None);
    }
    let bps = doc.summary.bits_per_second;
    (bps.is_finite().then_some(bps), Unit::BitsPerSecond)
}
