//! The receiving end of a transfer session, run by `serve --root` and `recv`:
//! takes the manifest frame by frame and asks for what each misses while the
//! streams already carry blocks, checks and stores them, and asks again after
//! each pass until nothing is missing.

use linerate_engine::lock;
use std::net::{Shutdown, TcpStream};
use std::ops::ControlFlow::{Break, Continue};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use linerate_result::{IntervalSample, Side};
use linerate_session::transfer_receiver::Event as ReceiverEvent;
use linerate_session::{Session, SessionError, TransferReceiver};
use linerate_wire::{
    Accept, BLOCK_TRAILER_LEN, NeedFile, RECORD_HEADER_LEN, Record, RefusalCode, SessionId,
    TransferRequest, TransferTotals,
};

use super::claims::{ClaimSet, Claims};
use super::direct::{AlignedBuf, CachePolicy};
use super::filter::{Filter, FilterError};
use super::grid::{BlockCheck, PIECE, ranges_bytes};
use super::reader::RecordReader;
use super::sink::{Accepted, Asked, Leftovers, Sink, SinkError, SinkOptions};
use crate::confine::DestRoot;
use linerate_engine::limits::{Refused, SessionLimits, return_free_memory};
use linerate_engine::measuring_end::{self, EndConfig};
use linerate_engine::session::control::{Control, Input};
use linerate_engine::session::registry::{Registration, Registry};
use linerate_engine::session::{StreamSocket, Turn, apply, drive, flush, local};
use linerate_engine::sockopt::StreamOptions;
use linerate_engine::stream::{Live, Outcome, ThreadClock};
use linerate_engine::{EngineError, Result};
use linerate_secure::Token;
use linerate_session::join::JoinRule;

/// What a server accepts transfers into.
pub struct TransferPolicy {
    /// The directory transfers land under.
    pub root: PathBuf,
    /// Required from the sender when set (the one-shot receiver's secret).
    pub token: Option<Token>,
    /// Only this session id is served when set (the one-shot receiver),
    /// and only one session with it.
    pub session: Option<SessionId>,
    /// Apply setuid, setgid and sticky bits from senders.
    pub keep_special_bits: bool,
    /// Apply senders' ACLs as sent: a one-shot receiver's (rsync -A), or a
    /// daemon's started so; otherwise held within the umask.
    pub acls_as_sent: bool,
    /// What each session may hold.
    pub limits: SessionLimits,
    /// How long what a cut-short transfer left waits for a rerun before
    /// the server removes it; None keeps it (a one-shot receiver's
    /// process ends, and the rerun is the user's).
    pub partial_ttl: Option<Duration>,
    pub(crate) claims: Arc<Claims>,
    pub(crate) leftovers: Leftovers,
    /// The one-shot receiver's transfer has begun.
    taken: AtomicBool,
    /// Told how far each session has come, once an interval of its sender's.
    pub progress: Option<Arc<ProgressReport>>,
}

/// What a server does with a session's progress.
pub type ProgressReport = dyn Fn(&ReceiveProgress) + Send + Sync;

/// How far a receiving session has come.
#[derive(Debug, Clone, PartialEq)]
pub struct ReceiveProgress {
    /// The session.
    pub session: SessionId,
    /// Where it lands on this host: the root and the sender's destination
    /// under it.
    pub dest: String,
    /// What the first pass asked the sender for so far.
    pub asked: Asked,
    /// Bytes of file data written so far.
    pub bytes_written: u64,
    /// Files complete so far.
    pub files_written: u64,
    /// Seconds since the data began.
    pub elapsed: f64,
    /// Payload received over the last interval, per second.
    pub bits_per_second: f64,
}

