//! The receiving end of a transfer session, run by `serve --root` and `recv`:
//! takes the manifest frame by frame and asks for what each misses while the
//! streams already carry blocks, checks and stores them, and asks again after
//! each pass until nothing is missing.

use std::net::{Shutdown, TcpStream};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use linerate_result::Side;
use linerate_wire::{
    BLOCK_TRAILER_LEN, ENTRIES_PER_FRAME, MAX_ENTRIES, Message, Need, NeedEnd, NeedFile,
    RECORD_HEADER_LEN, Record, Refusal, RefusalCode, SessionId, TransferRequest,
};

use super::claims::{ClaimSet, Claims};
use super::sink::{Leftovers, SinkError, SinkOptions};
use crate::limits::{SessionLimits, return_free_memory};

use super::direct::{AlignedBuf, CachePolicy};
use super::grid::{BlockCheck, PIECE};
use super::reader::RecordReader;
use super::sink::{Accepted, Sink};
use super::url::Token;
use crate::confine::DestRoot;
use crate::control::Control;
use crate::error::{EngineError, Result};
use crate::server::Registration;
use crate::side::{self, SideConfig, StreamSocket};
use crate::stream::{Live, Outcome, ThreadClock};

/// Longest a receiver waits for the next manifest batch or control step.
const STEP_TIMEOUT: Duration = Duration::from_secs(30);

/// What a server accepts transfers into.
pub struct TransferPolicy {
    pub root: PathBuf,
    /// Required from the sender when set (the one-shot receiver's secret).
    pub token: Option<Token>,
    /// Only this session id is served when set (the one-shot receiver),
    /// and only one session with it.
    pub session: Option<SessionId>,
    /// Apply setuid, setgid and sticky bits from senders.
    pub keep_special_bits: bool,
    pub limits: SessionLimits,
    /// How long what a cut-short transfer left waits for a rerun before
    /// the server removes it; None keeps it (a one-shot receiver's
    /// process ends, and the rerun is the user's).
    pub partial_ttl: Option<Duration>,
    pub(crate) claims: Arc<Claims>,
    pub(crate) leftovers: Leftovers,
    /// The one-shot receiver's transfer has begun.
    taken: AtomicBool,
}

impl TransferPolicy {
    /// A daemon's policy for `root`, with the default limits.
    pub fn new(root: PathBuf) -> TransferPolicy {
        TransferPolicy {
            root,
            token: None,
            session: None,
            keep_special_bits: false,
            limits: SessionLimits::default(),
            partial_ttl: Some(DEFAULT_PARTIAL_TTL),
            claims: Arc::default(),
            leftovers: Leftovers::default(),
            taken: AtomicBool::new(false),
        }
    }

    /// Whether this policy serves one session and nothing else.
    pub fn is_one_shot(&self) -> bool {
        self.session.is_some()
    }

    /// Removes leftovers whose time has come; how many names went.
    pub(crate) fn sweep(&self) -> usize {
        if self.leftovers.is_empty() {
            return 0;
        }
        self.leftovers
            .sweep(Instant::now(), &self.claims, &self.root)
    }
}

/// How long a daemon keeps what a cut-short transfer left for a rerun.
pub const DEFAULT_PARTIAL_TTL: Duration = Duration::from_secs(24 * 3600);

/// Registers a session's data connections, to be collected once the
/// manifest has been answered.
pub(crate) type StreamGate<'a> = dyn Fn(&TransferRequest) -> Result<Registration<'a>> + 'a;

enum Event {
    RoundEnd(u16),
    Closed(u16),
    /// The session cannot go on; `resumable` when what arrived is worth
    /// keeping for a rerun (a disk error, not a peer breaking the rules).
    Fatal {
        message: String,
        resumable: bool,
    },
}

