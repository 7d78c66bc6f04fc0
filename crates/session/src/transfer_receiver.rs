//! The receiving end of a transfer, in a daemon (`serve --root`) or a
//! one-shot receiver (`recv`, which also asks for its token): the same
//! order as [`crate::transfer_sender`], seen from the other end.
//!
//! ```text
//! receiver                             sender
//!   Accept -------------------------->   (after a good hello)
//!                   <----------------- TransferRequest
//!   (checks the token, the destination; registers the data connections)
//!   Ready --------------------------->
//!   (takes every data connection)
//!                   <----------------- Start
//!                   <----------------- Entries
//!   Need* --------------------------->   what the batch misses
//!   ... each batch answered
//!                   <----------------- EntriesEnd
//!   NeedEnd {round 0} --------------->
//!   (each stream's RoundEnd record ends its pass)
//!   Need*, NeedEnd {round 1} -------->   ... until a list is empty
//!                   <----------------- Finish
//!   Digests* ------------------------>   (with --verify)
//!   TransferReport ------------------>
//! ```

use std::time::Instant;

use linerate_wire::{
    Accept, Digests, ENTRIES_PER_FRAME, Entry, MAX_ENTRIES, Message, Need, NeedEnd, NeedFile,
    PeerReport, RefusalCode, TransferRequest, TransferTotals,
};

use crate::core_of;
use crate::kit::{Core, Opening, SessionError, Steps};
use crate::{SETUP_TIMEOUT, TRANSFER_STEP_TIMEOUT};

/// What the driver must do next.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    /// The sender asks for this transfer (its token already checked):
    /// check the destination, register the data connections, then call
    /// [`TransferReceiver::admitted`], or abort with why not.
    Admit(TransferRequest),
    /// The sender has started: run the streams.
    Begin,
    /// A batch of the manifest: take it, then call
    /// [`TransferReceiver::answer`] with what it misses.
    Entries(Vec<Entry>),
    /// The manifest has ended and the first pass's list with it: call
    /// [`TransferReceiver::pass_ended`] after each pass.
    Listed,
    /// Nothing is missing and the sender has finished: call
    /// [`TransferReceiver::report`].
    Finish,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Step {
    Request,
    Admitting,
    Opening(Opening),
    Listing,
    Passes,
    Finish,
    Reporting,
}

/// The receiving end of a transfer (a daemon's or a one-shot receiver's): the
/// request and its token, the manifest, the passes and the report.
pub struct TransferReceiver {
    core: Core<Event, ()>,
    step: Step,
    /// The one-shot receiver's secret, which the request must carry.
    token: Option<String>,
    verify: bool,
    entries: u64,
    round: u32,
    /// Blocks and bytes of the first pass's list so far.
    listed: (u64, u64),
    /// Manifest batches handed to the driver and not answered yet: the
    /// first list ends only after their answers.
    unanswered: u64,
    /// The sender's manifest has ended.
    manifest_ended: bool,
}

impl TransferReceiver {
    /// A session whose hello was good, answered with `accept` at `now`;
    /// `token` is required from the sender when given.
    pub fn new(now: Instant, accept: Accept, token: Option<String>) -> TransferReceiver {
        let mut core = Core::new("the transfer request", Some(now + TRANSFER_STEP_TIMEOUT));
        core.send(Message::Accept(accept));
        TransferReceiver {
            core,
            step: Step::Request,
            token,
            verify: false,
            entries: 0,
            round: 0,
            listed: (0, 0),
            unanswered: 0,
            manifest_ended: false,
        }
    }

    /// The destination is open and the data connections have a place to
    /// arrive at.
    pub fn admitted(&mut self, now: Instant) {
        if self.step == Step::Admitting {
            self.step = Step::Opening(Opening::ready(&mut self.core, now + SETUP_TIMEOUT));
        }
    }

    /// Every data connection has arrived.
    pub fn streams_connected(&mut self, now: Instant) {
        if let Step::Opening(mut o) = self.step {
            let begins = o.connected(&mut self.core, now + TRANSFER_STEP_TIMEOUT);
            self.step = Step::Opening(o);
            if begins {
                self.begin(now);
            }
        }
    }

    fn begin(&mut self, now: Instant) {
        self.step = Step::Listing;
        self.core
            .wait("the manifest", Some(now + TRANSFER_STEP_TIMEOUT));
        self.core.emit(Event::Begin);
    }

    /// What the last batch of the manifest misses: `blocks` blocks, `bytes` bytes.
    pub fn answer(&mut self, need: Vec<NeedFile>, blocks: u64, bytes: u64) {
        if self.step == Step::Listing && self.unanswered > 0 {
            self.unanswered -= 1;
            self.listed = (self.listed.0 + blocks, self.listed.1 + bytes);
            self.send_need(need);
            self.end_listing();
        }
    }