impl ReceiveProgress {
    fn of(session: SessionId, dest: &str, sink: &Sink, batch: &[IntervalSample]) -> Self {
        let totals = sink.totals();
        let bytes: u64 = batch
            .iter()
            .filter(|s| s.side == Side::Receiver)
            .map(|s| s.bytes)
            .sum();
        let (start, end) = batch.first().map_or((0.0, 0.0), |s| (s.start, s.end));
        ReceiveProgress {
            session,
            dest: dest.to_string(),
            asked: sink.asked_so_far(),
            bytes_written: totals.bytes_written,
            files_written: totals.files_written,
            elapsed: end,
            bits_per_second: if end > start {
                bytes as f64 * 8.0 / (end - start)
            } else {
                0.0
            },
        }
    }
}

impl TransferPolicy {
    /// A daemon's policy for `root`, with the default limits.
    pub fn new(root: PathBuf) -> TransferPolicy {
        TransferPolicy {
            root,
            token: None,
            session: None,
            keep_special_bits: false,
            acls_as_sent: false,
            limits: SessionLimits::default(),
            partial_ttl: Some(DEFAULT_PARTIAL_TTL),
            claims: Arc::default(),
            leftovers: Leftovers::default(),
            taken: AtomicBool::new(false),
            progress: None,
        }
    }

    /// Whether this policy serves one session and nothing else.
    pub fn is_one_shot(&self) -> bool {
        self.session.is_some()
    }

    /// Whether the one-shot receiver's transfer has begun (and not been
    /// given back by [`TransferPolicy::reopen`]).
    pub fn is_taken(&self) -> bool {
        self.taken.load(Relaxed)
    }

    /// Lets the one-shot receiver's sender begin again: its transfer was
    /// cut short, and a rerun resumes it.
    pub fn reopen(&self) {
        self.taken.store(false, Relaxed);
    }

    /// Removes leftovers whose time has come; how many names went.
    pub fn sweep(&self) -> usize {
        if self.leftovers.is_empty() {
            return 0;
        }
        self.leftovers
            .sweep(Instant::now(), &self.claims, &self.root)
    }
}

/// How long a daemon keeps what a cut-short transfer left for a rerun.
pub const DEFAULT_PARTIAL_TTL: Duration = Duration::from_secs(24 * 3600);

enum Event {
    RoundEnd(u16),
    /// A stream ended, with its error if it failed.
    Closed(u16, Option<String>),
    /// The session cannot go on; `resumable` when what arrived is worth
    /// keeping for a rerun (a disk error, not a peer breaking the rules).
    Fatal {
        message: String,
        resumable: bool,
    },
}

/// What an admitted session has before its data flows.
struct Admitted<'a> {
    req: TransferRequest,
    /// The sender's include/exclude rules, compiled.
    rules: Arc<Filter>,
    /// None: a dry run into a destination that does not exist yet.
    dest: Option<DestRoot>,
    registration: Registration<'a>,
    sockets: Vec<StreamSocket>,
}

/// Runs one transfer session on an accepted control connection: the
/// driver of [`TransferReceiver`], which holds the message order. Calls
/// `admit` once the sender has shown its right to send (the token).
pub fn serve(
    ctl: Control,
    accept: Accept,
    reg: &Registry,
    id: SessionId,
    policy: &TransferPolicy,
    admit: &dyn Fn() -> std::result::Result<(), Refused>,
) -> Result<String> {
    let new_dirs = std::cell::RefCell::new(NewDirs::default());
    let served = serve_admitted(ctl, accept, (reg, id), policy, admit, &new_dirs);
    if served.is_err() {
        // A refused or failed transfer leaves none of the directories it
        // made that are still empty (what it wrote stays, for a resume).
        new_dirs.borrow().remove_empty();
    }
    served
}