/// Runs one transfer session on an accepted control connection; calls
/// `admit` once the sender has shown its right to send (the token).
pub(crate) fn session(
    ctl: &mut Control,
    policy: &TransferPolicy,
    gate: &StreamGate<'_>,
    admit: &dyn Fn(),
) -> Result<String> {
    let req = match ctl.recv(STEP_TIMEOUT, "the transfer request")? {
        Message::TransferRequest(r) => r,
        other => {
            return Err(refuse(
                ctl,
                RefusalCode::Malformed,
                format!("expected a transfer request, got {}", other.name()),
            ));
        }
    };
    if let Some(token) = &policy.token
        && !req.token.as_deref().is_some_and(|t| token.matches(t))
    {
        return Err(refuse(
            ctl,
            RefusalCode::InvalidParameters,
            "wrong or missing token".into(),
        ));
    }
    if policy.is_one_shot() && policy.taken.swap(true, Relaxed) {
        return Err(refuse(
            ctl,
            RefusalCode::Busy,
            "this receiver is busy with its one transfer".into(),
        ));
    }
    admit();
    let dest = DestRoot::open(&policy.root)
        .and_then(|r| r.subdir(&req.dest))
        .map_err(|e| {
            refuse(
                ctl,
                RefusalCode::InvalidParameters,
                format!("destination: {e}"),
            )
        })?;
    let mut streams = gate(&req).map_err(|e| refuse(ctl, RefusalCode::Busy, e.to_string()))?;
    ctl.send(&Message::Ready(linerate_wire::Ready {}))?;
    let sockets = streams.collect()?;
    ctl.expect_start(STEP_TIMEOUT)?;
    let root = (!req.skip_writes).then_some(dest);
    let cache = CachePolicy {
        direct: req.direct,
        evict: req.evict,
    };
    let sink = Sink::new(
        root,
        SinkOptions {
            block_len: req.block_len,
            overwrite: req.overwrite,
            cache,
            keep_special_bits: policy.keep_special_bits,
            limits: policy.limits,
            claims: Some(ClaimSet::new(Arc::clone(&policy.claims), &req.dest)),
        },
    );
    let resumable = AtomicBool::new(true);
    let result = run_sink(ctl, &req, &sink, &sockets, &resumable);
    if result.is_err() {
        let left = sink.abandon(resumable.load(Relaxed));
        if let Some(ttl) = policy.partial_ttl {
            policy.leftovers.keep(Instant::now() + ttl, left);
        }
    }
    drop(sink);
    drop(streams);
    return_free_memory();
    result
}

