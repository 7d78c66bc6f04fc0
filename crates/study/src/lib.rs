//! The seed papers' studies, each one call on labs it builds and removes:
//! [`wan`] (bandwidth against RTT with default and BDP-sized buffers, one
//! against several streams, a run over time with reordering, the window
//! law), [`lan`] (streams, MTU, IPv4 against IPv6, direct against a relay)
//! [`tuning`] (one stream before and after `tune plan`'s settings),
//! [`interference`] (a latency job beside a bandwidth job on a fabric, with
//! and without traffic classes) and [`striping`] (one link, N links bonded
//! and N links striped).

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod bed;
mod interference;
mod lan;
mod striping;
mod tuning;
mod wan;

/// Why a study could not run or gather its runs: the same faults as a
/// comparison's (a tool that failed, a lab, a run of linerate, sysctls,
/// the study's own files and threads).
pub use linerate_compare::CompareError as StudyError;

use linerate_engine::spec::BenchOptions;
use std::collections::BTreeMap;
use std::path::PathBuf;

use linerate_engine::spec::BenchSpec;
use linerate_lab::{BackendChoice, Conditions, LabSpec};
use linerate_result::{Limit, ResultDoc, StudyPoint};
use serde_json::Value;

pub use bed::lab_record;
pub use interference::{InterferenceStudy, allocations, interference};
pub use lan::{LanStudy, lan};
pub use striping::{StripingStudy, striping};
pub use tuning::{TuningStudy, tuning};
pub use wan::{WanStudy, wan};

/// What every study takes.
#[derive(Debug, Clone)]
pub struct StudyCommon {
    /// A short run of every part (about a minute).
    pub quick: bool,
    /// Seconds per bench run (default 5, 2 when quick).
    pub seconds: Option<f64>,
    /// Congestion control for every run (default: the host's).
    pub cc: Option<String>,
    /// Name of the lab the study builds (removed at the end).
    pub lab_name: String,
    /// The linerate program a lab's emulator runs.
    pub linerate: PathBuf,
    /// The command line each run's result records.
    pub command_line: Vec<String>,
}

impl StudyCommon {
    /// Seconds per bench run.
    pub fn seconds(&self) -> f64 {
        self.seconds.unwrap_or(if self.quick { 2.0 } else { 5.0 })
    }
}

/// What a study reports while it runs.
#[derive(Debug, Clone)]
pub enum StudyEvent {
    /// A lab is up: which, on which backend and why.
    LabUp(String),
    /// One run ended.
    Ran {
        /// The series it belongs to.
        series: String,
        /// What it varied.
        factors: BTreeMap<String, Value>,
        /// Its received throughput.
        bits_per_second: f64,
        /// What its verdict found limiting it.
        limit: Limit,
        /// A proxy job's run time (its slowest rank's), seconds.
        job_seconds: Option<f64>,
    },
}

/// Every run of a study, each told as it ends.
struct Collector<'a> {
    points: Vec<StudyPoint>,
    on: &'a mut dyn FnMut(StudyEvent),
}

impl Collector<'_> {
    fn add(&mut self, series: &str, factors: Value, doc: ResultDoc) {
        let factors: BTreeMap<String, Value> = serde_json::from_value(factors).unwrap_or_default();
        (self.on)(StudyEvent::Ran {
            series: series.into(),
            factors: factors.clone(),
            bits_per_second: doc.summary.bits_per_second,
            limit: doc.summary.verdict.limit,
            job_seconds: doc
                .fleet
                .as_ref()
                .and_then(|f| f.steps.first()?.job.as_ref())
                .map(|j| j.total_seconds),
        });
        self.points.push(StudyPoint {
            series: series.into(),
            factors,
            result: doc,
        });
    }
}

/// Counts the study's invalid runs as a finding of its own, naming them,
/// so that none stands silently among the others' figures.
fn mark_invalid_runs(
    points: &[StudyPoint],
    findings: &mut BTreeMap<String, f64>,
    definitions: &mut BTreeMap<String, String>,
) {
    let invalid: Vec<String> = points
        .iter()
        .filter(|p| p.result.summary.verdict.limit == Limit::Invalid)
        .map(|p| p.series.clone())
        .collect();
    findings.insert("invalid_runs".into(), invalid.len() as f64);
    let mut said = "Runs whose verdict is invalid: their senders saw round trips shorter than the path carries, so their rates do not stand for the path.".to_string();
    if !invalid.is_empty() {
        said.push_str(&format!(" In this study: {}.", invalid.join(", ")));
    }
    definitions.insert("invalid_runs".into(), said);
}

