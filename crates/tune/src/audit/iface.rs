//! Each network interface: speed, MTU, queues, rings, offloads,
//! coalescing and where its interrupts run.

use linerate_probe::units::fmt_rate;

use super::features::{Features, IfaceFeatures};
use super::{Fix, Rules, Severity, parse_cpulist, sentences};
use crate::bounds::Target;
use crate::facts::Iface;

/// One interface, judged on its features at the target.
pub(super) fn rules(r: &mut Rules, i: &Iface, f: &Features) {
    let t = &f.target;
    let n = &i.name;
    let IfaceFeatures {
        link_bps,
        fast,
        data_nic,
    } = f.iface(i);
    if let Some(speed) = i.speed_mbps {
        r.push(
            n,
            "speed",
            Some(format!("{speed} Mb/s")),
            format!(">= {}", fmt_rate(t.rate_bps)),
            link_bps >= t.rate_bps,
            if data_nic {
                Severity::Warn
            } else {
                Severity::Info
            },
            sentences::speed(data_nic),
            None,
        );
    }
    if i.physical
        && fast
        && let Some(mtu) = i.mtu
        && mtu < 1500
    {
        // Below Ethernet's 1500, something under this interface takes its
        // share of each frame (a VXLAN or cloud overlay): its MTU is the
        // underlay's to raise, not this host's.
        r.push(
            n,
            "mtu",
            Some(mtu.to_string()),
            "the underlay's".into(),
            true,
            Severity::Info,
            "an MTU under 1500 is an overlay or a tunnel: jumbo frames are set on the network beneath it, not here",
            None,
        );
    } else if i.physical
        && fast
        && let Some(mtu) = i.mtu
    {
        r.push(
            n,
            "mtu",
            Some(mtu.to_string()),
            "9000".into(),
            mtu >= 9000,
            Severity::Warn,
            "jumbo frames cut per-packet CPU cost about six times; every hop of the path must carry them",
            Some(Fix::Command(format!("ip link set dev {n} mtu 9000"))),
        );
    }
    if fast && let Some(q) = i.tx_queue_len {
        r.push(
            n,
            "txqueuelen",
            Some(q.to_string()),
            ">= 10000".into(),
            q >= 10_000,
            Severity::Info,
            "a longer device queue absorbs bursts of large windows at 10G and above",
            Some(Fix::Command(format!(
                "ip link set dev {n} txqueuelen 10000"
            ))),
        );
    }
    if let Some(q) = &i.root_qdisc {
        r.push(
            n,
            "root qdisc",
            Some(q.clone()),
            q.clone(),
            true,
            Severity::Ok,
            "the queueing discipline packets leave through",
            None,
        );
    }
    if let Some(rings) = i.ethtool.rings {
        r.push(
            n,
            "rings",
            Some(format!("rx {} tx {}", rings.rx, rings.tx)),
            format!("rx {} tx {}", rings.rx_max, rings.tx_max),
            rings.rx >= rings.rx_max && rings.tx >= rings.tx_max,
            Severity::Warn,
            "larger rings ride out interrupt and scheduling delays without dropping at line rate",
            Some(Fix::Command(format!(
                "ethtool -G {n} rx {} tx {}",
                rings.rx_max, rings.tx_max
            ))),
        );
    }
    if let Some(o) = i.ethtool.offloads {
        let on = |v: Option<bool>| v.map_or("?", |b| if b { "on" } else { "off" });
        let off: Vec<&str> = [("tso", o.tso), ("gso", o.gso), ("gro", o.gro)]
            .iter()
            .filter(|(_, v)| *v == Some(false))
            .map(|(k, _)| *k)
            .collect();
        r.push(
            n,
            "offloads",
            Some(format!(
                "tso {} gso {} gro {} lro {}",
                on(o.tso),
                on(o.gso),
                on(o.gro),
                on(o.lro)
            )),
            "tso gso gro on".into(),
            off.is_empty(),
            Severity::Warn,
            "segmentation and receive offloads move 64 KiB per stack traversal instead of one MTU",
            Some(Fix::Command(format!(
                "ethtool -K {n} {}",
                off.iter()
                    .map(|k| format!("{k} on"))
                    .collect::<Vec<_>>()
                    .join(" ")
            ))),
        );
    }
    if let Some(c) = i.ethtool.coalesce {
        r.push(
            n,
            "interrupt coalescing",
            Some(format!(
                "adaptive-rx {} rx-usecs {} rx-frames {}",
                if c.adaptive_rx { "on" } else { "off" },
                c.rx_usecs,
                c.rx_frames
            )),
            "adaptive-rx on".into(),
            c.adaptive_rx || !i.physical,
            Severity::Info,
            "adaptive moderation batches interrupts under bulk load and keeps latency low when idle",
            Some(Fix::Command(format!("ethtool -C {n} adaptive-rx on"))),
        );
    }
    irq_rules(r, i, t);
}

fn irq_rules(r: &mut Rules, i: &Iface, t: &Target) {
    let n = &i.name;
    let Some(node) = i.numa_node else { return };
    let node_cpus = i.numa_cpus.as_deref().map(parse_cpulist);
    r.push(
        n,
        "numa node",
        Some(node.to_string()),
        node.to_string(),
        true,
        Severity::Ok,
        "run transfer threads and bind IRQs on this node's CPUs",
        None,
    );
    let Some(cpus) = node_cpus else { return };
    let list = i.numa_cpus.clone().unwrap_or_default();
    let stray: Vec<&crate::facts::Irq> = i
        .irqs
        .iter()
        .filter(|q| {
            q.affinity
                .as_deref()
                .is_some_and(|a| !parse_cpulist(a).is_subset(&cpus))
        })
        .collect();
    if i.irqs.is_empty() {
        return;
    }
    r.push(
        n,
        "irq affinity",
        Some(format!(
            "{} of {} IRQs may run off node {node}",
            stray.len(),
            i.irqs.len()
        )),
        format!("all on CPUs {list}"),
        stray.is_empty(),
        if t.rate_bps >= 40e9 {
            Severity::Warn
        } else {
            Severity::Info
        },
        "an IRQ on the far socket moves every packet across the interconnect",
        Some(Fix::Command(
            stray
                .iter()
                .map(|q| format!("echo {list} > /proc/irq/{}/smp_affinity_list", q.number))
                .collect::<Vec<_>>()
                .join("; "),
        )),
    );
}
