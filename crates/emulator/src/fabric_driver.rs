//! Drives the fabric model with real packets: one thread reads every
//! host's TUN device, cuts super-packets into units of at most
//! [`UNIT_BYTES`], hands them to [`Sim`] at the time they arrive, and
//! writes what the model delivers when it is due.

use std::hash::{DefaultHasher, Hash, Hasher};
use std::io::{self, IoSlice};
use std::path::Path;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rustix::event::{PollFd, PollFlags, poll};
use rustix::time::Timespec;
use serde::Serialize;

use super::forward::{FRAME_MAX, Port, SMALL_FRAME, now_ns};
use super::packet::{Packet, VNET_HDR_LEN, mark_ce};
use crate::fabric::FabricSpec;
use crate::fabric::sim::{Delivery, PortCounters, Sim, Unit};

/// A super-packet is queued as runs of segments of at most this many
/// bytes: a switch schedules and drops frames, and a unit in service holds
/// every other class behind it (64 KiB is half a millisecond at 1 Gbit/s;
/// 16 KiB put 1.3x on an all-to-all beside a bulk job under strict
/// priority, docs/benchmarks/2026-11-28-interference.md).
pub const UNIT_BYTES: u64 = 8 * 1024;
/// How long before a unit is due the thread stops sleeping and polls
/// without a timeout (as the WAN emulator does, for the same reason).
const SPIN_BEFORE_DUE_NS: u64 = 100_000;
/// Packets read from one device before the others get a turn.
const READ_BUDGET: usize = 4;
/// How often the counters file is rewritten.
const COUNTERS_EVERY: Duration = Duration::from_millis(50);

/// Segments `first..first + count` of a frame the kernel handed over.
pub struct Piece {
    frame: Rc<Vec<u8>>,
    first: usize,
    count: usize,
}

/// What `lab status` reads: every port's counters.
#[derive(Serialize)]
pub struct FabricCounters {
    /// The fabric's topology name.
    pub topology: &'static str,
    /// Per port, per class.
    pub ports: Vec<PortCounters>,
    /// Packets to no host of the lab, or that could not be parsed.
    pub unroutable: u64,
    /// Writes to a host's device that failed.
    pub write_errors: u64,
}

struct Driver<'a> {
    ports: &'a [Port],
    sim: Sim<Piece>,
    out: Vec<Delivery<Piece>>,
    head: Vec<u8>,
    unroutable: u64,
    write_errors: u64,
    /// Read buffers given back by delivered frames.
    spare: Vec<Vec<u8>>,
}

/// Read buffers kept for reuse.
const SPARE_BUFFERS: usize = 64;

/// Writes the first counters, calls `ready`, then forwards between `ports`
/// through the fabric `spec` until a device fails.
pub fn run(
    ports: &[Port],
    spec: &FabricSpec,
    counters: &Path,
    ready: impl FnOnce(),
) -> io::Result<()> {
    for p in ports {
        rustix::io::ioctl_fionbio(&p.fd, true)?;
    }
    let _ = rustix::thread::set_current_timer_slack(std::num::NonZeroU64::new(1));
    let mut d = Driver {
        ports,
        sim: Sim::new(spec),
        out: Vec::new(),
        head: Vec::with_capacity(256),
        unroutable: 0,
        write_errors: 0,
        spare: Vec::new(),
    };
    let mut buf = vec![0u8; FRAME_MAX];
    // Every port is in `lab status` from the moment `lab up` returns.
    d.write_counters(spec, counters);
    ready();
    let mut last_counters = Instant::now();
    loop {
        d.release(now_ns());
        let readable = d.wait()?;
        for (host, ready) in readable.into_iter().enumerate() {
            if ready {
                d.read_from(host, &mut buf)?;
            }
        }
        if last_counters.elapsed() >= COUNTERS_EVERY {
            last_counters = Instant::now();
            d.write_counters(spec, counters);
        }
    }
}

