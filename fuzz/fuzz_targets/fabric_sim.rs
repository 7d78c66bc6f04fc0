//! The fabric model under arbitrary traffic: class lists as a user may
//! write them, units of any size to any host at any time. It never panics,
//! never delivers a unit to the wrong host, and every byte a host sent is
//! delivered, dropped or still inside once the events run out.
#![no_main]

use libfuzzer_sys::fuzz_target;
use linerate_emulator::fabric::sim::{Sim, Unit};
use linerate_emulator::fabric::{FabricSpec, Taper, Topology, TrafficClass};

fuzz_target!(|data: &[u8]| {
    let Some((shape, rest)) = data.split_first() else {
        return;
    };
    let Some((classes_len, rest)) = rest.split_first() else {
        return;
    };
    let (text, ops) = rest.split_at(usize::from(*classes_len).min(rest.len()));
    let classes: Vec<TrafficClass> = String::from_utf8_lossy(text)
        .split(' ')
        .filter_map(|c| c.parse().ok())
        .collect();
    let topology = match shape % 3 {
        0 => Topology::Star {
            hosts: 2 + shape / 3 % 6,
        },
        1 => Topology::Dumbbell {
            hosts: 2 + shape / 3 % 6,
        },
        _ => Topology::LeafSpine {
            leaves: 2,
            spines: 1 + shape / 3 % 2,
            hosts_per_leaf: 1 + shape / 6 % 4,
        },
    };
    let spec = FabricSpec {
        topology,
        taper: Taper {
            down: 1 + u32::from(shape % 4),
            up: 1,
        },
        classes: if classes.is_empty() {
            linerate_emulator::fabric::classes::best_effort()
        } else {
            classes
        },
        ecn_threshold_bytes: (shape & 1 == 1).then_some(20_000),
        buffer_bytes: 64 * 1024,
        ..FabricSpec::default()
    };
    if spec.validate().is_err() {
        return;
    }
    let hosts = usize::from(spec.topology.hosts());
    let mut sim: Sim<usize> = Sim::new(&spec);
    let (mut now, mut sent, mut got) = (0u64, 0u64, 0u64);
    let mut out = Vec::new();
    for op in ops.chunks_exact(4) {
        now += u64::from(op[0]) * 1000;
        let (from, to) = (usize::from(op[1]) % hosts, usize::from(op[2]) % hosts);
        let bytes = 40 + u64::from(op[3]) * 256;
        let unit = Unit {
            payload: to,
            bytes,
            class: sim.class_of(op[3] >> 2),
            to,
            flow_hash: u32::from(op[1]),
            ect: op[3] & 1 == 1,
            ce: false,
        };
        if from != to && sim.inject(now, from, unit, &mut out) {
            sent += bytes;
        }
        for d in out.drain(..) {
            assert_eq!(d.host, d.unit.payload, "delivered to its destination");
            got += d.unit.bytes;
        }
    }
    while let Some(t) = sim.next_due() {
        sim.advance(t, &mut out);
        for d in out.drain(..) {
            assert_eq!(d.host, d.unit.payload);
            got += d.unit.bytes;
        }
    }
    let dropped: u64 = sim
        .counters(now)
        .iter()
        .flat_map(|p| &p.classes)
        .map(|c| c.drop_bytes)
        .sum();
    assert_eq!(sent, got + dropped, "every byte delivered or dropped");
});
