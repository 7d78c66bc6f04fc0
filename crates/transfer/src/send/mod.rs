//! The sending end of a transfer: announces the manifest while walking the
//! sources, turns the receiver's lists of missing blocks into one queue
//! (largest files first, small files batched) that the streams take from as
//! soon as the first list arrives, until the receiver says nothing is missing.

use linerate_engine::lock;
use std::collections::HashMap;
use std::fs::File;
use std::net::{Shutdown, SocketAddr, TcpStream};
use std::ops::ControlFlow::{Break, Continue};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant, SystemTime};

use linerate_result::{HostFacts, IntervalSample, SideReport};
use linerate_secure::{ClientConfig, Negotiated};
use linerate_session::TransferSender;
use linerate_session::transfer_sender::Event as SenderEvent;
use linerate_wire::{
    Hello, NeedFile, Role, SessionId, SessionKind, TransferRequest, TransferTotals,
};

use super::content_digest;
use super::direct::CachePolicy;
use super::filter::Filter;
use super::queue::{self, FirstPass, Queue};
use super::source::{Manifest, Origin};
use linerate_engine::measuring_end::{self, EndConfig};
use linerate_engine::session::connect::{
    Peer, before_accept, new_session_id, open_control, open_data,
};
use linerate_engine::session::control::Control;
use linerate_engine::session::{StreamSocket, Turn, drive, flush};
use linerate_engine::sockopt::StreamOptions;
use linerate_engine::spec::{RxPoll, TransferSpec};
use linerate_engine::stream::{self, Live};
use linerate_engine::{EngineError, Result};
use linerate_secure::Token;

mod driver;
mod result;
mod stream_loop;

use driver::{Ahead, Driven, announce, read_control, wait_for_close};
pub use result::{MIN_JUDGED_BYTES, to_result};
use stream_loop::send_stream;

// A receiver is as silent as a stalled stream before either end gives up.
const _: () = assert!(
    linerate_session::PEER_SILENCE.as_secs() == linerate_engine::sockopt::IDLE_TIMEOUT.as_secs()
);
/// How long an interrupted sender waits for the receiver to end its side.
const RECEIVER_LETS_GO: Duration = Duration::from_secs(3);
/// The slowest read a receiver is allowed over the transfer's bytes,
/// silent: its --verify read-back before it reports, its --checksum
/// comparison before it answers. 50 MB/s.
const VERIFY_BYTES_PER_SEC: u64 = 50_000_000;

/// Where a transfer goes.
pub struct Destination {
    /// The receiver's address.
    pub server: SocketAddr,
    /// The one-shot receiver's session, from its URL.
    pub session: Option<SessionId>,
    /// The one-shot receiver's token, from its URL.
    pub token: Option<Token>,
    /// Destination under a daemon's root ("" for a one-shot receiver).
    pub dest: String,
    /// The TLS to reach the receiver with; None sends in the clear
    /// (`--no-encrypt`).
    pub tls: Option<Arc<ClientConfig>>,
}

/// What a finished transfer measured and found.
pub struct TransferRun {
    /// The request as sent.
    pub request: TransferRequest,
    /// The session's id.
    pub session: SessionId,
    /// When the transfer began.
    pub started_at: SystemTime,
    /// The sender's half of the measurements.
    pub client: SideReport,
    /// The receiver's half.
    pub server: SideReport,
    /// The sender's host.
    pub client_host: HostFacts,
    /// The receiver's host.
    pub server_host: HostFacts,
    /// What the receiver wrote.
    pub totals: TransferTotals,
    /// Files in the manifest.
    pub files: usize,
    /// Bytes in the manifest.
    pub bytes_total: u64,
    /// Bytes the first pass had to send (less than the total on a resume).
    pub bytes_needed: u64,
    /// Passes over the data until nothing was missing.
    pub rounds: u32,
    /// Time the sending threads spent reading the source.
    pub read_seconds: f64,
    /// Source bytes read past the page cache (O_DIRECT).
    pub bytes_read_direct: u64,
    /// Files whose end-to-end digest did not match (with --verify).
    pub mismatched: Vec<String>,
    /// Files whose end-to-end digest matched (with --verify).
    pub verified: usize,
    /// The cap on each stream, bytes per second (`--rate` split over them).
    pub pacing_rate: Option<u64>,
    /// The receive buffer asked for (`-w`), bytes.
    pub window_asked: Option<u32>,
    /// The cipher and key exchange, when the transfer was encrypted.
    pub encryption: Option<Negotiated>,
    /// The paths the streams were striped over (`--stripe`).
    pub stripes: Vec<linerate_engine::address::Stripe>,
    /// What each link of the bond or multipath route to the receiver carried.
    pub members: Option<linerate_engine::link_shares::MembersCarried>,
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
}

