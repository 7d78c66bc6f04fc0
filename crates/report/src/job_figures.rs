//! The figures of proxy jobs and of the interference study (seed 002): a
//! job's iteration times rank by rank (the paper's per-node figures 9 and
//! 10), and for the study each job's time per fabric configuration (its
//! figure 8) and each node's median iteration per configuration. The
//! study's pause durations (its Table II) are a table: [`pause_rows`].

use std::collections::BTreeMap;

use linerate_result::ResultDoc;
use linerate_result::fleet::JobResult;

use crate::Input;
use crate::chart::{Bar, Bars, Lines, Series};

/// A figure to draw.
pub enum Planned {
    /// A job's iteration times over its run, rank by rank.
    Iterations { caption: String, spec: Lines },
    /// Each node's median iteration per configuration.
    PerNode { caption: String, spec: Lines },
    /// A job's time per configuration.
    Times { caption: String, spec: Bars },
}

/// Most ranks drawn as lines in one figure: more are unreadable.
const MAX_RANK_LINES: usize = 16;
/// Most points a rank's line keeps; longer runs are cut into this many
/// buckets, each drawn as its longest iteration so no stall is hidden.
const MAX_POINTS: usize = 1000;

/// Every job figure the inputs support.
pub fn plan(inputs: &[Input]) -> Vec<Planned> {
    let mut out = Vec::new();
    for input in inputs {
        let name = input.path.rsplit('/').next().unwrap_or(&input.path);
        if let Some(job) = job_of(&input.doc) {
            iterations(&mut out, name, &input.doc, job);
        }
        if is_interference(&input.doc) {
            interference(&mut out, name, &input.doc);
        }
    }
    out
}

/// The job a `linerate job` document ran.
pub fn job_of(doc: &ResultDoc) -> Option<&JobResult> {
    doc.fleet.as_ref()?.steps.first()?.job.as_ref()
}

fn is_interference(doc: &ResultDoc) -> bool {
    doc.study.is_some()
        && doc.parameters.get("study").and_then(|s| s.as_str()) == Some("interference")
}

/// Rank `rank`'s host, as the fleet named it.
fn host_of(doc: &ResultDoc, rank: u32) -> String {
    doc.fleet
        .as_ref()
        .and_then(|f| f.hosts.iter().find(|h| h.rank == rank))
        .map_or_else(|| format!("rank {rank}"), |h| h.name.clone())
}

/// `values` (one per iteration) as at most [`MAX_POINTS`] points: every
/// iteration, or each bucket's longest at the bucket's first iteration.
fn thinned(values: &[f64]) -> (Vec<(f64, f64)>, usize) {
    let per = values.len().div_ceil(MAX_POINTS).max(1);
    let points = values
        .chunks(per)
        .enumerate()
        .map(|(i, c)| ((i * per + 1) as f64, c.iter().copied().fold(0.0, f64::max)))
        .collect();
    (points, per)
}

fn iterations(out: &mut Vec<Planned>, name: &str, doc: &ResultDoc, job: &JobResult) {
    let mut per = 1;
    let series: Vec<Series> = job
        .ranks
        .iter()
        .filter(|r| !r.iteration_us.is_empty())
        .take(MAX_RANK_LINES)
        .map(|r| {
            let ms: Vec<f64> = r.iteration_us.iter().map(|us| us / 1000.0).collect();
            let (points, bucket) = thinned(&ms);
            per = per.max(bucket);
            Series {
                name: format!("rank {} ({})", r.rank, host_of(doc, r.rank)),
                points,
            }
        })
        .collect();
    if series.is_empty() {
        return;
    }
    let shown = match (job.ranks.len(), per) {
        (n, 1) if n <= MAX_RANK_LINES => "every rank, every iteration".to_string(),
        (n, 1) => format!("the first {MAX_RANK_LINES} of {n} ranks, every iteration"),
        (n, p) => format!(
            "{} of {n} ranks, each point the longest of {p} iterations",
            n.min(MAX_RANK_LINES)
        ),
    };
    out.push(Planned::Iterations {
        caption: format!(
            "linerate job {}: each rank's iteration time (compute and exchange) in order, {shown}; \
             a rank's stalls stand out as spikes. The job took {:.2} s (its slowest rank); the \
             median iteration over ranks was {:.0} us.",
            job.kind, job.total_seconds, job.median_iteration_us
        ),
        spec: Lines {
            title: format!("Job {}: iteration times per rank ({name})", job.kind),
            x_label: "iteration".into(),
            y_label: "ms".into(),
            series,
            integer_x: true,
            ..Lines::default()
        },
    });
}

/// The study's points of one job (`latency` or `bandwidth`), by
/// configuration in the order they ran.
fn points_of<'a>(doc: &'a ResultDoc, job: &str) -> Vec<(String, &'a ResultDoc, &'a JobResult)> {
    let Some(study) = &doc.study else {
        return Vec::new();
    };
    study
        .points
        .iter()
        .filter_map(|p| {
            let (which, config) = p.series.split_once('/')?;
            if which != job {
                return None;
            }
            Some((config.to_string(), &p.result, job_of(&p.result)?))
        })
        .collect()
}

