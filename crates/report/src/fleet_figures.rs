//! The figures of many-host runs: an incast sweep's aggregate throughput
//! and Jain's fairness index against the number of flows, one line per
//! message size and source-host count (the seed RoCE paper's figure 4),
//! and a mesh's matrix of pair rates.

use std::collections::BTreeMap;

use linerate_result::fleet::{Fleet, FleetStep};

use crate::Input;
use crate::chart::{Lines, Matrix, Series};
use linerate_probe::units::fmt_size_label;

/// A figure to draw.
pub enum Planned {
    Incast { caption: String, spec: Lines },
    Fairness { caption: String, spec: Lines },
    Mesh { caption: String, spec: Matrix },
}

/// Every many-host figure the inputs support.
pub fn plan(inputs: &[Input]) -> Vec<Planned> {
    let mut out = Vec::new();
    for input in inputs {
        let Some(fleet) = &input.doc.fleet else {
            continue;
        };
        let name = input.path.rsplit('/').next().unwrap_or(&input.path);
        match input.doc.kind.as_str() {
            "incast" => incast(&mut out, name, fleet),
            "mesh" => mesh(&mut out, name, fleet),
            _ => {}
        }
    }
    out
}

fn factor(step: &FleetStep, name: &str) -> Option<u64> {
    step.factors.get(name).copied()
}

/// One series per (message size, source hosts), the steps' `y` against
/// their flows.
fn by_size_and_hosts(steps: &[FleetStep], y: impl Fn(&FleetStep) -> f64) -> Vec<Series> {
    let mut series: BTreeMap<(u64, u64), Vec<(f64, f64)>> = BTreeMap::new();
    for s in steps {
        let (Some(size), Some(hosts), Some(senders)) = (
            factor(s, "message_bytes"),
            factor(s, "source_hosts"),
            factor(s, "senders_per_host"),
        ) else {
            continue;
        };
        let flows = (senders * hosts) as f64;
        series.entry((size, hosts)).or_default().push((flows, y(s)));
    }
    series
        .into_iter()
        .map(|((size, hosts), mut points)| {
            points.sort_by(|a, b| a.0.total_cmp(&b.0));
            Series {
                name: format!("{} messages, {hosts} host(s)", fmt_size_label(size as f64)),
                points,
            }
        })
        .collect()
}

fn incast(out: &mut Vec<Planned>, name: &str, fleet: &Fleet) {
    let throughput = by_size_and_hosts(&fleet.steps, |s| s.aggregate_bits_per_second / 1e9);
    if throughput.iter().all(|s| s.points.is_empty()) {
        return;
    }
    let failed = fleet.failed().count();
    let note = match failed {
        0 => String::new(),
        n => format!(" {n} rank(s) failed; their flows are left out."),
    };
    out.push(Planned::Incast {
        caption: format!(
            "linerate incast: the receiver's aggregate throughput against the flows into it \
             (senders per host x source hosts), one line per message size and number of \
             source hosts, as the seed's figure 4.{note}"
        ),
        spec: Lines {
            title: format!("Incast: aggregate throughput ({name})"),
            x_label: "flows into the receiver".into(),
            y_label: "Gbit/s".into(),
            series: throughput,
            points: true,
            integer_x: true,
            ..Lines::default()
        },
    });
    out.push(Planned::Fairness {
        caption: "Jain's fairness index of the flows' rates at each step: 1 when every flow got \
                  the same, 1/n when one took everything."
            .into(),
        spec: Lines {
            title: format!("Incast: fairness ({name})"),
            x_label: "flows into the receiver".into(),
            y_label: "Jain's index".into(),
            series: by_size_and_hosts(&fleet.steps, |s| s.jain_index),
            points: true,
            integer_x: true,
            ..Lines::default()
        },
    });
}

fn mesh(out: &mut Vec<Planned>, name: &str, fleet: &Fleet) {
    let cells: Vec<(usize, usize, f64)> = fleet
        .steps
        .iter()
        .flat_map(|s| &s.flows)
        .filter(|f| f.error.is_none())
        .map(|f| (f.from as usize, f.to as usize, f.bits_per_second / 1e9))
        .collect();
    if cells.is_empty() {
        return;
    }
    let all_at_once = fleet.steps.len() == 1 && fleet.steps[0].flows.len() > 1;
    out.push(Planned::Mesh {
        caption: format!(
            "linerate mesh: each sender's rate to each receiver (Gbit/s), {}; an empty cell \
             did not run (its error is in the result).",
            if all_at_once {
                "every pair at once"
            } else {
                "one pair at a time"
            }
        ),
        spec: Matrix {
            title: format!("Mesh: pair rates ({name})"),
            labels: fleet.hosts.iter().map(|h| h.name.clone()).collect(),
            cells,
            unit: "Gbit/s".into(),
        },
    });
}