/// A bench of `seconds` on `streams` streams, sampled every second.
fn timed(seconds: f64, streams: u16) -> BenchSpec {
    BenchSpec {
        options: BenchOptions {
            streams,
            duration_ms: (seconds * 1000.0).round() as u64,
            ..BenchOptions::default()
        },
        ..BenchSpec::default()
    }
}

/// Two hosts behind an emulated WAN link of `rate_bps` and `rtt_us`.
fn wan_lab(c: &StudyCommon, backend: BackendChoice, rtt_us: u64, rate_bps: u64) -> LabSpec {
    LabSpec {
        name: c.lab_name.clone(),
        hosts: 2,
        router: false,
        mtu: 1500,
        backend,
        conditions: Conditions {
            rtt_us,
            rate_bps: Some(rate_bps),
            seed: 1,
            ..Conditions::default()
        },
        fabric: None,
        links: 1,
        bond: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use linerate_result::{IntervalSample, Side, TcpSample};

    fn second(side: Side, start: f64, mbps: f64, rtt_ms: f64) -> IntervalSample {
        IntervalSample {
            side,
            stream: 0,
            start,
            end: start + 1.0,
            bytes: (mbps * 1e6 / 8.0) as u64,
            bits_per_second: mbps * 1e6,
            tcp: Some(TcpSample {
                rtt_us: (rtt_ms * 1000.0) as u32,
                ..TcpSample::default()
            }),
            udp: None,
        }
    }

    #[test]
    fn a_stalled_second_does_not_decide_the_window_law() {
        let w = 4u64 << 20;
        // 4 MiB over 44 ms is 762.6 Mbit/s.
        let law = |rtt_ms: f64| w as f64 * 8.0 / (rtt_ms / 1e3) / 1e6;
        // Each second at both ends: the receiver's rate against the RTT the
        // sender sampled. The sender's own counts are its buffer's bursts.
        let both = |start: f64, mbps: f64, rtt_ms: f64| {
            [
                second(Side::Sender, start, 2.0 * mbps, rtt_ms),
                second(Side::Receiver, start, mbps, 1.0),
            ]
        };
        let run: Vec<IntervalSample> = [
            both(0.0, 300.0, 44.0), // omitted: slow start
            both(1.0, law(44.5), 44.5),
            both(2.0, 554.0, 51.8), // a slow second
            both(3.0, law(44.2), 44.2),
            both(4.0, 0.99 * law(44.0), 44.0),
        ]
        .concat();
        let r = wan::window_law_by_interval(&run, w).unwrap();
        assert!((r - 1.0).abs() < 0.01, "{r}");
        // Too few whole seconds: the caller falls back to the whole run.
        assert_eq!(wan::window_law_by_interval(&run[..6], w), None);
    }

    use linerate_compare::fixtures::throughput_doc as doc;

    #[test]
    fn invalid_runs_are_counted_and_named() {
        let mut bad = doc(1.0);
        bad.summary.verdict.limit = Limit::Invalid;
        let points = vec![
            linerate_compare::rounds::point("bdp/P1", Value::Null, bad),
            linerate_compare::rounds::point("default/P1", Value::Null, doc(1.0)),
        ];
        let (mut f, mut d) = (BTreeMap::new(), BTreeMap::new());
        mark_invalid_runs(&points, &mut f, &mut d);
        assert_eq!(f["invalid_runs"], 1.0);
        assert!(d["invalid_runs"].ends_with("In this study: bdp/P1."));
    }

    #[test]
    fn quick_studies_run_shorter_unless_told_the_time() {
        let mut c = StudyCommon {
            quick: true,
            seconds: None,
            cc: None,
            lab_name: "s".into(),
            linerate: "x".into(),
            command_line: vec![],
        };
        assert_eq!(c.seconds(), 2.0);
        c.quick = false;
        assert_eq!(c.seconds(), 5.0);
        c.seconds = Some(1.5);
        assert_eq!(c.seconds(), 1.5);
        let lab = wan_lab(&c, BackendChoice::Auto, 44_000, 10_000_000_000);
        assert_eq!((lab.hosts, lab.conditions.rtt_us), (2, 44_000));
    }
}
