//! The model under a fake clock: shares, pauses, marks and tapers checked
//! over tens of milliseconds of simulated traffic, exactly.

use super::*;
use crate::fabric::{Taper, Topology, TrafficClass};

const MS: u64 = 1_000_000;
const JUMBO: u64 = 9000;

fn spec(topology: Topology, classes: &[&str]) -> FabricSpec {
    FabricSpec {
        topology,
        classes: if classes.is_empty() {
            crate::fabric::classes::best_effort()
        } else {
            classes
                .iter()
                .map(|s| s.parse::<TrafficClass>().unwrap())
                .collect()
        },
        ..FabricSpec::default()
    }
}

fn unit(to: usize, class: usize, bytes: u64, flow_hash: u32) -> Unit<u32> {
    Unit {
        payload: flow_hash,
        bytes,
        class,
        to,
        flow_hash,
        ect: false,
        ce: false,
    }
}

/// Runs the fabric's events until `until`, returning each delivery with its time.
fn drain(sim: &mut Sim<u32>, until: u64) -> Vec<(u64, Delivery<u32>)> {
    let mut got = Vec::new();
    let mut out = Vec::new();
    while let Some(t) = sim.next_due().filter(|&t| t <= until) {
        sim.advance(t, &mut out);
        got.extend(out.drain(..).map(|d| (t, d)));
    }
    got
}

fn bytes_of(got: &[(u64, Delivery<u32>)], class: usize, from: u64, to: u64) -> u64 {
    got.iter()
        .filter(|(t, d)| d.unit.class == class && (from..to).contains(t))
        .map(|(_, d)| d.unit.bytes)
        .sum()
}

fn port<'a>(c: &'a [PortCounters], name: &str) -> &'a PortCounters {
    c.iter().find(|p| p.port == name).unwrap()
}

/// Two hosts each keep one class backlogged towards a third; the port to
/// the third shares its rate by the ETS weights.
fn ets_share(weights: (u32, u32)) -> f64 {
    let a = format!("a:dscp=10:ets={}", weights.0);
    let b = format!("b:dscp=*:ets={}", weights.1);
    let mut sim = Sim::new(&spec(Topology::Star { hosts: 3 }, &[&a, &b]));
    let mut out = Vec::new();
    for i in 0..400 {
        sim.inject(0, 0, unit(2, 0, JUMBO, i), &mut out);
        sim.inject(0, 1, unit(2, 1, JUMBO, i), &mut out);
    }
    let got = drain(&mut sim, 40 * MS);
    let (a, b) = (
        bytes_of(&got, 0, 2 * MS, 25 * MS),
        bytes_of(&got, 1, 2 * MS, 25 * MS),
    );
    let total = (a + b) as f64 * 8.0 / 0.023;
    assert!(
        (total / 1e9 - 1.0).abs() < 0.02,
        "the port runs at its rate: {total}"
    );
    a as f64 / (a + b) as f64
}

#[test]
fn ets_shares_a_port_by_its_weights() {
    assert!((ets_share((50, 50)) - 0.5).abs() < 0.02);
    assert!((ets_share((80, 20)) - 0.8).abs() < 0.02);
}

#[test]
fn a_strict_class_takes_what_it_needs_and_the_rest_goes_to_bulk() {
    let mut sim = Sim::new(&spec(
        Topology::Star { hosts: 3 },
        &["lat:dscp=ef:strict", "bulk:dscp=*:ets=100"],
    ));
    assert_eq!((sim.class_of(46), sim.class_of(0)), (0, 1));
    let mut out = Vec::new();
    let mut got = Vec::new();
    for i in 0..400 {
        sim.inject(0, 0, unit(2, 1, JUMBO, i), &mut out);
    }
    // 1000 bytes every 40 us: 200 Mbit/s of latency-class traffic.
    let mut sent_lat = 0;
    let mut t = 0;
    while t < 25 * MS {
        got.extend(drain(&mut sim, t));
        sim.inject(t, 1, unit(2, 0, 1000, 7), &mut out);
        got.extend(out.drain(..).map(|d| (t, d)));
        sent_lat += 1;
        t += 40_000;
    }
    got.extend(drain(&mut sim, 60 * MS));
    let lat_delivered = got.iter().filter(|(_, d)| d.unit.class == 0).count();
    assert_eq!(lat_delivered, sent_lat, "the strict class loses nothing");
    let lat = bytes_of(&got, 0, 2 * MS, 24 * MS) as f64 * 8.0 / 0.022;
    let bulk = bytes_of(&got, 1, 2 * MS, 24 * MS) as f64 * 8.0 / 0.022;
    assert!((lat / 200e6 - 1.0).abs() < 0.05, "latency class {lat}");
    assert!(
        (bulk / 800e6 - 1.0).abs() < 0.05,
        "bulk takes the rest: {bulk}"
    );
}