fn serve_admitted(
    mut ctl: Control,
    accept: Accept,
    (reg, id): (&Registry, SessionId),
    policy: &TransferPolicy,
    admit: &dyn Fn() -> std::result::Result<(), Refused>,
    new_dirs: &std::cell::RefCell<NewDirs>,
) -> Result<String> {
    let token = policy.token.as_ref().map(|t| t.0.clone());
    let mut m = TransferReceiver::new(Instant::now(), accept, token);
    let mut admitted = None;
    // Until the sender begins: a session that ends first has nothing to serve.
    let begun = drive(&mut ctl, &mut m, None, |ctl, m, turn| {
        match turn {
            Turn::Ended(end) => return end.map(|()| Break(false)),
            Turn::Event(ReceiverEvent::Admit(req)) => {
                *new_dirs.borrow_mut() = NewDirs::missing(&policy.root, &req.dest);
                admitted = admission(ctl, m, req, reg, id, policy, admit);
            }
            Turn::Event(ReceiverEvent::Begin) => return Ok(Break(true)),
            Turn::Event(_) | Turn::Idle => {}
        }
        Ok(Continue(()))
    })?;
    if !begun {
        return Ok(String::new());
    }
    let Some(Admitted {
        req,
        rules,
        dest,
        registration,
        sockets,
    }) = admitted
    else {
        return Err(EngineError::Internal("the transfer began unadmitted"));
    };
    let root = if req.skip_writes { None } else { dest };
    let cache = CachePolicy {
        direct: req.direct,
        evict: req.evict,
    };
    let sink = Sink::new(
        root,
        SinkOptions {
            block_len: req.block_len,
            peer: ctl.stream.try_clone().ok().map(std::os::fd::OwnedFd::from),
            existing: req.existing,
            cache,
            keep_special_bits: policy.keep_special_bits,
            acls_as_sent: policy.acls_as_sent,
            limits: policy.limits,
            claims: Some(ClaimSet::new(Arc::clone(&policy.claims), &req.dest)),
            durable: req.fsync,
            dry_run: req.dry_run,
            list_changes: req.itemize || req.dry_run,
            numeric_ids: req.numeric_ids,
            replace_dirs: req.force || req.delete,
            protected: Arc::clone(&rules),
            carried: crate::meta::Wanted {
                xattrs: req.xattrs,
                acls: req.acls,
            },
            keep_top: !policy.is_one_shot()
                && req.dest.split('/').all(|p| p.is_empty() || p == "."),
        },
    );
    let resumable = AtomicBool::new(true);
    let landing = match req.dest.trim_matches('/') {
        "" => policy.root.clone(),
        under => policy.root.join(under),
    };
    let landing = landing.to_string_lossy();
    let on_interval = |batch: &[IntervalSample]| {
        if let Some(report) = &policy.progress {
            report(&ReceiveProgress::of(id, &landing, &sink, batch));
        }
    };
    let result = run_sink(
        (&mut ctl, &mut m),
        &req,
        &sink,
        &sockets,
        &resumable,
        &on_interval,
    );
    if result.is_err() {
        let left = sink.abandon(resumable.load(Relaxed));
        if let Some(ttl) = policy.partial_ttl {
            policy.leftovers.keep(Instant::now() + ttl, left);
        }
    }
    drop(sink);
    drop(registration);
    return_free_memory();
    result
}

