//! The sending end of a transfer: announces the manifest while walking the
//! sources, turns the receiver's lists of missing blocks into one queue
//! (largest files first, small files batched) that the streams take from as
//! soon as the first list arrives, until the receiver says nothing is missing.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant, SystemTime};

use linerate_result::{HostFacts, IntervalSample, SideReport};
use linerate_wire::{
    BenchParams, Direction, ENTRIES_PER_FRAME, Entries, Hello, Message, NeedFile, Role, SessionId,
    SessionKind, TransferRequest, TransferTotals,
};

use super::direct::CachePolicy;
use super::queue::{self, Queue};
use super::source::{Manifest, Origin};
use super::url::Token;
use crate::bench::{new_session_id, open_control, open_data, unexpected};
use crate::control::Control;
use crate::error::{EngineError, Result};
use crate::side::{self, SideConfig, StreamSocket};
use crate::sockopt::StreamOptions;
use crate::stream::{self, Live};

mod result;
mod stream_loop;

pub use result::{MIN_JUDGED_BYTES, to_result};
use stream_loop::send_stream;

const CONNECT_STEP: Duration = Duration::from_secs(30);
/// A pass over the data may take as long as the data takes, but a receiver
/// that neither takes data nor answers for this long has stopped: the
/// sender ends with an error instead of waiting on it.
const PEER_SILENCE: Duration = crate::sockopt::IDLE_TIMEOUT;
/// The slowest read-back a receiver's --verify is allowed before the
/// sender stops waiting for its report: 50 MB/s.
const VERIFY_BYTES_PER_SEC: u64 = 50_000_000;
/// Passes without fewer bytes missing before the sender gives up.
const STALLED_ROUNDS: u32 = 3;

pub struct SendConfig {
    pub server: SocketAddr,
    pub bind: Option<IpAddr>,
    /// The one-shot receiver's session, from its URL.
    pub session: Option<SessionId>,
    pub token: Option<Token>,
    /// Destination under a daemon's root ("" for a one-shot receiver).
    pub dest: String,
    pub streams: u16,
    pub block_len: u32,
    pub overwrite: bool,
    pub skip_writes: bool,
    pub verify: bool,
    /// Whole-transfer cap in bytes per second, split over the streams.
    pub rate: Option<u64>,
    pub sndbuf: Option<u32>,
    pub rcvbuf: Option<u32>,
    pub interval_ms: u64,
    /// Whether receivers poll before blocking. Auto does not: unlike a
    /// bench receiver, a writing receiver needs the CPU time a poll would
    /// take from the sender (docs/defaults.md).
    pub rx_poll: crate::bench::RxPoll,
    /// Page-cache policy of both ends.
    pub cache: CachePolicy,
    /// Carry a checksum after every block (off: TCP's checksum alone).
    pub checksum: bool,
}

/// What a finished transfer measured and found.
pub struct TransferRun {
    pub request: TransferRequest,
    pub session: SessionId,
    pub started_at: SystemTime,
    pub client: SideReport,
    pub server: SideReport,
    pub client_host: HostFacts,
    pub server_host: HostFacts,
    pub totals: TransferTotals,
    pub files: usize,
    pub bytes_total: u64,
    /// Bytes the first pass had to send (less than the total on a resume).
    pub bytes_needed: u64,
    pub rounds: u32,
    /// Time the sending threads spent reading the source.
    pub read_seconds: f64,
    /// Source bytes read past the page cache (O_DIRECT).
    pub bytes_read_direct: u64,
    /// Files whose end-to-end digest did not match (with --verify).
    pub mismatched: Vec<String>,
    pub verified: usize,
}