fn incast(lossless: bool) -> (Vec<PortCounters>, usize) {
    let class = if lossless {
        "bulk:dscp=*:ets=100:lossless"
    } else {
        "bulk:dscp=*:ets=100"
    };
    let mut sim = Sim::new(&spec(Topology::Star { hosts: 4 }, &[class]));
    let mut out = Vec::new();
    for i in 0..300 {
        for h in 0..3 {
            sim.inject(0, h, unit(3, 0, JUMBO, i), &mut out);
        }
    }
    let got = drain(&mut sim, 200 * MS);
    assert_eq!(sim.in_flight(), 0);
    (sim.counters(200 * MS), got.len())
}

#[test]
fn pfc_pauses_the_senders_instead_of_dropping_and_without_it_the_switch_drops() {
    let (with, delivered) = incast(true);
    assert_eq!(delivered, 900, "a lossless class delivers everything");
    let drops: u64 = with.iter().flat_map(|p| &p.classes).map(|c| c.drops).sum();
    assert_eq!(drops, 0);
    for h in ["h1", "h2", "h3"] {
        let nic = port(&with, &format!("{h}>sw1"));
        assert!(nic.classes[0].pause_received_us > 1000, "{h}: {nic:?}");
        let sw = port(&with, &format!("sw1>{h}"));
        assert_eq!(
            sw.classes[0].pause_sent_us, nic.classes[0].pause_received_us,
            "both ends of a link count the same pause"
        );
    }
    let table = pauses_by_switch(&with);
    assert_eq!(table.len(), 1);
    assert!(
        table[0].sent_us > 0 && table[0].received_us == 0,
        "{table:?}"
    );
    let (without, delivered) = incast(false);
    let drops: u64 = without
        .iter()
        .flat_map(|p| &p.classes)
        .map(|c| c.drops)
        .sum();
    assert!(
        drops > 0 && delivered + drops as usize == 900,
        "{drops} {delivered}"
    );
    let paused: u64 = without
        .iter()
        .flat_map(|p| &p.classes)
        .map(|c| c.pause_received_us)
        .sum();
    assert_eq!(paused, 0);
}

#[test]
fn a_4_to_1_taper_carries_a_quarter_of_what_a_leaf_sends() {
    let mut sim = Sim::new(&FabricSpec {
        taper: Taper { down: 4, up: 1 },
        ..spec(
            Topology::LeafSpine {
                leaves: 2,
                spines: 1,
                hosts_per_leaf: 4,
            },
            &[],
        )
    });
    let mut out = Vec::new();
    for i in 0..200 {
        for h in 0..4 {
            sim.inject(0, h, unit(h + 4, 0, JUMBO, i), &mut out);
        }
    }
    let got = drain(&mut sim, 100 * MS);
    // The hosts send for 14.4 ms (1.8 MB each at 1 Gbit/s).
    let rate = bytes_of(&got, 0, 2 * MS, 14 * MS) as f64 * 8.0 / 0.012;
    assert!((rate / 1e9 - 1.0).abs() < 0.03, "{rate}");
    let c = sim.counters(100 * MS);
    assert!(port(&c, "leaf1>spine1").classes[0].drops > 0);
    // Every byte a host sent was delivered or dropped on the way.
    let injected = 4 * 200 * JUMBO;
    let delivered: u64 = got.iter().map(|(_, d)| d.unit.bytes).sum();
    let dropped: u64 = c
        .iter()
        .flat_map(|p| &p.classes)
        .map(|k| k.drop_bytes)
        .sum();
    assert_eq!(injected, delivered + dropped);
    let nic_sent: u64 = c
        .iter()
        .filter(|p| !p.switch)
        .map(|p| p.classes[0].sent_bytes)
        .sum();
    assert_eq!(
        nic_sent, injected,
        "hosts' ports count what their hosts sent"
    );
}

#[test]
fn ecn_marks_capable_packets_over_the_threshold_and_only_those() {
    let run = |ect: bool| {
        let mut sim = Sim::new(&FabricSpec {
            ecn_threshold_bytes: Some(50_000),
            ..spec(Topology::Star { hosts: 3 }, &[])
        });
        let mut out = Vec::new();
        for i in 0..100 {
            for h in 0..2 {
                let mut u = unit(2, 0, JUMBO, i);
                u.ect = ect;
                sim.inject(0, h, u, &mut out);
            }
        }
        let got = drain(&mut sim, 100 * MS);
        let marked = got.iter().filter(|(_, d)| d.unit.ce).count() as u64;
        let counted = port(&sim.counters(100 * MS), "sw1>h3").classes[0].ecn_marks;
        assert_eq!(marked, counted);
        marked
    };
    assert!(run(true) > 10);
    assert_eq!(run(false), 0);
}

#[test]
fn a_link_delivers_after_its_serialisation_and_delay() {
    let mut sim = Sim::new(&FabricSpec {
        hop_delay_us: 10,
        ..spec(Topology::Star { hosts: 2 }, &[])
    });
    let mut out = Vec::new();
    sim.inject(0, 0, unit(1, 0, 1250, 0), &mut out);
    // 1250 bytes at 1 Gbit/s: 10 us per link, twice, plus 10 us per hop.
    let got = drain(&mut sim, MS);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, 40_000);
}