impl Shared<'_> {
    /// Notes that the receiver took bytes just now.
    fn progressed(&self) {
        self.progress_ms
            .store(self.t0.elapsed().as_millis() as u64, Relaxed);
    }

    /// When the receiver last took bytes.
    fn last_progress(&self) -> Instant {
        self.t0 + Duration::from_millis(self.progress_ms.load(Relaxed))
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
    /// The paths to walk.
    pub paths: Vec<std::path::PathBuf>,
    /// Follow symbolic links in them.
    pub follow_links: bool,
    /// What is left out (`--exclude`, `--include`).
    pub filter: Filter,
    /// The extended attributes and ACLs read with each entry (`-X`, `-A`).
    pub wanted: super::meta::Wanted,
    /// Each file's contents are read for their digest, which the receiver
    /// compares with what it holds (`--checksum`).
    pub digests: bool,
}

/// Sends `manifest`, first walking `discovery` into it when given: entries
/// go out as they are found and the streams start on the first of them.
/// `on_interval` sees the sending streams' samples live, with how far the
/// first pass has come.
pub fn run(
    to: &Destination,
    spec: &TransferSpec,
    interrupt: Option<&AtomicBool>,
    manifest: &Manifest,
    discovery: Option<&Discovery>,
    on_interval: &mut dyn FnMut(&[IntervalSample], &FirstPass),
) -> Result<TransferRun> {
    let session = match to.session {
        Some(s) => s,
        None => new_session_id()?,
    };
    let peer = Peer {
        server: to.server,
        bind: spec.bind,
        tls: to.tls.clone(),
        token: to.token.as_ref().map(|t| t.0.clone()),
        stripes: spec.stripes.clone(),
    };
    let request = TransferRequest {
        rx_poll: spec.rx_poll == RxPoll::On,
        dest: to.dest.clone(),
        token: to.token.as_ref().map(|t| t.0.clone()),
        streams: spec.streams,
        block_len: spec.block_len,
        existing: spec.existing,
        skip_writes: spec.skip_writes,
        verify: spec.verify,
        socket: spec.socket.clone(),
        interval_ms: spec.interval_ms,
        direct: spec.cache.direct,
        evict: spec.cache.evict,
        // TLS authenticates every record: a block checksum adds nothing.
        checksum: spec.checksum && to.tls.is_none(),
        fsync: spec.fsync,
        delete: spec.delete,
        force: spec.force,
        filter: discovery.map(|d| d.filter.lines()).unwrap_or_default(),
        dry_run: spec.dry_run,
        itemize: spec.itemize,
        numeric_ids: spec.numeric_ids,
        compare_contents: discovery.is_some_and(|d| d.digests),
        xattrs: discovery.is_some_and(|d| d.wanted.xattrs),
        acls: discovery.is_some_and(|d| d.wanted.acls),
    };
    // Refused before anything is opened: bad flags are not a failed transfer.
    request.validate()?;
    let mut ctl = open_control(&peer, session, SessionKind::Transfer)?;
    let encryption = ctl.negotiated();
    let client_host = linerate_probe::host::collect();
    let mut m = TransferSender::new(Instant::now(), request.clone());
    let options = StreamOptions::for_sender(spec);
    // The driver writes through its own handle; the reader owns `ctl`,
    // which holds what was read of the stream so far. The handles come
    // before the data connections, whose sockets then stay the newest.
    let mut out = ctl
        .try_clone()
        .map_err(|e| EngineError::io("sharing the control connection", e))?;
    // What the walker shuts when it fails, to end the session.
    let ctl_socket = out
        .stream
        .try_clone()
        .map_err(|e| EngineError::io("sharing the control connection", e))?;
    // Striped streams are counted per path; unstriped ones per member of a
    // bond or multipath route, where the route has one.
    let watch = (spec.count_members && spec.stripes.is_empty())
        .then(|| linerate_engine::link_shares::MemberWatch::start(to.server.ip()))
        .flatten();
    let (sockets, server_host) = connect_streams(&mut ctl, &mut m, &peer, session, &options)?;
    let started_at = SystemTime::now();
    let shared = Shared {
        manifest,
        block_len: spec.block_len,
        queue: Queue::default(),
        memory: if manifest.iter().any(|(_, _, o)| o == Some(&Origin::Memory)) {
            stream::pattern(spec.block_len as usize)
        } else {
            Vec::new()
        },
        failed: Mutex::default(),
        read_ns: AtomicU64::new(0),
        cache: spec.cache,
        bytes_read_direct: AtomicU64::new(0),
        checksum: request.checksum,
        progress_ms: AtomicU64::new(0),
        t0: Instant::now(),
    };
    // A transfer ends when its queue closes.
    let end_cfg = EndConfig::transfer(spec.streams, spec.interval_ms, spec.socket.rcvbuf, true);
    let abort = AtomicBool::new(false);
    let stop_streams = |sockets: &[StreamSocket]| {
        abort.store(true, Relaxed);
        shared.queue.close();
        for s in sockets {
            let _ = s.stream.shutdown(Shutdown::Both);
        }
    };
    let stop = |sockets: &[StreamSocket], ctl: &TcpStream| {
        stop_streams(sockets);
        let _ = ctl.shutdown(Shutdown::Both);
    };
    let t0 = Instant::now();
    let worker = |s: &StreamSocket, live: &Live| send_stream(s, &shared, live);
    let (tx, rx) = mpsc::channel();
    let ahead = Ahead::default();
    let (client, listed, driven) = std::thread::scope(|scope| {
        let to_driver = tx.clone();
        scope.spawn(move || read_control(ctl, to_driver));
        let to_driver = tx.clone();
        let lister = scope.spawn(|| {
            let to_driver = to_driver;
            let listed = announce(&shared, discovery, &to_driver, &ahead);
            shared.progressed();
            if listed.is_err() {
                stop(&sockets, &ctl_socket);
            }
            listed
        });
        drop(tx);
        let (shared, ahead, sockets) = (&shared, &ahead, &sockets);
        let (stop, stop_streams) = (&stop, &stop_streams);
        let driver = scope.spawn(move || {
            let driven = driver::drive(&mut out, &mut m, &rx, (shared, ahead), interrupt);
            ahead.close();
            shared.queue.close();
            match &driven {
                // The receiver ends its side and closes the control
                // connection once it let go of the transfer's files: the
                // user may rerun at once.
                Err(EngineError::Interrupted) => {
                    stop_streams(sockets);
                    wait_for_close(&rx, RECEIVER_LETS_GO);
                }
                Err(_) => stop(sockets, &out.stream),
                Ok(_) => {}
            }
            // The reader's last wait ends here, whatever the receiver does.
            let _ = out.stream.shutdown(Shutdown::Read);
            driven
        });
        let mut each = |batch: &[IntervalSample]| on_interval(batch, &shared.queue.first_pass());
        let client = measuring_end::run_with(&end_cfg, sockets, t0, &abort, &mut each, &worker);
        (client, lister.join(), driver.join())
    });
    let listed = listed.map_err(|_| EngineError::Panicked("the manifest walker"))?;
    let driven = driven.map_err(|_| EngineError::Panicked("the transfer driver"))?;
    // The receiver's refusal explains why sending the manifest failed; else
    // a walk that failed explains why the rest stopped.
    if let Err(e @ (EngineError::Interrupted | EngineError::Refused(_))) = driven {
        return Err(e);
    }
    match listed {
        // The walker stopped because the driver ended: the driver says why.
        Err(EngineError::Internal(driver::DRIVER_GONE)) => {}
        listed => listed?,
    }
    let Driven {
        passes: rounds,
        first_bytes: bytes_needed,
        done,
    } = driven?;
    let (verified, mismatched) = if spec.verify {
        compare_digests(manifest, &done.digests)?
    } else {
        (0, Vec::new())
    };
    Ok(TransferRun {
        request,
        session,
        started_at,
        client,
        server: done.report,
        client_host,
        server_host,
        totals: done.totals,
        files: manifest.file_count(),
        bytes_total: manifest.total_bytes(),
        bytes_needed,
        rounds,
        read_seconds: shared.read_ns.load(Relaxed) as f64 / 1e9,
        bytes_read_direct: shared.bytes_read_direct.load(Relaxed),
        mismatched,
        verified,
        pacing_rate: options.socket.pacing_rate,
        window_asked: options.socket.rcvbuf,
        encryption,
        stripes: spec.stripes.clone(),
        members: watch.map(|w| w.finish(linerate_wire::Direction::Forward)),
    })
}

