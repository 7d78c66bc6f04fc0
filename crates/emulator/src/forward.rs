//! One forwarding thread per source host: read a packet from the host's TUN
//! device, decide the fate of each segment, hold it in a delay line, and
//! write it to the destination host's device when it is due.

use std::collections::VecDeque;
use std::io::{self, IoSlice};
use std::net::IpAddr;
use std::os::fd::OwnedFd;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::time::{ClockId, Timespec, clock_gettime};
use serde::Serialize;

use super::model::{Bottleneck, Decider, Fate, Impairments, ReorderModel};
use super::packet::{Packet, VNET_HDR_LEN};

/// Largest super-packet plus its virtio header.
pub(crate) const FRAME_MAX: usize = 65_536 + VNET_HDR_LEN + 64;
/// Packets up to this size are copied out so the big read buffer is reused.
pub(crate) const SMALL_FRAME: usize = 2048;
/// How long before a packet is due the thread stops sleeping and polls
/// without a timeout. A vCPU woken from halt by a timer runs 50-150 us late
/// here, which put 0.3-0.6 ms on an idle 44 ms path; spinning the last
/// stretch costs at most this much CPU per wake-up.
const SPIN_BEFORE_DUE_NS: u64 = 100_000;

/// A host's end of the emulated network.
pub struct Port {
    /// The TUN device.
    pub fd: OwnedFd,
    /// The host's addresses: packets to them come out of this port.
    pub addrs: Vec<IpAddr>,
}

/// The impairments every thread follows; `generation` tells them to reload.
#[derive(Default)]
pub struct Shared {
    /// The impairments in force.
    pub impairments: Mutex<Arc<Impairments>>,
    /// Bumped when the impairments change.
    pub generation: AtomicU64,
}

/// What one source host's thread has done, read by `lab status`.
#[derive(Default)]
pub struct Counters {
    /// Packets read from the host.
    pub packets: AtomicU64,
    /// TCP segments in them (a GSO packet holds many).
    pub segments: AtomicU64,
    /// Bytes read.
    pub bytes: AtomicU64,
    /// Segments lost by the loss model.
    pub lost: AtomicU64,
    /// Segments dropped at the full bottleneck queue.
    pub queue_drops: AtomicU64,
    /// Segments reordered.
    pub reordered: AtomicU64,
    /// Segments duplicated.
    pub duplicated: AtomicU64,
    /// Packets to no host of the lab.
    pub unroutable: AtomicU64,
    /// Writes to a TUN device that failed.
    pub write_errors: AtomicU64,
    /// Segments queued on the delay line.
    pub queued_segments: AtomicU64,
    /// Bytes waiting in the bottleneck's queue as the last segment arrived
    /// (a gauge, not a count).
    pub backlog_bytes: AtomicU64,
}

/// [`Counters`] read at one moment.
#[derive(Serialize)]
pub struct CountersSnapshot {
    /// Packets read from the host.
    pub packets: u64,
    /// TCP segments in them.
    pub segments: u64,
    /// Bytes read.
    pub bytes: u64,
    /// Segments lost by the loss model.
    pub lost: u64,
    /// Segments dropped at the full bottleneck queue.
    pub queue_drops: u64,
    /// Segments reordered.
    pub reordered: u64,
    /// Segments duplicated.
    pub duplicated: u64,
    /// Packets to no host of the lab.
    pub unroutable: u64,
    /// Writes to a TUN device that failed.
    pub write_errors: u64,
    /// Segments queued on the delay line.
    pub queued_segments: u64,
    /// Bytes in the bottleneck's queue as the last segment arrived.
    pub backlog_bytes: u64,
}

impl Counters {
    /// The counters now.
    pub fn snapshot(&self) -> CountersSnapshot {
        CountersSnapshot {
            packets: self.packets.load(Relaxed),
            segments: self.segments.load(Relaxed),
            bytes: self.bytes.load(Relaxed),
            lost: self.lost.load(Relaxed),
            queue_drops: self.queue_drops.load(Relaxed),
            reordered: self.reordered.load(Relaxed),
            duplicated: self.duplicated.load(Relaxed),
            unroutable: self.unroutable.load(Relaxed),
            write_errors: self.write_errors.load(Relaxed),
            queued_segments: self.queued_segments.load(Relaxed),
            backlog_bytes: self.backlog_bytes.load(Relaxed),
        }
    }
}

