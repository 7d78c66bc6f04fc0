//! The fabric as a discrete-event model, sans IO: packets ("units") enter
//! at a host's port, queue per class at every egress port on their path,
//! leave at the port's rate when the scheduler picks their class, and
//! arrive after the link's delay. It takes the time with every call and
//! hands back what reaches a host, so it runs the same under a fake clock
//! in tests and under the emulator's real one.
//!
//! Per port and class: a tail-drop buffer, ECN marking over a threshold,
//! strict priority or ETS (weighted fair queueing by byte finish tags). Per switch, for
//! lossless classes, PFC: the bytes held from each upstream port are
//! counted, and over XOFF the upstream port stops sending that class until
//! they fall below XON; both ends count how long (the switches' pause
//! duration counters).

use std::cmp::{Ordering, Reverse};
use std::collections::{BinaryHeap, VecDeque};

use serde::{Deserialize, Serialize};

use super::FabricSpec;
use super::classes::{Scheduling, dscp_map};
use super::graph::Graph;

/// Bytes a host's own port holds per class: a host's stack queues what its
/// link cannot take yet rather than dropping it, so this is deep.
pub const HOST_BUFFER_BYTES: u64 = 16 << 20;
/// A lossless class never tail-drops while PFC holds its senders back; this
/// bound only keeps a misconfigured one from taking all memory.
const LOSSLESS_CAP_FACTOR: u64 = 64;

/// One packet (or run of segments) crossing the fabric.
#[derive(Clone, Debug)]
pub struct Unit<T> {
    /// What the driver needs to deliver it.
    pub payload: T,
    /// Bytes on the wire.
    pub bytes: u64,
    /// Its class (index into the fabric's classes).
    pub class: usize,
    /// The host it goes to.
    pub to: usize,
    /// Hash of its flow, which picks among equal paths.
    pub flow_hash: u32,
    /// Whether its sender can take ECN marks (ECT).
    pub ect: bool,
    /// Whether a port marked it (CE).
    pub ce: bool,
}

/// A unit that reached host `host`.
#[derive(Debug)]
pub struct Delivery<T> {
    /// The receiving host.
    pub host: usize,
    /// The unit.
    pub unit: Unit<T>,
}

/// What one class of one port has done.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassCounters {
    /// The class's name.
    pub class: String,
    /// Bytes sent on the link.
    pub sent_bytes: u64,
    /// Units sent.
    pub sent_packets: u64,
    /// Units dropped at the full buffer.
    pub drops: u64,
    /// Bytes of those.
    pub drop_bytes: u64,
    /// Units marked CE.
    pub ecn_marks: u64,
    /// Bytes queued now.
    pub queued_bytes: u64,
    /// Most bytes ever queued.
    pub peak_queued_bytes: u64,
    /// How long the far end kept this port from sending this class (PFC),
    /// microseconds: the port's "receive pause duration".
    pub pause_received_us: u64,
    /// How long this port's node kept the far end from sending this class
    /// to it, microseconds: the port's "transmit pause duration".
    pub pause_sent_us: u64,
}

/// One port's counters.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PortCounters {
    /// `from>to`.
    pub port: String,
    /// The sending node.
    pub from: String,
    /// The receiving node.
    pub to: String,
    /// Whether the sending node is a switch.
    pub switch: bool,
    /// The link's rate, bits per second.
    pub rate_bps: u64,
    /// Per class, in the fabric's order.
    pub classes: Vec<ClassCounters>,
}

impl PortCounters {
    /// Port `p` of `g` with its classes' counters, however they were read.
    pub fn of(g: &Graph, p: usize, classes: Vec<ClassCounters>) -> PortCounters {
        let link = &g.ports[p];
        PortCounters {
            port: g.port_name(p),
            from: g.nodes[link.from].name.clone(),
            to: g.nodes[link.to].name.clone(),
            switch: !g.nodes[link.from].host,
            rate_bps: link.rate_bps,
            classes,
        }
    }
}

/// A switch's pause duration counters summed over its ports, as the
/// paper's Table II gives them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SwitchPauses {
    /// The switch.
    pub switch: String,
    /// Time its ports were held by pauses from their neighbours, microseconds.
    pub received_us: u64,
    /// Time its ports held their neighbours with pauses, microseconds.
    pub sent_us: u64,
}

