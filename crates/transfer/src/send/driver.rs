//! The sender's session, driven by events: one thread owns the machine and
//! waits on one channel where the control connection's reader hands over
//! what the receiver sent and the manifest's walker hands over each batch
//! it found. Nothing is shared under a lock and nothing is polled but the
//! user's interrupt, looked at every [`INTERRUPT_TICK`] as every session
//! driver does.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

use linerate_session::transfer_sender::{Done, Event as SenderEvent};
use linerate_session::{Session, TransferSender};
use linerate_wire::{ENTRIES_PER_FRAME, Entry, NeedFile, RefusalCode};

use super::{Shared, VERIFY_BYTES_PER_SEC, queue, unreadable};
use crate::source::Listing;
use linerate_engine::lock;
use linerate_engine::session::control::{Control, Input};
use linerate_engine::session::{apply, flush, local};
use linerate_engine::{EngineError, Result};

/// How often a driver waiting on its peer looks whether the user
/// interrupted it.
const INTERRUPT_TICK: Duration = Duration::from_millis(200);

/// Manifest batches the walker may have handed over and the driver not
/// yet taken: the walk runs ahead of the network by this much, no more.
const BATCHES_AHEAD: usize = 64;

/// Why a walker stopped when the driver ended first: the driver's own
/// error says what happened.
pub(super) const DRIVER_GONE: &str = "the transfer's driver ended before its manifest";

/// What the driver's channel carries.
pub(super) enum SenderInput {
    /// What arrived on the control connection.
    Control(Input),
    /// A batch of the manifest, as the walk found it.
    Entries(Vec<Entry>),
    /// The manifest is complete; its bytes in all.
    EntriesEnd {
        /// The bytes of every file listed.
        bytes: u64,
    },
}

/// Batches handed to the driver and not yet taken, so the walker waits
/// when it runs too far ahead; closed once the driver ends, so a walker
/// never waits for a driver that is gone.
#[derive(Default)]
pub(super) struct Ahead {
    /// Batches in the channel, and whether the driver has ended.
    state: Mutex<(usize, bool)>,
    taken: Condvar,
}

impl Ahead {
    /// Waits until the driver has room for one more batch; false once it
    /// has ended.
    fn handed(&self) -> bool {
        let mut s = lock(&self.state);
        while s.0 >= BATCHES_AHEAD && !s.1 {
            s = self.taken.wait(s).unwrap_or_else(|p| p.into_inner());
        }
        s.0 += 1;
        !s.1
    }

    fn took(&self) {
        let mut s = lock(&self.state);
        s.0 = s.0.saturating_sub(1);
        self.taken.notify_one();
    }

    /// The driver has ended: no walker waits for it any more.
    pub(super) fn close(&self) {
        lock(&self.state).1 = true;
        self.taken.notify_all();
    }
}

/// Reads the control connection until it closes or fails, handing each
/// input to the driver; stops early when the driver is gone.
pub(super) fn read_control(mut ctl: Control, tx: Sender<SenderInput>) {
    loop {
        let input = ctl.next_input(None);
        let last = matches!(input, Input::Closed | Input::Failed(_));
        if tx.send(SenderInput::Control(input)).is_err() || last {
            return;
        }
    }
}

/// Hands the driver the manifest: what it already holds, then what the
/// walk finds, then its end.
pub(super) fn announce(
    shared: &Shared,
    discovery: Option<&super::Discovery>,
    tx: &Sender<SenderInput>,
    ahead: &Ahead,
) -> Result<()> {
    let gone = || EngineError::Internal(DRIVER_GONE);
    let mut batch = |entries: Vec<Entry>| {
        if !ahead.handed() {
            return Err(gone());
        }
        tx.send(SenderInput::Entries(entries)).map_err(|_| gone())
    };
    let manifest = shared.manifest;
    let mut known = manifest.iter().map(|(_, e, _)| e.clone()).peekable();
    while known.peek().is_some() {
        batch(known.by_ref().take(ENTRIES_PER_FRAME).collect())?;
    }
    if let Some(d) = discovery {
        let how = Listing {
            follow: d.follow_links,
            filter: &d.filter,
            wanted: d.wanted,
            digests: d.digests,
        };
        manifest.discover(&d.paths, how, &mut batch)?;
    }
    let bytes = manifest.total_bytes();
    tx.send(SenderInput::EntriesEnd { bytes })
        .map_err(|_| gone())
}

/// How the driver's session went.
pub(super) struct Driven {
    /// The passes it took.
    pub passes: u32,
    /// The bytes the first pass needed.
    pub first_bytes: u64,
    /// The receiver's last word.
    pub done: Done,
}