impl Driver<'_> {
    /// Sleeps until a device is readable or the next unit is nearly due;
    /// which devices are readable.
    fn wait(&self) -> io::Result<Vec<bool>> {
        let timeout = self.sim.next_due().map(|due| {
            let ns = due.saturating_sub(now_ns() + SPIN_BEFORE_DUE_NS);
            Timespec {
                tv_sec: (ns / 1_000_000_000) as _,
                tv_nsec: (ns % 1_000_000_000) as _,
            }
        });
        let mut fds: Vec<PollFd> = self
            .ports
            .iter()
            .map(|p| PollFd::new(&p.fd, PollFlags::IN))
            .collect();
        // At most a counters period, so the counters stay fresh when idle.
        let idle = Timespec {
            tv_sec: 0,
            tv_nsec: COUNTERS_EVERY.as_nanos() as _,
        };
        match poll(&mut fds, Some(timeout.as_ref().unwrap_or(&idle))) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(fds
            .iter()
            .map(|f| f.revents().contains(PollFlags::IN))
            .collect())
    }

    fn read_from(&mut self, host: usize, buf: &mut Vec<u8>) -> io::Result<()> {
        for _ in 0..READ_BUDGET {
            match rustix::io::read(&self.ports[host].fd, &mut buf[..]) {
                Ok(n) => {
                    // As the WAN forwarder does: a small frame is copied out,
                    // a large one taken whole, its buffer replaced by a spare.
                    let frame = if n <= SMALL_FRAME {
                        buf[..n].to_vec()
                    } else {
                        let mut next = self.spare.pop().unwrap_or_default();
                        next.resize(FRAME_MAX, 0);
                        let mut frame = std::mem::replace(buf, next);
                        frame.truncate(n);
                        frame
                    };
                    self.take(host, frame);
                }
                Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => return Ok(()),
                Err(e) => return Err(e.into()),
            }
        }
        Ok(())
    }

    /// Hands one frame from `host` to the model, cut into units.
    fn take(&mut self, host: usize, bytes: Vec<u8>) {
        let Some(p) = Packet::parse(&bytes) else {
            self.unroutable += 1;
            return;
        };
        let Some(to) = p
            .destination()
            .and_then(|d| self.ports.iter().position(|port| port.addrs.contains(&d)))
        else {
            self.unroutable += 1;
            return;
        };
        let tos = p.tos();
        let class = self.sim.class_of(tos >> 2);
        let mut h = DefaultHasher::new();
        p.flow_key().hash(&mut h);
        let flow_hash = h.finish() as u32;
        let segments = p.segments();
        let per_unit = (UNIT_BYTES / p.segment_wire_bytes(0).max(1)).max(1) as usize;
        let runs: Vec<(usize, usize, u64)> = (0..segments)
            .step_by(per_unit)
            .map(|first| {
                let count = per_unit.min(segments - first);
                let wire = (first..first + count)
                    .map(|i| p.segment_wire_bytes(i))
                    .sum();
                (first, count, wire)
            })
            .collect();
        let frame = Rc::new(bytes);
        let now = now_ns();
        for (first, count, wire) in runs {
            let unit = Unit {
                payload: Piece {
                    frame: frame.clone(),
                    first,
                    count,
                },
                bytes: wire,
                class,
                to,
                flow_hash,
                ect: tos & 0b11 != 0,
                ce: false,
            };
            self.sim.inject(now, host, unit, &mut self.out);
        }
        self.write_out();
    }

    /// Runs the model up to `now` and writes what reached a host.
    fn release(&mut self, now: u64) {
        self.sim.advance(now, &mut self.out);
        self.write_out();
    }

    fn write_out(&mut self) {
        let mut out = std::mem::take(&mut self.out);
        for d in out.drain(..) {
            self.deliver(d);
        }
        self.out = out;
    }

    fn deliver(&mut self, d: Delivery<Piece>) {
        let Piece {
            frame,
            first,
            count,
        } = d.unit.payload;
        let Some(p) = Packet::parse(&frame) else {
            return;
        };
        let mut head = std::mem::take(&mut self.head);
        let mut payload = p.run(first, count, &mut head);
        if d.unit.ce {
            // A whole packet's head is the virtio header alone: copy the IP
            // packet to mark it.
            if head.len() == VNET_HDR_LEN {
                head.extend_from_slice(payload);
                payload = &[];
            }
            mark_ce(&mut head[VNET_HDR_LEN..]);
        }
        let parts = [IoSlice::new(&head), IoSlice::new(payload)];
        if rustix::io::writev(&self.ports[d.host].fd, &parts).is_err() {
            self.write_errors += 1;
        }
        self.head = head;
        // The last unit of a large frame gives its buffer back for reading.
        if let Ok(buffer) = Rc::try_unwrap(frame)
            && buffer.capacity() >= FRAME_MAX
            && self.spare.len() < SPARE_BUFFERS
        {
            self.spare.push(buffer);
        }
    }

    fn write_counters(&self, spec: &FabricSpec, path: &Path) {
        let c = FabricCounters {
            topology: spec.topology.as_str(),
            ports: self.sim.counters(now_ns()),
            unroutable: self.unroutable + self.sim.unroutable,
            write_errors: self.write_errors,
        };
        if let Ok(text) = serde_json::to_vec_pretty(&c) {
            let _ = crate::write_atomic(path, &text);
        }
    }
}