/// The bench parameters that shape a transfer's sockets and its sampler.
pub fn side_params(req: &TransferRequest, total: u64) -> BenchParams {
    BenchParams {
        streams: req.streams,
        duration_ms: 0,
        bytes: Some(total.max(1)),
        write_len: req.block_len,
        read_len: req.block_len,
        direction: Direction::Forward,
        interval_ms: req.interval_ms,
        omit_ms: 0,
        sndbuf: req.sndbuf,
        rcvbuf: req.rcvbuf,
        congestion: None,
        pacing_rate: None,
        mss: None,
        tos: None,
        zerocopy: false,
        skip_rx_copy: false,
        rx_poll: false,
        pin_cores: false,
        pin_pairs: false,
        rcvlowat: None,
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

struct Shared<'a> {
    manifest: &'a Manifest,
    block_len: u32,
    queue: Queue,
    memory: Vec<u8>,
    /// Source files that could not be read, by id, with the reason.
    failed: Mutex<HashMap<u32, String>>,
    read_ns: AtomicU64,
    cache: CachePolicy,
    bytes_read_direct: AtomicU64,
    /// Blocks carry their checksum; without, a trailer of 0 means whole.
    checksum: bool,
    /// When a stream last handed bytes to the network (ms since `t0`).
    progress_ms: AtomicU64,
    t0: Instant,
    /// The manifest is still being walked: the receiver may be silent
    /// because the sender has nothing new for it.
    announcing: AtomicBool,
}

impl Shared<'_> {
    /// Notes that the receiver took bytes just now.
    fn progressed(&self) {
        self.progress_ms
            .store(self.t0.elapsed().as_millis() as u64, Relaxed);
    }

    /// How long since the receiver last took bytes.
    fn silent_for(&self) -> Duration {
        self.t0
            .elapsed()
            .saturating_sub(Duration::from_millis(self.progress_ms.load(Relaxed)))
    }

    fn fail(&self, id: u32, why: String) {
        lock(&self.failed).entry(id).or_insert(why);
    }

    /// Runs `read` and counts its time as time spent reading sources (the
    /// verdict's source-disk share).
    fn timed_read<T>(&self, read: impl FnOnce() -> T) -> T {
        let t = Instant::now();
        let out = read();
        self.read_ns
            .fetch_add(t.elapsed().as_nanos() as u64, Relaxed);
        out
    }
}

/// Source paths to walk while the transfer runs.
pub struct Discovery {
    pub paths: Vec<std::path::PathBuf>,
    pub follow_links: bool,
}