/// Checks what the machine leaves to the server (one transfer at a time
/// for a one-shot receiver, the destination, room for the data
/// connections), then waits for the data connections.
fn admission<'a>(
    ctl: &mut Control,
    m: &mut TransferReceiver,
    req: TransferRequest,
    reg: &'a Registry,
    id: SessionId,
    policy: &TransferPolicy,
    admit: &dyn Fn() -> std::result::Result<(), Refused>,
) -> Option<Admitted<'a>> {
    if policy.is_one_shot() && policy.taken.swap(true, Relaxed) {
        let busy = "this receiver is busy with its one transfer";
        m.abort(local(RefusalCode::Busy, busy));
        return None;
    }
    if let Err(busy) = admit() {
        policy.taken.store(false, Relaxed);
        m.abort(local(RefusalCode::Busy, busy));
        return None;
    }
    // Compiled before anything is made for the session: rules that do not
    // compile within the matcher's bounds are refused at once.
    let rules = match rules_of(&req) {
        Ok(rules) => Arc::new(rules),
        Err(e) => {
            m.abort(local(
                RefusalCode::InvalidParameters,
                format!("the sender's rule {e}"),
            ));
            return None;
        }
    };
    // A dry run creates nothing, not even the destination.
    let dest = match DestRoot::open(&policy.root).and_then(|r| match req.dry_run {
        true => r.find_subdir(&req.dest),
        false => r.subdir(&req.dest).map(Some),
    }) {
        Ok(d) => d,
        Err(e) => {
            m.abort(local(
                RefusalCode::InvalidParameters,
                format!("destination: {e}"),
            ));
            return None;
        }
    };
    let options = StreamOptions::for_receiver(&req);
    let join = JoinRule {
        encrypted: ctl.negotiated().is_some(),
        token: policy.token.as_ref().map(|t| t.0.clone()),
        client_key: ctl.peer_fingerprint().map(|f| f.0),
    };
    let mut registration = match Registration::new(reg, id, req.streams, options, join) {
        Ok(r) => r,
        Err(e) => {
            m.abort(local(RefusalCode::Busy, e));
            return None;
        }
    };
    m.admitted(Instant::now());
    if let Err(e) = flush(ctl, m) {
        m.abort(local(RefusalCode::Internal, e));
        return None;
    }
    match registration.collect(m.poll_timeout()) {
        Ok(Some(sockets)) => {
            m.streams_connected(Instant::now());
            Some(Admitted {
                req,
                rules,
                dest,
                registration,
                sockets,
            })
        }
        Ok(None) => {
            m.handle_timeout(Instant::now());
            None
        }
        Err(e) => {
            m.abort(local(RefusalCode::InvalidParameters, e));
            None
        }
    }
}