/// From the hello to the start: the receiver's accept and ready, then
/// every data connection. Gives the connections and the receiver's host.
fn connect_streams(
    ctl: &mut Control,
    m: &mut TransferSender,
    peer: &Peer,
    session: SessionId,
    options: &StreamOptions,
) -> Result<(Vec<StreamSocket>, HostFacts)> {
    let mut host = None;
    drive(ctl, m, None, |ctl, m, turn| match turn {
        Turn::Ended(Err(e)) if host.is_none() => Err(before_accept(peer.server, ctl, e)),
        // Only an error ends a session before its streams open.
        Turn::Ended(end) => end.and(Err(EngineError::ReceiverEnded)),
        Turn::Event(SenderEvent::Accepted(accept)) => {
            host = Some(accept.host);
            Ok(Continue(()))
        }
        Turn::Event(SenderEvent::OpenStreams) => {
            let streams = m.request().streams;
            let sockets = (0..streams)
                .map(|i| {
                    let hello = Hello::new(session, Role::Data, SessionKind::Transfer, i);
                    open_data(peer, options, hello)
                })
                .collect::<Result<Vec<StreamSocket>>>()?;
            m.streams_open(Instant::now());
            flush(ctl, m)?;
            Ok(Break((sockets, host.take().unwrap_or_default())))
        }
        Turn::Event(_) | Turn::Idle => Ok(Continue(())),
    })
}