/// Sends `manifest`, first walking `discovery` into it when given: entries
/// go out as they are found and the streams start on the first of them.
/// `on_interval` sees the sending streams' samples live.
pub fn run(
    cfg: &SendConfig,
    manifest: &Manifest,
    discovery: Option<&Discovery>,
    on_interval: &mut dyn FnMut(&[IntervalSample]),
) -> Result<TransferRun> {
    let session = match cfg.session {
        Some(s) => s,
        None => new_session_id()?,
    };
    let (mut ctl, accept) = open_control(cfg.server, cfg.bind, session, SessionKind::Transfer)?;
    let client_host = linerate_probe::host::collect();
    let request = TransferRequest {
        rx_poll: cfg.rx_poll == crate::bench::RxPoll::On,
        dest: cfg.dest.clone(),
        token: cfg.token.as_ref().map(|t| t.0.clone()),
        streams: cfg.streams,
        block_len: cfg.block_len,
        overwrite: cfg.overwrite,
        skip_writes: cfg.skip_writes,
        verify: cfg.verify,
        sndbuf: cfg.sndbuf,
        rcvbuf: cfg.rcvbuf,
        interval_ms: cfg.interval_ms,
        direct: cfg.cache.direct,
        evict: cfg.cache.evict,
        checksum: cfg.checksum,
    };
    request.validate()?;
    ctl.send(&Message::TransferRequest(request.clone()))?;
    expect_ready(&mut ctl)?;

    // The size is not known yet; a transfer ends when its queue closes.
    let mut params = side_params(&request, 1);
    params.pacing_rate = cfg.rate.map(|r| (r / u64::from(cfg.streams)).max(1));
    let options = StreamOptions::from(&params);
    let shared = Shared {
        manifest,
        block_len: cfg.block_len,
        queue: Queue::default(),
        memory: if manifest.iter().any(|(_, _, o)| o == Some(&Origin::Memory)) {
            stream::pattern(cfg.block_len as usize)
        } else {
            Vec::new()
        },
        failed: Mutex::default(),
        read_ns: AtomicU64::new(0),
        cache: cfg.cache,
        bytes_read_direct: AtomicU64::new(0),
        checksum: cfg.checksum,
        progress_ms: AtomicU64::new(0),
        t0: Instant::now(),
        announcing: AtomicBool::new(true),
    };
    // One thread announces the manifest while another reads the answers.
    let mut announcer = Control::new(
        ctl.stream
            .try_clone()
            .map_err(|e| EngineError::io("sharing the control connection", e))?,
    );
    let sockets = (0..cfg.streams)
        .map(|i| {
            let hello = Hello::new(session, Role::Data, SessionKind::Transfer, i);
            open_data(cfg.server, cfg.bind, &options, hello)
        })
        .collect::<Result<Vec<StreamSocket>>>()?;
    let started_at = SystemTime::now();
    ctl.send(&Message::Start)?;
    let side_cfg = SideConfig {
        params,
        is_client: true,
    };
    let abort = AtomicBool::new(false);
    let stop = |sockets: &[StreamSocket], ctl: &TcpStream| {
        abort.store(true, Relaxed);
        shared.queue.close();
        for s in sockets {
            let _ = s.stream.shutdown(Shutdown::Both);
        }
        let _ = ctl.shutdown(Shutdown::Both);
    };
    let t0 = Instant::now();
    let worker = |s: &StreamSocket, live: &Live| send_stream(s, &shared, live);
    let (client, listed, rounds) = std::thread::scope(|scope| {
        let lister = scope.spawn(|| {
            let listed = announce(&mut announcer, manifest, discovery);
            shared.progressed();
            shared.announcing.store(false, Relaxed);
            if listed.is_err() {
                stop(&sockets, &announcer.stream);
            }
            listed
        });
        let driver = scope.spawn(|| {
            let rounds = drive(&mut ctl, &shared);
            shared.queue.close();
            if rounds.is_err() {
                stop(&sockets, &ctl.stream);
            }
            rounds
        });
        let client = side::run_with(&side_cfg, &sockets, t0, &abort, on_interval, &worker);
        (client, lister.join(), driver.join())
    });
    let listed = listed.map_err(|_| EngineError::Failed("the manifest sender panicked".into()))?;
    let rounds = rounds.map_err(|_| EngineError::Failed("the transfer driver panicked".into()))?;
    // The receiver's refusal explains why sending the manifest failed; else
    // a walk that failed explains why the rest stopped.
    if let Err(e @ EngineError::Refused(_)) = rounds {
        return Err(e);
    }
    listed?;
    let (rounds, bytes_needed) = rounds?;
    ctl.send(&Message::Finish)?;
    let mut digests = Vec::new();
    let reading_back = if cfg.verify {
        Duration::from_secs(manifest.total_bytes() / VERIFY_BYTES_PER_SEC)
    } else {
        Duration::ZERO
    };
    let (totals, server) = loop {
        match ctl.recv(PEER_SILENCE + reading_back, "the receiver's report")? {
            Message::Digests(d) => digests.extend(d.files),
            Message::TransferReport(b) => break *b,
            Message::Refuse(r) => return Err(EngineError::Refused(r)),
            other => return Err(unexpected(&other, "transfer report")),
        }
    };
    let (verified, mismatched) = if cfg.verify {
        compare_digests(manifest, &digests)?
    } else {
        (0, Vec::new())
    };
    Ok(TransferRun {
        request,
        session,
        started_at,
        client,
        server,
        client_host,
        server_host: accept.host,
        totals,
        files: manifest.file_count(),
        bytes_total: manifest.total_bytes(),
        bytes_needed,
        rounds,
        read_seconds: shared.read_ns.load(Relaxed) as f64 / 1e9,
        bytes_read_direct: shared.bytes_read_direct.load(Relaxed),
        mismatched,
        verified,
    })
}

/// Sends the manifest: what it already holds, then what the walk finds.
fn announce(ctl: &mut Control, manifest: &Manifest, discovery: Option<&Discovery>) -> Result<()> {
    let mut known = manifest.iter().map(|(_, e, _)| e.clone()).peekable();
    while known.peek().is_some() {
        let entries = known.by_ref().take(ENTRIES_PER_FRAME).collect();
        ctl.send(&Message::Entries(Entries { entries }))?;
    }
    if let Some(d) = discovery {
        manifest.discover(&d.paths, d.follow_links, &mut |entries| {
            ctl.send(&Message::Entries(Entries { entries }))
        })?;
    }
    ctl.send(&Message::EntriesEnd)
}

fn expect_ready(ctl: &mut Control) -> Result<()> {
    match ctl.recv(CONNECT_STEP, "the receiver's ready")? {
        Message::Ready(_) => Ok(()),
        Message::Refuse(r) => Err(EngineError::Refused(r)),
        other => Err(unexpected(&other, "ready")),
    }
}