/// Moves the data of an admitted session into `sink`, from the manifest to
/// the report; clears `resumable` if the sender broke a rule.
fn run_sink(
    (ctl, m): (&mut Control, &mut TransferReceiver),
    req: &TransferRequest,
    sink: &Sink,
    sockets: &[StreamSocket],
    resumable: &AtomicBool,
    on_interval: &(dyn Fn(&[IntervalSample]) + Sync),
) -> Result<String> {
    let controls: Vec<TcpStream> = sockets
        .iter()
        .filter_map(|s| s.stream.try_clone().ok())
        .collect();
    let (tx, rx) = mpsc::channel::<Event>();
    let tx = Mutex::new(tx);
    let abort = AtomicBool::new(false);
    // The sender's end of stream ends each stream.
    let cfg = EndConfig::transfer(req.streams, req.interval_ms, req.socket.rcvbuf, false);
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
    let (report, finished) = std::thread::scope(|scope| {
        let streams = scope.spawn(|| {
            measuring_end::run_with(&cfg, sockets, t0, &abort, &mut |b| on_interval(b), &worker)
        });
        let finished = control(ctl, m, sink, req.block_len, &rx, sockets.len(), resumable);
        if !finished {
            abort.store(true, Relaxed);
            for s in &controls {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
        (streams.join(), finished)
    });
    let report = report.map_err(|_| EngineError::Panicked("a stream thread"))?;
    if !finished {
        return ended(ctl, m, resumable).and(Err(EngineError::EndedEarly));
    }
    let kept = req.delete.then(|| sink.protected());
    let digests = sink.finish_dirs(kept).and_then(|()| {
        if req.verify && !req.dry_run {
            sink.digests()
        } else {
            Ok(Vec::new())
        }
    });
    match digests {
        Ok(digests) => {
            let totals = TransferTotals {
                changes: sink.take_changes(),
                ..sink.totals()
            };
            let mut line = format!(
                "transfer, {} stream(s), {} file(s) written, {} skipped, {} B received",
                req.streams,
                totals.files_written,
                totals.files_skipped,
                report.bytes_total(Side::Receiver)
            );
            // A stream lost on the way (its blocks went again on the
            // others) is worth a word: an altered byte ends one.
            for failed in report.stream_failures() {
                line.push_str(&format!("; {failed} (its blocks were sent again)"));
            }
            m.report(digests, totals, report);
            ended(ctl, m, resumable).map(|()| line)
        }
        Err(e) => {
            if e.is_refusal() {
                resumable.store(false, Relaxed);
            }
            m.abort(local(RefusalCode::Internal, e));
            ended(ctl, m, resumable).map(|()| String::new())
        }
    }
}

/// The sender's include/exclude rules, compiled: what they left out at
/// the source is kept from `--delete` and from a directory's removal.
fn rules_of(req: &TransferRequest) -> std::result::Result<Filter, FilterError> {
    let mut filter = Filter::default();
    filter
        .add_lines(&req.filter.join("\n"))
        .and_then(|()| filter.compile())?;
    Ok(filter)
}

/// Sends what the machine queued last and gives its end; an end where the
/// sender broke a rule leaves nothing worth resuming.
fn ended(ctl: &mut Control, m: &mut TransferReceiver, resumable: &AtomicBool) -> Result<()> {
    let sent = flush(ctl, m);
    match m.poll_end() {
        Some(Ok(())) => sent,
        Some(Err(e)) => {
            if breaks_rules(&e) {
                resumable.store(false, Relaxed);
            }
            Err(e.into())
        }
        None => Err(EngineError::StoppedWaiting(m.waiting_for())),
    }
}

/// Whether a session ended because the sender broke the protocol's rules
/// (then nothing it sent is kept for a rerun).
fn breaks_rules(e: &SessionError) -> bool {
    match e {
        SessionError::Unexpected { .. } | SessionError::Wire(_) => true,
        SessionError::Local(r) => r.code == RefusalCode::InvalidParameters,
        _ => false,
    }
}

/// The control connection from the start signal to the sender's finish:
/// answers each manifest batch, then ends each pass with what is still
/// missing. True once the sender has finished; false when the session
/// ended (the machine holds why).
fn control(
    ctl: &mut Control,
    m: &mut TransferReceiver,
    sink: &Sink,
    block_len: u32,
    rx: &mpsc::Receiver<Event>,
    streams: usize,
    resumable: &AtomicBool,
) -> bool {
    let mut alive = vec![true; streams];
    loop {
        if m.is_over() || flush(ctl, m).is_err() {
            return false;
        }
        match m.poll_event() {
            Some(ReceiverEvent::Entries(batch)) => match sink.add(batch) {
                Ok(need) => {
                    let (blocks, bytes) = tally(sink, &need, block_len);
                    sink.asked(need.len() as u64, bytes);
                    m.answer(need, blocks, bytes);
                }
                // A manifest that broke a rule is refused; a full disk or a
                // spent budget is not the sender's fault, and what arrived
                // is kept for a rerun.
                Err(e) if e.is_refusal() => {
                    resumable.store(false, Relaxed);
                    m.abort(local(RefusalCode::InvalidParameters, e));
                }
                Err(e) => m.abort(local(RefusalCode::Internal, e)),
            },
            Some(ReceiverEvent::Listed) => {
                sink.listed();
                if !passes(ctl, m, sink, block_len, rx, &mut alive, resumable) {
                    return false;
                }
            }
            Some(ReceiverEvent::Finish) => return true,
            Some(_) => {}
            None => match ctl.next_input(m.poll_timeout()) {
                // A stream that failed closed the read side to wake us:
                // its reason is the session's.
                Input::Closed if let Some((message, keep)) = fatal(rx) => {
                    if !keep {
                        resumable.store(false, Relaxed);
                    }
                    m.abort(local(RefusalCode::Internal, message));
                }
                input => apply(m, input),
            },
        }
    }
}

/// Ends each pass with what is still missing, until nothing is; false
/// if the control connection broke.
fn passes(
    ctl: &mut Control,
    m: &mut TransferReceiver,
    sink: &Sink,
    block_len: u32,
    rx: &mpsc::Receiver<Event>,
    alive: &mut [bool],
    resumable: &AtomicBool,
) -> bool {
    // Why streams failed, for the session's end if none is left.
    let mut lost = Vec::new();
    while pass(m, rx, (alive, &mut lost), resumable) {
        let need = sink.missing();
        if !need.is_empty() && !alive.iter().any(|&a| a) {
            let why = match lost.is_empty() {
                true => String::new(),
                false => format!(" ({})", lost.join("; ")),
            };
            let msg = format!(
                "every data connection closed{why} with {} file(s) incomplete (kept for resume)",
                need.len()
            );
            m.abort(local(RefusalCode::Internal, msg));
            break;
        }
        let (blocks, bytes) = tally(sink, &need, block_len);
        let done = need.is_empty();
        m.pass_ended(Instant::now(), need, blocks, bytes);
        if done {
            break;
        }
        if flush(ctl, m).is_err() {
            return false;
        }
    }
    true
}

/// Waits for every live stream to end the current pass; false when the
/// session cannot go on (the machine has been told why).
fn pass(
    m: &mut TransferReceiver,
    rx: &mpsc::Receiver<Event>,
    (alive, lost): (&mut [bool], &mut Vec<String>),
    resumable: &AtomicBool,
) -> bool {
    let streams = alive.len();
    let mut ended = vec![false; streams];
    while (0..streams).any(|i| alive[i] && !ended[i]) {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(Event::RoundEnd(i)) => ended[usize::from(i)] = true,
            Ok(Event::Closed(i, why)) => {
                alive[usize::from(i)] = false;
                lost.extend(why.map(|e| format!("stream {i}: {e}")));
            }
            Ok(Event::Fatal {
                message,
                resumable: keep,
            }) => {
                if !keep {
                    resumable.store(false, Relaxed);
                }
                m.abort(local(RefusalCode::Internal, message));
                return false;
            }
            Err(RecvTimeoutError::Timeout) => {}
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    true
}

/// The refusal a failed stream asked for, if one did.
fn fatal(rx: &mpsc::Receiver<Event>) -> Option<(String, bool)> {
    rx.try_iter().find_map(|e| match e {
        Event::Fatal { message, resumable } => Some((message, resumable)),
        _ => None,
    })
}

/// Blocks and bytes in `need`.
fn tally(sink: &Sink, need: &[NeedFile], block_len: u32) -> (u64, u64) {
    let blocks = need
        .iter()
        .flat_map(|f| &f.ranges)
        .map(|&[a, b]| b.saturating_sub(a))
        .sum();
    let bytes = need
        .iter()
        .map(|f| ranges_bytes(&f.ranges, block_len, sink.size(f.id)))
        .sum();
    (blocks, bytes)
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
    let mut tls = s.tls.as_ref().map(lock);
    let mut reader = RecordReader::new(&s.stream, tls.as_deref_mut(), req.rx_poll);
    // Page aligned, so whole pieces can be written past the cache.
    let mut aligned = AlignedBuf::new(PIECE.min(req.block_len as usize));
    let buf = &mut aligned[..];
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
    let _ = events.send(Event::Closed(s.index, error.clone()));
    let tcp = linerate_probe::tcpinfo::read(&s.stream).ok();
    Outcome::finish(live, &clock, tcp, got, last, error)
}

/// The directories of a destination that did not exist before a transfer
/// made them, deepest last.
#[derive(Default)]
struct NewDirs(Vec<std::path::PathBuf>);

impl NewDirs {
    fn missing(root: &std::path::Path, dest: &str) -> NewDirs {
        let mut path = root.to_path_buf();
        let mut made = Vec::new();
        for part in dest.split('/').filter(|p| !p.is_empty() && *p != ".") {
            path.push(part);
            if made.is_empty() && std::fs::symlink_metadata(&path).is_ok() {
                continue;
            }
            made.push(path.clone());
        }
        NewDirs(made)
    }

    /// Removes those still empty, deepest first (rmdir refuses any other).
    fn remove_empty(&self) {
        for dir in self.0.iter().rev() {
            if std::fs::remove_dir(dir).is_err() {
                return;
            }
        }
    }
}
