//! The sending end of a transfer.
//!
//! ```text
//! sender                               receiver
//!   hello (control) ----------------->
//!                   <----------------- Accept
//!   TransferRequest ----------------->
//!                   <----------------- Ready
//!   (opens every data connection)
//!   Start --------------------------->
//!   Entries ------------------------->   one batch of the manifest
//!                   <----------------- Need*   what that batch misses: the
//!   ... more Entries, each answered        streams start on it at once
//!   EntriesEnd ---------------------->
//!                   <----------------- NeedEnd {round 0}
//!   (each stream ends its pass with a RoundEnd record)
//!                   <----------------- Need*, NeedEnd {round 1}
//!   ... a pass per list, until a list is empty
//!   Finish -------------------------->
//!                   <----------------- Digests* (with --verify)
//!                   <----------------- TransferReport
//! ```

use std::time::{Duration, Instant};

use linerate_wire::{
    Accept, Entries, Entry, EntryKind, Message, NeedEnd, NeedFile, PeerReport, RefusalCode,
    TransferRequest, TransferTotals, WireError,
};

use crate::core_of;
use crate::kit::{Core, SessionError, Steps};
use crate::{ANSWER_TIMEOUT, PEER_SILENCE, TRANSFER_STEP_TIMEOUT};

/// Passes without fewer bytes missing before the sender gives up.
pub const STALLED_PASSES: u32 = 3;

/// What the driver must do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The receiver took the session (its host's facts).
    Accepted(Accept),
    /// The receiver is ready: open the data connections, then call
    /// [`TransferSender::streams_open`].
    OpenStreams,
    /// Files of pass `pass` that miss blocks. Pass 0's go to the streams
    /// at once; a later pass's are sent once its list has ended.
    Need {
        /// The pass, from 0.
        pass: u32,
        /// Each file and the block ranges it misses.
        files: Vec<NeedFile>,
    },
    /// The list of pass `pass` has ended and was not empty.
    Listed {
        /// The pass, from 0.
        pass: u32,
        /// What the pass needs in all.
        end: NeedEnd,
    },
    /// Nothing is missing: `Finish` has been sent. `passes` over the data
    /// were made; the first one needed `first_bytes`.
    Complete {
        /// Passes made over the data.
        passes: u32,
        /// Bytes the first pass needed.
        first_bytes: u64,
    },
}

/// What a finished transfer hands its driver.
#[derive(Debug, Clone, PartialEq)]
pub struct Done {
    /// What the receiver counted.
    pub totals: TransferTotals,
    /// The receiver's measurements of its end.
    pub report: PeerReport,
    /// Whole-file BLAKE3 digests by entry id (with --verify).
    pub digests: Vec<(u32, String)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Accept,
    Ready,
    Connecting,
    Transferring,
    Report,
}

/// The sending end of a transfer: request, manifest, the passes over what the
/// receiver needs, and the receiver's report.
pub struct TransferSender {
    core: Core<Event, Done>,
    step: Step,
    request: TransferRequest,
    /// Files announced: at most this many digests come back.
    files: u64,
    /// Time the receiver may take to read back what it wrote (--verify).
    reading_back: Duration,
    /// Time the receiver may take, silent, to read what it holds before it
    /// answers (--checksum).
    comparing: Duration,
    /// The manifest has been announced to its end.
    listed: bool,
    pass: u32,
    /// Files in the current pass's list so far.
    pass_files: u64,
    first_bytes: u64,
    best: u64,
    stalled: u32,
    last_heard: Instant,
    digests: Vec<(u32, String)>,
}

impl TransferSender {
    /// A session whose hello was sent at `now`; `request` goes out once
    /// the receiver accepts.
    pub fn new(now: Instant, request: TransferRequest) -> TransferSender {
        TransferSender {
            core: Core::new("the receiver's accept", Some(now + ANSWER_TIMEOUT)),
            step: Step::Accept,
            request,
            files: 0,
            reading_back: Duration::ZERO,
            comparing: Duration::ZERO,
            listed: false,
            pass: 0,
            pass_files: 0,
            first_bytes: 0,
            best: 0,
            stalled: 0,
            last_heard: now,
            digests: Vec::new(),
        }
    }

    /// The time the receiver may take beyond its silence limit to read
    /// the files of the transfer: before its report when it reads back what
    /// it wrote (--verify), before its answers when it compares contents
    /// (--checksum).
    pub fn reading_time(&mut self, time: Duration) {
        if self.request.verify {
            self.reading_back = time;
        }
        if self.request.compare_contents {
            self.comparing = time;
        }
    }

    /// What the sender asks for.
    pub fn request(&self) -> &TransferRequest {
        &self.request
    }