/// Per switch, the pause durations its ports received and sent.
pub fn pauses_by_switch(ports: &[PortCounters]) -> Vec<SwitchPauses> {
    let mut out: Vec<SwitchPauses> = Vec::new();
    for p in ports.iter().filter(|p| p.switch) {
        let (r, s) = p.classes.iter().fold((0, 0), |(r, s), c| {
            (r + c.pause_received_us, s + c.pause_sent_us)
        });
        match out.iter_mut().find(|x| x.switch == p.from) {
            Some(x) => {
                x.received_us += r;
                x.sent_us += s;
            }
            None => out.push(SwitchPauses {
                switch: p.from.clone(),
                received_us: r,
                sent_us: s,
            }),
        }
    }
    out
}

struct Queued<T> {
    unit: Unit<T>,
    /// The port it arrived on, for PFC's accounting (none at a host's port).
    via: Option<usize>,
}

struct PortState<T> {
    queues: Vec<VecDeque<Queued<T>>>,
    /// Each ETS class's finish tag: the virtual time its last unit sent
    /// would have finished in a fluid system that shares by weight.
    finish: Vec<f64>,
    /// The finish tag of the unit sent last (self-clocked fair queueing).
    vtime: f64,
    /// Each ETS class's head unit's finish tag, fixed once it is the head.
    head_tag: Vec<Option<f64>>,
    busy: bool,
    /// Since when the far end has paused each class here.
    paused_since: Vec<Option<u64>>,
    /// Since when this port's node has paused the far end, per class.
    pausing_since: Vec<Option<u64>>,
    counters: Vec<ClassCounters>,
}

enum Event<T> {
    /// A unit finished crossing `port`'s link.
    Arrive { port: usize, unit: Unit<T> },
    /// `port` finished sending and may send again.
    Free { port: usize },
    /// `port` may send again after a pause.
    Resume { port: usize },
}

struct Timed<T> {
    at: u64,
    seq: u64,
    event: Event<T>,
}

impl<T> PartialEq for Timed<T> {
    fn eq(&self, o: &Self) -> bool {
        (self.at, self.seq) == (o.at, o.seq)
    }
}
impl<T> Eq for Timed<T> {}
impl<T> PartialOrd for Timed<T> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<T> Ord for Timed<T> {
    fn cmp(&self, o: &Self) -> Ordering {
        (self.at, self.seq).cmp(&(o.at, o.seq))
    }
}

struct ClassRule {
    strict: bool,
    /// Its ETS weight (0 for a strict class).
    weight: f64,
    lossless: bool,
}

/// The fabric's state: every port's queues, the events in flight, the counters.
pub struct Sim<T> {
    graph: Graph,
    rules: Vec<ClassRule>,
    strict: Vec<usize>,
    ets: Vec<usize>,
    map: [u8; 64],
    buffer_bytes: u64,
    ecn_threshold: Option<u64>,
    xoff: u64,
    xon: u64,
    ports: Vec<PortState<T>>,
    /// `held[port][class]`: bytes the node at `port`'s far end holds that
    /// came in over `port`.
    held: Vec<Vec<u64>>,
    events: BinaryHeap<Reverse<Timed<T>>>,
    seq: u64,
    now: u64,
    /// Units with no route (counted, never delivered).
    pub unroutable: u64,
}

impl<T> Sim<T> {
    /// The fabric `spec` asks for, empty, at time 0.
    pub fn new(spec: &FabricSpec) -> Sim<T> {
        let graph = Graph::build(spec);
        let n = spec.classes.len();
        let rules: Vec<ClassRule> = spec
            .classes
            .iter()
            .map(|c| ClassRule {
                strict: c.scheduling == Scheduling::Strict,
                weight: match c.scheduling {
                    Scheduling::Ets { weight } => f64::from(weight),
                    Scheduling::Strict => 0.0,
                },
                lossless: c.lossless,
            })
            .collect();
        let ports = (0..graph.ports.len())
            .map(|_| PortState {
                queues: (0..n).map(|_| VecDeque::new()).collect(),
                finish: vec![0.0; n],
                vtime: 0.0,
                head_tag: vec![None; n],
                busy: false,
                paused_since: vec![None; n],
                pausing_since: vec![None; n],
                counters: spec
                    .classes
                    .iter()
                    .map(|c| ClassCounters {
                        class: c.name.clone(),
                        ..ClassCounters::default()
                    })
                    .collect(),
            })
            .collect();
        Sim {
            held: vec![vec![0; n]; graph.ports.len()],
            strict: (0..n).filter(|&c| rules[c].strict).collect(),
            ets: (0..n).filter(|&c| !rules[c].strict).collect(),
            rules,
            map: dscp_map(&spec.classes),
            buffer_bytes: spec.buffer_bytes,
            ecn_threshold: spec.ecn_threshold_bytes,
            xoff: spec.pfc_xoff_bytes,
            xon: spec.pfc_xoff_bytes / 2,
            ports,
            graph,
            events: BinaryHeap::new(),
            seq: 0,
            now: 0,
            unroutable: 0,
        }
    }

