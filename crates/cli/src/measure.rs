//! One bench from a spec: run it against a server and print it. `bench`,
//! the studies and the demo all measure through here; each records its own
//! command line, and the result's parameters say what ran.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use linerate_engine::bench;
use linerate_engine::spec::BenchSpec;
use linerate_result::ResultDoc;

use crate::output::{self, IntervalPrinter};

/// Runs one bench and prints it to `out`; `stop`, when set mid-run, ends
/// it early with what ran (the document says so).
pub fn bench(
    server: SocketAddr,
    spec: &BenchSpec,
    stop: Option<Arc<AtomicBool>>,
    command_line: Vec<String>,
    mut out: output::Out,
    json_lines: bool,
) -> anyhow::Result<ResultDoc> {
    out.line(&format!(
        "linerate bench to {server}: {} stream(s), {}{}",
        spec.options.streams,
        match spec.options.bytes {
            Some(b) => format!("{b} bytes"),
            None => format!("{:.1} s", spec.options.duration_ms as f64 / 1000.0),
        },
        match spec.stripes.len() {
            0 => String::new(),
            n => format!(", striped over {n} paths"),
        }
    ));
    let omit = if spec.options.bytes.is_some() {
        0
    } else {
        spec.options.omit_ms
    };
    let mut printer = IntervalPrinter::new(&mut out)
        .omitting(omit as f64 / 1000.0)
        .udp(spec.udp.is_some())
        .paths(spec.stripes.len());
    let run = bench::run(server, spec, stop, &mut |batch, peer| {
        printer.print(batch, peer);
        if json_lines {
            // A closed stdout ends nothing: the run still reports.
            let line = if peer.is_empty() {
                serde_json::json!({ "interval": batch })
            } else {
                serde_json::json!({ "interval": batch, "server": peer })
            };
            let _ = output::json_line(&line);
        }
    })
    .with_context(|| format!("bench against {server} failed"))?;
    let mut doc = bench::to_result(&run, command_line);
    // Run under `lab exec`: the lab's conditions are the path's, and a
    // report keeps runs under other conditions apart.
    if doc.lab.is_none() {
        doc.lab = linerate_lab::netns::lab_here().map(|lab| linerate_study::lab_record(&lab));
    }
    if doc.interrupted {
        out.line("Interrupted: the summary covers what ran until then.");
    }
    let tls = &doc.parameters["encryption"];
    if let (Some(cipher), Some(kx)) = (tls["cipher"].as_str(), tls["key_exchange"].as_str()) {
        out.line(&format!(
            "Encrypted: TLS 1.3, {cipher}, key exchange {kx}, in user space"
        ));
    }
    output::print_summary(&mut out, &doc);
    Ok(doc)
}