    /// Ends the first pass's list once the manifest has ended and every
    /// batch of it has been answered.
    fn end_listing(&mut self) {
        if !self.manifest_ended || self.unanswered > 0 {
            return;
        }
        let (blocks, bytes) = self.listed;
        self.core.send(Message::NeedEnd(NeedEnd {
            round: 0,
            blocks,
            bytes,
        }));
        self.step = Step::Passes;
        self.core.wait("the end of a pass", None);
        self.core.emit(Event::Listed);
    }

    /// A pass over the data has ended; `need` is what is still missing.
    /// An empty list ends the transfer.
    pub fn pass_ended(&mut self, now: Instant, need: Vec<NeedFile>, blocks: u64, bytes: u64) {
        if self.step != Step::Passes {
            return;
        }
        self.round += 1;
        let done = need.is_empty();
        self.send_need(need);
        self.core.send(Message::NeedEnd(NeedEnd {
            round: self.round,
            blocks,
            bytes,
        }));
        if done {
            self.step = Step::Finish;
            self.core
                .wait("the finish signal", Some(now + TRANSFER_STEP_TIMEOUT));
        }
    }

    /// What was written, this end's half of the measurements and, with
    /// --verify, the digests of what was written.
    pub fn report(
        &mut self,
        digests: Vec<(u32, String)>,
        totals: TransferTotals,
        report: PeerReport,
    ) {
        if self.step != Step::Reporting {
            return;
        }
        if self.verify {
            for chunk in digests.chunks(ENTRIES_PER_FRAME) {
                self.core.send(Message::Digests(Digests {
                    files: chunk.to_vec(),
                }));
            }
        }
        self.core
            .send(Message::TransferReport(Box::new((totals, report))));
        self.core.finish(());
    }

    fn send_need(&mut self, need: Vec<NeedFile>) {
        for chunk in need.chunks(ENTRIES_PER_FRAME) {
            self.core.send(Message::Need(Need {
                files: chunk.to_vec(),
            }));
        }
    }

    fn admit(&mut self, req: TransferRequest) -> Result<(), SessionError> {
        if let Some(token) = &self.token
            && !req.token.as_deref().is_some_and(|t| same_secret(token, t))
        {
            return Err(SessionError::local(
                RefusalCode::InvalidParameters,
                "wrong or missing token",
            ));
        }
        self.verify = req.verify;
        self.step = Step::Admitting;
        self.core.wait("the transfer to be admitted", None);
        self.core.emit(Event::Admit(req));
        Ok(())
    }

    fn take_entries(&mut self, now: Instant, entries: Vec<Entry>) -> Result<(), SessionError> {
        if self.manifest_ended {
            return Err(SessionError::Unexpected {
                waiting_for: "the first pass's list to be answered",
                got: "entries",
            });
        }
        self.entries += entries.len() as u64;
        if self.entries > u64::from(MAX_ENTRIES) {
            return Err(SessionError::local(
                RefusalCode::InvalidParameters,
                "too many entries",
            ));
        }
        self.core
            .wait("the manifest", Some(now + TRANSFER_STEP_TIMEOUT));
        self.unanswered += 1;
        self.core.emit(Event::Entries(entries));
        Ok(())
    }
}

/// Equal without a timing side channel on where the first difference is
/// (aws-lc's CRYPTO_memcmp; the length is not secret).
pub fn same_secret(a: &str, b: &str) -> bool {
    aws_lc_rs::constant_time::verify_slices_are_equal(a.as_bytes(), b.as_bytes()).is_ok()
}

impl Steps for TransferReceiver {
    core_of!(Event, ());

    fn on_message(&mut self, now: Instant, msg: Message) -> Result<(), SessionError> {
        match (self.step, msg) {
            (Step::Request, Message::TransferRequest(req)) => self.admit(req)?,
            (Step::Opening(mut o), Message::Start) if o != Opening::StartedEarly => {
                let begins = o.started();
                self.step = Step::Opening(o);
                if begins {
                    self.begin(now);
                }
            }
            (Step::Listing, Message::Entries(batch)) => self.take_entries(now, batch.entries)?,
            (Step::Listing, Message::EntriesEnd) if !self.manifest_ended => {
                self.manifest_ended = true;
                self.core.wait("the first pass's list to be answered", None);
                self.end_listing();
            }
            (Step::Finish, Message::Finish) => {
                self.step = Step::Reporting;
                self.core.wait("the report to be written", None);
                self.core.emit(Event::Finish);
            }
            (_, other) => return Err(self.core.unexpected(&other)),
        }
        Ok(())
    }
}