    /// The fabric's nodes, ports and routes.
    pub fn graph(&self) -> &Graph {
        &self.graph
    }

    /// The class a packet marked `dscp` belongs to.
    pub fn class_of(&self, dscp: u8) -> usize {
        usize::from(self.map[usize::from(dscp & 63)])
    }

    /// When the next event is due, if any: the driver wakes then.
    pub fn next_due(&self) -> Option<u64> {
        self.events.peek().map(|Reverse(t)| t.at)
    }

    /// Units queued or on a link anywhere in the fabric.
    pub fn in_flight(&self) -> usize {
        let queued: usize = self
            .ports
            .iter()
            .flat_map(|p| p.queues.iter())
            .map(VecDeque::len)
            .sum();
        queued
            + self
                .events
                .iter()
                .filter(|Reverse(t)| matches!(t.event, Event::Arrive { .. }))
                .count()
    }

    /// Host `from` sends `unit` at `now`; what reaches a host by `now` goes
    /// to `out`. False when no route leads to its destination.
    pub fn inject(
        &mut self,
        now: u64,
        from: usize,
        unit: Unit<T>,
        out: &mut Vec<Delivery<T>>,
    ) -> bool {
        self.advance(now, out);
        match self.graph.route(from, unit.to, unit.flow_hash) {
            Some(port) => {
                self.enqueue(self.now, port, unit, None);
                true
            }
            None => {
                self.unroutable += 1;
                false
            }
        }
    }

    /// Runs every event due by `now`; what reaches a host goes to `out`.
    pub fn advance(&mut self, now: u64, out: &mut Vec<Delivery<T>>) {
        while self.events.peek().is_some_and(|Reverse(t)| t.at <= now) {
            let Some(Reverse(t)) = self.events.pop() else {
                break;
            };
            self.now = self.now.max(t.at);
            match t.event {
                Event::Arrive { port, unit } => self.arrive(port, unit, out),
                Event::Free { port } => {
                    self.ports[port].busy = false;
                    self.try_send(port);
                }
                Event::Resume { port } => self.try_send(port),
            }
        }
        self.now = self.now.max(now);
    }

    fn schedule(&mut self, at: u64, event: Event<T>) {
        self.seq += 1;
        self.events.push(Reverse(Timed {
            at,
            seq: self.seq,
            event,
        }));
    }

    fn arrive(&mut self, port: usize, unit: Unit<T>, out: &mut Vec<Delivery<T>>) {
        let node = self.graph.ports[port].to;
        if self.graph.nodes[node].host {
            out.push(Delivery { host: node, unit });
            return;
        }
        match self.graph.route(node, unit.to, unit.flow_hash) {
            Some(next) => self.enqueue(self.now, next, unit, Some(port)),
            None => self.unroutable += 1,
        }
    }

    fn enqueue(&mut self, now: u64, port: usize, mut unit: Unit<T>, via: Option<usize>) {
        let c = unit.class.min(self.rules.len() - 1);
        unit.class = c;
        let at_switch = via.is_some();
        let cap = if !at_switch {
            HOST_BUFFER_BYTES
        } else if self.rules[c].lossless {
            self.buffer_bytes * LOSSLESS_CAP_FACTOR
        } else {
            self.buffer_bytes
        };
        let bytes = unit.bytes;
        let st = &mut self.ports[port];
        let k = &mut st.counters[c];
        if k.queued_bytes > 0 && k.queued_bytes + bytes > cap {
            k.drops += 1;
            k.drop_bytes += bytes;
            return;
        }
        if at_switch && unit.ect && self.ecn_threshold.is_some_and(|t| k.queued_bytes > t) {
            unit.ce = true;
            k.ecn_marks += 1;
        }
        k.queued_bytes += bytes;
        k.peak_queued_bytes = k.peak_queued_bytes.max(k.queued_bytes);
        st.queues[c].push_back(Queued { unit, via });
        if let Some(v) = via {
            self.held[v][c] += bytes;
            if self.rules[c].lossless && self.held[v][c] > self.xoff {
                self.pause(now, v, c);
            }
        }
        self.try_send(port);
    }