/// Why the transfer cannot finish, when every file still missing is one
/// whose source could not be read.
fn unreadable(shared: &Shared, need: &[NeedFile]) -> Option<String> {
    let failed = lock(&shared.failed);
    if failed.is_empty() || !need.iter().all(|f| failed.contains_key(&f.id)) {
        return None;
    }
    let list: Vec<String> = failed
        .iter()
        .take(5)
        .map(|(id, why)| {
            let path = shared.manifest.entry(*id).map_or("?", |e| e.path.as_str());
            format!("{path}: {why}")
        })
        .collect();
    Some(format!(
        "{} source file(s) could not be read: {}",
        failed.len(),
        list.join("; ")
    ))
}

fn compare_digests(m: &Manifest, theirs: &[(u32, String)]) -> Result<(usize, Vec<String>)> {
    let theirs: HashMap<u32, &String> = theirs.iter().map(|(id, d)| (*id, d)).collect();
    let mut mismatched = Vec::new();
    let mut verified = 0;
    for (id, e, o) in m.iter() {
        let Some(Origin::Path(p)) = o else { continue };
        // Listed with -c: read once, while listed (a change since would
        // have failed the file while it was sent).
        let ours = match e.digest() {
            Some(listed) => listed.to_string(),
            None => File::open(p)
                .and_then(content_digest)
                .map_err(|x| EngineError::io_at("verifying", p, x))?,
        };
        match theirs.get(&id) {
            Some(d) if **d == ours => verified += 1,
            _ => mismatched.push(e.path.clone()),
        }
    }
    Ok((verified, mismatched))
}