/// Drives the sender's machine: announces each manifest batch, feeds the
/// first pass as the receiver answers them, refills the queue after each
/// pass until the receiver misses nothing, closes the queue, and waits for
/// the receiver's report. `out` writes to the control connection.
pub(super) fn drive(
    out: &mut Control,
    m: &mut TransferSender,
    rx: &Receiver<SenderInput>,
    (shared, ahead): (&Shared, &Ahead),
    interrupt: Option<&AtomicBool>,
) -> Result<Driven> {
    let none = HashSet::new();
    let mut need: Vec<NeedFile> = Vec::new();
    let mut complete = None;
    loop {
        while let Some(event) = m.poll_event() {
            match event {
                SenderEvent::Need { pass: 0, files } => {
                    let plan = queue::plan(shared.manifest, &files, shared.block_len, &none);
                    shared.queue.add(plan);
                }
                SenderEvent::Need { files, .. } => need.extend(files),
                SenderEvent::Listed { pass: 0, .. } => shared.queue.seal(),
                SenderEvent::Listed { .. } => match unreadable(shared, &need) {
                    Some(why) => m.abort(local(RefusalCode::Internal, why)),
                    None => {
                        let failed: HashSet<u32> = lock(&shared.failed).keys().copied().collect();
                        let work = queue::plan(shared.manifest, &need, shared.block_len, &failed);
                        shared.queue.refill(work);
                        need.clear();
                    }
                },
                SenderEvent::Complete {
                    passes,
                    first_bytes,
                } => {
                    // Nothing is missing: the streams end, and the receiver
                    // reports once it has everything.
                    shared.queue.close();
                    complete = Some((passes, first_bytes));
                }
                SenderEvent::Accepted(_) | SenderEvent::OpenStreams => {}
            }
        }
        let sent = flush(out, m);
        match (m.poll_end(), complete) {
            (Some(Ok(done)), Some((passes, first_bytes))) => {
                return Ok(Driven {
                    passes,
                    first_bytes,
                    done,
                });
            }
            (Some(Ok(_)), None) => return Err(EngineError::EndedEarly),
            (Some(Err(e)), _) => return Err(e.into()),
            (None, _) => sent?,
        }
        if interrupt.is_some_and(|s| s.load(Relaxed)) {
            m.abort(local(RefusalCode::Internal, "the sender was interrupted"));
            let _ = flush(out, m);
            return Err(EngineError::Interrupted);
        }
        let deadline = m.poll_timeout();
        let tick = interrupt.map(|_| Instant::now() + INTERRUPT_TICK);
        let wake = match (deadline, tick) {
            (Some(d), Some(t)) => Some(d.min(t)),
            (d, t) => d.or(t),
        };
        let next = match wake {
            Some(at) => rx.recv_timeout(at.saturating_duration_since(Instant::now())),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        // Data the receiver took counts as an answer.
        m.progress(shared.last_progress());
        match next {
            Ok(SenderInput::Control(input)) => apply(m, input),
            Ok(SenderInput::Entries(entries)) => {
                ahead.took();
                m.entries(entries);
            }
            Ok(SenderInput::EntriesEnd { bytes }) => {
                m.reading_time(Duration::from_secs(bytes / VERIFY_BYTES_PER_SEC));
                m.entries_end(Instant::now());
            }
            Err(RecvTimeoutError::Timeout) => m.handle_timeout(Instant::now()),
            Err(RecvTimeoutError::Disconnected) => m.handle_closed(),
        }
    }
}

/// After an interrupt: waits up to `within` for the receiver to let go of
/// the transfer's files, which it says by closing its side.
pub(super) fn wait_for_close(rx: &Receiver<SenderInput>, within: Duration) {
    let until = Instant::now() + within;
    while let Ok(input) = rx.recv_timeout(until.saturating_duration_since(Instant::now())) {
        if let SenderInput::Control(Input::Closed | Input::Failed(_)) = input {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A walker ahead of a driver that ended (a refusal mid-manifest)
    /// is let go at once, not left waiting for room that never comes.
    #[test]
    fn a_walker_ahead_of_an_ended_driver_is_let_go() {
        let ahead = Ahead::default();
        for _ in 0..BATCHES_AHEAD {
            assert!(ahead.handed());
        }
        std::thread::scope(|s| {
            let walker = s.spawn(|| ahead.handed());
            ahead.close();
            assert!(!walker.join().unwrap());
        });
        ahead.took();
        assert!(!ahead.handed(), "a closed driver takes nothing more");
    }
}
