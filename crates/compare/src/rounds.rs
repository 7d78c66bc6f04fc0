//! What every comparison shares: which of the named tools can run here,
//! the order of the tools in each round, one run as a study point, and
//! medians over rounds.

use std::collections::BTreeMap;
use std::path::Path;

use crate::tools::tool::{ComparedTool, find_on_path, not_runnable};
use linerate_result::stats::median;
use linerate_result::{ResultDoc, StudyPoint};
use serde_json::Value;

use crate::CompareError;

/// A tool that cannot run here, why, and what would provide it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// The tool's name as asked.
    pub tool: String,
    /// Why it does not run.
    pub reason: String,
    /// The Debian package that provides it, when installing would help.
    pub package: Option<&'static str>,
}

impl Skipped {
    /// As the comparison's parameters record it.
    pub fn to_json(&self) -> Value {
        serde_json::json!({"tool": self.tool, "reason": self.reason, "package": self.package})
    }
}

/// What a comparison reports while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// A named tool will not run.
    Skipped(Skipped),
    /// One client run ended.
    Ran {
        /// Runs done so far, this one included.
        done: usize,
        /// Runs in the whole comparison.
        total: usize,
        /// The round, from 1.
        round: u32,
        /// The tool that ran.
        tool: &'static str,
        /// Its figures in words (rate, round trip, loss).
        outcome: String,
    },
}

/// Counts a comparison's runs as they end.
pub(crate) struct Progress {
    done: usize,
    total: usize,
}

impl Progress {
    /// A comparison of `total` runs.
    pub fn of(total: usize) -> Progress {
        Progress { done: 0, total }
    }

    /// The next run ended: `tool` in round `round` (from 0), its figures
    /// in words.
    pub fn ran(&mut self, round: u32, tool: &'static str, outcome: String) -> Event {
        self.done += 1;
        Event::Ran {
            done: self.done,
            total: self.total,
            round: round + 1,
            tool,
            outcome,
        }
    }
}

/// A tool found and able to run, with the program to start.
pub(crate) struct Ready<T> {
    pub tool: T,
    pub exe: String,
}

/// The named tools that can run here (linerate as `linerate`, the peers
/// found on PATH), and those skipped with the reason and the package.
/// `unable` says why a known tool cannot run with these settings.
pub(crate) fn resolve<T: ComparedTool>(
    names: &[String],
    linerate: &Path,
    unable: &dyn Fn(T) -> Option<String>,
) -> Result<(Vec<Ready<T>>, Vec<Skipped>), CompareError> {
    let (mut ready, mut skipped) = (Vec::new(), Vec::new());
    for name in names {
        let name = name.trim().to_lowercase();
        let Some(tool) = T::from_name(&name) else {
            if let Some(why) = not_runnable(&name) {
                skipped.push(Skipped {
                    tool: name,
                    reason: why.into(),
                    package: None,
                });
                continue;
            }
            return Err(CompareError::UnknownTool {
                name,
                known: T::ALL.iter().map(|t| t.name()).collect(),
            });
        };
        if let Some(reason) = unable(tool) {
            skipped.push(Skipped {
                tool: name,
                reason,
                package: None,
            });
            continue;
        }
        let exe = if tool.name() == "linerate" {
            Some(linerate.to_path_buf())
        } else {
            find_on_path(tool.binary())
        };
        match exe {
            Some(exe) => ready.push(Ready {
                tool,
                exe: exe.to_string_lossy().into_owned(),
            }),
            None => skipped.push(Skipped {
                tool: name,
                reason: format!("{} is not installed", tool.binary()),
                package: Some(tool.package()),
            }),
        }
    }
    if ready.is_empty() {
        return Err(CompareError::NothingRuns);
    }
    Ok((ready, skipped))
}

/// The index of the tool that runs `k`-th in `round` of `n` tools: the
/// order rotates each round so no tool always runs first (on a warm or a
/// cold machine).
pub(crate) fn nth_in_round(round: u32, k: usize, n: usize) -> usize {
    (k + round as usize) % n
}

/// The result document linerate's `command` printed.
pub(crate) fn linerate_doc(command: &'static str, stdout: &str) -> Result<ResultDoc, CompareError> {
    serde_json::from_str(stdout).map_err(|source| CompareError::NoResult { command, source })
}

/// One run as a study point of series `tool`.
pub fn point(tool: &str, factors: Value, result: ResultDoc) -> StudyPoint {
    StudyPoint {
        series: tool.into(),
        factors: serde_json::from_value(factors).unwrap_or_default(),
        result,
    }
}

/// The median of factor `key` over each tool's points.
pub(crate) fn medians(points: &[StudyPoint], key: &str) -> BTreeMap<String, f64> {
    let mut by: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for p in points {
        if let Some(v) = p.factors.get(key).and_then(|v| v.as_f64()) {
            by.entry(p.series.clone()).or_default().push(v);
        }
    }
    by.into_iter().map(|(t, v)| (t, median(v))).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::throughput_doc as doc;
    use crate::tools::Tool;
    use crate::tools::rounds::LatencyPeer;

    #[test]
    fn every_tool_runs_first_once_in_as_many_rounds() {
        for n in 1..6 {
            let firsts: std::collections::BTreeSet<usize> =
                (0..n as u32).map(|r| nth_in_round(r, 0, n)).collect();
            assert_eq!(firsts.len(), n);
            for r in 0..n as u32 {
                let order: std::collections::BTreeSet<usize> =
                    (0..n).map(|k| nth_in_round(r, k, n)).collect();
                assert_eq!(order.len(), n, "round {r} runs every tool once");
            }
        }
    }

    #[test]
    fn linerate_is_this_program_and_wanted_tools_are_named_with_a_reason() {
        let me = Path::new("/opt/linerate");
        let names = vec!["Linerate".to_string(), "wdt".into()];
        let (ready, skipped) = resolve::<Tool>(&names, me, &|_| None).unwrap();
        assert_eq!(ready.len(), 1);
        assert_eq!(ready[0].exe, "/opt/linerate");
        assert_eq!(skipped[0].tool, "wdt");
        assert!(skipped[0].reason.contains("not packaged"));
    }

    #[test]
    fn an_unknown_tool_is_an_error_that_lists_the_known() {
        let e = resolve::<Tool>(&["ipref".into()], Path::new("x"), &|_| None)
            .err()
            .unwrap();
        let words = e.to_string();
        assert!(
            words.contains("\"ipref\"") && words.contains("iperf3"),
            "{words}"
        );
    }

    #[test]
    fn a_tool_unable_to_run_these_settings_is_skipped_and_none_left_is_an_error() {
        let e = resolve::<LatencyPeer>(&["linerate".into()], Path::new("x"), &|_| {
            Some("too small".into())
        })
        .err()
        .unwrap();
        assert!(matches!(e, CompareError::NothingRuns));
    }

    #[test]
    fn medians_are_per_tool_and_skip_points_without_the_factor() {
        let pts = vec![
            point("a", serde_json::json!({"rtt_us": 10.0}), doc(0.0)),
            point("a", serde_json::json!({"rtt_us": 30.0}), doc(0.0)),
            point("a", serde_json::json!({"rtt_us": 20.0}), doc(0.0)),
            point("b", serde_json::json!({"other": 1.0}), doc(0.0)),
        ];
        let m = medians(&pts, "rtt_us");
        assert_eq!(m.get("a"), Some(&20.0));
        assert!(!m.contains_key("b"));
    }
}