fn interference(out: &mut Vec<Planned>, name: &str, doc: &ResultDoc) {
    let latency = points_of(doc, "latency");
    let bandwidth = points_of(doc, "bandwidth");
    if !latency.is_empty() {
        let bars = latency
            .iter()
            .map(|(config, _, j)| Bar {
                label: config.clone(),
                value: j.total_seconds,
                min: j
                    .ranks
                    .iter()
                    .map(|r| r.total_seconds)
                    .fold(j.total_seconds, f64::min),
                max: j.total_seconds,
                group: 0,
            })
            .collect();
        out.push(Planned::Times {
            caption: "The latency job's run time (its slowest rank) in each configuration of the \
                      fabric, alone and beside the bandwidth job, as the seed's figure 8; the \
                      whisker's foot is its fastest rank."
                .into(),
            spec: Bars {
                title: format!("All-to-all run time per configuration ({name})"),
                y_label: "seconds".into(),
                bars,
                legend: Vec::new(),
            },
        });
    }
    if !bandwidth.is_empty() {
        let bars = bandwidth
            .iter()
            .map(|(config, _, j)| {
                let medians = j.ranks.iter().map(|r| r.median_us / 1000.0);
                Bar {
                    label: config.clone(),
                    value: j.median_iteration_us / 1000.0,
                    min: medians.clone().fold(f64::INFINITY, f64::min),
                    max: medians.fold(0.0, f64::max),
                    group: 1,
                }
            })
            .filter(|b| b.min.is_finite())
            .collect();
        out.push(Planned::Times {
            caption: "The bandwidth job's median iteration time in each configuration (it runs \
                      for a set time, so its pace, not its run time, is what the latency job \
                      costs it); whiskers span its ranks' medians."
                .into(),
            spec: Bars {
                title: format!("Halo3d iteration time per configuration ({name})"),
                y_label: "ms".into(),
                bars,
                legend: Vec::new(),
            },
        });
    }
    for (job, points) in [("all-to-all", &latency), ("halo3d", &bandwidth)] {
        per_node(out, name, job, points);
    }
}

/// Each node's median iteration, one line per configuration: which nodes a
/// configuration slowed (the seed's figures 9 and 10).
fn per_node(
    out: &mut Vec<Planned>,
    name: &str,
    job: &str,
    points: &[(String, &ResultDoc, &JobResult)],
) {
    let series: Vec<Series> = points
        .iter()
        .map(|(config, _, j)| Series {
            name: config.clone(),
            points: j
                .ranks
                .iter()
                .map(|r| (f64::from(r.rank), r.median_us / 1000.0))
                .collect(),
        })
        .filter(|s| !s.points.is_empty())
        .collect();
    if series.is_empty() {
        return;
    }
    let hosts: Vec<String> = points
        .first()
        .map(|(_, doc, j)| {
            j.ranks
                .iter()
                .map(|r| format!("{} {}", r.rank, host_of(doc, r.rank)))
                .collect()
        })
        .unwrap_or_default();
    out.push(Planned::PerNode {
        caption: format!(
            "Each {job} rank's median iteration time per configuration, as the seed's per-node \
             figures 9 and 10 (ranks: {}); p99 and every iteration are in each run's document.",
            hosts.join(", ")
        ),
        spec: Lines {
            title: format!("{job}: median iteration per node ({name})"),
            x_label: "rank".into(),
            y_label: "ms".into(),
            series,
            points: true,
            integer_x: true,
            ..Lines::default()
        },
    });
}

/// One row of the pause table: a configuration, a switch, and the time its
/// ports were paused by their neighbours and paused them, us.
#[derive(Debug, Clone, PartialEq)]
pub struct PauseRow {
    /// The study's configuration.
    pub config: String,
    /// The switch.
    pub switch: String,
    /// Pause received, us.
    pub received_us: f64,
    /// Pause sent, us.
    pub sent_us: f64,
}

/// The interference study's pause durations per configuration and switch
/// (the seed's Table II), from its findings.
pub fn pause_rows(doc: &ResultDoc) -> Vec<PauseRow> {
    let Some(study) = doc.study.as_ref().filter(|_| is_interference(doc)) else {
        return Vec::new();
    };
    let mut rows: BTreeMap<(String, String), PauseRow> = BTreeMap::new();
    for (key, value) in &study.findings {
        let (rest, received) = if let Some(r) = key.strip_prefix("pause_received_us_") {
            (r, true)
        } else if let Some(r) = key.strip_prefix("pause_sent_us_") {
            (r, false)
        } else {
            continue;
        };
        // Configurations are named with '-', switches without '_'.
        let Some((config, switch)) = rest.rsplit_once('_') else {
            continue;
        };
        let row = rows
            .entry((config.to_string(), switch.to_string()))
            .or_insert_with(|| PauseRow {
                config: config.to_string(),
                switch: switch.to_string(),
                received_us: 0.0,
                sent_us: 0.0,
            });
        if received {
            row.received_us = *value;
        } else {
            row.sent_us = *value;
        }
    }
    rows.into_values().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_runs_are_thinned_to_each_buckets_longest_iteration() {
        let v: Vec<f64> = (0..10).map(f64::from).collect();
        assert_eq!(thinned(&v).1, 1);
        assert_eq!(thinned(&v).0.len(), 10);
        let mut long = vec![1.0; 2500];
        long[1234] = 50.0;
        let (points, per) = thinned(&long);
        assert_eq!(per, 3);
        assert!(points.len() <= MAX_POINTS);
        assert_eq!(points.iter().filter(|p| p.1 == 50.0).count(), 1);
        assert_eq!(points[411], (1234.0, 50.0));
    }
}
