//! The striping study's figure (seeds 000 and 004): what one link, the
//! links bonded with more and more streams, and the links striped carried,
//! memory to memory and as a file transfer, side by side.

use linerate_result::ResultDoc;

use crate::Input;
use crate::chart::{Bar, Bars};

/// Bar groups: memory to memory, then the file transfer.
const KINDS: [&str; 2] = ["memory", "transfer"];

/// The figure of every striping study among the inputs, with its caption.
pub fn plan(inputs: &[Input]) -> Vec<(String, Bars)> {
    inputs
        .iter()
        .filter(|i| is_striping(&i.doc))
        .filter_map(|i| striping(&i.doc))
        .collect()
}

fn is_striping(doc: &ResultDoc) -> bool {
    doc.study.is_some() && doc.parameters.get("study").and_then(|s| s.as_str()) == Some("striping")
}

fn striping(doc: &ResultDoc) -> Option<(String, Bars)> {
    let study = doc.study.as_ref()?;
    let mut bars = Vec::new();
    for (group, kind) in KINDS.iter().enumerate() {
        for p in study.points.iter().filter(|p| p.series.starts_with(kind)) {
            let path = p.series.split_once('/').map_or("", |(_, path)| path);
            let streams = p
                .factors
                .get("streams")
                .and_then(|v| v.as_u64())
                .unwrap_or(0);
            let gbps = p.result.summary.bits_per_second / 1e9;
            bars.push(Bar {
                label: format!("{} P{streams}", path.replace('_', " ")),
                value: gbps,
                min: gbps,
                max: gbps,
                group,
            });
        }
    }
    if bars.is_empty() {
        return None;
    }
    let links = doc
        .parameters
        .get("links")
        .and_then(|v| v.as_u64())
        .unwrap_or(0);
    let caption = format!(
        "{}. One run each. {}",
        doc.command_line.join(" "),
        study
            .definitions
            .get("sentence")
            .cloned()
            .unwrap_or_default()
    );
    Some((
        caption,
        Bars {
            title: format!("{links} links: one, bonded, striped"),
            y_label: "Gbit/s".into(),
            bars,
            legend: KINDS.iter().map(|k| k.to_string()).collect(),
        },
    ))
}