    /// The node at `via`'s far end asks `via` to stop sending class `c`.
    fn pause(&mut self, now: u64, via: usize, c: usize) {
        if self.ports[via].paused_since[c].is_some() {
            return;
        }
        self.ports[via].paused_since[c] = Some(now);
        let back = self.graph.reverse[via];
        self.ports[back].pausing_since[c] = Some(now);
    }

    fn resume(&mut self, now: u64, via: usize, c: usize) {
        let Some(since) = self.ports[via].paused_since[c].take() else {
            return;
        };
        self.ports[via].counters[c].pause_received_us += now.saturating_sub(since) / 1000;
        let back = self.graph.reverse[via];
        if let Some(since) = self.ports[back].pausing_since[c].take() {
            self.ports[back].counters[c].pause_sent_us += now.saturating_sub(since) / 1000;
        }
        self.schedule(now, Event::Resume { port: via });
    }

    fn eligible(st: &PortState<T>, c: usize) -> bool {
        !st.queues[c].is_empty() && st.paused_since[c].is_none()
    }

    /// The class `port` sends next: strict classes first, in order; then
    /// the ETS class whose head unit would finish first in a fluid system
    /// sharing the port by weight (self-clocked fair queueing). Backlogged
    /// classes get their weights' shares in bytes, and a class that was idle
    /// starts from the port's virtual time, so its unit waits for at most the
    /// one in service (round robin over byte quanta made it wait for a
    /// quantum of the other classes as well,
    /// docs/benchmarks/2026-11-28-interference.md).
    fn pick(&mut self, port: usize) -> Option<usize> {
        let st = &mut self.ports[port];
        if let Some(&c) = self.strict.iter().find(|&&c| Self::eligible(st, c)) {
            return Some(c);
        }
        let mut best: Option<(usize, f64)> = None;
        for &c in &self.ets {
            if !Self::eligible(st, c) {
                continue;
            }
            let head = st.queues[c].front().map_or(0, |q| q.unit.bytes) as f64;
            let tag = *st.head_tag[c].get_or_insert_with(|| {
                st.finish[c].max(st.vtime) + head / self.rules[c].weight.max(1.0)
            });
            if best.is_none_or(|(_, t)| tag < t) {
                best = Some((c, tag));
            }
        }
        let (c, tag) = best?;
        st.head_tag[c] = None;
        st.finish[c] = tag;
        st.vtime = tag;
        Some(c)
    }

    fn try_send(&mut self, port: usize) {
        if self.ports[port].busy {
            return;
        }
        let Some(c) = self.pick(port) else {
            return;
        };
        let now = self.now;
        let st = &mut self.ports[port];
        let Some(Queued { unit, via }) = st.queues[c].pop_front() else {
            return;
        };
        let k = &mut st.counters[c];
        k.queued_bytes -= unit.bytes;
        k.sent_bytes += unit.bytes;
        k.sent_packets += 1;
        st.busy = true;
        if let Some(v) = via {
            self.held[v][c] -= unit.bytes;
            if self.held[v][c] <= self.xon {
                self.resume(now, v, c);
            }
        }
        let link = &self.graph.ports[port];
        let tx_ns =
            (u128::from(unit.bytes) * 8_000_000_000).div_ceil(u128::from(link.rate_bps)) as u64;
        let delay = link.delay_ns;
        self.schedule(now + tx_ns, Event::Free { port });
        self.schedule(now + tx_ns + delay, Event::Arrive { port, unit });
    }

    /// Every port's counters at `now` (pauses still on count up to `now`).
    pub fn counters(&self, now: u64) -> Vec<PortCounters> {
        let g = &self.graph;
        self.ports
            .iter()
            .enumerate()
            .map(|(p, st)| {
                let classes = st
                    .counters
                    .iter()
                    .enumerate()
                    .map(|(c, k)| {
                        let ongoing =
                            |s: Option<u64>| s.map_or(0, |s| now.saturating_sub(s) / 1000);
                        ClassCounters {
                            pause_received_us: k.pause_received_us + ongoing(st.paused_since[c]),
                            pause_sent_us: k.pause_sent_us + ongoing(st.pausing_since[c]),
                            ..k.clone()
                        }
                    })
                    .collect();
                PortCounters::of(g, p, classes)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