/// Reads one list of missing blocks, handing each frame's files to `files`
/// as it arrives; returns the list's end.
fn recv_need(
    ctl: &mut Control,
    shared: &Shared,
    files: &mut dyn FnMut(Vec<NeedFile>),
) -> Result<linerate_wire::NeedEnd> {
    loop {
        match recv_while_alive(ctl, shared)? {
            Message::Need(n) => files(n.files),
            Message::NeedEnd(end) => return Ok(end),
            Message::Refuse(r) => return Err(EngineError::Refused(r)),
            other => return Err(unexpected(&other, "need")),
        }
    }
}

/// The receiver's next message, waited for as long as it keeps taking data.
fn recv_while_alive(ctl: &mut Control, shared: &Shared) -> Result<Message> {
    let what = "the receiver's list of missing blocks";
    loop {
        // While the manifest is still walked, silence may be the sender's own.
        let silent = if shared.announcing.load(Relaxed) {
            Duration::ZERO
        } else {
            shared.silent_for()
        };
        if silent >= PEER_SILENCE {
            return Err(EngineError::Timeout(format!(
                "waiting for the receiver: it has neither taken data nor answered for {} s \
                 (stopped, or its host is hung)",
                PEER_SILENCE.as_secs()
            )));
        }
        let wait = (PEER_SILENCE - silent).max(Duration::from_millis(200));
        match ctl.recv(wait, what) {
            Err(EngineError::Timeout(_)) => {}
            other => return other,
        }
    }
}

/// Feeds the first pass as the receiver answers each manifest frame, then
/// refills the queue after each pass until the receiver misses nothing;
/// returns the number of passes and the bytes the first one needed.
fn drive(ctl: &mut Control, shared: &Shared) -> Result<(u32, u64)> {
    let none = HashSet::new();
    let first_bytes = recv_need(ctl, shared, &mut |files| {
        let plan = queue::plan(shared.manifest, &files, shared.block_len, &none);
        shared.queue.add(plan);
    })?
    .bytes;
    shared.queue.seal();
    let (mut rounds, mut best, mut stalled) = (1u32, first_bytes, 0u32);
    loop {
        let mut need = Vec::new();
        let end = recv_need(ctl, shared, &mut |files| need.extend(files))?;
        if need.is_empty() {
            return Ok((rounds, first_bytes));
        }
        let failed = lock(&shared.failed).clone();
        if need.iter().all(|f| failed.contains_key(&f.id)) {
            let list: Vec<String> = failed
                .iter()
                .take(5)
                .map(|(id, why)| {
                    let path = shared.manifest.entry(*id).map_or("?", |e| e.path.as_str());
                    format!("{path}: {why}")
                })
                .collect();
            return Err(EngineError::Failed(format!(
                "{} source file(s) could not be read: {}",
                failed.len(),
                list.join("; ")
            )));
        }
        if end.bytes >= best {
            stalled += 1;
            if stalled >= STALLED_ROUNDS {
                return Err(EngineError::Failed(format!(
                    "{} bytes still missing after {STALLED_ROUNDS} passes without progress",
                    end.bytes
                )));
            }
        } else {
            (best, stalled) = (end.bytes, 0);
        }
        let ids: HashSet<u32> = failed.keys().copied().collect();
        shared
            .queue
            .refill(queue::plan(shared.manifest, &need, shared.block_len, &ids));
        rounds += 1;
    }
}

fn compare_digests(m: &Manifest, theirs: &[(u32, String)]) -> Result<(usize, Vec<String>)> {
    let theirs: HashMap<u32, &String> = theirs.iter().map(|(id, d)| (*id, d)).collect();
    let mut mismatched = Vec::new();
    let mut verified = 0;
    for (id, e, o) in m.iter() {
        let Some(Origin::Path(p)) = o else { continue };
        let file =
            File::open(p).map_err(|x| EngineError::io(format!("verifying {}", p.display()), x))?;
        let mut h = blake3::Hasher::new();
        h.update_reader(file)
            .map_err(|x| EngineError::io(format!("verifying {}", p.display()), x))?;
        let ours = h.finalize().to_hex().to_string();
        match theirs.get(&id) {
            Some(d) if **d == ours => verified += 1,
            _ => mismatched.push(e.path.clone()),
        }
    }
    Ok((verified, mismatched))
}
