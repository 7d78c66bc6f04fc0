//! One bench from a spec: run it against a server, print it, and record
//! the command line that repeats it. `bench`, the studies and the demo
//! all measure through here.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Context;
use linerate_engine::bench;
use linerate_engine::spec::{Affinity, BenchSpec, RxPoll};
use linerate_result::ResultDoc;
use linerate_wire::Direction;

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
        "linerate bench to {server}: {} stream(s), {}",
        spec.streams,
        match spec.bytes {
            Some(b) => format!("{b} bytes"),
            None => format!("{:.1} s", spec.duration_ms as f64 / 1000.0),
        },
    ));
    let omit = if spec.bytes.is_some() {
        0
    } else {
        spec.omit_ms
    };
    let mut printer = IntervalPrinter::new(&mut out)
        .omitting(omit as f64 / 1000.0)
        .udp(spec.udp.is_some());
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
    let doc = bench::to_result(&run, command_line);
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

/// The `linerate bench` arguments that run `spec` against `server`: only
/// what differs from the defaults.
pub fn bench_words(server: SocketAddr, spec: &BenchSpec) -> Vec<String> {
    let d = BenchSpec::default();
    let mut w = vec![server.to_string()];
    if spec.tls.is_some() {
        w.push("--encrypt".to_string());
    }
    let mut flag = |name: &str, value: String| {
        w.push(name.to_string());
        w.push(value);
    };
    if spec.streams != d.streams {
        flag("-P", spec.streams.to_string());
    }

    if let Some(b) = spec.bytes {
        flag("-n", b.to_string());
    } else if spec.duration_ms != d.duration_ms {
        flag("-t", duration(spec.duration_ms));
    }
    if spec.interval_ms != d.interval_ms {
        flag("-i", duration(spec.interval_ms));
    }
    if spec.omit_ms != d.omit_ms {
        flag("--omit", duration(spec.omit_ms));
    }
    let sizes = [
        ("-l", spec.write_len),
        ("--read-len", spec.read_len),
        ("--rcvlowat", spec.rcvlowat),
        ("-w", spec.socket.rcvbuf),
        ("--sndbuf", spec.socket.sndbuf),
        ("-M", spec.socket.mss),
    ];
    for (name, v) in sizes {
        if let Some(v) = v {
            flag(name, v.to_string());
        }
    }
    if let Some(cc) = &spec.socket.congestion {
        flag("--cc", cc.clone());
    }
    if let Some(rate) = spec.socket.pacing_rate {
        flag("--fq-rate", (rate * 8).to_string());
    }
    if let Some(tos) = spec.socket.tos {
        flag("-S", format!("{tos:#04x}"));
    }
    if let Some(ip) = spec.socket.bind {
        flag("-B", ip.to_string());
    }
    if spec.affinity != d.affinity {
        flag("--affinity", affinity(spec.affinity).into());
    }
    if spec.rx_poll != d.rx_poll {
        flag("--rx-poll", rx_poll(spec.rx_poll).into());
    }
    if let Some(t) = spec.threads {
        flag("--threads", t.to_string());
    }
    match spec.direction {
        Direction::Forward => {}
        Direction::Reverse => w.push("-R".into()),
        Direction::Bidir => w.push("--bidir".into()),
    }
    for (on, name) in [
        (spec.zerocopy, "--zerocopy"),
        (spec.skip_rx_copy, "--skip-rx-copy"),
    ] {
        if on {
            w.push(name.into());
        }
    }
    if let Some(u) = spec.udp {
        w.extend(["--udp".into(), "-b".into(), u.rate_bps.to_string()]);
        for (off, name) in [(!u.gso, "--no-gso"), (!u.gro, "--no-gro")] {
            if off {
                w.push(name.into());
            }
        }
    }
    w
}

fn duration(ms: u64) -> String {
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        format!("{ms}ms")
    }
}

fn affinity(a: Affinity) -> &'static str {
    match a {
        Affinity::Auto => "auto",
        Affinity::Off => "off",
        Affinity::Spread => "spread",
        Affinity::Pairs => "pairs",
    }
}

fn rx_poll(p: RxPoll) -> &'static str {
    match p {
        RxPoll::Auto => "auto",
        RxPoll::On => "on",
        RxPoll::Off => "off",
    }
}