    /// Every data connection is up: the streams and the manifest start.
    pub fn streams_open(&mut self, now: Instant) {
        if self.step == Step::Connecting {
            self.core.send(Message::Start);
            self.step = Step::Transferring;
            self.last_heard = now;
            self.core
                .wait("the receiver's list of missing blocks", None);
        }
    }

    /// The next batch of the manifest.
    pub fn entries(&mut self, entries: Vec<Entry>) {
        if self.step == Step::Transferring && !self.listed {
            let files = entries
                .iter()
                .filter(|e| matches!(e.kind, EntryKind::File { .. }))
                .count();
            self.files += files as u64;
            self.core.send(Message::Entries(Entries { entries }));
        }
    }

    /// The manifest is complete; the receiver's silence counts from `now`.
    pub fn entries_end(&mut self, now: Instant) {
        if self.step == Step::Transferring && !self.listed {
            self.core.send(Message::EntriesEnd);
            self.listed = true;
            self.heard(now);
        }
    }

    /// The receiver took data at `now`: it is alive though silent.
    pub fn progress(&mut self, now: Instant) {
        if self.step == Step::Transferring && self.listed && now > self.last_heard {
            self.heard(now);
        }
    }

    fn heard(&mut self, now: Instant) {
        self.last_heard = now;
        // While the manifest is still walked, silence may be the sender's own.
        let deadline = self.listed.then(|| now + PEER_SILENCE + self.comparing);
        self.core
            .wait("the receiver's list of missing blocks", deadline);
    }

    fn need_end(&mut self, now: Instant, end: NeedEnd) -> Result<(), SessionError> {
        if end.round != self.pass {
            return Err(SessionError::Wire(WireError::OutOfRange {
                field: "need end's round",
                value: u64::from(end.round),
                range: u64::from(self.pass)..=u64::from(self.pass),
            }));
        }
        let pass = self.pass;
        let empty = self.pass_files == 0;
        (self.pass, self.pass_files) = (pass + 1, 0);
        if pass == 0 {
            (self.first_bytes, self.best) = (end.bytes, end.bytes);
        } else if empty {
            self.core.send(Message::Finish);
            self.step = Step::Report;
            self.core.wait(
                "the receiver's report",
                Some(now + PEER_SILENCE + self.reading_back),
            );
            self.core.emit(Event::Complete {
                passes: pass,
                first_bytes: self.first_bytes,
            });
            return Ok(());
        } else if end.bytes >= self.best {
            self.stalled += 1;
            if self.stalled >= STALLED_PASSES {
                return Err(SessionError::local(
                    RefusalCode::Internal,
                    format!(
                        "{} bytes still missing after {STALLED_PASSES} passes without progress",
                        end.bytes
                    ),
                ));
            }
        } else {
            (self.best, self.stalled) = (end.bytes, 0);
        }
        self.core.emit(Event::Listed { pass, end });
        Ok(())
    }
}

impl Steps for TransferSender {
    core_of!(Event, Done);

    fn on_message(&mut self, now: Instant, msg: Message) -> Result<(), SessionError> {
        match (self.step, msg) {
            (Step::Accept, Message::Accept(accept)) => {
                self.core
                    .send(Message::TransferRequest(self.request.clone()));
                self.step = Step::Ready;
                self.core
                    .wait("the receiver's ready", Some(now + TRANSFER_STEP_TIMEOUT));
                self.core.emit(Event::Accepted(accept));
            }
            (Step::Ready, Message::Ready(_)) => {
                self.step = Step::Connecting;
                self.core.wait("the data connections", None);
                self.core.emit(Event::OpenStreams);
            }
            (Step::Transferring, Message::Need(need)) => {
                self.pass_files += need.files.len() as u64;
                self.heard(now);
                self.core.emit(Event::Need {
                    pass: self.pass,
                    files: need.files,
                });
            }
            // The first list ends only after the manifest does.
            (Step::Transferring, Message::NeedEnd(end)) if self.listed || self.pass > 0 => {
                self.heard(now);
                self.need_end(now, end)?;
            }
            (Step::Report, Message::Digests(d)) => {
                if (self.digests.len() + d.files.len()) as u64 > self.files {
                    return Err(SessionError::Wire(WireError::OutOfRange {
                        field: "digests",
                        value: (self.digests.len() + d.files.len()) as u64,
                        range: 0..=self.files,
                    }));
                }
                self.digests.extend(d.files);
            }
            (Step::Report, Message::TransferReport(b)) => {
                let (totals, report) = *b;
                let digests = std::mem::take(&mut self.digests);
                self.core.finish(Done {
                    totals,
                    report,
                    digests,
                });
            }
            (_, other) => return Err(self.core.unexpected(&other)),
        }
        Ok(())
    }
}
