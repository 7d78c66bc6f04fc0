//! The document of many runs: one `linerate.result/1` whose `study` holds
//! every run with its parameters, and the findings drawn from them.
//! Studies and `compare` write theirs through here.

use std::collections::BTreeMap;
use std::time::SystemTime;

use anyhow::bail;
use linerate_result::{ResultDoc, Study, StudyPoint};
use serde_json::json;

use crate::output;

/// One document of `kind` whose `study` holds every run and the findings.
#[allow(clippy::too_many_arguments)]
pub fn finish_as(
    kind: &str,
    kind_detail: &str,
    started: SystemTime,
    parameters: serde_json::Value,
    points: Vec<StudyPoint>,
    headline: usize,
    findings: BTreeMap<String, f64>,
    definitions: BTreeMap<String, String>,
    json_path: &str,
) -> anyhow::Result<()> {
    let Some(head) = points.get(headline).or(points.last()) else {
        bail!("the study produced no runs");
    };
    let mut parameters = parameters;
    if kind == "study" {
        parameters["study"] = json!(kind_detail);
    }
    let doc = ResultDoc {
        schema: linerate_result::SCHEMA.into(),
        kind: kind.into(),
        linerate_version: env!("CARGO_PKG_VERSION").into(),
        command_line: std::env::args().collect(),
        started_at: started
            .duration_since(SystemTime::UNIX_EPOCH)
            .map(|d| d.as_secs_f64())
            .unwrap_or(0.0),
        hosts: head.result.hosts.clone(),
        parameters,
        intervals: Vec::new(),
        streams: Vec::new(),
        summary: head.result.summary.clone(),
        lab: head.result.lab.clone(),
        latency: None,
        study: Some(Study {
            points,
            findings,
            definitions,
        }),
        fleet: None,
        interrupted: false,
    };
    output::write_json(&doc, json_path)
}