/// Moves the data of an admitted session into `sink`, from the manifest to
/// the report; clears `resumable` if the sender broke a rule.
fn run_sink(
    ctl: &mut Control,
    req: &TransferRequest,
    sink: &Sink,
    sockets: &[StreamSocket],
    resumable: &AtomicBool,
) -> Result<String> {
    let controls: Vec<TcpStream> = sockets
        .iter()
        .filter_map(|s| s.stream.try_clone().ok())
        .collect();
    let (tx, rx) = mpsc::channel::<Event>();
    let tx = Mutex::new(tx);
    let abort = AtomicBool::new(false);
    // The size is not known yet; the sender's end of stream ends each stream.
    let cfg = SideConfig {
        params: super::send::side_params(req, 1),
        is_client: false,
    };
    let t0 = Instant::now();
    // A stream that fails while the manifest still arrives wakes the
    // control loop, which is waiting on the sender, by closing its read side.
    let wake = ctl
        .stream
        .try_clone()
        .map_err(|e| EngineError::io("sharing the control connection", e))?;
    let worker = |s: &StreamSocket, live: &Live| {
        let tx = lock(&tx).clone();
        receive_stream(s, sink, req, live, &tx, &wake)
    };
    let (report, outcome) = std::thread::scope(|scope| {
        let streams =
            scope.spawn(|| side::run_with(&cfg, sockets, t0, &abort, &mut |_| {}, &worker));
        let outcome = listing(ctl, sink, req.block_len, resumable)
            .map_err(|e| stream_failure(ctl, &rx, resumable).unwrap_or(e))
            .and_then(|()| rounds(ctl, sink, req, &rx, sockets.len(), resumable));
        if outcome.is_err() {
            abort.store(true, Relaxed);
            for s in &controls {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        (streams.join(), outcome)
    });
    let report = report.map_err(|_| EngineError::Failed("stream threads panicked".into()))?;
    outcome?;
    sink.finish_dirs().map_err(|e| {
        if e.is_refusal() {
            resumable.store(false, Relaxed);
        }
        refuse(ctl, RefusalCode::Internal, e.to_string())
    })?;
    if req.verify {
        let digests = sink
            .digests()
            .map_err(|e| refuse(ctl, RefusalCode::Internal, e.to_string()))?;
        for chunk in digests.chunks(ENTRIES_PER_FRAME) {
            ctl.send(&Message::Digests(linerate_wire::Digests {
                files: chunk.to_vec(),
            }))?;
        }
    }
    let totals = sink.totals();
    let line = format!(
        "transfer, {} stream(s), {} file(s) written, {} skipped, {} B received",
        req.streams,
        totals.files_written,
        totals.files_skipped,
        report.bytes_total(Side::Receiver)
    );
    ctl.send(&Message::TransferReport(Box::new((totals, report))))?;
    Ok(line)
}

/// Takes the manifest frame by frame, answering each with what it misses,
/// while the streams already carry what was asked for; ends the first
/// pass's list once the manifest is complete.
fn listing(ctl: &mut Control, sink: &Sink, block_len: u32, resumable: &AtomicBool) -> Result<()> {
    let (mut blocks, mut bytes) = (0u64, 0u64);
    loop {
        match ctl.recv(STEP_TIMEOUT, "the manifest")? {
            Message::Entries(batch) => {
                if sink.len() + batch.entries.len() > MAX_ENTRIES as usize {
                    resumable.store(false, Relaxed);
                    return Err(refuse(
                        ctl,
                        RefusalCode::InvalidParameters,
                        "too many entries".into(),
                    ));
                }
                let need = sink.add(batch.entries).map_err(|e: SinkError| {
                    if e.is_refusal() {
                        resumable.store(false, Relaxed);
                    }
                    refuse(ctl, RefusalCode::InvalidParameters, e.to_string())
                })?;
                let (b, n) = tally(sink, &need, block_len);
                (blocks, bytes) = (blocks + b, bytes + n);
                send_files(ctl, &need)?;
            }
            Message::EntriesEnd => break,
            other => {
                resumable.store(false, Relaxed);
                return Err(refuse(
                    ctl,
                    RefusalCode::Malformed,
                    format!("expected entries, got {}", other.name()),
                ));
            }
        }
    }
    ctl.send(&Message::NeedEnd(NeedEnd {
        round: 0,
        blocks,
        bytes,
    }))
}

/// The refusal a failed stream asked for, if one did: sent to the sender
/// in place of the control loop's own error.
fn stream_failure(
    ctl: &mut Control,
    rx: &mpsc::Receiver<Event>,
    resumable: &AtomicBool,
) -> Option<EngineError> {
    rx.try_iter().find_map(|e| match e {
        Event::Fatal {
            message,
            resumable: keep,
        } => {
            if !keep {
                resumable.store(false, Relaxed);
            }
            Some(refuse(ctl, RefusalCode::Internal, message))
        }
        _ => None,
    })
}

/// Passes over the data until nothing is missing; Ok once the sender has
/// been told so and has finished.
fn rounds(
    ctl: &mut Control,
    sink: &Sink,
    req: &TransferRequest,
    rx: &mpsc::Receiver<Event>,
    streams: usize,
    resumable: &AtomicBool,
) -> Result<()> {
    let mut alive = vec![true; streams];
    let mut round = 0u32;
    loop {
        let mut ended = vec![false; streams];
        while (0..streams).any(|i| alive[i] && !ended[i]) {
            match rx.recv_timeout(Duration::from_secs(1)) {
                Ok(Event::RoundEnd(i)) => ended[usize::from(i)] = true,
                Ok(Event::Closed(i)) => alive[usize::from(i)] = false,
                Ok(Event::Fatal {
                    message,
                    resumable: keep,
                }) => {
                    if !keep {
                        resumable.store(false, Relaxed);
                    }
                    return Err(refuse(ctl, RefusalCode::Internal, message));
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
        round += 1;
        let need = sink.missing();
        if !need.is_empty() && !alive.iter().any(|&a| a) {
            let msg = format!(
                "every data connection closed with {} file(s) incomplete (kept for resume)",
                need.len()
            );
            return Err(refuse(ctl, RefusalCode::Internal, msg));
        }
        send_need(ctl, sink, &need, round, req.block_len)?;
        if need.is_empty() {
            break;
        }
    }
    match ctl.recv(STEP_TIMEOUT, "the finish signal")? {
        Message::Finish => Ok(()),
        other => Err(EngineError::Failed(format!(
            "expected finish, got {}",
            other.name()
        ))),
    }
}

fn send_need(
    ctl: &mut Control,
    sink: &Sink,
    need: &[NeedFile],
    round: u32,
    block_len: u32,
) -> Result<()> {
    let (blocks, bytes) = tally(sink, need, block_len);
    send_files(ctl, need)?;
    ctl.send(&Message::NeedEnd(NeedEnd {
        round,
        blocks,
        bytes,
    }))
}

/// Blocks and bytes in `need`.
fn tally(sink: &Sink, need: &[NeedFile], block_len: u32) -> (u64, u64) {
    let (mut blocks, mut bytes) = (0u64, 0u64);
    for f in need {
        let size = sink.size(f.id);
        for &[a, b] in &f.ranges {
            blocks += b.saturating_sub(a);
            // In constant time: a range may span billions of blocks.
            let bl = u64::from(block_len);
            let start = a.saturating_mul(bl).min(size);
            let end = b.saturating_mul(bl).min(size);
            bytes += end - start;
        }
    }
    (blocks, bytes)
}

fn send_files(ctl: &mut Control, need: &[NeedFile]) -> Result<()> {
    for chunk in need.chunks(ENTRIES_PER_FRAME) {
        ctl.send(&Message::Need(Need {
            files: chunk.to_vec(),
        }))?;
    }
    Ok(())
}

fn refuse(ctl: &mut Control, code: RefusalCode, message: String) -> EngineError {
    let _ = ctl.send(&Message::Refuse(Refusal {
        code,
        message: message.clone(),
    }));
    EngineError::Failed(message)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn receive_stream(
    s: &StreamSocket,
    sink: &Sink,
    req: &TransferRequest,
    live: &Live,
    events: &mpsc::Sender<Event>,
    wake: &TcpStream,
) -> Outcome {
    let clock = ThreadClock::start();
    let mut reader = RecordReader::new(&s.stream, req.rx_poll);
    // Page aligned, so whole pieces can be written past the cache.
    let mut aligned = AlignedBuf::new(PIECE.min(req.block_len as usize));
    let buf = aligned.as_mut_slice();
    let mut header = [0u8; RECORD_HEADER_LEN];
    let (mut got, mut last) = (0u64, Instant::now());
    let mut error = None;
    // The peer broke a rule: nothing of the session is worth keeping.
    // A lost connection is not fatal (the others go on); these are.
    let end_session = |message: String, resumable: bool| {
        let _ = events.send(Event::Fatal {
            message: message.clone(),
            resumable,
        });
        let _ = wake.shutdown(Shutdown::Read);
        Some(message)
    };
    let fatal = |msg: String| end_session(msg, false);
    let failed_sink = |e: SinkError| end_session(e.to_string(), !e.is_refusal());
    loop {
        match reader.fill(&mut header) {
            Ok(true) => {}
            Ok(false) => break,
            Err(e) => {
                error = Some(format!("receive failed: {e}"));
                break;
            }
        }
        let rec = match Record::decode(&header) {
            Ok(r) => r,
            Err(e) => {
                error = fatal(format!("stream {}: {e}", s.index));
                break;
            }
        };
        let (file, offset, len, is_block) = match rec {
            Record::RoundEnd => {
                let _ = events.send(Event::RoundEnd(s.index));
                continue;
            }
            Record::Block { file, offset, len } => (file, offset, len, true),
            Record::Hole { file, offset, len } => (file, offset, len, false),
        };
        let take = match sink.accept(file, offset, len, !is_block) {
            Ok(a) => matches!(a, Accepted::Take),
            Err(msg) => {
                error = fatal(format!("stream {}: {msg}", s.index));
                break;
            }
        };
        // A small file in one piece is checked before anything is written,
        // then created in one go.
        let whole =
            take && is_block && len as usize <= buf.len() && sink.is_whole_file(file, offset, len);
        // Bytes nothing will hash or write (network-only without checksums,
        // or a block already held) are dropped in the kernel, uncopied.
        let keep_payload = req.checksum || (take && sink.writes());
        if is_block {
            let mut check = BlockCheck::new(req.checksum);
            let mut pos = 0u64;
            let mut failed = None;
            while pos < u64::from(len) {
                let n = (u64::from(len) - pos).min(PIECE as u64) as usize;
                let piece = &mut buf[..n];
                let received = if !keep_payload {
                    reader.discard(n, piece)
                } else {
                    reader.fill_all(piece)
                };
                if let Err(e) = received {
                    failed = Some(format!("receive failed mid-block: {e}"));
                    break;
                }
                check.update(piece);
                if take
                    && !whole
                    && let Err(e) = sink.write_piece(file, offset + pos, piece)
                {
                    failed = failed_sink(e);
                    break;
                }
                pos += n as u64;
                got += n as u64;
                live.bytes.store(got, Relaxed);
            }
            let mut trailer = [0u8; BLOCK_TRAILER_LEN];
            if failed.is_none()
                && let Err(e) = reader.fill_all(&mut trailer)
            {
                failed = Some(format!("receive failed mid-block: {e}"));
            }
            if failed.is_some() {
                error = failed;
                break;
            }
            last = Instant::now();
            if !check.accepts(u64::from_be_bytes(trailer)) {
                // Asked for again in the next pass.
                sink.reject();
                continue;
            }
        }
        if whole {
            if let Err(e) = sink.write_whole(file, &buf[..len as usize]) {
                error = failed_sink(e);
                break;
            }
            continue;
        }
        if take && let Err(e) = sink.commit(file, offset) {
            error = failed_sink(e);
            break;
        }
    }
    let _ = events.send(Event::Closed(s.index));
    let tcp = linerate_probe::tcpinfo::read(&s.stream).ok();
    Outcome::finish(live, &clock, tcp, got, last, error)
}
