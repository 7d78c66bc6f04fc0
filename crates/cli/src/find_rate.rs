//! `bench --udp --find-rate`: probes of the same UDP bench at rates chosen by
//! the engine's [`RateSearch`], one line each, and one result: the best
//! passing probe's document with every probe and why the next rate failed.

use std::net::SocketAddr;
use std::sync::atomic::Ordering::Relaxed;

use linerate_engine::bench::find_rate::{Probe, RateSearch};
use linerate_engine::spec::BenchSpec;
use linerate_probe::units::fmt_rate;
use linerate_result::ResultDoc;
use linerate_verdict::udp::judge_rate_search;

use crate::{measure, output, signals};

/// The lowest rate a search tries: below it a path is broken, not slow.
pub const FLOOR_BPS: u64 = 1_000_000;
/// The highest, unless -b says: the fastest links linerate's users run.
pub const CEILING_BPS: u64 = 400_000_000_000;
/// Each probe's length unless -t says: long enough for loss at a rate to
/// show, short enough for ten probes in under half a minute.
pub const PROBE_MS: u64 = 2_000;

pub struct Search {
    pub ceiling_bps: u64,
    pub probes: u32,
}

/// Datagrams lost over the run, all receivers together, as the UDP
/// verdict counted them.
fn lost(doc: &ResultDoc) -> u64 {
    doc.summary.verdict.evidence_or_zero("datagrams_lost") as u64
}

pub fn run(
    server: SocketAddr,
    spec: &BenchSpec,
    search: &Search,
    mut out: output::Out,
) -> anyhow::Result<ResultDoc> {
    out.line(&format!(
        "linerate bench --udp --find-rate to {server}: the highest rate with no datagram lost, \
         from {} to {}, at most {} probes of {:.1} s",
        fmt_rate(FLOOR_BPS as f64),
        fmt_rate(search.ceiling_bps as f64),
        search.probes,
        spec.options.duration_ms as f64 / 1000.0
    ));
    let stop = signals::interrupt_flag();
    let mut rates = RateSearch::new(FLOOR_BPS, search.ceiling_bps, search.probes);
    let mut docs: Vec<ResultDoc> = Vec::new();
    let mut interrupted = false;
    while let Some(rate) = rates.next_rate() {
        let mut probe_spec = spec.clone();
        if let Some(u) = probe_spec.udp.as_mut() {
            u.rate_bps = rate;
        }
        let command_line = crate::argv::command_line();
        let doc = measure::bench(
            server,
            &probe_spec,
            Some(stop.clone()),
            command_line,
            output::Out::silent(),
            false,
        )?;
        if doc.interrupted || stop.load(Relaxed) {
            interrupted = true;
            break;
        }
        let p = rates.record(rate, doc.summary.bits_per_second, lost(&doc));
        out.line(&probe_line(rates.tried().len(), &p));
        docs.push(doc);
    }
    let (best, above) = rates.outcome();
    let doc_of = |p: Option<Probe>| {
        p.and_then(|p| {
            let i = rates.tried().iter().position(|t| *t == p)?;
            docs.get(i)
        })
    };
    let Some(mut doc) = doc_of(best).or(doc_of(above)).cloned() else {
        anyhow::bail!("interrupted before the first probe ended");
    };
    let above_verdict = doc_of(above).map(|d| d.summary.verdict.clone());
    doc.summary.verdict = judge_rate_search(
        best.map(|p| (p.rate_bps, p.received_bps)),
        above
            .zip(above_verdict.as_ref())
            .map(|(p, v)| (p.rate_bps, v)),
        FLOOR_BPS,
    );
    doc.interrupted = interrupted;
    if let Some(map) = doc.parameters.as_object_mut() {
        map.insert(
            "rate_search".into(),
            serde_json::json!({
                "floor_bps": FLOOR_BPS,
                "ceiling_bps": search.ceiling_bps,
                "highest_loss_free_bps": best.map(|p| p.rate_bps),
                "probes": rates.tried(),
            }),
        );
    }
    if interrupted {
        out.line("Interrupted: the result covers the probes that ended.");
    }
    out.line(&format!("Verdict: {}", doc.summary.verdict.sentence));
    Ok(doc)
}

fn probe_line(n: usize, p: &Probe) -> String {
    format!(
        "probe {n}: {} asked, {} received, {} lost: {}",
        fmt_rate(p.rate_bps as f64),
        fmt_rate(p.received_bps),
        p.lost,
        if p.passed { "passed" } else { "failed" }
    )
}