pub(crate) fn now_ns() -> u64 {
    let t = clock_gettime(ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Segments `first..first + count` of a packet, due at `due_ns`.
struct Queued {
    due_ns: u64,
    frame: Rc<Vec<u8>>,
    first: usize,
    count: usize,
    to: usize,
}

/// Segments `first..first + count` of the packet in hand, due at `due_ns`;
/// a displaced one leaves ahead of the few queued before it.
#[derive(Clone, Copy)]
struct Run {
    first: usize,
    count: usize,
    due_ns: u64,
    displaced: bool,
}

impl Run {
    fn one(first: usize, due_ns: u64) -> Run {
        Run {
            first,
            count: 1,
            due_ns,
            displaced: false,
        }
    }
}

/// A displaced segment leaves at most this share (1/20) of the one-way
/// delay early, so the round trips it shows stay within 5 % of the path's.
const DISPLACE_LEAD_SHARE: u64 = 20;

/// Queues `q` ahead of the last `depth` segments queued for its
/// destination that are due at most `max_lead_ns` before it, to leave when
/// the first of them does; whether it overtook any (with nothing queued
/// for its destination it keeps its place). The bound keeps a displaced
/// segment from jumping a sparse line: in slow start the segment ahead may
/// be a burst sent a round trip earlier, and leaving with it would show a
/// round trip shorter than the path's (docs/defaults.md#reorder-model).
fn displace(queue: &mut VecDeque<Queued>, mut q: Queued, depth: u32, max_lead_ns: u64) -> bool {
    let (mut at, mut passed) = (queue.len(), 0usize);
    for (i, ahead) in queue.iter().enumerate().rev() {
        if passed >= depth as usize || q.due_ns.saturating_sub(ahead.due_ns) > max_lead_ns {
            break;
        }
        if ahead.to == q.to {
            passed += ahead.count;
            at = i;
        }
    }
    if passed > 0 {
        q.due_ns = queue[at].due_ns;
    }
    queue.insert(at, q);
    passed > 0
}

/// The per-thread state that follows the impairments.
struct Rules {
    imp: Arc<Impairments>,
    decider: Decider,
    links: Vec<Bottleneck>,
}

impl Rules {
    fn new(imp: Arc<Impairments>, from: usize, hosts: usize) -> Rules {
        Rules {
            decider: Decider::new(&imp, from as u64),
            links: (0..hosts).map(|_| Bottleneck::new(&imp)).collect(),
            imp,
        }
    }
}

struct Forwarder<'a> {
    from: usize,
    ports: &'a [Port],
    counters: &'a Counters,
    queue: VecDeque<Queued>,
    last_due_ns: u64,
    spare: Vec<Vec<u8>>,
    head: Vec<u8>,
    /// Runs of surviving segments of the packet in hand; reused.
    runs: Vec<Run>,
}

/// Runs until reading the source device fails (it is gone when the lab goes down).
pub fn forward(
    from: usize,
    ports: &[Port],
    shared: &Shared,
    counters: &Counters,
) -> io::Result<()> {
    let mut f = Forwarder {
        from,
        ports,
        counters,
        queue: VecDeque::new(),
        last_due_ns: 0,
        spare: Vec::new(),
        head: Vec::with_capacity(256),
        runs: Vec::new(),
    };
    // The default 50 us of slack would be added to every delayed packet.
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
    let mut generation = shared.generation.load(Relaxed);
    let mut rules = Rules::new(current(shared), from, ports.len());
    let mut buf = vec![0u8; FRAME_MAX];
    loop {
        // With nothing queued the read may block: one syscall per packet
        // instead of a failed read and a poll. With packets waiting, poll
        // until the first is due and read only what is there.
        if !f.queue.is_empty() && !f.wait()? {
            f.release(now_ns());
            continue;
        }
        match rustix::io::read(&ports[from].fd, &mut buf[..]) {
            Ok(n) => {
                // Checked after the read, which may have blocked across a `lab set`.
                let g = shared.generation.load(Relaxed);
                if g != generation {
                    generation = g;
                    rules = Rules::new(current(shared), from, ports.len());
                }
                buf = f.handle(buf, n, &mut rules);
                f.release(now_ns());
            }
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(e) => return Err(e.into()),
        }
    }
}

fn current(shared: &Shared) -> Arc<Impairments> {
    shared
        .impairments
        .lock()
        .map(|g| g.clone())
        .unwrap_or_default()
}

impl Forwarder<'_> {
    fn route(&self, dst: IpAddr) -> Option<usize> {
        self.ports.iter().position(|p| p.addrs.contains(&dst))
    }

    /// Waits until the device is readable (true) or the first queued packet
    /// is nearly due (false; the caller releases what is due and asks again).
    fn wait(&mut self) -> io::Result<bool> {
        let timeout = self.queue.front().map(|q| {
            let ns = q.due_ns.saturating_sub(now_ns() + SPIN_BEFORE_DUE_NS);
            Timespec {
                tv_sec: (ns / 1_000_000_000) as _,
                tv_nsec: (ns % 1_000_000_000) as _,
            }
        });
        let mut fds = [PollFd::new(&self.ports[self.from].fd, PollFlags::IN)];
        match poll(&mut fds, timeout.as_ref()) {
            Ok(n) => Ok(n > 0),
            Err(rustix::io::Errno::INTR) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    /// Takes the read buffer and returns the one to read into next.
    fn handle(&mut self, mut buf: Vec<u8>, n: usize, rules: &mut Rules) -> Vec<u8> {
        let Some(p) = Packet::parse(&buf[..n]) else {
            self.counters.unroutable.fetch_add(1, Relaxed);
            return buf;
        };
        let Some(to) = p.destination().and_then(|d| self.route(d)) else {
            self.counters.unroutable.fetch_add(1, Relaxed);
            return buf;
        };
        let segments = p.segments();
        self.counters.packets.fetch_add(1, Relaxed);
        self.counters.segments.fetch_add(segments as u64, Relaxed);
        self.counters.bytes.fetch_add(p.wire_bytes(), Relaxed);
        let imp = &rules.imp;
        if self.queue.is_empty() && imp.delay_us == 0 && imp.jitter_us == 0 && !imp.per_segment() {
            self.write_whole(to, &buf[..n]);
            return buf;
        }
        let now = now_ns();
        let delay = (imp.delay_us as i64 * 1000 + rules.decider.jitter_ns()).max(0) as u64;
        // Decide every segment first, then queue runs of consecutive survivors as one packet.
        let mut runs = std::mem::take(&mut self.runs);
        runs.clear();
        let mut run: Option<Run> = None;
        for i in 0..segments {
            let fate = if imp.loss > 0.0 || imp.reorder > 0.0 || imp.duplicate > 0.0 {
                rules.decider.fate()
            } else {
                Fate::Deliver
            };
            if fate == Fate::Lose {
                self.counters.lost.fetch_add(1, Relaxed);
                runs.extend(run.take());
                continue;
            }
            if fate == Fate::Reorder && imp.reorder_model == ReorderModel::Netem {
                self.counters.reordered.fetch_add(1, Relaxed);
                runs.extend(run.take());
                let mut head = std::mem::take(&mut self.head);
                let payload = p.run(i, 1, &mut head);
                self.write_parts(to, &head, payload);
                self.head = head;
                continue;
            }
            let Some(left) = rules.links[to].admit(now, p.segment_wire_bytes(i)) else {
                self.counters.queue_drops.fetch_add(1, Relaxed);
                runs.extend(run.take());
                continue;
            };
            let due = (left + delay).max(self.last_due_ns);
            self.last_due_ns = due;
            if fate == Fate::Reorder {
                runs.extend(run.take());
                runs.push(Run {
                    displaced: true,
                    ..Run::one(i, due)
                });
                continue;
            }
            run = match run {
                Some(r) => Some(Run {
                    count: r.count + 1,
                    due_ns: due,
                    ..r
                }),
                None => Some(Run::one(i, due)),
            };
            if fate == Fate::Duplicate {
                self.counters.duplicated.fetch_add(1, Relaxed);
                runs.extend(run.take());
                runs.push(Run::one(i, due));
            }
        }
        runs.extend(run);
        // Once a packet, after its segments were admitted.
        self.counters
            .backlog_bytes
            .store(rules.links[to].backlog_bytes(now), Relaxed);
        if runs.is_empty() {
            self.runs = runs;
            return buf;
        }
        let (frame, next) = if n <= SMALL_FRAME {
            (buf[..n].to_vec(), buf)
        } else {
            buf.truncate(n);
            let mut next = self.spare.pop().unwrap_or_default();
            next.resize(FRAME_MAX, 0);
            (buf, next)
        };
        let frame = Rc::new(frame);
        for r in &runs {
            self.counters
                .queued_segments
                .fetch_add(r.count as u64, Relaxed);
            let queued = Queued {
                due_ns: r.due_ns,
                frame: frame.clone(),
                first: r.first,
                count: r.count,
                to,
            };
            if r.displaced {
                let max_lead_ns = imp.delay_us * 1000 / DISPLACE_LEAD_SHARE;
                if displace(&mut self.queue, queued, imp.reorder_depth, max_lead_ns) {
                    self.counters.reordered.fetch_add(1, Relaxed);
                }
            } else {
                self.queue.push_back(queued);
            }
        }
        self.runs = runs;
        next
    }

    /// Writes every queued run that is due.
    fn release(&mut self, now: u64) {
        while self.queue.front().is_some_and(|q| q.due_ns <= now) {
            let Some(q) = self.queue.pop_front() else {
                break;
            };
            self.counters
                .queued_segments
                .fetch_sub(q.count as u64, Relaxed);
            if let Some(p) = Packet::parse(&q.frame) {
                let mut head = std::mem::take(&mut self.head);
                let payload = p.run(q.first, q.count, &mut head);
                self.write_parts(q.to, &head, payload);
                self.head = head;
            }
            if let Ok(frame) = Rc::try_unwrap(q.frame)
                && frame.capacity() >= FRAME_MAX
                && self.spare.len() < 64
            {
                self.spare.push(frame);
            }
        }
    }

    fn write_whole(&self, to: usize, frame: &[u8]) {
        if rustix::io::write(&self.ports[to].fd, frame).is_err() {
            self.counters.write_errors.fetch_add(1, Relaxed);
        }
    }

    fn write_parts(&self, to: usize, head: &[u8], payload: &[u8]) {
        let parts = [IoSlice::new(head), IoSlice::new(payload)];
        if rustix::io::writev(&self.ports[to].fd, &parts).is_err() {
            self.counters.write_errors.fetch_add(1, Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn queued(due_ns: u64, first: usize, count: usize, to: usize) -> Queued {
        Queued {
            due_ns,
            frame: Rc::new(Vec::new()),
            first,
            count,
            to,
        }
    }

    fn order(queue: &VecDeque<Queued>) -> Vec<(usize, u64)> {
        queue.iter().map(|q| (q.first, q.due_ns)).collect()
    }

    /// A displaced segment passes the last `depth` segments for its
    /// destination (runs count by their segments), not the whole line, and
    /// leaves when the first it passed does: the line stays in due order.
    #[test]
    fn a_displaced_segment_overtakes_only_the_last_few_for_its_destination() {
        let mut q: VecDeque<Queued> = [
            queued(100, 0, 4, 1),
            queued(200, 4, 1, 1),
            queued(250, 90, 1, 2),
            queued(300, 5, 2, 1),
        ]
        .into_iter()
        .collect();
        assert!(displace(&mut q, queued(400, 7, 1, 1), 3, 1_000));
        assert_eq!(
            order(&q),
            vec![(0, 100), (7, 200), (4, 200), (90, 250), (5, 300)]
        );
        let dues: Vec<u64> = q.iter().map(|x| x.due_ns).collect();
        assert!(dues.windows(2).all(|w| w[0] <= w[1]), "{dues:?}");
    }

    /// In slow start the line is sparse: the segment ahead may be a burst
    /// due a round trip earlier. A displaced segment does not leave with
    /// it, or its round trip would be shorter than the path's.
    #[test]
    fn a_displaced_segment_never_leaves_more_than_its_lead_early() {
        let mut q: VecDeque<Queued> = [queued(100, 0, 2, 1), queued(44_000, 2, 1, 1)]
            .into_iter()
            .collect();
        assert!(displace(&mut q, queued(44_100, 3, 1, 1), 3, 500));
        assert_eq!(order(&q), vec![(0, 100), (3, 44_000), (2, 44_000)]);
    }

    #[test]
    fn with_nothing_ahead_for_its_destination_a_segment_keeps_its_place() {
        let mut q: VecDeque<Queued> = [queued(100, 0, 1, 2)].into_iter().collect();
        assert!(!displace(&mut q, queued(400, 1, 1, 1), 3, 1_000));
        assert_eq!(order(&q), vec![(0, 100), (1, 400)]);
    }
}
